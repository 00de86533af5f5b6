/**
 * The public API: {@link org.inagg.api.JobContext} configures a worker's membership in a job and
 * {@link org.inagg.api.AllReduceJob} all-reduces float32 and int32 tensors from arrays, NIO buffers or memory segments,
 * blocking or asynchronously.
 */
package org.inagg.api;
