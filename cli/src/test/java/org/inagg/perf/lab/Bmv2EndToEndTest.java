package org.inagg.perf.lab;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import org.inagg.p4.bmv2.P4Toolchain;
import org.inagg.p4.control.EsaJobSpec;
import org.inagg.p4.control.EsaPool;
import org.inagg.p4.control.InaggP4;
import org.inagg.p4.control.JobSpec;
import org.inagg.p4.esa.AllocationMode;
import org.inagg.p4.esa.EsaCounter;
import org.inagg.p4.esa.PriorityPolicy;
import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.perf.cluster.ClusterOptions;
import org.inagg.perf.cluster.LocalCluster;
import org.inagg.services.cli.SyntheticGradients;
import org.inagg.transport.FaultConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Unmodified {@code inagg worker} processes in network namespaces through bmv2 simple_switch running
 * {@code inagg_v1model.p4}, programmed at run time by {@link org.inagg.p4.bmv2.Bmv2Switch}: 2, 4 and 8 workers,
 * float32 and int32, tensors of 1, 257 and 1,000,003 elements, with and without 5% injected loss (drop, duplicate,
 * reorder in the workers' transports), two jobs at once, a two-level job (bmv2 + a parameter server) and two ESA
 * jobs sharing a small aggregator pool with preemption, and a REDUCE_SCATTER refused at once by a two-level and an ESA
 * job (REJECT UNSUPPORTED_COLLECTIVE). Float32 results must be bit-identical to the in-process
 * software switch's for the same inputs and within the fixed-point bound of a double-precision sum (each worker
 * checks); int32 results exact. One switch serves every scenario: jobs are added and removed at run time, and later
 * jobs reuse the slots (and the job id) of earlier ones, so register clearing is exercised too.
 * <p>
 * Needs root, iproute2, ethtool and the P4 tools ({@code INAGG_P4TOOLS}, default ../shared/p4tools); skipped with
 * the reason without them unless {@code -Dinagg.bmv2.tests.require=true} (CI).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class Bmv2EndToEndTest
{
    static final int HOSTS = 8;
    static final int SLOTS = 16;
    static final int LANES = 256;
    static final long SEED = 3;
    static final List<String> TIMEOUTS = List.of("--retransmit-us", "100000", "--peer-timeout-ms", "60000");

    private Path work;
    private Bmv2Lab lab;
    private boolean esaPoolSet;

    @BeforeAll
    void startLab() throws Exception
    {
        work = Files.createTempDirectory("inagg-bmv2-e2e-");
        final String why = unavailableReason();
        if (why != null)
        {
            if (Boolean.getBoolean("inagg.bmv2.tests.require"))
            {
                Assertions.fail("bmv2 end-to-end tests are required here (-Dinagg.bmv2.tests.require=true) but " + why);
            }
            Assumptions.abort("skipped: " + why);
        }
        lab = Bmv2Lab.start(HOSTS, work, null);
    }

    static String unavailableReason()
    {
        if (!P4Toolchain.available())
        {
            return P4Toolchain.unavailableReason();
        }
        if (!"root".equals(System.getProperty("user.name")))
        {
            return "network namespaces need root (running as " + System.getProperty("user.name") + ")";
        }
        if (Commands.tryRun(List.of("ethtool", "--version")) != null)
        {
            return "ethtool is missing (Debian package ethtool)";
        }
        return null;
    }

    @AfterAll
    void stopLab()
    {
        if (lab != null)
        {
            final HostNetwork network = lab.network();
            lab.close();
            assertThat(network.remainingNamespaces()).as("namespaces left behind").isEmpty();
        }
    }

    static Stream<Arguments> scenarios()
    {
        return Stream.of(
            Arguments.of(2, "float32", 1, 0.0),
            Arguments.of(2, "int32", 1_000_003, 0.0),
            Arguments.of(4, "float32", 257, 0.05),
            Arguments.of(4, "int32", 257, 0.0),
            Arguments.of(4, "float32", 100_003, 0.05),
            Arguments.of(8, "float32", 257, 0.0),
            Arguments.of(8, "int32", 1, 0.05));
    }

    @ParameterizedTest(name = "{0} workers, {1}, {2} elements, loss {3}")
    @MethodSource("scenarios")
    void shouldAllReduceThroughBmv2LikeTheSoftwareSwitch(
        final int workers, final String dtype, final int elements, final double loss) throws Exception
    {
        final JobSpec job = lab.addSlotJob(1, SLOTS, 0, LANES, 1, IntStream.rangeClosed(1, workers).toArray());
        try
        {
            final List<WorkerReport> reports = Bmv2Lab.await(lab.startWorkers(job, args(dtype, elements, loss)), 240);
            assertReports(reports, dtype.equals("float32") ? softwareSwitchCrc(workers, elements) : null,
                workers + " workers " + dtype + " n=" + elements + " loss " + loss);
            final Map<SwitchCounter, Long> counters = lab.control().counters();
            assertThat(counters.get(SwitchCounter.DROP_MALFORMED)).as("malformed on bmv2").isZero();
        }
        finally
        {
            lab.control().removeJob(1);
        }
    }

    @Test
    void shouldRunTwoJobsAtOnceInSeparateSlotRanges() throws Exception
    {
        final JobSpec first = lab.addSlotJob(7, SLOTS, 0, LANES, 7, 1, 2, 3, 4);
        final JobSpec second = lab.addSlotJob(8, SLOTS, SLOTS, LANES, 8, 5, 6, 7, 8);
        try
        {
            final List<InaggProcess> a = lab.startWorkers(first, args("float32", 20_000, 0.0));
            final List<InaggProcess> b = lab.startWorkers(second, args("float32", 20_000, 0.0));
            final String expected = softwareSwitchCrc(4, 20_000);
            assertReports(Bmv2Lab.await(a, 240), expected, "job 7");
            assertReports(Bmv2Lab.await(b, 240), expected, "job 8");
        }
        finally
        {
            lab.control().removeJob(7);
            lab.control().removeJob(8);
        }
    }

    /**
     * A restarted job on bmv2 (docs/sessions.md): two workers run many all-reduces; worker 1 is killed mid-run; the
     * control plane starts session 1 of the job (as the controller does when a rank registers again), which rewrites
     * the job's row and clears its registers; the surviving worker 0 of session 0 is refused at its next packet
     * (REJECT STALE_SESSION from the data plane) and exits naming the new session; two new workers complete the job in
     * session 1, exact and identical, and bmv2 counted the old run's packets as stale.
     */
    @Test
    void shouldFailTheSurvivorsAndRunTheJobAgainInANewSessionAfterAWorkerIsKilled() throws Exception
    {
        final JobSpec job = lab.addSlotJob(4, SLOTS, 0, LANES, 4, 1, 2);
        try
        {
            final List<String> longRun = new ArrayList<>(List.of("--dtype", "int32", "-n", "2000", "-i", "100000",
                "--seed", Long.toString(SEED)));
            longRun.addAll(TIMEOUTS);
            final List<InaggProcess> first = lab.startWorkers(job, longRun);
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (lab.control().counters().get(SwitchCounter.CONTRIBUTIONS) < 200)
            {
                assertThat(System.nanoTime() < deadline).as("the first run gets going").isTrue();
                assertThat(first).allSatisfy(w -> assertThat(w.process().isAlive()).as(w.output()).isTrue());
                Thread.sleep(200);
            }
            first.get(1).kill();
            final long staleBefore = lab.control().counters().get(SwitchCounter.DROP_STALE_SESSION);
            final long restart = System.nanoTime();
            final JobSpec next = lab.control().startSession(4, 1);
            assertThat(next.session()).isEqualTo(1);

            assertThat(first.get(0).await(60)).as("the survivor exits by itself:%n%s", first.get(0).output())
                .isNotZero().isNotEqualTo(-1);
            final long detectMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restart);
            assertThat(first.get(0).output()).contains("moved to session 1").contains("this run is aborted");
            assertThat(lab.control().counters().get(SwitchCounter.DROP_STALE_SESSION) - staleBefore)
                .as("the survivor's packets of session 0, dropped on bmv2").isPositive();

            final long again = System.nanoTime();
            final List<WorkerReport> reports = Bmv2Lab.await(lab.startWorkers(next, args("int32", 20_000, 0.0)), 240);
            assertReports(reports, null, "the job in session 1");
            System.out.println("bmv2 restart: survivor failed " + detectMs + " ms after the new session; the new run ("
                + "2 workers, 20,000 int32) completed in " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - again)
                + " ms");
        }
        finally
        {
            lab.control().removeJob(4);
        }
    }

    /**
     * Hostile packets sent raw (AF_PACKET) while a job runs: an unknown job, a worker id out of range, a source that
     * is not registered (a stranger's address; worker 0's address with another port), a wrong version, an Element
     * Count that disagrees with the length, a slot out of range from worker 0's own source, frames shorter than their
     * IPv4/UDP lengths say, and bytes that are no protocol. Each inagg-level fault is dropped and counted under its
     * counter (the same ones the conformance vectors check on both targets); the job completes bit-identical.
     */
    @Test
    void shouldDropAndCountHostilePacketsWhileAJobRunsUnharmed() throws Exception
    {
        final int elements = 200_000;
        final int times = 5;
        final JobSpec job = lab.addSlotJob(3, SLOTS, 0, LANES, 3, 1, 2);
        try
        {
            final Map<SwitchCounter, Long> before = lab.control().counters();
            final List<InaggProcess> workers = lab.startWorkers(job, args("float32", elements, 0.0));
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (lab.control().counters().get(SwitchCounter.CONTRIBUTIONS)
                < before.get(SwitchCounter.CONTRIBUTIONS) + 50 && System.nanoTime() < deadline)
            {
                Thread.sleep(100);
            }
            final HostNetwork.Host stranger = lab.network().host(7);
            final HostNetwork.Host worker0 = lab.network().host(1);
            final int strangerPort = Bmv2Lab.WORKER_UDP_BASE + 7;
            new HostileFrames()
                .aggregate(stranger, strangerPort, 1, 99, 0, 0, 4, 4, times)     // unknown job
                .aggregate(stranger, strangerPort, 1, 3, 5, 0, 4, 4, times)      // worker id 5 of W = 2
                .aggregate(stranger, strangerPort, 1, 3, 0, 0, 4, 4, times)      // worker 0 from a stranger
                .aggregate(stranger, strangerPort, 2, 3, 0, 0, 4, 4, times)      // version 2
                .aggregate(stranger, strangerPort, 1, 3, 0, 0, 6, 4, times)      // Element Count 6, 4 lanes
                .truncated(stranger, strangerPort, 100, times)                  // 100 bytes fewer than claimed
                .junk(60, times)
                .sendFrom(stranger);
            new HostileFrames()
                .aggregate(worker0, Bmv2Lab.WORKER_UDP_BASE + 99, 1, 3, 0, 0, 4, 4, times) // worker 0's host, other port
                .aggregate(worker0, Bmv2Lab.WORKER_UDP_BASE + 1, 1, 3, 0, 100, 4, 4, times) // its source, slot 100
                .sendFrom(worker0);
            assertReports(Bmv2Lab.await(workers, 240), softwareSwitchCrc(2, elements), "job under hostile packets");
            final Map<SwitchCounter, Long> after = lab.control().counters();
            final Map<SwitchCounter, Long> expected = Map.of(SwitchCounter.DROP_UNKNOWN_JOB, (long)times,
                SwitchCounter.DROP_UNKNOWN_WORKER, (long)times, SwitchCounter.DROP_SOURCE_MISMATCH, 2L * times,
                SwitchCounter.DROP_MALFORMED, 2L * times, SwitchCounter.DROP_BAD_SLOT, (long)times);
            expected.forEach((counter, count) -> assertThat(after.get(counter) - before.get(counter))
                .as("%s counted on bmv2 (before %s, after %s)", counter, before, after).isEqualTo(count));
        }
        finally
        {
            lab.control().removeJob(3);
        }
    }

    /**
     * Two-level: W = 3, workers 0 and 1 on hosts 1 and 2 through bmv2 (an upstream job: the switch sums them and sends
     * one PARTIAL to the parameter server), the parameter server on host 3, worker 2 on host 4 talking to the server
     * directly; the server's results and worker 2's traffic cross bmv2 by its IPv4 forwarding. Bit-identical to one
     * switch summing all three.
     */
    @Test
    void shouldAggregateTwoLevelThroughBmv2AndAParameterServer() throws Exception
    {
        final int elements = 50_001;
        final JobSpec job = JobSpec.upstream(2, SLOTS, 0, LANES,
            List.of(lab.endpoint(0, 1), lab.endpoint(1, 2), lab.endpoint(2, 4)), lab.serverEndpoint(3), 0, 1);
        lab.control().addJob(job);
        InaggProcess server = null;
        try
        {
            server = lab.startParameterServer(3, "2:3:" + SLOTS + ":" + LANES, 1, 2, 4);
            final List<String> args = args("float32", elements, 0.05);
            final String switchAddress = HostNetwork.SWITCH_IPV4 + ":" + InaggP4.UDP_PORT;
            final List<InaggProcess> workers = List.of(
                lab.startWorker(2, 0, 3, 1, switchAddress, args),
                lab.startWorker(2, 1, 3, 2, switchAddress, args),
                lab.startWorker(2, 2, 3, 4, "10.0.0.3:" + Bmv2Lab.SERVER_UDP_PORT, args));
            assertReports(Bmv2Lab.await(workers, 240), softwareSwitchCrc(3, elements, LANES), "two-level");
            assertThat(lab.control().counters().get(SwitchCounter.UPSTREAM_PARTIALS)).as("partials sent up")
                .isPositive();
        }
        finally
        {
            if (server != null)
            {
                server.kill();
            }
            lab.control().removeJob(2);
        }
    }

    /**
     * ESA: two jobs share a pool of 4 aggregators on bmv2 (preemptive, job-table priorities 1 and 5), each with its
     * parameter server (hosts 3 and 6) for what the pool cannot hold: blocks are preempted or fall back to the
     * server, and every worker still gets the exact (float32: bit-identical to a slot switch's) result.
     */
    @Test
    void shouldShareAnEsaPoolBetweenTwoJobsWithPreemption() throws Exception
    {
        final int elements = 30_000;
        final int lanes = 64;
        final int window = 8;
        esaPool();
        final EsaJobSpec low = new EsaJobSpec(11, window, lanes, 11, 111, 1, 4L * elements,
            List.of(lab.endpoint(0, 1), lab.endpoint(1, 2)), lab.serverEndpoint(3));
        final EsaJobSpec high = new EsaJobSpec(12, window, lanes, 12, 112, 5, 4L * elements,
            List.of(lab.endpoint(0, 4), lab.endpoint(1, 5)), lab.serverEndpoint(6));
        lab.control().addJob(low);
        lab.control().addJob(high);
        final List<InaggProcess> servers = new ArrayList<>();
        try
        {
            servers.add(lab.startParameterServer(3, "11:2:" + window + ":" + lanes, 1, 2));
            servers.add(lab.startParameterServer(6, "12:2:" + window + ":" + lanes, 4, 5));
            final String switchAddress = HostNetwork.SWITCH_IPV4 + ":" + InaggP4.UDP_PORT;
            final List<String> args = args("float32", elements, 0.0);
            final List<InaggProcess> a = List.of(lab.startWorker(11, 0, 2, 1, switchAddress, args),
                lab.startWorker(11, 1, 2, 2, switchAddress, args));
            final List<InaggProcess> b = List.of(lab.startWorker(12, 0, 2, 4, switchAddress, args),
                lab.startWorker(12, 1, 2, 5, switchAddress, args));
            final String expected = softwareSwitchCrc(2, elements, lanes);
            assertReports(Bmv2Lab.await(a, 240), expected, "ESA job 11 (priority 1)");
            assertReports(Bmv2Lab.await(b, 240), expected, "ESA job 12 (priority 5)");
            final Map<EsaCounter, Long> esa = lab.control().esaCounters();
            assertThat(esa.get(EsaCounter.COMPLETIONS)).as("blocks summed in the switch: %s", esa).isPositive();
            assertThat(esa.get(EsaCounter.PREEMPTIONS) + esa.get(EsaCounter.FALLBACK_COLLISION))
                .as("contention for the pool: %s", esa).isPositive();
        }
        finally
        {
            for (final InaggProcess server : servers)
            {
                server.kill();
            }
            lab.control().removeJob(11);
            lab.control().removeJob(12);
        }
    }

    /**
     * Issue 25: what {@code inagg_v1model.p4} does not carry on a job (anything but ALL_REDUCE SUM on a two-level or an
     * ESA job) is refused with REJECT UNSUPPORTED_COLLECTIVE: the workers of a REDUCE_SCATTER exit by themselves
     * naming the collective, the op and the node, long before their peer timeout (60 s), and bmv2 counted their
     * packets DROP_UNSUPPORTED. No parameter server runs: nothing reaches one.
     */
    @Test
    void shouldFailAReduceScatterAtOnceThroughJobsThatCarryOnlyAllReduceSum() throws Exception
    {
        lab.control().addJob(JobSpec.upstream(13, SLOTS, 0, LANES,
            List.of(lab.endpoint(0, 1), lab.endpoint(1, 2)), lab.serverEndpoint(3), 0, 1));
        assertRefusedAtOnce(13, "two-level job 13", () -> lab.control().counters().get(SwitchCounter.DROP_UNSUPPORTED),
            1, 2);
        esaPool();
        lab.control().addJob(new EsaJobSpec(14, 8, 64, 14, 114, 1, 80_000L,
            List.of(lab.endpoint(0, 4), lab.endpoint(1, 5)), lab.serverEndpoint(6)));
        assertRefusedAtOnce(14, "ESA job 14", () -> lab.control().esaCounters().get(EsaCounter.DROP_UNSUPPORTED),
            4, 5);
    }

    /**
     * Runs a REDUCE_SCATTER of job {@code jobId} (just added) with worker w on host {@code hosts[w]}: every worker
     * exits by itself, failed by the node's REJECT UNSUPPORTED_COLLECTIVE, well within its peer timeout, and
     * {@code dropped} (the switch's DROP_UNSUPPORTED) grew. Removes the job.
     */
    private void assertRefusedAtOnce(final int jobId, final String what, final LongSupplier dropped,
        final int... hosts) throws InterruptedException
    {
        final List<String> args = new ArrayList<>(List.of("--dtype", "int32", "-n", "20000", "-i", "1",
            "--collective", "reduce-scatter", "--seed", Long.toString(SEED)));
        args.addAll(TIMEOUTS);
        try
        {
            final long before = dropped.getAsLong();
            final long start = System.nanoTime();
            final List<InaggProcess> workers = new ArrayList<>();
            for (int w = 0; w < hosts.length; w++)
            {
                workers.add(lab.startWorker(jobId, w, hosts.length, hosts[w],
                    HostNetwork.SWITCH_IPV4 + ":" + InaggP4.UDP_PORT, args));
            }
            for (final InaggProcess worker : workers)
            {
                assertThat(worker.await(30)).as("%s: the worker exits by itself, failed:%n%s", what, worker.output())
                    .isNotZero().isNotEqualTo(-1);
                assertThat(worker.output()).as(what)
                    .contains("collective REDUCE_SCATTER (op SUM) is not supported by the node at");
            }
            assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start)).as("%s: seconds to fail", what)
                .isLessThan(30);
            assertThat(dropped.getAsLong() - before).as("%s: its REDUCE_SCATTER packets, dropped on bmv2", what)
                .isPositive();
        }
        finally
        {
            lab.control().removeJob(jobId);
        }
    }

    /** The ESA pool of the tests that run ESA jobs, set once per switch (JobTable takes one pool). */
    private void esaPool()
    {
        if (!esaPoolSet)
        {
            lab.control().esaPool(new EsaPool(2048, 4, AllocationMode.PREEMPTIVE, PriorityPolicy.JOB_TABLE));
            esaPoolSet = true;
        }
    }

    private static List<String> args(final String dtype, final int elements, final double loss)
    {
        final List<String> args = new ArrayList<>(List.of("--dtype", dtype, "-n", Integer.toString(elements), "-i",
            "1", "--seed", Long.toString(SEED), "--loss", Double.toString(loss)));
        args.addAll(TIMEOUTS);
        return args;
    }

    private static void assertReports(final List<WorkerReport> reports, final String expectedCrc, final String what)
    {
        for (final WorkerReport report : reports)
        {
            assertThat(report.ok()).as("%s: worker %d passes its own check (bound or exact):%n%s", what,
                report.worker(), report.output()).isTrue();
        }
        final String crc = reports.getFirst().crc32();
        assertThat(reports).as("%s: every worker has the same result", what)
            .allSatisfy(r -> assertThat(r.crc32()).isEqualTo(crc));
        if (expectedCrc != null)
        {
            assertThat(crc).as("%s: bmv2 result bit-identical to the software switch's", what).isEqualTo(expectedCrc);
        }
    }

    private static String softwareSwitchCrc(final int workers, final int elements)
    {
        return softwareSwitchCrc(workers, elements, LANES);
    }

    private static String softwareSwitchCrc(final int workers, final int elements, final int lanes)
    {
        return String.format(Locale.ROOT, "%08x",
            softwareSwitchCrc32(workers, elements, SEED, SLOTS, lanes));
    }

    /**
     * CRC-32 of worker 0's result when the in-process software switch all-reduces these gradients (iteration 0) with
     * {@code slots} slots of {@code lanes} lanes: what bmv2 must reproduce bit for bit.
     */
    private static long softwareSwitchCrc32(
        final int workers, final int elements, final long seed, final int slots, final int lanes)
    {
        final float[][] sources = new float[workers][elements];
        final float[][] results = new float[workers][elements];
        for (int w = 0; w < workers; w++)
        {
            SyntheticGradients.fill(sources[w], w, 0, seed);
        }
        try (LocalCluster cluster = LocalCluster.start(ClusterOptions.defaults(workers).withSlots(slots)
            .withLanes(lanes).withFaults(FaultConfig.NONE).withTimeouts(Duration.ofMillis(2), Duration.ofSeconds(30))))
        {
            cluster.allReduce(sources, results);
        }
        return SyntheticGradients.crc32(results[0]);
    }
}
