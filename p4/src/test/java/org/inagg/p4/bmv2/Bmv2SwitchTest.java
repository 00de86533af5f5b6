package org.inagg.p4.bmv2;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;

import org.inagg.p4.control.EsaJobSpec;
import org.inagg.p4.control.EsaPool;
import org.inagg.p4.control.InaggP4;
import org.inagg.p4.control.JobSpec;
import org.inagg.p4.control.SwitchAddress;
import org.inagg.p4.control.WorkerEndpoint;
import org.inagg.p4.esa.AllocationMode;
import org.inagg.p4.esa.EsaCounter;
import org.inagg.p4.esa.PriorityPolicy;
import org.inagg.p4.softswitch.SwitchCounter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link Bmv2Switch} on one simple_switch (no data ports) for the whole class: jobs added and removed at run time,
 * read back from bmv2's tables, multicast engine and registers. Each test uses slots, job ids and groups of its own and
 * removes its jobs, so the order of the tests does not matter.
 */
class Bmv2SwitchTest
{
    private static final SwitchAddress SWITCH = new SwitchAddress(0x0200_0000_00feL, 0x0a00_00fe);
    private static final String JOB_TABLE = "InaggIngress.job_table";
    private static final String WORKER_SOURCE = "InaggIngress.worker_source";
    private static final String WORKER_ENDPOINT = "InaggEgress.worker_endpoint";
    private static final String SERVER_ENDPOINT = "InaggEgress.server_endpoint";
    private static final String USED = "InaggIngress.used_reg";
    private static final String SEEN = "InaggIngress.seen_reg";

    private static SimpleSwitchProcess simpleSwitch;
    private static SimpleSwitchCli cli;
    private static Bmv2Switch bmv2;

    @BeforeAll
    static void startSwitch()
    {
        final P4Toolchain toolchain = Bmv2TestEnvironment.assumeToolchain();
        simpleSwitch = SimpleSwitchProcess.start(new SimpleSwitchProcess.Context()
            .toolchain(toolchain)
            .json(Bmv2TestEnvironment.v1modelJson()));
        cli = simpleSwitch.cli();
        bmv2 = new Bmv2Switch(cli, SWITCH);
    }

    @AfterAll
    static void stopSwitch()
    {
        if (simpleSwitch != null)
        {
            simpleSwitch.close();
        }
    }

    private static WorkerEndpoint worker(final int n)
    {
        return new WorkerEndpoint(n, n + 1, 0x0200_0000_0000L + n + 1, 0x0a00_0001 + n, 40001 + n);
    }

    private static List<WorkerEndpoint> workers(final int first, final int count)
    {
        final List<WorkerEndpoint> workers = new ArrayList<>();
        for (int n = first; n < first + count; n++)
        {
            workers.add(worker(n));
        }
        return workers;
    }

    private static int entries(final String table)
    {
        return cli.tableNumEntries(table);
    }

    @Test
    void shouldProgramAJobsRowsAndMulticastGroup()
    {
        final int jobsBefore = entries(JOB_TABLE);
        final int sourcesBefore = entries(WORKER_SOURCE);
        final int endpointsBefore = entries(WORKER_ENDPOINT);
        bmv2.addJob(new JobSpec(11, 4, 100, 8, 11, workers(0, 3)));
        try
        {
            assertThat(entries(JOB_TABLE)).isEqualTo(jobsBefore + 1);
            assertThat(entries(WORKER_SOURCE)).isEqualTo(sourcesBefore + 3);
            assertThat(entries(WORKER_ENDPOINT)).isEqualTo(endpointsBefore + 3);
            // workers 3, slots 4, slot base 100, lanes 8, group 11
            assertThat(cli.tableDump(JOB_TABLE)).contains("EXACT     000b")
                .contains("InaggIngress.set_job - 03, 04, 64, 08, 0b");
            assertThat(cli.tableDump(WORKER_SOURCE)).contains("0a000003"); // worker 2's 10.0.0.3
            assertThat(cli.tableDump(WORKER_ENDPOINT)).contains("020000000003, 0a000003, 9c43");
            final String mc = cli.mcDump();
            assertThat(mc).contains("mgrp(11)");
            assertThat(group(mc, 11)).hasSize(3)
                .anySatisfy(node -> assertThat(node).contains("rid=0").contains("ports=[1]"))
                .anySatisfy(node -> assertThat(node).contains("rid=1").contains("ports=[2]"))
                .anySatisfy(node -> assertThat(node).contains("rid=2").contains("ports=[3]"));
            assertThat(bmv2.jobs()).extracting(JobSpec::jobId).contains(11);
        }
        finally
        {
            bmv2.removeJob(11);
        }
        assertThat(entries(JOB_TABLE)).isEqualTo(jobsBefore);
        assertThat(entries(WORKER_SOURCE)).isEqualTo(sourcesBefore);
        assertThat(entries(WORKER_ENDPOINT)).isEqualTo(endpointsBefore);
        assertThat(cli.mcDump()).doesNotContain("mgrp(11)");
        assertThat(bmv2.jobs()).extracting(JobSpec::jobId).doesNotContain(11);
    }

