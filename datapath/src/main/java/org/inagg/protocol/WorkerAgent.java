package org.inagg.protocol;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CompletableFuture;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.NanoClock;
import org.inagg.InaggException;
import org.inagg.InvalidTensorException;
import org.inagg.PeerTimeoutException;
import org.inagg.agent.CounterRegistry;
import org.inagg.fixedpoint.FixedPoint;
import org.inagg.fixedpoint.FixedPointConverter;
import org.inagg.transport.MessageHandler;
import org.inagg.transport.Transport;
import org.inagg.wire.InaggHeader;
import org.inagg.wire.MessageType;
import org.inagg.wire.WireCheck;

/**
 * The worker side of the slot protocol, as an Agrona duty-cycle agent: it joins the job, then streams each collective
 * through a window of switch slots, recovering losses by retransmission (docs/protocol.md). Each packet is rebuilt from
 * the source tensor whenever it is sent (quantization is deterministic, so a retransmission is bit-identical); results
 * that do not match the packet in flight of their slot are counted and ignored; with no result for the peer timeout the
 * operation fails with a {@link PeerTimeoutException}, and so does every later one.
 * <p>
 * The agent is the duty cycle ({@link #doWork}) and the packet's header ({@link #send}, {@link #onResult}). What it
 * drives lives in parts of one idea each, final classes on this thread that allocate nothing per packet:
 * <ul>
 * <li>{@link JoinClient}: the join, the session and the switch's liveness;</li>
 * <li>{@link PacketSchedule}: which packet carries which block of which part, and the block exponents they negotiate;</li>
 * <li>{@link LaneCodec}: lanes between the tensors and the payload (fixed point, ordered keys, raw INT32);</li>
 * <li>{@link SlotTable}: each slot's packet in flight, round (shadow copy) and send times, and the ready queue;</li>
 * <li>{@link LossDetector}: a check time per slot, lost by order or by time, stall probes;</li>
 * <li>{@link CongestionWindow}: how many slots may be in flight (AIMD); {@link WorkerCounters}.</li>
 * </ul>
 */
public final class WorkerAgent implements Agent, MessageHandler
{
    private static final int MAX_RECEIVE_BURSTS_PER_CYCLE = 16;
    private static final System.Logger LOGGER = System.getLogger(WorkerAgent.class.getName());

    private final WorkerSettings settings;
    /** "job J worker W", the start of every message about this worker. */
    private final String who;
    private final Transport transport;
    private final FixedPointConverter converter;
    private final LaneCodec lanes;
    private final NanoClock clock;
    private final ManyToOneConcurrentArrayQueue<AllReduceOperation> requests;
    private final WorkerCounters counters;
    private final JoinClient join;
    private final PacketSchedule schedule = new PacketSchedule();
    private final SlotTable slots = new SlotTable();
    private final LossDetector loss;
    private final LossDetector.CheckHandler checkHandler = this::onCheck;
    private final CongestionWindow window = new CongestionWindow();

    private long nowNs;
    private volatile InaggException failure;
    private boolean closing;
    private AllReduceOperation op;
    /** The operation {@link #start} is working on, until it is {@link #op} or refused. */
    private AllReduceOperation starting;
    private long lastProgressNs; // the operation's last completed packet, or its start
    private long retransmissionsThisOp;

    public WorkerAgent(
        final WorkerSettings settings,
        final Transport transport,
        final FixedPointConverter converter,
        final NanoClock clock,
        final CounterRegistry registry,
        final int requestQueueCapacity)
    {
        this.settings = settings;
        this.transport = transport;
        this.converter = converter;
        this.lanes = new LaneCodec(converter, settings.workers());
        this.clock = clock;
        this.requests = new ManyToOneConcurrentArrayQueue<>(requestQueueCapacity);
        this.join = new JoinClient(this, settings, transport);
        this.loss = new LossDetector(slots, settings);
        this.who = "job " + settings.jobId() + " worker " + settings.workerId();
        this.counters = new WorkerCounters(registry, who, settings.jobId(), settings.workerId());
    }

    /** Completes when the switch accepted the join; fails with the reason otherwise. */
    public CompletableFuture<Void> joined()
    {
        return join.joined();
    }

