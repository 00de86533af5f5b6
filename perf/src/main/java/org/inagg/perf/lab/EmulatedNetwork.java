package org.inagg.perf.lab;

import java.util.List;

import org.inagg.perf.peers.Placement;

/**
 * An emulated network on this machine that ranks can be placed on, one per host: a one-switch cluster
 * ({@link EmulatedCluster}) or a leaf-spine fabric ({@link LeafSpineFabric}). Closing it kills what runs in its
 * namespaces and deletes them.
 */
public interface EmulatedNetwork extends AutoCloseable
{
    /** Rank r on host r + 1, a switch (or parameter server) where {@link Placement#switchExec()} says. */
    Placement placement();

    int hosts();

    /** Host n's (1-based) link, for people: "100 Mbit/s", "40 Mbit/s under leaf 2". */
    String linkOf(int host);

    /** One line: hosts, links, MTU. */
    String describe();

    /** Its namespaces that still exist (none after {@link #close()}). */
    List<String> remainingNamespaces();

    @Override
    void close();
}
