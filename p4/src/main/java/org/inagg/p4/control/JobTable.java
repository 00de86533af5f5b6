package org.inagg.p4.control;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.inagg.p4.esa.AllocationMode;
import org.inagg.p4.esa.EsaSwitch;
import org.inagg.p4.esa.EsaSwitchSettings;
import org.inagg.p4.esa.PriorityPolicy;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.wire.InaggHeader;

/**
 * The jobs of one switch and the switch's own address: validated together (job ids, multicast groups and slot ranges
 * never shared, ranges inside the pool), then applied to a {@link SoftwareSwitch} or written out for the P4 programs.
 * <p>
 * Slot-protocol jobs ({@link JobSpec}) and jobs of the shared ESA pool ({@link EsaJobSpec}, after
 * {@link #esaPool(EsaPool)}) can share one v1model switch: the pool takes a slot range of its own. They can share one
 * TNA switch too, within that program's ESA limits ({@link #bfrtPython()}): there the pool is 4096 aggregators in
 * registers of their own and lane rows after the slot jobs'. In software they run on two switches: slot jobs on a
 * {@link SoftwareSwitch}, ESA jobs on an {@link EsaSwitch}.
 * <p>
 * The written configurations assume a switch freshly started with the program: bmv2 numbers multicast nodes from 0 in
 * creation order, and the TNA script numbers its nodes from 1. A running bmv2 is programmed job by job, slot ranges
 * cleared, by {@code org.inagg.p4.bmv2.Bmv2Switch}, from the same rows ({@link #simpleSwitchCommands(JobSpec, int,
 * List)}).
 */
public final class JobTable
{
    /**
     * Registers that must start at zero for a job's first round: the used flags (one per shadow copy) and the seen
     * bitmaps ({@link InaggP4#BITMAP_WORDS} words per copy); the others are written by a round's first packet.
     */
    public static final List<String> V1MODEL_REGISTERS_TO_RESET =
        List.of("InaggIngress.used_reg", "InaggIngress.seen_reg");
    /** With ESA jobs also: the aggregators' keys (all free) and tombstones (none), one per copy of the pool. */
    public static final List<String> V1MODEL_ESA_REGISTERS_TO_RESET =
        List.of("InaggIngress.key_reg", "InaggIngress.tomb_reg");
    /** Registers of {@code inagg_tna.p4} the BF Runtime script clears: rounds, seen words (and ESA keys, bitmaps). */
    static final List<String> TNA_REGISTERS_TO_CLEAR = List.of("round_reg", "seen0_reg", "seen1_reg");
    /**
     * With ESA jobs also: the held bytes (0: every aggregator free, so a first TAKE is an allocation, not an eviction)
     * and the tombstones (none). The ESA keys (in {@code seen1_reg}) and bitmaps (in {@code round_reg}) are cleared with
     * the slot registers; {@code esa_seq_reg}, {@code esa_id_reg}, the ESA part of {@code exp_reg} and the lanes are
     * written by an aggregator's first TAKE before anything reads them.
     */
    static final List<String> TNA_ESA_REGISTERS_TO_CLEAR = List.of("esa_fmt_reg", "esa_tomb_reg");
    /** {@code max_pkt_len} of the TNA script's mirror sessions: no truncation of the mirrored retransmission. */
    static final int TNA_MIRROR_MAX_PKT_LEN = 16384;
    /** Multicast replication id of the parameter server's node (worker ids stay below {@link InaggP4#MAX_WORKERS}). */
    public static final int SERVER_RID = 0xFFFF;
    /** Replication id of the flush group's first node, the flushed PARTIAL (the RAW follows on {@link #SERVER_RID}). */
    public static final int FLUSH_RID = 0xFFFE;
    /**
     * The session of every ESA job's row: the ESA switch and parameter server keep no sessions yet (their JOINs are
     * answered with session 0; docs/sessions.md).
     */
    static final int ESA_SESSION = 0;

    /** Job modes of the v1model job table's {@code set_esa_job}. */
    static final int MODE_ESA = 1;
    static final int MODE_ATP = 2;

    private final SwitchAddress switchAddress;
    private final Map<Integer, JobSpec> jobs = new LinkedHashMap<>();
    private final Map<Integer, EsaJobSpec> esaJobs = new LinkedHashMap<>();
    private EsaPool esaPool;

    public JobTable(final SwitchAddress switchAddress)
    {
        this.switchAddress = switchAddress;
    }

    public SwitchAddress switchAddress()
    {
        return switchAddress;
    }

    public List<JobSpec> jobs()
    {
        return List.copyOf(jobs.values());
    }

    public List<EsaJobSpec> esaJobs()
    {
        return List.copyOf(esaJobs.values());
    }

    /** The ESA pool, or null. */
    public EsaPool esaPool()
    {
        return esaPool;
    }

