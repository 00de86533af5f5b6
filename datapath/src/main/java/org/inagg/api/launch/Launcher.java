package org.inagg.api.launch;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The launchers whose environment variables say which worker a process is. Each sets a rank and a world size (both
 * required, read together); a local rank, a local world size and a run id are read where the launcher sets them.
 *
 * <table>
 *   <caption>Variables read</caption>
 *   <tr><th>launcher</th><th>rank</th><th>world size</th><th>local rank</th><th>local world size</th><th>run id</th></tr>
 *   <tr><td>torchrun</td><td>RANK</td><td>WORLD_SIZE</td><td>LOCAL_RANK</td><td>LOCAL_WORLD_SIZE</td>
 *       <td>TORCHELASTIC_RUN_ID</td></tr>
 *   <tr><td>Open MPI</td><td>OMPI_COMM_WORLD_RANK</td><td>OMPI_COMM_WORLD_SIZE</td><td>OMPI_COMM_WORLD_LOCAL_RANK</td>
 *       <td>OMPI_COMM_WORLD_LOCAL_SIZE</td><td>OMPI_MCA_ess_base_jobid (Open MPI 4: the same at every rank of one
 *       mpirun)</td></tr>
 *   <tr><td>PMI (MPICH, Intel MPI, Slurm's PMI)</td><td>PMI_RANK</td><td>PMI_SIZE</td><td>MPI_LOCALRANKID</td>
 *       <td>MPI_LOCALNRANKS</td><td>-</td></tr>
 *   <tr><td>Slurm (srun)</td><td>SLURM_PROCID</td><td>SLURM_NTASKS</td><td>SLURM_LOCALID</td>
 *       <td>SLURM_NTASKS_PER_NODE</td><td>SLURM_JOB_ID</td></tr>
 * </table>
 */
public enum Launcher
{
    TORCHRUN("torchrun", "torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "TORCHELASTIC_RUN_ID"),
    OPEN_MPI("openmpi", "Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
        "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_MCA_ess_base_jobid"),
    PMI("pmi", "PMI", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", null),
    SLURM("slurm", "Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE", "SLURM_JOB_ID");

    private final String id;
    private final String displayName;
    private final String rankVariable;
    private final String worldSizeVariable;
    private final String localRankVariable;
    private final String localWorldSizeVariable;
    private final String runIdVariable;

    Launcher(final String id, final String displayName, final String rankVariable, final String worldSizeVariable,
        final String localRankVariable, final String localWorldSizeVariable, final String runIdVariable)
    {
        this.id = id;
        this.displayName = displayName;
        this.rankVariable = rankVariable;
        this.worldSizeVariable = worldSizeVariable;
        this.localRankVariable = localRankVariable;
        this.localWorldSizeVariable = localWorldSizeVariable;
        this.runIdVariable = runIdVariable;
    }

    /** The short name used on command lines: {@code torchrun}, {@code openmpi}, {@code pmi}, {@code slurm}. */
    public String id()
    {
        return id;
    }

    /** The name used in messages: {@code torchrun}, {@code Open MPI}, {@code PMI}, {@code Slurm}. */
    public String displayName()
    {
        return displayName;
    }

    public String rankVariable()
    {
        return rankVariable;
    }

    public String worldSizeVariable()
    {
        return worldSizeVariable;
    }

    public String localRankVariable()
    {
        return localRankVariable;
    }

    public String localWorldSizeVariable()
    {
        return localWorldSizeVariable;
    }

    /** The variable holding the launcher's run or job id, or null where none is read. */
    public String runIdVariable()
    {
        return runIdVariable;
    }

    /** Every variable this launcher's detection reads. */
    public List<String> variables()
    {
        return Stream.of(rankVariable, worldSizeVariable, localRankVariable, localWorldSizeVariable, runIdVariable)
            .filter(v -> v != null).toList();
    }

    /** The launcher of this {@link #id()}, case-insensitive; the error lists the known ones. */
    public static Launcher byId(final String id)
    {
        for (final Launcher launcher : values())
        {
            if (launcher.id.equals(id.toLowerCase(Locale.ROOT)))
            {
                return launcher;
            }
        }
        throw new IllegalArgumentException("unknown launcher '" + id + "': expected one of " + ids());
    }

    /** The {@link #id()}s, separated by commas. */
    public static String ids()
    {
        return Arrays.stream(values()).map(Launcher::id).collect(Collectors.joining(", "));
    }
}
