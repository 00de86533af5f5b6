package org.inagg.control.topology;

import java.util.Arrays;

/** A route as the arcs it crosses, in order. Value semantics, so that paths can be map keys. */
public record Path(int[] arcs) {

    public static final Path EMPTY = new Path(new int[0]);

    public Path {
        arcs = arcs.clone();
    }

    public int length() {
        return arcs.length;
    }

    public int arc(int i) {
        return arcs[i];
    }

    /** The first {@code hops} arcs. */
    public Path prefix(int hops) {
        return new Path(Arrays.copyOfRange(arcs, 0, hops));
    }

    /** The arcs from position {@code from} on. */
    public Path suffix(int from) {
        return new Path(Arrays.copyOfRange(arcs, from, arcs.length));
    }

    public Path prepend(int arc) {
        int[] joined = new int[arcs.length + 1];
        joined[0] = arc;
        System.arraycopy(arcs, 0, joined, 1, arcs.length);
        return new Path(joined);
    }

    /** Node ids along the path, tail of the first arc first. */
    public String[] nodeIds(Topology topology) {
        if (arcs.length == 0) {
            return new String[0];
        }
        String[] ids = new String[arcs.length + 1];
        ids[0] = topology.node(topology.tail(arcs[0])).id();
        for (int i = 0; i < arcs.length; i++) {
            ids[i + 1] = topology.node(topology.head(arcs[i])).id();
        }
        return ids;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Path path && Arrays.equals(arcs, path.arcs);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(arcs);
    }

    @Override
    public String toString() {
        return Arrays.toString(arcs);
    }
}
