package org.inagg.control.topology;

import com.code_intelligence.jazzer.junit.FuzzTest;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fuzzes the topology file that {@code inagg-control plan}, {@code simulate} and {@code deploy} read
 * ({@link TopologyJson}, docs/fuzzing.md). Invariants: a bad file fails with an {@link IllegalArgumentException} that
 * has a message, never with another exception; a file it accepts means what it says: written back and read again it
 * gives the same topology. Seeds: the example topologies,
 * {@code src/test/resources/org/inagg/control/topology/TopologyFileFuzzTestInputs/}.
 */
class TopologyFileFuzzTest {

    @FuzzTest(maxDuration = "10s")
    void shouldRejectABadTopologyFileWithAMessageAndRoundTripAGoodOne(byte[] file) {
        Topology topology;
        try {
            topology = TopologyJson.parse(new String(file, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            assertThat(e.getMessage()).isNotBlank();
            return;
        }
        Topology again = TopologyJson.parse(TopologyJson.toJson(topology));
        assertThat(again.name()).isEqualTo(topology.name());
        assertThat(again.nodes()).isEqualTo(topology.nodes());
        assertThat(again.links()).isEqualTo(topology.links());
    }
}
