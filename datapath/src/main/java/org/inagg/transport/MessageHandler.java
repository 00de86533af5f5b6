package org.inagg.transport;

import java.lang.foreign.MemorySegment;

/** Receives the messages a {@link Transport} polls. */
@FunctionalInterface
public interface MessageHandler
{
    /**
     * @param memory memory holding the message, valid only during the call.
     * @param offset offset of the inagg header in {@code memory}.
     * @param length length of the message in bytes (header and lanes); not yet validated.
     * @param peer   the sender.
     */
    void onMessage(MemorySegment memory, long offset, int length, int peer);
}
