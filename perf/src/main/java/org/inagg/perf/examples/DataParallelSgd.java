package org.inagg.perf.examples;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;

import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.inagg.agent.CounterRegistry;
import org.inagg.api.AllReduceJob;
import org.inagg.api.JobContext;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.transport.InProcessNetwork;
import org.inagg.wire.InaggHeader;

/**
 * Data-parallel SGD through inagg, using only the public API: a linear regression problem is split across W workers,
 * each computes the gradient of its shard, the gradients are all-reduced through a software switch, and every worker
 * applies the same update. The result matches single-worker training on the union of the shards within float
 * tolerance. Copy this file as a template: replace the in-process network by {@code UdpTransport} (or DPDK) and the
 * software switch by a real one, and the regression by your model.
 */
public final class DataParallelSgd
{
    /** A synthetic regression problem y = X w* + noise. */
    public record Problem(float[][] features, float[] targets, int dimensions)
    {
        public static Problem generate(final int samples, final int dimensions, final long seed)
        {
            final SplittableRandom random = new SplittableRandom(seed);
            final float[] truth = new float[dimensions];
            for (int d = 0; d < dimensions; d++)
            {
                truth[d] = (float)random.nextGaussian();
            }
            final float[][] x = new float[samples][dimensions];
            final float[] y = new float[samples];
            for (int s = 0; s < samples; s++)
            {
                double dot = 0;
                for (int d = 0; d < dimensions; d++)
                {
                    x[s][d] = (float)random.nextGaussian();
                    dot += x[s][d] * truth[d];
                }
                y[s] = (float)(dot + 0.01 * random.nextGaussian());
            }
            return new Problem(x, y, dimensions);
        }
    }

    private DataParallelSgd()
    {
    }

    /** Sum over samples [from, to) of the squared-error gradient at {@code weights}, into {@code gradient}. */
    static void gradient(final Problem problem, final float[] weights, final int from, final int to,
        final float[] gradient)
    {
        java.util.Arrays.fill(gradient, 0);
        for (int s = from; s < to; s++)
        {
            final float[] x = problem.features()[s];
            float error = -problem.targets()[s];
            for (int d = 0; d < weights.length; d++)
            {
                error += x[d] * weights[d];
            }
            for (int d = 0; d < weights.length; d++)
            {
                gradient[d] += 2 * error * x[d];
            }
        }
    }

    /** Single-worker full-batch gradient descent on all samples. */
    public static float[] trainAlone(final Problem problem, final int steps, final float learningRate)
    {
        final float[] weights = new float[problem.dimensions()];
        final float[] gradient = new float[problem.dimensions()];
        final int samples = problem.targets().length;
        for (int step = 0; step < steps; step++)
        {
            gradient(problem, weights, 0, samples, gradient);
            for (int d = 0; d < weights.length; d++)
            {
                weights[d] -= learningRate * gradient[d] / samples;
            }
        }
        return weights;
    }

    /**
     * The same training with the samples split over {@code workers} workers whose gradients are summed by inagg.
     *
     * @return every worker's final weights (they are identical).
     */
    public static float[][] trainDataParallel(
        final Problem problem, final int workers, final int steps, final float learningRate)
    {
        // The network and the switch: in a real deployment these are NICs and a programmable switch.
        final int lanes = 256;
        final InProcessNetwork network = new InProcessNetwork(workers + 1, 1 << 20, InaggHeader.messageLength(lanes));
        final SoftwareSwitch softwareSwitch = new SoftwareSwitch(network.endpoint(0), new CounterRegistry(64), 64);
        softwareSwitch.addJob(new SwitchJobConfig(1, workers, 64, lanes));
        final AgentRunner switchRunner = new AgentRunner(new BackoffIdleStrategy(), Throwable::printStackTrace, null,
            softwareSwitch);
        AgentRunner.startOnThread(switchRunner);

        final List<AllReduceJob> jobs = new ArrayList<>();
        try
        {
            for (int w = 0; w < workers; w++)
            {
                jobs.add(AllReduceJob.open(new JobContext()
                    .jobId(1).workerId(w).workers(workers)
                    .transport(network.endpoint(w + 1)).switchPeer(0)));
            }
            final int samples = problem.targets().length;
            final float[][] weights = new float[workers][problem.dimensions()];
            final float[][] gradients = new float[workers][problem.dimensions()];
            for (int step = 0; step < steps; step++)
            {
                // Each worker: local gradient on its shard, then all-reduce (asynchronously, as workers run in parallel).
                final CompletableFuture<?>[] reductions = new CompletableFuture<?>[workers];
                for (int w = 0; w < workers; w++)
                {
                    gradient(problem, weights[w], samples * w / workers, samples * (w + 1) / workers, gradients[w]);
                    reductions[w] = jobs.get(w).allReduceAsync(gradients[w]);
                }
                for (int w = 0; w < workers; w++)
                {
                    reductions[w].join();
                    for (int d = 0; d < problem.dimensions(); d++)
                    {
                        weights[w][d] -= learningRate * gradients[w][d] / samples;
                    }
                }
            }
            return weights;
        }
        finally
        {
            jobs.forEach(AllReduceJob::close);
            switchRunner.close();
        }
    }

    public static void main(final String[] args)
    {
        final Problem problem = Problem.generate(4096, 300, 1);
        final float[] alone = trainAlone(problem, 200, 0.1f);
        final float[][] parallel = trainDataParallel(problem, 4, 200, 0.1f);
        double maxDifference = 0;
        for (int d = 0; d < alone.length; d++)
        {
            maxDifference = Math.max(maxDifference, Math.abs(alone[d] - parallel[0][d]));
        }
        System.out.printf("4 workers through inagg vs 1 worker on all data, 200 steps: max |w - w'| = %.3e%n",
            maxDifference);
    }
}
