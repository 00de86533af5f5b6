package org.inagg.services.controller;

import java.net.InetSocketAddress;
import java.util.Map;

import org.inagg.p4.softswitch.SwitchJobConfig;

/**
 * A switch the controller programs: the software switch's control port ({@link SoftwareSwitchBackend}) or bmv2
 * through {@code Bmv2Switch} ({@link Bmv2Backend}). Never called per packet, and outside the controller's lock: one
 * call at a time for a job, but calls for different jobs may come at once from different threads, so an implementation
 * is thread-safe.
 * Failures are {@link SwitchUnreachableException} (the switch did not answer) or {@link IllegalStateException} (it
 * refused, with its reason).
 */
public interface SwitchBackend extends AutoCloseable
{
    /** Names the switch in logs and errors. */
    String describe();

    /** Where workers send their packets. */
    InetSocketAddress dataAddress();

    /** Lanes per packet of a job, and where that number comes from (for the controller's start line). */
    record Lanes(int lanes, String why)
    {
    }

    /**
     * Lanes per packet of the jobs this switch serves best when the operator names none: the P4 programs' 256 by
     * default; a software switch says what fills the MTU of its interface. Never throws: a switch that cannot be asked
     * gives the P4 programs' packets, which every switch takes, and says so in {@link Lanes#why}.
     */
    default Lanes defaultLanes()
    {
        return new Lanes(SwitchJobConfig.DEFAULT_LANES, "the P4 programs' packets");
    }

    /** Installs the job, or replaces it (a new session, new sources): its slots start empty. */
    void install(JobProgram program);

    /** Removes the job; false if the switch does not hold it. */
    boolean remove(int jobId);

    /** The jobs the switch holds now, by job id (those installed by others too, with their slot ranges). */
    Map<Integer, JobProgram> installed();

    @Override
    void close();
}
