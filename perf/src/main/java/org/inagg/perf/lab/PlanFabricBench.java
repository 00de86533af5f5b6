package org.inagg.perf.lab;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

import org.inagg.control.aggregation.RoutingScheme;
import org.inagg.control.deploy.PlanLoad;
import org.inagg.control.grid.GridPlanner;
import org.inagg.control.plan.InaPlan;
import org.inagg.control.plan.PlanJson;
import org.inagg.control.topology.Topology;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.perf.peers.LinkBounds;
import org.inagg.perf.peers.PeerResult;
import org.inagg.perf.peers.PeerRun;

/**
 * The planners' strategies on a {@link TopologyFabric} of their own topology: for each scheme (no INA, SwitchML's and
 * ATP's nearest switch, GRID) the planner's plan rounded to one path per worker ({@link GridPlanner#plan(Topology,
 * RoutingScheme)}), deployed by {@link PlanOnFabric} on a fresh fabric, its measured all-reduce time beside the time
 * the planner's rate predicts (the rate of the file's Gb/s times the fabric's scale) and the one the results'
 * direction allows ({@link PlanLoad}). Schemes run in rotating order over the rounds.
 */
public final class PlanFabricBench
{
    /**
     * What to run.
     *
     * @param topology   the planners' topology (one parameter server).
     * @param perGbps    the emulated rate of one Gb/s of the file.
     * @param shaping    both directions, or only toward the parameter server (the planners' direction).
     * @param schemes    in the order of the first round.
     * @param slots      every worker's window.
     * @param elements   float32 per worker.
     * @param iterations timed all-reduces.
     * @param warmup     untimed ones first.
     * @param rounds     runs of each scheme.
     * @param timeoutS   one run's limit.
     * @param workDir    logs.
     * @param jvmOptions extra options of every child JVM.
     * @param workerOptions extra options of every {@code inagg worker}.
     */
    public record Settings(Topology topology, LinkRate perGbps, TopologyFabric.Shaping shaping,
                           List<RoutingScheme> schemes, int slots, int elements, int iterations, int warmup, int rounds,
                           long timeoutS, Path workDir, List<String> jvmOptions,
                           List<String> workerOptions)
    {
        public Settings
        {
            if (schemes.isEmpty() || slots < 1 || slots >= org.inagg.wire.InaggHeader.MAX_SLOTS || rounds < 1 || elements < 1 || iterations < 1 || warmup < 0 || timeoutS < 1)
            {
                throw new IllegalArgumentException("needs a scheme, slots in range, positive rounds, elements, iterations and timeout");
            }
            schemes = List.copyOf(schemes);
            jvmOptions = List.copyOf(jvmOptions);
            workerOptions = List.copyOf(workerOptions);
        }
    }

    /** One scheme's plan and what its routes allow. */
    public record Planned(RoutingScheme scheme, InaPlan plan, PlanLoad load)
    {
    }

    private PlanFabricBench()
    {
    }

    /** Each scheme's plan on the topology (one path per worker), and its loads. */
    public static List<Planned> plan(final Topology topology, final List<RoutingScheme> schemes)
    {
        if (topology.parameterServers().length != 1)
        {
            throw new IllegalArgumentException("topology " + topology.name() + " has " + topology.parameterServers()
                .length + " parameter servers; the fabric runs the plans of one (GRID's setting)");
        }
        final GridPlanner planner = GridPlanner.forSmallNetworks();
        final List<Planned> planned = new ArrayList<>();
        for (final RoutingScheme scheme : schemes)
        {
            final InaPlan plan = PlanJson.plan(name(scheme), planner.plan(topology, scheme), List.of());
            planned.add(new Planned(scheme, plan, PlanLoad.of(topology, plan)));
        }
        return planned;
    }

    /** {@code no-ina}, {@code switchml}, {@code atp}, {@code grid}. */
    public static String name(final RoutingScheme scheme)
    {
        return scheme == RoutingScheme.ROUTE_SELECTION ? "grid" : scheme.name().toLowerCase(Locale.ROOT)
            .replace('_', '-');
    }

    /** The scheme named {@code no-ina}, {@code switchml}, {@code atp} or {@code grid}; the error lists them. */
    public static RoutingScheme scheme(final String name)
    {
        for (final RoutingScheme scheme : RoutingScheme.values())
        {
            if (name(scheme).equals(name))
            {
                return scheme;
            }
        }
        throw new IllegalArgumentException("unknown scheme '" + name + "': no-ina, switchml, atp or grid");
    }

