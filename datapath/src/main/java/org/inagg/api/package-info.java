/**
 * The public API: {@link org.inagg.api.JobContext} configures a worker's membership in a job and
 * {@link org.inagg.api.AllReduceJob} all-reduces float32 and int32 tensors from arrays, NIO buffers or memory segments,
 * blocking or asynchronously, and runs the other collectives through the same switch: all-reduce with a
 * {@link org.inagg.api.ReduceOp} (SUM, MIN, MAX), reduce-scatter, all-gather and broadcast (docs/protocol.md,
 * "Collectives and reduce ops").
 */
package org.inagg.api;
