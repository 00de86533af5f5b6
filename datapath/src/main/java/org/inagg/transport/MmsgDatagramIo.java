package org.inagg.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;

/**
 * Datagrams through {@code sendmmsg}/{@code recvmmsg} on the socket's descriptor ({@link UdpBatchIo}): one system call
 * sends the queued burst, regrouped by peer, with each run of equal-length messages to one peer as one UDP GSO
 * super-datagram; one reads up to {@link UdpBatchIo#RX_BATCH} datagrams, a GRO-coalesced one handed up as the packets
 * it was made of. Every packet still travels as its own datagram on the wire.
 */
final class MmsgDatagramIo implements DatagramIo
{
    private final UdpBatchIo batch;
    private final int[] batchCount;
    private final int[] sendOrder;
    private final boolean[] taken;
    /** Where unsent messages wait while the queue is compacted after a partial send (rare: a full socket). */
    private final MemorySegment scratch;
    private final int[] scratchPeer;
    private final int[] scratchLength;

    MmsgDatagramIo(final UdpBatchIo batch, final int burst, final int maxMessageLength)
    {
        this.batch = batch;
        batchCount = new int[burst];
        sendOrder = new int[burst];
        taken = new boolean[burst];
        scratch = Arena.ofAuto().allocate((long)burst * maxMessageLength, 64);
        scratchPeer = new int[burst];
        scratchLength = new int[burst];
    }

    /**
     * One sendmmsg for the queued burst. The burst is regrouped by peer (the switch's results to its workers
     * alternate between them), keeping each peer's order, and each run of messages to one peer whose lengths are
     * equal (the last may be shorter) goes as one GSO super-datagram, which the kernel cuts back into those packets.
     * What the socket did not take stays queued, in order, for the next flush.
     */
    @Override
    public int send(final SendQueue queue, final UdpPeers peers)
    {
        final int head = queue.head;
        final int tail = queue.tail;
        if (head == tail)
        {
            queue.clear();
            return 0;
        }
        final int[] txPeer = queue.peer;
        final int[] txLength = queue.length;
        final long base = queue.memory.address();
        final int slotBytes = queue.slotBytes;
        int messages = 0;
        int iovec = 0;
        for (int i = head; i < tail; i++)
        {
            taken[i] = false;
        }
        for (int i = head; i < tail; i++)
        {
            if (taken[i])
            {
                continue;
            }
            final int peer = txPeer[i];
            final int length = txLength[i];
            taken[i] = true;
            sendOrder[iovec] = i;
            batch.setIovec(iovec, base + (long)i * slotBytes, length);
            int count = 1;
            int bytes = length;
            for (int j = i + 1; batch.gso() && j < tail && count < UdpBatchIo.MAX_GSO_SEGMENTS; j++)
            {
                if (taken[j] || txPeer[j] != peer)
                {
                    continue;
                }
                final int next = txLength[j];
                if (next > length || bytes + next > UdpBatchIo.MAX_GSO_BYTES)
                {
                    break; // the peer's next message starts the next run: its order is kept
                }
                taken[j] = true;
                sendOrder[iovec + count] = j;
                batch.setIovec(iovec + count, base + (long)j * slotBytes, next);
                bytes += next;
                count++;
                if (next < length)
                {
                    break; // only the last segment of a GSO datagram may be shorter
                }
            }
            batch.prepareSend(messages, peer, iovec, count, length);
            batchCount[messages] = count;
            messages++;
            iovec += count;
        }
        int sent = batch.send(messages);
        if (sent < 0 && -sent != UdpBatchIo.EAGAIN)
        {
            if (batch.gso() && batchCount[0] > 1)
            {
                batch.disableGso(); // a device that cannot segment (EIO): the same burst goes unsegmented next time
                sent = 0;
            }
            else
            {
                sent = 1; // an ICMP error from a peer that went away: that datagram is lost like any other
                peers.counters.add(TransportCounter.DROP_UNSENT, batchCount[0]);
            }
        }
        int packets = 0;
        for (int m = 0; m < Math.max(0, sent); m++)
        {
            packets += batchCount[m];
        }
        if (packets == tail - head)
        {
            queue.clear();
        }
        else if (packets > 0)
        {
            keepUnsent(queue, packets, iovec);
        }
        return packets;
    }

    /** Moves the messages at send positions {@code from..to-1} to the front of the queue, in that order. */
    private void keepUnsent(final SendQueue queue, final int from, final int to)
    {
        final int unsent = to - from;
        final int slotBytes = queue.slotBytes;
        for (int k = 0; k < unsent; k++)
        {
            final int q = sendOrder[from + k];
            MemorySegment.copy(queue.memory, (long)q * slotBytes, scratch, (long)k * slotBytes, queue.length[q]);
            scratchPeer[k] = queue.peer[q];
            scratchLength[k] = queue.length[q];
        }
        for (int k = 0; k < unsent; k++)
        {
            MemorySegment.copy(scratch, (long)k * slotBytes, queue.memory, (long)k * slotBytes, scratchLength[k]);
            queue.peer[k] = scratchPeer[k];
            queue.length[k] = scratchLength[k];
        }
        queue.head = 0;
        queue.tail = unsent;
    }

    /** One recvmmsg at a time; a GRO datagram is handed up as the packets it was coalesced from. */
    @Override
    public int receive(final UdpPeers peers, final MessageHandler handler, final int limit)
    {
        int received = 0;
        int datagramsRead = 0;
        while (received < limit && datagramsRead < limit)
        {
            final int datagrams = batch.receive(limit - received);
            if (datagrams <= 0)
            {
                break; // none queued, or an error reported for an earlier send: nothing was received
            }
            datagramsRead += datagrams;
            for (int d = 0; d < datagrams; d++)
            {
                final int peer = peers.onDatagramFrom(batch.receivedSenderKey(d));
                if (peer == PeerTable.NO_PORT)
                {
                    continue;
                }
                final int length = batch.receivedLength(d);
                final int segment = batch.receivedSegment(d);
                final long offset = UdpBatchIo.receivedOffset(d);
                for (int at = 0; at < length; at += segment)
                {
                    peers.counters.received(Math.min(segment, length - at));
                    handler.onMessage(batch.rxData, offset + at, Math.min(segment, length - at), peer);
                    received++;
                }
            }
            if (datagrams < UdpBatchIo.RX_BATCH)
            {
                break;
            }
        }
        return received;
    }

    @Override
    public void peerAdded(final int peer, final InetSocketAddress address)
    {
        batch.setPeer(peer, address);
    }

    @Override
    public String attachReusePortProgram(final ReusePortSteering program)
    {
        return batch.attachReusePortProgram(program);
    }

    @Override
    public String describe()
    {
        return "sendmmsg" + (batch.gso() ? " + UDP GSO" : " (no UDP GSO in this kernel)") + ", recvmmsg"
            + (batch.gro() ? " + UDP GRO" : " (no UDP GRO in this kernel)");
    }

    @Override
    public void close()
    {
        batch.close();
    }
}
