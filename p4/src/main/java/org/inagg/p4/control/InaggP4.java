package org.inagg.p4.control;

/**
 * The constants {@code p4/src/main/p4/inagg_v1model.p4} and {@code inagg_tna.p4} are compiled with; keep them equal to
 * the {@code #define}s at the top of those programs (a test reads the programs and checks).
 */
public final class InaggP4
{
    /** Default UDP destination port of inagg messages; the P4 parsers take only this port (the software switch any). */
    public static final int UDP_PORT = 47000;
    /** Slots in the shared register pool; a job occupies {@code [slotBase, slotBase + slots)}. */
    public static final int POOL_SLOTS = 4096;
    /** Workers per job the P4 seen bitmaps cover: 8 words of 32 bits per shadow copy. */
    public static final int MAX_WORKERS = 256;
    /** Bitmap words per shadow copy, indexed by {@code worker / 32}. */
    public static final int BITMAP_WORDS = MAX_WORKERS / 32;
    /** Lanes the v1model program aggregates in one pass. */
    public static final int V1MODEL_MAX_LANES = 256;
    /** Lanes the TNA program aggregates in one pass (one stateful ALU per lane: four in each of eight MAU stages). */
    public static final int TNA_LANES_PER_PASS = 32;
    /** Lanes per packet the TNA program aggregates: up to 8 chunks of 32, one recirculated pass each. */
    public static final int TNA_MAX_LANES = 256;
    /** Rows of each TNA lane register; a slot job of P chunks takes {@code 2 * slots * 2^ceil(log2 P)} of them. */
    public static final int TNA_LANE_ROWS = 32768;
    /** Aggregators of the TNA program's ESA pool ({@code ESA_AGGREGATORS}): fixed, and lane rows of their own. */
    public static final int TNA_ESA_AGGREGATORS = 4096;
    /** Workers of an ESA job on TNA ({@code ESA_MAX_WORKERS}): one 32-bit bitmap word per aggregator. */
    public static final int TNA_ESA_MAX_WORKERS = 32;
    /** ESA jobs the TNA program tells apart: 7 job bits in an aggregator's key tag. */
    public static final int TNA_ESA_MAX_JOBS = 128;

    private InaggP4()
    {
    }
}
