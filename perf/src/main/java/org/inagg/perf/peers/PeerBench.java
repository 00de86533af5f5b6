package org.inagg.perf.peers;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Runs each peer at each world size, one run at a time (the machine is shared by all ranks of one run and nothing
 * else of ours). A peer that is not installed is asked once and recorded as skipped with its reason at every world
 * size; one that fails at one size is recorded as failed there and still tried at the others.
 */
public final class PeerBench
{
    private final List<Peer> peers;

    public PeerBench(final List<Peer> peers)
    {
        this.peers = List.copyOf(peers);
    }

    /**
     * @param progress told each result as it comes (for a live report).
     */
    public List<PeerResult> run(final List<Integer> worldSizes, final int elements, final int iterations,
        final int warmup, final long timeoutS, final Path workDir, final Consumer<PeerResult> progress)
        throws InterruptedException
    {
        final List<PeerResult> results = new ArrayList<>();
        for (final int workers : worldSizes)
        {
            final PeerRun run = new PeerRun(workers, elements, iterations, warmup, timeoutS, workDir);
            for (final Peer peer : peers)
            {
                final String unavailable = peer.unavailableReason();
                PeerResult result;
                if (unavailable != null)
                {
                    result = PeerResult.skipped(peer.name(), workers, unavailable);
                }
                else
                {
                    try
                    {
                        result = peer.run(run);
                    }
                    catch (final RuntimeException ex)
                    {
                        result = PeerResult.failed(peer.name(), workers, String.valueOf(ex.getMessage()));
                    }
                }
                results.add(result);
                progress.accept(result);
            }
        }
        return results;
    }
}
