package org.inagg.protocol;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The loss checks kept as a time per slot: a check runs once due and not before, a result drops it, a check scheduled
 * again while it runs waits for a later poll, checks of slots past the operation's are dropped, and a stalled job
 * probes only its oldest packet.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class LossDetectorTest
{
    private static final long TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(2);
    private static final int SLOTS = 8;

    private final SlotTable slots = new SlotTable();
    private final List<Integer> ran = new ArrayList<>();
    private LossDetector loss;

    @BeforeEach
    void setUp()
    {
        slots.resize(SLOTS);
        slots.begin(SLOTS, 1_000);
        loss = new LossDetector(slots, new WorkerSettings(1, 0, 2, 0, 0, TIMEOUT_NS, TimeUnit.SECONDS.toNanos(10),
            1_000_000L, 16));
    }

    @Test
    void shouldRunACheckOnceDueAndNotBefore()
    {
        send(3, 30, 1_000);
        final long due = slots.checkAtNs(3);
        assertThat(due).isGreaterThan(1_000);

        assertThat(loss.poll(due - 1, SLOTS, ran::add)).isZero();
        assertThat(ran).isEmpty();
        assertThat(loss.poll(due, SLOTS, ran::add)).isEqualTo(1);
        assertThat(ran).containsExactly(3);
        assertThat(slots.checkAtNs(3)).as("a check that ran is gone until scheduled again").isEqualTo(SlotTable.NO_CHECK);
        assertThat(loss.poll(due + TIMEOUT_NS * 100, SLOTS, ran::add)).isZero();
    }

    @Test
    void shouldRaiseTheEarliestCheckAfterAScanThatFoundOnlyCancelledOnes()
    {
        send(0, 9, 0);
        loss.onResult(0, 100_000, SLOTS); // the first round trip: checks are reorder windows from now on
        slots.onCompleted(0);
        send(1, 10, 1_000_000);
        final long first = slots.checkAtNs(1);
        send(2, 11, 1_100_000);
        final long second = slots.checkAtNs(2);
        assertThat(second).isGreaterThan(first);
        loss.onResult(1, 1_100_000, SLOTS);
        slots.onCompleted(1);
        assertThat(loss.earliestCheckNs()).as("a cancel leaves the bound behind").isEqualTo(first);

        assertThat(loss.poll(first, SLOTS, ran::add)).isZero();
        assertThat(loss.earliestCheckNs()).as("the scan raised it to the check still set").isEqualTo(second);
        assertThat(loss.poll(second - 1, SLOTS, ran::add)).isZero();
        assertThat(ran).isEmpty();
    }

    @Test
    void shouldDropTheCheckOfASlotWhoseResultCame()
    {
        send(1, 10, 1_000);
        send(2, 11, 2_000);
        final long due = slots.checkAtNs(2);
        loss.onResult(1, 50_000, SLOTS);
        slots.onCompleted(1);

        assertThat(loss.poll(due, SLOTS, ran::add)).isEqualTo(1);
        assertThat(ran).containsExactly(2);
    }

    @Test
    void shouldRunEveryDueCheckOnceAndLeaveOnesScheduledWhileRunningToALaterPoll()
    {
        for (int s = 0; s < SLOTS; s++)
        {
            send(s, s, 1_000 + s);
        }
        final long allDue = slots.checkAtNs(SLOTS - 1);
        final long now = allDue + 1;
        assertThat(loss.poll(now, SLOTS, slot ->
        {
            ran.add(slot);
            loss.check(slot, now); // WAIT: checked again a reorder window later
        })).isEqualTo(SLOTS);
        assertThat(ran).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
        assertThat(loss.poll(now, SLOTS, ran::add)).as("nothing ran twice in one poll, nor at the same time").isZero();
        assertThat(loss.poll(slots.checkAtNs(0), SLOTS, ran::add)).isEqualTo(SLOTS);
    }

    @Test
    void shouldDropChecksOfSlotsPastTheOperationsAndOfIdleSlots()
    {
        send(6, 60, 1_000);
        send(2, 20, 1_000);
        final long due = slots.checkAtNs(6);
        slots.onCompleted(2); // idle without its result cancelling the check (a failed operation)

        assertThat(loss.poll(due, 4, ran::add)).isZero();
        assertThat(slots.checkAtNs(6)).isEqualTo(SlotTable.NO_CHECK);
        assertThat(slots.checkAtNs(2)).isEqualTo(SlotTable.NO_CHECK);
    }

    @Test
    void shouldProbeOnlyTheOldestPacketOfAStalledJob()
    {
        send(0, 5, 0);
        send(1, 4, 0);
        send(2, 6, 0);
        final long now = TimeUnit.SECONDS.toNanos(1); // far past every timeout, and no result at all since
        final List<Integer> verdicts = new ArrayList<>();
        loss.poll(now, SLOTS, slot -> verdicts.add(loss.judge(slot, now, 0, SLOTS)));
        assertThat(verdicts).containsExactly(LossDetector.WAIT, LossDetector.PROBE, LossDetector.WAIT);
    }

    @Test
    void shouldJudgeAPacketLostByOrderOnceManyLaterOnesCameBack()
    {
        send(0, 0, 0);
        for (int p = 1; p <= 20; p++)
        {
            final int slot = 1 + (p - 1) % (SLOTS - 1);
            send(slot, p, p * 1_000L);
            loss.onResult(slot, p * 1_000L + 500_000, SLOTS);
            slots.onCompleted(slot);
        }
        final long now = TimeUnit.MILLISECONDS.toNanos(3);
        final List<Integer> verdicts = new ArrayList<>();
        assertThat(loss.poll(now, SLOTS, slot -> verdicts.add(loss.judge(slot, now, now, SLOTS)))).isEqualTo(1);
        assertThat(verdicts).containsExactly(LossDetector.LOST);
    }

    private void send(final int slot, final int packet, final long nowNs)
    {
        slots.onSent(slot, packet, nowNs, loss.nextStamp(), false);
        loss.check(slot, nowNs);
    }
}
