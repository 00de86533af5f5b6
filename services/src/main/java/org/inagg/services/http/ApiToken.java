package org.inagg.services.http;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Map;

import com.sun.net.httpserver.HttpExchange;

/**
 * The shared secret that the controller, the switches' control ports and their clients (workers, agents,
 * {@code inagg deploy}) present as {@code Authorization: Bearer TOKEN}. A service with a token answers 401 to any
 * request without it; one without a token ({@link #NONE}) serves anyone who reaches its port, and says so at start.
 * Services read it from a file ({@code --token-file}, so it stays out of {@code ps} listings) or from
 * {@link #ENV}; clients from {@link #ENV}.
 */
public final class ApiToken
{
    /** The environment variable holding the token. */
    public static final String ENV = "INAGG_TOKEN";
    /** No token: open to anyone who reaches the port. */
    public static final ApiToken NONE = new ApiToken(null);

    private final byte[] header;

    private ApiToken(final String token)
    {
        this.header = token == null ? null : ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * A token of printable ASCII without spaces.
     *
     * @throws IllegalArgumentException naming {@code where} the token came from if it is empty or has other characters.
     */
    public static ApiToken of(final String token, final String where)
    {
        if (token == null || token.isEmpty())
        {
            throw new IllegalArgumentException(where + ": the token is empty (an empty token is an error, not \"no token\":"
                + " unset it, or give a secret)");
        }
        for (int i = 0; i < token.length(); i++)
        {
            final char c = token.charAt(i);
            if (c <= ' ' || c > '~')
            {
                throw new IllegalArgumentException(where + ": the token may hold printable ASCII without spaces only"
                    + " (character " + i + " is not)");
            }
        }
        return new ApiToken(token);
    }

    /**
     * The token in {@code file} (surrounding whitespace trimmed) if a file is given, else {@link #ENV} if set, else
     * {@link #NONE}.
     *
     * @throws IllegalArgumentException naming the file if it cannot be read or holds no valid token.
     */
    public static ApiToken fromFileOrEnvironment(final Path file, final Map<String, String> environment)
    {
        if (file != null)
        {
            try
            {
                return of(Files.readString(file, StandardCharsets.UTF_8).strip(), "--token-file " + file);
            }
            catch (final IOException ex)
            {
                throw new IllegalArgumentException("--token-file " + file + ": cannot read it (" + ex + ")", ex);
            }
        }
        return fromEnvironment(environment);
    }

    /**
     * {@link #ENV} if set, else {@link #NONE}. A variable that is set but empty is an error, not "no token": an empty
     * secret (a script's unset variable exported as {@code INAGG_TOKEN=}) must not leave a service open.
     *
     * @throws IllegalArgumentException if the variable is set but empty or holds other than printable ASCII.
     */
    public static ApiToken fromEnvironment(final Map<String, String> environment)
    {
        final String value = environment.get(ENV);
        return value == null ? NONE : of(value.strip(), ENV);
    }

    /** Whether {@code exchange} carries this token (constant-time compare); false for {@link #NONE}. */
    public boolean presentedBy(final HttpExchange exchange)
    {
        if (header == null)
        {
            return false;
        }
        final String presented = exchange.getRequestHeaders().getFirst("Authorization");
        return presented != null && MessageDigest.isEqual(header, presented.getBytes(StandardCharsets.UTF_8));
    }

    /** Whether requests must carry the token. */
    public boolean required()
    {
        return header != null;
    }

    /** The {@code Authorization} header value to send, or null without a token. */
    public String authorization()
    {
        return header == null ? null : new String(header, StandardCharsets.UTF_8);
    }

    /**
     * Refuses a request without the token (compared in constant time).
     *
     * @throws HttpFailure 401 saying how to present the token.
     */
    public void check(final HttpExchange exchange)
    {
        if (header == null)
        {
            return;
        }
        final String presented = exchange.getRequestHeaders().getFirst("Authorization");
        if (presented == null
            || !MessageDigest.isEqual(header, presented.getBytes(StandardCharsets.UTF_8)))
        {
            throw new HttpFailure(HttpFailure.UNAUTHORIZED, presented == null
                ? "this service needs a token: send 'Authorization: Bearer TOKEN' (clients of inagg read " + ENV + ")"
                : "wrong token in the Authorization header (clients of inagg read " + ENV + ")");
        }
    }

    @Override
    public String toString()
    {
        return header == null ? "no token" : "token required";
    }
}
