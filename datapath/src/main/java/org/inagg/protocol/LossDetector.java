package org.inagg.protocol;

import java.util.concurrent.TimeUnit;

/**
 * Judges packets in flight lost, by order or by time. Each packet in flight has a check, a time in its slot
 * ({@link SlotTable#checkAtNs}); when it is due,
 * {@link #judge} says whether to keep waiting ({@link #WAIT}), resend the packet as a probe of a stalled job
 * ({@link #PROBE}), or resend it as lost by order ({@link #LOST}: a congestion window that is on is cut) or by time
 * ({@link #LOST_BY_TIME}: it is not). Round trips of packets sent once feed the {@link RetransmissionTimer}.
 * <p>
 * Only a loss by order is congestion evidence: the switch answered packets this worker sent later, so this one (or its
 * result) was dropped on a path that carries the others. A slot waits as often for another worker's loss: at 64
 * workers and 10 % faults nearly every slot does, and cutting on every timeout held each worker at two packets in
 * flight, each waiting out its timeout, and an all-reduce of 1 Mi elements took minutes (issue 23).
 * <p>
 * A packet is lost by order once results came back for more than a quarter window of packets sent after it and it has
 * waited its reorder window, a quarter round trip past the smoothed one ({@link #reorderWindowNs}: TCP's RACK, RFC 8985:
 * the pipe is moving but not for this packet), or lost by time once it has waited {@link #IDLE_LOSS_FACTOR} times its
 * backed-off timeout (nothing moves); while nothing moves at all, only the oldest packet in flight is resent, once per
 * timeout (a probe). Otherwise the pipe is just slow, and the check is repeated later; a timeout alone
 * would resend every queued packet of a slow round. Waiting a whole timeout for order evidence would stall the slot for
 * several round trips per lost result (the timeout outwaits the job's slowest worker, at least 2 ms by default).
 * <p>
 * The checks are not in a timer wheel: a result cancels nearly every check before it is due, and a wheel's schedule,
 * cancel and id map cost 10.5-11 % of a worker's CPU at 4 ranks over loopback (async-profiler, bench-peers). A check
 * is a store into its slot and a minimum ({@link #earliestCheckNs}); the slots are scanned only once that minimum is
 * due. After a scan the minimum is the oldest packet's check, about a quarter round trip plus the slack ahead, so
 * the pool is scanned a few times per round trip, not touched per packet. Check times are compared as values: the
 * clock may read negative but must not wrap past {@code Long.MAX_VALUE} (nor could Agrona's wheel).
 * <p>
 * Not thread safe: it belongs to the worker agent's thread. No allocation.
 */
final class LossDetector
{
    /** Verdicts of {@link #judge}. */
    static final int WAIT = 0;
    static final int PROBE = 1;
    /** Lost by order: resend it and cut the window. */
    static final int LOST = 2;
    /** Lost by time with the job moving: resend it, keep the window. */
    static final int LOST_BY_TIME = 3;

    /** Runs a due check: {@link #judge} it, then resend or {@link #check} again. */
    interface CheckHandler
    {
        /** The check of {@code slot}, which has a packet in flight, is due; it has no check until one is scheduled. */
        void onCheck(int slot);
    }

    private static final int OLDEST_UNKNOWN = -2;

    private static final int IDLE_LOSS_FACTOR = 2;
    /** Added to the reorder window: the scheduling noise of a loaded host. */
    private static final long REORDER_SLACK_NS = TimeUnit.MICROSECONDS.toNanos(100);
    /** How late a check may run: the blocking idle strategy wakes at least once a millisecond. */
    private static final long TIMER_GRANULARITY_NS = TimeUnit.MILLISECONDS.toNanos(1);
    /** The timeout before the first round trip was measured: the first round also waits for the slowest worker. */
    private static final long INITIAL_RTO_NS = TimeUnit.MILLISECONDS.toNanos(100);
    /** The largest measured timeout, backoff included, as a multiple of the configured one. */
    private static final long RTO_CEILING_FACTOR = 32;

