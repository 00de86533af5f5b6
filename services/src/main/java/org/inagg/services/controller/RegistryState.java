package org.inagg.services.controller;

import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

import org.inagg.wire.InaggHeader;

/**
 * The controller's jobs and registrations, and the journal of their changes: jobs by name, registrations by id, the job
 * ids and slot ranges in use (the controller's jobs', those of retired jobs the switch may still hold, and those a
 * switch holds for someone else), and the session counter. A change is journaled ({@link JobJournal}) before it is
 * answered; a journal that cannot be written refuses it ({@link Refusal.Reason#JOURNAL_DOWN}).
 * <p>
 * Not thread-safe on its own: {@link JobLifecycle} and {@link SwitchSync} hold its monitor ({@code synchronized
 * (state)}) for each change, and never while they call the switch.
 */
final class RegistryState implements AutoCloseable
{
    private final JobJournal journal;
    private final SlotAllocator slots;
    private final LongSupplier clockMs;
    private final long leaseMs;
    private final Map<String, ControlledJob> jobs = new LinkedHashMap<>();
    private final Map<String, Registration> registrations = new HashMap<>();
    /** Job ids a switch holds for someone else (found there, not installed by this controller). */
    private final Set<Integer> foreignJobIds = new HashSet<>();
    /** Retired jobs the switch may still hold, by id: their ids and slots are not given out until it no longer does. */
    private final Map<Integer, ControlledJob> removing = new LinkedHashMap<>();
    private int nextSession = 1;

    RegistryState(final JobJournal journal, final SlotAllocator slots, final LongSupplier clockMs, final long leaseMs)
    {
        this.journal = journal;
        this.slots = slots;
        this.clockMs = clockMs;
        this.leaseMs = leaseMs;
    }

    long nowMs()
    {
        return clockMs.getAsLong();
    }

    long leaseMs()
    {
        return leaseMs;
    }

    SlotAllocator slots()
    {
        return slots;
    }

    /** The live job of that name, or null. */
    ControlledJob job(final String name)
    {
        return jobs.get(name);
    }

    /** Whether {@code job} is still served (not retired, not replaced by a job of the same name). */
    boolean serves(final ControlledJob job)
    {
        return jobs.get(job.name) == job;
    }

    Collection<ControlledJob> jobs()
    {
        return jobs.values();
    }

    Registration registration(final String id)
    {
        return registrations.get(id);
    }

    /** @return the registration removed, or null if there was none. */
    Registration removeRegistration(final String id)
    {
        return registrations.remove(id);
    }

    /** A copy: the caller may end registrations while it walks them. */
    List<Registration> registrations()
    {
        return new ArrayList<>(registrations.values());
    }

    /**
     * Admits a job: the lowest free id, {@code jobSlots} contiguous slots, the next session; journaled.
     *
     * @throws Refusal NO_ROOM if no id or no slot range is free.
     */
    ControlledJob admit(final RegisterRequest request, final int jobSlots, final int lanes, final String secretHash)
    {
        final int jobId = freeJobId();
        final int base = slots.allocate(jobSlots, request.name());
        if (base < 0)
        {
            throw new Refusal(Refusal.Reason.NO_ROOM, "no free slots for job '" + request.name() + "': it needs "
                + jobSlots + " contiguous slots and " + slots.freeSlots() + " of the pool's " + slots.poolSlots()
                + " are free, not in one range; retry when a job ends");
        }
        final ControlledJob job = new ControlledJob(request.name(), jobId, request.world(), request.dtype(),
            request.elements(), base, jobSlots, lanes, takeSession(), secretHash);
        jobs.put(job.name, job);
        journalJob(job);
        return job;
    }

    private int freeJobId()
    {
        final Set<Integer> used = new HashSet<>(foreignJobIds);
        used.addAll(removing.keySet());
        jobs.values().forEach(job -> used.add(job.jobId));
        for (int id = 1; id <= InaggHeader.MAX_JOB_ID; id++)
        {
            if (!used.contains(id))
            {
                return id;
            }
        }
        throw new Refusal(Refusal.Reason.NO_ROOM, "no free job id (" + used.size() + " in use)");
    }

