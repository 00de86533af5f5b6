package org.inagg.p4.bmv2;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.inagg.p4.control.EsaJobSpec;
import org.inagg.p4.control.EsaPool;
import org.inagg.p4.control.InaggP4;
import org.inagg.p4.control.JobSpec;
import org.inagg.p4.control.JobTable;
import org.inagg.p4.control.SwitchAddress;
import org.inagg.p4.control.WorkerEndpoint;
import org.inagg.p4.esa.EsaCounter;
import org.inagg.p4.softswitch.SwitchCounter;

/**
 * A running bmv2 {@code simple_switch} with {@code inagg_v1model.p4}, programmed job by job at run time: the bmv2
 * backend of the control plane, in the role {@link JobTable#applyTo(org.inagg.p4.softswitch.SoftwareSwitch)} has for
 * the software switch. Jobs come and go without restarting the switch.
 * <p>
 * The same {@link JobTable} validates every job (ids, multicast groups, slot ranges, the pool) and writes its rows
 * ({@link JobTable#simpleSwitchCommands(JobSpec, int, List)}), so a job is configured here exactly as the written
 * configuration of a fresh switch configures it. What a running switch adds:
 * <ul>
 *     <li>Registers: a job's slot range is cleared before its rows go in ({@code used_reg} per shadow copy, the
 *     {@code seen_reg} words of each copy: what {@link JobTable#V1MODEL_REGISTERS_TO_RESET} resets on a fresh switch;
 *     everything else is written by a round's first packet), and again when it is removed, so a job may take slots
 *     another job used.</li>
 *     <li>Handles: bmv2 numbers table entries and multicast nodes itself, reusing freed numbers, so every handle it
 *     answers is parsed and kept ({@link InstalledJob}); a job is removed by its handles, and each
 *     {@code mc_node_associate} is rewritten with the handle bmv2 gave the node.</li>
 *     <li>Order: a job's job table row goes in last (after its sources, endpoints and multicast group) and comes out
 *     first, so the switch never handles a packet of a half-configured job.</li>
 *     <li>Failures: a refused command undoes the job's rows already added and throws a {@link Bmv2CommandException}
 *     naming the command and the job.</li>
 * </ul>
 * One instance per running switch: jobs configured through other means are not seen (their slots could be handed out
 * again). Thread-safe.
 */
public final class Bmv2Switch
{
    static final String JOB_TABLE = "InaggIngress.job_table";
    static final String KEY_REG = "InaggIngress.key_reg";
    static final String TOMB_REG = "InaggIngress.tomb_reg";
    /** Cells per shadow copy of each register a job's first round needs at zero (indexed copy * cells + k). */
    static final Map<String, Integer> CELLS_PER_COPY =
        Map.of("InaggIngress.used_reg", 1, "InaggIngress.seen_reg", InaggP4.BITMAP_WORDS);

    static
    {
        if (!CELLS_PER_COPY.keySet().equals(Set.copyOf(JobTable.V1MODEL_REGISTERS_TO_RESET)))
        {
            throw new IllegalStateException("Bmv2Switch clears " + CELLS_PER_COPY.keySet() + " but JobTable resets "
                + JobTable.V1MODEL_REGISTERS_TO_RESET);
        }
        if (!Set.of(KEY_REG, TOMB_REG).equals(Set.copyOf(JobTable.V1MODEL_ESA_REGISTERS_TO_RESET)))
        {
            throw new IllegalStateException("Bmv2Switch clears " + KEY_REG + ", " + TOMB_REG
                + " for ESA but JobTable resets " + JobTable.V1MODEL_ESA_REGISTERS_TO_RESET);
        }
    }

    private final SimpleSwitchCli cli;
    private final JobTable table;
    private final Map<Integer, InstalledJob> installed = new LinkedHashMap<>();
    /** Route handles by destination IPv4 ({@link #addRoute}). */
    private final Map<Integer, Integer> routes = new LinkedHashMap<>();

    /**
     * Takes over a running switch: sets its address (egress {@code switch_address} default action).
     *
     * @throws Bmv2CommandException if bmv2 refuses it (not the inagg program?).
     */
    public Bmv2Switch(final SimpleSwitchCli cli, final SwitchAddress switchAddress)
    {
        this.cli = cli;
        this.table = new JobTable(switchAddress);
        final CommandResult result = cli.runAll(List.of(JobTable.simpleSwitchAddressCommand(switchAddress)))
            .getFirst();
        if (!result.ok())
        {
            throw result.exception("the switch address");
        }
    }

