package org.inagg.services.controller;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.regex.Pattern;

import org.inagg.services.http.HttpFailure;

/**
 * A job's secret: what every registration, renewal and removal of one job shows in {@link #HEADER} after the job's first
 * registration (docs/security-controller-section.md). The first registration chooses it (the header, from
 * {@link #ENV}) or is given one ({@link #generate()}, in its answer's {@code jobSecret}); the controller keeps only its
 * SHA-256, in memory and in the journal, and compares in constant time.
 */
final class JobSecret
{
    /** The request header carrying the secret. */
    static final String HEADER = "X-Inagg-Job-Secret";
    /** The environment variable from which clients take the secret the ranks of one job share. */
    static final String ENV = "INAGG_JOB_SECRET";
    private static final Pattern FORMAT = Pattern.compile("[A-Za-z0-9_-]{16,128}");
    private static final SecureRandom RANDOM = new SecureRandom();

    private JobSecret()
    {
    }

    /** 32 random bytes, base64url without padding (43 characters). */
    static String generate()
    {
        final byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** 16 random bytes as hex: an unguessable registration id. */
    /**
     * A rank's JOIN credential: 64 random bits from {@link SecureRandom}, never
     * {@link org.inagg.wire.InaggHeader#NO_CREDENTIAL} (which a switch reads as "none required").
     */
    static long joinCredential()
    {
        long credential;
        do
        {
            credential = RANDOM.nextLong();
        }
        while (credential == org.inagg.wire.InaggHeader.NO_CREDENTIAL);
        return credential;
    }

    /** A JOIN credential as JSON carries it: 16 hex digits (a JSON number would lose bits in many clients). */
    static String formatCredential(final long credential)
    {
        return String.format("%016x", credential);
    }

    /** The credential of {@link #formatCredential}, or a 400 naming the field. */
    static long parseCredential(final String field, final String text)
    {
        if (text == null || !text.matches("[0-9a-fA-F]{16}"))
        {
            throw new org.inagg.services.http.HttpFailure(org.inagg.services.http.HttpFailure.BAD_REQUEST,
                "field '" + field + "' must be 16 hex digits");
        }
        return Long.parseUnsignedLong(text, 16);
    }

    static String randomId()
    {
        final byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /**
     * Checks a presented secret's form (never its value).
     *
     * @throws HttpFailure 400 if it is not 16..128 characters of [A-Za-z0-9_-].
     */
    static String requireWellFormed(final String secret)
    {
        if (!FORMAT.matcher(secret).matches())
        {
            throw HttpFailure.badRequest(HEADER + " must be 16..128 characters of [A-Za-z0-9_-] (e.g. "
                + "'openssl rand -hex 16'), got " + secret.length() + " characters");
        }
        return secret;
    }

    /** SHA-256 of the secret, hex: what is kept. */
    static String hash(final String secret)
    {
        try
        {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                .digest(secret.getBytes(StandardCharsets.US_ASCII)));
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
        }
    }

    /** Whether {@code presented} (may be null) hashes to {@code hash}, compared in constant time. */
    static boolean matches(final String hash, final String presented)
    {
        return presented != null && hash != null && MessageDigest.isEqual(
            hash.getBytes(StandardCharsets.US_ASCII), hash(presented).getBytes(StandardCharsets.US_ASCII));
    }
}
