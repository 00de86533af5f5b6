package org.inagg.services.controller;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * A job the controller admitted: its name, id, world size, tensor, slot range, session, and the current registration
 * of each rank (null where the rank has none: not yet registered, finished, or lost). {@link #running} once all ranks of
 * the current session registered and the switch was programmed with their sources. Guarded by the monitor of the
 * {@link RegistryState} that holds it, except {@link #switchLock}.
 */
final class ControlledJob
{
    final String name;
    final int jobId;
    final int world;
    final String dtype;
    final long elements;
    final int slotBase;
    final int slots;
    final int lanes;
    /** SHA-256 (hex) of the job's secret ({@link JobSecret}); null for a job journaled before secrets: operators only. */
    final String secretHash;
    int session;
    boolean running;
    /** A rank restarted: the switch must get the new session (and sources) before the ranks re-register. */
    boolean reprogram;
    /**
     * Held (without the registry state's monitor) while the switch is called for this job, so that its calls reach
     * the switch one at a time, in the order of the changes, and its removal comes after any install in flight.
     */
    final ReentrantLock switchLock = new ReentrantLock();
    /** Why the switch did not take the job at the last try, or null. */
    String switchError;
    final Registration[] ranks;
    /** Each rank's latest source, kept after its registration ends (the switch keeps answering it). */
    final InetSocketAddress[] lastSource;
    /** Each rank's latest JOIN credential, kept with its source (0 before it registered). */
    final long[] lastCredential;

    ControlledJob(final String name, final int jobId, final int world, final String dtype, final long elements,
        final int slotBase, final int slots, final int lanes, final int session, final String secretHash)
    {
        this.secretHash = secretHash;
        this.name = name;
        this.jobId = jobId;
        this.world = world;
        this.dtype = dtype;
        this.elements = elements;
        this.slotBase = slotBase;
        this.slots = slots;
        this.lanes = lanes;
        this.session = session;
        this.ranks = new Registration[world];
        this.lastSource = new InetSocketAddress[world];
        this.lastCredential = new long[world];
    }

    /** Ranks registered into the current session. */
    int registered()
    {
        int count = 0;
        for (final Registration registration : ranks)
        {
            if (registration != null && registration.session == session)
            {
                count++;
            }
        }
        return count;
    }

    /** Ranks with no registration of the current session, ascending. */
    List<Integer> missing()
    {
        final List<Integer> missing = new ArrayList<>();
        for (int rank = 0; rank < world; rank++)
        {
            if (ranks[rank] == null || ranks[rank].session != session)
            {
                missing.add(rank);
            }
        }
        return missing;
    }

    void put(final Registration registration)
    {
        ranks[registration.rank] = registration;
        lastSource[registration.rank] = registration.source;
        lastCredential[registration.rank] = registration.joinCredential;
    }

    /** Whether the switch must be programmed: a restart's new session, or every rank of the session registered. */
    boolean needsInstall()
    {
        return reprogram || !running && registered() == world;
    }

    /** Feeds each registration held (of any session) to {@code sink}. */
    void ranksAll(final Consumer<Registration> sink)
    {
        for (final Registration registration : ranks)
        {
            if (registration != null)
            {
                sink.accept(registration);
            }
        }
    }

    boolean hasRegistrations()
    {
        for (final Registration registration : ranks)
        {
            if (registration != null)
            {
                return true;
            }
        }
        return false;
    }

    /**
     * The switch program: each rank's latest source (an old session's where the rank has not registered again, so
     * that its stale packets are answered STALE_SESSION rather than dropped as a stranger's).
     */
    JobProgram program()
    {
        final List<InetSocketAddress> sources = new ArrayList<>(world);
        for (int rank = 0; rank < world; rank++)
        {
            sources.add(lastSource[rank]);
        }
        return new JobProgram(jobId, slots, slotBase, lanes, session, sources, lastCredential);
    }

    String describe()
    {
        return "job '" + name + "' (id " + jobId + ", session " + session + ")";
    }
}
