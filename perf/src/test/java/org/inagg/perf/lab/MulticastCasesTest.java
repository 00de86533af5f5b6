package org.inagg.perf.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.nio.file.Path;
import java.util.List;

import org.inagg.control.plan.InaPlan;
import org.inagg.control.topology.Topology;
import org.inagg.control.topology.TopologyBuilder;
import org.inagg.perf.peers.LinkBounds;
import org.junit.jupiter.api.Test;

/**
 * Path-aware multicast's two cases on a 2-spine, 3-leaf topology (both PSs on L1, each job's workers on L2 and L3),
 * and the streams and bounds they put on each link direction; no root needed.
 */
class MulticastCasesTest
{
    private static final List<MulticastCases.Job> JOBS = List.of(MulticastCases.Job.parse("PS1=W1,W2"),
        MulticastCases.Job.parse("PS2=W3, W4"));
    private static final LinkRate PER_GBPS = LinkRate.parse("1mbit");
    private static final long BYTES = 4L * 262_144;

    static TopologyBuilder twoSpines(final double psIngressGbps)
    {
        final TopologyBuilder builder = new TopologyBuilder("two-spines").plainSwitch("SP1").plainSwitch("SP2")
            .plainSwitch("L1").programmableSwitch("L2", 40, 10_000).programmableSwitch("L3", 40, 10_000)
            .parameterServer("PS1", psIngressGbps).parameterServer("PS2", psIngressGbps).worker("W1").worker("W2")
            .worker("W3").worker("W4");
        for (final String leaf : List.of("L1", "L2", "L3"))
        {
            builder.link(leaf, "SP1", 10).link(leaf, "SP2", 10);
        }
        return builder.link("PS1", "L1", 10).link("PS2", "L1", 10).link("W1", "L2", 10).link("W2", "L3", 10)
            .link("W3", "L2", 10).link("W4", "L3", 10);
    }

    private static Topology topology()
    {
        return twoSpines(Double.POSITIVE_INFINITY).build();
    }

    @Test
    void shouldDrawCollidingRandomTreesOnOneSpineAndPathAwareTreesOnTwo()
    {
        final List<MulticastCases.Case> cases = MulticastCases.both(topology(), JOBS);
        final MulticastCases.Case random = cases.get(0);
        final MulticastCases.Case pathAware = cases.get(1);
        assertThat(random.name()).isEqualTo("random");
        assertThat(random.description()).contains("colliding draw");
        assertThat(random.spines().get(0)).hasSize(1).isEqualTo(random.spines().get(1));
        assertThat(MulticastCases.sharedLinks(topology(), random)).isNotEmpty();
        assertThat(pathAware.spines().get(0)).hasSize(1);
        assertThat(pathAware.spines().get(1)).hasSize(1).doesNotContainAnyElementsOf(pathAware.spines().get(0));
        assertThat(MulticastCases.sharedLinks(topology(), pathAware)).isEmpty();
        assertThat(pathAware.description()).doesNotContain("best effort");
    }

    @Test
    void shouldTurnATreeIntoLeafSwitchesSummingUpTheTreesPathReversed()
    {
        final MulticastCases.Case random = MulticastCases.both(topology(), JOBS).get(0);
        final String spine = random.spines().get(0).iterator().next();
        final InaPlan plan = random.plans().get(0);
        assertThat(plan.workers()).extracting(InaPlan.WorkerRoute::worker).containsExactly("W1", "W2");
        final InaPlan.Share share = plan.workers().get(0).shares().getFirst();
        assertThat(share.aggregateAt()).isEqualTo("L2");
        assertThat(share.path()).containsExactly("W1", "L2");
        assertThat(share.group()).isEqualTo(1);
        assertThat(plan.switchJobTables().keySet()).containsExactly("L2", "L3");
        final InaPlan.SwitchJobEntry row = plan.switchJobTables().get("L3").getFirst();
        assertThat(row.upstreamPath()).containsExactly("L3", spine, "L1", "PS1");
        assertThat(row.contributors()).containsExactly("W2");
        assertThat(random.plans().get(1).switchJobTables().get("L2").getFirst().jobId()).isEqualTo(2);
        assertThat(PlanOnFabric.onlyServer(plan)).isEqualTo("PS1");
    }

