package org.inagg.perf.lab;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import org.inagg.perf.peers.Placement;

/**
 * An emulated cluster on one machine: H hosts in network namespaces, each on a link (a veth pair) to a switch
 * namespace, every link limited to its rate in both directions by a token bucket ({@code tc qdisc ... tbf}) on each end.
 * The switch namespace joins the links in a Linux bridge that owns the switch's address ({@link HostNetwork#SWITCH_IPV4}),
 * so a software switch bound there ({@code inagg switch}) and host-to-host traffic (gloo's TCP ring, Open MPI) both
 * cross the rate-limited links, as they would cross a top-of-rack switch's ports.
 *
 * <pre>
 *   host n (namespace inagg-TAG-hn)                switch namespace inagg-TAG-sw
 *   eth0 10.0.0.n  --tbf R_n-->  veth  <--tbf R_n--  portn --+
 *                                                            +-- br0 10.0.0.254 (inagg switch :9000)
 *   eth0 10.0.0.m  --tbf R_m-->  veth  <--tbf R_m--  portm --+
 * </pre>
 *
 * A token bucket shapes what leaves an interface, so the host end limits the host's sends and the switch end what
 * the switch (or another host, through the bridge) sends to it. Its burst is a millisecond at the rate (at least four
 * frames) and its queue {@code queueMs} milliseconds: a sender that outruns the link is held there, then dropped. No
 * delay or loss is added (tc netem is not available here; the protocol's own fault injection covers loss).
 * <p>
 * {@link #close()} (also on failure during creation) kills every process in the namespaces and deletes them, which
 * removes the veths and their qdiscs; a cluster whose creating process died outright is removed by the next one
 * ({@link HostNetwork#removeStale()}). Needs root or CAP_NET_ADMIN, iproute2 (ip, tc) and ethtool.
 */
public final class EmulatedCluster implements EmulatedNetwork
{
    /** UDP port of a switch run in the switch namespace. */
    public static final int SWITCH_UDP_PORT = 9000;
    /** Milliseconds of traffic a link's queue holds before it drops (default). */
    public static final int QUEUE_MS_DEFAULT = 20;

    private final HostNetwork network;
    private final Map<Integer, LinkRate> rates;
    private final int mtu;

    private EmulatedCluster(final HostNetwork network, final Map<Integer, LinkRate> rates, final int mtu)
    {
        this.network = network;
        this.rates = rates;
        this.mtu = mtu;
    }

    /**
     * Creates the cluster.
     *
     * @param hosts    2..{@link HostNetwork#MAX_HOSTS} hosts.
     * @param rate     every link's rate, unless {@code perHost} names the host (1-based).
     * @param perHost  host number to its link's rate.
     * @param mtu      the links' MTU, 576..9000 (the switch's default packets fill it, up to 363 lanes).
     * @param queueMs  milliseconds of traffic a link's queue holds, 1..1000.
     * @throws IllegalArgumentException for a bad argument, before anything is created.
     * @throws LabException naming the command that failed (everything made so far removed).
     */
    public static EmulatedCluster create(
        final int hosts, final LinkRate rate, final Map<Integer, LinkRate> perHost, final int mtu, final int queueMs)
    {
        if (hosts < 2 || hosts > HostNetwork.MAX_HOSTS)
        {
            throw new IllegalArgumentException("an emulated cluster has 2.." + HostNetwork.MAX_HOSTS + " hosts, not "
                + hosts);
        }
        for (final int host : perHost.keySet())
        {
            if (host < 1 || host > hosts)
            {
                throw new IllegalArgumentException("unknown host " + host + " in a per-host rate: the cluster's hosts "
                    + "are 1.." + hosts);
            }
        }
        checkLinks(mtu, queueMs);
        final Map<Integer, LinkRate> rates = new TreeMap<>();
        for (int h = 1; h <= hosts; h++)
        {
            rates.put(h, perHost.getOrDefault(h, rate));
        }
        final HostNetwork network = HostNetwork.create(hosts);
        try
        {
            network.bridgeSwitchPorts();
            final String sw = network.switchNamespace();
            Commands.run(List.of("ip", "-n", sw, "link", "set", "br0", "mtu", Integer.toString(mtu)));
            for (final HostNetwork.Host host : network.hosts())
            {
                final LinkRate linkRate = rates.get(host.number());
                final String port = network.switchPorts().get(host.port());
                Commands.run(List.of("ip", "-n", host.namespace(), "link", "set", "eth0", "mtu",
                    Integer.toString(mtu)));
                Commands.run(List.of("ip", "-n", sw, "link", "set", port, "mtu", Integer.toString(mtu)));
                shape(host.namespace(), "eth0", linkRate, mtu, queueMs);
                shape(sw, port, linkRate, mtu, queueMs);
            }
            return new EmulatedCluster(network, rates, mtu);
        }
        catch (final RuntimeException ex)
        {
            network.close();
            throw ex;
        }
    }

