package org.inagg.control.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.inagg.control.topology.Topologies;
import org.inagg.control.topology.TopologyJson;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.inagg.perf.cli.InaggCli;
import org.inagg.services.controller.Controller;
import org.inagg.services.controller.ControllerContext;
import org.inagg.services.controller.SoftwareSwitchBackend;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The planners through {@code inagg plan}, {@code inagg simulate} and {@code inagg deploy}. */
class PlannerCommandsTest {

    @Test
    void shouldTurnATopologyFileIntoAPlanFile(@TempDir Path folder) throws Exception {
        Path topology = folder.resolve("grid.json");
        Path plan = folder.resolve("plan.json");
        TopologyJson.write(Topologies.gridExample(), topology);

        int exit = InaggCli.execute("plan", "--topology", topology.toString(),
            "--out", plan.toString());

        assertThat(exit).isZero();
        assertThat(new ObjectMapper().readTree(plan.toFile()).get("rateGbps").asDouble())
            .isCloseTo(3.0, within(1e-6));
    }

    @Test
    void shouldWriteATableAndAPngChartForAScenario(@TempDir Path folder) throws Exception {
        System.setProperty("java.awt.headless", "true");

        int exit = InaggCli.execute("simulate", "--scenario", "passing",
            "--out", folder.toString());

        assertThat(exit).isZero();
        assertThat(Files.readString(folder.resolve("report-passing.md"))).contains("VGG19", "ResNet-50");
        byte[] png = Files.readAllBytes(folder.resolve("passing-times.png"));
        assertThat(png).startsWith((byte) 0x89, (byte) 'P', (byte) 'N', (byte) 'G');
    }

    @Test
    void shouldCompareEverySchemeOnAUserTopology(@TempDir Path folder) throws Exception {
        System.setProperty("java.awt.headless", "true");
        Path topology = folder.resolve("inart.json");
        TopologyJson.write(Topologies.inartExample(), topology);

        int exit = InaggCli.execute("simulate", "--topology", topology.toString(),
            "--out", folder.toString());

        assertThat(exit).isZero();
        assertThat(Files.readString(folder.resolve("report-topology.md")))
            .contains("| NO_INA | 1.333333", "| SWITCHML | 2.000000", "| InArt | 2.666667");
        assertThat(folder.resolve("topology-rates.png")).exists();
    }

    @Test
    void shouldDeployAPlanFileAndCheckItAgainstTheFlatAllReduce(@TempDir Path folder) throws Exception {
        Path topology = folder.resolve("grid.json");
        Path plan = folder.resolve("plan.json");
        TopologyJson.write(Topologies.gridExample(), topology);
        assertThat(InaggCli.execute("plan", "--topology", topology.toString(),
            "--out", plan.toString())).isZero();

        int exit = InaggCli.execute("deploy", "--plan", plan.toString(), "-n", "3000",
            "-i", "2", "--lanes", "64", "--multicast-commands", folder.resolve("mc").toString());

        assertThat(exit).as("0 only when every result is bit-identical to the flat all-reduce").isZero();
        assertThat(Files.readAllLines(folder.resolve("mc").resolve("S1.txt"))).first().isEqualTo("mc_mgrp_create 1000");
    }

    @Test
    void shouldLetDeployTakeItsPlanFromTheController(@TempDir Path folder) throws Exception {
        Path topology = folder.resolve("grid.json");
        TopologyJson.write(Topologies.gridExample(), topology);
        // POST /v1/plans plans only: the switch backend is never called.
        try (Controller controller = Controller.launch(new ControllerContext()
            .bind(new InetSocketAddress("127.0.0.1", 0)).journal(folder.resolve("journal")).poolSlots(32)
            .defaultSlots(16).switchBackend(new SoftwareSwitchBackend(URI.create("http://127.0.0.1:9"),
                new InetSocketAddress("127.0.0.1", 9), Duration.ofSeconds(1))))) {
            int exit = InaggCli.execute("deploy", "--controller", controller.url(), "--topology", topology.toString(),
                "-n", "2000", "-i", "1");

            assertThat(exit).isZero();
        }
    }
}
