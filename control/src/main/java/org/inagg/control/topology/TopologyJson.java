package org.inagg.control.topology;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.Locale;

/**
 * Reads and writes the topology file format documented in {@code control/README.md}:
 * <pre>
 * { "name": "...",
 *   "nodes": [ {"id": "S1", "kind": "switch", "aggregationCapacityGbps": 9, "aggregatorSlots": 10000},
 *              {"id": "PS", "kind": "parameter_server", "ingressGbps": 9},
 *              {"id": "W1", "kind": "worker"} ],
 *   "links": [ {"a": "W1", "b": "S1", "bandwidthGbps": 3, "backgroundGbps": 0} ] }
 * </pre>
 * Optional fields default to: aggregationCapacityGbps 0 (not programmable), aggregatorSlots 0, ingressGbps
 * unlimited, backgroundGbps 0. Unknown fields are rejected so that a typo does not silently change a plan.
 */
public final class TopologyJson {

    private static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private TopologyJson() {
    }

    public static Topology read(java.nio.file.Path file) {
        try {
            return fromJson(MAPPER.readTree(Files.readString(file)));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read topology " + file, e);
        }
    }

    public static Topology parse(String json) {
        try {
            return fromJson(MAPPER.readTree(json));
        } catch (IOException e) {
            throw new IllegalArgumentException("malformed topology JSON: " + e.getMessage(), e);
        }
    }

    public static void write(Topology topology, java.nio.file.Path file) {
        try {
            Files.writeString(file, toJson(topology));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write topology " + file, e);
        }
    }

    public static String toJson(Topology topology) {
        ObjectNode root = MAPPER.createObjectNode();
        root.put("name", topology.name());
        ArrayNode nodes = root.putArray("nodes");
        for (Node node : topology.nodes()) {
            ObjectNode out = nodes.addObject();
            out.put("id", node.id());
            out.put("kind", node.kind().name().toLowerCase(Locale.ROOT));
            if (node.isSwitch()) {
                if (node.aggregationCapacityGbps() > 0) {
                    out.put("aggregationCapacityGbps", node.aggregationCapacityGbps());
                }
                if (node.aggregatorSlots() > 0) {
                    out.put("aggregatorSlots", node.aggregatorSlots());
                }
            }
            if (node.isParameterServer() && Double.isFinite(node.ingressGbps())) {
                out.put("ingressGbps", node.ingressGbps());
            }
        }
        ArrayNode links = root.putArray("links");
        for (Link link : topology.links()) {
            ObjectNode out = links.addObject();
            out.put("a", link.a());
            out.put("b", link.b());
            out.put("bandwidthGbps", link.bandwidthGbps());
            if (link.backgroundGbps() > 0) {
                out.put("backgroundGbps", link.backgroundGbps());
            }
        }
        try {
            return MAPPER.writeValueAsString(root);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Topology fromJson(JsonNode root) {
        TopologyBuilder builder = new TopologyBuilder(root.path("name").asText("topology"));
        requireArray(root, "nodes");
        requireArray(root, "links");
        for (JsonNode node : root.get("nodes")) {
            allowOnly(node, "id", "kind", "aggregationCapacityGbps", "aggregatorSlots", "ingressGbps");
            String id = requireText(node, "id");
            NodeKind kind = NodeKind.valueOf(requireText(node, "kind").toUpperCase(Locale.ROOT));
            builder.node(new Node(id, kind,
                node.path("aggregationCapacityGbps").asDouble(0),
                node.path("aggregatorSlots").asLong(0),
                node.has("ingressGbps") ? node.get("ingressGbps").asDouble() : Double.POSITIVE_INFINITY));
        }
        for (JsonNode link : root.get("links")) {
            allowOnly(link, "a", "b", "bandwidthGbps", "backgroundGbps");
            if (!link.has("bandwidthGbps")) {
                throw new IllegalArgumentException("link without bandwidthGbps: " + link);
            }
            builder.link(requireText(link, "a"), requireText(link, "b"), link.get("bandwidthGbps").asDouble(),
                link.path("backgroundGbps").asDouble(0));
        }
        return builder.build();
    }

    private static void requireArray(JsonNode root, String field) {
        if (!root.path(field).isArray()) {
            throw new IllegalArgumentException("topology needs an array \"" + field + "\"");
        }
    }

    private static String requireText(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || !value.isTextual()) {
            throw new IllegalArgumentException("missing text field \"" + field + "\" in " + node);
        }
        return value.asText();
    }

    private static void allowOnly(JsonNode node, String... fields) {
        var names = node.fieldNames();
        while (names.hasNext()) {
            String name = names.next();
            boolean known = false;
            for (String field : fields) {
                known |= field.equals(name);
            }
            if (!known) {
                throw new IllegalArgumentException("unknown field \"" + name + "\" in " + node);
            }
        }
    }
}
