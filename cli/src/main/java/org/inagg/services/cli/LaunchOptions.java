package org.inagg.services.cli;

import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

import org.inagg.api.launch.Launch;
import org.inagg.api.launch.LaunchEnvironment;
import org.inagg.api.launch.Launcher;
import picocli.CommandLine.Option;

/**
 * {@code --worker-id}, {@code -w} and {@code --launcher} of {@code worker}: which worker this process is, from the
 * flags or else from the environment of the launcher that started it (torchrun, mpirun, srun; see
 * {@link LaunchEnvironment}). Flags override the environment; with both flags the environment is not read at all.
 */
public final class LaunchOptions
{
    private static final String RANK_FLAG = "--worker-id";
    private static final String SIZE_FLAG = "-w";

    @Option(names = RANK_FLAG, paramLabel = "ID",
        description = "This worker's id, 0..workers-1 (default: the launcher's rank: RANK, OMPI_COMM_WORLD_RANK, "
            + "PMI_RANK or SLURM_PROCID).")
    Integer workerId;

    @Option(names = {SIZE_FLAG, "--workers"}, paramLabel = "N",
        description = "Workers in the job (default: the launcher's world size: WORLD_SIZE, OMPI_COMM_WORLD_SIZE, "
            + "PMI_SIZE or SLURM_NTASKS).")
    Integer workers;

    @Option(names = "--launcher", paramLabel = "NAME", defaultValue = "auto",
        description = "Whose environment variables give the rank and world size when the flags do not: auto (every "
            + "launcher's that is set; they must agree) or one of torchrun, openmpi, pmi, slurm (e.g. torchrun when "
            + "srun started torchrun) (default ${DEFAULT-VALUE}).")
    String launcher;

    /**
     * The rank and world size from the flags, the rest from the launcher's variables in {@code env}.
     *
     * @throws IllegalArgumentException saying what to pass or which variables are wrong
     */
    Launch resolve(final Map<String, String> env)
    {
        final Set<Launcher> launchers = "auto".equalsIgnoreCase(launcher)
            ? EnumSet.allOf(Launcher.class) : EnumSet.of(Launcher.byId(launcher));
        if (workerId != null && workers != null)
        {
            return Launch.explicit(workerId, workers, RANK_FLAG + " and " + SIZE_FLAG);
        }
        final Optional<Launch> detected;
        try
        {
            detected = LaunchEnvironment.detect(env, launchers);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException(ex.getMessage() + " (--launcher " + Launcher.ids().replace(", ", "|")
                + " reads one launcher's variables; " + RANK_FLAG + " and " + SIZE_FLAG + " override them)", ex);
        }
        if (detected.isEmpty())
        {
            final String missing = workerId == null && workers == null ? RANK_FLAG + " and " + SIZE_FLAG
                : workerId == null ? RANK_FLAG : SIZE_FLAG;
            throw new IllegalArgumentException("which worker is this? Pass " + missing + ", or start inagg worker "
                + "under a launcher (torchrun, mpirun, srun) that sets " + variables(launchers));
        }
        return detected.get().override(optional(workerId), RANK_FLAG, optional(workers), SIZE_FLAG);
    }

    private static String variables(final Set<Launcher> launchers)
    {
        if (launchers.size() == Launcher.values().length)
        {
            return LaunchEnvironment.describeVariables();
        }
        final Launcher only = launchers.iterator().next();
        return only.rankVariable() + "/" + only.worldSizeVariable() + " (" + only.displayName() + ")";
    }

    private static OptionalInt optional(final Integer value)
    {
        return value == null ? OptionalInt.empty() : OptionalInt.of(value);
    }
}
