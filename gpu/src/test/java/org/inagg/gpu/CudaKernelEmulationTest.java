package org.inagg.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Field;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.inagg.fixedpoint.FixedPoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CUDA kernels, compiled unchanged for the CPU with g++ and {@code src/test/cuda-emulation/cuda_emulation.h}, run
 * with the grid, block and arguments {@link CudaReducer} launches them with, against {@link CpuReducer}: outputs equal
 * bit for bit. {@code inagg_block_exponents} runs each block's 256 threads as real threads, so its shared memory,
 * {@code __syncthreads()} and warp shuffles are exercised. This checks the kernels' arithmetic, indexing, grid-stride
 * loops, ragged blocks and byte order without a GPU; it cannot check the GPU's own arithmetic or the JCuda calls (see
 * docs/gpu.md, "Checked without a GPU"). Skipped, with the reason printed, where g++ is not installed.
 */
class CudaKernelEmulationTest
{
    /** CudaReducer.THREADS and MAX_GRID, read reflectively below so a change there cannot go unnoticed here. */
    private static final int THREADS = 256;
    private static final int MAX_GRID = 4096;
    /** Streaming multiprocessors: H100 SXM / H200 (132), and 1 (grid of 8 blocks) so every grid-stride loop loops. */
    private static final int[] SMS = {132, 1};
    private static final int BLOCK_EXPONENTS_GRID_LIMIT = 65_535 * 16;
    private static final int UNWRITTEN = 0x7FA5A5A5;
    private static final int GPU_NAN = 0x7FFFFFFF;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.nativeOrder());
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.nativeOrder());
    private static final int[] WORKERS = {1, 2, 3, 8, 1000, FixedPoint.MAX_WORKERS};

    @TempDir
    static Path dir;
    private static Path driver;

    private final CpuReducer cpu = new CpuReducer();
    private final List<HostMemoryBuffer> owned = new ArrayList<>();

    @BeforeAll
    static void compileTheKernelsForTheCpu() throws Exception
    {
        final Path cu = Path.of("src/main/cuda/inagg_kernels.cu");
        final Path emulation = Path.of("src/test/cuda-emulation");
        if (!Files.exists(cu) || !Files.exists(emulation.resolve("cuda_emulation.h")))
        {
            skip("kernel sources not found from " + Path.of("").toAbsolutePath() + " (run from the gpu module)");
        }
        if (run(dir, 30, "g++", "--version") == null)
        {
            skip("g++ is not installed");
        }
        assertThat(ByteOrder.nativeOrder()).as("the emulation reads and writes raw little-endian files")
            .isEqualTo(ByteOrder.LITTLE_ENDIAN);
        driver = dir.resolve("kernel_driver");
        final List<String> command = new ArrayList<>(List.of("g++", "-std=c++20", "-O1", "-ffp-contract=off",
            "-fno-fast-math", "-fwrapv", "-pthread", "-Wall", "-Werror"));
        final String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
        if (arch.equals("amd64") || arch.equals("x86_64"))
        {
            command.addAll(List.of("-msse2", "-mfpmath=sse"));
        }
        // e.g. -Dinagg.emulation.cxxflags="-fsanitize=address,undefined -fno-sanitize-recover=all" or
        // "-fsanitize=thread" (the driver then drops its own guard words: the sanitizer sees every access).
        final String extra = System.getProperty("inagg.emulation.cxxflags", "").strip();
        if (!extra.isEmpty())
        {
            command.addAll(List.of(extra.split("\\s+")));
        }
        command.addAll(List.of("-I" + emulation, "-x", "c++", "-include", "cuda_emulation.h", cu.toString(), "-x", "c++",
            emulation.resolve("kernel_driver.cpp").toString(), "-o", driver.toString()));
        final Result result = run(Path.of(""), 180, command.toArray(String[]::new));
        assertThat(result).as("g++ not startable").isNotNull();
        assertThat(result.exitCode()).as("the kernels must compile under the CPU emulation (add what is missing to "
            + "cuda_emulation.h):\n%s\n%s", String.join(" ", command), result.output()).isZero();
    }

    @Test
    void shouldLaunchAsCudaReducerDoesWithParametersMatchingThePtx() throws Exception
    {
        assertThat(privateInt("THREADS")).as("CudaReducer.THREADS").isEqualTo(THREADS);
        assertThat(privateInt("MAX_GRID")).as("CudaReducer.MAX_GRID").isEqualTo(MAX_GRID);
        // The kernelParams CudaReducer packs (CUdeviceptr and long: 8 bytes, int: 4), as PTX .param types.
        final Map<String, List<String>> packed = new LinkedHashMap<>();
        packed.put("inagg_block_exponents", List.of("u64", "u64", "u32", "u64"));
        packed.put("inagg_max_k", List.of("u64", "u32", "u64", "u64"));
        packed.put("inagg_quantize", List.of("u64", "u64", "u32", "u64", "u32", "u32", "u64"));
        packed.put("inagg_dequantize", List.of("u64", "u64", "u32", "u64", "u32", "u32", "u64"));
        packed.put("inagg_sum_k_f32", List.of("u64", "u32", "u64", "u64"));
        packed.put("inagg_sum_k_s32", List.of("u64", "u32", "u64", "u64"));
        packed.put("inagg_reduce_quantize", List.of("u64", "u32", "u64", "u32", "u64", "u32", "u32", "u64"));
        final byte[] ptx = KernelModule.readPtx();
        final String text = new String(ptx, 0, ptx.length - 1, StandardCharsets.US_ASCII);
        final Matcher entry = Pattern.compile("\\.entry (\\w+)\\(([^)]*)\\)").matcher(text);
        final Map<String, List<String>> declared = new LinkedHashMap<>();
        while (entry.find())
        {
            final List<String> types = new ArrayList<>();
            final Matcher param = Pattern.compile("\\.param \\.(\\w+) ").matcher(entry.group(2));
            while (param.find())
            {
                types.add(param.group(1));
            }
            declared.put(entry.group(1), types);
        }
        assertThat(declared).isEqualTo(packed);
    }

    @Test
    void shouldComputeBlockExponentsAsTheCpu() throws Exception
    {
        final Batch batch = new Batch("exponents");
        final SplittableRandom random = new SplittableRandom(11);
        int seed = 0;
        for (final int blockSize : new int[] {64, 256, 363})
        {
            for (final int count : new int[] {0, 1, 31, 63, 64, 65, 255, 256, 257, 1000, 4099})
            {
                for (final Pattern3 pattern : Pattern3.values())
                {
                    exponents(batch, floats(pattern, seed++, count, blockSize, random), blockSize, 0);
                }
            }
        }
        exponents(batch, floats(Pattern3.RANDOM, seed++, 100, 1, random), 1, 0);
        exponents(batch, floats(Pattern3.NON_FINITE, seed++, 30_011, 256, random), 256, 0);
        exponents(batch, floats(Pattern3.EDGES, seed++, 20_000, 64, random), 64, 0);
        // Not a grid CudaReducer uses (it launches one CUDA block per fixed-point block), but the kernel loops over
        // blocks with a grid-stride loop and reuses its shared memory: run that loop too.
        exponents(batch, floats(Pattern3.NON_FINITE, seed++, 5_000, 363, random), 363, 3);
        exponents(batch, floats(Pattern3.EDGES, seed, 2_000, 64, random), 64, 1);
        batch.run();
    }

    @Test
    void shouldTakeElementWiseMaxOfExponentsAsTheCpu() throws Exception
    {
        final Batch batch = new Batch("max");
        final SplittableRandom random = new SplittableRandom(12);
        for (final int sms : SMS)
        {
            for (int k = 1; k <= 8; k++)
            {
                for (final int count : new int[] {1, 257, 2049, 5003})
                {
                    final List<int[]> sources = new ArrayList<>();
                    for (int j = 0; j < k; j++)
                    {
                        sources.add(ints(random, count, true));
                    }
                    final int[] expected = cpuInts(count, out -> cpu.maxExponents(hosts(sources), count, out));
                    batch.launch("inagg_max_k", grid(count, sms), "max k=" + k + " n=" + count, expected, false,
                        batch.pointers(sources), "i32:" + k, "i64:" + count, batch.out(count));
                }
            }
        }
        batch.run();
    }

    @Test
    void shouldQuantizeAndDequantizeAsTheCpu() throws Exception
    {
        final Batch batch = new Batch("quantize");
        final SplittableRandom random = new SplittableRandom(13);
        int seed = 100;
        for (final int sms : SMS)
        {
            for (final int blockSize : new int[] {64, 256, 363})
            {
                for (final int count : new int[] {1, 255, 257, 363 * 5 + 1, 9_001})
                {
                    for (final Pattern3 pattern : new Pattern3[] {Pattern3.RANDOM, Pattern3.EDGES})
                    {
                        final int workers = WORKERS[random.nextInt(WORKERS.length)];
                        final float[] x = floats(pattern, seed++, count, blockSize, random);
                        // In contract: the job-wide exponent is at least each block's own (a bigger one from another
                        // host), so |x * 2^shift| < 2^31 and both lane orders must be bit-identical.
                        final int[] exponents = agreed(blockExponents(x, blockSize), random, 0);
                        quantize(batch, sms, x, blockSize, exponents, workers, LaneOrder.NETWORK);
                        quantize(batch, sms, x, blockSize, exponents, workers, LaneOrder.NATIVE);
                        // Out of contract (exponents too small, lanes saturate and wrap): native order still matches.
                        quantize(batch, sms, x, blockSize, agreed(exponents, random, -12), workers, LaneOrder.NATIVE);
                        final int[] lanes = ints(random, count, false);
                        final int[] anyExponents = new int[exponents.length];
                        for (int b = 0; b < anyExponents.length; b++)
                        {
                            anyExponents[b] = random.nextInt(FixedPoint.MIN_EXPONENT, FixedPoint.MAX_EXPONENT + 1);
                        }
                        for (final LaneOrder order : LaneOrder.values())
                        {
                            dequantize(batch, sms, lanes, blockSize, anyExponents, workers, order);
                        }
                    }
                }
            }
        }
        // One size past the H100 grid (132 SMs x 8 blocks x 256 threads = 270,336): the real grid strides.
        final float[] x = floats(Pattern3.RANDOM, seed, 300_007, 256, random);
        final int[] exponents = blockExponents(x, 256);
        quantize(batch, SMS[0], x, 256, exponents, 16, LaneOrder.NETWORK);
        dequantize(batch, SMS[0], ints(random, 300_007, false), 256, exponents, 16, LaneOrder.NETWORK);
        batch.run();
    }

    @Test
    void shouldSumFloatsAsTheCpu() throws Exception
    {
        final Batch batch = new Batch("sumf");
        final SplittableRandom random = new SplittableRandom(14);
        for (final int sms : SMS)
        {
            for (int k = 1; k <= 8; k++)
            {
                for (final int count : new int[] {1, 255, 2049, 5003})
                {
                    final List<int[]> sources = new ArrayList<>();
                    for (int j = 0; j < k; j++)
                    {
                        sources.add(floatBits(floats(Pattern3.values()[j % 3], 1000 * k + j, count, 64, random)));
                    }
                    final int[] expected = cpuInts(count, out -> cpu.sumFloats(floatHosts(sources), count, out));
                    batch.launch("inagg_sum_k_f32", grid(count, sms), "sumFloats k=" + k + " n=" + count, expected,
                        true, batch.pointers(sources), "i32:" + k, "i64:" + count, batch.out(count));
                }
            }
        }
        batch.run();
    }

    @Test
    void shouldSumIntsWrappingAsTheCpu() throws Exception
    {
        final Batch batch = new Batch("sumi");
        final SplittableRandom random = new SplittableRandom(15);
        for (final int sms : SMS)
        {
            for (int k = 1; k <= 8; k++)
            {
                for (final int count : new int[] {1, 255, 2049, 5003})
                {
                    final List<int[]> sources = new ArrayList<>();
                    for (int j = 0; j < k; j++)
                    {
                        sources.add(ints(random, count, false));
                    }
                    final int[] expected = cpuInts(count, out -> cpu.sumInts(hosts(sources), count, out));
                    batch.launch("inagg_sum_k_s32", grid(count, sms), "sumInts k=" + k + " n=" + count, expected,
                        false, batch.pointers(sources), "i32:" + k, "i64:" + count, batch.out(count));
                }
            }
        }
        batch.run();
    }

    @Test
    void shouldReduceAndQuantizeAsTheCpu() throws Exception
    {
        final Batch batch = new Batch("reduce");
        final SplittableRandom random = new SplittableRandom(16);
        int seed = 5000;
        for (final int sms : SMS)
        {
            for (int k = 1; k <= 8; k++)
            {
                final int blockSize = new int[] {64, 256, 363}[k % 3];
                for (final int count : new int[] {1, 257, 363 * 7 + 2, 5003})
                {
                    final List<int[]> sources = new ArrayList<>();
                    int[] exponents = null;
                    for (int j = 0; j < k; j++)
                    {
                        final float[] x = floats(j % 2 == 0 ? Pattern3.RANDOM : Pattern3.EDGES, seed++, count,
                            blockSize, random);
                        sources.add(floatBits(x));
                        exponents = exponents == null ? blockExponents(x, blockSize)
                            : max(exponents, blockExponents(x, blockSize));
                    }
                    for (final LaneOrder order : LaneOrder.values())
                    {
                        // In contract (W >= k: no overflow), W = 1 < k (the int32 sum wraps, as in the switch), and
                        // exponents too small (each lane saturates, then wraps).
                        reduce(batch, sms, sources, blockSize, agreed(exponents, random, 0), k * 3, order);
                        reduce(batch, sms, sources, blockSize, exponents, 1, order);
                        reduce(batch, sms, sources, blockSize, agreed(exponents, random, -12), 8, order);
                    }
                }
            }
        }
        batch.run();
    }

    // ---- launches, mirroring CudaReducer ---------------------------------------------------------------------------

    private static int maxGrid(final int sms)
    {
        return Math.min(MAX_GRID, Math.max(1, sms) * 8);
    }

    /** CudaReducer.grid(count), then launch's Math.max(1, grid). */
    private static int grid(final long count, final int sms)
    {
        return Math.max(1, (int)Math.min(maxGrid(sms), (count + THREADS - 1) / THREADS));
    }

    private void exponents(final Batch batch, final float[] x, final int blockSize, final int gridOverride)
        throws IOException
    {
        final int count = x.length;
        final int blocks = (count + blockSize - 1) / blockSize;
        final int grid = gridOverride > 0 ? gridOverride
            : Math.max(1, (int)Math.min(blocks, (long)BLOCK_EXPONENTS_GRID_LIMIT));
        final int[] expected = cpuInts(blocks, out -> cpu.blockExponents(floatHost(x), count, blockSize, out));
        batch.launch("inagg_block_exponents", grid, "blockExponents n=" + count + " blockSize=" + blockSize
            + " grid=" + grid, expected, false, batch.in(floatBits(x)), "i64:" + count, "i32:" + blockSize,
            batch.out(Math.max(1, blocks)));
    }

    private void quantize(
        final Batch batch, final int sms, final float[] x, final int blockSize, final int[] exponents, final int workers,
        final LaneOrder order) throws IOException
    {
        final int count = x.length;
        final BlockScaling scaling = new BlockScaling(intHost(exponents), blockSize, workers);
        final int[] expected = cpuInts(count, out -> cpu.quantize(floatHost(x), count, scaling, order, out));
        batch.launch("inagg_quantize", grid(count, sms), "quantize " + order + " n=" + count + " blockSize="
            + blockSize + " W=" + workers, expected, false, batch.in(floatBits(x)), "i64:" + count, "i32:" + blockSize,
            batch.in(exponents), "i32:" + scaling.headroomBits(), "i32:" + (order == LaneOrder.NETWORK ? 1 : 0),
            batch.out(count));
    }

    private void dequantize(
        final Batch batch, final int sms, final int[] lanes, final int blockSize, final int[] exponents,
        final int workers, final LaneOrder order) throws IOException
    {
        final int count = lanes.length;
        final BlockScaling scaling = new BlockScaling(intHost(exponents), blockSize, workers);
        final int[] expected = cpuInts(count, out -> cpu.dequantize(intHost(lanes), count, scaling, order, out));
        batch.launch("inagg_dequantize", grid(count, sms), "dequantize " + order + " n=" + count + " blockSize="
            + blockSize + " W=" + workers, expected, false, batch.in(lanes), "i64:" + count, "i32:" + blockSize,
            batch.in(exponents), "i32:" + scaling.headroomBits(), "i32:" + (order == LaneOrder.NETWORK ? 1 : 0),
            batch.out(count));
    }

    private void reduce(
        final Batch batch, final int sms, final List<int[]> sources, final int blockSize, final int[] exponents,
        final int workers, final LaneOrder order) throws IOException
    {
        final int count = sources.get(0).length;
        final BlockScaling scaling = new BlockScaling(intHost(exponents), blockSize, workers);
        final int[] expected = cpuInts(count,
            out -> cpu.reduceAndQuantize(floatHosts(sources), count, scaling, order, out));
        batch.launch("inagg_reduce_quantize", grid(count, sms), "reduceAndQuantize " + order + " k=" + sources.size()
            + " n=" + count + " blockSize=" + blockSize + " W=" + workers, expected, false, batch.pointers(sources),
            "i32:" + sources.size(), "i64:" + count, "i32:" + blockSize, batch.in(exponents),
            "i32:" + scaling.headroomBits(), "i32:" + (order == LaneOrder.NETWORK ? 1 : 0), batch.out(count));
    }

    // ---- inputs ----------------------------------------------------------------------------------------------------

    private enum Pattern3
    {
        /** Test gradients: per-block magnitudes 2^-30..2^20, zeros, -0, halfway cases, MIN_VALUE. */
        RANDOM,
        /** Subnormals, +-0, powers of two, values just below 2^127, MIN_NORMAL, random finite bit patterns < 2^127. */
        EDGES,
        /** EDGES plus NaNs (quiet, signalling, negative), +-infinity and magnitudes >= 2^127 at random places. */
        NON_FINITE
    }

    private static float[] floats(
        final Pattern3 pattern, final long seed, final int count, final int blockSize, final SplittableRandom random)
    {
        if (pattern == Pattern3.RANDOM)
        {
            return Gradients.random(seed, count, blockSize);
        }
        final float[] x = new float[count];
        for (int b = 0; b * blockSize < count; b++)
        {
            final int kind = random.nextInt(6); // per block, so some blocks are all subnormal, all tiny, ...
            for (int i = b * blockSize; i < Math.min(count, (b + 1) * blockSize); i++)
            {
                x[i] = edge(kind, random);
            }
            if (pattern == Pattern3.NON_FINITE && random.nextInt(3) > 0)
            {
                final int at = b * blockSize + random.nextInt(Math.min(blockSize, count - b * blockSize));
                x[at] = Float.intBitsToFloat(new int[] {0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF, 0x7F800000,
                    0xFF800000, 0x7F000000, 0xFF000000, 0x7F7FFFFF, 0xFF7FFFFF}[random.nextInt(10)]);
            }
        }
        return x;
    }

    private static float edge(final int kind, final SplittableRandom random)
    {
        final int sign = random.nextBoolean() ? 0x8000_0000 : 0;
        return switch (kind)
        {
            case 0 -> Float.intBitsToFloat(sign | random.nextInt(0x0080_0000)); // subnormal or +-0
            case 1 -> Float.intBitsToFloat(sign | (random.nextBoolean() ? 0 : random.nextInt(1, 0x0100_0000)));
            case 2 -> Float.intBitsToFloat(sign | random.nextInt(0x7EF0_0000, 0x7F00_0000)); // just below 2^127
            case 3 -> Float.intBitsToFloat(sign | (random.nextInt(1, 254) << 23)); // powers of two, normal
            case 4 -> Float.intBitsToFloat(sign | random.nextInt(0x7F00_0000)); // any finite magnitude < 2^127
            default -> random.nextInt(8) == 0 ? Float.intBitsToFloat(sign | 0x0080_0000) // MIN_NORMAL
                : (float)Math.scalb(0.5 + random.nextInt(16), random.nextInt(-40, 10)); // halfway after some shifts
        };
    }

    private static int[] ints(final SplittableRandom random, final int count, final boolean exponentLike)
    {
        final int[] v = new int[count];
        for (int i = 0; i < count; i++)
        {
            v[i] = switch (random.nextInt(exponentLike ? 8 : 6))
            {
                case 0 -> Integer.MIN_VALUE;
                case 1 -> Integer.MAX_VALUE; // also FixedPoint.NON_FINITE
                case 2 -> random.nextInt(-3, 4);
                case 3, 4 -> exponentLike ? random.nextInt(FixedPoint.MIN_EXPONENT, FixedPoint.MAX_EXPONENT + 1)
                    : random.nextInt(Integer.MIN_VALUE / 2, Integer.MAX_VALUE / 2);
                default -> random.nextInt();
            };
        }
        return v;
    }

    /** Exponents raised by 0..3 (another host's bigger block), or lowered by up to -shift (out of contract). */
    private static int[] agreed(final int[] exponents, final SplittableRandom random, final int lower)
    {
        final int[] e = exponents.clone();
        for (int b = 0; b < e.length; b++)
        {
            final int delta = lower < 0 ? random.nextInt(lower, 1) : random.nextInt(0, 4);
            e[b] = Math.clamp((long)e[b] + delta, FixedPoint.MIN_EXPONENT, FixedPoint.MAX_EXPONENT);
        }
        return e;
    }

    private int[] blockExponents(final float[] x, final int blockSize)
    {
        final int blocks = (x.length + blockSize - 1) / blockSize;
        return cpuInts(blocks, out -> cpu.blockExponents(floatHost(x), x.length, blockSize, out));
    }

    private static int[] max(final int[] a, final int[] b)
    {
        final int[] m = new int[a.length];
        for (int i = 0; i < a.length; i++)
        {
            m[i] = Math.max(a[i], b[i]);
        }
        return m;
    }

    private static int[] floatBits(final float[] x)
    {
        final int[] bits = new int[x.length];
        for (int i = 0; i < x.length; i++)
        {
            bits[i] = Float.floatToRawIntBits(x[i]);
        }
        return bits;
    }

    private HostMemoryBuffer floatHost(final float[] x)
    {
        return own(Gradients.buffer(x));
    }

    private HostMemoryBuffer intHost(final int[] x)
    {
        return own(Gradients.ints(x));
    }

    private List<DeviceBuffer> hosts(final List<int[]> sources)
    {
        return sources.stream().map(s -> (DeviceBuffer)intHost(s)).toList();
    }

    private List<DeviceBuffer> floatHosts(final List<int[]> sources)
    {
        return hosts(sources); // raw float bits
    }

    private HostMemoryBuffer own(final HostMemoryBuffer buffer)
    {
        owned.add(buffer);
        return buffer;
    }

    @AfterEach
    void free()
    {
        owned.forEach(HostMemoryBuffer::close);
        owned.clear();
    }

    private interface CpuOperation
    {
        void run(DeviceBuffer out);
    }

    /** Runs a CPU reducer operation into a native buffer of {@code count} ints and returns them. */
    private static int[] cpuInts(final int count, final CpuOperation operation)
    {
        try (HostMemoryBuffer out = HostMemoryBuffer.allocate(Math.max(1, count) * 4L))
        {
            operation.run(out);
            return out.segment().asSlice(0, count * 4L).toArray(INT);
        }
    }

    private static void skip(final String reason)
    {
        System.out.println("[inagg-gpu] CUDA kernel emulation skipped: " + reason);
        Assumptions.abort(reason);
    }

    private static int privateInt(final String name) throws ReflectiveOperationException
    {
        final Field field = CudaReducer.class.getDeclaredField(name);
        field.setAccessible(true);
        return field.getInt(null);
    }

    private record Result(int exitCode, String output)
    {
    }

    /** Runs a command; null if it cannot be started. */
    private static Result run(final Path workDir, final int timeoutSeconds, final String... command)
        throws IOException, InterruptedException
    {
        final Process process;
        try
        {
            final ProcessBuilder builder = new ProcessBuilder(command).directory(workDir.toAbsolutePath().toFile())
                .redirectErrorStream(true);
            if (System.getProperty("inagg.emulation.cxxflags", "").contains("sanitize"))
            {
                builder.environment().put("INAGG_EMU_GUARD", "0");
                builder.environment().put("INAGG_EMU_TIMEOUT", "600");
            }
            process = builder.start();
        }
        catch (final IOException ex)
        {
            return null;
        }
        final byte[] output = process.getInputStream().readAllBytes();
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            fail(String.join(" ", command) + " did not finish in " + timeoutSeconds + " s");
        }
        return new Result(process.exitValue(), new String(output, StandardCharsets.UTF_8));
    }

    /** Launches written to one command file, run by one driver process, each output compared with the CPU's. */
    private static final class Batch
    {
        private final Path root;
        private final List<String> lines = new ArrayList<>();
        private final List<Expectation> expectations = new ArrayList<>();
        private int files;
        private Path pendingOut;

        private record Expectation(String what, Path out, int[] expected, boolean floatNaNs)
        {
        }

        Batch(final String name) throws IOException
        {
            root = Files.createDirectories(dir.resolve(name));
        }

        String in(final int[] values) throws IOException
        {
            final Path path = root.resolve("in" + files++ + ".bin");
            final MemorySegment bytes = MemorySegment.ofArray(new byte[values.length * 4]);
            MemorySegment.copy(values, 0, bytes, INT, 0, values.length);
            Files.write(path, bytes.toArray(ValueLayout.JAVA_BYTE));
            return "in:" + path;
        }

        String pointers(final List<int[]> sources) throws IOException
        {
            final List<String> paths = new ArrayList<>();
            for (final int[] source : sources)
            {
                paths.add(in(source).substring(3));
            }
            return "ptrs:" + String.join(",", paths);
        }

        String out(final int count)
        {
            pendingOut = root.resolve("out" + files++ + ".bin");
            return "out:" + pendingOut + ":" + count;
        }

        /** The last argument must be {@link #out}; its first {@code expected.length} ints are compared. */
        void launch(
            final String kernel, final int grid, final String what, final int[] expected, final boolean floatNaNs,
            final String... args)
        {
            lines.add(kernel + " " + grid + " " + THREADS + " " + String.join(" ", args));
            expectations.add(new Expectation(kernel + " grid=" + grid + ": " + what, pendingOut, expected, floatNaNs));
        }

        void run() throws Exception
        {
            final Path commands = root.resolve("commands.txt");
            Files.write(commands, lines);
            final Result result = CudaKernelEmulationTest.run(root, 600, driver.toString(), commands.toString());
            assertThat(result.exitCode()).as("kernel_driver %s:\n%s", commands, result.output()).isZero();
            int nanLanes = 0;
            for (final Expectation e : expectations)
            {
                final int[] actual = MemorySegment.ofArray(Files.readAllBytes(e.out())).toArray(INT);
                assertThat(actual.length).as("%s: output length", e.what()).isGreaterThanOrEqualTo(e.expected().length);
                for (int i = 0; i < e.expected().length; i++)
                {
                    final int want = e.expected()[i];
                    final int got = actual[i];
                    if (e.floatNaNs() && Float.isNaN(Float.intBitsToFloat(want)))
                    {
                        // x86 (CpuReducer) propagates an operand's NaN payload or makes 0xFFC00000; NVIDIA GPUs return
                        // the canonical NaN 0x7FFFFFFF. Same value, different bits: see docs/gpu.md.
                        assertThat(got).as("%s: lane %d is NaN on the CPU (0x%08x)", e.what(), i, want)
                            .isEqualTo(GPU_NAN);
                        nanLanes++;
                        continue;
                    }
                    if (got != want)
                    {
                        fail(String.format("%s: element %d differs: kernel 0x%08x (int %d, float %s), CpuReducer "
                            + "0x%08x (int %d, float %s)%s", e.what(), i, got, got, Float.intBitsToFloat(got), want,
                            want, Float.intBitsToFloat(want), got == UNWRITTEN ? " -- the kernel never wrote it" : ""));
                    }
                }
            }
            System.out.printf("[inagg-gpu] kernel emulation: %d launches equal to CpuReducer%s%n", lines.size(),
                nanLanes > 0 ? " (" + nanLanes + " NaN lanes compared as NaN)" : "");
        }
    }
}