    /**
     * Sets the shared ESA pool, once, before any ESA job.
     *
     * @throws IllegalArgumentException if its slots overlap a slot-protocol job's.
     * @throws IllegalStateException    if the pool is already set.
     */
    public JobTable esaPool(final EsaPool pool)
    {
        if (esaPool != null)
        {
            throw new IllegalStateException("the ESA pool is already set");
        }
        for (final JobSpec other : jobs.values())
        {
            checkDisjoint(pool.slotBase(), pool.slots(), "the ESA pool", other);
        }
        esaPool = pool;
        return this;
    }

    /**
     * Adds a job of the shared ESA pool.
     *
     * @throws IllegalArgumentException if its id or one of its multicast groups is taken, or it does not fit the
     *                                  v1model program.
     * @throws IllegalStateException    if no pool is set.
     */
    public JobTable add(final EsaJobSpec job)
    {
        if (esaPool == null)
        {
            throw new IllegalStateException("job " + job.jobId() + ": set the ESA pool first");
        }
        checkFits(job.jobId(), job.lanes(), job.workerCount(), InaggP4.V1MODEL_MAX_LANES, "v1model");
        checkNew(job.jobId(), job.multicastGroup());
        checkNew(job.jobId(), job.flushGroup());
        esaJobs.put(job.jobId(), job);
        return this;
    }

    private void checkNew(final int jobId, final int group)
    {
        if (jobs.containsKey(jobId) || esaJobs.containsKey(jobId))
        {
            throw new IllegalArgumentException("job " + jobId + " is already in the table");
        }
        for (final JobSpec other : jobs.values())
        {
            if (other.multicastGroup() == group)
            {
                throw new IllegalArgumentException("job " + jobId + ": multicast group " + group + " is job "
                    + other.jobId() + "'s");
            }
        }
        for (final EsaJobSpec other : esaJobs.values())
        {
            if (other.multicastGroup() == group || other.flushGroup() == group)
            {
                throw new IllegalArgumentException("job " + jobId + ": multicast group " + group + " is job "
                    + other.jobId() + "'s");
            }
        }
    }

    private static void checkDisjoint(final int base, final int slots, final String what, final JobSpec other)
    {
        if (base < other.slotBase() + other.slots() && other.slotBase() < base + slots)
        {
            throw new IllegalArgumentException(what + ": slots " + base + ".." + (base + slots - 1)
                + " overlap job " + other.jobId() + "'s slots " + other.slotBase() + ".."
                + (other.slotBase() + other.slots() - 1));
        }
    }

    /**
     * Adds a job.
     *
     * @throws IllegalArgumentException if its id or multicast group is taken, its slots overlap another job's or leave
     *                                  the pool of {@link InaggP4#POOL_SLOTS}.
     */
    public JobTable add(final JobSpec job)
    {
        if (jobs.containsKey(job.jobId()))
        {
            throw new IllegalArgumentException("job " + job.jobId() + " is already in the table");
        }
        if (job.slotBase() + job.slots() > InaggP4.POOL_SLOTS)
        {
            throw new IllegalArgumentException("job " + job.jobId() + ": slots " + job.slotBase() + ".."
                + (job.slotBase() + job.slots() - 1) + " leave the pool of " + InaggP4.POOL_SLOTS);
        }
        for (final JobSpec other : jobs.values())
        {
            if (!job.isUpstream() && other.multicastGroup() == job.multicastGroup())
            {
                throw new IllegalArgumentException("job " + job.jobId() + ": multicast group " + job.multicastGroup()
                    + " is job " + other.jobId() + "'s");
            }
            if (job.slotBase() < other.slotBase() + other.slots() && other.slotBase() < job.slotBase() + job.slots())
            {
                throw new IllegalArgumentException("job " + job.jobId() + ": slots " + job.slotBase() + ".."
                    + (job.slotBase() + job.slots() - 1) + " overlap job " + other.jobId() + "'s slots "
                    + other.slotBase() + ".." + (other.slotBase() + other.slots() - 1));
            }
        }
        if (esaPool != null)
        {
            checkDisjoint(esaPool.slotBase(), esaPool.slots(), "the ESA pool", job);
        }
        if (!esaJobs.isEmpty())
        {
            checkNew(job.jobId(), job.multicastGroup()); // an upstream job's group 0 is never an ESA job's
        }
        jobs.put(job.jobId(), job);
        return this;
    }

    /**
     * Removes a job, slot-protocol or ESA, freeing its id, slots and multicast groups (the ESA pool stays).
     *
     * @throws IllegalArgumentException if no job has that id.
     */
    public JobTable remove(final int jobId)
    {
        if (jobs.remove(jobId) != null || esaJobs.remove(jobId) != null)
        {
            return this;
        }
        throw new IllegalArgumentException("job " + jobId + " is not in the table");
    }

    /**
     * Installs every slot-protocol job in a software switch, with each worker's peer registered; an upstream job with
     * its {@link org.inagg.p4.softswitch.UpstreamAggregation}.
     */
    public void applyTo(final SoftwareSwitch softwareSwitch)
    {
        for (final JobSpec job : jobs.values())
        {
            softwareSwitch.addJob(job.toSwitchJobConfig(),
                job.isUpstream() ? job.upstream().toUpstreamAggregation() : null);
        }
    }