    /** A new registration of {@code request}'s rank into the job's current session, its lease starting now. */
    Registration register(final ControlledJob job, final RegisterRequest request)
    {
        String id;
        do
        {
            id = JobSecret.randomId();
        }
        while (registrations.containsKey(id));
        final Registration registration = new Registration(id, job.name, request.rank(), request.source(),
            request.incarnation(), job.session, clockMs.getAsLong() + leaseMs, JobSecret.joinCredential());
        registrations.put(id, registration);
        job.put(registration);
        return registration;
    }

    /**
     * The next session, after {@code switchSession} (a session the switch started by itself, or 0), so that the two
     * never meet.
     */
    int takeSessionAfter(final int switchSession)
    {
        if (switchSession >= nextSession)
        {
            nextSession = switchSession % 0xFFFF + 1;
        }
        return takeSession();
    }

    private int takeSession()
    {
        final int session = nextSession;
        nextSession = nextSession % 0xFFFF + 1; // 1..65535: 0 is a JOIN's "any session"
        return session;
    }

    /** The job is no longer served; its id and slots stay taken until {@link #removed}. */
    void retire(final ControlledJob job)
    {
        jobs.remove(job.name);
        job.ranksAll(registration -> registrations.remove(registration.id));
        removing.put(job.jobId, job);
    }

    /** A retired job left the switch: its id and slots are free again, and its end journaled. */
    void removed(final ControlledJob job)
    {
        removing.remove(job.jobId);
        slots.free(job.slotBase);
        record(() -> journal.freed(job, nextSession));
    }

    /** A job the switch holds for someone else: its id is never given out; false if its slots overlap ours. */
    boolean reserveForeign(final JobProgram other)
    {
        foreignJobIds.add(other.jobId());
        return other.slotBase() < 0 || slots.reserve(other.slotBase(), other.slots(), "job " + other.jobId());
    }

    /**
     * Replays the journal (every lease starts afresh): each job whose slots are free comes back, the others are
     * returned, dropped; the journal is compacted after.
     */
    List<ControlledJob> recover()
    {
        final JobJournal.Recovered recovered = journal.recover(slots.poolSlots(), clockMs.getAsLong(), leaseMs);
        nextSession = Math.max(nextSession, recovered.nextSession());
        final List<ControlledJob> dropped = new ArrayList<>();
        for (final ControlledJob job : recovered.jobs())
        {
            if (!slots.reserve(job.slotBase, job.slots, job.name))
            {
                dropped.add(job);
                continue;
            }
            jobs.put(job.name, job);
            job.ranksAll(registration -> registrations.put(registration.id, registration));
        }
        journal.compactNow(live(), nextSession);
        return dropped;
    }

    void journalJob(final ControlledJob job)
    {
        record(() -> journal.job(job, nextSession));
    }

    void journalRank(final ControlledJob job, final int rank)
    {
        record(() -> journal.rank(job, rank));
    }

    /** Appends a change; a journal that cannot be written refuses it (naming the file). */
    private void record(final Runnable append)
    {
        try
        {
            append.run();
        }
        catch (final UncheckedIOException ex)
        {
            throw new Refusal(Refusal.Reason.JOURNAL_DOWN, ex.getMessage() + "; the controller cannot record changes"
                + " until its journal can be written", ex);
        }
        journal.compactIfDue(this::live, nextSession);
    }

    /** Retired jobs the switch may still hold first: a live job of the same name is replayed after, and wins. */
    private List<ControlledJob> live()
    {
        final List<ControlledJob> all = new ArrayList<>(removing.values());
        all.addAll(jobs.values());
        return all;
    }

    @Override
    public void close()
    {
        journal.close();
    }
}
