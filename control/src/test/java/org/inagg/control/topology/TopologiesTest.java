package org.inagg.control.topology;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TopologiesTest {

    @Test
    void shouldBuildAFatTreeWithTheTextbookCounts() {
        Topology tree = Topologies.fatTree(4, 15, 1, FabricSpec.uniform100G());

        assertThat(tree.switches()).hasSize(20);
        assertThat(tree.workers()).hasSize(15);
        assertThat(tree.parameterServers()).hasSize(1);
        assertThat(tree.links()).hasSize(16 + 16 + 16);
    }

    @Test
    void shouldMakeTheRequestedShareOfSwitchesProgrammable() {
        Topology tree = Topologies.fatTree(8, 100, 1, FabricSpec.uniform100G().withProgrammableFraction(0.2));

        long programmable = java.util.Arrays.stream(tree.switches())
            .filter(s -> tree.node(s).isProgrammable()).count();
        assertThat(programmable).isEqualTo(Math.round(0.2 * 80));
    }

    @Test
    void shouldJoinEveryLeafToEverySpine() {
        Topology fabric = Topologies.spineLeaf(4, 6, 2, 10, 1, FabricSpec.uniform100G());

        for (int leaf = 0; leaf < 6; leaf++) {
            for (int spine = 0; spine < 4; spine++) {
                assertThat(fabric.arcBetween(fabric.index("leaf" + leaf), fabric.index("spine" + spine)))
                    .isNotNegative();
            }
        }
    }

    @Test
    void shouldPlaceTheGridExampleAsThePaperDraws() {
        Topology example = Topologies.gridExample();

        assertThat(example.node(example.accessSwitch(example.index("W4"))).id()).isEqualTo("S1");
        assertThat(example.node(example.accessSwitch(example.index("W6"))).id()).isEqualTo("S2");
        assertThat(example.node(example.accessSwitch(example.index("PS"))).id()).isEqualTo("S3");
        assertThat(example.node(example.index("PS")).ingressGbps()).isEqualTo(9);
    }

    @Test
    void shouldRejectMoreHostsThanPorts() {
        assertThatThrownBy(() -> Topologies.fatTree(4, 16, 1, FabricSpec.uniform100G()))
            .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldKeepBackgroundLoadBelowBandwidth() {
        Topology tree = Topologies.fatTree(6, 20, 2, FabricSpec.uniform100G().withBackgroundLoadMax(0.6));

        assertThat(tree.links()).allSatisfy(link -> assertThat(link.backgroundGbps())
            .isBetween(0.0, 0.6 * link.bandwidthGbps()));
        assertThat(tree.links()).anySatisfy(link -> assertThat(link.backgroundGbps()).isPositive());
    }
}
