package org.inagg.control.topology;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TopologyJsonTest {

    @Test
    void shouldRoundTripAFileWithoutLoss(@TempDir Path folder) {
        Topology original = Topologies.fatTree(4, 10, 2, FabricSpec.uniform100G().withBackgroundLoadMax(0.3)
            .withProgrammableFraction(0.5));
        Path file = folder.resolve("t.json");

        TopologyJson.write(original, file);
        Topology read = TopologyJson.read(file);

        assertThat(read.name()).isEqualTo(original.name());
        assertThat(read.nodes()).isEqualTo(original.nodes());
        assertThat(read.links()).isEqualTo(original.links());
    }

    @Test
    void shouldApplyDefaultsToOptionalFields() {
        Topology topology = TopologyJson.parse("""
            {"name": "tiny",
             "nodes": [{"id": "S", "kind": "switch"}, {"id": "W", "kind": "worker"},
                       {"id": "P", "kind": "parameter_server"}],
             "links": [{"a": "W", "b": "S", "bandwidthGbps": 10}, {"a": "P", "b": "S", "bandwidthGbps": 10}]}
            """);

        assertThat(topology.node(topology.index("S")).isProgrammable()).isFalse();
        assertThat(topology.node(topology.index("P")).ingressGbps()).isInfinite();
        assertThat(topology.links().get(0).backgroundGbps()).isZero();
    }

    @Test
    void shouldRejectUnknownFieldsSoThatTyposAreNotSilent() {
        assertThatThrownBy(() -> TopologyJson.parse("""
            {"nodes": [{"id": "S", "kind": "switch", "aggregationCapacityGpbs": 9}], "links": []}
            """)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("aggregationCapacityGpbs");
    }

    @Test
    void shouldRejectLinksToUnknownNodes() {
        assertThatThrownBy(() -> TopologyJson.parse("""
            {"nodes": [{"id": "S", "kind": "switch"}], "links": [{"a": "S", "b": "X", "bandwidthGbps": 1}]}
            """)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("X");
    }
}
