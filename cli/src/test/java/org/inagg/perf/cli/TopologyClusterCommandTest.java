package org.inagg.perf.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.inagg.perf.cli.RefusingCli.refusal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.inagg.control.topology.TopologyBuilder;
import org.inagg.control.topology.TopologyJson;
import org.inagg.perf.lab.EmulatedClusterTest;
import org.inagg.perf.lab.HostNetwork;
import org.inagg.perf.lab.InaggProcess;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code inagg cluster --topology}: a routed fabric of two switches from a topology file (W1, W2 under S1; W3 and the
 * PS under S2), unmodified {@code inagg worker} processes all-reducing through the software switch in S1's aggregation
 * unit, W3's packets routed across S1-S2; a bad file, node or rate named before anything is made; nothing left.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class TopologyClusterCommandTest
{
    @TempDir
    Path dir;

    @BeforeEach
    void requireCluster()
    {
        EmulatedClusterTest.requireCluster();
    }

    private Path twoSwitches() throws Exception
    {
        final Path file = dir.resolve("two-switches.json");
        TopologyJson.write(new TopologyBuilder("two-switches").programmableSwitch("S1", 9, 1000)
            .programmableSwitch("S2", 9, 1000).worker("W1").worker("W2").worker("W3").parameterServer("PS", 9)
            .link("S1", "S2", 5).link("W1", "S1", 5).link("W2", "S1", 5).link("W3", "S2", 5).link("PS", "S2", 5)
            .build(), file);
        return file;
    }

    @Test
    void shouldRunWorkersOnTheFabricOfATopologyFile() throws Exception
    {
        final String java = String.join(" ", Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "--add-exports",
            "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx256m",
            "-XX:+UseSerialGC", "-cp", "'" + System.getProperty("java.class.path") + "'", InaggCli.class.getName());
        final String worker = java + " worker --switch $INAGG_CLUSTER_SWITCH --bind $INAGG_CLUSTER_IP:9101"
            + " --worker-id $INAGG_CLUSTER_RANK -w $INAGG_CLUSTER_HOSTS -n 50000 -i 2 --no-progress";
        final InaggProcess run = InaggProcess.start(List.of(), dir.resolve("cluster.log"), List.of("cluster",
            "--topology", twoSwitches().toString(), "--per-gbps", "10mbit", "--run", worker, "--timeout-s", "180",
            "--work-dir", dir.toString()));
        final int exit = run.await(200);
        final String output = run.output();
        assertThat(exit).as(output).isZero();
        assertThat(output).contains("two-switches: 6 nodes, 5 links").contains("host 3: 10.1.0.5, link 50 Mbit/s to S2")
            .contains("cluster: removed (0 namespaces left)");
        for (int h = 1; h <= 3; h++)
        {
            assertThat(output).as(output).containsPattern("\\[h" + h + "\\] +within bound +yes");
        }
        final long pid = run.process().pid();
        assertThat(HostNetwork.listNamespaces()).noneMatch(name -> name.startsWith("inagg-" + pid));
    }

    @Test
    void shouldNameABadFileNodeOrRateAndCreateNothing() throws Exception
    {
        final List<String> before = HostNetwork.listNamespaces();
        final Path missing = dir.resolve("missing.json");
        assertThat(refusal("cluster", "--topology", missing.toString(), "--run", "true")).contains(missing.toString());
        final Path unknown = dir.resolve("unknown.json");
        Files.writeString(unknown, Files.readString(twoSwitches()).replace("\"a\" : \"W3\"", "\"a\" : \"W9\""));
        assertThat(refusal("cluster", "--topology", unknown.toString(), "--run", "true")).contains(unknown.toString())
            .contains("W9");
        final Path file = twoSwitches();
        assertThat(refusal("cluster", "--topology", file.toString(), "--per-gbps", "fast", "--run", "true"))
            .contains("'fast'");
        assertThat(refusal("cluster", "--topology", file.toString(), "--per-gbps", "100gbit", "--run", "true"))
            .contains("link S1->S2").contains("outside");
        assertThat(refusal("cluster", "--topology", file.toString(), "--leaves", "2", "--run", "true"))
            .contains("not with --leaves");
        assertThat(refusal("bench-plans", "--topology", file.toString(), "--schemes", "ring")).contains("'ring'");
        assertThat(HostNetwork.listNamespaces()).isEqualTo(before);
    }
}
