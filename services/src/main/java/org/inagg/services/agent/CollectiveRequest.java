package org.inagg.services.agent;

/**
 * One rank's request for one round of an all-reduce, as decoded from its slot descriptor.
 *
 * @param sequence round number, 1, 2, ... per rank and job.
 * @param op       {@link AgentProtocol#OP_SUM}, {@link AgentProtocol#OP_AVG} or {@link AgentProtocol#OP_GATHER}.
 * @param dtype    {@link AgentProtocol#DTYPE_FLOAT32} or {@link AgentProtocol#DTYPE_INT32}.
 * @param count    elements in the rank's data region.
 * @param total    elements of the whole collective this round is part of (rounds carry up to a slot each).
 * @param gatherFrom   first byte of the round this rank gives ({@link AgentProtocol#OP_GATHER}; else 0).
 * @param gatherLength bytes this rank gives from {@code gatherFrom} (0: none).
 * @param partElements elements of each rank's part in this round (0: the round is not split into parts).
 * @param partRank     the rank whose part the round starts with (with {@code partElements > 0}).
 */
public record CollectiveRequest(long sequence, int op, int dtype, long count, long total, long gatherFrom,
    long gatherLength, long partElements, int partRank)
{
    /** A sum's request (no gather range, no parts). */
    public CollectiveRequest(final long sequence, final int op, final int dtype, final long count, final long total)
    {
        this(sequence, op, dtype, count, total, 0, 0, 0, 0);
    }

    /** A gather's request without parts. */
    public CollectiveRequest(final long sequence, final int op, final int dtype, final long count, final long total,
        final long gatherFrom, final long gatherLength)
    {
        this(sequence, op, dtype, count, total, gatherFrom, gatherLength, 0, 0);
    }

    /** Parts of the round: {@code count / partElements}, or 0 when the round is not split. */
    public long parts()
    {
        return partElements == 0 ? 0 : count / partElements;
    }
}
