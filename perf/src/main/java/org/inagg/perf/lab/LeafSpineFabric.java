package org.inagg.perf.lab;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.inagg.perf.peers.FabricPlacement;

/**
 * A two-level fabric on one machine: H hosts under K leaf switches, the leaves under one spine, every link a veth pair
 * limited both ways by tc tbf (host links at one rate, leaf-to-spine uplinks at another: {@code K * hostRate / uplink}
 * is the fabric's oversubscription). Every namespace's links meet in a Linux bridge, so the fabric is one Ethernet
 * segment (10.0.0.0/24) whose every byte between two leaves crosses both leaves' uplinks, as through a real leaf-spine
 * fabric; each leaf's bridge owns the leaf's address (a first-level switch binds it) and the spine's owns
 * {@link HostNetwork#SWITCH_IPV4} (a one-level switch or a parameter server binds it).
 *
 * <pre>
 *   h1 10.0.0.1 --R_h-- +                        + --R_h-- h3 10.0.0.3
 *                       leaf 1 br0 10.0.0.201    leaf 2 br0 10.0.0.202
 *   h2 10.0.0.2 --R_h-- +          \              /          + --R_h-- h4 10.0.0.4
 *                                 R_u            R_u
 *                                   spine br0 10.0.0.254
 * </pre>
 *
 * Hosts are spread over the leaves in contiguous blocks (host n under leaf {@code (n-1)*K/H + 1}). Everything is
 * removed on {@link #close()}, and by the next lab if this process dies outright ({@link HostNetwork#removeStale()}).
 */
public final class LeafSpineFabric implements EmulatedNetwork
{
    /** Most hosts: their addresses stay below the leaves'. */
    public static final int MAX_HOSTS = 150;
    /** Most leaves: 10.0.0.201 .. 10.0.0.240. */
    public static final int MAX_LEAVES = 40;

    private final LabNamespaces namespaces;
    private final int hosts;
    private final int leaves;
    private final LinkRate hostRate;
    private final LinkRate uplinkRate;
    private final int mtu;

    private LeafSpineFabric(final String tag, final int hosts, final int leaves, final LinkRate hostRate,
        final LinkRate uplinkRate, final int mtu)
    {
        this.namespaces = new LabNamespaces(tag);
        this.hosts = hosts;
        this.leaves = leaves;
        this.hostRate = hostRate;
        this.uplinkRate = uplinkRate;
        this.mtu = mtu;
    }

    /**
     * Builds the fabric.
     *
     * @throws IllegalArgumentException for a bad argument, before anything is created.
     * @throws LabException naming the command that failed (everything made so far removed).
     */
    public static LeafSpineFabric create(final int hosts, final int leaves, final LinkRate hostRate,
        final LinkRate uplinkRate, final int mtu, final int queueMs)
    {
        if (leaves < 2 || leaves > MAX_LEAVES)
        {
            throw new IllegalArgumentException("a leaf-spine fabric has 2.." + MAX_LEAVES + " leaves, not " + leaves);
        }
        if (hosts < leaves || hosts > MAX_HOSTS)
        {
            throw new IllegalArgumentException("a leaf-spine fabric of " + leaves + " leaves has " + leaves + ".."
                + MAX_HOSTS + " hosts (one at least under each leaf), not " + hosts);
        }
        EmulatedCluster.checkLinks(mtu, queueMs);
        HostNetwork.removeStale();
        final LeafSpineFabric fabric = new LeafSpineFabric(HostNetwork.newTag(), hosts, leaves, hostRate, uplinkRate,
            mtu);
        try
        {
            fabric.build(queueMs);
            return fabric;
        }
        catch (final RuntimeException ex)
        {
            fabric.close();
            throw ex;
        }
    }

    private void build(final int queueMs)
    {
        final String failure = Commands.tryRun(List.of("ip", "netns", "add", spineNamespace()));
        if (failure != null)
        {
            throw new LabException("cannot create network namespaces (needs root or CAP_NET_ADMIN, and iproute2): "
                + failure);
        }
        namespaces.made(spineNamespace());
        configure(spineNamespace());
        bridge(spineNamespace(), HostNetwork.SWITCH_IPV4);
        for (int leaf = 1; leaf <= leaves; leaf++)
        {
            final String ns = leafNamespace(leaf);
            addNamespace(ns);
            bridge(ns, leafAddress(leaf));
            link(ns, "tospine", spineNamespace(), "leaf" + leaf, uplinkRate, queueMs);
        }
        for (int host = 1; host <= hosts; host++)
        {
            final String ns = hostNamespace(host);
            addNamespace(ns);
            Commands.run(List.of("ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", "h" + host,
                "netns", leafNamespace(leafOfHost(host))));
            Commands.run(List.of("ip", "-n", ns, "addr", "add", "10.0.0." + host + "/24", "dev", "eth0"));
            port(ns, "eth0", hostRate, queueMs);
            Commands.run(List.of("ip", "-n", leafNamespace(leafOfHost(host)), "link", "set", "h" + host, "master",
                "br0"));
            port(leafNamespace(leafOfHost(host)), "h" + host, hostRate, queueMs);
        }
    }

