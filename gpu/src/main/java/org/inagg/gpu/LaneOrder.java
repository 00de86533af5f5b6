package org.inagg.gpu;

/** Byte order of int32 lanes a device writes or reads. */
public enum LaneOrder
{
    /** The machine's order: what the int32 all-reduce of {@link org.inagg.api.AllReduceJob} takes. */
    NATIVE,
    /** Big-endian, as lanes lie in a packet's payload: a packet can be filled straight from the buffer. */
    NETWORK
}
