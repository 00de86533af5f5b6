package org.inagg.control.deploy;

import org.inagg.control.aggregation.CandidateSettings;
import org.inagg.control.grid.GridPlanner;
import org.inagg.control.inart.InArtPlanner;
import org.inagg.control.plan.InaPlan;
import org.inagg.control.plan.PlanJson;
import org.inagg.control.topology.Topologies;
import org.inagg.p4.esa.ServerCounter;
import org.inagg.p4.softswitch.SwitchCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Plans from the planners, deployed on software switches and parameter servers, all-reduce real tensors with real
 * workers: every result is bit-identical to the flat single-switch all-reduce of the same tensors.
 */
class PlanDeploymentTest {

    private static final PlanDeployment.Settings SETTINGS = new PlanDeployment.Settings(16, 64);
    private static final Duration PEER_TIMEOUT = Duration.ofSeconds(30);

    private static InaPlan gridPlan() {
        return PlanJson.read(PlanJson.write(PlanJson.plan("grid",
            GridPlanner.forSmallNetworks().plan(Topologies.gridExample()), List.of())));
    }

    private static InaPlan inartPlan() {
        InArtPlanner planner = new InArtPlanner(new CandidateSettings(1, 8, 1), 16, 1);
        return PlanJson.plan("inart",
            planner.planWithSplit(Topologies.inartExample(), new double[] {0.6, 0.4}).routing(), List.of());
    }

    @Test
    void shouldTurnTheGridExamplePlanIntoSwitchTablesWithUpstreamAggregation() {
        InaPlan plan = gridPlan();
        PlanDeployment deployment = PlanDeployment.of(plan, SETTINGS);

        assertThat(deployment.shards()).hasSize(1);
        assertThat(deployment.workers()).hasSize(8);
        int served = 0;
        for (Map.Entry<String, List<InaPlan.SwitchJobEntry>> table : plan.switchJobTables().entrySet()) {
            List<PlanDeployment.SwitchRow> rows = deployment.switchRows(table.getKey());
            assertThat(rows).hasSize(1);
            PlanDeployment.SwitchRow row = rows.getFirst();
            assertThat(row.config().workers()).as("every job counts all workers").isEqualTo(8);
            assertThat(row.upstream().localWorkers()).hasSize(table.getValue().getFirst().expectedContributors());
            assertThat(row.upstream().parameterServerPeer()).isEqualTo(deployment.serverPeers().get("PS"));
            served += row.upstream().localWorkers().length;
        }
        assertThat(served).as("each worker summed at exactly one switch").isEqualTo(8);
        for (int w = 0; w < 8; w++) {
            PlanDeployment.WorkerShard shard = deployment.workerShards(w).getFirst();
            assertThat(shard.sendTo()).isEqualTo(deployment.switchPeers().get(shard.aggregateAt()));
        }
    }

    @Test
    @Timeout(120)
    void shouldAllReduceTheGridExamplePlanBitIdenticallyToTheFlatAllReduceDespiteFaults() {
        PlanDeployment deployment = PlanDeployment.of(gridPlan(), SETTINGS);
        float[][] tensors = tensors(8, 20_011, 1);
        float[][] expected = flat(tensors);

        float[][] planned = copy(tensors);
        try (InProcessPlanCluster cluster = InProcessPlanCluster.deploy(deployment, 0.02, 7, PEER_TIMEOUT)) {
            cluster.allReduce(planned);
            for (String sw : cluster.switchIds()) {
                assertThat(cluster.switchCounter(sw, SwitchCounter.UPSTREAM_PARTIALS)).as(sw).isPositive();
                // results down the tree: the PS's result of each round comes once to the switch, which relays it
                assertThat(cluster.switchCounter(sw, SwitchCounter.RESULTS_RELAYED)).as(sw).isPositive();
                assertThat(cluster.switchCounter(sw, SwitchCounter.RESULTS_SENT)).as(sw).isPositive();
            }
            assertThat(cluster.serverCounter("PS", ServerCounter.PARTIALS_MERGED)).isPositive();
            assertThat(cluster.serverCounter("PS", ServerCounter.RESULTS_TO_SUBTREES)).isPositive();
        }
        for (int w = 0; w < 8; w++) {
            assertThat(planned[w]).as("worker %d", w).containsExactly(expected[w]);
        }
    }

