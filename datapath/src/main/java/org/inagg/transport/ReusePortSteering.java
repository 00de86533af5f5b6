package org.inagg.transport;

import org.inagg.wire.InaggHeader;

/**
 * Which socket of an SO_REUSEPORT group takes a datagram: a classic BPF program the kernel runs on each datagram's UDP
 * payload (attached with {@link UdpTransport#steer}), so that N sockets on one port, each read by its own thread, split
 * the traffic without a thread handing packets to another. {@link #byJob} sends every message of a job (its JOINs
 * included) to socket {@code jobId % sockets}, {@link #shardOf}: a job's state then lives on one thread only.
 * <pre>
 *   ldh [2]          ; A = Job Id ({@link InaggHeader#JOB_ID_OFFSET}: bytes 2..3 of the header, big-endian)
 *   mod #sockets     ; A = A % sockets
 *   ret a            ; the group's socket A (a datagram too short for the load: socket 0)
 * </pre>
 */
public final class ReusePortSteering
{
    /** The largest group {@link #byJob} steers. */
    public static final int MAX_SOCKETS = 64;

    private static final short BPF_LD_H_ABS = 0x28;
    private static final short BPF_ALU_MOD_K = 0x94;
    private static final short BPF_RET_A = 0x16;

    private final short[] codes;
    private final byte[] jt;
    private final byte[] jf;
    private final int[] k;
    private final String text;

    private ReusePortSteering(final short[] codes, final int[] k, final String text)
    {
        this.codes = codes;
        this.jt = new byte[codes.length];
        this.jf = new byte[codes.length];
        this.k = k;
        this.text = text;
    }

    /**
     * Socket {@code jobId % sockets} of the group takes each of a job's messages.
     *
     * @throws IllegalArgumentException unless {@code sockets} is in 1..{@link #MAX_SOCKETS}.
     */
    public static ReusePortSteering byJob(final int sockets)
    {
        if (sockets < 1 || sockets > MAX_SOCKETS)
        {
            throw new IllegalArgumentException("sockets must be in 1.." + MAX_SOCKETS + ", got " + sockets);
        }
        return new ReusePortSteering(new short[] {BPF_LD_H_ABS, BPF_ALU_MOD_K, BPF_RET_A},
            new int[] {InaggHeader.JOB_ID_OFFSET, sockets, 0}, "job id % " + sockets);
    }

    /** The socket (of {@code sockets}) that {@link #byJob} gives job {@code jobId}'s messages to. */
    public static int shardOf(final int jobId, final int sockets)
    {
        if (sockets < 1 || sockets > MAX_SOCKETS)
        {
            throw new IllegalArgumentException("sockets must be in 1.." + MAX_SOCKETS + ", got " + sockets);
        }
        if (jobId < 0 || jobId > InaggHeader.MAX_JOB_ID)
        {
            throw new IllegalArgumentException("job id must be in 0.." + InaggHeader.MAX_JOB_ID + ", got " + jobId);
        }
        return jobId % sockets;
    }

    /** The program's instructions: code, jt, jf, k of each. */
    short[] codes()
    {
        return codes;
    }

    byte[] jumpsIfTrue()
    {
        return jt;
    }

    byte[] jumpsIfFalse()
    {
        return jf;
    }

    int[] constants()
    {
        return k;
    }

    @Override
    public String toString()
    {
        return text;
    }
}
