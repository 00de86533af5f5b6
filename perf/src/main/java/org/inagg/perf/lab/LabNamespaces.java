package org.inagg.perf.lab;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The network namespaces one lab made, named {@code inagg-<tag>-<role>} (the tag is the creating process's pid and
 * letters, so {@link HostNetwork#removeStale()} finds those of a process that died outright): created in order, deleted
 * in reverse with every process in them on {@link #close()}, which is safe to call twice.
 */
final class LabNamespaces implements AutoCloseable
{
    private final String tag;
    private final List<String> names = Collections.synchronizedList(new ArrayList<>());
    private boolean closed;

    LabNamespaces(final String tag)
    {
        this.tag = tag;
    }

    String tag()
    {
        return tag;
    }

    /** {@code inagg-<tag>-<role>}. */
    String name(final String role)
    {
        return HostNetwork.PREFIX + tag + "-" + role;
    }

    /** Remembers a namespace made (so that close deletes it). */
    void made(final String namespace)
    {
        names.add(namespace);
    }

    /** This lab's namespaces that still exist (none after {@link #close()}). */
    List<String> remaining()
    {
        return HostNetwork.listNamespaces().stream().filter(n -> n.startsWith(HostNetwork.PREFIX + tag + "-"))
            .toList();
    }

    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        final List<String> all = new ArrayList<>(names);
        Collections.reverse(all);
        HostNetwork.deleteNamespaces(all);
    }
}