    /** The node lines of one group in an {@code mc_dump}. */
    private static List<String> group(final String mcDump, final int group)
    {
        final List<String> nodes = new ArrayList<>();
        boolean inGroup = false;
        for (final String line : mcDump.split("\n"))
        {
            if (line.startsWith("mgrp("))
            {
                inGroup = line.equals("mgrp(" + group + ")");
            }
            else if (inGroup && line.strip().startsWith("->"))
            {
                nodes.add(line.strip());
            }
            else if (!line.startsWith(" "))
            {
                inGroup = false;
            }
        }
        return nodes;
    }

    @Test
    void shouldAddASecondJobBesideTheFirst()
    {
        final int jobsBefore = entries(JOB_TABLE);
        bmv2.addJob(new JobSpec(21, 8, 200, 16, 21, workers(0, 2)));
        try
        {
            bmv2.addJob(new JobSpec(22, 8, 208, 16, 22, workers(2, 4)));
            try
            {
                assertThat(entries(JOB_TABLE)).isEqualTo(jobsBefore + 2);
                final String mc = cli.mcDump();
                assertThat(group(mc, 21)).hasSize(2);
                assertThat(group(mc, 22)).hasSize(4)
                    .anySatisfy(node -> assertThat(node).contains("rid=3").contains("ports=[6]"));
            }
            finally
            {
                bmv2.removeJob(22);
            }
            assertThat(group(cli.mcDump(), 21)).hasSize(2);
            assertThat(entries(JOB_TABLE)).isEqualTo(jobsBefore + 1);
        }
        finally
        {
            bmv2.removeJob(21);
        }
        assertThat(entries(JOB_TABLE)).isEqualTo(jobsBefore);
    }

    @Test
    void shouldClearTheSlotsOfARemovedJobAndOfANewJobOverThem()
    {
        final int base = 300;
        final int slots = 4;
        final JobSpec first = new JobSpec(31, slots, base, 8, 31, workers(0, 2));
        bmv2.addJob(first);
        // what rounds of the first job leave behind, and a neighbour's copy just past the range
        final int firstCopy = 2 * base;
        final int lastCopy = 2 * (base + slots) - 1;
        dirty(firstCopy, lastCopy + 1);
        bmv2.removeJob(31);
        assertCleared(firstCopy, lastCopy);
        assertThat(cli.registerRead(USED, lastCopy + 1)).isEqualTo(1);
        assertThat(cli.registerRead(SEEN, (lastCopy + 1) * InaggP4.BITMAP_WORDS + 7)).isEqualTo(0x80);

        // left over without a removal (say by a controller that died): a new job over the same slots clears them
        dirty(firstCopy, lastCopy);
        final JobSpec second = new JobSpec(32, slots, base, 8, 32, workers(4, 3));
        bmv2.addJob(second);
        try
        {
            assertCleared(firstCopy, lastCopy);
            assertThat(cli.registerRead(USED, lastCopy + 1)).isEqualTo(1);
            // the new job's nodes carry the handles bmv2 gave them, whatever it reused
            assertThat(group(cli.mcDump(), 32)).hasSize(3)
                .anySatisfy(node -> assertThat(node).contains("rid=0").contains("ports=[5]"))
                .anySatisfy(node -> assertThat(node).contains("rid=2").contains("ports=[7]"));
        }
        finally
        {
            bmv2.removeJob(32);
            cli.registerWrite(USED, lastCopy + 1, 0);
            cli.registerWrite(SEEN, (lastCopy + 1) * InaggP4.BITMAP_WORDS + 7, 0);
        }
    }

