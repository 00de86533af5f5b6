package org.inagg.perf.lab;

import java.util.List;
import java.util.Map;

import org.inagg.perf.peers.Placement;

/**
 * Rank r in host namespace r + 1 at 10.0.0.(r+1), a switch in a namespace of its own at a given address: how an
 * emulated cluster and a leaf-spine fabric place a peer's processes.
 */
class NamespacePlacement implements Placement
{
    private final List<String> hostNamespaces;
    private final String switchNamespace;
    private final String switchAddress;
    private final String description;

    NamespacePlacement(final List<String> hostNamespaces, final String switchNamespace, final String switchAddress,
        final String description)
    {
        this.hostNamespaces = List.copyOf(hostNamespaces);
        this.switchNamespace = switchNamespace;
        this.switchAddress = switchAddress;
        this.description = description;
    }

    @Override
    public List<String> rankExec(final int rank)
    {
        return List.of("ip", "netns", "exec", hostNamespaces.get(checked(rank)));
    }

    @Override
    public String rankAddress(final int rank)
    {
        return "10.0.0." + (checked(rank) + 1);
    }

    @Override
    public List<String> switchExec()
    {
        return List.of("ip", "netns", "exec", switchNamespace);
    }

    @Override
    public String switchAddress()
    {
        return switchAddress;
    }

    @Override
    public boolean isLoopback()
    {
        return false;
    }

    /** gloo binds what the machine's host name resolves to unless told the hosts' interface. */
    @Override
    public Map<String, String> rankEnvironment()
    {
        return Map.of("GLOO_SOCKET_IFNAME", "eth0");
    }

    @Override
    public String describe()
    {
        return description;
    }

    /** {@code rank}, if a host holds it; else an error naming it and the host count (one rank per host). */
    final int checked(final int rank)
    {
        if (rank < 0 || rank >= hostNamespaces.size())
        {
            throw new IllegalArgumentException("rank " + rank + " has no host: the cluster has "
                + hostNamespaces.size() + " (one rank per host)");
        }
        return rank;
    }
}
