package org.inagg.protocol;

import java.util.concurrent.TimeUnit;

import org.agrona.DeadlineTimerWheel;
import org.agrona.collections.Long2LongHashMap;

/**
 * Judges packets in flight lost, by order or by time. Each packet in flight has a check in a timer wheel; when it runs,
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
 * Not thread safe: it belongs to the worker agent's thread. No allocation once the timer map has grown to the pool.
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

    private static final int IDLE_LOSS_FACTOR = 2;
    /** Added to the reorder window: the timer wheel's tick (65.5 us) and the scheduling noise of a loaded host. */
    private static final long REORDER_SLACK_NS = TimeUnit.MICROSECONDS.toNanos(100);
    /** How late a check may run: the blocking idle strategy wakes at least once a millisecond. */
    private static final long TIMER_GRANULARITY_NS = TimeUnit.MILLISECONDS.toNanos(1);
    /** The timeout before the first round trip was measured: the first round also waits for the slowest worker. */
    private static final long INITIAL_RTO_NS = TimeUnit.MILLISECONDS.toNanos(100);
    /** The largest measured timeout, backoff included, as a multiple of the configured one. */
    private static final long RTO_CEILING_FACTOR = 32;

    private final SlotTable slots;
    private final DeadlineTimerWheel timers;
    private final RetransmissionTimer retransmissionTimer;
    private final Long2LongHashMap slotByTimer = new Long2LongHashMap(-1);
    private long sendStamp;
    private long highestCompletedStamp;
    private long lastStallProbeNs;
    private boolean stallProbed;

    LossDetector(final SlotTable slots, final WorkerSettings settings, final long startNs)
    {
        this.slots = slots;
        this.timers = new DeadlineTimerWheel(TimeUnit.NANOSECONDS, startNs, 1L << 16, 1024);
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

    /** Runs the checks due by {@code nowNs}; Agrona's wheel advances one tick per poll, so it polls until caught up. */
    int poll(final long nowNs, final DeadlineTimerWheel.TimerHandler handler)
    {
        if (timers.timerCount() == 0)
        {
            timers.currentTickTime(nowNs);
            return 0;
        }
        int expired = 0;
        do
        {
            expired += timers.poll(nowNs, handler, Integer.MAX_VALUE);
        }
        while (timers.currentTickTime() <= nowNs && timers.timerCount() > 0);
        return expired;
    }

    /**
     * A check ran: the slot it was for, or -1 when it is stale (cancelled, replaced) or the slot has nothing in
     * flight. The slot then has no check until {@link #check} schedules one.
     */
    int expired(final long timerId)
    {
        final long slot = slotByTimer.remove(timerId);
        if (slot < 0 || slots.timer((int)slot) != timerId)
        {
            return -1;
        }
        final int s = (int)slot;
        slots.timer(s, DeadlineTimerWheel.NULL_DEADLINE);
        return slots.idle(s) ? -1 : s;
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
            if (slots.packet(slot) != slots.oldestInFlight(activeSlots))
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
        final long timer = timers.scheduleTimer(deadlineNs);
        slots.timer(slot, timer);
        slotByTimer.put(timer, slot);
    }

    /**
     * The first round trip measured: the packets already out were checked at the initial timeout (no reorder window
     * without a round trip), so their checks move to their reorder windows, or the first window's losses would wait it.
     */
    private void rescheduleOutstanding(final int activeSlots)
    {
        for (int s = 0; s < activeSlots; s++)
        {
            if (!slots.idle(s) && slots.timer(s) != DeadlineTimerWheel.NULL_DEADLINE)
            {
                cancel(s);
                scheduleAt(s, slots.sentNs(s) + reorderWindowNs(s));
            }
        }
    }

    private void cancel(final int slot)
    {
        final long timer = slots.timer(slot);
        if (timer != DeadlineTimerWheel.NULL_DEADLINE)
        {
            timers.cancelTimer(timer);
            slotByTimer.remove(timer);
            slots.timer(slot, DeadlineTimerWheel.NULL_DEADLINE);
        }
    }
}