    private void addNamespace(final String ns)
    {
        Commands.run(List.of("ip", "netns", "add", ns));
        namespaces.made(ns);
        configure(ns);
    }

    /** Loopback up, IPv6 off (no router solicitations on the links). */
    private static void configure(final String ns)
    {
        Commands.run(List.of("ip", "-n", ns, "link", "set", "lo", "up"));
        HostNetwork.sysctl(ns, "net.ipv6.conf.all.disable_ipv6=1");
        HostNetwork.sysctl(ns, "net.ipv6.conf.default.disable_ipv6=1");
    }

    private void bridge(final String ns, final String address)
    {
        Commands.run(List.of("ip", "-n", ns, "link", "add", "br0", "type", "bridge"));
        Commands.run(List.of("ip", "-n", ns, "link", "set", "br0", "mtu", Integer.toString(mtu)));
        Commands.run(List.of("ip", "-n", ns, "addr", "add", address + "/24", "dev", "br0"));
        Commands.run(List.of("ip", "-n", ns, "link", "set", "br0", "up"));
    }

    /** A veth between two bridges, both ends limited. */
    private void link(final String nsA, final String devA, final String nsB, final String devB, final LinkRate rate,
        final int queueMs)
    {
        Commands.run(List.of("ip", "link", "add", devA, "netns", nsA, "type", "veth", "peer", "name", devB, "netns",
            nsB));
        Commands.run(List.of("ip", "-n", nsA, "link", "set", devA, "master", "br0"));
        Commands.run(List.of("ip", "-n", nsB, "link", "set", devB, "master", "br0"));
        port(nsA, devA, rate, queueMs);
        port(nsB, devB, rate, queueMs);
    }

    private void port(final String ns, final String dev, final LinkRate rate, final int queueMs)
    {
        Commands.run(List.of("ip", "-n", ns, "link", "set", dev, "mtu", Integer.toString(mtu)));
        Commands.run(List.of("ip", "-n", ns, "link", "set", dev, "up"));
        EmulatedCluster.shape(ns, dev, rate, mtu, queueMs);
    }

    private String spineNamespace()
    {
        return namespaces.name("sp");
    }

    private String leafNamespace(final int leaf)
    {
        return namespaces.name("l" + leaf);
    }

    private String hostNamespace(final int host)
    {
        return namespaces.name("h" + host);
    }

    /** Leaf (1-based) of host n (1-based). */
    public int leafOfHost(final int host)
    {
        return (host - 1) * leaves / hosts + 1;
    }

    public static String leafAddress(final int leaf)
    {
        return "10.0.0." + (200 + leaf);
    }

    @Override
    public int hosts()
    {
        return hosts;
    }

    @Override
    public String linkOf(final int host)
    {
        return hostRate + " under leaf " + leafOfHost(host);
    }

    /** {@code 4 hosts under 2 leaves, 100 Mbit/s host links, 100 Mbit/s uplinks (2:1), MTU 1500}. */
    @Override
    public String describe()
    {
        final double oversubscription = (double)hosts / leaves * hostRate.bitsPerSecond() / uplinkRate.bitsPerSecond();
        return String.format(Locale.ROOT, "%d hosts under %d leaves, %s host links, %s uplinks (%.3g:1), MTU %d",
            hosts, leaves, hostRate, uplinkRate, oversubscription, mtu);
    }

    /** Rank r on host r + 1; the spine for a one-level switch or a parameter server; each leaf for its switch. */
    @Override
    public FabricPlacement placement()
    {
        final List<String> hostNamespaces = new ArrayList<>();
        for (int host = 1; host <= hosts; host++)
        {
            hostNamespaces.add(hostNamespace(host));
        }
        return new Placed(hostNamespaces, spineNamespace(), describe());
    }

    /** The fabric's placement: the hosts' and the spine's as on one switch, and the leaves. */
    private final class Placed extends NamespacePlacement implements FabricPlacement
    {
        Placed(final List<String> hostNamespaces, final String spine, final String description)
        {
            super(hostNamespaces, spine, HostNetwork.SWITCH_IPV4, description);
        }

        @Override
        public int leaves()
        {
            return leaves;
        }

        @Override
        public int leafOf(final int rank)
        {
            return leafOfHost(checked(rank) + 1);
        }

        @Override
        public List<String> leafExec(final int leaf)
        {
            return List.of("ip", "netns", "exec", leafNamespace(leaf));
        }

        @Override
        public String leafAddress(final int leaf)
        {
            return LeafSpineFabric.leafAddress(leaf);
        }

        @Override
        public double hostBitsPerSecond()
        {
            return hostRate.bitsPerSecond();
        }

        @Override
        public double uplinkBitsPerSecond()
        {
            return uplinkRate.bitsPerSecond();
        }
    }

    /** This fabric's namespaces that still exist (for tests: none after {@link #close()}). */
    @Override
    public List<String> remainingNamespaces()
    {
        return namespaces.remaining();
    }

    /** Kills every process in the fabric's namespaces and deletes them; safe to call twice. */
    @Override
    public void close()
    {
        namespaces.close();
    }
}
