package org.inagg.perf.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.inagg.agent.CounterRegistry;
import org.inagg.ffi.dpdk.Eal;
import org.inagg.ffi.dpdk.EthPort;
import org.inagg.ffi.dpdk.MbufPool;
import org.inagg.p4.softswitch.SoftwareSwitch;
import org.inagg.p4.softswitch.SwitchCounter;
import org.inagg.p4.softswitch.SwitchGauge;
import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.perf.DpdkTests;
import org.inagg.services.switchcontrol.SwitchControlServer;
import org.inagg.transport.dpdk.DpdkEal;
import org.inagg.transport.dpdk.DpdkPeer;
import org.inagg.transport.dpdk.DpdkPorts;
import org.inagg.transport.dpdk.DpdkTransport;
import org.inagg.transport.dpdk.DpdkTransportConfig;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 24, registered sources over DPDK: a software switch on a DPDK port registers its worker's IPv4 address and UDP
 * port; the worker's first accepted JOIN pins its MAC, and a forger on the same segment who copies the worker's
 * address from another MAC neither joins, restarts nor feeds the job. With a JOIN credential, the worker restarted on a
 * new NIC (its address, another MAC) re-pins by showing it; a wrong credential pins nothing. A controller's job comes
 * through the switch's control port on its DPDK transport ({@code switch --transport dpdk --control}).
 * <p>
 * Every node here is a {@link DpdkTransport} on one {@code net_ring} port whose transmit queue loops into its receive
 * queue: each step sends, then lets exactly the node it is for poll, and reads the destination MAC of what comes back.
 */
@Timeout(60)
class DpdkSourceSecurityTest
{
    private static final String PORT_NAME = "iasrcsec";
    private static final int JOB = 3;
    private static final int UDP_PORT = 9000;
    private static final long SWITCH_MAC = 0x02_00_00_00_00_01L;
    private static final int SWITCH_IP = 0x0A_00_00_01;
    private static final long WORKER_MAC = 0x02_00_00_00_01_01L;
    private static final long FORGER_MAC = 0x02_00_00_00_0E_0EL;
    private static final long NEW_NIC_MAC = 0x02_00_00_00_01_99L;
    private static final int WORKER_IP = 0x0A_00_01_01;
    private static final long CREDENTIAL = 0x5EC2_E7C2_ED00_0001L;
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private static MbufPool pool;
    private static EthPort port;

    private final List<DpdkTransport> nodes = new ArrayList<>();
    private DpdkTransport switchTransport;
    private SoftwareSwitch softwareSwitch;

    /** What a node received: the message type and the destination MAC of its frame. */
    private record Received(int type, long destinationMac, int firstLane)
    {
    }

    @BeforeAll
    static void startPort()
    {
        DpdkTests.assumeDpdk();
        final Eal eal = DpdkEal.currentOrStart(DpdkEal.noHugeConfig("local"));
        eal.probe("net_ring_" + PORT_NAME + ",nodeaction=" + PORT_NAME + ":0:CREATE");
        pool = MbufPool.create("inagg_srcsec", 1023, 32, MbufPool.DATA_ROOM_DEFAULT, -1);
        port = EthPort.byName(PORT_NAME).configure(1, 1).setupRxQueue(0, 512, pool).setupTxQueue(0, 512).start();
    }

    @AfterAll
    static void stopPort()
    {
        if (port != null)
        {
            try (Arena arena = Arena.ofConfined())
            {
                DpdkPorts.drain(port.id(), 1, arena.allocate(ValueLayout.ADDRESS, 32), 32);
            }
            port.close();
        }
        if (pool != null)
        {
            pool.close();
        }
    }

    @AfterEach
    void closeNodes()
    {
        nodes.forEach(DpdkTransport::close);
    }

