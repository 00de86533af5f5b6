package org.inagg.control.topology;

import java.util.ArrayList;
import java.util.List;

/** Collects nodes and links, then freezes them into a {@link Topology}. */
public final class TopologyBuilder {

    private final String name;
    private final List<Node> nodes = new ArrayList<>();
    private final List<Link> links = new ArrayList<>();

    public TopologyBuilder(String name) {
        this.name = name;
    }

    public TopologyBuilder node(Node node) {
        nodes.add(node);
        return this;
    }

    public TopologyBuilder worker(String id) {
        return node(Node.worker(id));
    }

    public TopologyBuilder parameterServer(String id, double ingressGbps) {
        return node(Node.parameterServer(id, ingressGbps));
    }

    public TopologyBuilder plainSwitch(String id) {
        return node(Node.plainSwitch(id));
    }

    public TopologyBuilder programmableSwitch(String id, double aggregationCapacityGbps, long aggregatorSlots) {
        return node(Node.programmableSwitch(id, aggregationCapacityGbps, aggregatorSlots));
    }

    public TopologyBuilder link(String a, String b, double bandwidthGbps) {
        links.add(new Link(a, b, bandwidthGbps));
        return this;
    }

    public TopologyBuilder link(String a, String b, double bandwidthGbps, double backgroundGbps) {
        links.add(new Link(a, b, bandwidthGbps, backgroundGbps));
        return this;
    }

    public Topology build() {
        return new Topology(name, nodes, links);
    }
}
