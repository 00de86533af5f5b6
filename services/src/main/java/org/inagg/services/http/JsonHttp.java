package org.inagg.services.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;

/**
 * JSON over the JDK's HTTP server and client: bodies read up to a bound, answers written with their status, errors as
 * {@code {"error": "..."}}, and typed field readers whose errors name the field (400).
 */
public final class JsonHttp
{
    /** Largest request body read; a larger one is a 400. */
    public static final int MAX_BODY_BYTES = 1 << 20;
    public static final ObjectMapper MAPPER = new ObjectMapper();
    private static final System.Logger LOGGER = System.getLogger(JsonHttp.class.getName());

    private JsonHttp()
    {
    }

    /** Parses a request body as a JSON object; a 400 naming what is wrong otherwise. */
    public static ObjectNode parseObject(final byte[] body)
    {
        final JsonNode node;
        try
        {
            node = MAPPER.readTree(body);
        }
        catch (final IOException ex)
        {
            throw HttpFailure.badRequest("body is not JSON: " + firstLine(ex.getMessage()));
        }
        if (!(node instanceof ObjectNode object))
        {
            throw HttpFailure.badRequest("body must be a JSON object");
        }
        return object;
    }

    /** Refuses fields not in {@code known}, naming the first one (a typo must not be silently ignored). */
    public static void onlyFields(final ObjectNode body, final Set<String> known)
    {
        for (final Iterator<String> names = body.fieldNames(); names.hasNext(); )
        {
            final String name = names.next();
            if (!known.contains(name))
            {
                throw HttpFailure.badRequest("unknown field '" + name + "' (known: " + String.join(", ",
                    known.stream().sorted().toList()) + ")");
            }
        }
    }

    public static String text(final ObjectNode body, final String field)
    {
        final JsonNode node = body.get(field);
        if (node == null || node.isNull())
        {
            throw HttpFailure.badRequest("field '" + field + "' is missing");
        }
        if (!node.isTextual())
        {
            throw HttpFailure.badRequest("field '" + field + "' must be a string, got " + node.getNodeType());
        }
        return node.asText();
    }

    public static String text(final ObjectNode body, final String field, final String absent)
    {
        return body.hasNonNull(field) ? text(body, field) : absent;
    }

    /** An integer field within {@code [min, max]}. */
    public static long integer(final ObjectNode body, final String field, final long min, final long max)
    {
        final JsonNode node = body.get(field);
        if (node == null || node.isNull())
        {
            throw HttpFailure.badRequest("field '" + field + "' is missing");
        }
        if (!node.isIntegralNumber() || !node.canConvertToLong())
        {
            throw HttpFailure.badRequest("field '" + field + "' must be a whole number, got " + node);
        }
        final long value = node.asLong();
        if (value < min || value > max)
        {
            throw HttpFailure.badRequest("field '" + field + "' must be in " + min + ".." + max + ", got " + value);
        }
        return value;
    }

    public static long integer(final ObjectNode body, final String field, final long min, final long max,
        final long absent)
    {
        return body.hasNonNull(field) ? integer(body, field, min, max) : absent;
    }

    private static final java.util.regex.Pattern IPV4 =
        java.util.regex.Pattern.compile("(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}");

    /** Whether {@code text} is a dotted-quad IPv4 address. */
    public static boolean isIpv4(final String text)
    {
        return IPV4.matcher(text).matches();
    }