    @Test
    void shouldKeepTheMacOfTheFirstAcceptedJoinSoThatAForgerOfTheWorkersAddressCannotJoinRestartOrFeedTheJobAttack()
    {
        startSwitch(null);
        final DpdkTransport worker = node(WORKER_MAC);
        final DpdkTransport forger = node(FORGER_MAC);

        // before the worker joined, nothing from its address is the worker's: a forged AGGREGATE is refused
        send(forger, aggregate(0, 99));
        assertThat(counter(SwitchCounter.DROP_SOURCE_MISMATCH)).isEqualTo(1);

        send(worker, join(0xA, InaggHeader.NO_CREDENTIAL));
        assertThat(receive(worker)).containsExactly(new Received(MessageType.JOIN_ACK, WORKER_MAC, 0));
        assertThat(switchTransport.isPinned(0)).isTrue();

        // the forger JOINs as the worker from its ip:port with a new incarnation: dropped unanswered, the job runs on
        send(forger, join(0xE71, InaggHeader.NO_CREDENTIAL));
        send(forger, join(0xA, InaggHeader.NO_CREDENTIAL));
        assertThat(receive(forger)).as("no answer to a forged JOIN").isEmpty();
        assertThat(counter(SwitchCounter.DROP_SOURCE_MISMATCH)).isEqualTo(3);
        assertThat(softwareSwitch.session(JOB)).isZero();
        assertThat(softwareSwitch.gauge(SwitchGauge.SESSIONS_STARTED)).isZero();
        assertThat(counter(SwitchCounter.JOINS)).isEqualTo(1);

        // and feeds the current session: not a contribution
        send(forger, aggregate(0, 1_000));
        assertThat(counter(SwitchCounter.DROP_SOURCE_MISMATCH)).isEqualTo(4);
        assertThat(counter(SwitchCounter.CONTRIBUTIONS)).isZero();

        // the worker's own AGGREGATE completes the round, its sum going to the pinned MAC
        send(worker, aggregate(0, 7));
        assertThat(counter(SwitchCounter.CONTRIBUTIONS)).isEqualTo(1);
        assertThat(receive(worker)).containsExactly(new Received(MessageType.AGGREGATE, WORKER_MAC, 7));
        assertThat(switchTransport.framesFromUnpinnedSources()).as("the forger's 4 and the worker's first JOIN")
            .isEqualTo(5);
    }

    @Test
    void shouldLetTheWorkerRestartedOnANewNicRePinByShowingItsCredentialAndNobodyWithoutItSecurity()
    {
        startSwitch(new long[] {CREDENTIAL});
        final DpdkTransport worker = node(WORKER_MAC);
        final DpdkTransport forger = node(FORGER_MAC);

        // a wrong credential first pins nothing
        send(forger, join(0xE71, 0xBAD));
        assertThat(receive(forger)).isEmpty();
        assertThat(counter(SwitchCounter.DROP_BAD_CREDENTIAL)).isEqualTo(1);
        assertThat(switchTransport.isPinned(0)).isFalse();

        send(worker, join(0xA, CREDENTIAL));
        assertThat(receive(worker)).containsExactly(new Received(MessageType.JOIN_ACK, WORKER_MAC, 0));

        // nor later, while the worker's MAC is pinned
        send(forger, join(0xE72, 0xBAD));
        assertThat(receive(forger)).isEmpty();
        assertThat(counter(SwitchCounter.DROP_BAD_CREDENTIAL)).isEqualTo(2);
        assertThat(softwareSwitch.session(JOB)).isZero();
        send(forger, aggregate(0, 1_000));
        assertThat(counter(SwitchCounter.CONTRIBUTIONS)).isZero();
        worker.close();
        nodes.remove(worker);

        // the worker restarted on another NIC: same address, new MAC, new incarnation, its credential
        final DpdkTransport restarted = node(NEW_NIC_MAC);
        send(restarted, join(0xB, CREDENTIAL));
        final List<Received> ack = receive(restarted);
        assertThat(ack).containsExactly(new Received(MessageType.JOIN_ACK, NEW_NIC_MAC, 0));
        assertThat(softwareSwitch.session(JOB)).as("a rejoin with a new incarnation starts the next session").isOne();

        // the old MAC is nobody's now; the new one's contribution completes the new session's round
        final DpdkTransport oldNic = node(WORKER_MAC);
        send(oldNic, aggregate(1, 5));
        assertThat(counter(SwitchCounter.CONTRIBUTIONS)).isZero();
        send(restarted, aggregate(1, 6));
        assertThat(receive(restarted)).containsExactly(new Received(MessageType.AGGREGATE, NEW_NIC_MAC, 6));
        assertThat(counter(SwitchCounter.CONTRIBUTIONS)).isOne();
    }

