package org.inagg.agent.counters;

import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import org.agrona.concurrent.status.CountersReader;

/**
 * The layout of a counters file, version 1: a header, then Agrona's counters metadata and values buffers.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                  magic: the ASCII bytes INAGGCTR              |     0
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |          layout version (1), written last, with release       |     8
 *  +---------------------------------------------------------------+
 *  |                  header length (1024 bytes)                   |    12
 *  +---------------------------------------------------------------+
 *  |                      process id (64 bits)                     |    16
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |       process start time, ms since the epoch (64 bits)        |    24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |        metadata buffer length (counters x 512 bytes)          |    32
 *  +---------------------------------------------------------------+
 *  |          values buffer length (counters x 128 bytes)          |    36
 *  +---------------------------------------------------------------+
 *  |                   role length (r &lt;= 32)                      |    40
 *  +---------------------------------------------------------------+
 *  |       role, r bytes of ASCII: switch, worker, ps, local ...   |    44
 *  ...                        (32 bytes)                         ...
 *  +---------------------------------------------------------------+
 *  |                   name length (n &lt;= 944)                     |    76
 *  +---------------------------------------------------------------+
 *  |   name, n bytes of UTF-8: what the process serves, e.g.       |    80
 *  ...      "switch udp://0.0.0.0:9000 jobs 1:4"                  ...
 *  +---------------------------------------------------------------+
 *  |   metadata buffer: Agrona CountersManager records of 512      |  1024
 *  |   bytes (state, type id, free-for-reuse deadline, key of      |
 *  ...  112 bytes (a CounterKey), label of up to 380 bytes)       ...
 *  +---------------------------------------------------------------+
 *  |   values buffer: records of 128 bytes (the 64-bit value,      |  1024 + metadata length
 *  ...  registration, owner and reference ids, padding)           ...
 *  +---------------------------------------------------------------+
 * </pre>
 * Integers are in the machine's byte order (little-endian on x86 and aarch64), as Agrona writes the buffers; the file
 * is read on the machine that wrote it. A reader that finds version 0 met a file still being created.
 */
public final class CountersLayout
{
    public static final int VERSION = 1;
    public static final int HEADER_LENGTH = 1024;
    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 8;
    public static final int HEADER_LENGTH_OFFSET = 12;
    public static final int PID_OFFSET = 16;
    public static final int START_TIME_OFFSET = 24;
    public static final int METADATA_LENGTH_OFFSET = 32;
    public static final int VALUES_LENGTH_OFFSET = 36;
    public static final int ROLE_LENGTH_OFFSET = 40;
    public static final int ROLE_OFFSET = 44;
    public static final int MAX_ROLE_LENGTH = 32;
    public static final int NAME_LENGTH_OFFSET = 76;
    public static final int NAME_OFFSET = 80;
    public static final int MAX_NAME_LENGTH = HEADER_LENGTH - NAME_OFFSET;
    /** The magic as the 64-bit value read in the native order. */
    public static final long MAGIC = java.nio.ByteBuffer.wrap("INAGGCTR".getBytes(StandardCharsets.US_ASCII))
        .order(ByteOrder.nativeOrder()).getLong();
    /** The suffix of counters files: {@code <role>-<pid>.counters}. */
    public static final String FILE_SUFFIX = ".counters";

    private CountersLayout()
    {
    }

    /** File length for {@code capacity} counters. */
    public static long fileLength(final int capacity)
    {
        return HEADER_LENGTH + (long)capacity * (CountersReader.METADATA_LENGTH + CountersReader.COUNTER_LENGTH);
    }
}