    /** Installs every ESA job in an ESA switch built with {@link #esaSwitchSettings(int)}. */
    public void applyTo(final EsaSwitch esaSwitch)
    {
        for (final EsaJobSpec job : esaJobs.values())
        {
            esaSwitch.addJob(job.toEsaJobConfig());
        }
    }

    /** The settings of an {@link EsaSwitch} that behaves as the v1model program configured with this table. */
    public EsaSwitchSettings esaSwitchSettings(final int receiveBurst)
    {
        if (esaPool == null)
        {
            throw new IllegalStateException("no ESA pool");
        }
        return new EsaSwitchSettings(esaPool.aggregators(), InaggP4.MAX_WORKERS, InaggP4.V1MODEL_MAX_LANES,
            esaPool.mode(), esaPool.policy(), receiveBurst);
    }

    /**
     * {@code simple_switch_CLI} commands that configure {@code inagg_v1model.p4} on a freshly started bmv2: clear the
     * registers a first round relies on, set the switch address, then per job its job table row, the registered source
     * of each worker, each worker's endpoint for egress, and its multicast group with one node per worker (replication
     * id = worker id). ESA jobs follow the slot jobs: also the keys and tombstones reset, and per job its
     * {@code set_esa_job} row (workers, window, lanes, result group, flush group, mode, first copy of the pool, pool
     * mask, hash offset, priority from the header, table priority, server port), its server's source and endpoint, its
     * result group with the server's node last ({@link #SERVER_RID}) and its flush group (the server twice:
     * {@link #FLUSH_RID}, then {@link #SERVER_RID}). An upstream job ({@link JobSpec#upstream()}) has a
     * {@code set_upstream_job} row instead (workers, slots, slot base, lanes, contributors, server port, the local
     * workers' 8 bitmap words as unsigned decimals), the registered source of each local worker, and its server's
     * endpoint; no worker endpoints and no multicast group (the switch sends only to the server).
     *
     * @throws IllegalArgumentException if a job needs more lanes or workers than the v1model program covers.
     */
    public List<String> simpleSwitchCommands()
    {
        final List<String> commands = new ArrayList<>();
        for (final String register : V1MODEL_REGISTERS_TO_RESET)
        {
            commands.add("register_reset " + register);
        }
        if (!esaJobs.isEmpty())
        {
            for (final String register : V1MODEL_ESA_REGISTERS_TO_RESET)
            {
                commands.add("register_reset " + register);
            }
        }
        commands.add(simpleSwitchAddressCommand(switchAddress));
        int nodeHandle = 0;
        for (final JobSpec job : jobs.values())
        {
            nodeHandle = simpleSwitchCommands(job, nodeHandle, commands);
        }
        for (final EsaJobSpec job : esaJobs.values())
        {
            nodeHandle = simpleSwitchCommands(job, nodeHandle, commands);
        }
        return commands;
    }

    /** The {@code simple_switch_CLI} command that sets the switch's own addresses (egress {@code switch_address}). */
    public static String simpleSwitchAddressCommand(final SwitchAddress switchAddress)
    {
        return "table_set_default InaggEgress.switch_address InaggEgress.set_switch_address "
            + WorkerEndpoint.formatMac(switchAddress.mac()) + " " + WorkerEndpoint.formatIpv4(switchAddress.ipv4());
    }

    /**
     * One slot-protocol or upstream job's rows, as {@link #simpleSwitchCommands()} writes them, appended to
     * {@code commands}: its job table row, worker sources, worker endpoints, multicast group and nodes (or, upstream,
     * its server endpoint). Each {@code mc_node_associate} names its node by the handle bmv2 gives it when nodes are
     * numbered from {@code firstNodeHandle} in creation order; a caller whose bmv2 hands out other handles rewrites
     * them from the {@code mc_node_create} answers (the k-th node created here is {@code firstNodeHandle + k}).
     *
     * @return the handle of the node after this job's last.
     * @throws IllegalArgumentException if the job needs more lanes or workers than the v1model program covers.
     */
    public static int simpleSwitchCommands(final JobSpec job, final int firstNodeHandle, final List<String> commands)
    {
        checkFits(job, InaggP4.V1MODEL_MAX_LANES, "v1model");
        if (job.isUpstream())
        {
            upstreamCommands(job, commands);
            return firstNodeHandle;
        }
        int nodeHandle = firstNodeHandle;
        commands.add("table_add InaggIngress.job_table InaggIngress.set_job " + job.jobId() + " => "
            + job.workerCount() + " " + job.slots() + " " + job.slotBase() + " " + job.lanes() + " "
            + job.multicastGroup() + " " + job.session());
        for (int worker = 0; worker < job.workerCount(); worker++)
        {
            final WorkerEndpoint endpoint = job.workers().get(worker);
            commands.add("table_add InaggIngress.worker_source InaggIngress.source_ok " + job.jobId() + " " + worker
                + " " + WorkerEndpoint.formatIpv4(endpoint.ipv4()) + " " + endpoint.udpPort() + " =>");
        }
        joinCredentialCommands(job.jobId(), job.workers(), commands);
        for (int worker = 0; worker < job.workerCount(); worker++)
        {
            final WorkerEndpoint endpoint = job.workers().get(worker);
            commands.add("table_add InaggEgress.worker_endpoint InaggEgress.set_endpoint " + job.jobId() + " "
                + worker + " => " + WorkerEndpoint.formatMac(endpoint.mac()) + " "
                + WorkerEndpoint.formatIpv4(endpoint.ipv4()) + " " + endpoint.udpPort());
        }
        commands.add("mc_mgrp_create " + job.multicastGroup());
        for (int worker = 0; worker < job.workerCount(); worker++)
        {
            commands.add("mc_node_create " + worker + " " + job.workers().get(worker).port());
            commands.add("mc_node_associate " + job.multicastGroup() + " " + nodeHandle++);
        }
        return nodeHandle;
    }

