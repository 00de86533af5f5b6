package org.inagg.services.controller;

import java.net.InetSocketAddress;
import java.util.Set;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.inagg.fixedpoint.FixedPoint;
import org.inagg.services.http.HttpFailure;
import org.inagg.services.http.JsonHttp;
import org.inagg.wire.InaggHeader;

/**
 * A rank's registration, {@code POST /v1/registrations}: which job (by name), which rank of how many, what it sums,
 * and the UDP source its packets will come from (the switch admits only registered sources).
 *
 * @param name        the job's name (the launcher's run id or {@code --job-name}): 1..128 of {@code [A-Za-z0-9._:@-]}.
 * @param rank        0..world-1; becomes the worker id.
 * @param world       ranks in the job (W), 1..65535.
 * @param dtype       {@code float32} or {@code int32}.
 * @param elements    elements per tensor (1..2^31-1); all ranks of a job must agree.
 * @param source      the rank's UDP source (its socket is bound before it registers).
 * @param slots       slots asked for, or 0 for the controller's choice.
 * @param incarnation the registering process's own random id, or null: a POST repeated by the same incarnation is
 *                    answered again rather than taken for a restart.
 */
public record RegisterRequest(String name, int rank, int world, String dtype, long elements, InetSocketAddress source,
    int slots, String incarnation)
{
    static final Pattern NAME = Pattern.compile("[A-Za-z0-9._:@-]{1,128}");
    private static final Pattern INCARNATION = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    private static final Set<String> FIELDS = Set.of("name", "rank", "world", "dtype", "elements", "host", "port",
        "slots", "incarnation");

    /**
     * Parses and checks a request body.
     *
     * @throws HttpFailure (400) naming the field that is missing, mistyped or out of range.
     */
    public static RegisterRequest parse(final byte[] body)
    {
        final ObjectNode json = JsonHttp.parseObject(body);
        JsonHttp.onlyFields(json, FIELDS);
        final String name = requireName(JsonHttp.text(json, "name"));
        final int world = (int)JsonHttp.integer(json, "world", 1, FixedPoint.MAX_WORKERS);
        final int rank = (int)JsonHttp.integer(json, "rank", 0, world - 1);
        final String dtype = JsonHttp.text(json, "dtype");
        if (!dtype.equals("float32") && !dtype.equals("int32"))
        {
            throw HttpFailure.badRequest("field 'dtype' must be float32 or int32, got '" + dtype + "'");
        }
        final long elements = JsonHttp.integer(json, "elements", 1, Integer.MAX_VALUE);
        final String host = JsonHttp.text(json, "host");
        final int port = (int)JsonHttp.integer(json, "port", 1, 65535);
        if (!JsonHttp.isIpv4(host))
        {
            throw HttpFailure.badRequest("field 'host' must be an IPv4 address, got '"
                + (host.length() > 40 ? host.substring(0, 40) + "..." : host) + "'");
        }
        final InetSocketAddress source = new InetSocketAddress(host, port);
        if (source.getAddress().isAnyLocalAddress())
        {
            throw HttpFailure.badRequest("field 'host' must be the address the switch sees the rank's packets from,"
                + " not the wildcard " + host);
        }
        final int slots = (int)JsonHttp.integer(json, "slots", 1, InaggHeader.MAX_SLOTS - 1, 0);
        final String incarnation = JsonHttp.text(json, "incarnation", null);
        if (incarnation != null && !INCARNATION.matcher(incarnation).matches())
        {
            throw HttpFailure.badRequest("field 'incarnation' must be 1..64 of [A-Za-z0-9_-]");
        }
        return new RegisterRequest(name, rank, world, dtype, elements, source, slots, incarnation);
    }

    static String requireName(final String name)
    {
        if (!NAME.matcher(name).matches())
        {
            throw HttpFailure.badRequest("field 'name' must be 1..128 characters of [A-Za-z0-9._:@-], got '"
                + (name.length() > 40 ? name.substring(0, 40) + "..." : name) + "'");
        }
        return name;
    }
}
