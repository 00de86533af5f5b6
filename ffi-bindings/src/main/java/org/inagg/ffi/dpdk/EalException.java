package org.inagg.ffi.dpdk;

/**
 * {@code rte_eal_init} failed. The message carries {@code rte_strerror(rte_errno)}, the arguments passed, and the tail
 * of what EAL logged during the attempt ({@link #ealLog()}).
 */
public final class EalException extends DpdkException
{
    private static final long serialVersionUID = 1L;

    private final String ealLog;

    public EalException(final String message, final int errno, final String ealLog)
    {
        super(message, errno);
        this.ealLog = ealLog;
    }

    /** What EAL logged while initialising (its last 8 KiB), possibly empty. */
    public String ealLog()
    {
        return ealLog;
    }
}