    /**
     * Queues an all-reduce; operations run one after another in submission order. Any thread may call this.
     *
     * @return false if the request queue is full.
     */
    public boolean submit(final AllReduceOperation operation)
    {
        final InaggException failed = failure;
        if (failed != null)
        {
            operation.completion().completeExceptionally(new InaggException(who + " failed earlier: "
                + failed.getMessage(), failed));
            return true;
        }
        return requests.offer(operation);
    }

    public long counter(final WorkerCounter counter)
    {
        return counters.get(counter);
    }

    /** Lanes per packet, known once joined. */
    public int elementsPerPacket()
    {
        return join.lanes();
    }

    /** Slots in the job's pool, known once joined. */
    public int slots()
    {
        return join.slots();
    }

    @Override
    public String roleName()
    {
        return "inagg-worker-" + settings.jobId() + "-" + settings.workerId();
    }

    @Override
    public void onStart()
    {
        join.start(clock.nanoTime());
    }

    /**
     * One duty cycle: read the clock once, drain what has arrived (bounded) before judging anything lost (a result
     * still unread in the receive queue must not trigger a retransmission), then join, or start the next operation,
     * send what the window allows, run the loss checks due and watch the job's progress.
     */
    @Override
    public int doWork()
    {
        nowNs = clock.nanoTime();
        int work = 0;
        int received;
        int bursts = 0;
        do
        {
            received = transport.poll(this, settings.receiveBurst());
            work += received;
        }
        while (received == settings.receiveBurst() && ++bursts < MAX_RECEIVE_BURSTS_PER_CYCLE);
        final boolean drained = received < settings.receiveBurst();
        if (failure != null)
        {
            failQueued();
        }
        else if (!join.isJoined())
        {
            work += join.join(nowNs);
        }
        else
        {
            if (op == null)
            {
                work += startNext();
            }
            if (op != null)
            {
                work += sendQueued();
                if (drained)
                {
                    work += loss.poll(nowNs, schedule.activeSlots(), checkHandler);
                }
                checkProgress();
            }
        }
        work += transport.flush();
        counters.slotsInUse(slots.outstanding());
        return work;
    }

    @Override
    public void onClose()
    {
        if (failure == null)
        {
            LOGGER.log(System.Logger.Level.DEBUG, () -> who + ": closed");
        }
        closing = true;
        fail(new InaggException(who + " was closed"));
        failQueued();
        transport.close();
    }

    // Operations

    /** The join was accepted with a pool of {@code poolSlots} slots ({@link JoinClient}). */
    void onJoined(final int poolSlots)
    {
        slots.resize(poolSlots);
        window.reset(poolSlots);
    }

    private int startNext()
    {
        final AllReduceOperation next = requests.poll();
        if (next == null)
        {
            return 0;
        }
        starting = next; // for onAgentError: start() touches the tensor before it is the operation
        start(next);
        starting = null;
        return 1;
    }

    private void start(final AllReduceOperation next)
    {
        schedule.cut(next, join.lanes());
        final long nonFinite = schedule.prepare(next, converter);
        if (nonFinite >= 0)
        {
            final float value = next.source().get(ValueLayout.JAVA_FLOAT_UNALIGNED, nonFinite * Float.BYTES);
            next.completion().completeExceptionally(new InvalidTensorException(who + ": element " + nonFinite
                + " of the tensor is " + value + "; " + (next.fixedPoint()
                ? "gradients must be finite and below 2^127 in magnitude" : "MIN and MAX take finite values")
                + ". Nothing of this tensor was sent.", nonFinite));
            return;
        }
        op = next;
        schedule.begin(next.fixedPoint(), join.slots());
        retransmissionsThisOp = 0;
        lastProgressNs = nowNs;
        slots.begin(schedule.activeSlots(), schedule.totalPackets());
        if (schedule.totalPackets() == 0)
        {
            finish();
            return;
        }
        for (int s = 0; s < schedule.activeSlots(); s++)
        {
            slots.enqueue(s, s);
        }
    }

    private void finish()
    {
        schedule.end();
        final AllReduceOperation done = op;
        op = null;
        done.completion().complete(null);
    }

    // Send

