package org.inagg.control.deploy;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import org.inagg.control.aggregation.CandidateSettings;
import org.inagg.control.inart.InArtPlanner;
import org.inagg.control.inart.SplitMethod;
import org.inagg.control.plan.InaPlan;
import org.inagg.control.plan.PlanJson;
import org.inagg.control.topology.FabricSpec;
import org.inagg.control.topology.Topologies;
import org.inagg.control.topology.Topology;

import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Any plan the planners make for a random spine-leaf fabric (some switches not programmable, background load, one to
 * three PSs, so some workers go straight to a PS and some switches serve several PSs), deployed with faults on every
 * endpoint, all-reduces every worker's tensor bit-identically to the flat single-switch all-reduce.
 */
class PlanDeploymentPropertiesTest {

    @Property(tries = 20, seed = "20261121")
    void shouldMatchTheFlatAllReduceForAnyPlanOfAnySpineLeafFabric(
        @ForAll @IntRange(min = 1, max = 3) int spines,
        @ForAll @IntRange(min = 2, max = 4) int leaves,
        @ForAll @IntRange(min = 2, max = 12) int workers,
        @ForAll @IntRange(min = 1, max = 3) int parameterServers,
        @ForAll @DoubleRange(min = 0.2, max = 1.0) double programmable,
        @ForAll @IntRange(min = 1, max = 4_000) int elements,
        @ForAll @IntRange(min = 0, max = 3) int faultPercent,
        @ForAll long seed) {
        Topology topology = Topologies.spineLeaf(spines, leaves, 1, workers, parameterServers,
            new FabricSpec(100, 25, programmable, 400, 1_000, 50, 0.5, seed));
        InArtPlanner planner = new InArtPlanner(new CandidateSettings(1, 4, seed), 8, seed);
        InaPlan plan = PlanJson.read(PlanJson.write(PlanJson.plan(parameterServers == 1 ? "grid" : "inart",
            planner.plan(topology, SplitMethod.EXACT_LP).routing(), List.of())));
        PlanDeployment.Settings settings = new PlanDeployment.Settings(8, 64);
        PlanDeployment deployment = PlanDeployment.of(plan, settings);
        deployment.p4JobTables(topology).values().forEach(table -> assertThat(table.simpleSwitchCommands()).isNotEmpty());
        int rows = deployment.switchPeers().keySet().stream().mapToInt(sw -> deployment.switchRows(sw).size()).sum();
        long direct = java.util.stream.IntStream.range(0, workers).mapToLong(w -> deployment.workerShards(w).stream()
            .filter(s -> deployment.serverPeers().containsKey(s.aggregateAt())).count()).sum();
        Statistics.label("switch rows").collect(rows == 0 ? "none" : rows == 1 ? "1" : "several");
        Statistics.label("shares sent straight to a PS").collect(direct == 0 ? "none" : "some");

        SplittableRandom random = new SplittableRandom(seed);
        float[][] planned = new float[workers][elements];
        for (float[] tensor : planned) {
            for (int k = 0; k < elements; k++) {
                tensor[k] = (float) ((random.nextDouble() - 0.5) * Math.scalb(1.0, random.nextInt(-20, 20)));
            }
        }
        float[][] flat = new float[workers][];
        for (int w = 0; w < workers; w++) {
            flat[w] = planned[w].clone();
        }
        Duration peerTimeout = Duration.ofSeconds(30);
        try (InProcessPlanCluster cluster = InProcessPlanCluster.deploy(deployment, faultPercent / 100.0, seed,
            peerTimeout)) {
            cluster.allReduce(planned);
        }
        try (InProcessPlanCluster cluster = InProcessPlanCluster.flat(workers, settings, 0, seed, peerTimeout)) {
            cluster.allReduce(flat);
        }
        for (int w = 0; w < workers; w++) {
            assertThat(planned[w]).as("worker %d of %s", w, deployment).containsExactly(flat[w]);
        }
    }
}
