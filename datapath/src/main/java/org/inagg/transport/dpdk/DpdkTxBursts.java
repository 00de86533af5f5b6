package org.inagg.transport.dpdk;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.inagg.ffi.dpdk.FastPath;
import org.inagg.ffi.dpdk.Mbuf;
import org.inagg.transport.TransportCounter;
import org.inagg.transport.TransportCounters;

/**
 * The transmit side of a {@link DpdkTransport}: a stash of raw mbufs refilled from the pool in bursts (one mbuf at a
 * time when a burst is not free), the mbuf claimed now, and per link a burst of committed mbufs that
 * {@link #flushLink} hands to the driver ({@code rte_eth_tx_burst}, freeing what the queue did not take and counting it
 * as {@link TransportCounter#DROP_UNSENT}). Every mbuf taken from the pool is in the stash, claimed, queued in a burst
 * or handed to the driver; {@link #freeAll()} frees what is held. The native arrays live in the transport's arena.
 * Nothing here allocates after construction. Not thread safe: the transport's polling thread calls it.
 */
final class DpdkTxBursts
{
    /** What {@link #claim} answers when the pool has no mbuf free. */
    static final long NO_FRAME = 0;

    private final MemorySegment mempool;
    private final int burst;
    private final int linkCount;
    private final int[] linkPort;
    private final int[] linkTxQueue;
    private final MemorySegment txMbufs;
    private final MemorySegment[] txBursts;
    private final int[] txCount;
    private final MemorySegment stash;
    private int stashCount;
    private long claimedMbuf;
    private int claimedLink = -1;
    private long framesSent;

    DpdkTxBursts(
        final MemorySegment mempool, final int burst, final int[] linkPort, final int[] linkTxQueue, final Arena arena)
    {
        this.mempool = mempool;
        this.burst = burst;
        this.linkCount = linkPort.length;
        this.linkPort = linkPort;
        this.linkTxQueue = linkTxQueue;
        this.txMbufs = arena.allocate(ValueLayout.ADDRESS, (long)linkCount * burst);
        this.txCount = new int[linkCount];
        this.txBursts = new MemorySegment[linkCount];
        for (int l = 0; l < linkCount; l++)
        {
            txBursts[l] = txMbufs.asSlice((long)l * burst * FastPath.POINTER_BYTES, burst * FastPath.POINTER_BYTES);
        }
        this.stash = arena.allocate(ValueLayout.ADDRESS, burst);
    }

    /**
     * Claims an mbuf for a frame of {@code frameLength} bytes to {@code link} (flushing the link's burst first when it
     * is full) and returns the frame's address, or {@link #NO_FRAME} when the pool has none free.
     */
    long claim(final int link, final int frameLength, final TransportCounters counters)
    {
        if (txCount[link] == burst)
        {
            flushLink(link, counters);
        }
        if (stashCount == 0 && !refillStash())
        {
            return NO_FRAME;
        }
        final long mbuf = Mbuf.at(stash, --stashCount);
        claimedMbuf = mbuf;
        claimedLink = link;
        return Mbuf.prepareRaw(mbuf, frameLength);
    }

    private boolean refillStash()
    {
        if (FastPath.rawBulkAlloc(mempool, stash, burst))
        {
            stashCount = burst;
            return true;
        }
        if (FastPath.rawBulkAlloc(mempool, stash, 1))
        {
            stashCount = 1;
            return true;
        }
        return false;
    }

    /** Queues the claimed mbuf in its link's burst. */
    void commit()
    {
        final int link = claimedLink;
        Mbuf.set(txMbufs, link * burst + txCount[link]++, claimedMbuf);
        claimedLink = -1;
    }

    /** Puts the claimed mbuf, if any, back in the stash. */
    void abort()
    {
        if (claimedLink >= 0)
        {
            Mbuf.set(stash, stashCount++, claimedMbuf);
            claimedLink = -1;
        }
    }

    /** Flushes every link with mbufs queued; returns the frames the driver took. */
    int flush(final TransportCounters counters)
    {
        int sent = 0;
        for (int link = 0; link < linkCount; link++)
        {
            if (txCount[link] > 0)
            {
                sent += flushLink(link, counters);
            }
        }
        return sent;
    }

    private int flushLink(final int link, final TransportCounters counters)
    {
        final int count = txCount[link];
        final int sent = FastPath.txBurstFreeUnsent(linkPort[link], linkTxQueue[link], txBursts[link], count);
        txCount[link] = 0;
        framesSent += sent;
        if (sent < count)
        {
            counters.add(TransportCounter.DROP_UNSENT, count - sent);
        }
        return sent;
    }

    /** Frames the transmit queues took. */
    long framesSent()
    {
        return framesSent;
    }

    /** Frees every mbuf held: claimed, queued and stashed. */
    void freeAll()
    {
        abort();
        for (int link = 0; link < linkCount; link++)
        {
            FastPath.bulkFree(txBursts[link], txCount[link]);
            txCount[link] = 0;
        }
        FastPath.bulkFree(stash, stashCount);
        stashCount = 0;
    }
}
