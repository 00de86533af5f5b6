package org.inagg.perf.peers;

import java.util.List;

/**
 * A {@link Placement} on a two-level fabric: hosts under leaf switches, leaves under one spine. {@link #switchExec()}
 * and {@link #switchAddress()} are the spine's (where a one-level switch or a parameter server runs); each leaf has a
 * place and an address of its own for a first-level switch.
 */
public interface FabricPlacement extends Placement
{
    int leaves();

    /** The leaf (1-based) rank {@code rank}'s host hangs under. */
    int leafOf(int rank);

    /** The prefix that runs a command in leaf {@code leaf}'s place. */
    List<String> leafExec(int leaf);

    /** The IPv4 address a first-level switch binds in leaf {@code leaf}. */
    String leafAddress(int leaf);

    /** Each host link's rate, bits per second. */
    double hostBitsPerSecond();

    /** Each leaf-to-spine link's rate, bits per second. */
    double uplinkBitsPerSecond();

    /** The most hosts under one leaf. */
    default int mostHostsPerLeaf(final int ranks)
    {
        final int[] count = new int[leaves() + 1];
        int most = 0;
        for (int rank = 0; rank < ranks; rank++)
        {
            most = Math.max(most, ++count[leafOf(rank)]);
        }
        return most;
    }
}
