package org.inagg.api.launch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class LaunchEnvironmentTest
{
    @Test
    void shouldReadTorchrun()
    {
        final Launch launch = LaunchEnvironment.detect(Map.of("RANK", "5", "WORLD_SIZE", "8", "LOCAL_RANK", "1",
            "LOCAL_WORLD_SIZE", "4", "MASTER_ADDR", "10.0.0.1", "MASTER_PORT", "29500", "TORCHELASTIC_RUN_ID",
            "run-17")).orElseThrow();
        assertThat(launch).isEqualTo(new Launch(5, 8, 1, 4, "run-17", "torchrun"));
    }

    @Test
    void shouldReadOpenMpi()
    {
        final Launch launch = LaunchEnvironment.detect(Map.of("OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE", "4",
            "OMPI_COMM_WORLD_LOCAL_RANK", "2", "OMPI_COMM_WORLD_LOCAL_SIZE", "4", "PMIX_RANK", "2")).orElseThrow();
        assertThat(launch).isEqualTo(new Launch(2, 4, 2, 4, null, "Open MPI"));
        // Open MPI 4's job id is the same at every rank of one mpirun: the run id that names the job at a controller.
        assertThat(LaunchEnvironment.detect(Map.of("OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "4",
            "OMPI_MCA_ess_base_jobid", "1230897153")).orElseThrow().runId()).isEqualTo("1230897153");
    }

    @Test
    void shouldReadPmi()
    {
        assertThat(LaunchEnvironment.detect(Map.of("PMI_RANK", "0", "PMI_SIZE", "3")).orElseThrow())
            .isEqualTo(new Launch(0, 3, Launch.UNKNOWN, Launch.UNKNOWN, null, "PMI"));
        assertThat(LaunchEnvironment.detect(Map.of("PMI_RANK", "1", "PMI_SIZE", "3", "MPI_LOCALRANKID", "1",
            "MPI_LOCALNRANKS", "2")).orElseThrow()).isEqualTo(new Launch(1, 3, 1, 2, null, "PMI"));
    }

    @Test
    void shouldReadSlurmWithAndWithoutTasksPerNode()
    {
        assertThat(LaunchEnvironment.detect(Map.of("SLURM_PROCID", "3", "SLURM_NTASKS", "4", "SLURM_LOCALID", "1",
            "SLURM_JOB_ID", "123456")).orElseThrow())
            .isEqualTo(new Launch(3, 4, 1, Launch.UNKNOWN, "123456", "Slurm"));
        assertThat(LaunchEnvironment.detect(Map.of("SLURM_PROCID", "3", "SLURM_NTASKS", "4", "SLURM_LOCALID", "1",
            "SLURM_NTASKS_PER_NODE", "2", "SLURM_JOB_ID", "123456")).orElseThrow())
            .isEqualTo(new Launch(3, 4, 1, 2, "123456", "Slurm"));
    }

    @Test
    void shouldFindNothingWithoutARankOrSizeVariable()
    {
        assertThat(LaunchEnvironment.detect(Map.of())).isEmpty();
        assertThat(LaunchEnvironment.detect(Map.of("LOCAL_RANK", "0", "MASTER_ADDR", "h", "SLURM_JOB_ID", "9",
            "HOME", "/root"))).isEmpty();
    }

    @Test
    void shouldAcceptLaunchersThatAgree()
    {
        final Launch launch = LaunchEnvironment.detect(Map.of("SLURM_PROCID", "1", "SLURM_NTASKS", "2",
            "SLURM_LOCALID", "0", "SLURM_JOB_ID", "77", "PMI_RANK", "1", "PMI_SIZE", "2", "MPI_LOCALRANKID", "0",
            "MPI_LOCALNRANKS", "1")).orElseThrow();
        assertThat(launch).isEqualTo(new Launch(1, 2, 0, 1, "77", "PMI and Slurm"));
    }

    @Test
    void shouldNameBothLaunchersWhenRanksDisagree()
    {
        assertThatThrownBy(() -> LaunchEnvironment.detect(Map.of("RANK", "1", "WORLD_SIZE", "4",
            "OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE", "4")))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("launchers disagree")
            .hasMessageContaining("torchrun says rank 1 of 4 (RANK=1, WORLD_SIZE=4)")
            .hasMessageContaining("Open MPI says rank 2 of 4 (OMPI_COMM_WORLD_RANK=2, OMPI_COMM_WORLD_SIZE=4)");
    }

    @Test
    void shouldNameBothLaunchersWhenSizesOrLocalRanksDisagree()
    {
        assertThatThrownBy(() -> LaunchEnvironment.detect(Map.of("PMI_RANK", "0", "PMI_SIZE", "4",
            "SLURM_PROCID", "0", "SLURM_NTASKS", "2")))
            .hasMessageContaining("PMI says rank 0 of 4 (PMI_RANK=0, PMI_SIZE=4)")
            .hasMessageContaining("Slurm says rank 0 of 2 (SLURM_PROCID=0, SLURM_NTASKS=2)");
        assertThatThrownBy(() -> LaunchEnvironment.detect(Map.of("PMI_RANK", "1", "PMI_SIZE", "4",
            "MPI_LOCALRANKID", "1", "SLURM_PROCID", "1", "SLURM_NTASKS", "4", "SLURM_LOCALID", "0")))
            .hasMessageContaining("PMI says MPI_LOCALRANKID=1 but Slurm says SLURM_LOCALID=0");
    }

    @Test
    void shouldReadOnlyTheChosenLauncherWhenLaunchersAreNested()
    {
        // srun starts one torchrun per node: SLURM_PROCID is the node's, RANK the worker's.
        final Map<String, String> env = Map.of("SLURM_PROCID", "1", "SLURM_NTASKS", "2", "SLURM_JOB_ID", "42",
            "RANK", "5", "WORLD_SIZE", "8", "LOCAL_RANK", "1", "LOCAL_WORLD_SIZE", "4");
        assertThatThrownBy(() -> LaunchEnvironment.detect(env)).hasMessageContaining("launchers disagree");
        assertThat(LaunchEnvironment.detect(env, Set.of(Launcher.TORCHRUN)).orElseThrow())
            .isEqualTo(new Launch(5, 8, 1, 4, null, "torchrun"));
        assertThat(LaunchEnvironment.detect(env, Set.of(Launcher.OPEN_MPI))).isEmpty();
    }

    @Test
    void shouldNameTheMissingVariableOfAPartialSet()
    {
        assertThatThrownBy(() -> LaunchEnvironment.detect(Map.of("RANK", "1")))
            .hasMessageContaining("RANK is set but WORLD_SIZE is not");
        assertThatThrownBy(() -> LaunchEnvironment.detect(Map.of("OMPI_COMM_WORLD_SIZE", "4")))
            .hasMessageContaining("OMPI_COMM_WORLD_SIZE is set but OMPI_COMM_WORLD_RANK is not");
        assertThatThrownBy(() -> LaunchEnvironment.detect(Map.of("SLURM_PROCID", "0", "PMI_RANK", "0", "PMI_SIZE",
            "1"))).hasMessageContaining("SLURM_PROCID is set but SLURM_NTASKS is not");
    }

    @Test
    void shouldNameTheVariableOfAMalformedNumber()
    {
        assertThatThrownBy(() -> LaunchEnvironment.detect(Map.of("RANK", "one", "WORLD_SIZE", "4")))
            .hasMessageContaining("RANK='one' is not a whole number");
        assertThatThrownBy(() -> LaunchEnvironment.detect(Map.of("PMI_RANK", "0", "PMI_SIZE", "")))
            .hasMessageContaining("PMI_SIZE='' is not a whole number");
        assertThatThrownBy(() -> LaunchEnvironment.detect(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "2",
            "SLURM_NTASKS_PER_NODE", "2(x3)"))).hasMessageContaining("SLURM_NTASKS_PER_NODE='2(x3)'");
        assertThatThrownBy(() -> LaunchEnvironment.detect(Map.of("RANK", "-1", "WORLD_SIZE", "4")))
            .hasMessageContaining("RANK=-1 must be at least 0");
        assertThatThrownBy(() -> LaunchEnvironment.detect(Map.of("RANK", "0", "WORLD_SIZE", "0")))
            .hasMessageContaining("WORLD_SIZE=0 must be at least 1");
    }

    @Test
    void shouldRefuseARankOutsideTheWorld()
    {
        assertThatThrownBy(() -> LaunchEnvironment.detect(Map.of("OMPI_COMM_WORLD_RANK", "4",
            "OMPI_COMM_WORLD_SIZE", "4"))).hasMessageContaining("OMPI_COMM_WORLD_RANK=4 is outside 0..3")
            .hasMessageContaining("OMPI_COMM_WORLD_SIZE=4");
        assertThatThrownBy(() -> LaunchEnvironment.detect(Map.of("RANK", "0", "WORLD_SIZE", "4", "LOCAL_RANK", "2",
            "LOCAL_WORLD_SIZE", "2"))).hasMessageContaining("LOCAL_RANK=2 is outside 0..1");
    }

    @Test
    void shouldLetExplicitValuesOverrideTheLauncher()
    {
        final Launch fromMpi = LaunchEnvironment.detect(Map.of("OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE",
            "4", "OMPI_COMM_WORLD_LOCAL_RANK", "0")).orElseThrow();
        assertThat(fromMpi.override(OptionalInt.empty(), "--worker-id", OptionalInt.empty(), "-w")).isSameAs(fromMpi);
        assertThat(fromMpi.override(OptionalInt.of(1), "--worker-id", OptionalInt.empty(), "-w"))
            .isEqualTo(new Launch(1, 4, 0, Launch.UNKNOWN, null, "--worker-id, world size from Open MPI"));
        assertThat(fromMpi.override(OptionalInt.empty(), "--worker-id", OptionalInt.of(8), "-w"))
            .isEqualTo(new Launch(2, 8, 0, Launch.UNKNOWN, null, "Open MPI, world size from -w"));
        assertThat(fromMpi.override(OptionalInt.of(6), "--worker-id", OptionalInt.of(7), "-w"))
            .isEqualTo(new Launch(6, 7, 0, Launch.UNKNOWN, null, "--worker-id and -w"));
        assertThatThrownBy(() -> fromMpi.override(OptionalInt.empty(), "--worker-id", OptionalInt.of(2), "-w"))
            .hasMessageContaining("rank 2 from Open MPI is outside 0..1 (world size 2 from -w)");
        assertThatThrownBy(() -> fromMpi.override(OptionalInt.of(4), "--worker-id", OptionalInt.empty(), "-w"))
            .hasMessageContaining("rank 4 from --worker-id is outside 0..3 (world size 4 from Open MPI)");
        assertThat(Launch.explicit(0, 1, "--worker-id and -w"))
            .isEqualTo(new Launch(0, 1, Launch.UNKNOWN, Launch.UNKNOWN, null, "--worker-id and -w"));
        assertThatThrownBy(() -> Launch.explicit(1, 1, "flags")).hasMessageContaining("rank 1 is outside 0..0");
    }

    @Test
    void shouldNameTheLaunchersAndTheirVariables()
    {
        assertThat(Launcher.byId("OpenMPI")).isEqualTo(Launcher.OPEN_MPI);
        assertThatThrownBy(() -> Launcher.byId("mpich"))
            .hasMessageContaining("unknown launcher 'mpich': expected one of torchrun, openmpi, pmi, slurm");
        assertThat(LaunchEnvironment.describeVariables()).isEqualTo("RANK/WORLD_SIZE (torchrun), "
            + "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE (Open MPI), PMI_RANK/PMI_SIZE (PMI), "
            + "SLURM_PROCID/SLURM_NTASKS (Slurm)");
        assertThat(Launcher.OPEN_MPI.variables()).containsExactly("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
            "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_MCA_ess_base_jobid");
    }

    @Property(tries = 200)
    void anySetOfLaunchersThatAgreeGivesTheirRankAndOneThatDiffersIsNamed(
        @ForAll @IntRange(min = 1, max = 100_000) final int size,
        @ForAll @IntRange(min = 0, max = 99_999) final int rankSeed,
        @ForAll @Size(min = 1, max = 4) final Set<Launcher> launchers,
        @ForAll final Launcher odd)
    {
        final int rank = rankSeed % size;
        final Map<String, String> env = new HashMap<>();
        for (final Launcher launcher : launchers)
        {
            env.put(launcher.rankVariable(), Integer.toString(rank));
            env.put(launcher.worldSizeVariable(), Integer.toString(size));
        }
        final Launch launch = LaunchEnvironment.detect(env).orElseThrow();
        assertThat(launch.rank()).isEqualTo(rank);
        assertThat(launch.worldSize()).isEqualTo(size);
        for (final Launcher launcher : launchers)
        {
            assertThat(launch.source()).contains(launcher.displayName());
        }
        if (size > 1 && !(launchers.size() == 1 && launchers.contains(odd)))
        {
            env.put(odd.rankVariable(), Integer.toString((rank + 1) % size));
            env.put(odd.worldSizeVariable(), Integer.toString(size));
            assertThatThrownBy(() -> LaunchEnvironment.detect(env))
                .hasMessageContaining(odd.rankVariable() + "=" + (rank + 1) % size)
                .hasMessageContaining("=" + rank + ",");
        }
        assertThat(LaunchEnvironment.detect(env, EnumSet.noneOf(Launcher.class))).isEmpty();
    }
}
