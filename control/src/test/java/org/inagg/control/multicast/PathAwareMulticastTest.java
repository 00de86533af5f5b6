package org.inagg.control.multicast;

import org.inagg.control.topology.Topology;
import org.junit.jupiter.api.Test;

import java.util.BitSet;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class PathAwareMulticastTest {

    @Test
    void shouldBeExactlySevenTimesFasterThanUnicastForSevenReceivers() {
        assertThat(MulticastScenarios.singleSenderSpeedup(8)).isCloseTo(7.0, within(1e-9));
    }

    @Test
    void shouldBeTwiceAsFastAsCollidingRandomTrees() {
        double[] seconds = MulticastScenarios.collidingSenders(8);

        assertThat(seconds[0] / seconds[1]).isCloseTo(2.0, within(1e-9));
    }

    @Test
    void shouldBalanceLinkLoadBetterThanRandomMulticastOnAverage() {
        double random = 0;
        double aware = 0;
        for (long seed = 1; seed <= 10; seed++) {
            double[] cv = MulticastScenarios.loadBalance(32, 7, 10, seed);
            random += cv[0];
            aware += cv[1];
        }

        assertThat(aware).isLessThan(0.9 * random);
    }

    @Test
    void shouldRefuseATreeWhenNoLinkHasTheBandwidthLeft() {
        Topology fabric = MulticastScenarios.spineLeaf8x8(1);
        PathAwareMulticast planner = new PathAwareMulticast(new LinkReservations(fabric));
        int source = fabric.index("PS0");
        int[] receivers = {MulticastScenarios.host(fabric, 0, 0)};

        assertThat(planner.reserve(source, receivers, 100)).isNotNull();
        assertThat(planner.reserve(source, receivers, 1)).as("the PS uplink is fully reserved").isNull();
    }

    @Test
    void shouldReleaseWhatItReserved() {
        Topology fabric = MulticastScenarios.spineLeaf8x8(1);
        LinkReservations reservations = new LinkReservations(fabric);
        PathAwareMulticast planner = new PathAwareMulticast(reservations);
        MulticastTree tree = planner.reserve(fabric.index("PS0"), new int[] {MulticastScenarios.host(fabric, 0, 0)},
            60);

        planner.release(tree, 60);

        for (int arc = 0; arc < fabric.arcCount(); arc++) {
            assertThat(reservations.reservedGbps(arc)).isZero();
        }
    }

    @Test
    void shouldForwardOnOnePortPerBranchOfTheTree() {
        Topology fabric = MulticastScenarios.spineLeaf8x8(1);
        int[] receivers = new int[7];
        for (int leaf = 0; leaf < 7; leaf++) {
            receivers[leaf] = MulticastScenarios.host(fabric, leaf, 0);
        }
        MulticastTree tree = new PathAwareMulticast(new LinkReservations(fabric))
            .reserve(fabric.index("PS0"), receivers, 10);

        Map<String, BitSet> bitmaps = tree.portBitmaps(fabric);

        assertThat(tree.arcs()).hasSize(1 + 1 + 7 + 7);
        assertThat(bitmaps.values().stream().mapToInt(BitSet::cardinality).sum()).isEqualTo(tree.arcs().length);
        assertThat(bitmaps).containsKey("PS0").containsKey("leaf7");
    }
}
