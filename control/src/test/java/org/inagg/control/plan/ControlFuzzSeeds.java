package org.inagg.control.plan;

import org.inagg.control.aggregation.CandidateSettings;
import org.inagg.control.grid.GridPlanner;
import org.inagg.control.inart.InArtPlanner;
import org.inagg.control.multicast.LinkReservations;
import org.inagg.control.multicast.MulticastTree;
import org.inagg.control.multicast.PathAwareMulticast;
import org.inagg.control.topology.FabricSpec;
import org.inagg.control.topology.Topologies;
import org.inagg.control.topology.Topology;
import org.inagg.control.topology.TopologyJson;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Writes the committed seed corpora of the control module's fuzz tests (docs/fuzzing.md): plan files of the GRID and
 * InArt planners (one with a multicast tree) and the example topology files, as {@code plan} and {@code deploy} read
 * them. Run from the repository root with the control module's test class path:
 * {@code java -cp control/target/test-classes:control/target/classes:$(cat control/target/fuzz.classpath)
 * org.inagg.control.plan.ControlFuzzSeeds .}
 */
public final class ControlFuzzSeeds {

    private ControlFuzzSeeds() {
    }

    public static void main(String[] args) throws IOException {
        Path resources = Path.of(args.length > 0 ? args[0] : ".")
            .resolve("control/src/test/resources/org/inagg/control");
        Path plans = resources.resolve(
            "plan/PlanFileFuzzTestInputs/shouldRejectABadPlanFileWithAMessageAndDeployAGoodOne");
        Topology grid = Topologies.gridExample();
        MulticastTree tree = new PathAwareMulticast(new LinkReservations(grid))
            .reserve(grid.index("PS"), grid.workers(), 3);
        write(plans.resolve("grid-with-multicast.json"),
            PlanJson.write("grid", GridPlanner.forSmallNetworks().plan(grid), List.of(tree)));
        InArtPlanner inart = new InArtPlanner(new CandidateSettings(1, 8, 1), 16, 1);
        write(plans.resolve("inart-two-ps.json"), PlanJson.write(PlanJson.plan("inart",
            inart.planWithSplit(Topologies.inartExample(), new double[] {0.6, 0.4}).routing(), List.of())));

        Path topologies = resources.resolve(
            "topology/TopologyFileFuzzTestInputs/shouldRejectABadTopologyFileWithAMessageAndRoundTripAGoodOne");
        write(topologies.resolve("grid-example.json"), TopologyJson.toJson(grid));
        write(topologies.resolve("inart-example.json"), TopologyJson.toJson(Topologies.inartExample()));
        write(topologies.resolve("fat-tree-4.json"), TopologyJson.toJson(Topologies.fatTree(4, 4, 1,
            FabricSpec.uniform100G().withBackgroundLoadMax(0.3).withProgrammableFraction(0.5))));
    }

    private static void write(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }
}