    /**
     * Reads {@code ip:port} (an IPv4 literal, never a name: nothing here waits for DNS; port 1..65535); a 400 naming the
     * field otherwise.
     */
    public static InetSocketAddress address(final String field, final String text)
    {
        final int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1)
        {
            throw HttpFailure.badRequest("field '" + field + "' must be host:port, got '" + text + "'");
        }
        final int port;
        try
        {
            port = Integer.parseInt(text.substring(colon + 1));
        }
        catch (final NumberFormatException ex)
        {
            throw HttpFailure.badRequest("field '" + field + "': port of '" + text + "' is not a number");
        }
        if (port < 1 || port > 65535)
        {
            throw HttpFailure.badRequest("field '" + field + "': port of '" + text + "' must be in 1..65535");
        }
        final String host = text.substring(0, colon);
        if (!isIpv4(host))
        {
            throw HttpFailure.badRequest("field '" + field + "': host of '" + text + "' must be an IPv4 address");
        }
        return new InetSocketAddress(host, port);
    }

    /** {@code ip:port} of a resolved address. */
    public static String format(final InetSocketAddress address)
    {
        return address.getAddress().getHostAddress() + ":" + address.getPort();
    }

    /** Reads the request body, at most {@link #MAX_BODY_BYTES}. */
    public static byte[] body(final HttpExchange exchange) throws IOException
    {
        try (InputStream in = exchange.getRequestBody())
        {
            final byte[] bytes = in.readNBytes(MAX_BODY_BYTES + 1);
            if (bytes.length > MAX_BODY_BYTES)
            {
                throw HttpFailure.badRequest("body larger than " + MAX_BODY_BYTES + " bytes");
            }
            return bytes;
        }
    }

    /** Writes {@code answer} as JSON with {@code status}. */
    public static void answer(final HttpExchange exchange, final int status, final JsonNode answer) throws IOException
    {
        final byte[] bytes = MAPPER.writerWithDefaultPrettyPrinter().writeValueAsBytes(answer);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody())
        {
            out.write(bytes);
        }
    }

    /** Answers {@code {"error": message}} with {@code status}. */
    public static void error(final HttpExchange exchange, final int status, final String message) throws IOException
    {
        answer(exchange, status, MAPPER.createObjectNode().put("error", message));
    }

    /** Runs {@code handler}, answering its {@link HttpFailure} (or any other failure, as a 500) as an error. */
    public static void handle(final HttpExchange exchange, final Handler handler)
    {
        handle(exchange, ApiToken.NONE, handler);
    }

    /**
     * Runs {@code handler} if the request carries {@code token} (401 otherwise), answering its {@link HttpFailure} (or
     * any other failure, as a 500) as an error.
     */
    public static void handle(final HttpExchange exchange, final ApiToken token, final Handler handler)
    {
        try (exchange)
        {
            try
            {
                token.check(exchange);
                handler.handle(exchange);
            }
            catch (final HttpFailure failure)
            {
                error(exchange, failure.status(), failure.getMessage());
            }
            catch (final RuntimeException ex)
            {
                // The exception's text stays in the log: it may name files, hosts or internals a client must not see.
                LOGGER.log(System.Logger.Level.WARNING, () -> exchange.getRequestMethod() + " "
                    + exchange.getRequestURI().getRawPath() + " failed", ex);
                error(exchange, 500, "internal error while serving " + exchange.getRequestMethod() + " "
                    + exchange.getRequestURI().getRawPath() + " (the service's log has the cause)");
            }
        }
        catch (final IOException ignored)
        {
            // The client went away; nothing to answer.
        }
    }

    /** One endpoint's work. */
    @FunctionalInterface
    public interface Handler
    {
        void handle(HttpExchange exchange) throws IOException;
    }

    /** An answer as the client sees it. */
    public record Answer(int status, JsonNode body)
    {
        /** The error message of a failed answer, or the body. */
        public String describe()
        {
            return body != null && body.hasNonNull("error") ? body.get("error").asText() : String.valueOf(body);
        }

        public boolean ok()
        {
            return status / 100 == 2;
        }
    }

    /**
     * Sends a request with a JSON body (or none) and reads the JSON answer, within {@code timeout}.
     *
     * @throws IOException if the server cannot be reached or does not answer in time; the message names the URL.
     */
    public static Answer call(final HttpClient client, final String method, final URI uri, final JsonNode body,
        final Duration timeout) throws IOException
    {
        return call(client, method, uri, body, timeout, ApiToken.NONE);
    }

    /**
     * Sends a request with a JSON body (or none) and {@code token}, and reads the JSON answer, within {@code timeout}.
     *
     * @throws IOException if the server cannot be reached or does not answer in time; the message names the URL.
     */
    public static Answer call(final HttpClient client, final String method, final URI uri, final JsonNode body,
        final Duration timeout, final ApiToken token) throws IOException
    {
        return call(client, method, uri, body, timeout, token, Map.of());
    }

    /**
     * Sends a request with a JSON body (or none), {@code token} and extra {@code headers}, and reads the JSON answer,
     * within {@code timeout}.
     *
     * @throws IOException if the server cannot be reached or does not answer in time; the message names the URL.
     */
    public static Answer call(final HttpClient client, final String method, final URI uri, final JsonNode body,
        final Duration timeout, final ApiToken token, final Map<String, String> headers) throws IOException
    {
        final HttpRequest.Builder builder = HttpRequest.newBuilder(uri).timeout(timeout)
            .header("Content-Type", "application/json")
            .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofByteArray(MAPPER.writeValueAsBytes(body)));
        if (token.required())
        {
            builder.header("Authorization", token.authorization());
        }
        headers.forEach(builder::header);
        final HttpRequest request = builder.build();
        final HttpResponse<byte[]> response;
        try
        {
            response = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IOException(method + " " + uri + " interrupted", ex);
        }
        catch (final IOException ex)
        {
            throw new IOException(method + " " + uri + ": " + (ex.getMessage() == null ? ex.toString()
                : ex.getMessage()), ex);
        }
        JsonNode answer = null;
        if (response.body().length > 0)
        {
            try
            {
                answer = MAPPER.readTree(response.body());
            }
            catch (final JsonProcessingException ex)
            {
                answer = MAPPER.createObjectNode().put("error", new String(response.body(), StandardCharsets.UTF_8));
            }
        }
        return new Answer(response.statusCode(), answer);
    }

    /** Query parameters of a request ({@code a=1&b=2}), undecoded. */
    public static Map<String, String> query(final URI uri)
    {
        final String raw = uri.getRawQuery();
        if (raw == null || raw.isEmpty())
        {
            return Map.of();
        }
        final java.util.HashMap<String, String> params = new java.util.HashMap<>();
        for (final String pair : raw.split("&"))
        {
            final int eq = pair.indexOf('=');
            params.put(eq < 0 ? pair : pair.substring(0, eq), eq < 0 ? "" : pair.substring(eq + 1));
        }
        return params;
    }

    private static String firstLine(final String text)
    {
        if (text == null)
        {
            return "unreadable";
        }
        final int newline = text.indexOf('\n');
        return newline < 0 ? text : text.substring(0, newline);
    }
}
