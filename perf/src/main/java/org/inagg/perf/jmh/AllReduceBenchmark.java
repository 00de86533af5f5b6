package org.inagg.perf.jmh;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.inagg.perf.cluster.ClusterOptions;
import org.inagg.perf.cluster.LocalCluster;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A whole all-reduce: a software switch and 4 workers in this process (in-process rings, one agent thread), one
 * operation per invocation. With {@code -prof gc}, the allocation per operation shows what is per-call (the request,
 * its future, array wrappers) against the thousands of packets each call moves.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector",
    "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class AllReduceBenchmark
{
    private static final int WORKERS = 4;

    @Param({"1048576"})
    public int elements;

    private LocalCluster cluster;
    private float[][] sources;
    private float[][] results;

    @Setup(Level.Trial)
    public void setup()
    {
        cluster = LocalCluster.start(ClusterOptions.defaults(WORKERS));
        sources = new float[WORKERS][elements];
        results = new float[WORKERS][elements];
        final SplittableRandom random = new SplittableRandom(1);
        for (final float[] source : sources)
        {
            for (int i = 0; i < elements; i++)
            {
                source[i] = (float)random.nextGaussian();
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        cluster.close();
    }

    @Benchmark
    public float[][] allReduce()
    {
        cluster.allReduce(sources, results);
        return results;
    }
}