    /** Sends queued packets while the window allows, and past it the lowest one ({@link SlotTable#lowestFirst}). */
    private int sendQueued()
    {
        int sent = 0;
        while (slots.readyCount() > 0 && (window.allows(slots.outstanding()) || slots.lowestFirst()))
        {
            if (!send(slots.readySlot(), slots.readyPacket(), false))
            {
                counters.increment(WorkerCounter.TX_FULL);
                break;
            }
            slots.dequeue();
            sent++;
        }
        return sent;
    }

    /** Builds {@code packet} from the source tensor (again, bit for bit, for a retransmission) and sends it. */
    private boolean send(final int slot, final int packet, final boolean retransmission)
    {
        final int block = schedule.block(packet);
        final int collective = op.collective();
        final int owner = collective == InaggHeader.COLLECTIVE_ALL_REDUCE ? -1 : schedule.owner(op, packet, block);
        final int count = schedule.lanesSent(collective, block, owner, settings.workerId());
        final long offset = transport.claim(settings.switchPeer(), InaggHeader.messageLength(count));
        if (offset == Transport.CLAIM_FAILED)
        {
            return false;
        }
        final MemorySegment m = transport.txMemory();
        final boolean floats = schedule.fixedPoint();
        final int blockExponent = schedule.blockExponent(block);
        final int flags = (floats ? 0 : InaggHeader.FLAG_INT32) | (retransmission ? InaggHeader.FLAG_RETRANSMIT : 0)
            | InaggHeader.collectiveFlags(collective, op.reduceOp());
        InaggHeader.write(m, offset, MessageType.AGGREGATE, flags, settings.jobId(), settings.workerId(), slot,
            slots.shadowCopy(slot), schedule.sequence(packet), count, blockExponent, schedule.nextExponent(packet),
            settings.priority());
        InaggHeader.setSession(m, offset, join.session());
        if (owner >= 0)
        {
            InaggHeader.setOwner(m, offset, owner);
        }
        if (count > 0)
        {
            lanes.write(op, floats, schedule.element(block), count, blockExponent, m,
                offset + InaggHeader.PAYLOAD_OFFSET);
        }
        transport.commit();

        slots.onSent(slot, packet, nowNs, loss.nextStamp(), retransmission);
        counters.increment(WorkerCounter.PACKETS_SENT);
        counters.add(WorkerCounter.PAYLOAD_BYTES_SENT, (long)count * Integer.BYTES);
        if (retransmission)
        {
            counters.increment(WorkerCounter.RETRANSMISSIONS);
            retransmissionsThisOp++;
        }
        loss.check(slot, nowNs);
        return true;
    }

    // Losses and progress

    /** A slot's loss check is due: a check is not a verdict ({@link LossDetector#judge}). */
    private void onCheck(final int slot)
    {
        if (op != null)
        {
            final int verdict = loss.judge(slot, nowNs, lastProgressNs, schedule.activeSlots());
            if (verdict == LossDetector.LOST && settings.congestionControl()
                && window.onLoss(slots.stamp(slot), loss.lastStamp()))
            {
                counters.increment(WorkerCounter.WINDOW_CUTS);
            }
            if (verdict == LossDetector.WAIT || !send(slot, slots.packet(slot), true))
            {
                loss.check(slot, nowNs);
            }
        }
    }

    private void checkProgress()
    {
        join.probe(nowNs, lastProgressNs);
        if (nowNs - lastProgressNs > settings.peerTimeoutNs() && join.probeAnswerDue(nowNs, lastProgressNs))
        {
            fail(join.peerTimeout(nowNs, lastProgressNs, slots.oldestInFlight(schedule.activeSlots()),
                schedule.totalPackets(), retransmissionsThisOp));
        }
    }

    // Receive

    @Override
    public void onMessage(final MemorySegment m, final long o, final int length, final int peer)
    {
        if (InaggHeader.check(m, o, length) != WireCheck.OK)
        {
            counters.increment(WorkerCounter.MALFORMED);
            return;
        }
        final int type = InaggHeader.type(m, o);
        if (type == MessageType.AGGREGATE && (InaggHeader.flags(m, o) & InaggHeader.FLAG_RESULT) != 0)
        {
            onResult(m, o);
        }
        else if (type == MessageType.JOIN_ACK || type == MessageType.REJECT)
        {
            join.onAnswer(m, o, type, peer, nowNs);
        }
        else
        {
            counters.increment(WorkerCounter.MALFORMED);
        }
    }

