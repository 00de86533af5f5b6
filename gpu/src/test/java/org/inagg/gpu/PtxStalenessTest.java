package org.inagg.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The committed PTX (what the jar ships) must be what nvcc makes of the committed .cu today. Compares the PTX the
 * build regenerated into target/ptx (or, if absent, regenerates it here) line by line, ignoring comment lines and the
 * .version line, which carry the compiler's version. Skipped, with the reason printed, where nvcc is not installed.
 */
class PtxStalenessTest
{
    @Test
    void shouldShipPtxBuiltFromTheCurrentKernelSource(@TempDir final Path temp) throws Exception
    {
        final Path committed = Path.of("src/main/resources/org/inagg/gpu", KernelModule.PTX_RESOURCE);
        assertThat(committed).as("committed PTX; build it with gpu/scripts/build-ptx.sh").exists();
        Path fresh = Path.of(System.getProperty("inagg.ptx.generated", "target/ptx"), KernelModule.PTX_RESOURCE);
        if (!Files.exists(fresh))
        {
            final int rc = runScript(temp);
            if (rc == 127)
            {
                final String reason = "PTX staleness check skipped: nvcc is not installed";
                System.out.println("[inagg-gpu] " + reason);
                Assumptions.abort(reason);
            }
            assertThat(rc).as("gpu/scripts/build-ptx.sh exit status").isZero();
            fresh = temp.resolve(KernelModule.PTX_RESOURCE);
        }
        assertThat(normalized(fresh))
            .as("committed %s is stale against src/main/cuda; regenerate it with gpu/scripts/build-ptx.sh", committed)
            .isEqualTo(normalized(committed));
    }

    @Test
    void shouldLoadTheShippedPtxAsANulTerminatedString()
    {
        final byte[] ptx = KernelModule.readPtx();
        assertThat(ptx[ptx.length - 1]).isZero();
        final String text = new String(ptx, 0, ptx.length - 1, StandardCharsets.US_ASCII);
        for (final String kernel : List.of("inagg_block_exponents", "inagg_max_k", "inagg_quantize", "inagg_dequantize",
            "inagg_sum_k_f32", "inagg_sum_k_s32", "inagg_reduce_quantize"))
        {
            assertThat(text).contains(".entry " + kernel + "(");
        }
        assertThat(text).as("no fused multiply-add may change rounding").doesNotContain("fma.");
    }

    private static int runScript(final Path out) throws IOException, InterruptedException
    {
        final String script = System.getProperty("inagg.ptx.script", "scripts/build-ptx.sh");
        final String nvcc = findNvcc();
        if (nvcc == null)
        {
            return 127;
        }
        final Process process = new ProcessBuilder("bash", script, out.toString()).inheritIO().start();
        if (!process.waitFor(120, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            return -1;
        }
        return process.exitValue();
    }

    private static String findNvcc()
    {
        for (final String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator))
        {
            if (Files.isExecutable(Path.of(dir, "nvcc")))
            {
                return dir;
            }
        }
        final Path cuda = Path.of(System.getenv().getOrDefault("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc");
        return Files.isExecutable(cuda) ? cuda.toString() : null;
    }

    static List<String> normalized(final Path ptx) throws IOException
    {
        return Files.readAllLines(ptx, StandardCharsets.US_ASCII).stream()
            .map(String::strip)
            .filter(line -> !line.isEmpty() && !line.startsWith("//") && !line.startsWith(".version"))
            .toList();
    }
}
