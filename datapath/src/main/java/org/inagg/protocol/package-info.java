/**
 * The worker side of the slot protocol: {@link org.inagg.protocol.WorkerAgent} joins a job, streams tensors through a
 * window of switch slots with shadow copies, negotiates block exponents by piggybacking them on the stream, and
 * recovers losses with timer-wheel driven retransmission. An {@link org.inagg.protocol.AllReduceOperation} is an
 * all-reduce or, over parts with owners cut into packets by {@code BlockSchedule}, a reduce-scatter or an all-gather,
 * with a SUM, MIN or MAX ({@code OrderedKeys} carry float MIN and MAX as int32 keys).
 */
package org.inagg.protocol;