    @Test
    void shouldInstallAControllersJobWithItsSourcesOverDpdkAndPinOnlyTheJoinShowingTheCredentialSecurity()
        throws Exception
    {
        // switch --transport dpdk --control: the controller's job (sources as ip:port, JOIN credentials) is installed
        // through the control port on the switch's DPDK transport, and removed with its sources.
        startSwitch(null, false);
        try (SwitchControlServer control = SwitchControlServer.launch(new SwitchControlServer.Context()
            .softwareSwitch(softwareSwitch).transport(switchTransport).bind(new InetSocketAddress("127.0.0.1", 0)));
             HttpClient client = HttpClient.newHttpClient())
        {
            final URI job = URI.create("http://127.0.0.1:" + control.address().getPort() + "/v1/jobs/" + JOB);
            final String installed = onSwitchThread(control, client, HttpRequest.newBuilder(job).PUT(
                HttpRequest.BodyPublishers.ofString("{\"workers\": 1, \"slots\": 4, \"lanes\": 4, \"slotBase\": 0,"
                    + " \"session\": 0, \"sources\": [\"10.0.1.1:9000\"], \"joinCredentials\": [\""
                    + Long.toHexString(CREDENTIAL) + "\"]}")).build());
            assertThat(installed).contains("10.0.1.1:9000").doesNotContain(Long.toHexString(CREDENTIAL));
            assertThat(onSwitchThread(control, client, HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                + control.address().getPort() + "/v1/jobs")).GET().build()))
                .containsPattern("\"data\" ?: ?\"10.0.0.1:9000\"");

            final DpdkTransport worker = node(WORKER_MAC);
            final DpdkTransport forger = node(FORGER_MAC);
            send(forger, join(0xE71, InaggHeader.NO_CREDENTIAL));
            assertThat(receive(forger)).isEmpty();
            assertThat(counter(SwitchCounter.DROP_BAD_CREDENTIAL)).isOne();
            send(worker, join(0xA, CREDENTIAL));
            assertThat(receive(worker)).containsExactly(new Received(MessageType.JOIN_ACK, WORKER_MAC, 0));
            send(forger, aggregate(0, 1_000));
            send(worker, aggregate(0, 8));
            assertThat(receive(worker)).containsExactly(new Received(MessageType.AGGREGATE, WORKER_MAC, 8));
            assertThat(counter(SwitchCounter.CONTRIBUTIONS)).isOne();

