package org.inagg.ffi.dpdk;

/**
 * A DPDK call failed. {@link #errno()} is the positive errno value DPDK reported (a negative return code or
 * {@code rte_errno}); the message already carries {@code rte_strerror(errno)}.
 */
public class DpdkException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final int errno;

    public DpdkException(final String message, final int errno)
    {
        super(message);
        this.errno = errno;
    }

    public int errno()
    {
        return errno;
    }

    /** Throws when {@code rc < 0}, the DPDK convention for "-errno". */
    static int check(final int rc, final String what)
    {
        if (rc < 0)
        {
            throw new DpdkException(what + " failed: " + Dpdk.strerror(-rc) + " (errno " + (-rc) + ")", -rc);
        }
        return rc;
    }
}
