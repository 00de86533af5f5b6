package org.inagg.protocol;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ready queue gives the lowest next packet first, whatever order the slots were queued in (results come back in a
 * different order at each worker under loss; issue 23), and the lowest packet a worker still needs is found for the
 * window to let it out.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class SlotTableTest
{
    @Test
    void shouldSendTheLowestReadyPacketFirstWhateverTheQueueingOrder()
    {
        final SplittableRandom random = new SplittableRandom(23);
        for (int trial = 0; trial < 200; trial++)
        {
            final int slots = 1 + random.nextInt(64);
            final SlotTable table = new SlotTable();
            table.resize(slots);
            table.begin(slots, 100 * slots);
            final List<Integer> order = new ArrayList<>();
            for (int s = 0; s < slots; s++)
            {
                order.add(s);
            }
            java.util.Collections.shuffle(order, new java.util.Random(random.nextLong()));
            final int round = random.nextInt(50);
            for (final int s : order)
            {
                table.enqueue(s, round * slots + s);
            }
            for (int expected = 0; expected < slots; expected++)
            {
                assertThat(table.readyCount()).isEqualTo(slots - expected);
                assertThat(table.readySlot()).isEqualTo(expected);
                assertThat(table.readyPacket()).isEqualTo(round * slots + expected);
                table.dequeue();
            }
            assertThat(table.readyCount()).isZero();
        }
    }

    @Test
    void shouldKeepTheOrderWhileSlotsComeAndGo()
    {
        final int slots = 8;
        final SlotTable table = new SlotTable();
        table.resize(slots);
        table.begin(slots, 1_000);
        for (final int s : new int[] {5, 2, 7})
        {
            table.enqueue(s, s);
        }
        assertThat(table.readyPacket()).isEqualTo(2);
        table.dequeue();
        table.enqueue(1, 9); // slot 1's second round
        table.enqueue(3, 3);
        assertThat(drain(table)).containsExactly(3, 5, 7, 9);
    }

    @Test
    void shouldLetTheLowestNeededPacketPastAFullWindowOnly()
    {
        final int slots = 4;
        final SlotTable table = new SlotTable();
        table.resize(slots);
        table.begin(slots, 12);
        for (int s = 0; s < slots; s++)
        {
            table.enqueue(s, s);
        }
        assertThat(table.lowestFirst()).as("packet 0 is the lowest needed and ready").isTrue();
        send(table, 2);
        assertThat(table.readyPacket()).isEqualTo(2);
        assertThat(table.lowestFirst()).as("packet 0 is in flight: nothing below it is queued").isFalse();
        table.onCompleted(0);
        table.enqueue(0, 4);
        assertThat(table.lowestFirst()).as("packet 1 is in flight").isFalse();
        table.onCompleted(1);
        table.enqueue(1, 5);
        assertThat(table.lowestFirst()).as("packet 2 waits at the head and is the lowest needed").isTrue();
    }

    /** Sends the head of the queue {@code times} times. */
    private static void send(final SlotTable table, final int times)
    {
        for (int i = 0; i < times; i++)
        {
            final int slot = table.readySlot();
            table.onSent(slot, table.readyPacket(), 0, 0, false);
            table.dequeue();
        }
    }

    private static List<Integer> drain(final SlotTable table)
    {
        final List<Integer> packets = new ArrayList<>();
        while (table.readyCount() > 0)
        {
            packets.add(table.readyPacket());
            table.dequeue();
        }
        return packets;
    }
}
