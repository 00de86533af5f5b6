package org.inagg.services.controller;

import java.util.List;
import java.util.Map;

/**
 * Brings the switch to what the jobs need, never holding the registry state's monitor while it calls it: a call may
 * take the backend's whole timeout (seconds) while other jobs renew leases of a few. Each change takes the monitor,
 * decides what the switch must hold and lets go; the call is made under the job's own
 * {@link ControlledJob#switchLock}, so one job's calls reach the switch in order and its removal comes after any
 * install in flight; the monitor is taken again to record what the switch answered, and if the job changed meanwhile
 * its latest program is sent. Recovery ({@link #reconcile}) follows the same rule.
 */
final class SwitchSync
{
    private static final System.Logger LOGGER = System.getLogger(SwitchSync.class.getName());
    /** Installs one call makes at most for a job that keeps changing meanwhile; its next poll goes on. */
    private static final int MAX_INSTALLS_PER_CALL = 4;

    private final SwitchBackend backend;
    private final RegistryState state;

    SwitchSync(final SwitchBackend backend, final RegistryState state)
    {
        this.backend = backend;
        this.state = state;
    }

    /**
     * The switch's session of job {@code jobId} (0: it holds none, or cannot be asked). A software switch starts a
     * session by itself when a process rejoins with a new incarnation from a registered source without asking the
     * controller (a worker restarted by hand on its old port); a number the controller then issued could equal that
     * session, and the bypassing run's packets would count in the new one. Asking costs one call, on restarts only; an
     * unreachable switch is programmed the same way and retried, the journal's number stands.
     */
    int sessionOf(final int jobId)
    {
        try
        {
            final JobProgram onSwitch = backend.installed().get(jobId);
            return onSwitch == null ? 0 : onSwitch.session();
        }
        catch (final RuntimeException ex)
        {
            return 0;
        }
    }

    /**
     * Installs what {@code job} needs now ({@link ControlledJob#needsInstall}), if anything: a restart's new session,
     * or every rank of the session registered; then the job runs, or keeps the switch's error for the next poll.
     *
     * @param wait wait for another call on the same job; else leave it to that call.
     * @throws Refusal JOURNAL_DOWN if the job's start cannot be journaled.
     */
    void sync(final ControlledJob job, final boolean wait)
    {
        if (wait)
        {
            job.switchLock.lock();
        }
        else if (!job.switchLock.tryLock())
        {
            return;
        }
        try
        {
            for (int call = 0; call < MAX_INSTALLS_PER_CALL; call++)
            {
                final JobProgram want;
                synchronized (state)
                {
                    if (!state.serves(job) || !job.needsInstall())
                    {
                        return;
                    }
                    want = job.program();
                }
                final String error = install(want);
                synchronized (state)
                {
                    if (!installed(job, want, error))
                    {
                        return;
                    }
                }
            }
        }
        finally
        {
            job.switchLock.unlock();
        }
    }

    /** Under the monitor: records the switch's answer; true if the job changed during the call (install again). */
    private boolean installed(final ControlledJob job, final JobProgram want, final String error)
    {
        if (!state.serves(job))
        {
            return false; // retired meanwhile: its removal waits for this call, under the job's switch lock
        }
        if (error != null)
        {
            job.switchError = error;
            LOGGER.log(System.Logger.Level.WARNING, () -> "controller: " + job.describe() + ": cannot program "
                + backend.describe() + " for session " + want.session() + ": " + error
                + "; the ranks' next poll tries again");
            return false;
        }
        if (!want.equals(job.program()))
        {
            return true; // a rank registered again during the call: install what stands now
        }
        job.switchError = null;
        job.reprogram = false;
        if (!job.running && job.registered() == job.world)
        {
            job.running = true;
            state.journalJob(job);
            LOGGER.log(System.Logger.Level.INFO, () -> "controller: " + job.describe() + " running: all "
                + job.world + " ranks registered; " + backend.describe() + " admits only "
                + want.sources().stream().map(JobLifecycle::format).toList());
        }
        return false;
    }

