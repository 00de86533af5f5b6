package org.inagg.api;

import org.inagg.wire.InaggHeader;

/**
 * How a reduction combines the workers' values, element by element. AVG is the caller's division of a SUM by the
 * number of workers (the switch has no divider; dividing once, after the sum, is also what keeps it deterministic).
 */
public enum ReduceOp
{
    /**
     * Sum: float32 as fixed point with per-block exponents (within {@link org.inagg.fixedpoint.FixedPoint}'s bound),
     * int32 exactly with two's-complement wrap-around.
     */
    SUM(InaggHeader.OP_SUM),
    /** Minimum, exact: int32 signed; float32 through order-preserving int32 keys (NaN and infinities are refused). */
    MIN(InaggHeader.OP_MIN),
    /** Maximum, exact, as {@link #MIN}. */
    MAX(InaggHeader.OP_MAX);

    private final int wire;

    ReduceOp(final int wire)
    {
        this.wire = wire;
    }

    /** The op as the wire carries it ({@code InaggHeader.OP_*}). */
    int wire()
    {
        return wire;
    }
}
