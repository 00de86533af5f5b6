package org.inagg.api.launch;

import java.util.OptionalInt;

/**
 * Which worker this process is: its rank in {@code 0..worldSize-1} (inagg's worker id) and the world size (the job's
 * workers), with the launcher's local rank and local world size (this host's share; {@link #UNKNOWN} where nobody
 * said) and run id (null where none) for information, and where the values came from.
 *
 * @param rank           this worker's id, {@code 0..worldSize-1}
 * @param worldSize      the workers in the job, at least 1
 * @param localRank      the rank among this host's workers, or {@link #UNKNOWN}
 * @param localWorldSize the workers on this host, or {@link #UNKNOWN}
 * @param runId          the launcher's run or job id (TORCHELASTIC_RUN_ID, SLURM_JOB_ID), or null
 * @param source         where rank and world size came from, for messages: {@code "Open MPI"}, {@code "PMI and
 *                       Slurm"} (agreeing), {@code "--worker-id and -w"}, {@code "--worker-id, world size from
 *                       torchrun"}
 */
public record Launch(int rank, int worldSize, int localRank, int localWorldSize, String runId, String source)
{
    /** A local rank or local world size nobody gave. */
    public static final int UNKNOWN = -1;

    public Launch
    {
        if (source == null || source.isEmpty())
        {
            throw new IllegalArgumentException("a launch needs a source");
        }
        if (worldSize < 1)
        {
            throw new IllegalArgumentException("world size must be at least 1, got " + worldSize + " (from " + source
                + ")");
        }
        if (rank < 0 || rank >= worldSize)
        {
            throw new IllegalArgumentException("rank " + rank + " is outside 0.." + (worldSize - 1) + " (world size "
                + worldSize + ", from " + source + ")");
        }
        if (localWorldSize != UNKNOWN && localWorldSize < 1)
        {
            throw new IllegalArgumentException("local world size must be at least 1, got " + localWorldSize
                + " (from " + source + ")");
        }
        if (localRank != UNKNOWN && (localRank < 0 || localWorldSize != UNKNOWN && localRank >= localWorldSize))
        {
            throw new IllegalArgumentException("local rank " + localRank + " is outside 0.."
                + (localWorldSize == UNKNOWN ? "" : Integer.toString(localWorldSize - 1)) + " (from " + source + ")");
        }
    }

    /** A launch given explicitly (flags, a configuration file), with no local rank, local size or run id. */
    public static Launch explicit(final int rank, final int worldSize, final String source)
    {
        return new Launch(rank, worldSize, UNKNOWN, UNKNOWN, null, source);
    }

    /**
     * This launch with its rank and/or world size replaced by explicit values (flags override the environment). The
     * local rank, local world size and run id stay the launcher's.
     *
     * @param rank            the explicit rank, or empty to keep this one
     * @param rankOrigin      where the explicit rank came from, e.g. {@code "--worker-id"}
     * @param worldSize       the explicit world size, or empty to keep this one
     * @param worldSizeOrigin where the explicit world size came from, e.g. {@code "-w"}
     * @throws IllegalArgumentException naming both origins when the rank falls outside the world size
     */
    public Launch override(final OptionalInt rank, final String rankOrigin, final OptionalInt worldSize,
        final String worldSizeOrigin)
    {
        if (rank.isEmpty() && worldSize.isEmpty())
        {
            return this;
        }
        final int newRank = rank.orElse(this.rank);
        final int newSize = worldSize.orElse(this.worldSize);
        final String rankFrom = rank.isPresent() ? rankOrigin : source;
        final String sizeFrom = worldSize.isPresent() ? worldSizeOrigin : source;
        if (newSize < 1)
        {
            throw new IllegalArgumentException("world size must be at least 1, got " + newSize + " from " + sizeFrom);
        }
        if (newRank < 0 || newRank >= newSize)
        {
            throw new IllegalArgumentException("rank " + newRank + " from " + rankFrom + " is outside 0.."
                + (newSize - 1) + " (world size " + newSize + " from " + sizeFrom + ")");
        }
        final String newSource = rank.isPresent() && worldSize.isPresent()
            ? rankOrigin + " and " + worldSizeOrigin
            : rankFrom + ", world size from " + sizeFrom;
        return new Launch(newRank, newSize, localRank, localWorldSize, runId, newSource);
    }
}
