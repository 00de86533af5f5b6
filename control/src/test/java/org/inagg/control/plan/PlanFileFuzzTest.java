package org.inagg.control.plan;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.inagg.control.deploy.PlanDeployment;
import org.inagg.control.topology.Topologies;
import org.inagg.control.topology.Topology;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fuzzes the plan file as {@code inagg-control deploy --plan FILE} reads it (docs/fuzzing.md): {@link PlanJson#read},
 * then {@link PlanDeployment#of}, the deployment's summary, its bmv2 job tables against the grid example topology and
 * its multicast commands. Invariants: a bad file fails with an {@link IllegalArgumentException} that has a message
 * (what the CLI prints), never with another exception; a plan it accepts writes back and reads again as the same plan.
 * Seeds: real plans of the planners, {@code src/test/resources/org/inagg/control/plan/PlanFileFuzzTestInputs/}.
 */
class PlanFileFuzzTest {

    private static final Topology GRID = Topologies.gridExample();

    @FuzzTest(maxDuration = "10s")
    void shouldRejectABadPlanFileWithAMessageAndDeployAGoodOne(byte[] file) {
        String json = new String(file, StandardCharsets.UTF_8);
        InaPlan plan;
        try {
            plan = PlanJson.read(json);
        } catch (IllegalArgumentException e) {
            assertThat(e.getMessage()).isNotBlank();
            return;
        }
        assertThat(PlanJson.read(PlanJson.write(plan))).as("write then read").isEqualTo(plan);
        try {
            PlanDeployment deployment = PlanDeployment.of(plan, PlanDeployment.Settings.DEFAULT);
            assertThat(deployment.toString()).isNotEmpty();
            Set<String> nodes = new TreeSet<>();
            plan.multicastTrees().forEach(tree -> nodes.addAll(tree.ports().keySet()));
            for (String node : nodes) {
                List<String> commands = deployment.multicastCommands(node, 1000, 0);
                assertThat(commands).doesNotContainNull();
            }
            deployment.p4JobTables(GRID).values().forEach(table -> table.simpleSwitchCommands());
        } catch (IllegalArgumentException e) {
            assertThat(e.getMessage()).isNotBlank();
        }
    }
}
