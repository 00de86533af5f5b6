package org.inagg.gpu.bench;

import java.util.Collection;
import java.util.Locale;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the module's JMH benchmarks and prints GB/s beside JMH's scores.
 * <pre>
 *   gpu/scripts/bench.sh                 CPU reducer vs copy, then PASSING vs per-GPU INA (2 hosts x 4 logical GPUs)
 *   gpu/scripts/bench.sh --cpu           only the CPU reducer
 *   gpu/scripts/bench.sh --passing       only PASSING vs per-GPU INA
 *   gpu/scripts/bench.sh --gpu           the CUDA kernels vs device-to-device copy (needs a GPU)
 *   options: --quick (fewer, shorter iterations)
 * </pre>
 * GB/s counts input bytes read per operation: 4 bytes per element, times the number of sources for the k-way
 * operations; for all-reduces, the 4-byte elements of one GPU's gradient (the "algorithm bandwidth" of NCCL's tests).
 */
public final class GpuBenchmarks
{
    private GpuBenchmarks()
    {
    }

    public static void main(final String[] args) throws RunnerException
    {
        final java.util.List<String> list = java.util.List.of(args);
        final boolean quick = list.contains("--quick");
        final boolean only = list.contains("--cpu") || list.contains("--passing") || list.contains("--gpu");
        if (!only || list.contains("--cpu"))
        {
            report(run(CpuReducerBenchmark.class, quick), CpuReducerBenchmark.SOURCES);
        }
        if (!only || list.contains("--passing"))
        {
            report(run(PassingBenchmark.class, quick), 1);
        }
        if (list.contains("--gpu"))
        {
            report(run(CudaKernelBenchmark.class, quick), CudaKernelBenchmark.SOURCES);
        }
    }

    private static Collection<RunResult> run(final Class<?> benchmark, final boolean quick) throws RunnerException
    {
        final ChainedOptionsBuilder options = new OptionsBuilder()
            .include(benchmark.getName() + "\\.")
            .forks(1)
            .warmupIterations(quick ? 2 : 3)
            .warmupTime(TimeValue.seconds(1))
            .measurementIterations(quick ? 3 : 5)
            .measurementTime(TimeValue.seconds(quick ? 1 : 2))
            .jvmArgsAppend("--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
                "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx3g");
        return new Runner(options.build()).run();
    }

    private static void report(final Collection<RunResult> results, final int sources)
    {
        System.out.println();
        System.out.println(String.format(Locale.ROOT, "%-52s %14s %10s %10s", "benchmark", "score", "unit", "GB/s"));
        for (final RunResult result : results)
        {
            final String name = result.getParams().getBenchmark();
            final String method = name.substring(name.lastIndexOf('.') + 1);
            final int elements = Integer.parseInt(result.getParams().getParam("elements"));
            final double score = result.getPrimaryResult().getScore();
            final String unit = result.getPrimaryResult().getScoreUnit();
            final double opsPerSecond = unit.startsWith("ops/") ? score : 1000.0 / score;
            final int k = method.endsWith("K") ? sources : 1;
            final double gbPerSecond = opsPerSecond * elements * 4.0 * k / 1e9;
            System.out.println(String.format(Locale.ROOT, "%-52s %14.3f %10s %10.2f",
                name.substring(name.lastIndexOf('.', name.lastIndexOf('.') - 1) + 1) + " n=" + elements, score, unit,
                gbPerSecond));
        }
    }
}