    private final SlotTable slots;
    private final RetransmissionTimer retransmissionTimer;
    /** No check is due before it: a lower bound of the slots' check times (a cancelled check leaves it behind). */
    private long earliestCheckNs = SlotTable.NO_CHECK;
    /**
     * The oldest packet in flight, found once per scan of due checks when a stall probe needs it; valid because
     * {@link #judge} runs only from a scan's {@link CheckHandler}, which resends but never completes a slot.
     */
    private int scanOldest = OLDEST_UNKNOWN;
    private long sendStamp;
    private long highestCompletedStamp;
    private long lastStallProbeNs;
    private boolean stallProbed;

    LossDetector(final SlotTable slots, final WorkerSettings settings)
    {
        this.slots = slots;
        // The measured RTO (and its backoff) stays within RTO_CEILING_FACTOR x the configured timeout: a round trip
        // measures the job (its slowest worker), so one worker descheduled for long, or many workers on one thread,
        // would otherwise grow it until every loss costs seconds (EndToEndAllReduceTest: 64 workers on one thread at
        // 10% loss ran for minutes; TwoLevelAggregationTest at 5% faults past its 120 s timeout).
        final long rtoCeilingNs = Math.max(settings.retransmitTimeoutNs(), Math.min(settings.peerTimeoutNs() / 4,
            settings.retransmitTimeoutNs() * RTO_CEILING_FACTOR));
        this.retransmissionTimer = new RetransmissionTimer(settings.retransmitTimeoutNs(), rtoCeilingNs,
            Math.min(rtoCeilingNs, Math.max(settings.retransmitTimeoutNs(), INITIAL_RTO_NS)), TIMER_GRANULARITY_NS);
    }

    /** The slot was just sent (its {@link SlotTable#onSent} needs this stamp): its check is scheduled. */
    long nextStamp()
    {
        return ++sendStamp;
    }

    /** No check is due before it (a lower bound of the slots' check times): for tests. */
    long earliestCheckNs()
    {
        return earliestCheckNs;
    }

    /** The stamp of the last packet sent (0 before the first). */
    long lastStamp()
    {
        return sendStamp;
    }

    /** Schedules the slot's check one reorder window from {@code nowNs}. */
    void check(final int slot, final long nowNs)
    {
        scheduleAt(slot, nowNs + reorderWindowNs(slot));
    }

    /** The result of the slot's packet came back at {@code nowNs}, before {@link SlotTable#onCompleted}. */
    void onResult(final int slot, final long nowNs, final int activeSlots)
    {
        cancel(slot);
        if (slots.retries(slot) == 0)
        {
            final boolean first = retransmissionTimer.samples() == 0;
            retransmissionTimer.onSample(nowNs - slots.sentNs(slot)); // Karn: a resent packet's result is ambiguous
            if (first)
            {
                rescheduleOutstanding(activeSlots);
            }
        }
        highestCompletedStamp = Math.max(highestCompletedStamp, slots.stamp(slot));
    }

    /**
     * Runs the checks due by {@code nowNs} of slots {@code [0, activeSlots)} (checks left on other slots are dropped)
     * and returns how many ran; nothing is looked at before the earliest check is due.
     */
    int poll(final long nowNs, final int activeSlots, final CheckHandler handler)
    {
        if (nowNs < earliestCheckNs)
        {
            return 0;
        }
        earliestCheckNs = SlotTable.NO_CHECK;
        long earliest = SlotTable.NO_CHECK;
        int ran = 0;
        final int size = slots.size();
        for (int s = 0; s < size; s++)
        {
            long at = slots.checkAtNs(s);
            if (at <= nowNs)
            {
                slots.checkAtNs(s, SlotTable.NO_CHECK);
                if (s < activeSlots && !slots.idle(s))
                {
                    ran++;
                    handler.onCheck(s);
                }
                at = slots.checkAtNs(s);
            }
            earliest = Math.min(earliest, at);
        }
        scanOldest = OLDEST_UNKNOWN;
        earliestCheckNs = Math.min(earliestCheckNs, earliest);
        return ran;
    }

