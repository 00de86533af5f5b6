package org.inagg.services.switchcontrol;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.services.http.HttpFailure;
import org.inagg.services.http.JsonHttp;
import org.inagg.wire.InaggHeader;

/**
 * The body of {@code PUT /v1/jobs/{id}} on a switch's control port ({@link SwitchControlServer}), checked field by field
 * before anything reaches the switch:
 * <pre>
 * {"workers": 2, "slots": 16, "lanes": 256, "slotBase": 0, "session": 1,
 *  "sources": ["127.0.0.1:40001", "127.0.0.1:40002"],
 *  "joinCredentials": ["0123456789abcdef", "fedcba9876543210"]}
 * </pre>
 * {@code slotBase} may be left out (-1: the switch picks), and {@code joinCredentials} (each worker id's JOIN
 * credential, 16 hex digits, docs/security.md; the controller always sends them); every other field is required, and
 * no other is allowed.
 *
 * @param workers  1..65536.
 * @param slots    1..{@link InaggHeader#MAX_SLOTS} - 1.
 * @param lanes    lanes per packet, 1..{@link InaggHeader#MAX_ELEMENT_COUNT}.
 * @param slotBase -1 or 0..{@link Integer#MAX_VALUE}.
 * @param session  0..65535.
 * @param sources  one IPv4 {@code ip:port} per worker id, in worker id order.
 * @param joinCredentials one JOIN credential per worker id, or null when the body gives none.
 */
public record JobRequest(int workers, int slots, int lanes, int slotBase, int session, List<InetSocketAddress> sources,
    long[] joinCredentials)
{
    static final Set<String> FIELDS =
        Set.of("workers", "slots", "lanes", "slotBase", "session", "sources", "joinCredentials");

    public JobRequest
    {
        sources = List.copyOf(sources);
        joinCredentials = joinCredentials == null ? null : joinCredentials.clone();
    }

    /** A request without JOIN credentials. */
    public JobRequest(final int workers, final int slots, final int lanes, final int slotBase, final int session,
        final List<InetSocketAddress> sources)
    {
        this(workers, slots, lanes, slotBase, session, sources, null);
    }

    @Override
    public long[] joinCredentials()
    {
        return joinCredentials == null ? null : joinCredentials.clone();
    }

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof JobRequest r && workers == r.workers && slots == r.slots && lanes == r.lanes
            && slotBase == r.slotBase && session == r.session && sources.equals(r.sources)
            && java.util.Arrays.equals(joinCredentials, r.joinCredentials);
    }

    @Override
    public int hashCode()
    {
        return 31 * (31 * workers + session) + sources.hashCode();
    }

    @Override
    public String toString()
    {
        // The credentials are secrets: never in a log line or an exception.
        return "JobRequest[workers=" + workers + ", slots=" + slots + ", lanes=" + lanes + ", slotBase=" + slotBase
            + ", session=" + session + ", sources=" + sources + ", joinCredentials="
            + (joinCredentials == null ? "none" : "given") + "]";
    }

    /**
     * Parses a request body.
     *
     * @throws HttpFailure with status 400 and a message naming the field, for anything else than a body as above.
     */
    public static JobRequest parse(final byte[] body)
    {
        final ObjectNode object = JsonHttp.parseObject(body);
        JsonHttp.onlyFields(object, FIELDS);
        final int workers = (int)JsonHttp.integer(object, "workers", 1, 1 << 16);
        final int slots = (int)JsonHttp.integer(object, "slots", 1, InaggHeader.MAX_SLOTS - 1);
        final int lanes = (int)JsonHttp.integer(object, "lanes", 1, InaggHeader.MAX_ELEMENT_COUNT);
        final int slotBase = (int)JsonHttp.integer(object, "slotBase", -1, Integer.MAX_VALUE, -1);
        final int session = (int)JsonHttp.integer(object, "session", 0, 0xFFFF);
        final JsonNode sourcesNode = object.get("sources");
        if (!(sourcesNode instanceof ArrayNode sources) || sources.size() != workers)
        {
            throw HttpFailure.badRequest("field 'sources' must be an array of " + workers
                + " \"ip:port\" strings, one per worker id");
        }
        final List<InetSocketAddress> addresses = new ArrayList<>(workers);
        for (final JsonNode source : sources)
        {
            if (!source.isTextual())
            {
                throw HttpFailure.badRequest("field 'sources' must hold \"ip:port\" strings, got " + source);
            }
            addresses.add(JsonHttp.address("sources", source.asText()));
        }
        return new JobRequest(workers, slots, lanes, slotBase, session, addresses,
            joinCredentials(object.get("joinCredentials"), workers));
    }

    /** The optional {@code joinCredentials} field: null when absent, else W credentials of 16 hex digits each. */
    static long[] joinCredentials(final JsonNode field, final int workers)
    {
        if (field == null || field.isNull())
        {
            return null;
        }
        if (!(field instanceof ArrayNode array) || array.size() != workers)
        {
            throw HttpFailure.badRequest("field 'joinCredentials' must be an array of " + workers
                + " strings of 16 hex digits, one per worker id");
        }
        final long[] credentials = new long[workers];
        for (int w = 0; w < workers; w++)
        {
            final JsonNode credential = array.get(w);
            if (!credential.isTextual() || !credential.asText().matches("[0-9a-fA-F]{16}"))
            {
                throw HttpFailure.badRequest("field 'joinCredentials' must hold strings of 16 hex digits (worker " + w
                    + ")");
            }
            credentials[w] = Long.parseUnsignedLong(credential.asText(), 16);
        }
        return credentials;
    }

    /**
     * The job as the switch installs it, {@code peers[w]} being the transport peer of {@code sources().get(w)}.
     *
     * @throws IllegalArgumentException when the switch cannot take it (e.g. more workers than the fixed-point format
     *                                  allows); the control port answers 409 with the message.
     */
    public SwitchJobConfig config(final int jobId, final int[] peers)
    {
        return new SwitchJobConfig(jobId, workers, slots, lanes, slotBase, SwitchJobConfig.NO_MULTICAST_GROUP, peers,
            session, joinCredentials);
    }
}