    @Test
    void shouldCountEachJobsStreamsOnEveryLinkDirection()
    {
        final List<MulticastCases.Case> cases = MulticastCases.both(topology(), JOBS);
        final MulticastCases.Case random = cases.get(0);
        final String spine = random.spines().get(0).iterator().next();
        final FabricStreams colliding = new FabricStreams(topology(), PER_GBPS, random.plans());
        // two leaf switches per job: two partials up and two results down through the PS's leaf and the spine
        assertThat(colliding.streams(new FabricStreams.Hop("L1", spine))).containsExactly(2, 2);
        assertThat(colliding.streams(new FabricStreams.Hop(spine, "L1"))).containsExactly(2, 2);
        assertThat(colliding.streams(new FabricStreams.Hop(spine, "L2"))).containsExactly(1, 1);
        assertThat(colliding.streams(new FabricStreams.Hop("PS1", "L1"))).containsExactly(2, 0);
        assertThat(colliding.streams(new FabricStreams.Hop("L1", "PS2"))).containsExactly(0, 2);
        // a worker's tensor up, its result multicast down by its leaf
        assertThat(colliding.streams(new FabricStreams.Hop("W1", "L2"))).containsExactly(1, 0);
        assertThat(colliding.streams(new FabricStreams.Hop("L2", "W3"))).containsExactly(0, 1);
        // into a leaf's aggregation unit: each job's worker and each job's result
        assertThat(colliding.streams(new FabricStreams.Hop("L2", "L2/agg"))).containsExactly(2, 2);
        assertThat(colliding.streams(new FabricStreams.Hop("L2/agg", "L2"))).containsExactly(2, 2);
        final String other = topology().contains("SP1") && spine.equals("SP1") ? "SP2" : "SP1";
        assertThat(colliding.streams(new FabricStreams.Hop("L1", other))).containsExactly(0, 0);
        final MulticastCases.Case pathAware = cases.get(1);
        final FabricStreams apart = new FabricStreams(topology(), PER_GBPS, pathAware.plans());
        final String first = pathAware.spines().get(0).iterator().next();
        final String second = pathAware.spines().get(1).iterator().next();
        assertThat(apart.streams(new FabricStreams.Hop("L1", first))).containsExactly(2, 0);
        assertThat(apart.streams(new FabricStreams.Hop(second, "L1"))).containsExactly(0, 2);
    }

    @Test
    void shouldBoundCollidingJobsByFourStreamsOnTheSharedSpineAndPathAwareByTwo()
    {
        final List<MulticastCases.Case> cases = MulticastCases.both(topology(), JOBS);
        final double stream = LinkBounds.inaSeconds(BYTES, 256, 10e6);
        final FabricStreams colliding = new FabricStreams(topology(), PER_GBPS, cases.get(0).plans());
        final FabricStreams.Bound random = colliding.ofJob(0, BYTES);
        assertThat(random.streams()).isEqualTo(4);
        assertThat(random.hop().toString()).containsAnyOf("SP1", "SP2").contains("L1");
        assertThat(random.seconds()).isCloseTo(4 * stream, within(1e-9));
        assertThat(colliding.ofFabric(BYTES).seconds()).isCloseTo(4 * stream, within(1e-9));
        // the aggregation unit's 4 streams run at 40 Gb/s of the file: one stream's time at 10
        assertThat(colliding.seconds(new FabricStreams.Hop("L2", "L2/agg"), BYTES)).isCloseTo(stream,
            within(1e-9));
        final FabricStreams apart = new FabricStreams(topology(), PER_GBPS, cases.get(1).plans());
        assertThat(apart.ofJob(0, BYTES).seconds()).isCloseTo(2 * stream, within(1e-9));
        assertThat(apart.ofJob(1, BYTES).streams()).isEqualTo(2);
        assertThat(random.seconds() / apart.ofJob(1, BYTES).seconds()).isCloseTo(2.0, within(1e-9));
        assertThat(MulticastCases.simulatedSeconds(topology(), cases.get(0), 8)
            / MulticastCases.simulatedSeconds(topology(), cases.get(1), 8)).isCloseTo(2.0, within(1e-9));
    }

