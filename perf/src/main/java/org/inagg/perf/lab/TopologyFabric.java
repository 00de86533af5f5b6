package org.inagg.perf.lab;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.inagg.control.topology.Link;
import org.inagg.control.topology.Node;
import org.inagg.control.topology.Topology;
import org.inagg.control.topology.TopologyJson;
import org.inagg.perf.peers.Placement;

/**
 * A routed fabric built from a topology file in the planners' format ({@code control/README.md}): every node (worker,
 * parameter server, switch) a network namespace, every link of the file a veth pair limited both ways by tc tbf to its
 * {@code bandwidthGbps} (less its {@code backgroundGbps}) times a scale ({@code perGbps}: the emulated rate of one Gb/s
 * of the file), the switches IPv4 routers. Several switches and several paths between two hosts are allowed: unlike
 * {@link LeafSpineFabric}'s bridges, the fabric routes.
 * <ul>
 *   <li>Node i (file order) owns 10.1.hh.ll ((i + 1) in two bytes) on its loopback; link k's ends are 10.3.x.y/31
 *       ({@code 2k} at {@code a}, {@code 2k + 1} at {@code b}).</li>
 *   <li>A programmable switch's aggregation unit is a namespace of its own (its address 10.2.hh.ll) behind a port of
 *       the switch limited to its {@code aggregationCapacityGbps}, so that what a switch can sum is a link's rate; a
 *       software switch there stands for the switch's pipeline.</li>
 *   <li>A parameter server's {@code ingressGbps}, where below its link's rate, limits what the link carries to it.</li>
 *   <li>Routes: every node reaches every address over a path of fewest hops (ties: the lower link index), only
 *       switches forwarding; {@link #route} pins one flow (source and destination address) to a path of the file,
 *       as a plan's paths say, with a policy rule and a table of its own at every node on the way.</li>
 *   <li>{@link Shaping#TOWARD}: only the direction toward one node is limited (the planners' direction, gradients to
 *       a parameter server), the other left at the veth's speed.</li>
 * </ul>
 * Everything is removed on {@link #close()}, and by the next lab if this process dies outright.
 */
public final class TopologyFabric implements EmulatedNetwork
{
    /** Most nodes: 10.1.hh.ll with hh below 255. */
    public static final int MAX_NODES = 4_000;

    /** Which directions of a link are limited. */
    public enum Shaping
    {
        /** Both, as the file says (full duplex). */
        BOTH,
        /** Only toward the node given ({@code create}'s {@code towardNode}); links equally far from it both ways. */
        TOWARD
    }

    private final LabNamespaces namespaces;
    private final Topology topology;
    private final LinkRate perGbps;
    private final int mtu;
    private final List<String> workerIds = new ArrayList<>();
    private final Map<String, Integer> tables = new HashMap<>();
    private final FabricRoutes routes;

    private TopologyFabric(final String tag, final Topology topology, final LinkRate perGbps, final int mtu)
    {
        this.namespaces = new LabNamespaces(tag);
        this.topology = topology;
        this.perGbps = perGbps;
        this.mtu = mtu;
        this.routes = new FabricRoutes(topology);
        for (final int w : topology.workers())
        {
            workerIds.add(topology.node(w).id());
        }
    }