    /**
     * The {@code join_credential} rows of a job's workers that have a JOIN credential: a JOIN of such a worker id must
     * show it (two lanes, high word first) or is dropped and counted ({@code C_DROP_BAD_CREDENTIAL}); a worker without
     * a row needs none.
     */
    private static void joinCredentialCommands(final int jobId, final List<WorkerEndpoint> workers,
        final List<String> commands)
    {
        for (int worker = 0; worker < workers.size(); worker++)
        {
            joinCredentialCommand(jobId, worker, workers.get(worker), commands);
        }
    }

    private static void joinCredentialCommand(final int jobId, final int worker, final WorkerEndpoint endpoint,
        final List<String> commands)
    {
        if (endpoint.joinCredential() != InaggHeader.NO_CREDENTIAL)
        {
            commands.add("table_add InaggIngress.join_credential InaggIngress.set_join_credential " + jobId + " "
                + worker + " => " + hexCredential(endpoint.joinCredential()));
        }
    }

    private static void upstreamCommands(final JobSpec job, final List<String> commands)
    {
        final JobSpec.Upstream upstream = job.upstream();
        final StringBuilder row = new StringBuilder("table_add InaggIngress.job_table InaggIngress.set_upstream_job ")
            .append(job.jobId()).append(" => ").append(job.workerCount()).append(' ').append(job.slots()).append(' ')
            .append(job.slotBase()).append(' ').append(job.lanes()).append(' ').append(job.contributors()).append(' ')
            .append(upstream.server().port());
        for (final int word : upstream.bitmapWords(InaggP4.BITMAP_WORDS))
        {
            row.append(' ').append(Integer.toUnsignedString(word));
        }
        row.append(' ').append(job.session());
        commands.add(row.toString());
        for (final int worker : upstream.localWorkers())
        {
            final WorkerEndpoint endpoint = job.workers().get(worker);
            commands.add("table_add InaggIngress.worker_source InaggIngress.source_ok " + job.jobId() + " " + worker
                + " " + WorkerEndpoint.formatIpv4(endpoint.ipv4()) + " " + endpoint.udpPort() + " =>");
        }
        for (final int worker : upstream.localWorkers())
        {
            joinCredentialCommand(job.jobId(), worker, job.workers().get(worker), commands);
        }
        final WorkerEndpoint server = upstream.server();
        commands.add("table_add InaggEgress.server_endpoint InaggEgress.set_endpoint " + job.jobId() + " => "
            + WorkerEndpoint.formatMac(server.mac()) + " " + WorkerEndpoint.formatIpv4(server.ipv4()) + " "
            + server.udpPort());
    }

