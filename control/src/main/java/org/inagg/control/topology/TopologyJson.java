package org.inagg.control.topology;

import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
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
 * unlimited, backgroundGbps 0. Unknown fields are rejected so that a typo does not silently change a plan, and so are
 * a field given twice in one object, a field that does not apply to the node's kind (aggregation fields on a
 * non-switch, ingressGbps on a non-PS) and a number written as text.
 */
public final class TopologyJson {

    /** A key given twice in one object is an error, not "the last one wins" (fuzzing finding, docs/fuzzing.md). */
    private static final ObjectMapper MAPPER = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT)
        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

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
            // A field that means nothing for the node's kind is a mistake (fuzzing finding, docs/fuzzing.md).
            if (kind != NodeKind.SWITCH) {
                forbid(node, kind, "aggregationCapacityGbps", "aggregatorSlots");
            }
            if (kind != NodeKind.PARAMETER_SERVER) {
                forbid(node, kind, "ingressGbps");
            }
            builder.node(new Node(id, kind,
                number(node, "aggregationCapacityGbps", 0),
                integer(node, "aggregatorSlots"),
                number(node, "ingressGbps", Double.POSITIVE_INFINITY)));
        }
        for (JsonNode link : root.get("links")) {
            allowOnly(link, "a", "b", "bandwidthGbps", "backgroundGbps");
            if (!link.has("bandwidthGbps")) {
                throw new IllegalArgumentException("link without bandwidthGbps: " + link);
            }
            builder.link(requireText(link, "a"), requireText(link, "b"), number(link, "bandwidthGbps", 0),
                number(link, "backgroundGbps", 0));
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

    /** A number field, or {@code absent}; text such as "9" or "nine" is refused rather than read as 9 or 0. */
    private static double number(JsonNode node, String field, double absent) {
        JsonNode value = node.get(field);
        if (value == null) {
            return absent;
        }
        if (!value.isNumber()) {
            throw new IllegalArgumentException("field \"" + field + "\" must be a number in " + node);
        }
        // + 0.0 turns -0.0 into 0.0, which the writer leaves out like any zero (fuzzing finding, docs/fuzzing.md).
        return value.asDouble() + 0.0;
    }

    private static long integer(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null) {
            return 0;
        }
        if (!value.isIntegralNumber() || !value.canConvertToLong()) {
            throw new IllegalArgumentException("field \"" + field + "\" must be an integer in " + node);
        }
        return value.asLong();
    }

    private static void forbid(JsonNode node, NodeKind kind, String... fields) {
        for (String field : fields) {
            if (node.has(field)) {
                throw new IllegalArgumentException("field \"" + field + "\" does not apply to a "
                    + kind.name().toLowerCase(Locale.ROOT) + " node: " + node);
            }
        }
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
