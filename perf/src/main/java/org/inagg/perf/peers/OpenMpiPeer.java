package org.inagg.perf.peers;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.concurrent.TimeUnit;

/**
 * Open MPI's {@code MPI_Allreduce} (float32 sum, in place) started by {@code mpirun -np W} on this host (or one rank
 * on each host of an emulated cluster, through a launch agent that enters the hosts' namespaces): a small C
 * program compiled with {@code mpicc} where the MPI headers are installed, else the same loop in Python through
 * mpi4py.
 */
public final class OpenMpiPeer implements Peer
{
    private final String python;
    private String unavailable;
    private boolean probed;
    private Path compiled;
    private String flavour;

    public OpenMpiPeer(final String python)
    {
        this.python = python;
    }

    @Override
    public String name()
    {
        return "Open MPI";
    }

    @Override
    public boolean runsAcrossHosts()
    {
        return true;
    }

    @Override
    public String unavailableReason()
    {
        if (!probed)
        {
            probed = true;
            try
            {
                if (!ChildProcesses.onPath("mpirun"))
                {
                    unavailable = "mpirun is not on the PATH (apt-get install openmpi-bin)";
                }
                else if (!ChildProcesses.onPath("mpicc") || !headersPresent())
                {
                    if (ChildProcesses.succeeds(List.of(python, "-c", "import mpi4py.MPI, numpy"), 60))
                    {
                        flavour = "mpi4py";
                    }
                    else
                    {
                        unavailable = "neither mpicc with the MPI headers (apt-get install libopenmpi-dev) nor mpi4py"
                            + " and numpy in " + python + " (pip install mpi4py numpy)";
                    }
                }
                else
                {
                    flavour = "C";
                }
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                unavailable = "interrupted while probing for Open MPI";
            }
        }
        return unavailable;
    }

    private static boolean headersPresent() throws InterruptedException
    {
        return ChildProcesses.succeeds(List.of("sh", "-c", "echo '#include <mpi.h>' | mpicc -E -x c - >/dev/null"),
            60);
    }

    @Override
    public PeerResult run(final PeerRun run) throws InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of("mpirun", "--allow-run-as-root", "--oversubscribe",
            "-np", Integer.toString(run.workers())));
        final Placement placement = run.placement();
        if (!placement.isLoopback())
        {
            command.addAll(acrossHosts(run));
        }
        final Path log = run.workDir().resolve("mpi-w" + run.workers() + ".log");
        try (ChildProcesses children = new ChildProcesses())
        {
            if ("C".equals(flavour))
            {
                if (compiled == null)
                {
                    final Path source = ChildProcesses.resource("mpi_allreduce.c", run.workDir());
                    final Path binary = run.workDir().resolve("mpi_allreduce");
                    final Process cc = children.start(List.of("mpicc", "-O2", "-o", binary.toString(),
                        source.toString()), Map.of(), run.workDir().resolve("mpicc.log"));
                    if (!ChildProcesses.awaitAll(List.of(cc), System.nanoTime() + TimeUnit.SECONDS.toNanos(120)))
                    {
                        return PeerResult.failed(name(), run.workers(), "mpicc failed: "
                            + ChildProcesses.lastLine(ChildProcesses.read(run.workDir().resolve("mpicc.log"))));
                    }
                    compiled = binary;
                }
                command.add(compiled.toString());
            }
            else
            {
                command.addAll(List.of(python, ChildProcesses.resource("mpi4py_allreduce.py", run.workDir()).toString()));
            }
            command.addAll(List.of(Integer.toString(run.elements()), Integer.toString(run.iterations()),
                Integer.toString(run.warmup())));
            final Map<String, String> env = placement.isLoopback() ? Map.of()
                : Map.of("TMPDIR", run.workDir().resolve("mpi-tmp-mpirun").toString());
            final Process mpirun = children.start(Placement.prefixed(placement.rankExec(0), command), env, log);
            final boolean ok = ChildProcesses.awaitAll(List.of(mpirun),
                System.nanoTime() + TimeUnit.SECONDS.toNanos(run.timeoutS()));
            final String text = ChildProcesses.read(log);
            final OptionalDouble rate = ChildProcesses.elementsPerSecond(text);
            if (!ok || rate.isEmpty() || !text.contains("result ok"))
            {
                return PeerResult.failed(name(), run.workers(), "mpirun did not finish within " + run.timeoutS()
                    + " s or failed: " + ChildProcesses.lastLine(text) + " (" + log + ")");
            }
            return PeerResult.measured(name(), run.workers(), rate.getAsDouble(), ChildProcesses.p50Seconds(text),
                "MPI_Allreduce via " + flavour + " (its ranks busy-poll: CPU about min(ranks, cores) x its time)")
                .withCpuSecondsPerOp(ChildProcesses.cpuSecondsPerCall(text));
        }
    }

    /**
     * mpirun (started on rank 0's host) reaches the other hosts through a launch agent that enters each host's place
     * instead of ssh, one rank per host; MPI's own traffic and its daemons' wire-up stay on the hosts' {@code eth0}
     * (TCP), so every byte between ranks crosses the emulated links.
     */
    private static List<String> acrossHosts(final PeerRun run)
    {
        final StringBuilder agent = new StringBuilder("""
            #!/bin/sh
            # Open MPI launch agent written by inagg bench-peers: `agent HOST COMMAND...` runs COMMAND where HOST is.
            host="$1"; shift
            case "$host" in
            """);
        final List<String> hosts = new ArrayList<>();
        for (int rank = 0; rank < run.workers(); rank++)
        {
            final String host = "rank" + rank;
            hosts.add(host);
            // Every emulated host has this machine's host name and /tmp: a session directory of its own per host,
            // or the daemons' session directories (named by host name) collide.
            final Path tmp = run.workDir().resolve("mpi-tmp-" + host);
            agent.append("  ").append(host).append(") mkdir -p ").append(tmp).append("; exec ")
                .append(String.join(" ", Placement.prefixed(run.placement().rankExec(rank), List.of("env", "TMPDIR="
                    + tmp, "/bin/sh", "-c"))))
                .append(" \"$*\" ;;\n");
        }
        agent.append("  *) echo \"inagg mpi launch agent: unknown host $host\" >&2; exit 2 ;;\nesac\n");
        final Path script = run.workDir().resolve("mpi-launch-agent.sh");
        try
        {
            java.nio.file.Files.writeString(script, agent);
            java.nio.file.Files.createDirectories(run.workDir().resolve("mpi-tmp-mpirun"));
            script.toFile().setExecutable(true);
        }
        catch (final java.io.IOException ex)
        {
            throw new java.io.UncheckedIOException("cannot write " + script, ex);
        }
        return List.of("--host", String.join(",", hosts), "--mca", "plm_rsh_agent", script.toString(),
            "--mca", "plm_rsh_no_tree_spawn", "1", "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "eth0",
            "--mca", "oob_tcp_if_include", "eth0");
    }
}
