package org.inagg.services.agent;

/**
 * What a rank and the agent say to each other on the agent's Unix-domain socket. All integers little-endian.
 * <p>
 * A rank connects and sends one hello frame of {@link #HELLO_LENGTH} bytes:
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                 magic 'I' 'N' 'A' 'H' (HELLO_MAGIC)           |  0
 *  |                 protocol version (VERSION)                    |  4
 *  |                 global rank                                   |  8
 *  |                 world size                                    | 12
 *  |                 local rank                                    | 16
 *  |                 local world size                              | 20
 *  |                 host index (switch worker id)                 | 24
 *  |                 hosts                                         | 28
 *  |                 switch job id (hosts &gt; 1)                     | 32
 *  |                 pid                                           | 36
 *  |                 job key length (1..MAX_KEY_BYTES)             | 40
 *  |                 job key, UTF-8, zero padded                  ...| 44..251
 *  |                 collective timeout, ms (0: the agent's)       |252
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 * The collective timeout took the key's last 4 bytes without a version change: a rank that predates it sends zeros
 * there (its keys are far shorter), which means the agent's {@link HostAgentContext#collectiveTimeout()}. It bounds
 * how long the agent waits, from the first local rank's request of a round, for the job's other local ranks to ring;
 * past it the job fails with {@link #ERROR_COLLECTIVE_TIMEOUT} on every rank, naming the ranks that did not ring.
 * The agent answers with a reply frame of {@link #REPLY_LENGTH} bytes:
 * <pre>
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                 status (OK or an ERROR_* code)                |  0
 *  |                 agent's protocol version                      |  4
 *  |                 slot capacity in bytes (long)                 |  8
 *  |                                                               | 12
 *  |                 shared-memory path length                     | 16
 *  |                 message length                                | 20
 *  |                 shared-memory path, UTF-8 (PATH_BYTES)       ...| 24..223
 *  |                 message, UTF-8 (MESSAGE_BYTES)               ...| 224..511
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 * After an OK reply the socket carries one-byte doorbells only: {@link #DOORBELL_REQUEST} from the rank when it has
 * written a request into its slot descriptor ({@link SharedRegion}), {@link #DOORBELL_PROGRESS} from the rank when it
 * copied one more chunk of the round in (its descriptor's ready count; the agent sums no further than one chunk per
 * doorbell, {@link RequestDecoder#announcedReady}), {@link #DOORBELL_BYE} before it leaves,
 * {@link #DOORBELL_DONE} from the agent when more of the result is final (the descriptor's done count), and
 * {@link #DOORBELL_COMPLETE} from the agent when the slot descriptor holds the completion (result or error).
 */
public final class AgentProtocol
{
    /**
     * Bumped on any change of the frames or of {@link SharedRegion}'s layout. 4: the header's network chunk bytes,
     * which the ranks of a job spanning hosts compare across hosts with the slot capacity.
     */
    public static final int VERSION = 4;
    public static final int HELLO_MAGIC = 0x48414E49;
    public static final int HELLO_LENGTH = 256;
    public static final int HELLO_KEY_OFFSET = 44;
    public static final int HELLO_TIMEOUT_OFFSET = 252;
    public static final int MAX_KEY_BYTES = HELLO_TIMEOUT_OFFSET - HELLO_KEY_OFFSET;
    public static final int REPLY_LENGTH = 512;
    public static final int REPLY_PATH_OFFSET = 24;
    public static final int PATH_BYTES = 200;
    public static final int REPLY_MESSAGE_OFFSET = REPLY_PATH_OFFSET + PATH_BYTES;
    public static final int MESSAGE_BYTES = REPLY_LENGTH - REPLY_MESSAGE_OFFSET;

    public static final byte DOORBELL_REQUEST = 'R';
    public static final byte DOORBELL_BYE = 'B';
    public static final byte DOORBELL_COMPLETE = 'C';
    /** From a rank: its descriptor's ready count grew (it copied the next chunk of the round in). */
    public static final byte DOORBELL_PROGRESS = 'P';
    /** From the agent: the descriptor's done count grew (that much of the result may be copied out). */
    public static final byte DOORBELL_DONE = 'D';

    public static final int OP_SUM = 1;
    public static final int OP_AVG = 2;
    /**
     * Not a sum: every rank gives a byte range of the round (its descriptor's gather from and length), which the agent
     * copies into the result; int32 only ({@link SharedRegion}). All-gather and broadcast.
     */
    public static final int OP_GATHER = 3;
    /** Element-wise minimum ({@link InHostExtremes}): one host only until the switch stage carries MIN and MAX. */
    public static final int OP_MIN = 4;
    /** Element-wise maximum: as {@link #OP_MIN}. */
    public static final int OP_MAX = 5;
    public static final int DTYPE_FLOAT32 = 1;
    public static final int DTYPE_INT32 = 2;

    /** Most ranks of one job on one host. */
    public static final int MAX_LOCAL_RANKS = 256;
    /** Most ranks of one job. */
    public static final int MAX_WORLD_SIZE = 1 << 20;
    /** Most hosts of one job (switch workers). */
    public static final int MAX_HOSTS = 4096;

    public static final int OK = 0;
    /** A malformed frame or request. */
    public static final int ERROR_BAD_REQUEST = 1;
    /** Ranks asked to reduce tensors of different sizes in the same round. */
    public static final int ERROR_SIZE_MISMATCH = 2;
    /** NaN or infinity in a float tensor (or in the sum). */
    public static final int ERROR_NON_FINITE = 3;
    /** A rank of the job disconnected while others were in a collective. */
    public static final int ERROR_RANK_LEFT = 4;
    /** The agent serves another job on this name. */
    public static final int ERROR_JOB_MISMATCH = 5;
    /** The rank speaks another protocol version. */
    public static final int ERROR_VERSION = 6;
    /** Ranks disagree on rank, world size or local world size. */
    public static final int ERROR_WORLD_MISMATCH = 7;
    /** Not enough shared memory for the job's file. */
    public static final int ERROR_SHM_FULL = 8;
    /** The switch stage failed (timeout, unreachable switch). */
    public static final int ERROR_NETWORK = 9;
    /** Ranks asked for different ops or element types in the same round. */
    public static final int ERROR_OP_MISMATCH = 10;
    /** Local ranks did not ring for a round within the job's collective timeout after the first one did. */
    public static final int ERROR_COLLECTIVE_TIMEOUT = 11;

    private AgentProtocol()
    {
    }

    /** Bytes of one element of {@code dtype} (both are 4). */
    public static int elementBytes(final int dtype)
    {
        return 4;
    }
}