            assertThat(onSwitchThread(control, client, HttpRequest.newBuilder(job).DELETE().build()))
                .containsPattern("\"removed\" ?: ?true");
            assertThat(switchTransport.peerAddress(0)).as("the job's source is forgotten with it").isNull();
        }
    }

    /** Sends {@code request} and runs the control port's and the switch's duty cycles on this thread until answered. */
    private String onSwitchThread(final SwitchControlServer control, final HttpClient client,
        final HttpRequest request) throws Exception
    {
        final CompletableFuture<HttpResponse<String>> answer = client.sendAsync(request,
            HttpResponse.BodyHandlers.ofString());
        while (!answer.isDone())
        {
            control.doWork();
            softwareSwitch.doWork();
            Thread.onSpinWait();
        }
        assertThat(answer.get().statusCode()).as(answer.get().body()).isEqualTo(200);
        return answer.get().body();
    }

    private void startSwitch(final long[] credentials)
    {
        startSwitch(credentials, true);
    }

    private void startSwitch(final long[] credentials, final boolean withJob)
    {
        switchTransport = open(new DpdkTransportConfig().link(PORT_NAME, 0, 0).localMac(SWITCH_MAC)
            .localIp(SWITCH_IP).localUdpPort(UDP_PORT).maxPeers(8).burst(32).startPorts(false).pool(pool));
        softwareSwitch = new SoftwareSwitch(switchTransport, new CounterRegistry(64), 32);
        if (!withJob)
        {
            return;
        }
        final int source = switchTransport.addPeer(new InetSocketAddress("10.0.1.1", UDP_PORT));
        softwareSwitch.addJob(new SwitchJobConfig(JOB, 1, 4, 4, SwitchJobConfig.NO_SLOT_BASE,
            SwitchJobConfig.NO_MULTICAST_GROUP, new int[] {source}, 0, credentials));
        softwareSwitch.doWork();
    }

    /** A node sending from the worker's IPv4 address and UDP port with {@code mac}, to the switch. */
    private DpdkTransport node(final long mac)
    {
        return open(new DpdkTransportConfig().link(PORT_NAME, 0, 0).localMac(mac).localIp(WORKER_IP)
            .localUdpPort(UDP_PORT).peer(new DpdkPeer(SWITCH_MAC, SWITCH_IP, UDP_PORT, 0)).maxPeers(1).burst(32)
            .startPorts(false).pool(pool));
    }

    private DpdkTransport open(final DpdkTransportConfig config)
    {
        final DpdkTransport transport = DpdkTransport.open(config);
        nodes.add(transport);
        return transport;
    }

    /** {@code from} sends {@code message} to the switch, which handles it (and sends its answers). */
    private void send(final DpdkTransport from, final byte[] message)
    {
        final long at = from.claim(0, message.length);
        MemorySegment.copy(MemorySegment.ofArray(message), 0, from.txMemory(), at, message.length);
        from.commit();
        from.flush();
        // One duty cycle: it polls the message and flushes the answers; another would poll the answers off the ring.
        softwareSwitch.doWork();
    }

    /** What {@code node} receives now (the switch's answers to the worker's address, whichever MAC they went to). */
    private static List<Received> receive(final DpdkTransport node)
    {
        final List<Received> received = new ArrayList<>();
        for (int i = 0; i < 4; i++)
        {
            node.poll((memory, offset, length, peer) ->
            {
                final long frame = offset - DpdkTransport.HEADERS_LENGTH;
                final long destination = Short.toUnsignedLong(memory.get(U16, frame)) << 32
                    | Integer.toUnsignedLong(memory.get(U32, frame + 2));
                final int type = InaggHeader.type(memory, offset);
                received.add(new Received(type, destination,
                    type == MessageType.AGGREGATE ? InaggHeader.element(memory, offset, 0) : 0));
            }, 32);
        }
        return received;
    }

    private long counter(final SwitchCounter counter)
    {
        return softwareSwitch.counter(counter);
    }

    private static byte[] join(final long incarnation, final long credential)
    {
        final byte[] bytes = new byte[InaggHeader.joinLength(credential)];
        InaggHeader.writeJoin(MemorySegment.ofArray(bytes), 0, JOB, 0, 1, InaggHeader.ANY_SESSION, incarnation,
            credential);
        return bytes;
    }

    private static byte[] aggregate(final int session, final int lane)
    {
        final byte[] bytes = new byte[InaggHeader.messageLength(1)];
        final MemorySegment m = MemorySegment.ofArray(bytes);
        InaggHeader.write(m, 0, MessageType.AGGREGATE, InaggHeader.FLAG_INT32, JOB, 0, 0, 0, 0, 1, 0,
            InaggHeader.NO_EXPONENT, 0);
        InaggHeader.setSession(m, 0, session);
        InaggHeader.setElement(m, 0, 0, lane);
        return bytes;
    }
}