    public SimpleSwitchCli cli()
    {
        return cli;
    }

    public SwitchAddress switchAddress()
    {
        return table.switchAddress();
    }

    /** The slot-protocol and upstream jobs on the switch, in the order added. */
    public synchronized List<JobSpec> jobs()
    {
        return table.jobs();
    }

    /** The ESA jobs on the switch, in the order added. */
    public synchronized List<EsaJobSpec> esaJobs()
    {
        return table.esaJobs();
    }

    /**
     * Adds a slot-protocol or upstream job: clears its slot range, then adds its worker sources and endpoints (or its
     * server endpoint), its multicast group and nodes, and last its job table row.
     *
     * @throws IllegalArgumentException if its id or multicast group is taken, its slots overlap another job's or the
     *                                  ESA pool or leave the pool, or it needs more lanes or workers than the program
     *                                  has (nothing is sent to the switch).
     * @throws Bmv2CommandException     if bmv2 refuses a command (what was added is removed again).
     */
    public synchronized void addJob(final JobSpec job)
    {
        final List<String> rows = new ArrayList<>();
        JobTable.simpleSwitchCommands(job, 0, rows);
        table.add(job);
        try
        {
            final String context = "job " + job.jobId();
            clearSlots(job.slotBase(), job.slots(), context);
            installed.put(job.jobId(), InstalledJob.install(cli, rows, context));
        }
        catch (final RuntimeException ex)
        {
            table.remove(job.jobId());
            throw ex;
        }
    }

    /**
     * Starts session {@code session} of slot-protocol or upstream job {@code jobId}: a new run of it (docs/sessions.md).
     * The job's rows are taken out, its slot registers cleared and its rows installed again with the new session, so
     * that no packet of the old session, however late, reaches a register afterwards (the data plane drops it as
     * DROP_STALE_SESSION and tells its sender), and the new run starts from empty slots. Packets that arrive while the
     * rows are out are dropped as for an unknown job; the workers of the new run are told their session only after
     * this returns.
     *
     * @return the job as now installed.
     * @throws IllegalArgumentException if no slot-protocol job of that id was added here, or the session is outside
     *                                  0..65535.
     */
    public synchronized JobSpec startSession(final int jobId, final int session)
    {
        final JobSpec job = table.jobs().stream().filter(j -> j.jobId() == jobId).findFirst()
            .orElseThrow(() -> new IllegalArgumentException("job " + jobId + " is not a slot-protocol job on this switch"));
        final JobSpec next = job.withSession(session);
        removeJob(jobId);
        addJob(next);
        return next;
    }

    /**
     * Forwards ordinary IPv4 traffic (anything that is not inagg's, e.g. a parameter server's results and the packets
     * of workers that talk to it directly) for {@code ipv4} out of {@code port}, rewriting the destination MAC to
     * {@code mac}: a row of {@code InaggIngress.ipv4_forward}.
     *
     * @throws IllegalArgumentException if the address has a route already.
     * @throws Bmv2CommandException     if bmv2 refuses it.
     */
    public synchronized void addRoute(final int ipv4, final int port, final long mac)
    {
        if (routes.containsKey(ipv4))
        {
            throw new IllegalArgumentException("a route to " + WorkerEndpoint.formatIpv4(ipv4) + " exists already");
        }
        final String command = "table_add InaggIngress.ipv4_forward InaggIngress.forward "
            + WorkerEndpoint.formatIpv4(ipv4) + " => " + port + " " + WorkerEndpoint.formatMac(mac);
        final CommandResult result = cli.runAll(List.of(command)).getFirst();
        if (!result.ok() || result.entryHandle().isEmpty())
        {
            throw result.exception("the route to " + WorkerEndpoint.formatIpv4(ipv4));
        }
        routes.put(ipv4, result.entryHandle().getAsInt());
    }

    /** Removes the route to {@code ipv4} ({@link #addRoute}); nothing if there is none. */
    public synchronized void removeRoute(final int ipv4)
    {
        final Integer handle = routes.remove(ipv4);
        if (handle != null)
        {
            runOrThrow(List.of("table_delete InaggIngress.ipv4_forward " + handle),
                "the route to " + WorkerEndpoint.formatIpv4(ipv4));
        }
    }

