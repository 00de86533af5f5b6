package org.inagg.p4.esa.sim;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

import org.inagg.transport.MessageHandler;
import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;

/**
 * A star network in virtual time: node {@link #SWITCH} in the middle, every other node on its own full-duplex link to
 * it. A message from a host waits for its uplink, is serialized at the link rate and arrives after the propagation
 * delay; the switch's messages do the same on the downlink of their destination. Host-to-host messages (the server's
 * results) cross the switch as plain forwarding, without entering its pipeline. Each hop may drop or duplicate a
 * message (seeded, so runs repeat exactly). Peers are node indices. One thread; events in time order, ties in
 * insertion order.
 */
public final class VirtualNetwork
{
    public static final int SWITCH = 0;
    /** Ethernet, IPv4, UDP headers plus preamble, inter-frame gap and FCS. */
    public static final int FRAME_OVERHEAD = InaggHeader.L2_L4_HEADERS_LENGTH + 24;

    private final MessageHandler[] handlers;
    private final long[] uplinkFreeAt;
    private final long[] downlinkFreeAt;
    private final boolean[] lossless;
    private final double nsPerByte;
    private final long propagationNs;
    private final double dropProbability;
    private final double duplicateProbability;
    private final SplittableRandom random;
    private final PriorityQueue<Event> events = new PriorityQueue<>();
    private final int maxMessageLength;
    private long now;
    private long order;
    private long deliveredMessages;
    private long dropped;
    private long duplicated;

    private record Event(long time, long order, int kind, int node, int from, byte[] bytes, Runnable action)
        implements Comparable<Event>
    {
        @Override
        public int compareTo(final Event o)
        {
            return time != o.time ? Long.compare(time, o.time) : Long.compare(order, o.order);
        }
    }

    private static final int DELIVER = 0;
    private static final int FORWARD = 1;
    private static final int ACTION = 2;

    /**
     * @param nodes                nodes, the switch included.
     * @param gbps                 link rate.
     * @param propagationNs        one-way delay of a link.
     * @param dropProbability      chance a hop loses a message.
     * @param duplicateProbability chance a hop delivers a message twice.
     * @param seed                 of the loss and duplication draws.
     */
    public VirtualNetwork(final int nodes, final double gbps, final long propagationNs, final double dropProbability,
        final double duplicateProbability, final long seed, final int maxMessageLength)
    {
        this.handlers = new MessageHandler[nodes];
        this.uplinkFreeAt = new long[nodes];
        this.downlinkFreeAt = new long[nodes];
        this.lossless = new boolean[nodes];
        this.nsPerByte = 8.0 / gbps;
        this.propagationNs = propagationNs;
        this.dropProbability = dropProbability;
        this.duplicateProbability = duplicateProbability;
        this.random = new SplittableRandom(seed);
        this.maxMessageLength = maxMessageLength;
    }

    public long now()
    {
        return now;
    }

    public long deliveredMessages()
    {
        return deliveredMessages;
    }

    public long dropped()
    {
        return dropped;
    }

    public long duplicated()
    {
        return duplicated;
    }

    /** Makes {@code node}'s link (both ways) lossless: no drops, no duplicates, as a PFC class would. */
    public void setLossless(final int node)
    {
        lossless[node] = true;
    }

    /** Who receives the messages sent to {@code node}. */
    public void attach(final int node, final MessageHandler handler)
    {
        handlers[node] = handler;
    }

    /** A transport sending from {@code node}. Its poll does nothing: the network pushes messages to the handler. */
    public Transport transport(final int node)
    {
        return new NodeTransport(node);
    }

    /** Runs {@code action} at virtual time {@code at}. */
    public void schedule(final long at, final Runnable action)
    {
        events.add(new Event(Math.max(at, now), order++, ACTION, 0, 0, null, action));
    }

    /** Processes events until none is left or the clock passes {@code untilNs}; returns whether events remain. */
    public boolean run(final long untilNs)
    {
        Event e;
        while ((e = events.peek()) != null && e.time <= untilNs)
        {
            events.poll();
            now = e.time;
            switch (e.kind)
            {
                case DELIVER ->
                {
                    deliveredMessages++;
                    handlers[e.node].onMessage(MemorySegment.ofArray(e.bytes), 0, e.bytes.length, e.from);
                }
                case FORWARD -> hop(e.from, e.node, e.bytes, false);
                default -> e.action.run();
            }
        }
        return !events.isEmpty();
    }

    void send(final int from, final int to, final byte[] bytes)
    {
        hop(from, to, bytes, from != SWITCH && to != SWITCH);
    }

    /** One link crossing: the uplink of a host, or the switch's downlink to {@code to}. */
    private void hop(final int from, final int to, final byte[] bytes, final boolean forwardAfter)
    {
        final long serialization = (long)Math.ceil((bytes.length + FRAME_OVERHEAD) * nsPerByte);
        final long sentAt;
        final int host;
        if (from == SWITCH || (!forwardAfter && to != SWITCH))
        {
            sentAt = Math.max(now, downlinkFreeAt[to]) + serialization;
            downlinkFreeAt[to] = sentAt;
            host = to;
        }
        else
        {
            sentAt = Math.max(now, uplinkFreeAt[from]) + serialization;
            uplinkFreeAt[from] = sentAt;
            host = from;
        }
        if (lossless[host])
        {
            events.add(new Event(sentAt + propagationNs, order++, forwardAfter ? FORWARD : DELIVER, to, from, bytes,
                null));
            return;
        }
        if (dropProbability > 0 && random.nextDouble() < dropProbability)
        {
            dropped++;
            return;
        }
        final int copies = duplicateProbability > 0 && random.nextDouble() < duplicateProbability ? 2 : 1;
        duplicated += copies - 1;
        for (int c = 0; c < copies; c++)
        {
            final long at = sentAt + propagationNs + c * serialization;
            if (forwardAfter)
            {
                events.add(new Event(at, order++, FORWARD, to, from, bytes, null));
            }
            else
            {
                events.add(new Event(at, order++, DELIVER, to, from, bytes, null));
            }
        }
    }

    /** Claim writes into scratch memory; commit copies the message into the network. */
    private final class NodeTransport implements Transport
    {
        private final int self;
        private final MemorySegment scratch = Arena.ofAuto().allocate(maxMessageLength);
        private int claimedPeer = -1;
        private int claimedLength;

        NodeTransport(final int self)
        {
            this.self = self;
        }

        @Override
        public int maxMessageLength()
        {
            return maxMessageLength;
        }

        @Override
        public MemorySegment txMemory()
        {
            return scratch;
        }

        @Override
        public long claim(final int peer, final int length)
        {
            if (peer < 0 || peer >= handlers.length || length > maxMessageLength)
            {
                return CLAIM_FAILED;
            }
            claimedPeer = peer;
            claimedLength = length;
            return 0;
        }

        @Override
        public void commit()
        {
            send(self, claimedPeer, scratch.asSlice(0, claimedLength).toArray(ValueLayout.JAVA_BYTE));
            claimedPeer = -1;
        }

        @Override
        public void abort()
        {
            claimedPeer = -1;
        }

        @Override
        public int flush()
        {
            return 0;
        }

        @Override
        public int poll(final MessageHandler handler, final int limit)
        {
            return 0;
        }

        @Override
        public String describePeer(final int peer)
        {
            return "virtual node " + peer;
        }

        @Override
        public void close()
        {
        }
    }
}