    private void onResult(final MemorySegment m, final long o)
    {
        counters.increment(WorkerCounter.RESULTS_RECEIVED);
        if (InaggHeader.session(m, o) != join.session() || InaggHeader.jobId(m, o) != settings.jobId())
        {
            counters.increment(WorkerCounter.DUPLICATE_RESULTS);
            return;
        }
        join.onSwitchAnswer(nowNs);
        final int slot = InaggHeader.slotIndex(m, o);
        final int packet = schedule.packet(InaggHeader.sequence(m, o));
        if (op == null || !slots.awaits(slot, packet, InaggHeader.shadowCopy(m, o), schedule.activeSlots()))
        {
            counters.increment(WorkerCounter.DUPLICATE_RESULTS);
            return;
        }
        final int block = schedule.block(packet);
        final int count = schedule.lanesReceived(op, packet, block, settings.workerId());
        final int nextExponent = InaggHeader.nextExponent(m, o);
        final boolean bringsExponent = schedule.bringsExponent(packet);
        if (InaggHeader.elementCount(m, o) != count
            || (bringsExponent && (nextExponent < FixedPoint.MIN_EXPONENT || nextExponent > FixedPoint.MAX_EXPONENT)))
        {
            counters.increment(WorkerCounter.MALFORMED);
            return;
        }
        if (count > 0)
        {
            lanes.read(m, o + InaggHeader.PAYLOAD_OFFSET, op, schedule.fixedPoint(),
                schedule.destinationElement(op, block), count, schedule.blockExponent(block));
        }
        if (bringsExponent)
        {
            schedule.agree(packet, nextExponent);
        }
        loss.onResult(slot, nowNs, schedule.activeSlots());
        window.onResult();
        slots.onCompleted(slot);
        lastProgressNs = nowNs;
        counters.add(WorkerCounter.ELEMENTS_REDUCED, count);

        final boolean last = schedule.complete();
        final int next = schedule.nextOf(packet);
        if (next >= 0)
        {
            slots.enqueue(slot, next);
            sendQueued();
        }
        else if (last)
        {
            finish();
        }
    }

    // Failure

    boolean failed()
    {
        return failure != null;
    }

    /** Where the operation in progress stands, for a failure's message. */
    String progress()
    {
        return op == null ? "" : " at packet " + schedule.completedPackets() + " of " + schedule.totalPackets()
            + " of this " + collectiveName(op.collective());
    }

    /** The collective's name in a failure's message (a broadcast travels as an all-gather). */
    static String collectiveName(final int collective)
    {
        return switch (collective)
        {
            case InaggHeader.COLLECTIVE_REDUCE_SCATTER -> "reduce-scatter";
            case InaggHeader.COLLECTIVE_ALL_GATHER -> "all-gather";
            default -> "all-reduce";
        };
    }

    void fail(final InaggException cause)
    {
        if (failure != null)
        {
            return;
        }
        failure = cause;
        if (!closing)
        {
            LOGGER.log(System.Logger.Level.WARNING, () -> who + ": failed: " + cause.getMessage());
        }
        join.fail(cause);
        if (op != null)
        {
            loss.cancelAll(schedule.activeSlots());
            final AllReduceOperation failed = op;
            op = null;
            failed.completion().completeExceptionally(cause);
        }
    }

    /**
     * The duty cycle threw (a bug, or a tensor this thread may not touch, such as a confined arena's): the operation in
     * progress, the queued ones and the job fail with it, instead of the runner retrying the same failing duty cycle
     * forever. Called on the agent's thread by its runner's error handler.
     */
    public void onAgentError(final Throwable error)
    {
        final InaggException cause = new InaggException(who + ": the worker's thread failed: " + error, error);
        fail(cause);
        if (starting != null)
        {
            final AllReduceOperation refused = starting;
            starting = null;
            refused.completion().completeExceptionally(cause);
        }
        failQueued();
    }

    private void failQueued()
    {
        AllReduceOperation queued;
        while ((queued = requests.poll()) != null)
        {
            queued.completion().completeExceptionally(new InaggException(who + " failed earlier: "
                + failure.getMessage(), failure));
        }
    }
}
