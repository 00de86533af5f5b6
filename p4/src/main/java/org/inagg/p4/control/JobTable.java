package org.inagg.p4.control;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.inagg.p4.esa.EsaSwitch;
import org.inagg.p4.esa.EsaSwitchSettings;
import org.inagg.p4.softswitch.SoftwareSwitch;

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
    /** Multicast replication id of the parameter server's node (worker ids stay below {@link InaggP4#MAX_WORKERS}). */
    public static final int SERVER_RID = 0xFFFF;
    /** Replication id of the flush group's first node, the flushed PARTIAL (the RAW follows on {@link #SERVER_RID}). */
    public static final int FLUSH_RID = 0xFFFE;
    /**
     * The session of every ESA job's row: the ESA switch and parameter server keep no sessions yet (their JOINs are
     * answered with session 0; docs/sessions.md).
     */
    static final int ESA_SESSION = 0;

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
            JobValidator.checkDisjoint(pool.slotBase(), pool.slots(), "the ESA pool", other);
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
        JobValidator.checkFits(job.jobId(), job.lanes(), job.workerCount(), InaggP4.V1MODEL_MAX_LANES, "v1model");
        JobValidator.checkNew(job.jobId(), job.multicastGroup(), jobs, esaJobs);
        JobValidator.checkNew(job.jobId(), job.flushGroup(), jobs, esaJobs);
        esaJobs.put(job.jobId(), job);
        return this;
    }

    /**
     * Adds a job.
     *
     * @throws IllegalArgumentException if its id or multicast group is taken, its slots overlap another job's or leave
     *                                  the pool of {@link InaggP4#POOL_SLOTS}.
     */
    public JobTable add(final JobSpec job)
    {
        JobValidator.checkSlotJob(job, jobs, esaJobs, esaPool);
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
     * {@code simple_switch_CLI} commands that configure {@code inagg_v1model.p4} on a freshly started bmv2: the
     * registers a first round relies on cleared, the switch address, then every job's rows, slot jobs first (what each
     * row holds: {@link SimpleSwitchCommands#forTable}).
     *
     * @throws IllegalArgumentException if a job needs more lanes or workers than the v1model program covers.
     */
    public List<String> simpleSwitchCommands()
    {
        return SimpleSwitchCommands.forTable(this);
    }

    /** The {@code simple_switch_CLI} command that sets the switch's own addresses (egress {@code switch_address}). */
    public static String simpleSwitchAddressCommand(final SwitchAddress switchAddress)
    {
        return SimpleSwitchCommands.addressCommand(switchAddress);
    }

    /**
     * One slot-protocol or upstream job's rows, as {@link #simpleSwitchCommands()} writes them, appended to
     * {@code commands}. Each {@code mc_node_associate} names its node by the handle bmv2 gives it when nodes are
     * numbered from {@code firstNodeHandle} in creation order; a caller whose bmv2 hands out other handles rewrites
     * them from the {@code mc_node_create} answers (the k-th node created here is {@code firstNodeHandle + k}).
     *
     * @return the handle of the node after this job's last.
     * @throws IllegalArgumentException if the job needs more lanes or workers than the v1model program covers.
     */
    public static int simpleSwitchCommands(final JobSpec job, final int firstNodeHandle, final List<String> commands)
    {
        return SimpleSwitchCommands.slotJob(job, firstNodeHandle, commands);
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
        return SimpleSwitchCommands.esaJob(esaPool, job, firstNodeHandle, commands);
    }

    /**
     * A BF Runtime Python script (run in {@code bfshell -b}) that configures {@code inagg_tna.p4} on a freshly started
     * Tofino: the same rows as {@link #simpleSwitchCommands()}, and the multicast groups in the packet replication
     * engine's tables (what each row holds, and the TNA program's limits: {@link BfrtScript#forTable}).
     *
     * @throws IllegalArgumentException if a job or the ESA jobs do not fit the TNA program, or there are upstream jobs.
     */
    public String bfrtPython()
    {
        return BfrtScript.forTable(this);
    }
}
