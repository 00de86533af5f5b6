package org.inagg.control.topology;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * Builders for standard fabrics and for the small examples of the papers. Hosts fill the host ports in order:
 * workers from the first port, parameter servers from the last ports backwards (one per pod or leaf, from the last
 * pod down), so that PSs and workers never share an edge switch unless the fabric is full.
 */
public final class Topologies {

    private Topologies() {
    }

    /**
     * The example of the GRID paper (ToN 2023): one PS and 8 workers, 3 Gb/s links, PS ingress 9 Gb/s, three
     * programmable switches of 9 Gb/s; W1-W4 on S1, W5-W6 on S2, W7-W8 and the PS on S3, and the triangle
     * S1-S3 (the paper's L1), S1-S2, S2-S3 (L3). The PS link is 9 Gb/s so that the PS ingress, not its link, is the
     * limit the paper states.
     */
    public static Topology gridExample() {
        TopologyBuilder builder = new TopologyBuilder("grid-example");
        for (int s = 1; s <= 3; s++) {
            builder.programmableSwitch("S" + s, 9, 10_000);
        }
        for (int w = 1; w <= 8; w++) {
            builder.worker("W" + w);
        }
        builder.parameterServer("PS", 9);
        builder.link("S1", "S3", 3).link("S1", "S2", 3).link("S2", "S3", 3);
        for (int w = 1; w <= 8; w++) {
            String access = w <= 4 ? "S1" : w <= 6 ? "S2" : "S3";
            builder.link("W" + w, access, 3);
        }
        builder.link("PS", "S3", 9);
        return builder.build();
    }

    /**
     * The example of the InArt paper (WebConf 2024) as we reconstruct it: the summary we have gives its parameters
     * (2 PSs, 6 workers, 2 programmable switches of capacity 6, PS capacity 4, links 6) but not its drawing.
     * W1-W3 hang off S1 and W4-W6 off S2; S1 and S2 are joined; PS1 hangs off S1 and PS2 off S2.
     * See docs/reproductions.md for what this gives and why.
     */
    public static Topology inartExample() {
        TopologyBuilder builder = new TopologyBuilder("inart-example");
        builder.programmableSwitch("S1", 6, 10_000).programmableSwitch("S2", 6, 10_000);
        for (int w = 1; w <= 6; w++) {
            builder.worker("W" + w);
        }
        builder.parameterServer("PS1", 4).parameterServer("PS2", 4);
        builder.link("S1", "S2", 6);
        for (int w = 1; w <= 6; w++) {
            builder.link("W" + w, w <= 3 ? "S1" : "S2", 6);
        }
        builder.link("PS1", "S1", 6).link("PS2", "S2", 6);
        return builder.build();
    }

    /**
     * A two-tier Clos: every leaf joins every spine. Hosts per leaf are as many as needed to place all hosts, at
     * least {@code minHostsPerLeaf}.
     */
    public static Topology spineLeaf(int spines, int leaves, int minHostsPerLeaf, int workers, int parameterServers,
                                     FabricSpec spec) {
        if (spines < 1 || leaves < 1) {
            throw new IllegalArgumentException("need at least one spine and one leaf");
        }
        int hostsPerLeaf = Math.max(minHostsPerLeaf, (workers + parameterServers + leaves - 1) / leaves);
        TopologyBuilder builder = new TopologyBuilder("spine-leaf-" + spines + "x" + leaves);
        List<String> switches = new ArrayList<>();
        for (int s = 0; s < spines; s++) {
            switches.add("spine" + s);
        }
        for (int l = 0; l < leaves; l++) {
            switches.add("leaf" + l);
        }
        addSwitches(builder, switches, spec);
        Random background = new Random(spec.seed() ^ 0x5DEECE66DL);
        for (int l = 0; l < leaves; l++) {
            for (int s = 0; s < spines; s++) {
                fabricLink(builder, "leaf" + l, "spine" + s, spec, background);
            }
        }
        List<String> hostPorts = new ArrayList<>();
        for (int l = 0; l < leaves; l++) {
            for (int h = 0; h < hostsPerLeaf; h++) {
                hostPorts.add("leaf" + l);
            }
        }
        placeHosts(builder, hostPorts, leaves, hostsPerLeaf, workers, parameterServers, spec);
        return builder.build();
    }

