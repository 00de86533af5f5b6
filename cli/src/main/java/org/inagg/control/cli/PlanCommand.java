package org.inagg.control.cli;

import org.inagg.control.aggregation.CandidateSettings;
import org.inagg.control.aggregation.RandomizedRounding;
import org.inagg.control.inart.InArtPlanner;
import org.inagg.control.inart.InArtResult;
import org.inagg.control.inart.SplitMethod;
import org.inagg.control.multicast.LinkReservations;
import org.inagg.control.multicast.MulticastTree;
import org.inagg.control.multicast.PathAwareMulticast;
import org.inagg.control.plan.PlanJson;
import org.inagg.control.topology.Topology;
import org.inagg.control.topology.TopologyJson;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;

/** Topology file in, plan file out. */
@Command(name = "plan", mixinStandardHelpOptions = true,
    description = "Plans aggregation points, paths, switch job tables and multicast trees for a topology file.")
public final class PlanCommand implements Callable<Integer> {

    @Option(names = "--topology", required = true, description = "topology JSON file (format: control/README.md)")
    private Path topologyFile;

    @Option(names = "--out", required = true, description = "plan JSON file to write")
    private Path out;

    @Option(names = "--split", defaultValue = "EXACT_LP",
        description = "how to split the model among PSs: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE})")
    private SplitMethod split;

    @Option(names = "--fixed-split", split = ",",
        description = "skip phase 1 and use these shares, one per PS in file order, e.g. 0.6,0.4")
    private double[] fixedSplit;

    @Option(names = "--path-slack", defaultValue = "1", description = "extra hops a path may have (default 1)")
    private int slack;

    @Option(names = "--path-limit", defaultValue = "8", description = "paths per worker group and PS (default 8)")
    private int limit;

    @Option(names = "--draws", defaultValue = "64", description = "randomized rounding draws (default 64)")
    private int draws;

    @Option(names = "--seed", defaultValue = "1", description = "seed of every random choice (default 1)")
    private long seed;

    @Override
    public Integer call() throws Exception {
        Topology topology = TopologyJson.read(topologyFile);
        long started = System.nanoTime();
        InArtPlanner planner = new InArtPlanner(new CandidateSettings(slack, limit, seed), draws, seed);
        InArtResult result = fixedSplit != null ? planner.planWithSplit(topology, fixedSplit)
            : planner.plan(topology, split);
        RandomizedRounding.RoundingResult routing = result.routing();
        String algorithm = topology.parameterServers().length == 1 ? "grid" : "inart";
        List<MulticastTree> trees = new ArrayList<>();
        PathAwareMulticast multicast = new PathAwareMulticast(new LinkReservations(topology));
        for (int ps : topology.parameterServers()) {
            double demand = result.rateGbps() * result.split()[indexOf(topology.parameterServers(), ps)];
            MulticastTree tree = multicast.reserve(ps, topology.workers(), demand);
            trees.add(tree != null ? tree : multicast.reserveBestEffort(ps, topology.workers(), demand));
        }
        Files.writeString(out, PlanJson.write(algorithm, routing, trees));
        System.out.printf("%s on %s: %d workers, %d PS, split %s%n", algorithm, topology.name(),
            topology.workers().length, topology.parameterServers().length, Arrays.toString(result.split()));
        System.out.printf("rate %.6f Gb/s (LP bound %.6f, best draw %.6f), %d violations at the LP rate,"
                + " planned in %.3f s -> %s%n", result.rateGbps(), routing.fractional().rateGbps(),
            routing.bestDrawRate(), routing.violations().size(), (System.nanoTime() - started) / 1e9, out);
        return 0;
    }

    private static int indexOf(int[] values, int value) {
        for (int i = 0; i < values.length; i++) {
            if (values[i] == value) {
                return i;
            }
        }
        return -1;
    }
}