    /**
     * Sets the shared ESA pool, once, before any ESA job: clears the aggregators' keys and tombstones in its range.
     *
     * @throws IllegalArgumentException if its slots overlap a slot-protocol job's.
     * @throws IllegalStateException    if the pool is already set.
     * @throws Bmv2CommandException     if bmv2 refuses a register write (the pool stays set, partly cleared).
     */
    public synchronized void esaPool(final EsaPool pool)
    {
        table.esaPool(pool);
        final List<String> commands = new ArrayList<>();
        for (final String register : JobTable.V1MODEL_ESA_REGISTERS_TO_RESET)
        {
            for (int copy = pool.firstCopy(); copy < pool.firstCopy() + pool.aggregators(); copy++)
            {
                commands.add(SimpleSwitchCli.registerWriteCommand(register, copy, 0));
            }
        }
        runOrThrow(commands, "the ESA pool");
    }

    /**
     * Adds a job of the shared ESA pool ({@link #esaPool(EsaPool)} first): its rows, result and flush groups, job
     * table row last.
     *
     * @throws IllegalArgumentException if its id or a multicast group is taken, or it does not fit the program.
     * @throws IllegalStateException    if no pool is set.
     * @throws Bmv2CommandException     if bmv2 refuses a command (what was added is removed again).
     */
    public synchronized void addJob(final EsaJobSpec job)
    {
        final List<String> rows = new ArrayList<>();
        table.simpleSwitchCommands(job, 0, rows);
        table.add(job);
        try
        {
            installed.put(job.jobId(), InstalledJob.install(cli, rows, "job " + job.jobId()));
        }
        catch (final RuntimeException ex)
        {
            table.remove(job.jobId());
            throw ex;
        }
    }

    /**
     * Removes a job: its job table row first, then its other rows, multicast nodes and groups, then clears its
     * registers (a slot job's slot range; an ESA job's aggregators and tombstones, which other ESA jobs may be taking
     * over at the same moment: one of theirs could be cleared too, and is then recovered by retransmission). The job
     * is forgotten even if bmv2 refuses a deletion.
     *
     * @throws IllegalArgumentException if no job of that id was added here.
     * @throws Bmv2CommandException     for the first deletion bmv2 refused (all were tried).
     */
    public synchronized void removeJob(final int jobId)
    {
        final InstalledJob job = installed.get(jobId);
        if (job == null)
        {
            throw new IllegalArgumentException("job " + jobId + " is not on this switch");
        }
        final JobSpec slotJob = table.jobs().stream().filter(j -> j.jobId() == jobId).findFirst().orElse(null);
        final String context = "removing job " + jobId;
        final CommandResult refused = firstRefused(cli.runAll(job.teardown()));
        installed.remove(jobId);
        table.remove(jobId);
        try
        {
            if (slotJob != null)
            {
                clearSlots(slotJob.slotBase(), slotJob.slots(), context);
            }
            else
            {
                clearAggregators(jobId, context);
            }
        }
        catch (final RuntimeException ex)
        {
            if (refused != null)
            {
                ex.addSuppressed(refused.exception(context));
            }
            throw ex;
        }
        if (refused != null)
        {
            throw refused.exception(context);
        }
    }

    /**
     * The switch's counters, as {@link org.inagg.p4.softswitch.SoftwareSwitch} counts them, packets: every
     * {@link SwitchCounter} the program keeps (a {@code C_} constant; not the software-only {@code TX_FULL} and
     * {@code RESULTS_RELAYED}), read
     * at index type id - 200 of its counter arrays ({@code inagg_counters}, and {@code egress_counters} for what is
     * counted per replica) and summed.
     */
    public Map<SwitchCounter, Long> counters()
    {
        final P4Counters program = P4Counters.v1model();
        final Map<SwitchCounter, List<String>> cells = new EnumMap<>(SwitchCounter.class);
        for (final SwitchCounter counter : SwitchCounter.values())
        {
            final List<String> counterCells = program.cells('C', counter.name());
            if (!counterCells.isEmpty())
            {
                cells.put(counter, counterCells);
            }
        }
        return read(cells, SwitchCounter.class, "the counters");
    }

