package org.inagg.gpu;

import java.util.Optional;

/**
 * Chooses a {@link ReductionDevice} by name: {@code cpu}, {@code cuda} (device 0), {@code cuda:N}, or {@code auto}
 * (the default: CUDA device 0 when usable, else the CPU, saying why in the log). Naming {@code cuda} where no GPU can
 * be used fails with a {@link CudaUnavailableException} explaining what is missing; it never silently falls back.
 */
public final class ReductionDevices
{
    public static final String DEVICE_PROP_NAME = "inagg.gpu.device";
    public static final String DEVICE_DEFAULT = "auto";

    private static final System.Logger LOG = System.getLogger(ReductionDevices.class.getName());

    private ReductionDevices()
    {
    }

    /** The device named by system property {@value #DEVICE_PROP_NAME} ({@value #DEVICE_DEFAULT} if unset). */
    public static ReductionDevice open()
    {
        return open(System.getProperty(DEVICE_PROP_NAME, DEVICE_DEFAULT));
    }

    public static ReductionDevice open(final String name)
    {
        final String spec = name.trim().toLowerCase(java.util.Locale.ROOT);
        if (spec.equals("cpu"))
        {
            return new CpuReducer();
        }
        if (spec.equals("cuda") || spec.startsWith("cuda:"))
        {
            final int ordinal = spec.equals("cuda") ? 0 : parseOrdinal(spec);
            return openCuda(ordinal);
        }
        if (spec.equals("auto"))
        {
            final Optional<String> unavailable = cudaUnavailableReason();
            if (unavailable.isEmpty())
            {
                return openCuda(0);
            }
            LOG.log(System.Logger.Level.INFO, "inagg-gpu: using the CPU reducer: {0}", unavailable.get());
            return new CpuReducer();
        }
        throw new IllegalArgumentException("unknown reduction device '" + name + "'; use cpu, cuda, cuda:N or auto");
    }

    /** Why no GPU can be used here, or empty if CUDA device 0 can be opened. Never throws. */
    public static Optional<String> cudaUnavailableReason()
    {
        try
        {
            CudaReducer.deviceCount();
            return Optional.empty();
        }
        catch (final CudaException ex)
        {
            return Optional.of(ex.getMessage());
        }
        catch (final LinkageError ex)
        {
            return Optional.of("JCuda is not on the classpath or cannot load: " + ex);
        }
    }

    private static ReductionDevice openCuda(final int ordinal)
    {
        try
        {
            return CudaReducer.open(ordinal);
        }
        catch (final LinkageError ex)
        {
            throw new CudaUnavailableException("reduction device cuda:" + ordinal + " requested but JCuda is not on the "
                + "classpath or cannot load (" + ex + "); add org.jcuda:jcuda and its natives, or use device \"cpu\"",
                ex);
        }
    }

    private static int parseOrdinal(final String spec)
    {
        try
        {
            return Integer.parseInt(spec.substring("cuda:".length()));
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("bad CUDA device '" + spec + "'; use cuda:N with N a device number", ex);
        }
    }
}
