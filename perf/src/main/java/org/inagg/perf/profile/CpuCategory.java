package org.inagg.perf.profile;

import java.util.List;

/**
 * Where a CPU sample of an inagg process goes, from its thread and its stack. The first category that matches wins, in
 * declaration order: a sample in the kernel under a send call is a send, one in quantize under the send path is a
 * quantize. Kernel frames carry async-profiler's {@code _[k]} suffix.
 */
public enum CpuCategory
{
    /** C1/C2 compiler threads: the warm-up's price, mostly. */
    JIT("JIT compiler"),
    /** GC and the VM thread. */
    GC("GC and VM"),
    /** The {@code inagg worker} command's own work, on any thread: synthetic gradients and the check of the result. */
    HARNESS("harness: synthetic data, result check"),
    /** Float to fixed point into a packet. */
    QUANTIZE("quantize"),
    /** Fixed point from a packet into the tensor. */
    DEQUANTIZE("dequantize"),
    /** The largest magnitude of each block (the exponent negotiation). */
    EXPONENTS("block exponents"),
    /** The switch adding lanes into its slots and reading sums out. */
    AGGREGATE("switch: aggregate"),
    /** sendmmsg/sendmsg/sendto and the kernel's UDP and IP output below them. */
    SEND("send (system call)"),
    /** recvmmsg/recvmsg/recvfrom and the kernel's UDP input below them. */
    RECEIVE("receive (system call)"),
    /** Waiting in epoll/poll (the blocking idle strategy) or sleeping. */
    WAIT("wait (epoll, sleep)"),
    /** Anything else on an agent thread: the protocol, headers, the duty cycle, the JDK's UDP code. */
    AGENT_OTHER("agent: protocol and the rest"),
    /** Anything else on any other thread (main, timers, the JVM's own). */
    OTHER_THREADS("other threads");

    private final String label;

    CpuCategory(final String label)
    {
        this.label = label;
    }

    public String label()
    {
        return label;
    }

    private static final List<String> SEND_FRAMES = List.of("sendmmsg", "sendmsg", "sendto", "udp_sendmsg",
        "UdpBatchIo.send", "DatagramChannelImpl.send");
    private static final List<String> RECEIVE_FRAMES = List.of("recvmmsg", "recvmsg", "recvfrom", "udp_recvmsg",
        "UdpBatchIo.receive", "DatagramChannelImpl.receive");
    private static final List<String> WAIT_FRAMES = List.of("epoll_wait", "do_epoll_wait", "EPoll.wait", "poll_schedule",
        "do_sys_poll", "Thread.sleep", "LockSupport.park", "nanosleep", "futex_wait");

    /**
     * The category of one sample.
     *
     * @param thread the thread's name as async-profiler writes it ({@code inagg-switch tid=1234}).
     * @param frames the stack, outermost first.
     */
    public static CpuCategory of(final String thread, final List<String> frames)
    {
        if (thread.contains("CompilerThread") || thread.startsWith("C1 ") || thread.startsWith("C2 "))
        {
            return JIT;
        }
        if (thread.startsWith("GC ") || thread.contains("VM Thread") || thread.startsWith("G1 ")
            || thread.contains("Parallel GC") || thread.contains("Serial"))
        {
            return GC;
        }
        if (frames.stream().anyMatch(frame -> frame.contains("SyntheticGradients")))
        {
            return HARNESS;
        }
        if (!isAgentThread(thread))
        {
            return OTHER_THREADS;
        }
        for (int i = frames.size() - 1; i >= 0; i--)
        {
            final String frame = frames.get(i);
            if (frame.contains("FixedPointConverter.quantize"))
            {
                return QUANTIZE;
            }
            if (frame.contains("FixedPointConverter.dequantize"))
            {
                return DEQUANTIZE;
            }
            if (frame.contains("blockExponent"))
            {
                return EXPONENTS;
            }
            if (frame.contains("SlotPool."))
            {
                return AGGREGATE;
            }
        }
        if (any(frames, SEND_FRAMES))
        {
            return SEND;
        }
        if (any(frames, RECEIVE_FRAMES))
        {
            return RECEIVE;
        }
        if (any(frames, WAIT_FRAMES))
        {
            return WAIT;
        }
        return AGENT_OTHER;
    }

    /** inagg's agent threads: {@code inagg-switch}, {@code inagg-worker-JOB-ID}, ... (several in one when composed). */
    static boolean isAgentThread(final String thread)
    {
        return thread.startsWith("inagg-") || thread.startsWith("[inagg-");
    }

    /** Whether the category is an agent thread's (the datapath). */
    public boolean onAgentThread()
    {
        return ordinal() >= QUANTIZE.ordinal() && ordinal() <= AGENT_OTHER.ordinal();
    }

    private static boolean any(final List<String> frames, final List<String> needles)
    {
        for (final String frame : frames)
        {
            for (final String needle : needles)
            {
                if (frame.contains(needle))
                {
                    return true;
                }
            }
        }
        return false;
    }
}
