package org.inagg.gpu;

/**
 * A GPU was asked for but none can be used here: JCuda's native library or the NVIDIA driver is missing, or the driver
 * sees no CUDA device. The message says which and what to do; {@link ReductionDevices#open} with "auto" falls back to
 * the CPU instead.
 */
public class CudaUnavailableException extends CudaException
{
    private static final long serialVersionUID = 1L;

    public CudaUnavailableException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
