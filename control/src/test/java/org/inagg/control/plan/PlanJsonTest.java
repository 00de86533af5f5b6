package org.inagg.control.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.inagg.control.aggregation.RandomizedRounding;
import org.inagg.control.grid.GridPlanner;
import org.inagg.control.multicast.LinkReservations;
import org.inagg.control.multicast.MulticastTree;
import org.inagg.control.multicast.PathAwareMulticast;
import org.inagg.control.topology.Topologies;
import org.inagg.control.topology.Topology;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class PlanJsonTest {

    private final Topology example = Topologies.gridExample();

    private JsonNode plan() throws Exception {
        RandomizedRounding.RoundingResult result = GridPlanner.forSmallNetworks().plan(example);
        MulticastTree tree = new PathAwareMulticast(new LinkReservations(example))
            .reserve(example.index("PS"), example.workers(), 3);
        return new ObjectMapper().readTree(PlanJson.write("grid", result, List.of(tree)));
    }

    @Test
    void shouldTellEveryWorkerWhereItsGradientIsAggregatedAndHowToGetThere() throws Exception {
        JsonNode plan = plan();

        assertThat(plan.get("schema").asText()).isEqualTo(PlanJson.SCHEMA);
        assertThat(plan.get("rateGbps").asDouble()).isCloseTo(3.0, within(1e-6));
        assertThat(plan.get("workers")).hasSize(8);
        for (JsonNode worker : plan.get("workers")) {
            JsonNode share = worker.get("shares").get(0);
            JsonNode path = share.get("path");
            assertThat(path.get(0).asText()).isEqualTo(worker.get("worker").asText());
            assertThat(path.get(path.size() - 1).asText()).isEqualTo(share.get("aggregateAt").asText());
        }
    }

    @Test
    void shouldGiveEachSwitchAJobTableWhoseContributorsMatchTheWorkers() throws Exception {
        JsonNode plan = plan();
        Map<String, Integer> contributors = new HashMap<>();
        plan.get("switchJobTables").properties().forEach(table -> {
            for (JsonNode row : table.getValue()) {
                assertThat(row.get("contributors")).hasSize(row.get("expectedContributors").asInt());
                assertThat(row.get("upstreamPath").get(0).asText()).isEqualTo(table.getKey());
                contributors.merge(table.getKey(), row.get("expectedContributors").asInt(), Integer::sum);
            }
        });

        assertThat(contributors).containsEntry("S1", 3).containsEntry("S2", 3).containsEntry("S3", 2);
    }

    @Test
    void shouldDescribeMulticastTreesAsPortListsPerHop() throws Exception {
        JsonNode tree = plan().get("multicastTrees").get(0);

        assertThat(tree.get("source").asText()).isEqualTo("PS");
        assertThat(tree.get("receivers")).hasSize(8);
        assertThat(tree.get("ports").get("S3")).isNotEmpty();
    }

    @Test
    void shouldReadBackWhatItWrote() {
        RandomizedRounding.RoundingResult result = GridPlanner.forSmallNetworks().plan(example);
        InaPlan written = PlanJson.plan("grid", result, List.of());

        InaPlan read = PlanJson.read(PlanJson.write(written));

        assertThat(read).isEqualTo(written);
        assertThat(read.switchJobTables().get("S1").get(0).expectedContributors()).isEqualTo(3);
    }

    @Test
    void shouldRejectAnotherSchema() {
        String json = PlanJson.write(PlanJson.plan("grid", GridPlanner.forSmallNetworks().plan(example), List.of()))
            .replace(PlanJson.SCHEMA, "inagg-plan/0");

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> PlanJson.read(json))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("inagg-plan/0");
    }
}