    /**
     * Builds the fabric.
     *
     * @param perGbps    the emulated rate of one Gb/s of the file (e.g. 10mbit: a 3 Gb/s link runs at 30 Mbit/s).
     * @param shaping    both directions, or only toward {@code towardNode}.
     * @param towardNode with {@link Shaping#TOWARD}: a node id of the file; else null.
     * @throws IllegalArgumentException for a bad topology, rate or node, naming it, before anything is created.
     * @throws LabException naming the command that failed (everything made so far removed).
     */
    public static TopologyFabric create(final Topology topology, final LinkRate perGbps, final int mtu,
        final int queueMs, final Shaping shaping, final String towardNode)
    {
        EmulatedCluster.checkLinks(mtu, queueMs);
        if (topology.nodeCount() > MAX_NODES)
        {
            throw new IllegalArgumentException("topology " + topology.name() + " has " + topology.nodeCount()
                + " nodes; the emulated fabric takes at most " + MAX_NODES);
        }
        if (topology.workers().length < 1)
        {
            throw new IllegalArgumentException("topology " + topology.name() + " has no worker");
        }
        if ((shaping == Shaping.TOWARD) != (towardNode != null))
        {
            throw new IllegalArgumentException("a node to shape toward goes with Shaping.TOWARD, and only with it");
        }
        if (towardNode != null && !topology.contains(towardNode))
        {
            throw new IllegalArgumentException("unknown node '" + towardNode + "' in topology " + topology.name());
        }
        for (int i = 0; i < topology.links().size(); i++)
        {
            rateOf(topology.links().get(i).availableGbps(), perGbps, "link " + topology.describeArc(2 * i));
        }
        for (final Node node : topology.nodes())
        {
            if (node.isProgrammable())
            {
                rateOf(node.aggregationCapacityGbps(), perGbps, "switch " + node.id() + "'s aggregation capacity");
            }
        }
        final FabricRoutes check = new FabricRoutes(topology);
        check.requireConnected();
        HostNetwork.removeStale();
        final TopologyFabric fabric = new TopologyFabric(HostNetwork.newTag(), topology, perGbps, mtu);
        try
        {
            fabric.build(queueMs, shaping == Shaping.TOWARD ? topology.index(towardNode) : -1);
            return fabric;
        }
        catch (final RuntimeException ex)
        {
            fabric.close();
            throw ex;
        }
    }

    /**
     * Reads a topology file.
     *
     * @throws IllegalArgumentException naming the file and what is wrong with it (unreadable, malformed, an unknown
     *                                  field or node).
     */
    public static Topology read(final Path file)
    {
        try
        {
            return TopologyJson.read(file);
        }
        catch (final UncheckedIOException | IllegalArgumentException ex)
        {
            final String why = ex instanceof UncheckedIOException io ? io.getCause().toString() : ex.getMessage();
            throw new IllegalArgumentException("topology file " + file + ": " + why, ex);
        }
    }

    /** The rate of {@code gbps} of the file; the error names {@code what}. */
    static LinkRate rateOf(final double gbps, final LinkRate perGbps, final String what)
    {
        final double bits = gbps * perGbps.bitsPerSecond();
        try
        {
            return new LinkRate(Math.round(bits));
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException(what + ": " + gbps + " Gb/s at " + perGbps + " per Gb/s is "
                + Math.round(bits) + " bit/s, outside what tc can emulate (" + ex.getMessage() + ")", ex);
        }
    }

    private void build(final int queueMs, final int toward)
    {
        final String failure = Commands.tryRun(List.of("ip", "netns", "add", nodeNamespace(0)));
        if (failure != null)
        {
            throw new LabException("cannot create network namespaces (needs root or CAP_NET_ADMIN, and iproute2): "
                + failure);
        }
        namespaces.made(nodeNamespace(0));
        configure(0);
        for (int i = 1; i < topology.nodeCount(); i++)
        {
            Commands.run(List.of("ip", "netns", "add", nodeNamespace(i)));
            namespaces.made(nodeNamespace(i));
            configure(i);
        }
        final int[] hops = toward < 0 ? null : routes.hopsTo(toward);
        for (int k = 0; k < topology.links().size(); k++)
        {
            final Link link = topology.links().get(k);
            final int a = topology.index(link.a());
            final int b = topology.index(link.b());
            Commands.run(List.of("ip", "link", "add", "l" + k, "netns", nodeNamespace(a), "type", "veth", "peer",
                "name", "l" + k, "netns", nodeNamespace(b)));
            final LinkRate rate = rateOf(link.availableGbps(), perGbps, "link " + link.a() + "-" + link.b());
            port(a, "l" + k, FabricRoutes.linkAddress(2 * k) + "/31",
                hops == null || hops[a] >= hops[b] ? ingressLimited(b, rate) : null, queueMs);
            port(b, "l" + k, FabricRoutes.linkAddress(2 * k + 1) + "/31",
                hops == null || hops[b] >= hops[a] ? ingressLimited(a, rate) : null, queueMs);
        }
        for (int i = 0; i < topology.nodeCount(); i++)
        {
            final Node node = topology.node(i);
            if (node.isProgrammable())
            {
                final String ns = aggregatorNamespace(i);
                Commands.run(List.of("ip", "netns", "add", ns));
                namespaces.made(ns);
                Commands.run(List.of("ip", "-n", ns, "link", "set", "lo", "up"));
                HostNetwork.sysctl(ns, "net.ipv6.conf.all.disable_ipv6=1");
                Commands.run(List.of("ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", "agg",
                    "netns", nodeNamespace(i)));
                final LinkRate rate = rateOf(node.aggregationCapacityGbps(), perGbps, "switch " + node.id());
                portOf(ns, "eth0", FabricRoutes.aggregatorLinkAddress(i, true) + "/31", rate, queueMs);
                portOf(nodeNamespace(i), "agg", FabricRoutes.aggregatorLinkAddress(i, false) + "/31", rate, queueMs);
                Commands.run(List.of("ip", "-n", ns, "addr", "add", FabricRoutes.aggregatorAddress(i) + "/32", "dev",
                    "lo"));
                Commands.run(List.of("ip", "-n", ns, "route", "add", "default", "via",
                    FabricRoutes.aggregatorLinkAddress(i, false), "src", FabricRoutes.aggregatorAddress(i)));
            }
        }
        for (int i = 0; i < topology.nodeCount(); i++)
        {
            batch(nodeNamespace(i), routes.routesOf(i));
        }
    }

