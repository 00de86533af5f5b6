package org.inagg.services.worker;

import java.io.PrintWriter;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import org.inagg.api.AllReduceJob;
import org.inagg.api.ElementType;
import org.inagg.api.ReduceOp;
import org.inagg.services.cli.SyntheticGradients;

/**
 * {@code inagg worker --collective C --op O} for anything but the all-reduce SUM: runs the collective on the synthetic
 * tensors of {@link SyntheticGradients} and checks this worker's result against a reference computed from every
 * worker's tensor (every worker can regenerate them from the seed). With {@code -n} elements per tensor and N workers:
 * <ul>
 *   <li>{@code all-reduce --op min|max}: every worker's {@code n} elements, reduced; exact.</li>
 *   <li>{@code reduce-scatter}: every worker's {@code n} elements in N parts of {@code n / N}; worker {@code w}
 *   receives part {@code w} reduced (SUM of floats within the fixed-point bound of docs/protocol.md, everything else
 *   exact).</li>
 *   <li>{@code all-gather}: each worker's {@code n / N} elements, gathered into {@code n} in worker order; exact bits.</li>
 *   <li>{@code broadcast}: worker 0's {@code n} elements on every worker; exact bits.</li>
 * </ul>
 */
final class CollectiveCheck
{
    /** The collectives the CLI names. */
    enum Collective
    {
        ALL_REDUCE("all-reduce"), REDUCE_SCATTER("reduce-scatter"), ALL_GATHER("all-gather"), BROADCAST("broadcast");

        final String cliName;

        Collective(final String cliName)
        {
            this.cliName = cliName;
        }

        static Collective parse(final String name)
        {
            for (final Collective collective : values())
            {
                if (collective.cliName.equals(name))
                {
                    return collective;
                }
            }
            throw new IllegalArgumentException("--collective must be all-reduce, reduce-scatter, all-gather or "
                + "broadcast, not " + name);
        }
    }

    static final int ROOT = 0;

    private final Collective collective;
    private final ReduceOp op;
    private final boolean ints;
    private final int elements;
    private final int workers;
    private final int worker;
    private final long seed;
    private final float[] source;
    private final float[] result;
    private final int[] intSource;
    private final int[] intResult;

    /** Null for the all-reduce SUM, which {@link SyntheticWorkload} runs and checks itself. */
    static CollectiveCheck of(
        final String collectiveName, final String opName, final boolean ints, final int elements, final int workers,
        final int worker, final long seed)
    {
        final Collective collective = Collective.parse(collectiveName);
        final ReduceOp op = parseOp(opName);
        if (collective == Collective.ALL_REDUCE && op == ReduceOp.SUM)
        {
            return null;
        }
        requireParts(collective, elements, workers);
        return new CollectiveCheck(collective, op, ints, elements, workers, worker, seed);
    }

    /**
     * Checks the names and sizes {@link #of} takes, allocating nothing.
     *
     * @throws IllegalArgumentException naming the option and its value.
     */
    static void validate(final String collectiveName, final String opName, final int elements, final int workers)
    {
        final Collective collective = Collective.parse(collectiveName);
        parseOp(opName);
        requireParts(collective, elements, workers);
    }

    private static ReduceOp parseOp(final String opName)
    {
        return switch (opName)
        {
            case "sum" -> ReduceOp.SUM;
            case "min" -> ReduceOp.MIN;
            case "max" -> ReduceOp.MAX;
            default -> throw new IllegalArgumentException("--op must be sum, min or max, not " + opName);
        };
    }

    private static void requireParts(final Collective collective, final int elements, final int workers)
    {
        if ((collective == Collective.REDUCE_SCATTER || collective == Collective.ALL_GATHER) && elements % workers != 0)
        {
            throw new IllegalArgumentException("--collective " + collective.cliName + " cuts -n/--elements into one part"
                + " per worker: " + elements + " is not a multiple of " + workers + " workers");
        }
    }

    private CollectiveCheck(
        final Collective collective, final ReduceOp op, final boolean ints, final int elements, final int workers,
        final int worker, final long seed)
    {
        this.collective = collective;
        this.op = op;
        this.ints = ints;
        this.elements = elements;
        this.workers = workers;
        this.worker = worker;
        this.seed = seed;
        final int in = collective == Collective.ALL_GATHER ? elements / workers : elements;
        final int out = collective == Collective.REDUCE_SCATTER ? elements / workers : elements;
        source = ints ? null : new float[in];
        result = ints ? null : new float[out];
        intSource = ints ? new int[in] : null;
        intResult = ints ? new int[out] : null;
    }

    /** The collective and op as the CLI names them. */
    String describe()
    {
        return collective.cliName + " " + op.name().toLowerCase(java.util.Locale.ROOT);
    }