    /**
     * One ESA job's rows, as {@link #simpleSwitchCommands()} writes them (with this table's pool), appended to
     * {@code commands}; node handles as for {@link #simpleSwitchCommands(JobSpec, int, List)}.
     *
     * @return the handle of the node after this job's last.
     * @throws IllegalStateException if no ESA pool is set.
     */
    public int simpleSwitchCommands(final EsaJobSpec job, final int firstNodeHandle, final List<String> commands)
    {
        if (esaPool == null)
        {
            throw new IllegalStateException("job " + job.jobId() + ": set the ESA pool first");
        }
        checkFits(job.jobId(), job.lanes(), job.workerCount(), InaggP4.V1MODEL_MAX_LANES, "v1model");
        int nodeHandle = firstNodeHandle;
        final WorkerEndpoint server = job.server();
        commands.add("table_add InaggIngress.job_table InaggIngress.set_esa_job " + job.jobId() + " => "
            + job.workerCount() + " " + job.window() + " " + job.lanes() + " " + job.multicastGroup() + " "
            + job.flushGroup() + " " + (esaPool.mode() == AllocationMode.PREEMPTIVE ? MODE_ESA : MODE_ATP) + " "
            + esaPool.firstCopy() + " " + (esaPool.aggregators() - 1) + " " + esaPool.hashOffset(job.jobId()) + " "
            + (esaPool.policy() == PriorityPolicy.HEADER ? 1 : 0) + " " + job.tablePriority(esaPool.policy()) + " "
            + server.port() + " " + ESA_SESSION);
        for (int worker = 0; worker < job.workerCount(); worker++)
        {
            final WorkerEndpoint endpoint = job.workers().get(worker);
            commands.add("table_add InaggIngress.worker_source InaggIngress.source_ok " + job.jobId() + " " + worker
                + " " + WorkerEndpoint.formatIpv4(endpoint.ipv4()) + " " + endpoint.udpPort() + " =>");
        }
        joinCredentialCommands(job.jobId(), job.workers(), commands);
        commands.add("table_add InaggIngress.server_source InaggIngress.server_ok " + job.jobId() + " "
            + WorkerEndpoint.formatIpv4(server.ipv4()) + " " + server.udpPort() + " =>");
        for (int worker = 0; worker < job.workerCount(); worker++)
        {
            final WorkerEndpoint endpoint = job.workers().get(worker);
            commands.add("table_add InaggEgress.worker_endpoint InaggEgress.set_endpoint " + job.jobId() + " "
                + worker + " => " + WorkerEndpoint.formatMac(endpoint.mac()) + " "
                + WorkerEndpoint.formatIpv4(endpoint.ipv4()) + " " + endpoint.udpPort());
        }
        commands.add("table_add InaggEgress.server_endpoint InaggEgress.set_endpoint " + job.jobId() + " => "
            + WorkerEndpoint.formatMac(server.mac()) + " " + WorkerEndpoint.formatIpv4(server.ipv4()) + " "
            + server.udpPort());
        commands.add("mc_mgrp_create " + job.multicastGroup());
        for (int worker = 0; worker < job.workerCount(); worker++)
        {
            commands.add("mc_node_create " + worker + " " + job.workers().get(worker).port());
            commands.add("mc_node_associate " + job.multicastGroup() + " " + nodeHandle++);
        }
        commands.add("mc_node_create " + SERVER_RID + " " + server.port());
        commands.add("mc_node_associate " + job.multicastGroup() + " " + nodeHandle++);
        commands.add("mc_mgrp_create " + job.flushGroup());
        commands.add("mc_node_create " + FLUSH_RID + " " + server.port());
        commands.add("mc_node_associate " + job.flushGroup() + " " + nodeHandle++);
        commands.add("mc_node_create " + SERVER_RID + " " + server.port());
        commands.add("mc_node_associate " + job.flushGroup() + " " + nodeHandle++);
        return nodeHandle;
    }

