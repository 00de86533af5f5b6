package org.inagg.control.topology;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * An immutable network. Nodes are numbered in the order they were added; every link gives two directed arcs,
 * {@code 2*i} from {@code a} to {@code b} and {@code 2*i+1} back, so that the two directions of a full-duplex link are
 * separate resources. A switch's port number for an arc is the arc's position in {@link #arcsOut(int)}, which is the
 * order the links were added in: plans and multicast bitmaps use these port numbers.
 */
public final class Topology {

    private final String name;
    private final List<Node> nodes;
    private final List<Link> links;
    private final Map<String, Integer> indexById;
    private final int[][] arcsOut;
    private final int[] arcTail;
    private final int[] arcHead;

    public Topology(String name, List<Node> nodes, List<Link> links) {
        this.name = Objects.requireNonNull(name, "name");
        this.nodes = List.copyOf(nodes);
        this.links = List.copyOf(links);
        this.indexById = new HashMap<>();
        for (int i = 0; i < this.nodes.size(); i++) {
            if (indexById.put(this.nodes.get(i).id(), i) != null) {
                throw new IllegalArgumentException("duplicate node id " + this.nodes.get(i).id());
            }
        }
        this.arcTail = new int[2 * this.links.size()];
        this.arcHead = new int[2 * this.links.size()];
        List<List<Integer>> out = new ArrayList<>();
        for (int i = 0; i < this.nodes.size(); i++) {
            out.add(new ArrayList<>());
        }
        for (int i = 0; i < this.links.size(); i++) {
            Link link = this.links.get(i);
            int a = requireIndex(link.a());
            int b = requireIndex(link.b());
            arcTail[2 * i] = a;
            arcHead[2 * i] = b;
            arcTail[2 * i + 1] = b;
            arcHead[2 * i + 1] = a;
            out.get(a).add(2 * i);
            out.get(b).add(2 * i + 1);
        }
        this.arcsOut = new int[this.nodes.size()][];
        for (int i = 0; i < this.nodes.size(); i++) {
            arcsOut[i] = out.get(i).stream().mapToInt(Integer::intValue).toArray();
            Node node = this.nodes.get(i);
            if (!node.isSwitch() && arcsOut[i].length == 0) {
                throw new IllegalArgumentException("host " + node.id() + " has no link");
            }
        }
    }

    private int requireIndex(String id) {
        Integer index = indexById.get(id);
        if (index == null) {
            throw new IllegalArgumentException("link names unknown node " + id);
        }
        return index;
    }

    public String name() {
        return name;
    }

    public List<Node> nodes() {
        return nodes;
    }

    public List<Link> links() {
        return links;
    }

    public int nodeCount() {
        return nodes.size();
    }

    public int arcCount() {
        return arcTail.length;
    }

    public Node node(int index) {
        return nodes.get(index);
    }

    public int index(String id) {
        return requireIndex(id);
    }

    public boolean contains(String id) {
        return indexById.containsKey(id);
    }

    /** Arcs leaving the node, in port order. */
    public int[] arcsOut(int node) {
        return arcsOut[node];
    }

    public int tail(int arc) {
        return arcTail[arc];
    }

    public int head(int arc) {
        return arcHead[arc];
    }

    public Link linkOf(int arc) {
        return links.get(arc / 2);
    }

    /** Bandwidth of this direction left after background load. */
    public double arcCapacityGbps(int arc) {
        return linkOf(arc).availableGbps();
    }

    /** Port number of {@code arc} at its tail node. */
    public int port(int arc) {
        int[] out = arcsOut[arcTail[arc]];
        for (int p = 0; p < out.length; p++) {
            if (out[p] == arc) {
                return p;
            }
        }
        throw new IllegalStateException("arc " + arc + " not found at its tail");
    }

    /** The arc from {@code from} to {@code to}, or -1 when they are not adjacent. */
    public int arcBetween(int from, int to) {
        for (int arc : arcsOut[from]) {
            if (arcHead[arc] == to) {
                return arc;
            }
        }
        return -1;
    }

    /** For a host (worker or PS): the switch it hangs off. Hosts with several links use the first. */
    public int accessSwitch(int host) {
        return arcHead[arcsOut[host][0]];
    }

    /** For a host: its first uplink arc. */
    public int uplink(int host) {
        return arcsOut[host][0];
    }

    public int[] indicesOf(NodeKind kind) {
        int count = 0;
        for (Node node : nodes) {
            if (node.kind() == kind) {
                count++;
            }
        }
        int[] result = new int[count];
        int next = 0;
        for (int i = 0; i < nodes.size(); i++) {
            if (nodes.get(i).kind() == kind) {
                result[next++] = i;
            }
        }
        return result;
    }

    public int[] workers() {
        return indicesOf(NodeKind.WORKER);
    }

    public int[] parameterServers() {
        return indicesOf(NodeKind.PARAMETER_SERVER);
    }

    public int[] switches() {
        return indicesOf(NodeKind.SWITCH);
    }

    public String describeArc(int arc) {
        return nodes.get(arcTail[arc]).id() + "->" + nodes.get(arcHead[arc]).id();
    }

    @Override
    public String toString() {
        return "Topology[" + name + ": " + nodes.size() + " nodes, " + links.size() + " links, "
            + workers().length + " workers, " + parameterServers().length + " PS, switches "
            + Arrays.stream(switches()).filter(s -> nodes.get(s).isProgrammable()).count() + " programmable of "
            + switches().length + "]";
    }
}
