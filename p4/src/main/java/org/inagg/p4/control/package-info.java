/**
 * The control plane of the inagg switch: a {@link org.inagg.p4.control.JobTable} of
 * {@link org.inagg.p4.control.JobSpec}s (job id, workers, slot range in the shared register pool, lanes, multicast group,
 * each worker's registered {@link org.inagg.p4.control.WorkerEndpoint}) and, for the shared ESA pool
 * ({@link org.inagg.p4.control.EsaPool}), {@link org.inagg.p4.control.EsaJobSpec}s, applied to a software switch (or
 * an ESA switch), or written out as
 * {@code simple_switch_CLI} commands for {@code inagg_v1model.p4} on bmv2 and as a BF Runtime Python script for
 * {@code inagg_tna.p4} on Tofino. {@link org.inagg.p4.control.InaggP4} holds the constants the P4 programs are compiled
 * with.
 * <p>
 * The table keeps the jobs and is the public face; each of its other jobs is a class of its own:
 * {@code JobValidator} (ids, groups, slot ranges and program limits checked before a job is taken),
 * {@code SimpleSwitchCommands} (the bmv2 rows) and {@code BfrtScript} (the Tofino script and the TNA program's limits).
 */
package org.inagg.p4.control;