    /**
     * What to do with the packet in flight of a slot whose check ran at {@code nowNs}, the job's last progress (a
     * result) having been at {@code lastProgressNs}.
     */
    int judge(final int slot, final long nowNs, final long lastProgressNs, final int activeSlots)
    {
        final long waited = nowNs - slots.sentNs(slot);
        final long timeout = retransmissionTimer.timeoutNs(slots.retries(slot));
        final boolean lostByOrder = waited >= reorderWindowNs(slot)
            && highestCompletedStamp - slots.stamp(slot) > Math.max(8, activeSlots / 4);
        // No result at all since this packet left: a stalled job (a descheduled worker or switch) far more often than
        // a lost window. One probe per timeout then, as TCP's RTO resends only the first unacknowledged segment; its
        // result (or the order evidence it brings) decides for the others, and the window is kept.
        final boolean stalled = !lostByOrder && lastProgressNs - slots.sentNs(slot) <= 0;
        final boolean lostByTime = waited >= timeout * IDLE_LOSS_FACTOR
            && (!stalled || !stallProbed || nowNs - lastStallProbeNs >= timeout);
        if (!lostByOrder && !(waited >= timeout && lostByTime))
        {
            return WAIT;
        }
        if (stalled)
        {
            // The probe is the oldest packet's: the job waits for it (its result, or this worker's copy of it), and
            // a probe of a later slot only delays it by another timeout (with 64 workers and cut windows a slot was
            // starved past the peer timeout, issue 23).
            if (scanOldest == OLDEST_UNKNOWN)
            {
                scanOldest = slots.oldestInFlight(activeSlots); // once per scan: at most a probe per scan goes out
            }
            if (slots.packet(slot) != scanOldest)
            {
                return WAIT;
            }
            lastStallProbeNs = nowNs;
            stallProbed = true;
            return PROBE;
        }
        return lostByOrder ? LOST : LOST_BY_TIME;
    }

    /** Cancels the checks of slots {@code [0, activeSlots)} (the operation failed). */
    void cancelAll(final int activeSlots)
    {
        for (int s = 0; s < activeSlots; s++)
        {
            cancel(s);
        }
    }

    /**
     * How long a packet waits before results of packets sent after it may declare it lost (RACK's reorder window): a
     * quarter of the smoothed round trip past it, doubled per retransmission of the packet like the timeout
     * ({@link RetransmissionTimer#timeoutNs}: measured, at least the configured one, at most a quarter of the peer
     * timeout, doubled per retransmission), and never past the timeout. Until the first round trip is measured it is the
     * timeout itself. A fixed timeout below the job's round trip (a worker descheduled for a few milliseconds delays
     * every result) resends whole windows for nothing; without backoff a slow round triggers a storm of retransmissions
     * that only slows it further.
     */
    private long reorderWindowNs(final int slot)
    {
        final long srtt = retransmissionTimer.smoothedRttNs();
        final long timeout = retransmissionTimer.timeoutNs(slots.retries(slot));
        if (srtt == 0)
        {
            return timeout;
        }
        final long window = (srtt + (srtt >> 2) + REORDER_SLACK_NS) << Math.min(slots.retries(slot),
            RetransmissionTimer.MAX_BACKOFF_SHIFT);
        return Math.min(timeout, window);
    }

    private void scheduleAt(final int slot, final long deadlineNs)
    {
        slots.checkAtNs(slot, deadlineNs);
        earliestCheckNs = Math.min(earliestCheckNs, deadlineNs);
    }

    /**
     * The first round trip measured: the packets already out were checked at the initial timeout (no reorder window
     * without a round trip), so their checks move to their reorder windows, or the first window's losses would wait it.
     */
    private void rescheduleOutstanding(final int activeSlots)
    {
        for (int s = 0; s < activeSlots; s++)
        {
            if (!slots.idle(s) && slots.checkAtNs(s) != SlotTable.NO_CHECK)
            {
                scheduleAt(s, slots.sentNs(s) + reorderWindowNs(s));
            }
        }
    }

    /** The check is dropped; {@link #earliestCheckNs} stays (the next scan finds the new minimum). */
    private void cancel(final int slot)
    {
        slots.checkAtNs(slot, SlotTable.NO_CHECK);
    }
}