    /** Marks copies [from, to] used with a seen bit in their first and last words. */
    private static void dirty(final int from, final int to)
    {
        final List<String> commands = new ArrayList<>();
        for (int copy = from; copy <= to; copy++)
        {
            commands.add("register_write " + USED + " " + copy + " 1");
            commands.add("register_write " + SEEN + " " + copy * InaggP4.BITMAP_WORDS + " 5");
            commands.add("register_write " + SEEN + " " + (copy * InaggP4.BITMAP_WORDS + 7) + " 128");
        }
        cli.run(commands);
        assertThat(cli.registerRead(USED, from)).isEqualTo(1);
        assertThat(cli.registerRead(SEEN, to * InaggP4.BITMAP_WORDS + 7)).isEqualTo(0x80);
    }

    private static void assertCleared(final int from, final int to)
    {
        final long[] used = cli.registerReadAll(USED);
        final long[] seen = cli.registerReadAll(SEEN);
        assertThat(used).hasSize(InaggP4.POOL_SLOTS * 2);
        assertThat(seen).hasSize(InaggP4.POOL_SLOTS * 2 * InaggP4.BITMAP_WORDS);
        for (int copy = from; copy <= to; copy++)
        {
            assertThat(used[copy]).as("used_reg[%d]", copy).isZero();
            for (int word = 0; word < InaggP4.BITMAP_WORDS; word++)
            {
                assertThat(seen[copy * InaggP4.BITMAP_WORDS + word]).as("seen_reg of copy %d", copy).isZero();
            }
        }
    }

