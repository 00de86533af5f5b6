package org.inagg.services.agent;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Checks what a rank sent (its hello frame, {@link AgentProtocol}) or wrote (a request in its slot descriptor,
 * {@link SharedRegion}) before the agent acts on it. A rank is another process, possibly of another version or
 * broken: every field is range-checked, and anything wrong is an {@link AgentProtocolException} whose message names
 * the field and its value.
 */
public final class RequestDecoder
{
    private RequestDecoder()
    {
    }

    /** Decodes a hello frame of exactly {@link AgentProtocol#HELLO_LENGTH} bytes from {@code frame}'s position. */
    public static Hello decodeHello(final ByteBuffer frame)
    {
        if (frame.remaining() < AgentProtocol.HELLO_LENGTH)
        {
            throw bad("hello frame of " + frame.remaining() + " bytes, expected " + AgentProtocol.HELLO_LENGTH);
        }
        final ByteBuffer f = frame.slice(frame.position(), AgentProtocol.HELLO_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        final int magic = f.getInt(0);
        if (magic != AgentProtocol.HELLO_MAGIC)
        {
            throw bad(String.format("hello frame magic 0x%08x, expected 0x%08x: not an inagg rank",
                magic, AgentProtocol.HELLO_MAGIC));
        }
        final int version = f.getInt(4);
        if (version != AgentProtocol.VERSION)
        {
            throw new AgentProtocolException(AgentProtocol.ERROR_VERSION, "rank speaks agent protocol version "
                + version + " but this agent speaks " + AgentProtocol.VERSION
                + "; install inagg_torch and the agent from the same inagg release");
        }
        final int rank = f.getInt(8);
        final int worldSize = f.getInt(12);
        final int localRank = f.getInt(16);
        final int localWorldSize = f.getInt(20);
        final int hostIndex = f.getInt(24);
        final int hosts = f.getInt(28);
        final int switchJob = f.getInt(32);
        final int pid = f.getInt(36);
        final int keyLength = f.getInt(40);
        final int collectiveTimeoutMs = f.getInt(AgentProtocol.HELLO_TIMEOUT_OFFSET);
        if (worldSize < 1 || worldSize > AgentProtocol.MAX_WORLD_SIZE)
        {
            throw world("world size " + worldSize + " is not in 1.." + AgentProtocol.MAX_WORLD_SIZE);
        }
        if (rank < 0 || rank >= worldSize)
        {
            throw world("rank " + rank + " is not in 0.." + (worldSize - 1) + " (world size " + worldSize + ")");
        }
        if (localWorldSize < 1 || localWorldSize > Math.min(worldSize, AgentProtocol.MAX_LOCAL_RANKS))
        {
            throw world("local world size " + localWorldSize + " is not in 1.."
                + Math.min(worldSize, AgentProtocol.MAX_LOCAL_RANKS));
        }
        if (localRank < 0 || localRank >= localWorldSize)
        {
            throw world("local rank " + localRank + " is not in 0.." + (localWorldSize - 1));
        }
        if (hosts < 1 || hosts > Math.min(worldSize, AgentProtocol.MAX_HOSTS))
        {
            throw world("hosts " + hosts + " is not in 1.." + Math.min(worldSize, AgentProtocol.MAX_HOSTS));
        }
        if (hostIndex < 0 || hostIndex >= hosts)
        {
            throw world("host index " + hostIndex + " is not in 0.." + (hosts - 1));
        }
        if (hosts == 1 && localWorldSize != worldSize)
        {
            throw world("one host but local world size " + localWorldSize + " != world size " + worldSize);
        }
        if (hosts > 1 && (switchJob < 1 || switchJob > 0xFFFF))
        {
            throw bad("switch job id " + switchJob + " is not in 1..65535 (needed with " + hosts + " hosts)");
        }
        if (collectiveTimeoutMs < 0)
        {
            throw bad("collective timeout " + collectiveTimeoutMs + " ms is negative (0: the agent's default)");
        }
        if (keyLength < 1 || keyLength > AgentProtocol.MAX_KEY_BYTES)
        {
            throw bad("job key length " + keyLength + " is not in 1.." + AgentProtocol.MAX_KEY_BYTES);
        }
        final String key;
        try
        {
            key = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(f.slice(AgentProtocol.HELLO_KEY_OFFSET, keyLength)).toString();
        }
        catch (final CharacterCodingException ex)
        {
            throw bad("job key is not UTF-8");
        }
        for (int i = 0; i < key.length(); i++)
        {
            if (Character.isISOControl(key.charAt(i)))
            {
                throw bad("job key has a control character at " + i);
            }
        }
        return new Hello(version, rank, worldSize, localRank, localWorldSize, hostIndex, hosts, switchJob, pid, key,
            collectiveTimeoutMs);
    }

    /**
     * Decodes the request a rank wrote into its descriptor.
     *
     * @param descriptor       the rank's descriptor ({@link SharedRegion#DESCRIPTOR_LENGTH} bytes or more).
     * @param expectedSequence the sequence number this rank's next request must carry.
     * @param slotCapacity     bytes of the rank's data region.
     */
    public static CollectiveRequest decodeRequest(
        final MemorySegment descriptor, final long expectedSequence, final long slotCapacity)
    {
        if (descriptor.byteSize() < SharedRegion.COMPLETED_SEQUENCE)
        {
            throw bad("descriptor of " + descriptor.byteSize() + " bytes");
        }
        final long sequence = descriptor.get(SharedRegion.LONG, SharedRegion.REQUEST_SEQUENCE);
        final int op = descriptor.get(SharedRegion.INT, SharedRegion.REQUEST_OP);
        final int dtype = descriptor.get(SharedRegion.INT, SharedRegion.REQUEST_DTYPE);
        final long count = descriptor.get(SharedRegion.LONG, SharedRegion.REQUEST_COUNT);
        final long total = descriptor.get(SharedRegion.LONG, SharedRegion.REQUEST_TOTAL);
        final long gatherFrom = descriptor.get(SharedRegion.LONG, SharedRegion.REQUEST_GATHER_FROM);
        final long gatherLength = descriptor.get(SharedRegion.LONG, SharedRegion.REQUEST_GATHER_LENGTH);
        final long partElements = descriptor.get(SharedRegion.LONG, SharedRegion.REQUEST_PART_ELEMENTS);
        final int partRank = descriptor.get(SharedRegion.INT, SharedRegion.REQUEST_PART_RANK);
        if (sequence != expectedSequence)
        {
            throw bad("request sequence " + sequence + ", expected " + expectedSequence
                + " (a doorbell without a new request, or a request written twice)");
        }
        if (op < AgentProtocol.OP_SUM || op > AgentProtocol.OP_MAX)
        {
            throw bad("op " + op + " is none of SUM (" + AgentProtocol.OP_SUM + "), AVG (" + AgentProtocol.OP_AVG
                + "), GATHER (" + AgentProtocol.OP_GATHER + "), MIN (" + AgentProtocol.OP_MIN + "), MAX ("
                + AgentProtocol.OP_MAX + ")");
        }
        if (dtype != AgentProtocol.DTYPE_FLOAT32 && dtype != AgentProtocol.DTYPE_INT32)
        {
            throw bad("dtype " + dtype + " is neither float32 (" + AgentProtocol.DTYPE_FLOAT32 + ") nor int32 ("
                + AgentProtocol.DTYPE_INT32 + ")");
        }
        final long capacity = slotCapacity / AgentProtocol.elementBytes(dtype);
        if (count < 0 || count > capacity)
        {
            throw bad("element count " + count + " is not in 0.." + capacity + " (slot of " + slotCapacity
                + " bytes)");
        }
        if (total < count)
        {
            throw bad("collective total " + total + " is less than this round's count " + count);
        }
        if (op != AgentProtocol.OP_GATHER)
        {
            if (gatherFrom != 0 || gatherLength != 0)
            {
                throw bad("gather range " + gatherFrom + "+" + gatherLength + " in a sum (it must be 0+0)");
            }
        }
        else
        {
            if (dtype != AgentProtocol.DTYPE_INT32)
            {
                throw bad("GATHER of dtype " + dtype + ": a gather moves int32 words (" + AgentProtocol.DTYPE_INT32
                    + ")");
            }
            final long bytes = count * AgentProtocol.elementBytes(dtype);
            if (gatherFrom < 0 || gatherLength < 0 || gatherFrom > bytes || gatherLength > bytes - gatherFrom)
            {
                throw bad("gather range " + gatherFrom + "+" + gatherLength + " is not within the round's " + bytes
                    + " bytes");
            }
        }
        if (partElements < 0 || partElements > 0 && (count == 0 || count % partElements != 0) || partRank < 0
            || partElements == 0 && partRank != 0 || partRank > AgentProtocol.MAX_WORLD_SIZE)
        {
            throw bad("parts of " + partElements + " elements from rank " + partRank + " do not split the round's "
                + count + " elements (0 elements: no parts)");
        }
        return new CollectiveRequest(sequence, op, dtype, count, total, gatherFrom, gatherLength, partElements,
            partRank);
    }

    /**
     * Reads how much of {@code round} a rank has copied into its data region (its descriptor's ready count, rung with
     * the request and with each {@link AgentProtocol#DOORBELL_PROGRESS}).
     *
     * @param previous the count it said before (0 for the request itself): the count never shrinks.
     */
    public static long decodeReady(final MemorySegment descriptor, final CollectiveRequest round, final long previous)
    {
        if (descriptor.byteSize() < SharedRegion.READY_ELEMENTS + Long.BYTES)
        {
            throw bad("descriptor of " + descriptor.byteSize() + " bytes");
        }
        final long ready = descriptor.get(SharedRegion.LONG, SharedRegion.READY_ELEMENTS);
        if (ready < previous || ready > round.count())
        {
            throw bad("ready count " + ready + " of round #" + round.sequence() + " is not in " + previous + ".."
                + round.count() + " (it grows, up to the round's elements)");
        }
        if (ready != round.count() && round.op() != AgentProtocol.OP_SUM && round.op() != AgentProtocol.OP_AVG)
        {
            throw bad("ready count " + ready + " of round #" + round.sequence() + " with op " + round.op()
                + ": only SUM and AVG rounds are copied in chunks, the others whole (" + round.count() + ")");
        }
        return ready;
    }

    /**
     * How much of {@code round} its {@code bells}-th doorbell (the request is the first) announces: a chunked SUM or AVG
     * round rings once per chunk of {@code chunkElements} as it is copied in, any other round once, whole. The agent
     * sums no further than that, whatever the descriptor's ready count says already: on a weakly ordered CPU
     * (aarch64) a rank's count store can be seen before its data stores, as nothing orders them in Python, while its
     * doorbell is a system call that does (the count a doorbell announces covers data the agent can read).
     */
    public static long announcedReady(final CollectiveRequest round, final int chunkElements, final long bells)
    {
        if (chunkElements == 0 || round.op() != AgentProtocol.OP_SUM && round.op() != AgentProtocol.OP_AVG)
        {
            return round.count();
        }
        return Math.min(round.count(), chunkElements * bells);
    }

    private static AgentProtocolException bad(final String message)
    {
        return new AgentProtocolException(AgentProtocol.ERROR_BAD_REQUEST, message);
    }

    private static AgentProtocolException world(final String message)
    {
        return new AgentProtocolException(AgentProtocol.ERROR_WORLD_MISMATCH, message);
    }
}
