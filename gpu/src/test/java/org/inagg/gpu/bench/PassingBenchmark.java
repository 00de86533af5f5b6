package org.inagg.gpu.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.inagg.api.AllReduceJob;
import org.inagg.gpu.CpuReducer;
import org.inagg.gpu.DeviceBuffer;
import org.inagg.gpu.Gradients;
import org.inagg.gpu.ReductionDevice;
import org.inagg.gpu.harness.Hosts;
import org.inagg.gpu.harness.InProcessFabric;
import org.inagg.gpu.passing.PassingAllReduce;
import org.inagg.gpu.passing.PerGpuAllReduce;
import org.inagg.p4.softswitch.SwitchCounter;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * End to end: 2 hosts x 4 logical GPUs (CPU reducers) on the in-process transport, one all-reduce of
 * {@code elements} floats per GPU per operation; PASSING (4 chunk jobs of 2 contributors) against the per-GPU
 * in-network all-reduce (one job of 8 contributors). Everything (switch, 8 or 16 worker agents, the hosts' reduction
 * work) shares this machine's cores, so the figures compare the two schemes' work, not a network.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class PassingBenchmark
{
    public static final int HOSTS = 2;
    public static final int GPUS = 4;
    private static final int LANES = 256;

    @Param({"1048576"})
    public int elements;

    @Param({"2"})
    public int agentThreads;

    private InProcessFabric passingFabric;
    private InProcessFabric flatFabric;
    private Hosts hosts;
    private final List<List<DeviceBuffer>> gradients = new ArrayList<>();
    private final List<List<DeviceBuffer>> pristine = new ArrayList<>();
    private PassingAllReduce[] passing;
    private PerGpuAllReduce[] perGpu;

    @Setup(Level.Trial)
    public void setUp()
    {
        passingFabric = InProcessFabric.passing(HOSTS, GPUS, LANES, agentThreads);
        flatFabric = InProcessFabric.flat(HOSTS * GPUS, LANES, agentThreads);
        hosts = new Hosts(HOSTS);
        passing = new PassingAllReduce[HOSTS];
        perGpu = new PerGpuAllReduce[HOSTS];
        for (int h = 0; h < HOSTS; h++)
        {
            final List<ReductionDevice> devices = new ArrayList<>();
            final List<AllReduceJob> chunkJobs = new ArrayList<>();
            final List<AllReduceJob> flatJobs = new ArrayList<>();
            final List<DeviceBuffer> perHost = new ArrayList<>();
            final List<DeviceBuffer> perHostPristine = new ArrayList<>();
            for (int g = 0; g < GPUS; g++)
            {
                devices.add(new CpuReducer());
                chunkJobs.add(passingFabric.job(g, h));
                flatJobs.add(flatFabric.job(0, h * GPUS + g));
                final float[] x = Gradients.random(h * GPUS + g, elements, LANES);
                perHost.add(Gradients.buffer(x));
                perHostPristine.add(Gradients.buffer(x));
            }
            gradients.add(perHost);
            pristine.add(perHostPristine);
            passing[h] = new PassingAllReduce(devices, chunkJobs, LANES, PassingAllReduce.PIECE_BLOCKS_DEFAULT);
            perGpu[h] = new PerGpuAllReduce(devices, flatJobs);
        }
    }

    /** In-place all-reduces would grow the gradients 8x per call: restore them (not timed; ~10 ms operations). */
    @Setup(Level.Invocation)
    public void restore()
    {
        for (int h = 0; h < HOSTS; h++)
        {
            for (int g = 0; g < GPUS; g++)
            {
                java.lang.foreign.MemorySegment.copy(pristine.get(h).get(g).hostSegment().orElseThrow(), 0,
                    gradients.get(h).get(g).hostSegment().orElseThrow(), 0, elements * 4L);
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        System.out.printf("%n[inagg-gpu] switch contributions aggregated in this trial: PASSING %d, per-GPU INA %d%n",
            passingFabric.switchCounter(SwitchCounter.CONTRIBUTIONS),
            flatFabric.switchCounter(SwitchCounter.CONTRIBUTIONS));
        for (int h = 0; h < HOSTS; h++)
        {
            passing[h].close();
            perGpu[h].close();
        }
        gradients.forEach(host -> host.forEach(DeviceBuffer::close));
        pristine.forEach(host -> host.forEach(DeviceBuffer::close));
        hosts.close();
        passingFabric.close();
        flatFabric.close();
    }

    @Benchmark
    public void passing()
    {
        hosts.run(h -> passing[h].allReduce(gradients.get(h), elements));
    }

    @Benchmark
    public void perGpuIna()
    {
        hosts.run(h -> perGpu[h].allReduce(gradients.get(h), elements));
    }
}