    /**
     * The k-ary fat-tree of Al-Fares et al.: k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores,
     * k^3/4 host ports. {@code workers + parameterServers} must fit into the host ports.
     */
    public static Topology fatTree(int k, int workers, int parameterServers, FabricSpec spec) {
        if (k < 2 || k % 2 != 0) {
            throw new IllegalArgumentException("k must be even and at least 2");
        }
        int half = k / 2;
        int hostPorts = k * half * half;
        if (workers + parameterServers > hostPorts) {
            throw new IllegalArgumentException(workers + parameterServers + " hosts do not fit a k=" + k
                + " fat-tree (" + hostPorts + " host ports)");
        }
        TopologyBuilder builder = new TopologyBuilder("fat-tree-k" + k);
        List<String> switches = new ArrayList<>();
        for (int c = 0; c < half * half; c++) {
            switches.add("core" + c);
        }
        for (int p = 0; p < k; p++) {
            for (int i = 0; i < half; i++) {
                switches.add("agg" + p + "_" + i);
            }
            for (int i = 0; i < half; i++) {
                switches.add("edge" + p + "_" + i);
            }
        }
        addSwitches(builder, switches, spec);
        Random background = new Random(spec.seed() ^ 0x5DEECE66DL);
        for (int p = 0; p < k; p++) {
            for (int a = 0; a < half; a++) {
                for (int e = 0; e < half; e++) {
                    fabricLink(builder, "edge" + p + "_" + e, "agg" + p + "_" + a, spec, background);
                }
                for (int c = 0; c < half; c++) {
                    fabricLink(builder, "agg" + p + "_" + a, "core" + (a * half + c), spec, background);
                }
            }
        }
        List<String> ports = new ArrayList<>();
        for (int p = 0; p < k; p++) {
            for (int e = 0; e < half; e++) {
                for (int h = 0; h < half; h++) {
                    ports.add("edge" + p + "_" + e);
                }
            }
        }
        placeHosts(builder, ports, k, half * half, workers, parameterServers, spec);
        return builder.build();
    }

    private static void addSwitches(TopologyBuilder builder, List<String> names, FabricSpec spec) {
        int programmable = (int) Math.round(spec.programmableFraction() * names.size());
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            order.add(i);
        }
        Collections.shuffle(order, new Random(spec.seed()));
        Set<Integer> chosen = new HashSet<>(order.subList(0, programmable));
        for (int i = 0; i < names.size(); i++) {
            if (chosen.contains(i)) {
                builder.programmableSwitch(names.get(i), spec.aggregationGbps(), spec.aggregatorSlots());
            } else {
                builder.plainSwitch(names.get(i));
            }
        }
    }

    private static void fabricLink(TopologyBuilder builder, String a, String b, FabricSpec spec, Random random) {
        double background = spec.backgroundLoadMax() == 0 ? 0
            : random.nextDouble() * spec.backgroundLoadMax() * spec.fabricGbps();
        builder.link(a, b, spec.fabricGbps(), background);
    }

    /**
     * Workers take host ports from the front; parameter servers take the first port of each group (pod or leaf)
     * from the last group backwards, so that several PSs land in different groups.
     */
    private static void placeHosts(TopologyBuilder builder, List<String> ports, int groups, int portsPerGroup,
                                   int workers, int parameterServers, FabricSpec spec) {
        boolean[] taken = new boolean[ports.size()];
        List<int[]> psPorts = new ArrayList<>();
        for (int p = 0; p < parameterServers; p++) {
            int group = groups - 1 - (p % groups);
            int port = group * portsPerGroup + portsPerGroup - 1 - p / groups;
            taken[port] = true;
            psPorts.add(new int[] {p, port});
        }
        for (int[] ps : psPorts) {
            String id = "PS" + ps[0];
            builder.parameterServer(id, spec.psIngressGbps());
            builder.link(id, ports.get(ps[1]), spec.hostGbps());
        }
        int next = 0;
        for (int w = 0; w < workers; w++) {
            while (taken[next]) {
                next++;
            }
            String id = "W" + w;
            builder.worker(id);
            builder.link(id, ports.get(next), spec.hostGbps());
            next++;
        }
    }
}
