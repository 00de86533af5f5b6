package org.inagg.protocol;

/**
 * Where each block (one packet's lanes) of an operation lies: a tensor of {@code parts} parts of {@code partElements}
 * elements, each part cut into {@code ceil(partElements / lanes)} blocks, so that no packet straddles two parts (the
 * last block of a part may be short). An all-reduce is one part: block {@code b} is then elements
 * {@code [b * lanes, min((b + 1) * lanes, L))}, as it always was.
 * <pre>
 *   part p:  | block p*k | block p*k+1 | ... | block p*k+k-1 (short) |      k = ceil(partElements / lanes)
 *   block b: part b / k, first element (b / k) * partElements + (b % k) * lanes
 * </pre>
 * Every worker of a job computes the same schedule from the same arguments, which is how they agree, packet by
 * packet, on each block's Owner.
 */
final class BlockSchedule
{
    private int lanes;
    private int partElements;
    private int blocksPerPart;
    private int blocks;

    /** Cuts {@code parts x partElements} elements into blocks of at most {@code lanes}. */
    void reset(final int parts, final int partElements, final int lanes)
    {
        this.lanes = lanes;
        this.partElements = partElements;
        this.blocksPerPart = (int)(((long)partElements + lanes - 1) / lanes);
        this.blocks = blocksPerPart * parts;
    }

    int blocks()
    {
        return blocks;
    }

    int part(final int block)
    {
        return block / blocksPerPart;
    }

    /** First element of {@code block} within its part. */
    int offsetInPart(final int block)
    {
        return (block % blocksPerPart) * lanes;
    }

    /** First element of {@code block} in the whole tensor. */
    long element(final int block)
    {
        return (long)part(block) * partElements + offsetInPart(block);
    }

    /** Elements of {@code block}: {@code lanes}, or fewer for the last block of a part. */
    int length(final int block)
    {
        return Math.min(lanes, partElements - offsetInPart(block));
    }
}