    /**
     * A BF Runtime Python script (run in {@code bfshell -b}) that configures {@code inagg_tna.p4} on a freshly started
     * Tofino: the same rows as {@link #simpleSwitchCommands()}, and the multicast groups in the packet replication
     * engine's {@code node} and {@code mgid} tables. Each job's lane rows are packed in table order from row 0 of the
     * lane registers: {@code 2 * slots * 2^chunk_shift} rows, where a packet of more than 32 lanes is aggregated in
     * {@code chunks = lanes / 32} recirculated passes (docs/p4.md).
     * <p>
     * ESA jobs follow the slot jobs (docs/p4.md "ESA on TNA"): {@code esa_fmt_reg} and {@code esa_tomb_reg} cleared too;
     * the pool's {@link InaggP4#TNA_ESA_AGGREGATORS} lane rows placed after the slot jobs' rows (every ESA job's
     * {@code lane_base}); per job, on first use of its server's port, an ingress mirror session to that port (the raw
     * retransmission of a flush; sessions numbered from 1); its {@code set_esa_job} row (workers, window, lanes, result
     * group, lane base, {@code hash_offset = job * 0x9E3779B1 mod 4096}, {@code job_tag = 0x80000000 | n << 24} for the
     * n-th ESA job in table order, {@code full_mask} = the bitmap word of all W workers, {@code rank} = the job-table or
     * SRF priority + 1, {@code rank_from_header} = 1 under {@link PriorityPolicy#HEADER}, the mirror session); the
     * server's port ({@code esa_server_port}) and endpoint ({@code server_endpoint}); each worker's source, endpoint and
     * multicast node (replication id = worker id); the server's node ({@link #SERVER_RID}); and the result group. The
     * v1model flush group is not used on TNA (the mirror session replaces it).
     *
     * @throws IllegalArgumentException if a job needs more lanes or workers than the TNA program covers, there are
     *                                  upstream jobs (not in the TNA program), or ESA jobs the TNA program cannot run:
     *                                  ATP mode, a pool of other than 4096 aggregators, more than 128 ESA jobs, an ESA
     *                                  job of more than 32 lanes or 32 workers, ESA jobs of different lane counts, two
     *                                  ESA jobs with one hash offset, or lane rows that do not fit.
     */
    public String bfrtPython()
    {
        for (final JobSpec job : jobs.values())
        {
            if (job.isUpstream())
            {
                throw new IllegalArgumentException("job " + job.jobId()
                    + ": upstream (two-level) jobs are not in the TNA program (see docs/p4.md)");
            }
        }
        checkEsaFitsTna();
        final StringBuilder py = new StringBuilder();
        py.append("# Generated by org.inagg.p4.control.JobTable for inagg_tna.p4; run with: bfshell -b <this file>\n")
            .append("p4 = bfrt.inagg_tna.pipe\n")
            .append("ingress = p4.InaggIngress\n")
            .append("egress = p4.InaggEgress\n")
            .append("pre = bfrt.pre\n");
        appendClear(py, TNA_REGISTERS_TO_CLEAR);
        if (!esaJobs.isEmpty())
        {
            appendClear(py, TNA_ESA_REGISTERS_TO_CLEAR);
        }
        py.append("egress.switch_address.set_default_with_set_switch_address(mac=").append(hexMac(switchAddress.mac()))
            .append(", ipv4=").append(hexIpv4(switchAddress.ipv4())).append(")\n");
        int nodeId = 1;
        int laneBase = 0;
        for (final JobSpec job : jobs.values())
        {
            checkFits(job, InaggP4.TNA_MAX_LANES, "TNA");
            final int chunks = tnaChunks(job);
            final int chunkShift = 32 - Integer.numberOfLeadingZeros(chunks - 1);
            final int rows = 2 * job.slots() << chunkShift;
            if (laneBase + rows > InaggP4.TNA_LANE_ROWS)
            {
                throw new IllegalArgumentException("job " + job.jobId() + ": " + rows + " lane rows (" + job.slots()
                    + " slots x 2 copies x " + (1 << chunkShift) + " chunks) leave the TNA lane registers ("
                    + (InaggP4.TNA_LANE_ROWS - laneBase) + " of " + InaggP4.TNA_LANE_ROWS + " rows left)");
            }
            py.append("ingress.job_table.add_with_set_job(job_id=").append(job.jobId())
                .append(", workers=").append(job.workerCount())
                .append(", slots=").append(job.slots())
                .append(", slot_base=").append(job.slotBase())
                .append(", lanes=").append(job.lanes())
                .append(", mcast_grp=").append(job.multicastGroup())
                .append(", lane_base=").append(laneBase)
                .append(", chunks=").append(chunks)
                .append(", chunk_shift=").append(chunkShift)
                .append(", session=").append(job.session()).append(")\n");
            laneBase += rows;
            final StringBuilder nodes = new StringBuilder();
            for (int worker = 0; worker < job.workerCount(); worker++)
            {
                nodeId = appendWorker(py, job.jobId(), worker, job.workers().get(worker), nodeId, nodes);
            }
            appendGroup(py, job.multicastGroup(), nodes, job.workerCount());
        }
        if (!esaJobs.isEmpty())
        {
            appendEsaJobs(py, nodeId, laneBase);
        }
        py.append("bfrt.complete_operations()\n");
        return py.toString();
    }

    /** The refusals of {@link #bfrtPython()} for ESA jobs (docs/p4.md "ESA on TNA", limits). */
    private void checkEsaFitsTna()
    {
        if (esaJobs.isEmpty())
        {
            return;
        }
        if (esaPool.mode() != AllocationMode.PREEMPTIVE)
        {
            throw new IllegalArgumentException("the ESA pool is in " + esaPool.mode() + " mode; the TNA program runs"
                + " ESA jobs in the PREEMPTIVE mode only (ATP's acknowledgement, docs/esa.md item 9, is not built there)");
        }
        if (esaPool.aggregators() != InaggP4.TNA_ESA_AGGREGATORS)
        {
            throw new IllegalArgumentException("the ESA pool has " + esaPool.aggregators() + " aggregators; the TNA"
                + " program's pool has exactly " + InaggP4.TNA_ESA_AGGREGATORS + " (ESA_AGGREGATORS: aggregator"
                + " (sequence + hash_offset) mod " + InaggP4.TNA_ESA_AGGREGATORS + ")");
        }
        if (esaJobs.size() > InaggP4.TNA_ESA_MAX_JOBS)
        {
            throw new IllegalArgumentException(esaJobs.size() + " ESA jobs; the TNA program tells at most "
                + InaggP4.TNA_ESA_MAX_JOBS + " apart (7 job bits in an aggregator's key tag)");
        }
        final EsaJobSpec first = esaJobs.values().iterator().next();
        final Map<Integer, Integer> offsets = new LinkedHashMap<>();
        for (final EsaJobSpec job : esaJobs.values())
        {
            if (job.lanes() > InaggP4.TNA_LANES_PER_PASS)
            {
                throw new IllegalArgumentException("job " + job.jobId() + ": " + job.lanes() + " lanes per packet; ESA"
                    + " jobs on the TNA program carry at most " + InaggP4.TNA_LANES_PER_PASS + " (one pass: an eviction"
                    + " swaps the holder's whole partial into the packet)");
            }
            if (job.workerCount() > InaggP4.TNA_ESA_MAX_WORKERS)
            {
                throw new IllegalArgumentException("job " + job.jobId() + ": " + job.workerCount() + " workers; ESA"
                    + " jobs on the TNA program have at most " + InaggP4.TNA_ESA_MAX_WORKERS + " (one bitmap word per"
                    + " aggregator)");
            }
            if (job.workerCount() < 2)
            {
                // EsaJobSpec refuses these already; kept as the program's limit.
                throw new IllegalArgumentException("job " + job.jobId() + ": ESA jobs on the TNA program need at least"
                    + " 2 workers");
            }
            if (job.lanes() != first.lanes())
            {
                throw new IllegalArgumentException("job " + job.jobId() + ": " + job.lanes() + " lanes per packet;"
                    + " every ESA job on the TNA program carries the same lane count (job " + first.jobId() + ": "
                    + first.lanes() + "): they share the pool's lane rows, and an eviction swaps lanes one for one");
            }
            final int offset = tnaHashOffset(job.jobId());
            final Integer other = offsets.putIfAbsent(offset, job.jobId());
            if (other != null)
            {
                throw new IllegalArgumentException("job " + job.jobId() + ": hash offset " + offset + " (job x"
                    + " 0x9E3779B1 mod " + InaggP4.TNA_ESA_AGGREGATORS + ") is job " + other + "'s; the TNA program"
                    + " needs a distinct offset per ESA job");
            }
        }
    }

