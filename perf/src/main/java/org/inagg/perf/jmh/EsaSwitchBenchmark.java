package org.inagg.perf.jmh;

import java.util.concurrent.TimeUnit;

import org.inagg.p4.esa.bench.EsaSwitchThroughput;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Per-packet cost of the switch pipelines on one core, 256-lane AGGREGATEs handed to {@code onMessage} with sends
 * discarded ({@link EsaSwitchThroughput.Scenario}): the per-job slot switch, the same in two-level mode (a PARTIAL up
 * per completed slot instead of a multicast), and ESA's shared pool without and with preemption (one preemption per
 * 8 packets). Compare the scenarios within one run: the machine's noise is larger than the differences across runs.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector",
    "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class EsaSwitchBenchmark
{
    @Param({"softswitch", "softswitch-upstream", "esa-no-preemption", "esa-preemption"})
    public String scenario;

    private EsaSwitchThroughput.Scenario pipeline;

    @Setup(Level.Trial)
    public void setup()
    {
        pipeline = EsaSwitchThroughput.scenario(scenario, 256);
    }

    @Benchmark
    @OperationsPerInvocation(EsaSwitchThroughput.PACKETS_PER_PASS)
    public int packet()
    {
        return pipeline.pass();
    }
}