    /** A parameter server's ingress, where below the link's rate, limits the link's direction into it. */
    private LinkRate ingressLimited(final int into, final LinkRate rate)
    {
        final Node node = topology.node(into);
        if (node.isParameterServer() && Double.isFinite(node.ingressGbps()))
        {
            final LinkRate ingress = rateOf(node.ingressGbps(), perGbps, "parameter server " + node.id());
            return ingress.bitsPerSecond() < rate.bitsPerSecond() ? ingress : rate;
        }
        return rate;
    }

    private void configure(final int node)
    {
        final String ns = nodeNamespace(node);
        Commands.run(List.of("ip", "-n", ns, "link", "set", "lo", "up"));
        Commands.run(List.of("ip", "-n", ns, "addr", "add", FabricRoutes.nodeAddress(node) + "/32", "dev", "lo"));
        HostNetwork.sysctl(ns, "net.ipv6.conf.all.disable_ipv6=1");
        HostNetwork.sysctl(ns, "net.ipv6.conf.default.disable_ipv6=1");
        // Pinned flows may come back another way than they left: no reverse-path filter.
        HostNetwork.sysctl(ns, "net.ipv4.conf.all.rp_filter=0");
        HostNetwork.sysctl(ns, "net.ipv4.conf.default.rp_filter=0");
        HostNetwork.sysctl(ns, "net.ipv4.ip_forward=" + (topology.node(node).isSwitch() ? 1 : 0));
    }

    private void port(final int node, final String dev, final String address, final LinkRate rate, final int queueMs)
    {
        portOf(nodeNamespace(node), dev, address, rate, queueMs);
    }

    private void portOf(final String ns, final String dev, final String address, final LinkRate rate,
        final int queueMs)
    {
        Commands.run(List.of("ip", "-n", ns, "addr", "add", address, "dev", dev));
        Commands.run(List.of("ip", "-n", ns, "link", "set", dev, "mtu", Integer.toString(mtu)));
        Commands.run(List.of("ip", "-n", ns, "link", "set", dev, "up"));
        if (rate != null)
        {
            EmulatedCluster.shape(ns, dev, rate, mtu, queueMs);
        }
    }

