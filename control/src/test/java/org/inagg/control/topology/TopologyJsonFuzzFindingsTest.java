package org.inagg.control.topology;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Regression tests of fuzzing findings on the topology file (docs/fuzzing.md, TopologyFileFuzzTest): the reader took
 * a key given twice (the last one won), kept switch-only fields on workers and PSs (and ingress on switches) that the
 * writer then dropped, read numbers written as text ("nine" as 0) and kept -0.0, which the writer leaves out: each
 * silently changed what the file says.
 */
class TopologyJsonFuzzFindingsTest {

    private static final String TINY = """
        {"name": "tiny",
         "nodes": [{"id": "S", "kind": "switch", "aggregationCapacityGbps": 9}, {"id": "W", "kind": "worker"},
                   {"id": "P", "kind": "parameter_server", "ingressGbps": 4}],
         "links": [{"a": "W", "b": "S", "bandwidthGbps": 10}, {"a": "P", "b": "S", "bandwidthGbps": 10}]}
        """;

    @Test
    void shouldReadTheTinyTopology() {
        // The baseline the rejections below are edits of: read as stated, and written back to the same topology.
        Topology topology = TopologyJson.parse(TINY);
        assertThat(topology.name()).isEqualTo("tiny");
        assertThat(topology.nodes()).hasSize(3);
        assertThat(topology.node(topology.index("S")).aggregationCapacityGbps()).isEqualTo(9.0);
        assertThat(topology.links()).hasSize(2);
        assertThat(topology.links().getFirst().bandwidthGbps()).isEqualTo(10.0);
        assertThat(TopologyJson.parse(TopologyJson.toJson(topology)).nodes()).isEqualTo(topology.nodes());
    }

    @Test
    void shouldRejectAKeyGivenTwice() {
        // The fuzzer's input: a switch's object that says "kind" twice.
        assertThatIllegalArgumentException().isThrownBy(() -> TopologyJson.parse(TINY.replace(
            "\"kind\": \"switch\", \"aggregationCapacityGbps\": 9",
            "\"kind\": \"switch\", \"aggregationCapacityGbps\": 9, \"kind\": \"worker\"")))
            .withMessageContaining("kind");
    }

    @Test
    void shouldRejectFieldsThatDoNotApplyToTheNodesKind() {
        assertThatIllegalArgumentException().isThrownBy(() -> TopologyJson.parse(TINY.replace(
            "{\"id\": \"W\", \"kind\": \"worker\"}",
            "{\"id\": \"W\", \"kind\": \"worker\", \"aggregationCapacityGbps\": 6}")))
            .withMessageContaining("aggregationCapacityGbps");
        assertThatIllegalArgumentException().isThrownBy(() -> TopologyJson.parse(TINY.replace(
            "\"kind\": \"switch\", \"aggregationCapacityGbps\": 9", "\"kind\": \"switch\", \"ingressGbps\": 9")))
            .withMessageContaining("ingressGbps");
    }

    @Test
    void shouldReadMinusZeroAsZeroSoThatTheFileWritesBackAsItWasRead() {
        // The long run's input: "aggregationCapacityGbps": -0.00 was kept as -0.0, written back as absent (0.0).
        Topology topology = TopologyJson.parse(TINY.replace("\"aggregationCapacityGbps\": 9",
            "\"aggregationCapacityGbps\": -0.00").replace("\"bandwidthGbps\": 10}", "\"bandwidthGbps\": 10, "
            + "\"backgroundGbps\": -0.0}"));
        assertThat(Double.doubleToRawLongBits(topology.node(topology.index("S")).aggregationCapacityGbps())).isZero();
        assertThat(Double.doubleToRawLongBits(topology.links().getFirst().backgroundGbps())).isZero();
        assertThat(TopologyJson.parse(TopologyJson.toJson(topology)).nodes()).isEqualTo(topology.nodes());
        assertThat(TopologyJson.parse(TopologyJson.toJson(topology)).links()).isEqualTo(topology.links());
    }

    @Test
    void shouldRejectNumbersWrittenAsText() {
        assertThatIllegalArgumentException().isThrownBy(() -> TopologyJson.parse(TINY.replace(
            "\"aggregationCapacityGbps\": 9", "\"aggregationCapacityGbps\": \"nine\"")))
            .withMessageContaining("number");
        assertThatIllegalArgumentException().isThrownBy(() -> TopologyJson.parse(TINY.replace(
            "\"aggregationCapacityGbps\": 9", "\"aggregationCapacityGbps\": 9, \"aggregatorSlots\": 1.5")))
            .withMessageContaining("integer");
    }
}
