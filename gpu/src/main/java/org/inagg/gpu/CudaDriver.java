package org.inagg.gpu;

import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * The CUDA driver as a whole, before any device is opened: initialises it and counts the devices, turning every way it
 * can be missing (no JCuda native library, no libcuda.so.1, no device, a failed cuInit) into a
 * {@link CudaUnavailableException} that says what is missing and names the CPU reducer as the way on.
 */
final class CudaDriver
{
    private static String firstLoadFailure;

    /**
     * The line of JCuda's (multi-line, stack-trace laden) load error that says what is missing, e.g.
     * "libcuda.so.1: cannot open shared object file".
     */
    private static String rootCause(final Throwable error)
    {
        Throwable cause = error;
        while (cause.getCause() != null)
        {
            cause = cause.getCause();
        }
        final String text = String.valueOf(cause.getMessage());
        for (final String line : text.split("\\R"))
        {
            if (line.contains("cannot open shared object file") || line.contains("libcuda"))
            {
                return line.strip().startsWith(cause.getClass().getName()) ? line.strip()
                    : cause.getClass().getSimpleName() + ": " + line.strip();
            }
        }
        return cause.getClass().getSimpleName() + ": " + text.lines().findFirst().orElse(text);
    }

    private CudaDriver()
    {
    }

    /** {@link CudaReducer#deviceCount()}. */
    static int deviceCount()
    {
        final int initResult;
        try
        {
            JCudaDriver.setExceptionsEnabled(false);
            initResult = JCudaDriver.cuInit(0);
        }
        catch (final LinkageError ex)
        {
            // The JVM reports the real cause (e.g. libcuda.so.1 missing) only on the first attempt: keep it.
            synchronized (CudaDriver.class)
            {
                if (firstLoadFailure == null)
                {
                    firstLoadFailure = rootCause(ex);
                }
            }
            throw new CudaUnavailableException("CUDA is not usable here: JCuda's native library could not be loaded ("
                + firstLoadFailure + "). It needs the NVIDIA driver's libcuda.so.1 on the loader path and the "
                + "jcuda-natives jar for this OS on the classpath; use the CPU reducer (device \"cpu\") on machines "
                + "without a GPU", ex);
        }
        if (initResult == CUresult.CUDA_ERROR_NO_DEVICE)
        {
            throw new CudaUnavailableException("CUDA is not usable here: the driver is loaded but sees no CUDA device "
                + "(cuInit: CUDA_ERROR_NO_DEVICE); check nvidia-smi and CUDA_VISIBLE_DEVICES, or use device \"cpu\"",
                null);
        }
        if (initResult != CUresult.CUDA_SUCCESS)
        {
            throw new CudaUnavailableException("CUDA is not usable here: cuInit failed with "
                + CUresult.stringFor(initResult) + "; check the driver (nvidia-smi), or use device \"cpu\"", null);
        }
        final int[] count = new int[1];
        CudaReducer.check(JCudaDriver.cuDeviceGetCount(count), "cuDeviceGetCount");
        if (count[0] == 0)
        {
            throw new CudaUnavailableException("CUDA is not usable here: the driver reports no CUDA device", null);
        }
        return count[0];
    }
}