    /** {@code hash_offset} of an ESA job's TNA row: {@code job * 0x9E3779B1 mod ESA_AGGREGATORS}. */
    static int tnaHashOffset(final int jobId)
    {
        return (jobId * EsaPool.JOB_MULTIPLIER) & (InaggP4.TNA_ESA_AGGREGATORS - 1);
    }

    private void appendEsaJobs(final StringBuilder py, final int firstNodeId, final int laneBase)
    {
        if (laneBase + InaggP4.TNA_ESA_AGGREGATORS > InaggP4.TNA_LANE_ROWS)
        {
            throw new IllegalArgumentException("the ESA pool's " + InaggP4.TNA_ESA_AGGREGATORS + " lane rows leave the"
                + " TNA lane registers (" + (InaggP4.TNA_LANE_ROWS - laneBase) + " of " + InaggP4.TNA_LANE_ROWS
                + " rows left after the slot jobs)");
        }
        py.append("# ESA jobs: the pool's ").append(InaggP4.TNA_ESA_AGGREGATORS).append(" aggregators at lane rows ")
            .append(laneBase).append("..").append(laneBase + InaggP4.TNA_ESA_AGGREGATORS - 1)
            .append("; a mirror session per parameter server port\n");
        int nodeId = firstNodeId;
        final Map<Integer, Integer> sessions = new LinkedHashMap<>();
        int esaJob = 0;
        for (final EsaJobSpec job : esaJobs.values())
        {
            final WorkerEndpoint server = job.server();
            Integer session = sessions.get(server.port());
            if (session == null)
            {
                session = sessions.size() + 1;
                sessions.put(server.port(), session);
                py.append("bfrt.mirror.cfg.add_with_normal(sid=").append(session)
                    .append(", direction='INGRESS', session_enable=True, ucast_egress_port=").append(server.port())
                    .append(", ucast_egress_port_valid=True, max_pkt_len=").append(TNA_MIRROR_MAX_PKT_LEN)
                    .append(")\n");
            }
            final long fullMask = (1L << job.workerCount()) - 1;
            py.append("ingress.job_table.add_with_set_esa_job(job_id=").append(job.jobId())
                .append(", workers=").append(job.workerCount())
                .append(", window=").append(job.window())
                .append(", lanes=").append(job.lanes())
                .append(", mcast_grp=").append(job.multicastGroup())
                .append(", lane_base=").append(laneBase)
                .append(", hash_offset=").append(tnaHashOffset(job.jobId()))
                .append(", job_tag=").append(hexWord(0x8000_0000 | esaJob++ << 24))
                .append(", full_mask=").append(hexWord((int)fullMask))
                .append(", rank=").append(job.tablePriority(esaPool.policy()) + 1)
                .append(", rank_from_header=").append(esaPool.policy() == PriorityPolicy.HEADER ? 1 : 0)
                .append(", ps_session=").append(session)
                .append(", session=").append(ESA_SESSION).append(")\n");
            py.append("ingress.esa_server_port.add_with_set_server_port(job_id=").append(job.jobId())
                .append(", port=").append(server.port()).append(")\n");
            py.append("egress.server_endpoint.add_with_set_endpoint(job_id=").append(job.jobId())
                .append(", mac=").append(hexMac(server.mac()))
                .append(", ipv4=").append(hexIpv4(server.ipv4()))
                .append(", udp_port=").append(server.udpPort()).append(")\n");
            final StringBuilder nodes = new StringBuilder();
            for (int worker = 0; worker < job.workerCount(); worker++)
            {
                nodeId = appendWorker(py, job.jobId(), worker, job.workers().get(worker), nodeId, nodes);
            }
            appendNode(py, nodeId, SERVER_RID, server.port());
            nodes.append(", ").append(nodeId++);
            appendGroup(py, job.multicastGroup(), nodes, job.workerCount() + 1);
        }
    }

