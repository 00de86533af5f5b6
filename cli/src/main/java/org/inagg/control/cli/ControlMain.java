package org.inagg.control.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point: {@code java -cp 'control/target/classes:control/target/lib/*' org.inagg.control.cli.ControlMain}. */
@Command(name = "inagg-control", mixinStandardHelpOptions = true,
    description = "Plans in-network aggregation (GRID, InArt, path-aware multicast) and simulates the papers.",
    subcommands = {PlanCommand.class, SimulateCommand.class, DeployCommand.class})
public final class ControlMain implements Runnable {

    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        System.exit(new CommandLine(new ControlMain()).execute(args));
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }
}
