package org.inagg.services.http;

/** A request that fails with an HTTP status and a message saying what is wrong (the field, the job, the conflict). */
public final class HttpFailure extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    public static final int BAD_REQUEST = 400;
    public static final int UNAUTHORIZED = 401;
    public static final int FORBIDDEN = 403;
    public static final int NOT_FOUND = 404;
    public static final int GONE = 410;
    public static final int CONFLICT = 409;
    public static final int UNAVAILABLE = 503;
    public static final int BAD_GATEWAY = 502;

    private final int status;

    public HttpFailure(final int status, final String message)
    {
        super(message);
        this.status = status;
    }

    public HttpFailure(final int status, final String message, final Throwable cause)
    {
        super(message, cause);
        this.status = status;
    }

    public int status()
    {
        return status;
    }

    public static HttpFailure badRequest(final String message)
    {
        return new HttpFailure(BAD_REQUEST, message);
    }
}
