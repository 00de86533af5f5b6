package org.inagg.gpu;

import org.inagg.InaggException;

/** A CUDA driver call failed; the message names the call or kernel and the driver's error (a CUresult name). */
public class CudaException extends InaggException
{
    private static final long serialVersionUID = 1L;

    public CudaException(final String message)
    {
        super(message);
    }

    public CudaException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