    /**
     * The ESA counters, as {@link org.inagg.p4.esa.EsaSwitch} counts them, packets: every {@link EsaCounter} the
     * program keeps, the sum of its {@code E_} cells ({@code esa_counters}, {@code esa_egress_counters}) and, where the
     * program has a {@code C_} constant of that name, of its slot-protocol cells (what the switch counts before it
     * knows a job's mode: RECEIVED, DROP_MALFORMED, DROP_UNKNOWN_JOB; on a switch that also runs slot jobs those count
     * theirs too).
     */
    public Map<EsaCounter, Long> esaCounters()
    {
        final P4Counters program = P4Counters.v1model();
        final Map<EsaCounter, List<String>> cells = new EnumMap<>(EsaCounter.class);
        for (final EsaCounter counter : EsaCounter.values())
        {
            final List<String> counterCells = new ArrayList<>(program.cells('E', counter.name()));
            counterCells.addAll(program.cells('C', counter.name()));
            if (!counterCells.isEmpty())
            {
                cells.put(counter, counterCells);
            }
        }
        return read(cells, EsaCounter.class, "the ESA counters");
    }

    /** Reads every cell once, in one batch; each counter's value is the sum of its cells. */
    private <E extends Enum<E>> Map<E, Long> read(
        final Map<E, List<String>> cells, final Class<E> type, final String context)
    {
        final List<String> commands = new ArrayList<>();
        for (final List<String> counterCells : cells.values())
        {
            for (final String cell : counterCells)
            {
                final String command = "counter_read " + cell;
                if (!commands.contains(command))
                {
                    commands.add(command);
                }
            }
        }
        final List<CommandResult> results = runOrThrow(commands, context);
        final Map<String, Long> packets = new LinkedHashMap<>();
        for (int i = 0; i < commands.size(); i++)
        {
            packets.put(commands.get(i), SimpleSwitchCli.parseCounter(results.get(i)));
        }
        final Map<E, Long> values = new EnumMap<>(type);
        cells.forEach((counter, counterCells) -> values.put(counter,
            counterCells.stream().mapToLong(cell -> packets.get("counter_read " + cell)).sum()));
        return values;
    }

    /** Zeroes the registers a first round relies on, for every shadow copy of slots [base, base + slots). */
    private void clearSlots(final int slotBase, final int slots, final String context)
    {
        final List<String> commands = new ArrayList<>();
        for (final String register : JobTable.V1MODEL_REGISTERS_TO_RESET)
        {
            final int cells = CELLS_PER_COPY.get(register);
            for (int copy = 2 * slotBase; copy < 2 * (slotBase + slots); copy++)
            {
                for (int cell = 0; cell < cells; cell++)
                {
                    commands.add(SimpleSwitchCli.registerWriteCommand(register, copy * cells + cell, 0));
                }
            }
        }
        runOrThrow(commands, context);
    }

    /** Frees the pool's aggregators held by an ESA job and drops its tombstones. */
    private void clearAggregators(final int jobId, final String context)
    {
        final EsaPool pool = table.esaPool();
        if (pool == null)
        {
            return;
        }
        final long[] keys = cli.registerReadAll(KEY_REG);
        final long[] tombs = cli.registerReadAll(TOMB_REG);
        final List<String> commands = new ArrayList<>();
        for (int copy = pool.firstCopy(); copy < pool.firstCopy() + pool.aggregators(); copy++)
        {
            // key: sequence (63..32) | job (31..16) | priority (15..8) | state (7..0, 0 = free)
            if (copy < keys.length && (keys[copy] & 0xFF) != 0 && (keys[copy] >>> 16 & 0xFFFF) == jobId)
            {
                commands.add(SimpleSwitchCli.registerWriteCommand(KEY_REG, copy, 0));
            }
            // tombstone: 1 (63..48) | job (47..32) | sequence (31..0)
            if (copy < tombs.length && (tombs[copy] >>> 48) != 0 && (tombs[copy] >>> 32 & 0xFFFF) == jobId)
            {
                commands.add(SimpleSwitchCli.registerWriteCommand(TOMB_REG, copy, 0));
            }
        }
        runOrThrow(commands, context);
    }

    private List<CommandResult> runOrThrow(final List<String> commands, final String context)
    {
        final List<CommandResult> results = cli.runAll(commands);
        final CommandResult refused = firstRefused(results);
        if (refused != null)
        {
            throw refused.exception(context);
        }
        return results;
    }

    private static CommandResult firstRefused(final List<CommandResult> results)
    {
        for (final CommandResult result : results)
        {
            if (!result.ok())
            {
                return result;
            }
        }
        return null;
    }
}
