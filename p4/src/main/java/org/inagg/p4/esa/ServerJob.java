package org.inagg.p4.esa;

import java.util.Arrays;

import org.inagg.p4.membership.JobMembership;
import org.inagg.p4.pipeline.NodeJob;
import org.inagg.wire.InaggHeader;

/**
 * A job of the parameter server and its block table, one entry per slot and shadow copy ({@code 2 * slot + copy}), as
 * the switch's {@code SlotPool}: an entry holds the blocks of one copy of one slot, round after round, and a newer
 * round comes only once every worker had the previous result of that copy. The table starts at {@code capacity}
 * entries and grows (to a power of two, at most {@code 2 * MAX_SLOTS}) when a higher slot is first used; a new
 * session frees every entry (and keeps them for reuse).
 */
final class ServerJob extends NodeJob
{
    final ServerJobConfig config;
    final int[] peers;
    ServerBlock[] table;
    int open;

    ServerJob(final ServerJobConfig config, final int capacity)
    {
        super(new JobMembership(config.jobId(), config.workers(), config.workerPeers(), config.joinCredentials(), 0,
            true));
        this.config = config;
        this.peers = config.workerPeers();
        this.table = new ServerBlock[capacity];
    }

    /** The entry of the message's slot and shadow copy, allocated on first use. */
    ServerBlock entry(final int slotField, final int lanes)
    {
        final int i = ((slotField & (InaggHeader.MAX_SLOTS - 1)) << 1) | (slotField >>> 15);
        if (i >= table.length)
        {
            table = Arrays.copyOf(table, Integer.highestOneBit(i) << 1);
        }
        ServerBlock block = table[i];
        if (block == null)
        {
            block = new ServerBlock(EsaWire.bitmapWords(config.workers()), lanes);
            table[i] = block;
        }
        return block;
    }

    /** Forgets every block: a new session of the job starts afresh. */
    void reset()
    {
        for (final ServerBlock block : table)
        {
            if (block != null)
            {
                block.state = ServerBlock.FREE;
            }
        }
        open = 0;
    }

    /** Only jobs whose workers send to the server directly answer JOINs. */
    @Override
    public boolean serves(final int worker)
    {
        return config.answersJoins() && super.serves(worker);
    }

    @Override
    public int joinSlots()
    {
        return config.joinSlots();
    }

    @Override
    public int joinLanes()
    {
        return config.joinLanes();
    }

    @Override
    public String describe()
    {
        return config.toString();
    }
}
