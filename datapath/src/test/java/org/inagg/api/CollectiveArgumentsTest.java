package org.inagg.api;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import org.inagg.transport.InProcessNetwork;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Bad arguments of the collectives are refused on the caller's thread, naming the collective, the job, the worker and
 * the sizes, before anything is queued or any buffer touched: job 3, worker 1 of 4, never joined (nothing could be
 * sent).
 */
class CollectiveArgumentsTest
{
    private final InProcessNetwork network = new InProcessNetwork(2, 1 << 16, 2048);
    private final AllReduceJob job = AllReduceJob.create(new JobContext().jobId(3).workers(4).workerId(1)
        .transport(network.endpoint(1)).switchPeer(0));

    @AfterEach
    void tearDown()
    {
        job.close();
    }

    @Test
    void shouldRefuseAReduceScatterWhoseSourceIsNotWorkersTimesTheDestination()
    {
        final float[] source = filled(10, 7f);
        final float[] destination = filled(3, 5f);
        assertThatIllegalArgumentException().isThrownBy(() -> job.reduceScatter(source, destination, ReduceOp.SUM))
            .withMessageContaining("reduce-scatter on job 3 worker 1 of 4")
            .withMessageContaining("source has 10 elements but 4 workers x 3 destination elements = 12")
            .withMessageContaining("nothing was sent");
        assertThat(source).containsOnly(7f);
        assertThat(destination).containsOnly(5f);
    }

    @Test
    void shouldRefuseGeneralPartsThatDoNotMatchOrOwnersOutOfRange()
    {
        final MemorySegment source = Arena.ofAuto().allocate(6 * Float.BYTES);
        final MemorySegment destination = Arena.ofAuto().allocate(2 * Float.BYTES);
        assertThatIllegalArgumentException().isThrownBy(() -> job.reduceScatter(source, destination,
            ElementType.FLOAT32, ReduceOp.MAX, 2, new int[] {0, 4, 1}))
            .withMessageContaining("reduce-scatter on job 3 worker 1")
            .withMessageContaining("owner 4 of part 1 is not a worker id of a job of 4 workers");
        assertThatIllegalArgumentException().isThrownBy(() -> job.reduceScatter(source, destination,
            ElementType.FLOAT32, ReduceOp.MAX, 2, new int[] {1, 1, 0}))
            .withMessageContaining("destination has 2 elements but this worker owns 2 parts x 2 elements = 4");
        assertThatIllegalArgumentException().isThrownBy(() -> job.reduceScatter(source, destination,
            ElementType.FLOAT32, ReduceOp.SUM, 4, new int[] {1, 0}))
            .withMessageContaining("source has 6 elements but 2 parts x 4 elements = 8");
        assertThatIllegalArgumentException().isThrownBy(() -> job.allGather(source, ElementType.INT32, 3,
            new int[] {0, -1}))
            .withMessageContaining("all-gather on job 3 worker 1")
            .withMessageContaining("owner -1 of part 1");
    }

    @Test
    void shouldRefuseAnAllGatherWhoseDestinationIsNotWorkersTimesTheSourceAndLeaveItUntouched()
    {
        final int[] mine = {1, 2};
        final int[] all = new int[7];
        Arrays.fill(all, 9);
        assertThatIllegalArgumentException().isThrownBy(() -> job.allGather(mine, all))
            .withMessageContaining("all-gather on job 3 worker 1 of 4")
            .withMessageContaining("destination has 7 elements but 4 workers x 2 source elements = 8");
        assertThat(all).containsOnly(9);
    }

    @Test
    void shouldRefuseABroadcastRootThatIsNotAWorker()
    {
        final float[] data = filled(4, 1f);
        assertThatIllegalArgumentException().isThrownBy(() -> job.broadcast(data, 4))
            .withMessageContaining("broadcast on job 3 worker 1 of 4")
            .withMessageContaining("root 4 is not a worker id of a job of 4 workers (0..3)");
        assertThatIllegalArgumentException().isThrownBy(() -> job.broadcast(data, -1))
            .withMessageContaining("root -1");
        assertThat(data).containsOnly(1f);
    }

    @Test
    void shouldRefuseMixedTypesAndAMissingOp()
    {
        final MemorySegment ints = MemorySegment.ofArray(new int[8]);
        final MemorySegment floats = MemorySegment.ofArray(new float[8]);
        assertThatIllegalArgumentException().isThrownBy(() -> job.allReduce(ints, floats, ElementType.INT32,
            ReduceOp.MIN))
            .withMessageContaining("all-reduce on job 3 worker 1")
            .withMessageContaining("mixed types: destination is a float[] but the element type is INT32");
        assertThatIllegalArgumentException().isThrownBy(() -> job.broadcast(ints, ElementType.FLOAT32, 0))
            .withMessageContaining("mixed types: data is a int[]");
        assertThatIllegalArgumentException().isThrownBy(() -> job.allReduce(new float[2], (ReduceOp)null))
            .withMessageContaining("the reduce op must be given");
        assertThatIllegalArgumentException().isThrownBy(() -> job.allReduce(Arena.ofAuto().allocate(8),
            Arena.ofAuto().allocate(12), ElementType.FLOAT32, ReduceOp.SUM))
            .withMessageContaining("source has 2 elements but destination has 3");
    }

    private static float[] filled(final int n, final float value)
    {
        final float[] a = new float[n];
        Arrays.fill(a, value);
        return a;
    }
}