    @Test
    void shouldRefuseADuplicateJobIdOrOverlappingSlotsBeforeTouchingTheSwitch()
    {
        bmv2.addJob(new JobSpec(41, 8, 400, 8, 41, workers(0, 2)));
        try
        {
            final int jobsBefore = entries(JOB_TABLE);
            assertThatThrownBy(() -> bmv2.addJob(new JobSpec(41, 8, 500, 8, 42, workers(0, 2))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("job 41 is already in the table");
            assertThatThrownBy(() -> bmv2.addJob(new JobSpec(43, 8, 404, 8, 43, workers(0, 2))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("job 43: slots 404..411 overlap job 41's slots 400..407");
            assertThatThrownBy(() -> bmv2.addJob(new JobSpec(44, 8, 500, 8, 41, workers(0, 2))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("job 44: multicast group 41 is job 41's");
            assertThat(entries(JOB_TABLE)).isEqualTo(jobsBefore);
            assertThat(bmv2.jobs()).extracting(JobSpec::jobId).contains(41).doesNotContain(43, 44);
        }
        finally
        {
            bmv2.removeJob(41);
        }
        assertThatThrownBy(() -> bmv2.removeJob(41))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("job 41 is not on this switch");
    }

    @Test
    void shouldNameTheRefusedCommandAndUndoTheJob()
    {
        // a row bmv2 already holds: the job's own worker_endpoint row for worker 1 is refused
        final String conflicting = "table_add " + WORKER_ENDPOINT + " InaggEgress.set_endpoint 51 1 => "
            + "02:00:00:00:00:09 10.0.0.9 40009";
        final int handle = cli.run(List.of(conflicting)).getFirst().entryHandle().orElseThrow();
        final int jobsBefore = entries(JOB_TABLE);
        final int sourcesBefore = entries(WORKER_SOURCE);
        final int endpointsBefore = entries(WORKER_ENDPOINT);
        final JobSpec job = new JobSpec(51, 4, 510, 8, 51, workers(0, 3));
        try
        {
            assertThatThrownBy(() -> bmv2.addJob(job))
                .isInstanceOf(Bmv2CommandException.class)
                .hasMessage("bmv2 refused table_add InaggEgress.worker_endpoint InaggEgress.set_endpoint 51 1 => "
                    + "02:00:00:00:00:02 10.0.0.2 40002 for job 51: DUPLICATE_ENTRY")
                .satisfies(ex -> assertThat(((Bmv2CommandException)ex).reason()).isEqualTo("DUPLICATE_ENTRY"));
            // undone: nothing of the job is left, and the job is not on the switch
            assertThat(entries(JOB_TABLE)).isEqualTo(jobsBefore);
            assertThat(entries(WORKER_SOURCE)).isEqualTo(sourcesBefore);
            assertThat(entries(WORKER_ENDPOINT)).isEqualTo(endpointsBefore);
            assertThat(cli.mcDump()).doesNotContain("mgrp(51)");
            assertThat(bmv2.jobs()).extracting(JobSpec::jobId).doesNotContain(51);
        }
        finally
        {
            cli.run("table_delete " + WORKER_ENDPOINT + " " + handle);
        }
        bmv2.addJob(job); // once the conflict is gone
        bmv2.removeJob(51);
    }

    @Test
    void shouldMapEachAnswerToItsCommand()
    {
        final List<CommandResult> results = cli.runAll(List.of(
            "table_num_entries " + JOB_TABLE,
            "table_add InaggIngress.no_such_table InaggIngress.set_job 1 => 1 1 0 1 1",
            "table_delete " + JOB_TABLE + " 4000",
            "register_read " + USED + " 999999",
            "no_such_command",
            "counter_read InaggIngress.inagg_counters 1"));
        assertThat(results).extracting(CommandResult::ok).containsExactly(true, false, false, false, false, true);
        assertThat(results.get(1).reason()).isEqualTo("Invalid table name (InaggIngress.no_such_table)");
        assertThat(results.get(2).reason()).isEqualTo("INVALID_HANDLE");
        assertThat(results.get(3).reason()).isEqualTo("INVALID_INDEX");
        assertThat(results.get(4).error()).isEqualTo("*** Unknown syntax: no_such_command");
        assertThat(results.get(5).output()).contains("inagg_counters[1]=");

        assertThatThrownBy(() -> cli.run("table_add InaggIngress.no_such_table InaggIngress.set_job 1 => 1"))
            .isInstanceOf(Bmv2CommandException.class)
            .hasMessage("bmv2 refused table_add InaggIngress.no_such_table InaggIngress.set_job 1 => 1:"
                + " Invalid table name (InaggIngress.no_such_table)");

        // a command that crashes the CLI (a Python traceback) ends the batch; the rest are reported as not run
        final List<CommandResult> crashed = cli.runAll(List.of("mc_node_destroy x", "table_num_entries " + JOB_TABLE));
        assertThat(crashed.get(0).error()).startsWith("simple_switch_CLI crashed: ValueError");
        assertThat(crashed.get(1).error()).startsWith("not run: simple_switch_CLI stopped at command 1");
    }

    @Test
    void shouldReadTheCountersByTypeId()
    {
        final Map<SwitchCounter, Long> before = bmv2.counters();
        final EnumSet<SwitchCounter> softwareOnly = EnumSet.of(SwitchCounter.TX_FULL, SwitchCounter.RESULTS_RELAYED);
        assertThat(before).containsKeys(EnumSet.complementOf(softwareOnly).toArray(SwitchCounter[]::new))
            .doesNotContainKeys(softwareOnly.toArray(SwitchCounter[]::new));
        // counter_write <name> <index> <packets> <bytes>
        cli.run(List.of("counter_write InaggIngress.inagg_counters 5 17 0",
            "counter_write InaggEgress.egress_counters 3 23 0",
            "counter_write InaggIngress.inagg_counters 18 29 0",
            "counter_write InaggIngress.esa_counters 16 31 0"));
        try
        {
            final Map<SwitchCounter, Long> counters = bmv2.counters();
            assertThat(counters).containsEntry(SwitchCounter.DUPLICATES, 17L)
                .containsEntry(SwitchCounter.RESULTS_SENT, 23L)
                .containsEntry(SwitchCounter.UPSTREAM_FORWARDS, 29L);
            assertThat(cli.counterRead("InaggIngress.inagg_counters", 5)).isEqualTo(17);
            assertThat(bmv2.esaCounters()).containsEntry(EsaCounter.ACKS, 31L);
        }
        finally
        {
            cli.run(List.of("counter_write InaggIngress.inagg_counters 5 0 0",
                "counter_write InaggEgress.egress_counters 3 0 0",
                "counter_write InaggIngress.inagg_counters 18 0 0",
                "counter_write InaggIngress.esa_counters 16 0 0"));
        }
    }

    @Test
    void shouldProgramAnUpstreamJob()
    {
        final int serversBefore = entries(SERVER_ENDPOINT);
        final int endpointsBefore = entries(WORKER_ENDPOINT);
        final int sourcesBefore = entries(WORKER_SOURCE);
        final WorkerEndpoint server = worker(8);
        bmv2.addJob(JobSpec.upstream(61, 4, 600, 8, workers(0, 40), server, 1, 2, 33));
        try
        {
            // workers 40, slots 4, base 600, lanes 8, contributors 3, server port 9, bitmap words 0b110, 0b10
            assertThat(cli.tableDump(JOB_TABLE)).contains("InaggIngress.set_upstream_job - 28, 04, 0258, 08, 03, 09,"
                + " 06, 02, 00, 00, 00, 00, 00, 00");
            assertThat(entries(SERVER_ENDPOINT)).isEqualTo(serversBefore + 1);
            assertThat(entries(WORKER_SOURCE)).isEqualTo(sourcesBefore + 3);
            assertThat(entries(WORKER_ENDPOINT)).isEqualTo(endpointsBefore);
        }
        finally
        {
            bmv2.removeJob(61);
        }
        assertThat(entries(SERVER_ENDPOINT)).isEqualTo(serversBefore);
        assertThat(entries(WORKER_SOURCE)).isEqualTo(sourcesBefore);
    }

    @Test
    void shouldProgramEsaJobsAndFreeTheAggregatorsOfARemovedOne()
    {
        // The pool is set once per switch: this is the only test that uses it (slots 2048..2055, copies 4096..4111).
        final EsaPool pool = new EsaPool(2048, 16, AllocationMode.PREEMPTIVE, PriorityPolicy.HEADER);
        final int firstCopy = pool.firstCopy();
        cli.run(List.of("register_write " + Bmv2Switch.KEY_REG + " " + firstCopy + " 77",
            "register_write " + Bmv2Switch.TOMB_REG + " " + (firstCopy + 15) + " 77"));
        bmv2.esaPool(pool);
        assertThat(cli.registerRead(Bmv2Switch.KEY_REG, firstCopy)).isZero();
        assertThat(cli.registerRead(Bmv2Switch.TOMB_REG, firstCopy + 15)).isZero();
        assertThatThrownBy(() -> bmv2.addJob(new JobSpec(70, 4, 2050, 8, 70, workers(0, 2))))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("overlap job 70's slots 2050..2053");

        final int serversBefore = entries(SERVER_ENDPOINT);
        bmv2.addJob(new EsaJobSpec(71, 64, 32, 71, 171, 5, 1L << 20, workers(0, 3), worker(8)));
        bmv2.addJob(new EsaJobSpec(72, 64, 32, 72, 172, 5, 1L << 20, workers(3, 2), worker(9)));
        final String mc = cli.mcDump();
        assertThat(group(mc, 71)).hasSize(4).anySatisfy(node -> assertThat(node).contains("rid=65535")
            .contains("ports=[9]"));
        assertThat(group(mc, 171)).hasSize(2).anySatisfy(node -> assertThat(node).contains("rid=65534"));
        assertThat(entries(SERVER_ENDPOINT)).isEqualTo(serversBefore + 2);
        assertThat(bmv2.esaJobs()).extracting(EsaJobSpec::jobId).containsExactly(71, 72);

        // aggregators held by each job (sequence | job | priority | state 1), a tombstone of job 71 (1 | job | seq)
        final long key71 = (5L << 32) | (71L << 16) | (3L << 8) | 1;
        final long key72 = (6L << 32) | (72L << 16) | (3L << 8) | 1;
        final long tomb71 = (1L << 48) | (71L << 32) | 9;
        cli.run(List.of("register_write " + Bmv2Switch.KEY_REG + " " + (firstCopy + 2) + " " + key71,
            "register_write " + Bmv2Switch.KEY_REG + " " + (firstCopy + 3) + " " + key72,
            "register_write " + Bmv2Switch.TOMB_REG + " " + (firstCopy + 4) + " " + tomb71));
        bmv2.removeJob(71);
        assertThat(cli.registerRead(Bmv2Switch.KEY_REG, firstCopy + 2)).isZero();
        assertThat(cli.registerRead(Bmv2Switch.KEY_REG, firstCopy + 3)).isEqualTo(key72);
        assertThat(cli.registerRead(Bmv2Switch.TOMB_REG, firstCopy + 4)).isZero();
        assertThat(group(cli.mcDump(), 71)).isEmpty();
        assertThat(cli.mcDump()).doesNotContain("mgrp(171)").contains("mgrp(172)");

        bmv2.removeJob(72);
        cli.registerWrite(Bmv2Switch.KEY_REG, firstCopy + 3, 0);
        assertThat(entries(SERVER_ENDPOINT)).isEqualTo(serversBefore);
        assertThat(bmv2.esaJobs()).isEmpty();
    }
}
