package org.inagg.p4.softswitch;

import org.inagg.fixedpoint.FixedPoint;
import org.inagg.wire.InaggHeader;

/**
 * A row of the switch's job table, as the control plane installs it.
 *
 * @param jobId          job id carried in every packet.
 * @param workers        workers whose contributions complete a slot.
 * @param slots          aggregator slots of the job's pool (each with two shadow copies).
 * @param lanesPerPacket int32 lanes per packet (64, 128, 256 or up to {@link InaggHeader#MAX_ELEMENTS_FOR_1500_MTU}).
 */
public record SwitchJobConfig(int jobId, int workers, int slots, int lanesPerPacket)
{
    public static final int DEFAULT_SLOTS = 128;
    public static final int DEFAULT_LANES = 256;

    public SwitchJobConfig
    {
        if (jobId < 0 || jobId > InaggHeader.MAX_JOB_ID)
        {
            throw new IllegalArgumentException("job id must be in 0.." + InaggHeader.MAX_JOB_ID + ", got " + jobId);
        }
        if (workers < 1 || workers > FixedPoint.MAX_WORKERS)
        {
            throw new IllegalArgumentException("job " + jobId + ": workers must be in 1.." + FixedPoint.MAX_WORKERS
                + ", got " + workers);
        }
        if (slots < 1 || slots >= InaggHeader.MAX_SLOTS)
        {
            throw new IllegalArgumentException("job " + jobId + ": slots must be in 1.." + (InaggHeader.MAX_SLOTS - 1)
                + ", got " + slots);
        }
        if (lanesPerPacket < 1 || lanesPerPacket > InaggHeader.MAX_ELEMENT_COUNT)
        {
            throw new IllegalArgumentException("job " + jobId + ": lanes per packet must be in 1.."
                + InaggHeader.MAX_ELEMENT_COUNT + ", got " + lanesPerPacket);
        }
    }

    public SwitchJobConfig(final int jobId, final int workers)
    {
        this(jobId, workers, DEFAULT_SLOTS, DEFAULT_LANES);
    }
}