    private static void appendClear(final StringBuilder py, final List<String> registers)
    {
        py.append("for register in (");
        for (int i = 0; i < registers.size(); i++)
        {
            py.append(i == 0 ? "" : ", ").append("ingress.").append(registers.get(i));
        }
        py.append("):\n    register.clear()\n");
    }

    /** A worker's source row, endpoint row and multicast node; returns the next node id. */
    private static int appendWorker(
        final StringBuilder py, final int jobId, final int worker, final WorkerEndpoint endpoint, final int nodeId,
        final StringBuilder nodes)
    {
        py.append("ingress.worker_source.add_with_source_ok(job_id=").append(jobId)
            .append(", worker_id=").append(worker)
            .append(", src_addr=").append(hexIpv4(endpoint.ipv4()))
            .append(", src_port=").append(endpoint.udpPort()).append(")\n");
        if (endpoint.joinCredential() != InaggHeader.NO_CREDENTIAL)
        {
            py.append("ingress.join_credential.add_with_set_join_credential(job_id=").append(jobId)
                .append(", worker_id=").append(worker)
                .append(", credential=").append(hexCredential(endpoint.joinCredential())).append(")\n");
        }
        py.append("egress.worker_endpoint.add_with_set_endpoint(job_id=").append(jobId)
            .append(", worker=").append(worker)
            .append(", mac=").append(hexMac(endpoint.mac()))
            .append(", ipv4=").append(hexIpv4(endpoint.ipv4()))
            .append(", udp_port=").append(endpoint.udpPort()).append(")\n");
        appendNode(py, nodeId, worker, endpoint.port());
        nodes.append(nodes.isEmpty() ? "" : ", ").append(nodeId);
        return nodeId + 1;
    }

    private static void appendNode(final StringBuilder py, final int nodeId, final int rid, final int port)
    {
        py.append("pre.node.add(MULTICAST_NODE_ID=").append(nodeId)
            .append(", MULTICAST_RID=").append(rid)
            .append(", MULTICAST_LAG_ID=[], DEV_PORT=[").append(port).append("])\n");
    }

    private static void appendGroup(final StringBuilder py, final int group, final CharSequence nodes, final int count)
    {
        py.append("pre.mgid.add(MGID=").append(group)
            .append(", MULTICAST_NODE_ID=[").append(nodes)
            .append("], MULTICAST_NODE_L1_XID_VALID=[False] * ").append(count)
            .append(", MULTICAST_NODE_L1_XID=[0] * ").append(count).append(")\n");
    }

    /**
     * Passes (32-lane chunks) a packet of the job takes through the TNA program: one up to 32 lanes, else lanes / 32.
     *
     * @throws IllegalArgumentException if a job of more than 32 lanes does not carry whole chunks.
     */
    static int tnaChunks(final JobSpec job)
    {
        if (job.lanes() <= InaggP4.TNA_LANES_PER_PASS)
        {
            return 1;
        }
        if (job.lanes() % InaggP4.TNA_LANES_PER_PASS != 0)
        {
            throw new IllegalArgumentException("job " + job.jobId() + ": " + job.lanes() + " lanes per packet; the TNA"
                + " program aggregates up to " + InaggP4.TNA_LANES_PER_PASS + " lanes or a multiple of "
                + InaggP4.TNA_LANES_PER_PASS + " (one recirculated pass each)");
        }
        return job.lanes() / InaggP4.TNA_LANES_PER_PASS;
    }

    private static void checkFits(final JobSpec job, final int maxLanes, final String program)
    {
        checkFits(job.jobId(), job.lanes(), job.workerCount(), maxLanes, program);
    }

    private static void checkFits(
        final int jobId, final int lanes, final int workers, final int maxLanes, final String program)
    {
        if (lanes > maxLanes)
        {
            throw new IllegalArgumentException("job " + jobId + ": " + lanes
                + " lanes per packet; the " + program + " program aggregates at most " + maxLanes);
        }
        if (workers > InaggP4.MAX_WORKERS)
        {
            throw new IllegalArgumentException("job " + jobId + ": " + workers
                + " workers; the P4 seen bitmaps cover at most " + InaggP4.MAX_WORKERS);
        }
    }

    private static String hexMac(final long mac)
    {
        return String.format("0x%012x", mac);
    }

    private static String hexCredential(final long credential)
    {
        return String.format("0x%016x", credential);
    }

    private static String hexWord(final int word)
    {
        return String.format("0x%08x", word);
    }

    private static String hexIpv4(final int ipv4)
    {
        return String.format("0x%08x", ipv4);
    }
}
