package org.inagg.control.sim;

import org.inagg.control.aggregation.AggregationGroup;
import org.inagg.control.aggregation.AggregationProblem;
import org.inagg.control.aggregation.IntegralRouting;
import org.inagg.control.aggregation.RouteOption;
import org.inagg.control.topology.Topology;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Plays one gradient push of a plan through the flow-level simulator. Resources: every arc, every switch's
 * aggregation capacity, every PS's ingress. Units: each share sent straight to a PS is a flow; each active
 * aggregation group is one unit holding its members' paths (one coefficient per member crossing an arc), the
 * switch (one per member) and its stream to the PS, all at the group's rate.
 */
public final class PlanSimulation {

    private PlanSimulation() {
    }

    /** Seconds until the PSs hold the whole aggregated gradient of {@code modelGigabits}. */
    public static double pushSeconds(IntegralRouting routing, double modelGigabits) {
        AggregationProblem problem = routing.problem();
        Topology topology = problem.topology();
        int arcs = topology.arcCount();
        int switches = topology.nodeCount();
        double[] capacity = new double[arcs + switches + problem.parameterServerCount()];
        for (int arc = 0; arc < arcs; arc++) {
            capacity[arc] = topology.arcCapacityGbps(arc);
        }
        for (int node = 0; node < switches; node++) {
            capacity[arcs + node] = Math.max(1e-12, topology.node(node).aggregationCapacityGbps());
        }
        for (int j = 0; j < problem.parameterServerCount(); j++) {
            double ingress = topology.node(problem.parameterServer(j)).ingressGbps();
            capacity[arcs + switches + j] = Double.isFinite(ingress) ? ingress : 1e18;
        }
        List<FlowUnit> units = new ArrayList<>();
        Map<Integer, Map<Integer, Double>> groupUse = new LinkedHashMap<>();
        for (int i = 0; i < routing.workerCount(); i++) {
            int worker = routing.worker(i);
            for (int j = 0; j < problem.parameterServerCount(); j++) {
                int choice = routing.choice(i, j);
                if (choice < 0) {
                    continue;
                }
                RouteOption option = problem.options().get(choice);
                double volume = routing.split()[j] * modelGigabits;
                if (option.isDirect()) {
                    Map<Integer, Double> use = new LinkedHashMap<>();
                    use.merge(topology.uplink(worker), 1.0, Double::sum);
                    for (int arc : option.fromAccess().arcs()) {
                        use.merge(arc, 1.0, Double::sum);
                    }
                    use.merge(arcs + switches + j, 1.0, Double::sum);
                    units.add(toUnit("direct", use, volume));
                } else {
                    AggregationGroup group = problem.groups().get(option.groupId());
                    Map<Integer, Double> use = groupUse.computeIfAbsent(group.id(), k -> {
                        Map<Integer, Double> stream = new LinkedHashMap<>();
                        for (int arc : group.upstream().arcs()) {
                            stream.merge(arc, 1.0, Double::sum);
                        }
                        stream.merge(arcs + switches + group.psSlot(), 1.0, Double::sum);
                        return stream;
                    });
                    use.merge(topology.uplink(worker), 1.0, Double::sum);
                    for (int arc : option.fromAccess().arcs()) {
                        use.merge(arc, 1.0, Double::sum);
                    }
                    use.merge(arcs + group.aggregationSwitch(), 1.0, Double::sum);
                }
            }
        }
        for (var entry : groupUse.entrySet()) {
            AggregationGroup group = problem.groups().get(entry.getKey());
            units.add(toUnit("group" + group.id(), entry.getValue(), routing.split()[group.psSlot()] * modelGigabits));
        }
        return FlowSimulator.makespan(capacity, units);
    }

    private static FlowUnit toUnit(String name, Map<Integer, Double> use, double volume) {
        int[] resources = new int[use.size()];
        double[] coefficients = new double[use.size()];
        int k = 0;
        for (var entry : use.entrySet()) {
            resources[k] = entry.getKey();
            coefficients[k] = entry.getValue();
            k++;
        }
        return new FlowUnit(name, resources, coefficients, volume);
    }
}
