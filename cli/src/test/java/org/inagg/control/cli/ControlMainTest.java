package org.inagg.control.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.inagg.control.topology.Topologies;
import org.inagg.control.topology.TopologyJson;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class ControlMainTest {

    @Test
    void shouldTurnATopologyFileIntoAPlanFile(@TempDir Path folder) throws Exception {
        Path topology = folder.resolve("grid.json");
        Path plan = folder.resolve("plan.json");
        TopologyJson.write(Topologies.gridExample(), topology);

        int exit = new CommandLine(new ControlMain()).execute("plan", "--topology", topology.toString(),
            "--out", plan.toString());

        assertThat(exit).isZero();
        assertThat(new ObjectMapper().readTree(plan.toFile()).get("rateGbps").asDouble())
            .isCloseTo(3.0, within(1e-6));
    }

    @Test
    void shouldWriteATableAndAPngChartForAScenario(@TempDir Path folder) throws Exception {
        System.setProperty("java.awt.headless", "true");

        int exit = new CommandLine(new ControlMain()).execute("simulate", "--scenario", "passing",
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

        int exit = new CommandLine(new ControlMain()).execute("simulate", "--topology", topology.toString(),
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
        assertThat(new CommandLine(new ControlMain()).execute("plan", "--topology", topology.toString(),
            "--out", plan.toString())).isZero();

        int exit = new CommandLine(new ControlMain()).execute("deploy", "--plan", plan.toString(), "-n", "3000",
            "-i", "2", "--lanes", "64", "--multicast-commands", folder.resolve("mc").toString());

        assertThat(exit).as("0 only when every result is bit-identical to the flat all-reduce").isZero();
        assertThat(Files.readAllLines(folder.resolve("mc").resolve("S1.txt"))).first().isEqualTo("mc_mgrp_create 1000");
    }
}