    /** Runs the collective once (every worker must call it as many times). */
    void run(final AllReduceJob job)
    {
        if (ints)
        {
            SyntheticGradients.fillInts(intSource, worker, 0, seed);
        }
        else
        {
            SyntheticGradients.fill(source, worker, 0, seed);
        }
        final ElementType type = ints ? ElementType.INT32 : ElementType.FLOAT32;
        final MemorySegment in = ints ? MemorySegment.ofArray(intSource) : MemorySegment.ofArray(source);
        final MemorySegment out = ints ? MemorySegment.ofArray(intResult) : MemorySegment.ofArray(result);
        switch (collective)
        {
            case ALL_REDUCE -> job.allReduce(in, out, type, op);
            case REDUCE_SCATTER -> job.reduceScatter(in, out, type, op);
            case ALL_GATHER -> job.allGather(in, out, type);
            case BROADCAST ->
            {
                MemorySegment.copy(in, 0, out, 0, in.byteSize());
                job.broadcast(out, type, ROOT);
            }
        }
    }

    /** Checks the last result against the reference and prints the verdict and the result's checksum. */
    boolean check(final AllReduceJob job, final PrintWriter out)
    {
        final boolean correct;
        if (!ints && op == ReduceOp.SUM && collective == Collective.REDUCE_SCATTER)
        {
            final int part = elements / workers;
            final float[][] inputs = new float[workers][];
            for (int w = 0; w < workers; w++)
            {
                final float[] full = new float[elements];
                SyntheticGradients.fill(full, w, 0, seed);
                inputs[w] = Arrays.copyOfRange(full, worker * part, (worker + 1) * part);
            }
            final long first = SyntheticGradients.firstOutOfBound(result, inputs, job.elementsPerPacket());
            correct = first < 0;
            out.printf("  %-22s %s%n", "collective check", correct ? "yes (" + describe() + ", within the fixed-point "
                + "bound of docs/protocol.md)" : "NO: element " + first + " of " + describe() + " outside the bound");
        }
        else
        {
            final int[] expected = reference();
            final int[] got = ints ? intResult : bits(result);
            final int mismatch = Arrays.mismatch(got, expected);
            correct = mismatch < 0;
            out.printf("  %-22s %s%n", "collective check", correct ? "yes (" + describe() + ", exact)"
                : "NO: element " + mismatch + " of " + describe() + " differs from the reference");
        }
        out.printf("  %-22s %08x%n", "result crc32", ints ? SyntheticGradients.crc32(intResult)
            : SyntheticGradients.crc32(result));
        return correct;
    }

    /** The exact result as raw int32 bits (floats: their bits). */
    private int[] reference()
    {
        final int[][] inputs = new int[workers][];
        final int in = collective == Collective.ALL_GATHER ? elements / workers : elements;
        for (int w = 0; w < workers; w++)
        {
            if (ints)
            {
                inputs[w] = new int[in];
                SyntheticGradients.fillInts(inputs[w], w, 0, seed);
            }
            else
            {
                final float[] floats = new float[in];
                SyntheticGradients.fill(floats, w, 0, seed);
                inputs[w] = bits(floats);
            }
        }
        return switch (collective)
        {
            case ALL_GATHER ->
            {
                final int[] all = new int[elements];
                for (int w = 0; w < workers; w++)
                {
                    System.arraycopy(inputs[w], 0, all, w * in, in);
                }
                yield all;
            }
            case BROADCAST -> inputs[ROOT];
            case REDUCE_SCATTER -> Arrays.copyOfRange(reduce(inputs), worker * (elements / workers),
                (worker + 1) * (elements / workers));
            case ALL_REDUCE -> reduce(inputs);
        };
    }

    /** Element-wise op of int32 values, or of floats given as their bits (SUM of floats never comes here). */
    private int[] reduce(final int[][] inputs)
    {
        final int[] out = inputs[0].clone();
        for (int w = 1; w < workers; w++)
        {
            for (int i = 0; i < out.length; i++)
            {
                out[i] = ints ? reduceInts(out[i], inputs[w][i]) : Float.floatToRawIntBits(
                    reduceFloats(Float.intBitsToFloat(out[i]), Float.intBitsToFloat(inputs[w][i])));
            }
        }
        return out;
    }

    private int reduceInts(final int a, final int b)
    {
        return switch (op)
        {
            case SUM -> a + b;
            case MIN -> Math.min(a, b);
            case MAX -> Math.max(a, b);
        };
    }

    private float reduceFloats(final float a, final float b)
    {
        return op == ReduceOp.MIN ? Math.min(a, b) : Math.max(a, b);
    }

    private static int[] bits(final float[] floats)
    {
        final int[] bits = new int[floats.length];
        for (int i = 0; i < floats.length; i++)
        {
            bits[i] = Float.floatToRawIntBits(floats[i]);
        }
        return bits;
    }
}
