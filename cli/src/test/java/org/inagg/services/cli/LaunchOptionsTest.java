package org.inagg.services.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import org.inagg.api.launch.Launch;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code inagg worker}'s --worker-id, -w and --launcher against launcher environments (no processes started). */
class LaunchOptionsTest
{
    private static final Map<String, String> OPEN_MPI_RANK_2_OF_4 = Map.of("OMPI_COMM_WORLD_RANK", "2",
        "OMPI_COMM_WORLD_SIZE", "4");

    @Test
    void shouldTakeRankAndSizeFromTheLauncher()
    {
        assertThat(resolve(OPEN_MPI_RANK_2_OF_4)).isEqualTo(new Launch(2, 4, -1, -1, null, "Open MPI"));
    }

    @Test
    void shouldLetFlagsOverrideTheLauncher()
    {
        assertThat(resolve(OPEN_MPI_RANK_2_OF_4, "-w", "8").source()).isEqualTo("Open MPI, world size from -w");
        assertThat(resolve(OPEN_MPI_RANK_2_OF_4, "--worker-id", "0").source())
            .isEqualTo("--worker-id, world size from Open MPI");
        assertThatThrownBy(() -> resolve(OPEN_MPI_RANK_2_OF_4, "-w", "2"))
            .hasMessageContaining("rank 2 from Open MPI is outside 0..1 (world size 2 from -w)");
    }

    @Test
    void shouldNotReadTheEnvironmentWhenBothFlagsAreGiven()
    {
        final Launch launch = resolve(Map.of("RANK", "1", "WORLD_SIZE", "4", "OMPI_COMM_WORLD_RANK", "2",
            "OMPI_COMM_WORLD_SIZE", "4", "PMI_RANK", "x"), "--worker-id", "3", "-w", "5");
        assertThat(launch).isEqualTo(Launch.explicit(3, 5, "--worker-id and -w"));
        assertThatThrownBy(() -> resolve(Map.of(), "--worker-id", "5", "-w", "5"))
            .hasMessageContaining("rank 5 is outside 0..4");
    }

    @Test
    void shouldSayWhatToPassWithoutFlagsOrLauncher()
    {
        assertThatThrownBy(() -> resolve(Map.of("HOME", "/root")))
            .hasMessageContaining("Pass --worker-id and -w, or start inagg worker under a launcher")
            .hasMessageContaining("RANK/WORLD_SIZE (torchrun), OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE (Open MPI), "
                + "PMI_RANK/PMI_SIZE (PMI), SLURM_PROCID/SLURM_NTASKS (Slurm)");
        assertThatThrownBy(() -> resolve(Map.of(), "--worker-id", "0")).hasMessageContaining("Pass -w,");
        assertThatThrownBy(() -> resolve(Map.of(), "-w", "4")).hasMessageContaining("Pass --worker-id,");
        assertThatThrownBy(() -> resolve(OPEN_MPI_RANK_2_OF_4, "--launcher", "slurm"))
            .hasMessageContaining("sets SLURM_PROCID/SLURM_NTASKS (Slurm)");
    }

    @Test
    void shouldNameDisagreeingLaunchersAndTheWayOut()
    {
        assertThatThrownBy(() -> resolve(Map.of("RANK", "1", "WORLD_SIZE", "4", "OMPI_COMM_WORLD_RANK", "2",
            "OMPI_COMM_WORLD_SIZE", "4")))
            .hasMessageContaining("torchrun says rank 1 of 4 (RANK=1, WORLD_SIZE=4)")
            .hasMessageContaining("Open MPI says rank 2 of 4 (OMPI_COMM_WORLD_RANK=2, OMPI_COMM_WORLD_SIZE=4)")
            .hasMessageContaining("--launcher torchrun|openmpi|pmi|slurm reads one launcher's variables");
        assertThatThrownBy(() -> resolve(Map.of("RANK", "1"), "-w", "4"))
            .hasMessageContaining("RANK is set but WORLD_SIZE is not");
    }

    @Test
    void shouldReadOnlyTheNamedLauncher()
    {
        final Map<String, String> torchrunUnderSrun = Map.of("SLURM_PROCID", "1", "SLURM_NTASKS", "2", "RANK", "6",
            "WORLD_SIZE", "8");
        assertThat(resolve(torchrunUnderSrun, "--launcher", "torchrun")).isEqualTo(new Launch(6, 8, -1, -1, null,
            "torchrun"));
        assertThat(resolve(torchrunUnderSrun, "--launcher", "slurm").rank()).isEqualTo(1);
        assertThatThrownBy(() -> resolve(torchrunUnderSrun, "--launcher", "mpich"))
            .hasMessageContaining("unknown launcher 'mpich': expected one of torchrun, openmpi, pmi, slurm");
    }

    private static Launch resolve(final Map<String, String> env, final String... args)
    {
        return CommandLine.populateCommand(new LaunchOptions(), args).resolve(env);
    }
}
