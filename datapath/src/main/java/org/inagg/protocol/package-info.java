/**
 * The worker side of the slot protocol: {@link org.inagg.protocol.WorkerAgent} joins a job, streams tensors through a
 * window of switch slots with shadow copies, negotiates block exponents by piggybacking them on the stream, and
 * recovers losses with timer-wheel driven retransmission.
 */
package org.inagg.protocol;