    @Test
    @Timeout(120)
    void shouldAllReduceTheInArtExamplePlanAcrossTwoParameterServersBitIdentically() {
        PlanDeployment deployment = PlanDeployment.of(inartPlan(), SETTINGS);
        assertThat(deployment.shards()).hasSize(2);
        assertThat(deployment.shares()).containsExactly(0.6, 0.4);
        float[][] tensors = tensors(deployment.workers().size(), 30_000, 2);
        float[][] expected = flat(tensors);

        float[][] planned = copy(tensors);
        try (InProcessPlanCluster cluster = InProcessPlanCluster.deploy(deployment, 0, 1, PEER_TIMEOUT)) {
            float[] poisoned = planned[0].clone();
            poisoned[29_000] = Float.NaN;       // in the second shard: the first must not be sent either
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> cluster.worker(0).allReduce(poisoned))
                .isInstanceOf(org.inagg.InvalidTensorException.class)
                .hasMessageContaining("element 29000").hasMessageContaining("Nothing of this tensor was sent");
            cluster.allReduce(planned);
            long[] boundaries = cluster.worker(0).boundaries(30_000);
            assertThat(boundaries[1] % 64).as("shards end on whole packets").isZero();
            assertThat((double)boundaries[1] / 30_000).isCloseTo(0.6, org.assertj.core.data.Offset.offset(0.01));
            for (String ps : cluster.serverIds()) {
                assertThat(cluster.serverCounter(ps, ServerCounter.COMPLETED)).as(ps).isPositive();
            }
        }
        for (int w = 0; w < planned.length; w++) {
            assertThat(planned[w]).as("worker %d", w).containsExactly(expected[w]);
        }
    }

    @Test
    @Timeout(120)
    void shouldServeWorkersThePlanSendsStraightToThePs() {
        InaPlan plan = gridPlan();
        String moved = plan.switchJobTables().entrySet().stream()
            .filter(e -> e.getValue().getFirst().contributors().size() >= 2).findFirst().orElseThrow().getKey();
        String worker = plan.switchJobTables().get(moved).getFirst().contributors().getFirst();
        InaPlan direct = moveToPs(plan, moved, worker);
        PlanDeployment deployment = PlanDeployment.of(direct, SETTINGS);
        int index = deployment.workers().indexOf(worker);
        assertThat(deployment.workerShards(index).getFirst().sendTo()).isEqualTo(deployment.serverPeers().get("PS"));

        float[][] tensors = tensors(8, 5_000, 3);
        float[][] expected = flat(tensors);
        float[][] planned = copy(tensors);
        try (InProcessPlanCluster cluster = InProcessPlanCluster.deploy(deployment, 0.02, 3, PEER_TIMEOUT)) {
            cluster.allReduce(planned);
            assertThat(cluster.serverCounter("PS", ServerCounter.JOINS)).isPositive();
            assertThat(cluster.serverCounter("PS", ServerCounter.RAW_MERGED)).isPositive();
        }
        for (int w = 0; w < 8; w++) {
            assertThat(planned[w]).as("worker %d", w).containsExactly(expected[w]);
        }
    }

    @Test
    void shouldTurnEachMulticastTreeIntoAGroupReplicatingToItsPortsAtEverySwitchOnIt() {
        InaPlan.MulticastTreeConfig tree = new InaPlan.MulticastTreeConfig("PS", List.of("W1", "W2"),
            Map.of("S1", List.of(1, 2, 5), "S3", List.of(0)));
        InaPlan base = gridPlan();
        InaPlan plan = new InaPlan(base.schema(), base.topology(), base.algorithm(), base.rateGbps(),
            base.lpBoundGbps(), base.split(), base.workers(), base.switchJobTables(), List.of(tree),
            base.violationsAtLpRate());
        PlanDeployment deployment = PlanDeployment.of(plan, SETTINGS);

        assertThat(deployment.multicastCommands("S1", 100, 3))
            .containsExactly("mc_mgrp_create 100", "mc_node_create 0 1 2 5", "mc_node_associate 100 3");
        assertThat(deployment.multicastCommands("S3", 100, 0))
            .containsExactly("mc_mgrp_create 100", "mc_node_create 0 0", "mc_node_associate 100 0");
        assertThat(deployment.multicastCommands("S2", 100, 0)).as("not on the tree").isEmpty();
        assertThatIllegalArgumentException().isThrownBy(() -> deployment.multicastCommands("S1", 65536, 0))
            .withMessageContaining("leave 1..65535");
    }

    @Test
    void shouldWriteTheGridPlansSwitchTablesAsV1modelUpstreamJobsOnTheTopologysPorts() {
        org.inagg.control.topology.Topology topology = Topologies.gridExample();
        PlanDeployment deployment = PlanDeployment.of(gridPlan(), SETTINGS);

        Map<String, org.inagg.p4.control.JobTable> tables = deployment.p4JobTables(topology);

        assertThat(tables.keySet()).containsExactlyInAnyOrderElementsOf(deployment.switchPeers().keySet());
        for (Map.Entry<String, org.inagg.p4.control.JobTable> table : tables.entrySet()) {
            List<String> commands = table.getValue().simpleSwitchCommands();
            PlanDeployment.SwitchRow row = deployment.switchRows(table.getKey()).getFirst();
            int local = row.upstream().localWorkers().length;
            // set_upstream_job <job> => workers slots slot_base lanes contributors server_port words...
            assertThat(commands).filteredOn(c -> c.contains("set_upstream_job")).singleElement().asString()
                .startsWith("table_add InaggIngress.job_table InaggIngress.set_upstream_job 1 => 8 16 0 64 " + local
                    + " ");
            assertThat(commands).filteredOn(c -> c.contains("worker_source")).hasSize(local);
            for (int w : row.upstream().localWorkers()) {
                String worker = deployment.workers().get(w);
                int node = topology.index(worker);
                assertThat(commands).contains("table_add InaggIngress.worker_source InaggIngress.source_ok 1 " + w
                    + " " + org.inagg.p4.control.WorkerEndpoint.formatIpv4(PlanDeployment.ipv4(node)) + " 40000 =>");
            }
            assertThat(commands).filteredOn(c -> c.contains("server_endpoint")).singleElement().asString()
                .endsWith(org.inagg.p4.control.WorkerEndpoint.formatIpv4(PlanDeployment.ipv4(topology.index("PS")))
                    + " 47000");
        }
        assertThatIllegalArgumentException().isThrownBy(() -> deployment.p4JobTables(Topologies.inartExample()))
            .withMessageContaining("topology 'inart-example'");
    }

    @Test
    void shouldNameWhatIsInconsistentInABadPlan() {
        InaPlan plan = gridPlan();
        String sw = plan.switchJobTables().keySet().iterator().next();
        InaPlan.SwitchJobEntry row = plan.switchJobTables().get(sw).getFirst();

        InaPlan unknownPs = withTable(plan, sw, new InaPlan.SwitchJobEntry(row.jobId(), "PS9",
            row.expectedContributors(), row.contributors(), row.upstreamPort(), row.upstreamPath()));
        assertThatIllegalArgumentException().isThrownBy(() -> PlanDeployment.of(unknownPs, SETTINGS))
            .withMessageContaining("sends to PS 'PS9', which has no share");

        List<String> stranger = new ArrayList<>(row.contributors());
        stranger.set(0, "W99");
        InaPlan unknownWorker = withTable(plan, sw, new InaPlan.SwitchJobEntry(row.jobId(), row.ps(),
            row.expectedContributors(), stranger, row.upstreamPort(), row.upstreamPath()));
        assertThatIllegalArgumentException().isThrownBy(() -> PlanDeployment.of(unknownWorker, SETTINGS))
            .withMessageContaining("contributor 'W99', which is not a worker of the plan");

        List<String> fewer = row.contributors().subList(1, row.contributors().size());
        InaPlan missing = withTable(plan, sw, new InaPlan.SwitchJobEntry(row.jobId(), row.ps(), fewer.size(), fewer,
            row.upstreamPort(), row.upstreamPath()));
        assertThatIllegalArgumentException().isThrownBy(() -> PlanDeployment.of(missing, SETTINGS))
            .withMessageContaining("is aggregated at '" + sw + "'").withMessageContaining("no row for it");

        InaPlan wrongSchema = new InaPlan("inagg-plan/0", plan.topology(), plan.algorithm(), plan.rateGbps(),
            plan.lpBoundGbps(), plan.split(), plan.workers(), plan.switchJobTables(), plan.multicastTrees(),
            plan.violationsAtLpRate());
        assertThatIllegalArgumentException().isThrownBy(() -> PlanDeployment.of(wrongSchema, SETTINGS))
            .withMessageContaining("schema");
    }

    private static InaPlan withTable(InaPlan plan, String sw, InaPlan.SwitchJobEntry row) {
        Map<String, List<InaPlan.SwitchJobEntry>> tables = new java.util.LinkedHashMap<>(plan.switchJobTables());
        tables.put(sw, List.of(row));
        return new InaPlan(plan.schema(), plan.topology(), plan.algorithm(), plan.rateGbps(), plan.lpBoundGbps(),
            plan.split(), plan.workers(), tables, plan.multicastTrees(), plan.violationsAtLpRate());
    }

    /** The plan with {@code worker} taken off {@code sw} and sent straight to the PS. */
    private static InaPlan moveToPs(InaPlan plan, String sw, String worker) {
        InaPlan.SwitchJobEntry row = plan.switchJobTables().get(sw).getFirst();
        List<String> rest = new ArrayList<>(row.contributors());
        rest.remove(worker);
        InaPlan tables = withTable(plan, sw, new InaPlan.SwitchJobEntry(row.jobId(), row.ps(), rest.size(), rest,
            row.upstreamPort(), row.upstreamPath()));
        List<InaPlan.WorkerRoute> routes = new ArrayList<>();
        for (InaPlan.WorkerRoute route : plan.workers()) {
            if (!route.worker().equals(worker)) {
                routes.add(route);
                continue;
            }
            InaPlan.Share share = route.shares().getFirst();
            routes.add(new InaPlan.WorkerRoute(worker, List.of(new InaPlan.Share(share.ps(), share.share(), share.ps(),
                null, List.of(worker, share.ps())))));
        }
        return new InaPlan(plan.schema(), plan.topology(), plan.algorithm(), plan.rateGbps(), plan.lpBoundGbps(),
            plan.split(), routes, tables.switchJobTables(), plan.multicastTrees(), plan.violationsAtLpRate());
    }

    private static float[][] flat(float[][] tensors) {
        float[][] result = copy(tensors);
        try (InProcessPlanCluster cluster = InProcessPlanCluster.flat(tensors.length, SETTINGS, 0, 1, PEER_TIMEOUT)) {
            cluster.allReduce(result);
        }
        return result;
    }

    private static float[][] tensors(int workers, int elements, long seed) {
        Random random = new Random(seed);
        float[][] tensors = new float[workers][elements];
        for (float[] tensor : tensors) {
            for (int k = 0; k < elements; k++) {
                tensor[k] = (float)(random.nextGaussian() * Math.scalb(1.0, k % 17 - 8));
            }
        }
        return tensors;
    }

    private static float[][] copy(float[][] tensors) {
        float[][] copy = new float[tensors.length][];
        for (int w = 0; w < tensors.length; w++) {
            copy[w] = tensors[w].clone();
        }
        return copy;
    }
}
