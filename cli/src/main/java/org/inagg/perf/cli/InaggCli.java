package org.inagg.perf.cli;

import org.inagg.control.cli.DeployCommand;
import org.inagg.control.cli.PlanCommand;
import org.inagg.control.cli.SimulateCommand;
import org.inagg.services.cli.AgentCommand;
import org.inagg.services.cli.ControllerCommand;
import org.inagg.services.cli.EsaSwitchCommand;
import org.inagg.services.cli.PsCommand;
import org.inagg.services.cli.StatCommand;
import org.inagg.services.cli.SwitchCommand;
import org.inagg.services.cli.WorkerCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code inagg} command line. */
@Command(
    name = "inagg",
    mixinStandardHelpOptions = true,
    version = "inagg 0.1.0",
    description = "In-network aggregation of gradients: run a local all-reduce, a switch, a worker, or benchmarks; "
        + "show the counters of running ones (stat); plan, simulate and deploy aggregation (GRID, InArt, path-aware "
        + "multicast).",
    subcommands = {
        // services (org.inagg.services.cli): the processes of a deployment, and the counters reader
        SwitchCommand.class, EsaSwitchCommand.class, WorkerCommand.class, PsCommand.class, ControllerCommand.class,
        AgentCommand.class,
        StatCommand.class,
        // control (org.inagg.control.cli): planners and the simulator
        PlanCommand.class, SimulateCommand.class, DeployCommand.class,
        // harnesses and benchmarks (this package)
        LocalCommand.class, LabCommand.class, ClusterCommand.class, BenchCommand.class, BenchPeersCommand.class,
        BenchEsaCommand.class, BenchShardsCommand.class, BenchPsSplitCommand.class, BenchPlansCommand.class,
        BenchMulticastCommand.class, DpdkRateCommand.class,
        CommandLine.HelpCommand.class})
public final class InaggCli implements Runnable
{
    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    public static void main(final String[] args)
    {
        // Lifecycle lines (System.Logger over java.util.logging) on one line each, unless configured otherwise.
        if (System.getProperty("java.util.logging.SimpleFormatter.format") == null)
        {
            System.setProperty("java.util.logging.SimpleFormatter.format",
                "%1$tF %1$tT.%1$tL %4$s %5$s%6$s%n");
        }
        // plan and simulate draw charts (XChart): no display needed.
        if (System.getProperty("java.awt.headless") == null)
        {
            System.setProperty("java.awt.headless", "true");
        }
        System.exit(execute(args));
    }

    /** Runs the command line and returns its exit code (for tests). */
    public static int execute(final String... args)
    {
        final CommandLine commandLine = new CommandLine(new InaggCli());
        // JMH's own options (-f, -wi, -i ...) pass through 'bench' in their order.
        commandLine.getSubcommands().get("bench").setUnmatchedOptionsArePositionalParams(true);
        commandLine.setExecutionExceptionHandler((ex, cmd, parsed) ->
        {
            cmd.getErr().println("inagg: " + (ex.getMessage() == null ? ex.toString() : ex.getMessage()));
            return 1;
        });
        try
        {
            return commandLine.execute(args);
        }
        catch (final OutOfMemoryError error)
        {
            // an allocation the commands' own checks (TensorMemory) did not foresee: the heap, not a stack trace
            commandLine.getErr().println("inagg: " + org.inagg.services.cli.TensorMemory.outOfMemory(error));
            commandLine.getErr().flush();
            return 1;
        }
    }

    @Override
    public void run()
    {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