    /** Runs {@code ip} commands (one a line, without "ip") in a namespace at once. */
    private static void batch(final String ns, final List<String> lines)
    {
        if (lines.isEmpty())
        {
            return;
        }
        try
        {
            final Path file = Files.createTempFile("inagg-fabric-", ".ip");
            try
            {
                Files.writeString(file, String.join("\n", lines) + "\n");
                Commands.run(List.of("ip", "-n", ns, "-batch", file.toString()));
            }
            finally
            {
                Files.deleteIfExists(file);
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot write the routes of " + ns, ex);
        }
    }

    /**
     * Pins the packets from {@code source} to {@code destination} (addresses of this fabric) to {@code path}, node ids
     * of the file from the source's node to the destination's (the destination may be the last node's aggregation
     * unit).
     *
     * @throws IllegalArgumentException naming an unknown node or two nodes of the path that no link joins.
     */
    public void route(final String source, final String destination, final List<String> path)
    {
        final Map<Integer, String> lines = routes.pin(path);
        for (final Map.Entry<Integer, String> hop : lines.entrySet())
        {
            final String ns = nodeNamespace(hop.getKey());
            final int table = tables.merge(ns, 1, Integer::sum) + 99;
            batch(ns, List.of("rule add from " + source + "/32 to " + destination + "/32 lookup " + table
                + " priority 100", "route add " + destination + "/32 " + hop.getValue() + " table " + table));
        }
    }

    public Topology topology()
    {
        return topology;
    }

    /** The emulated rate of one Gb/s of the file. */
    public LinkRate perGbps()
    {
        return perGbps;
    }

    /** {@code ip netns exec NS} of a node of the file. */
    public List<String> exec(final String nodeId)
    {
        return List.of("ip", "netns", "exec", nodeNamespace(known(nodeId)));
    }

    /** A node's address. */
    public String address(final String nodeId)
    {
        return FabricRoutes.nodeAddress(known(nodeId));
    }

    /** {@code ip netns exec NS} of a programmable switch's aggregation unit. */
    public List<String> aggregatorExec(final String switchId)
    {
        return List.of("ip", "netns", "exec", aggregatorNamespace(programmable(switchId)));
    }

    /** A programmable switch's aggregation unit's address. */
    public String aggregatorAddress(final String switchId)
    {
        return FabricRoutes.aggregatorAddress(programmable(switchId));
    }

    private int known(final String nodeId)
    {
        if (!topology.contains(nodeId))
        {
            throw new IllegalArgumentException("unknown node '" + nodeId + "' in topology " + topology.name());
        }
        return topology.index(nodeId);
    }

    private int programmable(final String switchId)
    {
        final int index = known(switchId);
        if (!topology.node(index).isProgrammable())
        {
            throw new IllegalArgumentException("node '" + switchId + "' is not a programmable switch");
        }
        return index;
    }

    private String nodeNamespace(final int node)
    {
        return namespaces.name("n" + node);
    }

    private String aggregatorNamespace(final int node)
    {
        return namespaces.name("a" + node);
    }

    /** Workers in file order; rank r is the r-th. */
    public List<String> workers()
    {
        return List.copyOf(workerIds);
    }

    @Override
    public int hosts()
    {
        return workerIds.size();
    }

    @Override
    public String linkOf(final int host)
    {
        final int worker = topology.index(workerIds.get(host - 1));
        final StringBuilder text = new StringBuilder();
        for (final int arc : topology.arcsOut(worker))
        {
            text.append(text.isEmpty() ? "" : ", ").append(rateOf(topology.arcCapacityGbps(arc), perGbps, "link"))
                .append(" to ").append(topology.node(topology.head(arc)).id());
        }
        return text.toString();
    }

    /** {@code grid-example: 13 nodes, 14 links (1 Gb/s of the file = 10 Mbit/s), MTU 1500}. */
    @Override
    public String describe()
    {
        return String.format(Locale.ROOT, "%s: %d nodes, %d links (1 Gb/s of the file = %s), MTU %d", topology.name(),
            topology.nodeCount(), topology.links().size(), perGbps, mtu);
    }

    /**
     * Rank r on the r-th worker of the file at its address; the switch's place: the aggregation unit of the first
     * programmable switch (or the first parameter server when none is programmable).
     */
    @Override
    public Placement placement()
    {
        final List<String> hostNamespaces = new ArrayList<>();
        for (final String worker : workerIds)
        {
            hostNamespaces.add(nodeNamespace(topology.index(worker)));
        }
        int at = -1;
        for (final int s : topology.switches())
        {
            if (at < 0 && topology.node(s).isProgrammable())
            {
                at = s;
            }
        }
        final String ns;
        final String address;
        if (at >= 0)
        {
            ns = aggregatorNamespace(at);
            address = FabricRoutes.aggregatorAddress(at);
        }
        else
        {
            final int[] servers = topology.parameterServers();
            final int node = servers.length > 0 ? servers[0] : topology.workers()[0];
            ns = nodeNamespace(node);
            address = FabricRoutes.nodeAddress(node);
        }
        return new NamespacePlacement(hostNamespaces, ns, address, describe())
        {
            @Override
            public String rankAddress(final int rank)
            {
                return FabricRoutes.nodeAddress(topology.index(workerIds.get(checked(rank))));
            }
        };
    }

    @Override
    public List<String> remainingNamespaces()
    {
        return namespaces.remaining();
    }

    @Override
    public void close()
    {
        namespaces.close();
    }
}
