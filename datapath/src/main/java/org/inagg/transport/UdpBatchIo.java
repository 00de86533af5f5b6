package org.inagg.transport;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Batched datagram I/O on a UDP socket's file descriptor through FFM (Linux x86-64 and aarch64): one
 * {@code sendmmsg(2)} sends a whole burst, with runs of equal-length messages to one peer handed to the kernel as one
 * UDP GSO super-datagram ({@code UDP_SEGMENT}: the stack is walked once per run, not once per packet); one
 * {@code recvmmsg(2)} reads up to {@link #RX_BATCH} datagrams, each possibly several packets that the kernel coalesced
 * ({@code UDP_GRO}), which {@link MmsgDatagramIo} hands up one packet at a time. Every packet still travels as its own
 * datagram on the wire.
 * <p>
 * Where the kernel lacks GSO or GRO, the batch calls are used without them; where FFM or the calls are unavailable,
 * {@link #open} says why and the transport keeps the JDK's one-datagram-per-call path. All native memory is allocated
 * once; the per-packet path neither allocates nor throws.
 * <h2>Native layouts (LP64 Linux)</h2>
 * <pre>
 *  struct mmsghdr (64 bytes)                      struct cmsghdr + payload (24 bytes)
 *  0  msg_name        void*   -> sockaddr_in      0  cmsg_len    size_t  (18 for u16, 20 for int)
 *  8  msg_namelen     u32 (16)                    8  cmsg_level  int     (SOL_UDP = 17)
 *  16 msg_iov         iovec*                      12 cmsg_type   int     (UDP_SEGMENT 103 / UDP_GRO 104)
 *  24 msg_iovlen      size_t                      16 data        u16 segment size / int segment size
 *  32 msg_control     void*
 *  40 msg_controllen  size_t                      struct sockaddr_in (16 bytes)
 *  48 msg_flags       int                         0 family u16 (AF_INET = 2), 2 port u16 big-endian,
 *  56 msg_len         u32 (bytes sent/received)   4 addr u32 big-endian, 8 zero[8]
 *  struct iovec (16 bytes): 0 iov_base void*, 8 iov_len size_t
 * </pre>
 */
final class UdpBatchIo
{
    /** Datagrams (GRO super-datagrams included) read by one recvmmsg. */
    static final int RX_BATCH = 16;
    /** Largest datagram the kernel may hand up, GRO-coalesced ones included. */
    static final int RX_DATAGRAM_BYTES = 65536;
    static final int MMSGHDR_BYTES = 64;
    static final int IOVEC_BYTES = 16;
    static final int SOCKADDR_BYTES = 16;
    static final int CMSG_SPACE_BYTES = 24;
    /** The kernel's UDP_MAX_SEGMENTS. */
    static final int MAX_GSO_SEGMENTS = 64;
    /** Largest GSO super-datagram payload (IPv4 total length 65,535 less IP and UDP headers). */
    static final int MAX_GSO_BYTES = 65_507;

    private static final int AF_INET = 2;
    private static final int SOL_SOCKET = 1;
    private static final int SO_TYPE = 3;
    private static final int SOCK_DGRAM = 2;
    private static final int SOL_UDP = 17;
    private static final int UDP_SEGMENT = 103;
    private static final int UDP_GRO = 104;
    private static final int SO_ATTACH_REUSEPORT_CBPF = 51;
    /** struct sock_filter: u16 code, u8 jt, u8 jf, u32 k. */
    private static final int SOCK_FILTER_BYTES = 8;
    /** struct sock_fprog: u16 len, (padding), struct sock_filter *filter. */
    private static final int SOCK_FPROG_BYTES = 16;
    /**
     * The sockets of the live instances, by inode ({@code socket:[N]}, unique while a socket is open, unlike its
     * descriptor's number, which a closed socket hands to the next): a socket that shares its address with others
     * (SO_REUSEPORT) is told from them by being the one no instance holds yet, as a group's sockets are opened one
     * after another.
     */
    private static final Set<String> CLAIMED = ConcurrentHashMap.newKeySet();
    /** What {@link #findSocket} finds where no unheld socket is bound to the address, or several are. */
    private static final Found NOT_FOUND = new Found(-1, "");
    private static final Found AMBIGUOUS = new Found(-2, "");
    private static final int MSG_DONTWAIT = 0x40;
    static final int EAGAIN = 11;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MemoryLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle SENDMMSG;
    /** sendmmsg without errno: the JDK slices the capture segment on each call, an allocation unless C2 inlines it. */
    private static final MethodHandle SENDMMSG_QUICK;
    private static final MethodHandle RECVMMSG;
    private static final MethodHandle SETSOCKOPT;
    private static final MethodHandle GETSOCKOPT;
    private static final MethodHandle GETSOCKNAME;
    private static final String UNAVAILABLE;

    static
    {
        MethodHandle send = null;
        MethodHandle sendQuick = null;
        MethodHandle recv = null;
        MethodHandle set = null;
        MethodHandle get = null;
        MethodHandle name = null;
        String unavailable = null;
        try
        {
            final String os = System.getProperty("os.name", "");
            final String arch = System.getProperty("os.arch", "");
            if (!os.startsWith("Linux") || !(arch.equals("amd64") || arch.equals("x86_64") || arch.equals("aarch64")))
            {
                unavailable = "sendmmsg/recvmmsg are used on 64-bit Linux only (this is " + os + " " + arch + ")";
            }
            else
            {
                final SymbolLookup libc = LINKER.defaultLookup();
                final Linker.Option errno = Linker.Option.captureCallState("errno");
                final FunctionDescriptor sendmmsg = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                    ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT);
                send = LINKER.downcallHandle(libc.find("sendmmsg").orElseThrow(), sendmmsg, errno);
                sendQuick = LINKER.downcallHandle(libc.find("sendmmsg").orElseThrow(), sendmmsg);
                recv = LINKER.downcallHandle(libc.find("recvmmsg").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                    ValueLayout.ADDRESS));
                set = LINKER.downcallHandle(libc.find("setsockopt").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                    ValueLayout.JAVA_INT), errno);
                get = LINKER.downcallHandle(libc.find("getsockopt").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                    ValueLayout.ADDRESS));
                name = LINKER.downcallHandle(libc.find("getsockname").orElseThrow(), FunctionDescriptor.of(
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
            }
        }
        catch (final RuntimeException | LinkageError ex)
        {
            unavailable = "cannot link sendmmsg/recvmmsg through FFM: " + ex;
        }
        SENDMMSG = send;
        SENDMMSG_QUICK = sendQuick;
        RECVMMSG = recv;
        SETSOCKOPT = set;
        GETSOCKOPT = get;
        GETSOCKNAME = name;
        UNAVAILABLE = unavailable;
    }

    private final int fd;
    private final String inode;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment callState = arena.allocate(CALL_STATE);
    private final MemorySegment txHeaders;
    private final MemorySegment txIovecs;
    private final MemorySegment txControls;
    private final MemorySegment rxHeaders;
    private final MemorySegment rxIovecs;
    private final MemorySegment rxNames;
    private final MemorySegment rxControls;
    final MemorySegment rxData;
    private MemorySegment peerNames;
    private boolean gso;
    private final boolean gro;

    private UdpBatchIo(final int fd, final String inode, final int burst, final int maxPeers)
    {
        this.fd = fd;
        this.inode = inode;
        try
        {
            txHeaders = arena.allocate((long)burst * MMSGHDR_BYTES, 8);
            txIovecs = arena.allocate((long)burst * IOVEC_BYTES, 8);
            txControls = arena.allocate((long)burst * CMSG_SPACE_BYTES, 8);
            rxHeaders = arena.allocate((long)RX_BATCH * MMSGHDR_BYTES, 8);
            rxIovecs = arena.allocate((long)RX_BATCH * IOVEC_BYTES, 8);
            rxNames = arena.allocate((long)RX_BATCH * SOCKADDR_BYTES, 8);
            rxControls = arena.allocate((long)RX_BATCH * CMSG_SPACE_BYTES, 8);
            rxData = arena.allocate((long)RX_BATCH * RX_DATAGRAM_BYTES, 64);
            peerNames = arena.allocate((long)Math.max(1, Math.min(maxPeers, 64)) * SOCKADDR_BYTES, 8);
            for (int i = 0; i < RX_BATCH; i++)
            {
                final long h = (long)i * MMSGHDR_BYTES;
                rxIovecs.set(ValueLayout.ADDRESS, (long)i * IOVEC_BYTES, rxData.asSlice((long)i * RX_DATAGRAM_BYTES));
                rxIovecs.set(ValueLayout.JAVA_LONG, (long)i * IOVEC_BYTES + 8, RX_DATAGRAM_BYTES);
                rxHeaders.set(ValueLayout.ADDRESS, h, rxNames.asSlice((long)i * SOCKADDR_BYTES));
                rxHeaders.set(ValueLayout.ADDRESS, h + 16, rxIovecs.asSlice((long)i * IOVEC_BYTES));
                rxHeaders.set(ValueLayout.JAVA_LONG, h + 24, 1);
                rxHeaders.set(ValueLayout.ADDRESS, h + 32, rxControls.asSlice((long)i * CMSG_SPACE_BYTES));
            }
            gso = probeGso();
            gro = setIntOption(SOL_UDP, UDP_GRO, 1);
        }
        catch (final RuntimeException | Error ex)
        {
            // Native memory is not the garbage collector's: a constructor that fails frees what it allocated.
            arena.close();
            throw ex;
        }
    }

    /**
     * Batch I/O on the socket bound to {@code local}, found among this process's descriptors.
     *
     * @param why receives the reason when null is returned.
     * @return null when batch I/O cannot be used here.
     */
    static UdpBatchIo open(final InetSocketAddress local, final int burst, final int maxPeers, final StringBuilder why)
    {
        if (UNAVAILABLE != null)
        {
            why.append(UNAVAILABLE);
            return null;
        }
        if (!(local.getAddress() instanceof Inet4Address))
        {
            why.append("batch I/O handles IPv4 sockets only");
            return null;
        }
        synchronized (CLAIMED)
        {
            Found socket = findSocket(local);
            if (socket == NOT_FOUND)
            {
                // Once more: listing /proc/self/fd can fail for a moment (a descriptor limit reached by other threads).
                socket = findSocket(local);
            }
            if (socket == AMBIGUOUS)
            {
                why.append("more than one socket bound to ").append(local).append(" is not yet in use: cannot tell "
                    + "which is this one's");
                return null;
            }
            if (socket == NOT_FOUND)
            {
                why.append("cannot find the descriptor of the socket bound to ").append(local)
                    .append(" in /proc/self/fd");
                return null;
            }
            final UdpBatchIo io = new UdpBatchIo(socket.fd(), socket.inode(), burst, maxPeers);
            CLAIMED.add(socket.inode());
            return io;
        }
    }

    /** A socket's descriptor and inode ({@code socket:[N]}). */
    private record Found(int fd, String inode)
    {
    }

    /**
     * The datagram socket bound to {@code local} that no instance holds (the JDK does not hand its descriptors out);
     * {@link #NOT_FOUND} when there is none, {@link #AMBIGUOUS} when there are several.
     */
    private static Found findSocket(final InetSocketAddress local)
    {
        Found found = NOT_FOUND;
        try (Arena scratch = Arena.ofConfined(); var entries = Files.list(Path.of("/proc/self/fd")))
        {
            final MemorySegment address = scratch.allocate(SOCKADDR_BYTES, 8);
            final MemorySegment length = scratch.allocate(ValueLayout.JAVA_INT);
            final MemorySegment type = scratch.allocate(ValueLayout.JAVA_INT);
            for (final Path entry : entries.toList())
            {
                final int fd;
                final String inode;
                try
                {
                    fd = Integer.parseInt(entry.getFileName().toString());
                    inode = Files.readSymbolicLink(entry).toString();
                    if (!inode.startsWith("socket:"))
                    {
                        continue;
                    }
                }
                catch (final NumberFormatException | IOException ex)
                {
                    continue;
                }
                length.set(ValueLayout.JAVA_INT, 0, SOCKADDR_BYTES);
                type.set(ValueLayout.JAVA_INT, 0, 0);
                final MemorySegment typeLength = scratch.allocate(ValueLayout.JAVA_INT);
                typeLength.set(ValueLayout.JAVA_INT, 0, Integer.BYTES);
                if ((int)GETSOCKOPT.invokeExact(fd, SOL_SOCKET, SO_TYPE, type, typeLength) != 0
                    || type.get(ValueLayout.JAVA_INT, 0) != SOCK_DGRAM
                    || (int)GETSOCKNAME.invokeExact(fd, address, length) != 0
                    || address.get(ValueLayout.JAVA_SHORT, 0) != AF_INET)
                {
                    continue;
                }
                final int port = Short.toUnsignedInt(Short.reverseBytes(address.get(ValueLayout.JAVA_SHORT, 2)));
                final byte[] ip = new byte[4];
                MemorySegment.copy(address, ValueLayout.JAVA_BYTE, 4, ip, 0, 4);
                if (port == local.getPort() && java.util.Arrays.equals(ip, local.getAddress().getAddress())
                    && !CLAIMED.contains(inode) && sameSocket(entry, inode))
                {
                    if (found != NOT_FOUND)
                    {
                        return AMBIGUOUS;
                    }
                    found = new Found(fd, inode);
                }
            }
            return found;
        }
        catch (final Throwable ex)
        {
            return NOT_FOUND;
        }
    }

    /**
     * Whether {@code entry} still names socket {@code inode}: another thread may close its socket while the options
     * were read and a new socket take its descriptor number at once, so the address read may be the new socket's.
     */
    private static boolean sameSocket(final Path entry, final String inode)
    {
        try
        {
            return Files.readSymbolicLink(entry).toString().equals(inode);
        }
        catch (final IOException ex)
        {
            return false;
        }
    }

    /** Whether UDP GSO is in use (runs of equal packets sent as one super-datagram). */
    boolean gso()
    {
        return gso;
    }

    /** Whether UDP GRO is on (the kernel may hand up several packets of one sender as one datagram). */
    boolean gro()
    {
        return gro;
    }

    /** Records the address of peer {@code peer} for sends (called when a peer is registered, not per packet). */
    void setPeer(final int peer, final InetSocketAddress address)
    {
        final long needed = (long)(peer + 1) * SOCKADDR_BYTES;
        if (needed > peerNames.byteSize())
        {
            final MemorySegment grown = arena.allocate(Math.max(needed, peerNames.byteSize() * 2), 8);
            grown.copyFrom(peerNames);
            peerNames = grown;
        }
        writeSockaddr(peerNames, (long)peer * SOCKADDR_BYTES, address);
    }

    /**
     * Prepares message {@code index} of a send batch: {@code count} packets of {@code segment} bytes (the last may be
     * shorter) at consecutive iovecs starting at {@code firstIovec}, to {@code peer}.
     */
    void prepareSend(final int index, final int peer, final int firstIovec, final int count, final int segment)
    {
        final long h = (long)index * MMSGHDR_BYTES;
        // Addresses as plain longs (64-bit Linux only, as above), not asSlice(...): a slice is an object, which C2's
        // escape analysis removes only while the method is compiled as it likes; after a recompilation the UDP agent
        // threads allocated a few hundred bytes now and then in steady state (found by PerPacketAllocationTest
        // requiring every window, and a JFR trace of the agent threads).
        txHeaders.set(ValueLayout.JAVA_LONG, h, peerNames.address() + (long)peer * SOCKADDR_BYTES);
        txHeaders.set(ValueLayout.JAVA_INT, h + 8, SOCKADDR_BYTES);
        txHeaders.set(ValueLayout.JAVA_LONG, h + 16, txIovecs.address() + (long)firstIovec * IOVEC_BYTES);
        txHeaders.set(ValueLayout.JAVA_LONG, h + 24, count);
        if (count > 1)
        {
            final long c = (long)index * CMSG_SPACE_BYTES;
            txControls.set(ValueLayout.JAVA_LONG, c, 18);
            txControls.set(ValueLayout.JAVA_INT, c + 8, SOL_UDP);
            txControls.set(ValueLayout.JAVA_INT, c + 12, UDP_SEGMENT);
            txControls.set(ValueLayout.JAVA_SHORT, c + 16, (short)segment);
            txHeaders.set(ValueLayout.JAVA_LONG, h + 32, txControls.address() + c);
            txHeaders.set(ValueLayout.JAVA_LONG, h + 40, CMSG_SPACE_BYTES);
        }
        else
        {
            txHeaders.set(ValueLayout.ADDRESS, h + 32, MemorySegment.NULL);
            txHeaders.set(ValueLayout.JAVA_LONG, h + 40, 0);
        }
        txHeaders.set(ValueLayout.JAVA_INT, h + 48, 0);
    }

    /** Points iovec {@code index} at {@code length} bytes at {@code address}. */
    void setIovec(final int index, final long address, final int length)
    {
        txIovecs.set(ValueLayout.JAVA_LONG, (long)index * IOVEC_BYTES, address);
        txIovecs.set(ValueLayout.JAVA_LONG, (long)index * IOVEC_BYTES + 8, length);
    }

    /**
     * Sends the first {@code messages} prepared messages.
     *
     * @return how many were sent, or minus errno.
     */
    int send(final int messages)
    {
        try
        {
            // Without errno first: capturing it costs an allocation per call wherever C2 does not inline the JDK's
            // capture check, and a send sits deep in the switch's receive path (claim -> flush), past MaxInlineLevel
            // (PerPacketAllocationTest saw 5-14 KB per 10,240 packets in some JIT runs). sendmmsg fails only when its
            // first message does, so nothing was sent: the same call again, capturing errno, says why.
            final int sent = (int)SENDMMSG_QUICK.invokeExact(fd, txHeaders, messages, 0);
            if (sent >= 0)
            {
                return sent;
            }
            final int again = (int)SENDMMSG.invokeExact(callState, fd, txHeaders, messages, 0);
            return again >= 0 ? again : -(int)ERRNO.get(callState, 0L);
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("sendmmsg failed: " + ex, ex);
        }
    }

    /** Turns GSO off for good (a device that cannot segment answered EIO). */
    void disableGso()
    {
        gso = false;
    }

    /**
     * Reads up to {@code limit} (at most {@link #RX_BATCH}) datagrams without waiting.
     *
     * @return how many, 0 when none is queued (or the call failed: see below).
     */
    int receive(final int limit)
    {
        final int n = Math.min(limit, RX_BATCH);
        for (int i = 0; i < n; i++)
        {
            final long h = (long)i * MMSGHDR_BYTES;
            rxHeaders.set(ValueLayout.JAVA_INT, h + 8, SOCKADDR_BYTES);
            rxHeaders.set(ValueLayout.JAVA_LONG, h + 40, CMSG_SPACE_BYTES);
            rxHeaders.set(ValueLayout.JAVA_INT, h + 48, 0);
        }
        try
        {
            // Without errno, as sendmmsg (an allocation per call where C2 does not inline the capture check). On this
            // unconnected, non-blocking UDP socket recvmmsg fails with EAGAIN (nothing queued), EINTR or ENOMEM, each
            // "nothing now"; ICMP errors are queued only for connected sockets or with IP_RECVERR, neither used here.
            final int received = (int)RECVMMSG.invokeExact(fd, rxHeaders, n, MSG_DONTWAIT, MemorySegment.NULL);
            return Math.max(received, 0);
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("recvmmsg failed: " + ex, ex);
        }
    }

    /** Bytes of received datagram {@code i}. */
    int receivedLength(final int i)
    {
        return rxHeaders.get(ValueLayout.JAVA_INT, (long)i * MMSGHDR_BYTES + 56);
    }

    /** The GRO segment size of received datagram {@code i}, or its whole length when it was not coalesced. */
    int receivedSegment(final int i)
    {
        final long h = (long)i * MMSGHDR_BYTES;
        final long controlLength = rxHeaders.get(ValueLayout.JAVA_LONG, h + 40);
        final long c = (long)i * CMSG_SPACE_BYTES;
        if (controlLength >= 20 && rxControls.get(ValueLayout.JAVA_INT, c + 8) == SOL_UDP
            && rxControls.get(ValueLayout.JAVA_INT, c + 12) == UDP_GRO)
        {
            final int segment = rxControls.get(ValueLayout.JAVA_INT, c + 16);
            if (segment > 0)
            {
                return segment;
            }
        }
        return receivedLength(i);
    }

    /** The sender of received datagram {@code i} as its {@link PeerTable#key} (IPv4 address << 16 | port). */
    long receivedSenderKey(final int i)
    {
        final long n = (long)i * SOCKADDR_BYTES;
        final long port = Short.toUnsignedInt(Short.reverseBytes(rxNames.get(ValueLayout.JAVA_SHORT, n + 2)));
        final long ip = Integer.toUnsignedLong(Integer.reverseBytes(rxNames.get(ValueLayout.JAVA_INT, n + 4)));
        return ip << 16 | port;
    }

    /** Offset of received datagram {@code i} in {@link #rxData}. */
    static long receivedOffset(final int i)
    {
        return (long)i * RX_DATAGRAM_BYTES;
    }

    void close()
    {
        if (arena.scope().isAlive())
        {
            arena.close();
            CLAIMED.remove(inode);
        }
    }

    /**
     * Attaches a classic BPF program to the socket's SO_REUSEPORT group (SO_ATTACH_REUSEPORT_CBPF): the kernel runs it
     * on each datagram with the UDP payload as its packet, and the index it returns picks the group's socket (in the
     * order they were bound); an index beyond the group falls back to the kernel's hash of the addresses.
     *
     * @return null when attached, else why not.
     */
    String attachReusePortProgram(final ReusePortSteering program)
    {
        final short[] codes = program.codes();
        final byte[] jt = program.jumpsIfTrue();
        final byte[] jf = program.jumpsIfFalse();
        final int[] k = program.constants();
        try (Arena scratch = Arena.ofConfined())
        {
            final MemorySegment filter = scratch.allocate((long)codes.length * SOCK_FILTER_BYTES, 8);
            for (int i = 0; i < codes.length; i++)
            {
                final long o = (long)i * SOCK_FILTER_BYTES;
                filter.set(ValueLayout.JAVA_SHORT, o, codes[i]);
                filter.set(ValueLayout.JAVA_BYTE, o + 2, jt[i]);
                filter.set(ValueLayout.JAVA_BYTE, o + 3, jf[i]);
                filter.set(ValueLayout.JAVA_INT, o + 4, k[i]);
            }
            final MemorySegment fprog = scratch.allocate(SOCK_FPROG_BYTES, 8);
            fprog.set(ValueLayout.JAVA_SHORT, 0, (short)codes.length);
            fprog.set(ValueLayout.ADDRESS, 8, filter);
            final MemorySegment state = scratch.allocate(CALL_STATE);
            if ((int)SETSOCKOPT.invokeExact(state, fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, fprog,
                SOCK_FPROG_BYTES) != 0)
            {
                return "setsockopt(SO_ATTACH_REUSEPORT_CBPF) failed, errno " + (int)ERRNO.get(state, 0L);
            }
            return null;
        }
        catch (final Throwable ex)
        {
            return "setsockopt(SO_ATTACH_REUSEPORT_CBPF) failed: " + ex;
        }
    }

    private boolean probeGso()
    {
        // Setting a socket-wide segment size of 0 is accepted exactly where UDP_SEGMENT exists (Linux 4.18+).
        return setIntOption(SOL_UDP, UDP_SEGMENT, 0);
    }

    private boolean setIntOption(final int level, final int option, final int value)
    {
        final MemorySegment v = arena.allocate(ValueLayout.JAVA_INT);
        v.set(ValueLayout.JAVA_INT, 0, value);
        try
        {
            return (int)SETSOCKOPT.invokeExact(callState, fd, level, option, v, Integer.BYTES) == 0;
        }
        catch (final Throwable ex)
        {
            return false;
        }
    }

    private static void writeSockaddr(final MemorySegment m, final long o, final InetSocketAddress address)
    {
        final byte[] ip = address.getAddress().getAddress();
        m.asSlice(o, SOCKADDR_BYTES).fill((byte)0);
        m.set(ValueLayout.JAVA_SHORT, o, (short)AF_INET);
        m.set(ValueLayout.JAVA_SHORT, o + 2, Short.reverseBytes((short)address.getPort()));
        if (ip.length == 4)
        {
            MemorySegment.copy(ip, 0, m, ValueLayout.JAVA_BYTE, o + 4, 4);
        }
    }
}