    /** The links' MTU (576..9000) and queue (1..1000 ms), checked before anything is created. */
    static void checkLinks(final int mtu, final int queueMs)
    {
        if (mtu < 576 || mtu > 9000)
        {
            throw new IllegalArgumentException("MTU " + mtu + " is outside 576..9000");
        }
        if (queueMs < 1 || queueMs > 1000)
        {
            throw new IllegalArgumentException("queue of " + queueMs + " ms is outside 1..1000 ms");
        }
    }

    static void shape(final String namespace, final String device, final LinkRate rate, final int mtu,
        final int queueMs)
    {
        final long burst = Math.max(4L * (mtu + 14), (long)(rate.bytesPerSecond() / 1000));
        final long limit = burst + (long)(rate.bytesPerSecond() * queueMs / 1000);
        final String failure = Commands.tryRun(List.of("ip", "netns", "exec", namespace, "tc", "qdisc", "replace",
            "dev", device, "root", "tbf", "rate", rate.tc(), "burst", Long.toString(burst), "limit",
            Long.toString(limit)));
        if (failure != null)
        {
            throw new LabException("cannot limit " + device + " in " + namespace + " to " + rate + " (tc from iproute2 "
                + "and the kernel's sch_tbf are needed): " + failure);
        }
    }

    public HostNetwork network()
    {
        return network;
    }

    @Override
    public int hosts()
    {
        return network.hosts().size();
    }

    @Override
    public String linkOf(final int host)
    {
        return rate(host).toString();
    }

    @Override
    public List<String> remainingNamespaces()
    {
        return network.remainingNamespaces();
    }

    /** Host n's link rate (1-based). */
    public LinkRate rate(final int host)
    {
        return rates.get(host);
    }

    /** The slowest link: what bounds a collective in which every host sends and receives alike. */
    public LinkRate slowestRate()
    {
        return rates.values().stream().min(java.util.Comparator.comparingLong(LinkRate::bitsPerSecond)).orElseThrow();
    }

    public int mtu()
    {
        return mtu;
    }

    /** What the qdiscs report (for tests and {@code --verbose}): one {@code tc qdisc show} per link end. */
    public String qdiscs()
    {
        final StringBuilder out = new StringBuilder();
        for (final HostNetwork.Host host : network.hosts())
        {
            out.append(Commands.output(List.of("ip", "netns", "exec", host.namespace(), "tc", "qdisc", "show", "dev",
                "eth0")));
            out.append(Commands.output(List.of("ip", "netns", "exec", network.switchNamespace(), "tc", "qdisc", "show",
                "dev", network.switchPorts().get(host.port()))));
        }
        return out.toString();
    }

    /** Rank r on host r + 1, the switch in the switch namespace at {@link HostNetwork#SWITCH_IPV4}. */
    @Override
    public Placement placement()
    {
        return new NamespacePlacement(network.hosts().stream().map(HostNetwork.Host::namespace).toList(),
            network.switchNamespace(), HostNetwork.SWITCH_IPV4, describe());
    }

    /** {@code 4 hosts, 100 Mbit/s links, MTU 1500}. */
    @Override
    public String describe()
    {
        final List<LinkRate> distinct = new ArrayList<>(rates.values().stream().distinct().toList());
        return String.format(Locale.ROOT, "%d hosts, %s links, MTU %d", hosts(), distinct.size() == 1
            ? distinct.get(0).toString() : "per-host " + rates, mtu);
    }

    /** Kills every process in the cluster's namespaces and deletes them; safe to call twice. */
    public void close()
    {
        network.close();
    }
}
