package org.inagg.perf.lab;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Hosts in network namespaces, each joined by a veth pair to a switch namespace: the wiring of a one-switch testbed on
 * one machine, for a software P4 target (bmv2) that takes the switch-side interfaces as its ports.
 *
 * <pre>
 *  namespace inagg-TAG-h1            namespace inagg-TAG-sw                namespace inagg-TAG-h2
 *  eth0 10.0.0.1 02:00:00:00:00:01 ── port1   simple_switch   port2 ── eth0 10.0.0.2 02:00:00:00:00:02
 *  (static neighbours: the switch     (-i 1@port1 -i 2@port2 ...,        ...
 *   10.0.0.254 and every other host)   Thrift on this namespace's lo)
 * </pre>
 *
 * Host n has MAC 02:00:00:00:00:nn and IPv4 10.0.0.n on its {@code eth0}, switch port n. The P4 program answers no
 * ARP, so every host gets permanent neighbour entries for the switch ({@link #SWITCH_IPV4}) and for every other host.
 * TX checksum offload is off on every veth end (the kernel would otherwise leave UDP checksums to a NIC that does not
 * exist and simple_switch forwards frames as captured) and IPv6 is off (no router solicitations on the ports).
 * <p>
 * Namespaces carry the creating process's pid ({@code inagg-<pid><letter>-...}): {@link #removeStale()} deletes those
 * of processes that are gone (a lab killed outright), and {@link #close()} kills whatever runs in this lab's
 * namespaces and deletes them (which deletes the veth pairs). Needs root or CAP_NET_ADMIN, iproute2 and ethtool.
 */
public final class HostNetwork implements AutoCloseable
{
    public static final String SWITCH_MAC = "02:00:00:00:00:fe";
    public static final String SWITCH_IPV4 = "10.0.0.254";
    /** Most hosts: their MAC's last byte and address's last octet stay below the switch's. */
    public static final int MAX_HOSTS = 200;
    static final String PREFIX = "inagg-";
    private static final Pattern LAB_NAMESPACE = Pattern.compile("^" + PREFIX + "(\\d+)([a-z]+)-\\S+");
    private static final AtomicInteger LABS = new AtomicInteger();

    /** One host: its namespace, addresses and switch port. */
    public record Host(int number, String namespace, String mac, String ipv4)
    {
        /** The switch port the host is wired to. */
        public int port()
        {
            return number;
        }

        /** The prefix that runs a command inside the host's namespace. */
        public List<String> exec()
        {
            return List.of("ip", "netns", "exec", namespace);
        }
    }

    private final LabNamespaces namespaces;
    private final String switchNamespace;
    private final List<Host> hosts;

    private HostNetwork(final String tag, final int hostCount)
    {
        this.namespaces = new LabNamespaces(tag);
        this.switchNamespace = namespaces.name("sw");
        final List<Host> list = new ArrayList<>();
        for (int n = 1; n <= hostCount; n++)
        {
            list.add(new Host(n, namespaces.name("h" + n), String.format("02:00:00:00:00:%02x", n), "10.0.0." + n));
        }
        this.hosts = List.copyOf(list);
    }

    /**
     * Creates the switch namespace and {@code hostCount} hosts wired to it.
     *
     * @throws LabException naming the step that failed (and undoing the steps before it).
     */
    public static HostNetwork create(final int hostCount)
    {
        if (hostCount < 1 || hostCount > MAX_HOSTS)
        {
            throw new IllegalArgumentException("hosts must be 1.." + MAX_HOSTS + ", not " + hostCount);
        }
        removeStale();
        final HostNetwork network = new HostNetwork(newTag(), hostCount);
        try
        {
            network.build();
            return network;
        }
        catch (final RuntimeException ex)
        {
            network.close();
            throw ex;
        }
    }

    private void build()
    {
        final String failure = Commands.tryRun(List.of("ip", "netns", "add", switchNamespace));
        if (failure != null)
        {
            throw new LabException("cannot create network namespaces (needs root or CAP_NET_ADMIN, and iproute2): "
                + failure);
        }
        namespaces.made(switchNamespace);
        Commands.run(List.of("ip", "-n", switchNamespace, "link", "set", "lo", "up"));
        sysctl(switchNamespace, "net.ipv6.conf.all.disable_ipv6=1");
        sysctl(switchNamespace, "net.ipv6.conf.default.disable_ipv6=1");
        for (final Host host : hosts)
        {
            Commands.run(List.of("ip", "netns", "add", host.namespace()));
            namespaces.made(host.namespace());
            sysctl(host.namespace(), "net.ipv6.conf.all.disable_ipv6=1");
            sysctl(host.namespace(), "net.ipv6.conf.default.disable_ipv6=1");
            final String port = switchInterface(host);
            Commands.run(List.of("ip", "link", "add", port, "netns", switchNamespace, "type", "veth", "peer", "name",
                "eth0", "address", host.mac(), "netns", host.namespace()));
            checksumOffloadOff(switchNamespace, port);
            checksumOffloadOff(host.namespace(), "eth0");
            Commands.run(List.of("ip", "-n", switchNamespace, "link", "set", port, "up"));
            Commands.run(List.of("ip", "-n", host.namespace(), "addr", "add", host.ipv4() + "/24", "dev", "eth0"));
            Commands.run(List.of("ip", "-n", host.namespace(), "link", "set", "eth0", "up"));
            Commands.run(List.of("ip", "-n", host.namespace(), "link", "set", "lo", "up"));
            neighbour(host, SWITCH_IPV4, SWITCH_MAC);
            for (final Host other : hosts)
            {
                if (other != host)
                {
                    neighbour(host, other.ipv4(), other.mac());
                }
            }
        }
    }

    static void sysctl(final String namespace, final String setting)
    {
        Commands.tryRun(List.of("ip", "netns", "exec", namespace, "sysctl", "-q", "-w", setting)); // best effort
    }

    private static void checksumOffloadOff(final String namespace, final String device)
    {
        final String failure = Commands.tryRun(List.of("ip", "netns", "exec", namespace, "ethtool", "-K", device,
            "tx", "off"));
        if (failure != null)
        {
            throw new LabException("cannot turn TX checksum offload off on " + device + " (install ethtool, Debian "
                + "package ethtool: simple_switch forwards frames as captured, so the kernel must fill in UDP "
                + "checksums itself): " + failure);
        }
    }

    private static void neighbour(final Host host, final String ipv4, final String mac)
    {
        Commands.run(List.of("ip", "-n", host.namespace(), "neigh", "replace", ipv4, "lladdr", mac, "dev", "eth0",
            "nud", "permanent"));
    }

    /** A fresh lab tag: this process's pid and letters ({@link #removeStale()} knows labs by it). */
    static String newTag()
    {
        return ProcessHandle.current().pid() + letters(LABS.getAndIncrement());
    }

    private static String letters(final int n)
    {
        return n < 26 ? String.valueOf((char)('a' + n)) : letters(n / 26 - 1) + (char)('a' + n % 26);
    }

    /** The lab's tag: the creating process's pid and a letter. */
    public String tag()
    {
        return namespaces.tag();
    }

    public String switchNamespace()
    {
        return switchNamespace;
    }

    /** The prefix that runs a command in the switch's namespace. */
    public List<String> switchExec()
    {
        return List.of("ip", "netns", "exec", switchNamespace);
    }

    public List<Host> hosts()
    {
        return hosts;
    }

    public Host host(final int number)
    {
        return hosts.get(number - 1);
    }

    /** Switch port number -> the interface in the switch namespace ({@code simple_switch -i N@IF}). */
    public Map<Integer, String> switchPorts()
    {
        final Map<Integer, String> ports = new TreeMap<>();
        for (final Host host : hosts)
        {
            ports.put(host.port(), switchInterface(host));
        }
        return ports;
    }

    /**
     * Joins the switch ports into a Linux bridge that owns the switch's MAC and address, so a switch running as an
     * ordinary process in the switch namespace ({@code inagg switch}) serves the same hosts over the same veths as
     * the P4 target did. Stop the P4 target first: it would still see every frame on its ports.
     */
    public void bridgeSwitchPorts()
    {
        Commands.run(List.of("ip", "-n", switchNamespace, "link", "add", "br0", "address", SWITCH_MAC, "type",
            "bridge"));
        for (final String port : switchPorts().values())
        {
            Commands.run(List.of("ip", "-n", switchNamespace, "link", "set", port, "master", "br0"));
        }
        Commands.run(List.of("ip", "-n", switchNamespace, "addr", "add", SWITCH_IPV4 + "/24", "dev", "br0"));
        Commands.run(List.of("ip", "-n", switchNamespace, "link", "set", "br0", "up"));
    }

    private static String switchInterface(final Host host)
    {
        return "port" + host.number();
    }

    /** Kills every process still in the lab's namespaces and deletes them; safe to call twice. */
    @Override
    public void close()
    {
        namespaces.close();
    }

    /** Kills every process in the namespaces, then deletes them (with their veths and qdiscs). */
    static void deleteNamespaces(final List<String> names)
    {
        for (final String namespace : names)
        {
            for (final String pid : Commands.output(List.of("ip", "netns", "pids", namespace)).split("\\s+"))
            {
                if (!pid.isBlank())
                {
                    ProcessHandle.of(Long.parseLong(pid.strip())).ifPresent(ProcessHandle::destroyForcibly);
                }
            }
        }
        for (final String namespace : names)
        {
            Commands.tryRun(List.of("ip", "netns", "del", namespace));
        }
    }

    /** This lab's namespaces that still exist (for tests: none after {@link #close()}). */
    public List<String> remainingNamespaces()
    {
        return namespaces.remaining();
    }

    /** Every namespace on the machine, by name. */
    public static List<String> listNamespaces()
    {
        final List<String> names = new ArrayList<>();
        for (final String line : Commands.output(List.of("ip", "netns", "list")).split("\n"))
        {
            if (!line.isBlank())
            {
                names.add(line.strip().split("\\s+")[0]);
            }
        }
        return names;
    }

    /** Deletes the namespaces (and kills the processes in them) of labs whose creating process is gone. */
    public static int removeStale()
    {
        final List<String> stale = new ArrayList<>();
        for (final String name : listNamespaces())
        {
            final Matcher matcher = LAB_NAMESPACE.matcher(name);
            if (matcher.matches() && ProcessHandle.of(Long.parseLong(matcher.group(1))).isEmpty())
            {
                stale.add(name);
            }
        }
        deleteNamespaces(stale);
        return stale.size();
    }
}
