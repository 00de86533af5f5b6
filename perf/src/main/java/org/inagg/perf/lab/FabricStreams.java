package org.inagg.perf.lab;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.inagg.control.plan.InaPlan;
import org.inagg.control.topology.Node;
import org.inagg.control.topology.Topology;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.perf.peers.LinkBounds;

/**
 * What several jobs deployed at once by {@link PlanOnFabric} (results down the tree) put on each direction of each
 * link of a {@link TopologyFabric}, counted in streams of one job's tensor per all-reduce, and the least time that
 * allows. Per job (one parameter server, every share whole):
 * <ul>
 *   <li>each worker summed at a switch: its tensor up its path and into the switch's aggregation unit, the result out
 *       of the unit and down the path reversed (the switch multicasts it);</li>
 *   <li>each summing switch: one partial out of its unit and up its upstream path, one result down that path reversed
 *       and into the unit;</li>
 *   <li>a worker sending straight to its parameter server: its tensor up its path, the result down it.</li>
 * </ul>
 * A direction's rate is its link's {@code bandwidthGbps} less its background (into a parameter server no more than
 * its {@code ingressGbps}), an aggregation unit's port its switch's {@code aggregationCapacityGbps}, times the fabric's
 * scale, as {@link TopologyFabric} shapes them; a stream of S bytes takes {@link LinkBounds#inaSeconds} there, and
 * streams sharing a direction add up.
 */
public final class FabricStreams
{
    /** How a switch's aggregation unit is named in a hop. */
    static final String UNIT = "/agg";

    /**
     * One direction of a link.
     *
     * @param from node id (or {@code SWITCH/agg}: its aggregation unit).
     * @param to   node id (or {@code SWITCH/agg}).
     */
    public record Hop(String from, String to)
    {
        @Override
        public String toString()
        {
            return from + "->" + to;
        }
    }

    /**
     * The bound of a job, or of the fabric.
     *
     * @param hop     the busiest direction (the one needing the most time).
     * @param streams the streams on it, all jobs together.
     * @param seconds per all-reduce.
     */
    public record Bound(Hop hop, int streams, double seconds)
    {
    }

    private final Topology topology;
    private final LinkRate perGbps;
    /** Per hop, streams of each job (index = job). */
    private final Map<Hop, int[]> streams = new LinkedHashMap<>();
    private final int jobs;

    /** Counts the streams of {@code plans}, job i being {@code plans.get(i)}. */
    public FabricStreams(final Topology topology, final LinkRate perGbps, final List<InaPlan> plans)
    {
        this.topology = topology;
        this.perGbps = perGbps;
        this.jobs = plans.size();
        for (int j = 0; j < plans.size(); j++)
        {
            count(plans.get(j), j);
        }
    }

    private void count(final InaPlan plan, final int job)
    {
        for (final InaPlan.WorkerRoute route : plan.workers())
        {
            for (final InaPlan.Share share : route.shares())
            {
                final List<String> path = new ArrayList<>(share.path());
                if (plan.switchJobTables().containsKey(share.aggregateAt()))
                {
                    path.add(share.aggregateAt() + UNIT);
                }
                along(path, job);
                along(path.reversed(), job);
            }
        }
        for (final Map.Entry<String, List<InaPlan.SwitchJobEntry>> table : plan.switchJobTables().entrySet())
        {
            // one partial per switch and job (PlanOnFabric's first row's path), one result back
            final List<String> up = new ArrayList<>(List.of(table.getKey() + UNIT));
            up.addAll(table.getValue().getFirst().upstreamPath());
            along(up, job);
            along(up.reversed(), job);
        }
    }

    private void along(final List<String> path, final int job)
    {
        for (int i = 0; i + 1 < path.size(); i++)
        {
            final Hop hop = new Hop(path.get(i), path.get(i + 1));
            gbps(hop); // names a hop no link carries
            streams.computeIfAbsent(hop, h -> new int[jobs])[job]++;
        }
    }

    /** Streams of each job on {@code hop} (zeros where none). */
    public int[] streams(final Hop hop)
    {
        return streams.getOrDefault(hop, new int[jobs]).clone();
    }

    /** Every hop carrying something, in the order first counted. */
    public List<Hop> hops()
    {
        return List.copyOf(streams.keySet());
    }

    /**
     * The hop's rate in Gb/s of the file.
     *
     * @throws IllegalArgumentException when no link of the file joins its ends.
     */
    public double gbps(final Hop hop)
    {
        final boolean fromUnit = hop.from().endsWith(UNIT);
        final boolean toUnit = hop.to().endsWith(UNIT);
        if (fromUnit || toUnit)
        {
            final String sw = fromUnit ? hop.from() : hop.to();
            final String other = fromUnit ? hop.to() : hop.from();
            final String id = sw.substring(0, sw.length() - UNIT.length());
            if (!id.equals(other) || !topology.contains(id) || !topology.node(topology.index(id)).isProgrammable())
            {
                throw new IllegalArgumentException("no aggregation unit's port joins " + hop);
            }
            return topology.node(topology.index(id)).aggregationCapacityGbps();
        }
        final int from = known(hop.from());
        final int to = known(hop.to());
        final int arc = topology.arcBetween(from, to);
        if (arc < 0)
        {
            throw new IllegalArgumentException("no link joins " + hop.from() + " and " + hop.to() + " in topology "
                + topology.name());
        }
        final double link = topology.linkOf(arc).availableGbps();
        final Node into = topology.node(to);
        return into.isParameterServer() ? Math.min(link, into.ingressGbps()) : link;
    }

    private int known(final String id)
    {
        if (!topology.contains(id))
        {
            throw new IllegalArgumentException("unknown node '" + id + "' in topology " + topology.name());
        }
        return topology.index(id);
    }

    /** Seconds one all-reduce of {@code bytes} per stream needs on {@code hop}, every job's streams together. */
    public double seconds(final Hop hop, final long bytes)
    {
        int total = 0;
        for (final int n : streams(hop))
        {
            total += n;
        }
        return total * LinkBounds.inaSeconds(bytes, SwitchJobConfig.DEFAULT_LANES,
            gbps(hop) * perGbps.bitsPerSecond());
    }

    /** The busiest direction of those job {@code job} uses: what bounds it when all jobs run at once. */
    public Bound ofJob(final int job, final long bytes)
    {
        return busiest(job, bytes);
    }

    /** The busiest direction of the fabric. */
    public Bound ofFabric(final long bytes)
    {
        return busiest(-1, bytes);
    }

    private Bound busiest(final int job, final long bytes)
    {
        Bound best = null;
        for (final Map.Entry<Hop, int[]> entry : streams.entrySet())
        {
            if (job >= 0 && entry.getValue()[job] == 0)
            {
                continue;
            }
            final double seconds = seconds(entry.getKey(), bytes);
            if (best == null || seconds > best.seconds() + 1e-12)
            {
                int total = 0;
                for (final int n : entry.getValue())
                {
                    total += n;
                }
                best = new Bound(entry.getKey(), total, seconds);
            }
        }
        if (best == null)
        {
            throw new IllegalArgumentException("job " + job + " puts nothing on the fabric");
        }
        return best;
    }
}
