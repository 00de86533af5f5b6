package org.inagg.p4.pipeline;

/**
 * The outcomes every switch-side node counts, by one name: a fault is counted under the same name on the software
 * switch ({@code SwitchCounter}), the ESA switch ({@code EsaCounter}) and the parameter server ({@code ServerCounter}),
 * each family keeping its own type ids. {@link NodeCounters} maps these names onto a family and refuses a family that
 * lacks one, so the nodes cannot drift apart again.
 */
public enum NodeCounter
{
    /** Every message handed to the node. */
    RECEIVED,
    /** Fails the header checks, comes from no known peer, or is a message type the node does not take. */
    DROP_MALFORMED,
    /** Names a job not installed on the node. */
    DROP_UNKNOWN_JOB,
    /** Names a worker id the job does not have, or one this node does not serve. */
    DROP_UNKNOWN_WORKER,
    /** A JOIN or AGGREGATE from another source than the worker's (a spoofed source): dropped unanswered. */
    DROP_SOURCE_MISMATCH,
    /** A lane count wrong for the job or the round. */
    DROP_BAD_SIZE,
    /** A packet of another session than the job's current one (answered with REJECT where it came from a worker). */
    DROP_STALE_SESSION,
    /** A JOIN without the worker's JOIN credential: dropped unanswered, the session untouched. */
    DROP_BAD_CREDENTIAL,
    /** A collective, reduce op or flag the node (or the job) does not carry. */
    DROP_UNSUPPORTED,
    /** A contribution already counted. */
    DUPLICATES,
    /** Results sent to workers (copies). */
    RESULTS_SENT,
    /** A message lost because the transport was full. */
    TX_FULL,
    /** JOINs answered with JOIN_ACK. */
    JOINS,
    /** JOINs answered with REJECT. */
    REJECTS
}
