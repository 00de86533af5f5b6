package org.inagg.services.agent;

/**
 * One rank's request for one round of an all-reduce, as decoded from its slot descriptor.
 *
 * @param sequence round number, 1, 2, ... per rank and job.
 * @param op       {@link AgentProtocol#OP_SUM} or {@link AgentProtocol#OP_AVG}.
 * @param dtype    {@link AgentProtocol#DTYPE_FLOAT32} or {@link AgentProtocol#DTYPE_INT32}.
 * @param count    elements in the rank's data region.
 * @param total    elements of the whole collective this round is part of (rounds carry up to a slot each).
 */
public record CollectiveRequest(long sequence, int op, int dtype, long count, long total)
{
}
