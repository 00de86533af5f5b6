package org.inagg.services.controller;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.services.http.ApiToken;
import org.inagg.services.http.JsonHttp;
import org.inagg.wire.InaggHeader;

/**
 * A software switch in another process, programmed through its control port ({@code inagg switch --control}, see
 * {@code org.inagg.services.switchcontrol.SwitchControlServer}): jobs PUT and DELETEd over HTTP+JSON, sources as
 * {@code ip:port}. Each call is bounded by the timeout; a switch that does not answer is a
 * {@link SwitchUnreachableException} naming its control URL.
 */
public final class SoftwareSwitchBackend implements SwitchBackend
{
    private static final System.Logger LOGGER = System.getLogger(SoftwareSwitchBackend.class.getName());
    /** The lanes read from the GET that found the switch's data address; null when that address was given. */
    private final Lanes firstLanes;
    private final URI control;
    private final Duration timeout;
    private final HttpClient client;
    private final ApiToken token;
    private final InetSocketAddress dataAddress;

    /**
     * @param control     the switch's control URL, e.g. {@code http://127.0.0.1:7071}.
     * @param dataAddress where workers send (null: as the switch reports it, a wildcard address replaced by the
     *                    control URL's host).
     * @param timeout     bound of each call.
     * @throws SwitchUnreachableException if {@code dataAddress} is null and the switch cannot be asked for it.
     */
    public SoftwareSwitchBackend(final URI control, final InetSocketAddress dataAddress, final Duration timeout)
    {
        this(control, dataAddress, timeout, ApiToken.NONE);
    }

    /** As above, presenting {@code token} to the switch's control port. */
    public SoftwareSwitchBackend(final URI control, final InetSocketAddress dataAddress, final Duration timeout,
        final ApiToken token)
    {
        this.control = control;
        this.timeout = timeout;
        this.token = token;
        this.client = HttpClient.newBuilder().connectTimeout(timeout).build();
        final JsonNode answer = dataAddress != null ? null : call("GET", "/v1/jobs", null);
        this.dataAddress = dataAddress != null ? dataAddress : dataAddressIn(answer);
        this.firstLanes = answer == null ? null : lanesIn(answer);
    }

    private InetSocketAddress dataAddressIn(final JsonNode answer)
    {
        final InetSocketAddress reported = JsonHttp.address("data", answer.path("data").asText());
        if (reported.getAddress().isAnyLocalAddress())
        {
            try
            {
                return new InetSocketAddress(InetAddress.getByName(control.getHost()), reported.getPort());
            }
            catch (final IOException ex)
            {
                throw new SwitchUnreachableException("switch " + control + ": cannot resolve " + control.getHost(), ex);
            }
        }
        return reported;
    }

    @Override
    public String describe()
    {
        return "software switch " + (dataAddress == null ? "" : JsonHttp.format(dataAddress) + " ") + "(control "
            + control + ")";
    }

    @Override
    public InetSocketAddress dataAddress()
    {
        return dataAddress;
    }

    /**
     * The switch's {@code defaultLanes} (what fills its interface's MTU, up to 363), read once; the P4 programs' 256
     * when the switch does not say (an older switch), reports a number out of range (with a warning) or cannot be
     * asked now (with a warning).
     */
    @Override
    public Lanes defaultLanes()
    {
        if (firstLanes != null)
        {
            return firstLanes;
        }
        try
        {
            return lanesIn(call("GET", "/v1/jobs", null));
        }
        catch (final RuntimeException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, () -> "controller: cannot ask " + describe() + " for its packets' "
                + "lanes (" + ex.getMessage() + "); jobs get " + SwitchJobConfig.DEFAULT_LANES + " lanes");
            return new Lanes(SwitchJobConfig.DEFAULT_LANES, "the P4 programs' packets: the switch could not be asked "
                + "at start");
        }
    }

    private Lanes lanesIn(final JsonNode answer)
    {
        if (!answer.has("defaultLanes"))
        {
            return new Lanes(SwitchJobConfig.DEFAULT_LANES, "the P4 programs' packets: the switch does not say its own");
        }
        final int lanes = answer.path("defaultLanes").asInt();
        if (lanes < 1 || lanes > InaggHeader.MAX_ELEMENTS_FOR_1500_MTU)
        {
            LOGGER.log(System.Logger.Level.WARNING, () -> "controller: " + control + " reports " + lanes
                + " default lanes, outside 1.." + InaggHeader.MAX_ELEMENTS_FOR_1500_MTU + "; jobs get "
                + SwitchJobConfig.DEFAULT_LANES + " lanes");
            return new Lanes(SwitchJobConfig.DEFAULT_LANES, "the P4 programs' packets: the switch reported " + lanes);
        }
        return new Lanes(lanes, "the software switch's default, packets that fill its interface's MTU");
    }

    @Override
    public void install(final JobProgram program)
    {
        final ObjectNode body = JsonHttp.MAPPER.createObjectNode();
        body.put("workers", program.workers()).put("slots", program.slots()).put("lanes", program.lanes())
            .put("slotBase", program.slotBase()).put("session", program.session());
        final ArrayNode sources = body.putArray("sources");
        program.sources().forEach(source -> sources.add(JsonHttp.format(source)));
        final long[] credentials = program.joinCredentials();
        if (credentials != null)
        {
            final ArrayNode field = body.putArray("joinCredentials");
            for (final long credential : credentials)
            {
                field.add(JobSecret.formatCredential(credential));
            }
        }
        call("PUT", "/v1/jobs/" + program.jobId(), body);
    }

    @Override
    public boolean remove(final int jobId)
    {
        final JsonHttp.Answer answer = send("DELETE", "/v1/jobs/" + jobId, null);
        if (answer.status() == 404)
        {
            return false;
        }
        check(answer, "DELETE /v1/jobs/" + jobId);
        return true;
    }

    @Override
    public Map<Integer, JobProgram> installed()
    {
        final JsonNode answer = call("GET", "/v1/jobs", null);
        final Map<Integer, JobProgram> jobs = new HashMap<>();
        for (final JsonNode job : answer.path("jobs"))
        {
            final List<InetSocketAddress> sources = new ArrayList<>();
            for (final JsonNode source : job.path("sources"))
            {
                sources.add(JsonHttp.address("sources", source.asText()));
            }
            jobs.put(job.path("jobId").asInt(), new JobProgram(job.path("jobId").asInt(), job.path("slots").asInt(),
                job.path("slotBase").asInt(), job.path("lanes").asInt(), job.path("session").asInt(), sources));
        }
        return jobs;
    }

    @Override
    public void close()
    {
        client.close();
    }

    private JsonNode call(final String method, final String path, final JsonNode body)
    {
        final JsonHttp.Answer answer = send(method, path, body);
        check(answer, method + " " + path);
        return answer.body();
    }

    private void check(final JsonHttp.Answer answer, final String what)
    {
        if (!answer.ok())
        {
            throw new IllegalStateException(describe() + " refused " + what + " (" + answer.status() + "): "
                + answer.describe());
        }
    }

    private JsonHttp.Answer send(final String method, final String path, final JsonNode body)
    {
        try
        {
            return JsonHttp.call(client, method, control.resolve(path), body, timeout, token);
        }
        catch (final IOException ex)
        {
            throw new SwitchUnreachableException("switch " + control + " unreachable: " + ex.getMessage(), ex);
        }
    }
}