    /** Seconds per all-reduce at {@code gbps} of the file per worker. */
    public static double boundSeconds(final Settings settings, final double gbps)
    {
        return LinkBounds.inaSeconds(4L * settings.elements(), SwitchJobConfig.DEFAULT_LANES,
            gbps * settings.perGbps().bitsPerSecond());
    }

    /**
     * Runs every scheme {@code rounds} times, each on a fresh fabric made by {@code fabrics}, and prints a table with
     * the load average before and after.
     *
     * @return whether every run measured.
     */
    public static boolean run(final Settings settings, final Supplier<TopologyFabric> fabrics,
        final Supplier<String> loadAverage, final PrintWriter out)
        throws InterruptedException
    {
        final List<Planned> planned = plan(settings.topology(), settings.schemes());
        for (final Planned p : planned)
        {
            out.printf(Locale.ROOT, "%s: rate %.6f Gb/s per worker (LP %.6f; %s), results' direction %.6f (%s); "
                    + "summed at %s%n", name(p.scheme()), p.load().upGbps(), p.plan().lpBoundGbps(), p.load().upLimit(),
                p.load().downGbps(), p.load().downLimit(), where(p.plan()));
        }
        out.flush();
        final Map<RoutingScheme, List<PeerResult>> results = new LinkedHashMap<>();
        final String loadBefore = loadAverage.get();
        boolean allOk = true;
        for (int round = 0; round < settings.rounds(); round++)
        {
            for (int k = 0; k < planned.size(); k++)
            {
                final Planned p = planned.get((k + round) % planned.size());
                final PeerResult result;
                try (TopologyFabric fabric = fabrics.get())
                {
                    result = PlanOnFabric.run(fabric, p.plan(), name(p.scheme()) + "-r" + round,
                        new PeerRun(p.plan().workers().size(), settings.elements(), settings.iterations(),
                            settings.warmup(), settings.timeoutS(), settings.workDir()), settings.slots(), settings.jvmOptions(),
                        settings.workerOptions());
                }
                allOk &= result.isMeasured();
                results.computeIfAbsent(p.scheme(), s -> new ArrayList<>()).add(result);
                out.printf(Locale.ROOT, "round %d %s: %s%n", round + 1, name(p.scheme()), result.isMeasured()
                    ? String.format(Locale.ROOT, "mean %.1f ms, p50 %.1f ms; %s", 1e3 * settings.elements()
                    / result.elementsPerSecond(), 1e3 * result.p50Seconds(), result.note()) : result.note());
                out.flush();
            }
        }
        out.printf(Locale.ROOT, "%n| scheme | planned Gb/s (file) | bound ms | results' bound ms | p50 ms (runs) | "
            + "of bound |%n|---|---:|---:|---:|---:|---:|%n");
        for (final Planned p : planned)
        {
            final double[] p50 = results.getOrDefault(p.scheme(), List.of()).stream().filter(PeerResult::isMeasured)
                .mapToDouble(r -> 1e3 * r.p50Seconds()).toArray();
            final double median = median(p50);
            final double bound = 1e3 * boundSeconds(settings, settings.shaping() == TopologyFabric.Shaping.BOTH
                ? p.load().rateGbps() : p.load().upGbps());
            out.printf(Locale.ROOT, "| %s | %.3f | %.1f | %.1f | %.1f (%s) | %.2f |%n", name(p.scheme()),
                p.load().upGbps(), 1e3 * boundSeconds(settings, p.load().upGbps()),
                1e3 * boundSeconds(settings, p.load().rateGbps()), median, Arrays.toString(p50), bound / median);
        }
        out.printf("load average before %s, after %s%n", loadBefore, loadAverage.get());
        out.flush();
        return allOk;
    }

    private static String where(final InaPlan plan)
    {
        final StringBuilder text = new StringBuilder();
        for (final InaPlan.WorkerRoute route : plan.workers())
        {
            text.append(text.isEmpty() ? "" : " ").append(route.worker()).append('@')
                .append(route.shares().getFirst().aggregateAt());
        }
        return text.toString();
    }

    /** The median, NaN of none. */
    static double median(final double[] values)
    {
        if (values.length == 0)
        {
            return Double.NaN;
        }
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted.length % 2 == 1 ? sorted[sorted.length / 2]
            : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    }
}
