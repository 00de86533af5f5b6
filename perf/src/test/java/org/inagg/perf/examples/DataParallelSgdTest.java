package org.inagg.perf.examples;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class DataParallelSgdTest
{
    @Test
    void shouldReachTheSameWeightsAsSingleWorkerTrainingOnTheUnionOfTheData()
    {
        final DataParallelSgd.Problem problem = DataParallelSgd.Problem.generate(2048, 300, 3);
        final float[] alone = DataParallelSgd.trainAlone(problem, 100, 0.1f);
        final float[][] parallel = DataParallelSgd.trainDataParallel(problem, 4, 100, 0.1f);
        for (int w = 0; w < parallel.length; w++)
        {
            assertThat(parallel[w]).as("worker %d has the same weights as worker 0", w).containsExactly(parallel[0]);
        }
        // Trained at all: the weights moved far from zero, and agree with single-worker training.
        double norm = 0;
        for (int d = 0; d < alone.length; d++)
        {
            norm += alone[d] * alone[d];
            assertThat(parallel[0][d]).as("weight %d", d).isCloseTo(alone[d], within(1e-4f));
        }
        assertThat(norm).isGreaterThan(10);
    }
}