    /**
     * Removes a retired job from the switch, after any call on it in flight, then returns its slots and id and
     * journals its end.
     */
    void remove(final ControlledJob job, final String why)
    {
        job.switchLock.lock();
        try
        {
            String removal = "removed from " + backend.describe();
            try
            {
                if (!backend.remove(job.jobId))
                {
                    removal = "not on " + backend.describe();
                }
            }
            catch (final RuntimeException ex)
            {
                removal = "NOT removed from the switch (" + ex.getMessage() + ")";
            }
            final String how = removal;
            LOGGER.log(System.Logger.Level.INFO, () -> "controller: " + job.describe() + " freed: " + why + "; "
                + how + "; slots " + job.slotBase + ".." + (job.slotBase + job.slots - 1) + " returned");
            synchronized (state)
            {
                state.removed(job);
            }
        }
        catch (final Refusal ex)
        {
            // the job is gone all the same; if the controller restarts first, its registrations come back from the
            // journal and expire
            LOGGER.log(System.Logger.Level.WARNING, () -> "controller: " + job.describe() + ": " + ex.getMessage());
        }
        finally
        {
            job.switchLock.unlock();
        }
    }

    /**
     * After {@link JobLifecycle#recover}, before anything is served: a running job the switch lacks or holds otherwise
     * (another session, other sources) is installed again, or waits for its ranks' polls if the switch refuses; jobs
     * the switch holds that this controller did not install keep their ids and slot ranges (reserved). The switch is
     * read and written without the monitor, like every other call.
     */
    void reconcile()
    {
        final Map<Integer, JobProgram> installed;
        try
        {
            installed = backend.installed();
        }
        catch (final RuntimeException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, () -> "controller: cannot read the jobs of " + backend.describe()
                + ": " + ex.getMessage() + "; running jobs are installed again when their ranks poll");
            synchronized (state)
            {
                state.jobs().forEach(job -> job.running = false);
            }
            return;
        }
        final List<ControlledJob> reinstall;
        synchronized (state)
        {
            reinstall = state.jobs().stream()
                .filter(job -> job.running && !job.program().equals(installed.get(job.jobId))).toList();
            for (final JobProgram other : installed.values())
            {
                if (state.jobs().stream().noneMatch(job -> job.jobId == other.jobId()))
                {
                    reserveForeign(other);
                }
            }
        }
        for (final ControlledJob job : reinstall)
        {
            LOGGER.log(System.Logger.Level.INFO, () -> "controller: " + job.describe() + " is "
                + (installed.containsKey(job.jobId) ? "installed otherwise" : "missing") + " on "
                + backend.describe() + "; installing it again");
            reinstall(job);
        }
    }

    /** Under the monitor: a job another installed; its id and slots are left alone. */
    private void reserveForeign(final JobProgram other)
    {
        if (!state.reserveForeign(other))
        {
            LOGGER.log(System.Logger.Level.WARNING, () -> "controller: job " + other.jobId() + " on "
                + backend.describe() + " holds slots " + other.slotBase() + "+" + other.slots()
                + " that overlap the controller's");
        }
        LOGGER.log(System.Logger.Level.INFO, () -> "controller: job " + other.jobId() + " on " + backend.describe()
            + " was not installed by this controller; its id and slots are left alone");
    }

    /** Installs a recovered running job as it stands; if the switch refuses, the job waits for its ranks' polls. */
    private void reinstall(final ControlledJob job)
    {
        job.switchLock.lock();
        try
        {
            final JobProgram want;
            synchronized (state)
            {
                if (!state.serves(job))
                {
                    return;
                }
                want = job.program();
            }
            final String error = install(want);
            synchronized (state)
            {
                job.switchError = error;
                if (error != null)
                {
                    job.running = false;
                    LOGGER.log(System.Logger.Level.WARNING, () -> "controller: " + job.describe() + ": cannot"
                        + " program " + backend.describe() + " for the check after a controller restart: " + error);
                }
            }
        }
        finally
        {
            job.switchLock.unlock();
        }
    }

    /** Without the monitor: installs {@code want}; the switch's error, or null. */
    private String install(final JobProgram want)
    {
        try
        {
            backend.install(want);
            return null;
        }
        catch (final RuntimeException ex)
        {
            return ex.getMessage() != null ? ex.getMessage() : ex.toString();
        }
    }
}
