package org.inagg.services.worker;

import java.io.PrintWriter;
import java.util.Arrays;

import org.inagg.api.AllReduceJob;
import org.inagg.services.cli.SyntheticGradients;

/**
 * What {@code inagg worker} all-reduces: its synthetic tensor (of {@link SyntheticGradients}, which every worker can
 * regenerate from the seed) through the job's collective, and the check of the last result against a reference: the
 * all-reduce SUM of floats within the fixed-point bound of docs/protocol.md, of int32 exactly; any other collective or
 * op through {@link CollectiveCheck}.
 */
public final class SyntheticWorkload
{
    private final CollectiveCheck collective;
    private final boolean ints;
    private final int elements;
    private final int workers;
    private final long seed;
    private final float[] source;
    private final float[] result;
    private final int[] intSource;
    private final int[] intResult;

    private SyntheticWorkload(final WorkerContext context, final int workerId, final int workers)
    {
        context.conclude();
        this.ints = context.ints();
        this.elements = context.elements();
        this.workers = workers;
        this.seed = context.seed();
        this.collective = CollectiveCheck.of(context.collective(), context.op(), ints, elements, workers, workerId,
            seed);
        final boolean sum = collective == null;
        source = sum && !ints ? new float[elements] : null;
        result = sum && !ints ? new float[elements] : null;
        intSource = sum && ints ? new int[elements] : null;
        intResult = sum && ints ? new int[elements] : null;
        if (intSource != null)
        {
            SyntheticGradients.fillInts(intSource, workerId, 0, seed);
        }
        else if (source != null)
        {
            SyntheticGradients.fill(source, workerId, 0, seed);
        }
    }

    /** The tensors of {@code node}'s worker, as its context describes them (its worker id may be the controller's). */
    public static SyntheticWorkload of(final WorkerNode node)
    {
        return new SyntheticWorkload(node.context(), node.workerId(), node.workers());
    }

    /** ", COLLECTIVE OP" for anything but the all-reduce SUM; "" for that. */
    public String describe()
    {
        return collective == null ? "" : ", " + collective.describe();
    }

    /** Runs the collective once (every worker of the job must call it as many times). */
    public void run(final AllReduceJob job)
    {
        if (collective != null)
        {
            collective.run(job);
        }
        else if (ints)
        {
            job.allReduce(intSource, intResult);
        }
        else
        {
            job.allReduce(source, result);
        }
    }

    /** Checks the last result against the reference and prints the verdict and the result's checksum. */
    public boolean check(final AllReduceJob job, final PrintWriter out)
    {
        if (collective != null)
        {
            return collective.check(job, out);
        }
        final boolean correct;
        if (ints)
        {
            correct = Arrays.equals(intResult, SyntheticGradients.referenceInts(elements, workers, 0, seed));
            out.printf("  %-22s %s%n", "exact int32 sum", correct ? "yes" : "NO");
            out.printf("  %-22s %08x%n", "result crc32", SyntheticGradients.crc32(intResult));
        }
        else
        {
            final double[] error = SyntheticGradients.maxError(result,
                SyntheticGradients.reference(elements, workers, 0, seed));
            final long outside = SyntheticGradients.outOfBound(result, workers, 0, seed, job.elementsPerPacket());
            correct = outside == 0;
            out.printf("  %-22s abs %.3e, rel %.3e (vs double-precision sum)%n", "max error", error[0], error[1]);
            out.printf("  %-22s %s%n", "within bound", correct ? "yes (docs/protocol.md)"
                : "NO: " + outside + " elements outside the fixed-point bound");
            out.printf("  %-22s %08x%n", "result crc32", SyntheticGradients.crc32(result));
        }
        return correct;
    }
}
