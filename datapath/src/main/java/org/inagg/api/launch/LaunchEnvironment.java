package org.inagg.api.launch;

import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Reads a worker's rank and world size from the environment its launcher (torchrun, Open MPI's mpirun, an MPICH or
 * Intel MPI launcher through PMI, Slurm's srun) gave it, so that one command line serves every worker of a job:
 *
 * <pre>{@code
 * Launch launch = LaunchEnvironment.detect(System.getenv()).orElseThrow(() ->
 *     new IllegalStateException("not started by a launcher; read " + LaunchEnvironment.describeVariables()));
 * new JobContext().jobId(7).workerId(launch.rank()).workers(launch.worldSize())...
 * }</pre>
 *
 * <p>The rules, each failure an {@link IllegalArgumentException} whose message names the variables and values:
 * <ul>
 *   <li>A launcher counts as present when its rank or its world size variable is set ({@link Launcher} lists them);
 *       then both must be set, decimal and in range ({@code 0 <= rank < size}). Its local rank and local world size
 *       are read when set and checked the same way; the run id is taken as it is.</li>
 *   <li>Several launchers may be present: Slurm's srun with PMI sets both sets of variables. Every value two of them
 *       set must agree; a disagreement (RANK=1 but OMPI_COMM_WORLD_RANK=2) is an error naming both. This catches
 *       nested launchers too (srun starting one torchrun per node gives each worker the node's SLURM_PROCID): read
 *       the inner launcher only, with {@link #detect(Map, Collection)}.</li>
 *   <li>No launcher present: {@link Optional#empty()}.</li>
 * </ul>
 *
 * <p>Only the rank, world size, local rank, local world size and run id are read. The job id, the switch's address and
 * everything else come from the caller: MASTER_ADDR/MASTER_PORT are torch's rendezvous point, not the switch, and
 * run ids are strings (TORCHELASTIC_RUN_ID) or numbers beyond the 16-bit job id (SLURM_JOB_ID), so neither is turned
 * into a job id.
 */
public final class LaunchEnvironment
{
    private LaunchEnvironment()
    {
    }

    /** The launch described by any of the {@link Launcher}s' variables in {@code env}; empty when none is set. */
    public static Optional<Launch> detect(final Map<String, String> env)
    {
        return detect(env, EnumSet.allOf(Launcher.class));
    }

    /**
     * The launch described by the variables of {@code launchers} in {@code env}, the others' ignored; empty when none
     * of theirs is set.
     *
     * @throws IllegalArgumentException naming the variable when a set is partial, a number malformed or out of range,
     *                                  or naming both launchers and their values when two disagree
     */
    public static Optional<Launch> detect(final Map<String, String> env, final Collection<Launcher> launchers)
    {
        final EnumSet<Launcher> considered = EnumSet.noneOf(Launcher.class);
        considered.addAll(launchers);
        final List<Reading> readings = new ArrayList<>();
        for (final Launcher launcher : considered)
        {
            final Reading reading = read(env, launcher);
            if (reading != null)
            {
                readings.add(reading);
            }
        }
        if (readings.isEmpty())
        {
            return Optional.empty();
        }
        final Reading first = readings.get(0);
        Reading localRankFrom = null;
        Reading localSizeFrom = null;
        String runId = null;
        for (final Reading reading : readings)
        {
            if (reading.rank != first.rank || reading.worldSize != first.worldSize)
            {
                throw new IllegalArgumentException("launchers disagree: " + first.describe() + " but "
                    + reading.describe() + "; start the worker under one launcher, read one launcher's variables "
                    + "only, or give the rank and world size explicitly");
            }
            localRankFrom = agreeLocal(localRankFrom, reading, true);
            localSizeFrom = agreeLocal(localSizeFrom, reading, false);
            runId = runId != null ? runId : reading.runId;
        }
        final String source = readings.stream().map(r -> r.launcher.displayName()).collect(Collectors.joining(" and "));
        return Optional.of(new Launch(first.rank, first.worldSize,
            localRankFrom == null ? Launch.UNKNOWN : localRankFrom.localRank,
            localSizeFrom == null ? Launch.UNKNOWN : localSizeFrom.localWorldSize, runId, source));
    }

    /**
     * The rank and world size variables read, for messages: {@code RANK/WORLD_SIZE (torchrun),
     * OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE (Open MPI), ...}.
     */
    public static String describeVariables()
    {
        final StringBuilder text = new StringBuilder();
        for (final Launcher launcher : Launcher.values())
        {
            text.append(text.isEmpty() ? "" : ", ").append(launcher.rankVariable()).append('/')
                .append(launcher.worldSizeVariable()).append(" (").append(launcher.displayName()).append(')');
        }
        return text.toString();
    }

    private record Reading(Launcher launcher, int rank, int worldSize, int localRank, int localWorldSize, String runId)
    {
        String describe()
        {
            return launcher.displayName() + " says rank " + rank + " of " + worldSize + " (" + launcher.rankVariable()
                + "=" + rank + ", " + launcher.worldSizeVariable() + "=" + worldSize + ")";
        }
    }

    private static Reading read(final Map<String, String> env, final Launcher launcher)
    {
        final String rankText = env.get(launcher.rankVariable());
        final String sizeText = env.get(launcher.worldSizeVariable());
        if (rankText == null && sizeText == null)
        {
            return null;
        }
        if (rankText == null || sizeText == null)
        {
            final String set = rankText == null ? launcher.worldSizeVariable() : launcher.rankVariable();
            final String missing = rankText == null ? launcher.rankVariable() : launcher.worldSizeVariable();
            throw new IllegalArgumentException(set + " is set but " + missing + " is not: " + launcher.displayName()
                + " sets both; set " + missing + " too or unset " + set);
        }
        final int rank = parse(launcher.rankVariable(), rankText, 0);
        final int size = parse(launcher.worldSizeVariable(), sizeText, 1);
        if (rank >= size)
        {
            throw new IllegalArgumentException(launcher.rankVariable() + "=" + rank + " is outside 0.." + (size - 1)
                + " (" + launcher.worldSizeVariable() + "=" + size + ", " + launcher.displayName() + ")");
        }
        final String localRankText = env.get(launcher.localRankVariable());
        final String localSizeText = env.get(launcher.localWorldSizeVariable());
        final int localRank = localRankText == null ? Launch.UNKNOWN
            : parse(launcher.localRankVariable(), localRankText, 0);
        final int localSize = localSizeText == null ? Launch.UNKNOWN
            : parse(launcher.localWorldSizeVariable(), localSizeText, 1);
        if (localRank != Launch.UNKNOWN && localSize != Launch.UNKNOWN && localRank >= localSize)
        {
            throw new IllegalArgumentException(launcher.localRankVariable() + "=" + localRank + " is outside 0.."
                + (localSize - 1) + " (" + launcher.localWorldSizeVariable() + "=" + localSize + ", "
                + launcher.displayName() + ")");
        }
        final String runId = launcher.runIdVariable() == null ? null : env.get(launcher.runIdVariable());
        return new Reading(launcher, rank, size, localRank, localSize, runId == null || runId.isEmpty() ? null : runId);
    }

    private static int parse(final String variable, final String text, final int min)
    {
        final int value;
        try
        {
            value = Integer.parseInt(text.strip());
        }
        catch (final NumberFormatException e)
        {
            throw new IllegalArgumentException(variable + "='" + text + "' is not a whole number", e);
        }
        if (value < min)
        {
            throw new IllegalArgumentException(variable + "=" + value + " must be at least " + min);
        }
        return value;
    }

    /** The reading that set the local rank (or size) so far: {@code known}, or {@code reading} if it is the first. */
    private static Reading agreeLocal(final Reading known, final Reading reading, final boolean rank)
    {
        final int value = rank ? reading.localRank : reading.localWorldSize;
        if (value == Launch.UNKNOWN)
        {
            return known;
        }
        if (known == null)
        {
            return reading;
        }
        final int knownValue = rank ? known.localRank : known.localWorldSize;
        if (knownValue != value)
        {
            throw new IllegalArgumentException("launchers disagree: " + known.launcher.displayName() + " says "
                + (rank ? known.launcher.localRankVariable() : known.launcher.localWorldSizeVariable()) + "="
                + knownValue + " but " + reading.launcher.displayName() + " says "
                + (rank ? reading.launcher.localRankVariable() : reading.launcher.localWorldSizeVariable()) + "="
                + value);
        }
        return known;
    }
}