    @Test
    void shouldLimitTheDirectionIntoAParameterServerToItsIngress()
    {
        final Topology slow = twoSpines(2.5).build();
        final FabricStreams streams = new FabricStreams(slow, PER_GBPS,
            MulticastCases.both(slow, JOBS).get(1).plans());
        assertThat(streams.gbps(new FabricStreams.Hop("L1", "PS1"))).isEqualTo(2.5);
        assertThat(streams.gbps(new FabricStreams.Hop("PS1", "L1"))).isEqualTo(10);
        assertThat(streams.ofJob(0, BYTES).hop()).isEqualTo(new FabricStreams.Hop("L1", "PS1"));
        assertThatThrownBy(() -> streams.gbps(new FabricStreams.Hop("W1", "L3"))).hasMessageContaining(
            "no link joins W1 and L3");
        assertThatThrownBy(() -> streams.gbps(new FabricStreams.Hop("L1", "L1/agg"))).hasMessageContaining(
            "no aggregation unit");
    }

    @Test
    void shouldReadTheExampleFile()
    {
        final Topology example = TopologyFabric.read(Path.of("..", "control", "examples",
            "multicast-two-spines.json"));
        assertThat(MulticastCases.spines(example)).containsExactly("SP1", "SP2");
        final List<MulticastCases.Case> cases = MulticastCases.both(example, JOBS);
        assertThat(cases.get(0).spines().get(0)).isEqualTo(cases.get(0).spines().get(1));
        assertThat(cases.get(1).spines().get(0)).doesNotContainAnyElementsOf(cases.get(1).spines().get(1));
    }

    @Test
    void shouldNameWhatIsWrongWithTheJobsOrTheTopology()
    {
        assertThatThrownBy(() -> MulticastCases.Job.parse("PS1")).hasMessageContaining("PS=WORKER");
        assertThatThrownBy(() -> MulticastCases.check(topology(), JOBS.subList(0, 1))).hasMessageContaining(
            "give --job twice");
        assertThatThrownBy(() -> MulticastCases.check(topology(), List.of(JOBS.get(0),
            MulticastCases.Job.parse("PS2=W3,W9")))).hasMessageContaining("unknown node 'W9'");
        assertThatThrownBy(() -> MulticastCases.check(topology(), List.of(JOBS.get(0),
            MulticastCases.Job.parse("W4=W3")))).hasMessageContaining("not a parameter server");
        assertThatThrownBy(() -> MulticastCases.check(topology(), List.of(JOBS.get(0),
            MulticastCases.Job.parse("PS2=W2,W3")))).hasMessageContaining("'W2' is in two jobs");
        assertThatThrownBy(() -> MulticastCases.check(topology(), List.of(JOBS.get(0),
            MulticastCases.Job.parse("PS2=L2")))).hasMessageContaining("not a worker");
        final Topology psNearWorker = twoSpines(Double.POSITIVE_INFINITY).worker("W5").link("W5", "L1", 10).build();
        assertThatThrownBy(() -> MulticastCases.check(psNearWorker, List.of(JOBS.get(0),
            MulticastCases.Job.parse("PS2=W5")))).hasMessageContaining("on its parameter server PS2's leaf L1");
        final Topology oneSpine = new TopologyBuilder("one-spine").plainSwitch("SP1").plainSwitch("L1")
            .programmableSwitch("L2", 40, 100).parameterServer("PS1", Double.POSITIVE_INFINITY)
            .parameterServer("PS2", Double.POSITIVE_INFINITY).worker("W1").worker("W3").link("L1", "SP1", 10)
            .link("L2", "SP1", 10).link("PS1", "L1", 10).link("PS2", "L1", 10).link("W1", "L2", 10)
            .link("W3", "L2", 10).build();
        assertThatThrownBy(() -> MulticastCases.check(oneSpine, List.of(MulticastCases.Job.parse("PS1=W1"),
            MulticastCases.Job.parse("PS2=W3")))).hasMessageContaining("1 spine(s)").hasMessageContaining("[SP1]");
        final Topology plainLeaf = new TopologyBuilder("plain-leaf").plainSwitch("SP1").plainSwitch("SP2")
            .plainSwitch("L1").plainSwitch("L2").parameterServer("PS1", Double.POSITIVE_INFINITY)
            .parameterServer("PS2", Double.POSITIVE_INFINITY).worker("W1").worker("W3").link("L1", "SP1", 10)
            .link("L1", "SP2", 10).link("L2", "SP1", 10).link("L2", "SP2", 10).link("PS1", "L1", 10)
            .link("PS2", "L1", 10).link("W1", "L2", 10).link("W3", "L2", 10).build();
        assertThatThrownBy(() -> MulticastCases.check(plainLeaf, List.of(MulticastCases.Job.parse("PS1=W1"),
            MulticastCases.Job.parse("PS2=W3")))).hasMessageContaining("switch L2 is not programmable");
    }
}
