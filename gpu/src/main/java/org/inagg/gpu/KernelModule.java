package org.inagg.gpu;

import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;

import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * The kernels of {@code src/main/cuda/inagg_kernels.cu}, loaded from the PTX shipped as a classpath resource beside
 * this class with {@code cuModuleLoadData} (the driver JIT-compiles it for the GPU at hand; nvcc is never run at run
 * time). Functions are looked up once and cached by name. Not thread-safe: the owning {@link CudaReducer} serializes
 * access.
 */
final class KernelModule implements AutoCloseable
{
    static final String PTX_RESOURCE = "inagg_kernels.ptx";
    static final String REBUILD_HINT = "rebuild it with gpu/scripts/build-ptx.sh (needs nvcc from a CUDA toolkit) "
        + "and rebuild the jar, or use a released inagg-gpu jar, which ships it";

    private final CUmodule module = new CUmodule();
    private final Map<String, CUfunction> functions = new HashMap<>();

    KernelModule()
    {
        final byte[] ptx = readPtx();
        final int result = JCudaDriver.cuModuleLoadData(module, ptx);
        if (result != CUresult.CUDA_SUCCESS)
        {
            throw new CudaException("cuModuleLoadData(" + PTX_RESOURCE + ") failed: " + CUresult.stringFor(result)
                + (result == CUresult.CUDA_ERROR_UNSUPPORTED_PTX_VERSION
                    ? " (the driver is older than the nvcc that built the PTX; update the driver or " + REBUILD_HINT + ")"
                    : ""));
        }
    }

    /** The PTX text, NUL-terminated as cuModuleLoadData expects. */
    static byte[] readPtx()
    {
        try (InputStream in = KernelModule.class.getResourceAsStream(PTX_RESOURCE))
        {
            if (in == null)
            {
                throw new CudaException("PTX resource org/inagg/gpu/" + PTX_RESOURCE + " is not on the classpath; "
                    + REBUILD_HINT);
            }
            final byte[] text = in.readAllBytes();
            final byte[] terminated = java.util.Arrays.copyOf(text, text.length + 1);
            return terminated;
        }
        catch (final IOException ex)
        {
            throw new CudaException("cannot read PTX resource org/inagg/gpu/" + PTX_RESOURCE + ": " + ex, ex);
        }
    }

    CUfunction function(final String name)
    {
        CUfunction function = functions.get(name);
        if (function == null)
        {
            function = new CUfunction();
            final int result = JCudaDriver.cuModuleGetFunction(function, module, name);
            if (result != CUresult.CUDA_SUCCESS)
            {
                throw new CudaException("kernel " + name + " not found in " + PTX_RESOURCE + ": "
                    + CUresult.stringFor(result) + "; the PTX is stale, " + REBUILD_HINT);
            }
            functions.put(name, function);
        }
        return function;
    }

    @Override
    public void close()
    {
        JCudaDriver.cuModuleUnload(module);
        functions.clear();
    }
}
