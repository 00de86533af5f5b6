/**
 * The worker side of the slot protocol: {@link org.inagg.protocol.WorkerAgent} joins a job, streams tensors through a
 * window of switch slots with shadow copies, negotiates block exponents by piggybacking them on the stream, and
 * recovers losses with per-slot loss checks and retransmission. An {@link org.inagg.protocol.AllReduceOperation} is an
 * all-reduce or, over parts with owners cut into packets by {@code BlockSchedule}, a reduce-scatter or an all-gather,
 * with a SUM, MIN or MAX ({@code OrderedKeys} carry float MIN and MAX as int32 keys).
 * <p>
 * The agent is a duty cycle over small package-private parts, one idea each, all final and confined to its thread:
 * {@code JoinClient} (join, session, the switch's liveness), {@code PacketSchedule} (which packet carries which block,
 * sequence numbers, exponents), {@code LaneCodec} (lanes between tensors and payloads), {@code SlotTable} (each slot's
 * packet in flight, round and send times as parallel primitive arrays, and the ready queue), {@code LossDetector}
 * (reorder window, backed-off timeout, stall probes; {@link org.inagg.protocol.RetransmissionTimer}),
 * {@code CongestionWindow} (AIMD) and {@code WorkerCounters} ({@link org.inagg.protocol.WorkerCounter}).
 */
package org.inagg.protocol;
