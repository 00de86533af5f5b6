package org.inagg.api;

/** Element types an all-reduce sums. */
public enum ElementType
{
    /** IEEE binary32, carried as fixed point with per-block exponents. */
    FLOAT32,
    /** Two's-complement int32, summed exactly (wrapping on overflow, as the switch's adders do). */
    INT32
}
