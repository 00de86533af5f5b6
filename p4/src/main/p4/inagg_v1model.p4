/*
 * inagg switch for the v1model architecture (bmv2 simple_switch).
 *
 * One program, two kinds of job, chosen per job by the job table (docs/p4.md, docs/esa.md):
 *
 *   slot protocol (set_job)   the pipeline of org.inagg.p4.softswitch.SoftwareSwitch: a job owns slots
 *                             [slot_base, slot_base + slots) of the pool, two shadow copies each
 *   upstream (set_upstream_job)  the same, in SoftwareSwitch's two-level mode (UpstreamAggregation): the switch sums
 *                             its local workers only and sends the sum to the job's parameter server as one PARTIAL
 *                             (reason SUBTREE, the local bitmap appended); a packet of a complete round goes there
 *                             too (RAW, RETRANSMIT)
 *   ESA / ATP (set_esa_job)   the pipeline of org.inagg.p4.esa.EsaSwitch: every ESA job shares one pool of
 *                             N = pool_mask + 1 aggregators (copies [pool_base, pool_base + N)), indexed by
 *                             (sequence + hash_offset) & pool_mask; preemption by priority, a parameter server
 *                             behind it (PARTIAL / RAW messages, org.inagg.p4.esa.EsaWire)
 *
 * Both are the reference of this program; the conformance vectors in p4/src/test/vectors run against them
 * (p4/scripts/run-vectors-bmv2.sh here, ConformanceVectorTest there).
 *
 *   parser      Ethernet / IPv4 (no options) / UDP to INAGG_UDP_PORT / inagg header / Element Count int32 lanes
 *   ingress     header checks -> job_table -> worker check -> worker_source, then per mode:
 *               slot:  slot check -> roundAction -> seenAction -> countAction -> lanesAction -> exponentAction
 *                      -> decision
 *               ESA:   key_reg (free / same key / preempt / collide) -> tomb_reg -> read-out of an evicted or
 *                      flushed holder -> allocate or contribute -> lanes (esa_lanes) -> exponent -> completion
 *   egress      per replica: worker id = egress_rid, destination from worker_endpoint; the server's replica or
 *               unicast: PARTIAL header from metadata, destination from server_endpoint; source = switch_address
 *
 * Registers form one shared pool of POOL_COPIES copies; the control plane (org.inagg.p4.control.JobTable) gives each
 * slot-protocol job its own range and the ESA pool a range of its own, so the two kinds never touch each other's
 * registers. Every register is indexed by the copy index, except the seen bitmaps (BITMAP_WORDS words of 32 bits per
 * copy, word = worker / 32), which cover MAX_WORKERS workers.
 *
 * Compile:  p4c-bm2-ss --std p4-16 -o inagg_v1model.json p4/src/main/p4/inagg_v1model.p4
 * Configure with the simple_switch_CLI commands org.inagg.p4.control.JobTable emits; see docs/p4.md and docs/esa.md.
 */
#include <core.p4>
#include <v1model.p4>

#if V1MODEL_VERSION >= 20200408
#define REGISTER(T) register<T, bit<32>>
#define COUNTER counter<bit<32>>
#else
#define REGISTER(T) register<T>
#define COUNTER counter
#endif

// Keep equal to org.inagg.p4.control.InaggP4 (InaggP4Test checks).
#define INAGG_UDP_PORT 47000
#define POOL_SLOTS 4096
#define POOL_COPIES 8192
#define MAX_WORKERS 256
#define BITMAP_WORDS 8
#define MAX_LANES 256

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IP_PROTO_UDP = 17;

// org.inagg.wire.MessageType, InaggHeader flags, RejectReason
const bit<4> MSG_AGGREGATE = 1;
const bit<4> MSG_JOIN = 2;
const bit<4> MSG_JOIN_ACK = 3;
const bit<4> MSG_REJECT = 4;
const bit<8> FLAG_RESULT = 0x01;
const bit<8> FLAG_INT32 = 0x04;
const bit<8> FLAG_RESERVED = 0x80;          // must be 0 in an AGGREGATE, else malformed
// What a RESULT keeps of the request's Flags: INT32, the collective (bits 3-4) and the op (bits 5-6).
const bit<8> RESULT_KEEPS = 0x7C;
const bit<8> NO_EXPONENT = 0x80;
const bit<8> REJECT_UNKNOWN_JOB = 1;
const bit<8> REJECT_WORKER_ID_OUT_OF_RANGE = 2;
const bit<8> REJECT_WORKER_COUNT_MISMATCH = 3;
const bit<8> REJECT_STALE_SESSION = 4;
const bit<8> REJECT_UNSUPPORTED_COLLECTIVE = 5;
// What an UNSUPPORTED_COLLECTIVE REJECT keeps of the AGGREGATE's Flags: the collective (bits 3-4) and the op (5-6).
const bit<8> COLLECTIVE_AND_OP = 0x78;

// Collectives and reduce ops of an AGGREGATE (InaggHeader.collective, reduceOp; docs/wire-format.md "Collectives
// and reduce ops"): Flags bits 3-4 and 5-6. Value 3 of either is reserved: dropped, counted C_DROP_UNSUPPORTED.
// A valid one this program does not carry on the packet's job is counted so too, and answered with a REJECT
// UNSUPPORTED_COLLECTIVE (reject_aggregate).
const bit<2> COLLECTIVE_ALL_REDUCE = 0;
const bit<2> COLLECTIVE_REDUCE_SCATTER = 1;   // the result's lanes to the Owner only, header-only to the others
const bit<2> COLLECTIVE_ALL_GATHER = 2;       // the Owner's lanes stored as they are, to everyone (broadcast too)
const bit<2> COLLECTIVE_RESERVED = 3;
const bit<2> OP_SUM = 0;
const bit<2> OP_MIN = 1;                      // signed int32 minimum
const bit<2> OP_MAX = 2;                      // signed int32 maximum
const bit<2> OP_RESERVED = 3;

// Job modes (job_table): the slot protocol, or the shared ESA pool in EsaSwitch's two AllocationModes.
const bit<8> MODE_SLOT = 0;
const bit<8> MODE_ESA = 1;      // AllocationMode.PREEMPTIVE
const bit<8> MODE_ATP = 2;      // AllocationMode.DEALLOCATE_ON_ACK

// org.inagg.p4.esa.EsaWire: the PARTIAL type and the reasons in Status
const bit<4> MSG_PARTIAL = 5;
const bit<8> FLAG_RETRANSMIT = 0x02;
const bit<8> REASON_COLLISION = 1;
const bit<8> REASON_RETRANSMIT = 2;
const bit<8> REASON_TOMBSTONE = 3;
const bit<8> REASON_PREEMPTED = 4;
const bit<8> REASON_FLUSHED = 5;
const bit<8> REASON_COMPLETE = 6;
const bit<8> REASON_STALE = 7;
const bit<8> REASON_SUBTREE = 8;    // two-level aggregation: a switch's sum of its local workers

// key_reg state byte (AggregatorPool.job == FREE, AggregatorPool.acked)
const bit<8> STATE_FREE = 0;
const bit<8> STATE_HELD = 1;
const bit<8> STATE_ACKED = 2;

// What leaves for an ESA job (egress acts on it)
const bit<3> ESA_OUT_NONE = 0;      // slot protocol, or dropped
const bit<3> ESA_OUT_RAW = 1;       // the packet as it came, Status = reason, unicast to its job's server
const bit<3> ESA_OUT_PARTIAL = 2;   // PARTIAL from metadata, unicast to the server of the PARTIAL's job
const bit<3> ESA_OUT_COMPLETE = 3;  // multicast: results to the workers, COMPLETE PARTIAL on the SERVER_RID replica
const bit<3> ESA_OUT_FLUSH = 4;     // multicast to the server: FLUSHED PARTIAL (FLUSH_RID), then the RAW (SERVER_RID)
const bit<3> ESA_OUT_ACK = 5;       // multicast of a server's result to the workers; the SERVER_RID replica dropped

// Replication ids of the server's multicast nodes (worker ids are below MAX_WORKERS)
const bit<16> SERVER_RID = 0xFFFF;
const bit<16> FLUSH_RID = 0xFFFE;

// Outcomes of SlotPool.roundAction
const bit<3> ROUND_NEW = 0;
const bit<3> ROUND_OPEN = 1;
const bit<3> ROUND_COMPLETE = 2;
const bit<3> ROUND_STALE = 3;
const bit<3> ROUND_VIOLATION = 4;
const bit<3> ROUND_BAD_SIZE = 5;

// ESA lane operation (generated/inagg_v1model_esa_lanes.p4)
const bit<2> LANE_NONE = 0;
const bit<2> LANE_WRITE = 1;
const bit<2> LANE_ADD = 2;

// Indices of inagg_counters: org.inagg.p4.softswitch.SwitchCounter type id - 200. Each outcome is counted under the
// name SoftwareSwitch counts it (and EsaSwitch for ESA jobs, in esa_counters), with the same meaning: what is counted
// per copy sent (RESULTS_SENT) is counted in egress, per replica (egress_counters, esa_egress_counters).
const bit<32> C_RECEIVED = 1;
const bit<32> C_CONTRIBUTIONS = 2;
const bit<32> C_RESULTS_SENT = 3;
const bit<32> C_RETRANSMIT_REPLIES = 4;
const bit<32> C_DUPLICATES = 5;
const bit<32> C_DROP_MALFORMED = 6;
const bit<32> C_DROP_UNKNOWN_JOB = 7;
const bit<32> C_DROP_UNKNOWN_WORKER = 8;
const bit<32> C_DROP_SOURCE_MISMATCH = 9;
const bit<32> C_DROP_BAD_SLOT = 10;
const bit<32> C_DROP_BAD_SIZE = 11;
const bit<32> C_DROP_STALE = 12;
const bit<32> C_DROP_VIOLATION = 13;
const bit<32> C_JOINS = 15;
const bit<32> C_REJECTS = 16;
const bit<32> C_UPSTREAM_PARTIALS = 17;
const bit<32> C_UPSTREAM_FORWARDS = 18;
const bit<32> C_DROP_STALE_SESSION = 19;
// A JOIN that does not show its worker's credential (join_credential), for every kind of job: dropped unanswered.
// EsaCounter.DROP_BAD_CREDENTIAL (324) is this cell too (no E_ cell; docs/security.md).
const bit<32> C_DROP_BAD_CREDENTIAL = 24;
// A collective or reduce op this switch does not carry: the reserved values (3) on every job (dropped unanswered),
// anything else but ALL_REDUCE SUM on ESA and upstream jobs (this program sends only that up; an admitted packet is
// answered with REJECT UNSUPPORTED_COLLECTIVE). EsaCounter.DROP_UNSUPPORTED (325) is this cell too (no E_ cell), as
// for C_DROP_BAD_CREDENTIAL.
const bit<32> C_DROP_UNSUPPORTED = 25;

// Indices of esa_counters: org.inagg.p4.esa.EsaCounter type id - 300 (packets; the byte counters are not kept).
// Counted for ESA jobs only. What the switch counts before it knows a job's mode (RECEIVED, DROP_MALFORMED,
// DROP_UNKNOWN_JOB, a JOIN for an unknown job) is in inagg_counters, for every job; a switch's count of an EsaCounter
// NAME is esa_counters[E_NAME] + esa_egress_counters[E_NAME] + (where there is one) inagg_counters[C_NAME].
const bit<32> E_CONTRIBUTIONS = 2;
const bit<32> E_ALLOCATIONS = 3;
const bit<32> E_COMPLETIONS = 4;
const bit<32> E_RESULTS_SENT = 5;
const bit<32> E_PREEMPTIONS = 6;
const bit<32> E_STALE_EVICTIONS = 7;
const bit<32> E_FLUSHES = 8;
const bit<32> E_FALLBACK_COLLISION = 9;
const bit<32> E_FALLBACK_RETRANSMIT = 10;
const bit<32> E_FALLBACK_TOMBSTONE = 11;
const bit<32> E_DUPLICATES = 12;
const bit<32> E_RESULT_COPIES = 13;
const bit<32> E_ACKS = 16;
const bit<32> E_DROP_UNKNOWN_WORKER = 19;
const bit<32> E_DROP_BAD_SIZE = 20;
const bit<32> E_JOINS = 22;
const bit<32> E_REJECTS = 23;
const bit<32> E_DROP_SOURCE_MISMATCH = 26;

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

// org.inagg.wire.InaggHeader, 20 bytes, network byte order.
header inagg_t {
    bit<4>  version;
    bit<4>  msg_type;
    bit<8>  flags;
    bit<16> job_id;
    bit<16> worker_id;
    bit<1>  copy;
    bit<15> slot;
    bit<32> sequence;
    bit<16> element_count;
    bit<8>  block_exponent;
    bit<8>  next_exponent;
    bit<8>  prio;           // Priority; not named "priority", a keyword of P4_16 (p4c's lexer: table entry priorities)
    bit<8>  status;
    bit<16> reserved;
}

header lane_t {
    bit<32> value;
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    udp_t      udp;
    inagg_t    inagg;
    lane_t[MAX_LANES] lanes;
    // ESA PARTIAL: the lanes read out of an evicted or flushed aggregator (the packet's own lanes went into it), then
    // the aggregator's bitmap words; both start invalid and are emitted after the lanes when made valid.
    lane_t[MAX_LANES] agg;
    lane_t[BITMAP_WORDS] bitmap;
}

struct metadata_t {
    bit<16> lanes_left;
    // the AGGREGATE's collective, op and (REDUCE_SCATTER, ALL_GATHER) Owner: Priority ++ Status
    bit<2>  collective;
    bit<2>  op;
    bit<16> owner;
    // an ALL_GATHER contribution without lanes (from a worker that is not the Owner)
    bit<1>  header_only;
    // job_table
    bit<1>  job_found;
    // the job's session (docs/sessions.md): set by the control plane with the job's row, which it rewrites, and the
    // job's registers it clears, to start a new run; only packets of this session are aggregated
    bit<16> session;
    bit<16> workers;
    bit<16> slots;
    bit<16> slot_base;
    bit<16> job_lanes;
    bit<16> mcast_grp;
    bit<8>  mode;
    // job_table: fresh contributions that complete a round (W, or the local workers of an upstream job)
    bit<16> contributors;
    // job_table, upstream jobs (set_upstream_job): the local workers' bitmap words; local = the worker is one of them
    bit<1>  upstream;
    bit<32> local_0;
    bit<32> local_1;
    bit<32> local_2;
    bit<32> local_3;
    bit<32> local_4;
    bit<32> local_5;
    bit<32> local_6;
    bit<32> local_7;
    bit<1>  local;
    // job_table, ESA jobs (set_esa_job)
    bit<16> flush_grp;
    bit<32> pool_base;
    bit<32> pool_mask;
    bit<32> hash_offset;
    bit<1>  priority_from_header;
    bit<8>  table_priority;
    bit<9>  server_port;
    bit<16> bitmap_words;
    // server_source
    bit<1>  server_ok;
    // worker_source
    bit<1>  source_ok;
    // join_credential: the secret the worker's JOINs must show, 0 for none
    bit<64> join_credential;
    // register actions
    bit<32> copy_index;
    bit<1>  used;
    bit<32> round_seq;
    bit<16> count;
    bit<16> round_lanes;
    bit<3>  round;
    bit<32> seen_index;
    bit<32> other_seen_index;
    bit<32> seen_word;
    bit<32> worker_bit;
    bit<1>  first;
    bit<32> lane_sum;
    bit<8>  exponent;
    // ESA registers (AggregatorPool)
    bit<32> agg_index;
    bit<64> key;
    bit<32> holder_seq;
    bit<16> holder_job;
    bit<8>  holder_prio;
    bit<8>  holder_state;
    bit<64> tomb;
    bit<64> tomb_key;
    bit<8>  effective_priority;
    bit<32> block;
    bit<32> holder;
    bit<1>  read_out;
    bit<2>  lane_op;
    // ESA PARTIAL header, written in egress (EsaAggregation.sendPartial)
    bit<16> p_job;
    bit<16> p_session;      // the session of the block's job (an evicted or flushed block: its holder's, holder_reg)
    bit<16> p_slot_field;
    bit<32> p_seq;
    bit<16> p_lanes;
    bit<8>  p_flags;
    bit<8>  p_block_exp;
    bit<8>  p_exp;
    bit<8>  p_prio;
    bit<8>  p_reason;
    bit<16> p_words;
    bit<1>  p_from_agg;
    bit<3>  esa_out;
    // to egress
    bit<1>  is_multicast;
    bit<1>  reply_to_sender;
    bit<16> dst_worker;
    bit<48> sender_mac;
    bit<32> sender_ip;
    bit<16> sender_port;
    bit<48> switch_mac;
    bit<32> switch_ip;
}

// SlotPool.lanesAction for a contribution after the round's first: the stored lane combined with the packet's by the
// round's op (wrapping int32 sum, signed int32 minimum or maximum).
bit<32> combine(in bit<2> op, in bit<32> stored, in bit<32> lane) {
    bit<32> chosen = stored + lane;
    if (op == OP_MIN) {
        chosen = (int<32>)lane < (int<32>)stored ? lane : stored;
    } else if (op == OP_MAX) {
        chosen = (int<32>)lane > (int<32>)stored ? lane : stored;
    }
    return chosen;
}

parser InaggParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        // No options; not a fragment (More Fragments clear, offset 0); UDP.
        transition select(hdr.ipv4.ihl, hdr.ipv4.flags[0:0], hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (4w5, 1w0, 13w0, IP_PROTO_UDP): parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            INAGG_UDP_PORT: parse_inagg;
            default: accept;
        }
    }
    state parse_inagg {
        packet.extract(hdr.inagg);
        meta.lanes_left = hdr.inagg.element_count;
        transition select(hdr.inagg.version, hdr.inagg.msg_type) {
            (4w1, MSG_AGGREGATE): parse_lanes;
            (4w1, MSG_JOIN): parse_lanes;
            default: accept;
        }
    }
    // Element Count lanes (of an AGGREGATE, or of a JOIN, whose answer drops them); more than MAX_LANES overflows
    // the stack: a parser error, dropped in ingress.
    state parse_lanes {
        transition select(meta.lanes_left) {
            0: accept;
            default: parse_lane;
        }
    }
    state parse_lane {
        packet.extract(hdr.lanes.next);
        meta.lanes_left = meta.lanes_left - 1;
        transition parse_lanes;
    }
}

control InaggVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control InaggIngress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t standard_metadata) {
    REGISTER(bit<1>)  (POOL_COPIES) used_reg;     // SlotPool.used
    REGISTER(bit<32>) (POOL_COPIES) seq_reg;      // SlotPool.round
    REGISTER(bit<16>) (POOL_COPIES) count_reg;    // SlotPool.count
    REGISTER(bit<16>) (POOL_COPIES) width_reg;    // SlotPool.lanes: the round's lane count
    REGISTER(bit<8>)  (POOL_COPIES) exp_reg;      // SlotPool.exponent
    REGISTER(bit<32>) (POOL_COPIES * BITMAP_WORDS) seen_reg;   // SlotPool.seen, 32 workers per word
    // ESA aggregators (org.inagg.p4.esa.AggregatorPool) live at copy indices of the same pool, in the ESA range; they
    // also use count_reg (count), width_reg (lanes), exp_reg (max Next Exponent), seen_reg (bitmap) and the lanes.
    REGISTER(bit<64>) (POOL_COPIES) key_reg;      // AggregatorPool.seq | job | prio | state (FREE, held, acked)
    REGISTER(bit<64>) (POOL_COPIES) tomb_reg;     // AggregatorPool.tombJob / tombSeq: 1 (valid) | job | sequence
    REGISTER(bit<32>) (POOL_COPIES) block_reg;    // AggregatorPool.slotField | flags (INT32) | blockExponent
    // the holder job's session (16) | bitmap words (7: at most BITMAP_WORDS) | server port (9) (jobs[holderJob])
    REGISTER(bit<32>) (POOL_COPIES) holder_reg;
#include "generated/inagg_v1model_lane_registers.p4"
    COUNTER(32, CounterType.packets) inagg_counters;
    COUNTER(32, CounterType.packets) esa_counters;

    action set_job(bit<16> workers, bit<16> slots, bit<16> slot_base, bit<16> lanes, bit<16> mcast_grp,
                   bit<16> session) {
        meta.job_found = 1;
        meta.session = session;
        meta.mode = MODE_SLOT;
        meta.workers = workers;
        meta.slots = slots;
        meta.slot_base = slot_base;
        meta.job_lanes = lanes;
        meta.mcast_grp = mcast_grp;
        meta.contributors = workers;
        meta.upstream = 0;
    }
    // SwitchJobConfig with UpstreamAggregation (two-level aggregation): W = workers (JOIN_ACK, the bitmap's words),
    // a round completes at contributors = the number of local workers, whose bit is set in local_0..local_7 (bit
    // w % 32 of word w / 32); complete sums and packets of complete rounds go to the server on server_port
    // (server_endpoint in egress), nothing is multicast.
    action set_upstream_job(bit<16> workers, bit<16> slots, bit<16> slot_base, bit<16> lanes, bit<16> contributors,
                            bit<9> server_port, bit<32> local_0, bit<32> local_1, bit<32> local_2, bit<32> local_3,
                            bit<32> local_4, bit<32> local_5, bit<32> local_6, bit<32> local_7, bit<16> session) {
        meta.job_found = 1;
        meta.session = session;
        meta.mode = MODE_SLOT;
        meta.workers = workers;
        meta.slots = slots;
        meta.slot_base = slot_base;
        meta.job_lanes = lanes;
        meta.mcast_grp = 0;
        meta.contributors = contributors;
        meta.upstream = 1;
        meta.server_port = server_port;
        meta.local_0 = local_0;
        meta.local_1 = local_1;
        meta.local_2 = local_2;
        meta.local_3 = local_3;
        meta.local_4 = local_4;
        meta.local_5 = local_5;
        meta.local_6 = local_6;
        meta.local_7 = local_7;
    }
    // EsaJobConfig plus what EsaSwitchSettings says for the whole switch (docs/esa.md): window is what a JOIN_ACK
    // offers; mcast_grp holds the workers (rid = worker id) and the server (SERVER_RID); flush_grp holds the server
    // twice (FLUSH_RID, then SERVER_RID); the pool is [pool_base, pool_base + pool_mask]; hash_offset is
    // job * 0x9E3779B1 & pool_mask (AggregatorPool.index); priority_from_header selects PriorityPolicy.HEADER, else
    // job_priority is the job's (JOB_TABLE, or SHORTEST_REMAINING_FIRST as the control plane rewrites it).
    action set_esa_job(bit<16> workers, bit<16> window, bit<16> lanes, bit<16> mcast_grp, bit<16> flush_grp,
                       bit<8> mode, bit<32> pool_base, bit<32> pool_mask, bit<32> hash_offset,
                       bit<1> priority_from_header, bit<8> job_priority, bit<9> server_port, bit<16> session) {
        meta.job_found = 1;
        meta.session = session;
        meta.mode = mode;
        meta.workers = workers;
        meta.slots = window;
        meta.slot_base = 0;
        meta.job_lanes = lanes;
        meta.mcast_grp = mcast_grp;
        meta.flush_grp = flush_grp;
        meta.pool_base = pool_base;
        meta.pool_mask = pool_mask;
        meta.hash_offset = hash_offset;
        meta.priority_from_header = priority_from_header;
        meta.table_priority = job_priority;
        meta.server_port = server_port;
        meta.contributors = workers;
        meta.upstream = 0;
    }
    action unknown_job() {
        meta.job_found = 0;
        meta.session = 0;
        meta.mode = MODE_SLOT;
        meta.upstream = 0;
    }
    // Ordinary IPv4 forwarding for what is not inagg traffic: the destination host's port and MAC. Frames leave as
    // they came otherwise (no TTL decrement: the hosts of one switch are one hop apart), so their UDP checksums stay
    // valid.
    action forward(bit<9> port, bit<48> dst_mac) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.dst_addr = dst_mac;
    }
    table ipv4_forward {
        key = { hdr.ipv4.dst_addr: exact; }
        actions = { forward; NoAction; }
        default_action = NoAction();
        size = 1024;
    }
    // The job table of SoftwareSwitch (SwitchJobConfig) and EsaSwitch (EsaJobConfig): exact match on the job id.
    table job_table {
        key = { hdr.inagg.job_id: exact; }
        actions = { set_job; set_upstream_job; set_esa_job; unknown_job; }
        default_action = unknown_job();
        size = 1024;
    }

    action server_ok() {
        meta.server_ok = 1;
    }
    action server_mismatch() {
        meta.server_ok = 0;
    }
    // The registered source of each ESA job's parameter server (EsaJobConfig.parameterServerPeer): only it may send
    // results through the switch (EsaAggregation.fromServer).
    table server_source {
        key = {
            hdr.inagg.job_id: exact;
            hdr.ipv4.src_addr: exact;
            hdr.udp.src_port: exact;
        }
        actions = { server_ok; server_mismatch; }
        default_action = server_mismatch();
        size = 1024;
    }

    action source_ok() {
        meta.source_ok = 1;
    }
    action source_mismatch() {
        meta.source_ok = 0;
    }
    // Anti-spoofing: the registered IPv4 source and UDP source port of each worker id (SwitchJobConfig.workerPeers).
    table worker_source {
        key = {
            hdr.inagg.job_id: exact;
            hdr.inagg.worker_id: exact;
            hdr.ipv4.src_addr: exact;
            hdr.udp.src_port: exact;
        }
        actions = { source_ok; source_mismatch; }
        default_action = source_mismatch();
        size = 65536;
    }

    action set_join_credential(bit<64> credential) {
        meta.join_credential = credential;
    }
    action no_join_credential() {
        meta.join_credential = 0;
    }
    // The JOIN credential of each worker id (org.inagg.p4.control.WorkerEndpoint.joinCredential, docs/security.md):
    // the controller writes a row per worker; a JOIN must show exactly it in its two lanes (high word first), else it
    // is dropped unanswered and counted (C_DROP_BAD_CREDENTIAL). No row: the job was installed without one (a static
    // --source job, a lab), and the worker's JOINs need none. Applied to JOINs only.
    table join_credential {
        key = {
            hdr.inagg.job_id: exact;
            hdr.inagg.worker_id: exact;
        }
        actions = { set_join_credential; no_join_credential; }
        default_action = no_join_credential();
        size = 65536;
    }

    // A REJECT in answer to an admitted AGGREGATE, back to its sender, without lanes (InaggHeader.writeReject): job
    // and worker id as they came, Flags = RESULT | kept (the collective and op for UNSUPPORTED_COLLECTIVE), Status =
    // reason, Session = the job's current one (the worker acts only on a REJECT of its own session).
    action reject_aggregate(in bit<8> reason, in bit<8> kept, in bit<32> sequence) {
        meta.reply_to_sender = 1;
        meta.sender_mac = hdr.ethernet.src_addr;
        meta.sender_ip = hdr.ipv4.src_addr;
        meta.sender_port = hdr.udp.src_port;
        hdr.inagg.msg_type = MSG_REJECT;
        hdr.inagg.flags = FLAG_RESULT | (hdr.inagg.flags & kept);
        hdr.inagg.copy = 0;
        hdr.inagg.slot = 0;
        hdr.inagg.sequence = sequence;
        hdr.inagg.element_count = 0;
        hdr.inagg.block_exponent = 0;
        hdr.inagg.next_exponent = NO_EXPONENT;
        hdr.inagg.prio = 0;
        hdr.inagg.status = reason;
        hdr.inagg.reserved = meta.session;
#include "generated/inagg_v1model_lane_invalidate.p4"
        standard_metadata.egress_spec = standard_metadata.ingress_port;
    }

    apply {
        // ESA: what the packet does with the aggregator (declared before the first return: p4c's uninitialized_use
        // analysis does not carry a local's initialiser past a return).
        bool allocate = false;
        bool contribute = false;
        mark_to_drop(standard_metadata);
        meta.is_multicast = 0;
        meta.reply_to_sender = 0;
        meta.esa_out = ESA_OUT_NONE;
        meta.read_out = 0;
        meta.lane_op = LANE_NONE;
        meta.p_from_agg = 0;
        if (!hdr.udp.isValid() || hdr.udp.dst_port != INAGG_UDP_PORT) {
            // Not inagg traffic (not IPv4 without options, a fragment, not UDP, another port): forwarded by its IPv4
            // destination when ipv4_forward has a row for it (a parameter server's results and its workers' traffic
            // cross the switch as ordinary packets), else dropped. Only option-less headers: the checksum update in
            // InaggComputeChecksum covers the 20 bytes this parser extracts.
            if (hdr.ipv4.isValid() && hdr.ipv4.ihl == 5) {
                ipv4_forward.apply();
            }
            return;
        }
        // The frame must carry one whole UDP datagram: UDP length >= 8, IPv4 total length = 20 + UDP length, and the
        // frame at least that long (bytes after it, an Ethernet trailer, are cut off in egress). Else there is no
        // message: a host's UDP stack or the software switch's transport (DpdkTransport, the vectors'
        // FrameTransport) drops such a frame before the switch sees it, so it is dropped here uncounted, as any
        // frame that is not inagg traffic (docs/p4.md, "Wire format and parser").
        if (hdr.udp.length < 8 || hdr.ipv4.total_len != hdr.udp.length + 20
                || standard_metadata.packet_length < 34 + (bit<32>)hdr.udp.length) {
            return;
        }
        // A message: the UDP payload, what AggregationNode.onMessage receives.
        inagg_counters.count(C_RECEIVED);
        // InaggHeader.check: at least the 20-byte header (TOO_SHORT: the parser could not extract it), version 1,
        // and the length equal to the header plus Element Count lanes (LENGTH_MISMATCH; a parser error: fewer lanes
        // in the message than Element Count). A message of more than MAX_LANES lanes overflows the lane stack
        // (StackOutOfBounds, the rest of it left in the payload) but is well-formed: more lanes than any job has, it
        // is dropped as DROP_BAD_SIZE below (or for an earlier reason), as the software switch drops it; a JOIN
        // carrying them is answered (egress cuts the frame to the answer).
        if (!hdr.inagg.isValid()
                || (standard_metadata.parser_error != error.NoError
                    && standard_metadata.parser_error != error.StackOutOfBounds)
                || hdr.inagg.version != 1
                || (bit<32>)hdr.udp.length != 28 + ((bit<32>)hdr.inagg.element_count << 2)) {
            inagg_counters.count(C_DROP_MALFORMED);
            return;
        }

        // Each table is applied at one place: the job table for every message, the worker's registered source for
        // every message whose job exists and whose worker id is in range.
        job_table.apply();
        meta.source_ok = 0;
        meta.local = 0;
        if (meta.job_found == 1 && hdr.inagg.worker_id < meta.workers) {
            worker_source.apply();
            // Is the worker one this switch serves (SoftwareSwitch: local[worker])? Every worker of a job, unless the
            // job is upstream: then its bit in the local bitmap (worker < workers <= MAX_WORKERS = 256: 8 words).
            meta.local = 1;
            if (meta.upstream == 1) {
                bit<3> local_index = hdr.inagg.worker_id[7:5];
                bit<32> local_word = meta.local_0;
                if (local_index == 1) { local_word = meta.local_1; }
                if (local_index == 2) { local_word = meta.local_2; }
                if (local_index == 3) { local_word = meta.local_3; }
                if (local_index == 4) { local_word = meta.local_4; }
                if (local_index == 5) { local_word = meta.local_5; }
                if (local_index == 6) { local_word = meta.local_6; }
                if (local_index == 7) { local_word = meta.local_7; }
                meta.local = (bit<1>)(local_word >> hdr.inagg.worker_id[4:0]);
            }
        }

        if (hdr.inagg.msg_type == MSG_JOIN) {
            // JoinStage.join: answered from the job table, back to the sender.
            meta.reply_to_sender = 1;
            meta.sender_mac = hdr.ethernet.src_addr;
            meta.sender_ip = hdr.ipv4.src_addr;
            meta.sender_port = hdr.udp.src_port;
            bit<8> reason = 0;
            bit<32> announced_workers = hdr.inagg.sequence;
            if (meta.job_found == 0) {
                reason = REJECT_UNKNOWN_JOB;
            } else if (hdr.inagg.worker_id >= meta.workers || meta.local == 0) {
                // out of range, or (upstream job) a worker another switch or the server serves
                reason = REJECT_WORKER_ID_OUT_OF_RANGE;
            } else {
                if (meta.source_ok == 0) {
                    // Not the registered source: no answer to a spoofed address. Every node counts it as a source
                    // mismatch (JoinStage).
                    if (meta.mode == MODE_SLOT) {
                        inagg_counters.count(C_DROP_SOURCE_MISMATCH);
                    } else {
                        esa_counters.count(E_DROP_SOURCE_MISMATCH);
                    }
                    return;
                }
                // JobMembership.join: the worker's credential, before anything the JOIN could change or learn. A
                // JOIN of two lanes shows them as one 64-bit number; any other JOIN shows none (0).
                join_credential.apply();
                if (meta.join_credential != 0) {
                    bit<64> shown = 0;
                    if (hdr.inagg.element_count == 2) {
                        shown = hdr.lanes[0].value ++ hdr.lanes[1].value;
                    }
                    if (shown != meta.join_credential) {
                        inagg_counters.count(C_DROP_BAD_CREDENTIAL);
                        return;
                    }
                }
                if (announced_workers != (bit<32>)meta.workers) {
                    reason = REJECT_WORKER_COUNT_MISMATCH;
                } else if (hdr.inagg.reserved != 0 && hdr.inagg.reserved != meta.session) {
                    // a JOIN asking for another session than the job's (JobMembership.join; 0 asks for any)
                    reason = REJECT_STALE_SESSION;
                }
            }
            // The answer reuses the header: every field but job id and worker id is rewritten.
            hdr.inagg.flags = FLAG_RESULT;
            hdr.inagg.copy = 0;
            hdr.inagg.slot = 0;
            hdr.inagg.sequence = 0;
            hdr.inagg.element_count = 0;
            hdr.inagg.block_exponent = 0;
            hdr.inagg.next_exponent = NO_EXPONENT;
            hdr.inagg.prio = 0;
            hdr.inagg.status = 0;
            hdr.inagg.reserved = 0;
            if (reason == 0) {
                hdr.inagg.msg_type = MSG_JOIN_ACK;
                hdr.inagg.slot = (bit<15>)meta.slots;
                hdr.inagg.sequence = (bit<32>)meta.workers;
                hdr.inagg.reserved = meta.job_lanes;
                // the granted session in Priority and Status (InaggHeader.ACK_SESSION_OFFSET)
                hdr.inagg.prio = meta.session[15:8];
                hdr.inagg.status = meta.session[7:0];
                if (meta.mode == MODE_SLOT) {
                    inagg_counters.count(C_JOINS);
                } else {
                    esa_counters.count(E_JOINS);
                }
            } else {
                hdr.inagg.msg_type = MSG_REJECT;
                hdr.inagg.status = reason;
                hdr.inagg.reserved = meta.session;
                if (reason == REJECT_STALE_SESSION) {
                    // started by the control plane: the data plane keeps no membership (SESSION_CAUSE_CONTROL_PLANE)
                    hdr.inagg.sequence = 0xFFFFFFFF;
                }
                // an unknown job's REJECT in inagg_counters (unknown_job() sets MODE_SLOT)
                if (meta.mode == MODE_SLOT) {
                    inagg_counters.count(C_REJECTS);
                } else {
                    esa_counters.count(E_REJECTS);
                }
            }
#include "generated/inagg_v1model_lane_invalidate.p4"
            standard_metadata.egress_spec = standard_metadata.ingress_port;
            return;
        }
        // A RESULT is malformed from a worker of the slot protocol; for an ESA job it may be its server's. Flags bit
        // 7 is reserved: an AGGREGATE with it set is malformed (docs/wire-format.md).
        if (hdr.inagg.msg_type != MSG_AGGREGATE
                || ((hdr.inagg.flags & FLAG_RESULT) != 0 && meta.mode == MODE_SLOT)
                || (hdr.inagg.flags & FLAG_RESERVED) != 0) {
            inagg_counters.count(C_DROP_MALFORMED);
            return;
        }
        meta.collective = hdr.inagg.flags[4:3];
        meta.op = hdr.inagg.flags[6:5];
        meta.owner = hdr.inagg.prio ++ hdr.inagg.status;

        // Job table
        if (meta.job_found == 0) {
            inagg_counters.count(C_DROP_UNKNOWN_JOB);
            return;
        }

        // ESA and ATP jobs carry ALL_REDUCE SUM only here (the software EsaSwitch carries every collective): any
        // other collective or op is unsupported. A worker's packet that EsaAggregation.fromWorker would admit (worker
        // id in range, its registered source, the job's session) is answered with REJECT UNSUPPORTED_COLLECTIVE, so
        // that the worker fails at once instead of at its peer timeout; a reserved value is dropped unanswered.
        if (meta.mode != MODE_SLOT && (meta.collective != COLLECTIVE_ALL_REDUCE || meta.op != OP_SUM)) {
            inagg_counters.count(C_DROP_UNSUPPORTED);
            if ((hdr.inagg.flags & FLAG_RESULT) == 0 && hdr.inagg.worker_id < meta.workers && meta.source_ok == 1
                    && hdr.inagg.reserved == meta.session
                    && meta.collective != COLLECTIVE_RESERVED && meta.op != OP_RESERVED) {
                reject_aggregate(REJECT_UNSUPPORTED_COLLECTIVE, COLLECTIVE_AND_OP, 0);
            }
            return;
        }
        if (meta.mode != MODE_SLOT) {
            // ---- ESA and ATP jobs: AggregationNode.onMessage from the job table on (docs/esa.md). ----
            meta.bitmap_words = (meta.workers + 31) >> 5;
            // AggregatorPool.index: (sequence + job * 0x9E3779B1) mod N, the product taken mod N by the control plane.
            meta.agg_index = meta.pool_base + ((hdr.inagg.sequence + meta.hash_offset) & meta.pool_mask);
            // AggregatorPool.holds / isFree / holderJob / holderSequence / holderPriority / acked: one read of key_reg.
            key_reg.read(meta.key, meta.agg_index);
            meta.holder_seq = meta.key[63:32];
            meta.holder_job = meta.key[31:16];
            meta.holder_prio = meta.key[15:8];
            meta.holder_state = meta.key[7:0];
            bool holds = meta.holder_state != STATE_FREE && meta.holder_job == hdr.inagg.job_id
                && meta.holder_seq == hdr.inagg.sequence;

            if ((hdr.inagg.flags & FLAG_RESULT) != 0) {
                // EsaAggregation.fromServer: from the job's server only; frees the block's aggregator if it holds it (ATP's
                // acknowledgement, AggregatorPool.release) and multicasts the result as it came to the workers.
                meta.server_ok = 0;
                server_source.apply();
                if (meta.server_ok == 0) {
                    esa_counters.count(E_DROP_SOURCE_MISMATCH);
                    return;
                }
                if (holds) {
                    key_reg.write(meta.agg_index, 64w0);
                }
                esa_counters.count(E_ACKS);
                meta.is_multicast = 1;
                meta.esa_out = ESA_OUT_ACK;
                standard_metadata.mcast_grp = meta.mcast_grp;
                return;
            }
            // EsaAggregation.fromWorker: worker id and source, then the job's lanes.
            if (hdr.inagg.worker_id >= meta.workers) {
                esa_counters.count(E_DROP_UNKNOWN_WORKER);
                return;
            }
            if (meta.source_ok == 0) {
                esa_counters.count(E_DROP_SOURCE_MISMATCH);
                return;
            }
            if (hdr.inagg.element_count > meta.job_lanes) {
                esa_counters.count(E_DROP_BAD_SIZE);
                return;
            }
            // EsaSwitch.effectivePriority
            if (meta.priority_from_header == 1) {
                meta.effective_priority = hdr.inagg.prio;
            } else {
                meta.effective_priority = meta.table_priority;
            }
            meta.tomb_key = 16w1 ++ hdr.inagg.job_id ++ hdr.inagg.sequence;

            if ((hdr.inagg.flags & FLAG_RETRANSMIT) != 0) {
                // A retransmission never allocates. If the aggregator holds its block, the partial is flushed to the
                // server first (EsaAggregation.evict FLUSHED: tombstone, free); the packet follows it as a RAW. Two
                // packets from one: the flush group replicates to the server twice, the PARTIAL replica first.
                hdr.inagg.status = REASON_RETRANSMIT;
                esa_counters.count(E_FALLBACK_RETRANSMIT);
                if (holds && meta.holder_state == STATE_HELD) {
                    esa_counters.count(E_FLUSHES);
                    meta.read_out = 1;
                    meta.p_reason = REASON_FLUSHED;
                    meta.p_from_agg = 1;
                    meta.esa_out = ESA_OUT_FLUSH;
                    standard_metadata.mcast_grp = meta.flush_grp;
                    // AggregatorPool.release(i, tombstone = true)
                    tomb_reg.write(meta.agg_index, meta.tomb_key);
                    key_reg.write(meta.agg_index, 64w0);
                } else {
                    meta.esa_out = ESA_OUT_RAW;
                    standard_metadata.egress_spec = meta.server_port;
                }
            } else if (holds) {
                if (meta.holder_state == STATE_ACKED) {
                    // ATP: complete and waiting for the server's result
                    esa_counters.count(E_DUPLICATES);
                    return;
                }
                contribute = true;
            } else {
                // AggregatorPool.isTombstoned: the block was evicted from or diverted at this aggregator; its
                // stragglers follow it to the server.
                tomb_reg.read(meta.tomb, meta.agg_index);
                if (meta.tomb == meta.tomb_key) {
                    hdr.inagg.status = REASON_TOMBSTONE;
                    esa_counters.count(E_FALLBACK_TOMBSTONE);
                    meta.esa_out = ESA_OUT_RAW;
                    standard_metadata.egress_spec = meta.server_port;
                    return;
                }
                // EsaSwitch.preempts: a free aggregator is taken; a newer block of the holder's own job always takes
                // it; another job's only under ESA and with a strictly higher priority.
                bool takes = true;
                if (meta.holder_state != STATE_FREE) {
                    if (meta.holder_job == hdr.inagg.job_id) {
                        bit<32> esa_age = hdr.inagg.sequence - meta.holder_seq;
                        takes = esa_age != 0 && esa_age[31:31] == 0;
                    } else {
                        takes = meta.mode == MODE_ESA && meta.effective_priority > meta.holder_prio;
                    }
                }
                if (!takes) {
                    // Collision fallback: the packet to its job's server as it came (RAW, COLLISION);
                    // AggregatorPool.tombstone remembers the block.
                    hdr.inagg.status = REASON_COLLISION;
                    esa_counters.count(E_FALLBACK_COLLISION);
                    meta.esa_out = ESA_OUT_RAW;
                    standard_metadata.egress_spec = meta.server_port;
                    tomb_reg.write(meta.agg_index, meta.tomb_key);
                    return;
                }
                if (meta.holder_state == STATE_HELD) {
                    // EsaAggregation.evict (PREEMPTED, or STALE for an older block of the same job): the holder's partial
                    // leaves in this packet, to the holder's server, while this packet's lanes take the aggregator.
                    meta.read_out = 1;
                    meta.p_from_agg = 1;
                    meta.esa_out = ESA_OUT_PARTIAL;
                    if (meta.holder_job == hdr.inagg.job_id) {
                        meta.p_reason = REASON_STALE;
                        esa_counters.count(E_STALE_EVICTIONS);
                    } else {
                        meta.p_reason = REASON_PREEMPTED;
                        esa_counters.count(E_PREEMPTIONS);
                    }
                    // AggregatorPool.release(i, tombstone = true)
                    tomb_reg.write(meta.agg_index, 16w1 ++ meta.holder_job ++ meta.holder_seq);
                }
                // An acknowledged holder (ATP) is released without a message: AggregatorPool.release(i, false).
                allocate = true;
            }

            if (meta.read_out == 1) {
                // EsaAggregation.sendPartial, read-out of the holder before anything overwrites it: lanes, max Next
                // Exponent, slot field, flags, block exponent, the holder job's session, bitmap words (B of the holder's
                // job) and server port.
                width_reg.read(meta.p_lanes, meta.agg_index);
                exp_reg.read(meta.p_exp, meta.agg_index);
                block_reg.read(meta.block, meta.agg_index);
                holder_reg.read(meta.holder, meta.agg_index);
                meta.p_job = meta.holder_job;
                meta.p_seq = meta.holder_seq;
                meta.p_prio = meta.holder_prio;
                meta.p_slot_field = meta.block[31:16];
                meta.p_flags = meta.block[15:8];
                meta.p_block_exp = meta.block[7:0];
                meta.p_session = meta.holder[31:16];
                meta.p_words = (bit<16>)meta.holder[15:9];
                if (meta.esa_out == ESA_OUT_PARTIAL) {
                    standard_metadata.egress_spec = meta.holder[8:0];
                }
#include "generated/inagg_v1model_esa_bitmap_read.p4"
            }
            if (allocate) {
                // AggregatorPool.allocate: key (with the effective priority), count 1, bitmap {w}, the block's lane
                // count, slot field, INT32 flag and block exponent, Next Exponent; lanes written below.
                key_reg.write(meta.agg_index,
                    hdr.inagg.sequence ++ hdr.inagg.job_id ++ meta.effective_priority ++ STATE_HELD);
                count_reg.write(meta.agg_index, 16w1);
                width_reg.write(meta.agg_index, hdr.inagg.element_count);
                exp_reg.write(meta.agg_index, hdr.inagg.next_exponent);
                block_reg.write(meta.agg_index,
                    hdr.inagg.copy ++ hdr.inagg.slot ++ (hdr.inagg.flags & FLAG_INT32) ++ hdr.inagg.block_exponent);
                holder_reg.write(meta.agg_index, meta.session ++ meta.bitmap_words[6:0] ++ meta.server_port);
                meta.worker_bit = (bit<32>)1 << hdr.inagg.worker_id[4:0];
                bit<16> own_word = hdr.inagg.worker_id >> 5;
                // Every word cleared, then the worker's bit in its own word (no ?: in extern arguments).
                seen_reg.write((meta.agg_index << 3) + 0, 32w0);
                seen_reg.write((meta.agg_index << 3) + 1, 32w0);
                seen_reg.write((meta.agg_index << 3) + 2, 32w0);
                seen_reg.write((meta.agg_index << 3) + 3, 32w0);
                seen_reg.write((meta.agg_index << 3) + 4, 32w0);
                seen_reg.write((meta.agg_index << 3) + 5, 32w0);
                seen_reg.write((meta.agg_index << 3) + 6, 32w0);
                seen_reg.write((meta.agg_index << 3) + 7, 32w0);
                seen_reg.write((meta.agg_index << 3) + (bit<32>)own_word, meta.worker_bit);
                meta.lane_op = LANE_WRITE;
                esa_counters.count(E_ALLOCATIONS);
                esa_counters.count(E_CONTRIBUTIONS);
            }
            if (contribute) {
                // AggregatorPool.lanes(i) != laneCount: the block keeps its first packet's lane count.
                width_reg.read(meta.round_lanes, meta.agg_index);
                if (meta.round_lanes != hdr.inagg.element_count) {
                    esa_counters.count(E_DROP_BAD_SIZE);
                    return;
                }
                // AggregatorPool.seenAction: set the worker's bit; already set = a duplicate, nothing changes.
                meta.seen_index = (meta.agg_index << 3) + (bit<32>)(hdr.inagg.worker_id >> 5);
                meta.worker_bit = (bit<32>)1 << hdr.inagg.worker_id[4:0];
                seen_reg.read(meta.seen_word, meta.seen_index);
                if ((meta.seen_word & meta.worker_bit) != 0) {
                    esa_counters.count(E_DUPLICATES);
                    return;
                }
                seen_reg.write(meta.seen_index, meta.seen_word | meta.worker_bit);
                // AggregatorPool.contribute: one more contributor; lanes below, exponent after them.
                count_reg.read(meta.count, meta.agg_index);
                meta.count = meta.count + 1;
                count_reg.write(meta.agg_index, meta.count);
                meta.lane_op = LANE_ADD;
                esa_counters.count(E_CONTRIBUTIONS);
            }

#include "generated/inagg_v1model_esa_lanes.p4"

            if (contribute) {
                // AggregatorPool.contribute: max Next Exponent (signed).
                exp_reg.read(meta.exponent, meta.agg_index);
                if ((int<8>)hdr.inagg.next_exponent > (int<8>)meta.exponent) {
                    meta.exponent = hdr.inagg.next_exponent;
                    exp_reg.write(meta.agg_index, meta.exponent);
                }
                if (meta.count == meta.workers) {
                    // EsaAggregation.complete: the COMPLETE PARTIAL carries the sums in the header lanes, the stored slot
                    // field, flags and block exponent, the allocation's priority and the full bitmap.
                    esa_counters.count(E_COMPLETIONS);
                    esa_counters.count(E_RESULT_COPIES);
                    block_reg.read(meta.block, meta.agg_index);
                    meta.p_job = hdr.inagg.job_id;
                    meta.p_session = meta.session;
                    meta.p_seq = hdr.inagg.sequence;
                    meta.p_prio = meta.holder_prio;
                    meta.p_lanes = meta.round_lanes;
                    meta.p_exp = meta.exponent;
                    meta.p_slot_field = meta.block[31:16];
                    meta.p_flags = meta.block[15:8];
                    meta.p_block_exp = meta.block[7:0];
                    meta.p_words = meta.bitmap_words;
                    meta.p_reason = REASON_COMPLETE;
#include "generated/inagg_v1model_esa_bitmap_read.p4"
                    if (meta.mode == MODE_ESA) {
                        // EsaAggregation.multicastFromPool: the request's header with the stored flags, the block's lanes
                        // and max Next Exponent, one replica per worker (worker id = rid) and the server's replica
                        // (SERVER_RID, rewritten into the COMPLETE PARTIAL in egress); the aggregator is free at once.
                        hdr.inagg.flags = meta.p_flags | FLAG_RESULT;
                        hdr.inagg.element_count = meta.round_lanes;
                        hdr.inagg.next_exponent = meta.exponent;
                        meta.is_multicast = 1;
                        meta.esa_out = ESA_OUT_COMPLETE;
                        standard_metadata.mcast_grp = meta.mcast_grp;
                        key_reg.write(meta.agg_index, 64w0);
                    } else {
                        // ATP: the sum to the server only (AggregatorPool.markAcked); the aggregator stays held until
                        // the server's result comes back through the switch (EsaAggregation.fromServer).
                        meta.esa_out = ESA_OUT_PARTIAL;
                        standard_metadata.egress_spec = meta.server_port;
                        key_reg.write(meta.agg_index, meta.key[63:8] ++ STATE_ACKED);
                    }
                }
            }
            return;
        }
        // Worker check: id below the job's workers and served here (upstream jobs: local), source equal to the
        // registered one.
        if (hdr.inagg.worker_id >= meta.workers || meta.local == 0) {
            inagg_counters.count(C_DROP_UNKNOWN_WORKER);
            return;
        }
        if (meta.source_ok == 0) {
            inagg_counters.count(C_DROP_SOURCE_MISMATCH);
            return;
        }
        // Session check (SlotAggregation.aggregate): a packet of another run of the job never touches its registers;
        // its sender gets a REJECT naming the current session, so that the old run fails at once.
        // (Sequence 0xFFFFFFFF: the session was started by the control plane, SESSION_CAUSE_CONTROL_PLANE.)
        if (hdr.inagg.reserved != meta.session) {
            inagg_counters.count(C_DROP_STALE_SESSION);
            reject_aggregate(REJECT_STALE_SESSION, 0, 0xFFFFFFFF);
            return;
        }
        // Collective and op (docs/wire-format.md "Collectives and reduce ops"): the reserved values are unsupported
        // (dropped unanswered: no node carries them), and so is anything but ALL_REDUCE SUM on an upstream job (this
        // program sends only sums up; the software two-level switch carries every collective), answered with REJECT
        // UNSUPPORTED_COLLECTIVE naming them, so that the worker fails at once; the Owner of a REDUCE_SCATTER or
        // ALL_GATHER must be one of the job's workers.
        if (meta.collective == COLLECTIVE_RESERVED || meta.op == OP_RESERVED) {
            inagg_counters.count(C_DROP_UNSUPPORTED);
            return;
        }
        if (meta.upstream == 1 && (meta.collective != COLLECTIVE_ALL_REDUCE || meta.op != OP_SUM)) {
            inagg_counters.count(C_DROP_UNSUPPORTED);
            reject_aggregate(REJECT_UNSUPPORTED_COLLECTIVE, COLLECTIVE_AND_OP, 0);
            return;
        }
        if (meta.collective != COLLECTIVE_ALL_REDUCE && meta.owner >= meta.workers) {
            inagg_counters.count(C_DROP_UNKNOWN_WORKER);
            return;
        }
        // Slot check: slot within the job's range, lanes within the job's.
        if ((bit<16>)hdr.inagg.slot >= meta.slots) {
            inagg_counters.count(C_DROP_BAD_SLOT);
            return;
        }
        if (hdr.inagg.element_count > meta.job_lanes) {
            inagg_counters.count(C_DROP_BAD_SIZE);
            return;
        }
        // ALL_GATHER: the Owner sends the lanes, every other worker a header-only contribution.
        meta.header_only = 0;
        if (meta.collective == COLLECTIVE_ALL_GATHER) {
            if ((hdr.inagg.worker_id == meta.owner) == (hdr.inagg.element_count == 0)) {
                inagg_counters.count(C_DROP_BAD_SIZE);
                return;
            }
            if (hdr.inagg.element_count == 0) {
                meta.header_only = 1;
            }
        }
        meta.copy_index = (((bit<32>)meta.slot_base + (bit<32>)hdr.inagg.slot) << 1) | (bit<32>)hdr.inagg.copy;

        // SlotPool.roundAction on (used, seq, count, width) of the copy; sequences compare as serial numbers.
        used_reg.read(meta.used, meta.copy_index);
        seq_reg.read(meta.round_seq, meta.copy_index);
        count_reg.read(meta.count, meta.copy_index);
        width_reg.read(meta.round_lanes, meta.copy_index);
        bit<32> age = hdr.inagg.sequence - meta.round_seq;
        bool newer = age != 0 && age[31:31] == 0;
        if (meta.used == 0 || (newer && meta.count == meta.contributors)) {
            used_reg.write(meta.copy_index, 1);
            seq_reg.write(meta.copy_index, hdr.inagg.sequence);
            count_reg.write(meta.copy_index, 0);
            width_reg.write(meta.copy_index, hdr.inagg.element_count);
            meta.count = 0;
            meta.round_lanes = hdr.inagg.element_count;
            meta.round = ROUND_NEW;
        } else if (age == 0) {
            if (meta.count == meta.contributors) {
                meta.round = ROUND_COMPLETE;
            } else if (meta.round_lanes == hdr.inagg.element_count || meta.header_only == 1) {
                // (a header-only ALL_GATHER contribution neither sets nor checks the round's lane count)
                meta.round = ROUND_OPEN;
            } else if (meta.collective == COLLECTIVE_ALL_GATHER && meta.round_lanes == 0) {
                // the Owner's lanes after header-only contributions: they set the round's lane count
                width_reg.write(meta.copy_index, hdr.inagg.element_count);
                meta.round_lanes = hdr.inagg.element_count;
                meta.round = ROUND_OPEN;
            } else {
                meta.round = ROUND_BAD_SIZE;
            }
        } else if (age[31:31] == 1) {
            meta.round = ROUND_STALE;
        } else {
            meta.round = ROUND_VIOLATION;
        }

        if (meta.round == ROUND_STALE) {
            inagg_counters.count(C_DROP_STALE);
        } else if (meta.round == ROUND_VIOLATION) {
            inagg_counters.count(C_DROP_VIOLATION);
        } else if (meta.round == ROUND_BAD_SIZE) {
            inagg_counters.count(C_DROP_BAD_SIZE);
        } else if (meta.round == ROUND_COMPLETE && meta.upstream == 1) {
            // UpstreamForwarding.completedAgain: the switch holds only its workers' sum, not the result; the packet goes
            // to the job's server as it came, Status = RETRANSMIT (the server adds it or answers it).
            hdr.inagg.status = REASON_RETRANSMIT;
            meta.esa_out = ESA_OUT_RAW;
            standard_metadata.egress_spec = meta.server_port;
            inagg_counters.count(C_UPSTREAM_FORWARDS);
        } else if (meta.round == ROUND_COMPLETE) {
            // ResultMulticast.completedAgain: the stored result back to this worker alone, never added again. REDUCE_SCATTER
            // answers a worker other than the Owner as its result did: header-only (Element Count 0).
            exp_reg.read(meta.exponent, meta.copy_index);
            if (meta.collective == COLLECTIVE_REDUCE_SCATTER && hdr.inagg.worker_id != meta.owner) {
                meta.round_lanes = 0;
            }
#include "generated/inagg_v1model_lane_read.p4"
            hdr.inagg.flags = (hdr.inagg.flags & RESULT_KEEPS) | FLAG_RESULT;
            hdr.inagg.element_count = meta.round_lanes;
            hdr.inagg.next_exponent = meta.exponent;
            meta.dst_worker = hdr.inagg.worker_id;
            standard_metadata.egress_spec = standard_metadata.ingress_port;
            inagg_counters.count(C_RETRANSMIT_REPLIES);
        } else {
            // SlotPool.seenAction: set the worker's bit in this copy; if it was clear, clear it in the other copy.
            meta.seen_index = (meta.copy_index << 3) + (bit<32>)(hdr.inagg.worker_id >> 5);
            meta.other_seen_index = ((meta.copy_index ^ 1) << 3) + (bit<32>)(hdr.inagg.worker_id >> 5);
            meta.worker_bit = (bit<32>)1 << hdr.inagg.worker_id[4:0];
            seen_reg.read(meta.seen_word, meta.seen_index);
            if ((meta.seen_word & meta.worker_bit) != 0) {
                inagg_counters.count(C_DUPLICATES);
                return;
            }
            seen_reg.write(meta.seen_index, meta.seen_word | meta.worker_bit);
            seen_reg.read(meta.seen_word, meta.other_seen_index);
            seen_reg.write(meta.other_seen_index, meta.seen_word & ~meta.worker_bit);

            // SlotPool.countAction: one more contributor.
            count_reg.read(meta.count, meta.copy_index);
            meta.count = meta.count + 1;
            count_reg.write(meta.copy_index, meta.count);
            if (meta.count == 1) {
                meta.first = 1;
            } else {
                meta.first = 0;
            }

#include "generated/inagg_v1model_lane_add.p4"

            // SlotPool.exponentAction: the first contributor writes, the others max-reduce (signed).
            exp_reg.read(meta.exponent, meta.copy_index);
            if (meta.first == 1 || (int<8>)hdr.inagg.next_exponent > (int<8>)meta.exponent) {
                meta.exponent = hdr.inagg.next_exponent;
                exp_reg.write(meta.copy_index, meta.exponent);
            }
            inagg_counters.count(C_CONTRIBUTIONS);

            // Decision: the W-th contribution multicasts the sum (ResultMulticast.complete); others are absorbed.
            // Upstream jobs: the contributors-th sends it to the server instead (UpstreamForwarding.complete):
            // the PARTIAL header from metadata in egress (as for ESA), the running sums in the header lanes, then the
            // local bitmap's words.
            if (meta.count == meta.contributors && meta.upstream == 1) {
                meta.p_job = hdr.inagg.job_id;
                meta.p_session = meta.session;
                meta.p_slot_field = hdr.inagg.copy ++ hdr.inagg.slot;
                meta.p_seq = hdr.inagg.sequence;
                meta.p_lanes = meta.round_lanes;
                meta.p_flags = hdr.inagg.flags & FLAG_INT32;
                meta.p_block_exp = hdr.inagg.block_exponent;
                meta.p_exp = meta.exponent;
                meta.p_prio = hdr.inagg.prio;
                meta.p_reason = REASON_SUBTREE;
                meta.p_words = (meta.workers + 31) >> 5;
                if (meta.p_words > 0) { hdr.bitmap[0].setValid(); hdr.bitmap[0].value = meta.local_0; }
                if (meta.p_words > 1) { hdr.bitmap[1].setValid(); hdr.bitmap[1].value = meta.local_1; }
                if (meta.p_words > 2) { hdr.bitmap[2].setValid(); hdr.bitmap[2].value = meta.local_2; }
                if (meta.p_words > 3) { hdr.bitmap[3].setValid(); hdr.bitmap[3].value = meta.local_3; }
                if (meta.p_words > 4) { hdr.bitmap[4].setValid(); hdr.bitmap[4].value = meta.local_4; }
                if (meta.p_words > 5) { hdr.bitmap[5].setValid(); hdr.bitmap[5].value = meta.local_5; }
                if (meta.p_words > 6) { hdr.bitmap[6].setValid(); hdr.bitmap[6].value = meta.local_6; }
                if (meta.p_words > 7) { hdr.bitmap[7].setValid(); hdr.bitmap[7].value = meta.local_7; }
                meta.esa_out = ESA_OUT_PARTIAL;
                standard_metadata.egress_spec = meta.server_port;
                inagg_counters.count(C_UPSTREAM_PARTIALS);
            } else if (meta.count == meta.contributors) {
                // The result: the running sums in the header lanes; an ALL_GATHER completed by a header-only
                // contribution reads the Owner's stored lanes. REDUCE_SCATTER: egress cuts the lanes off every copy
                // but the Owner's.
                if (meta.header_only == 1) {
#include "generated/inagg_v1model_lane_read.p4"
                }
                hdr.inagg.flags = (hdr.inagg.flags & RESULT_KEEPS) | FLAG_RESULT;
                hdr.inagg.element_count = meta.round_lanes;
                hdr.inagg.next_exponent = meta.exponent;
                meta.is_multicast = 1;
                standard_metadata.mcast_grp = meta.mcast_grp;
            }
        }
    }
}

control InaggEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t standard_metadata) {
    // What is counted per copy sent: SwitchCounter RESULTS_SENT (slot jobs) at C_RESULTS_SENT, EsaCounter
    // RESULTS_SENT (ESA jobs) at E_RESULTS_SENT.
    COUNTER(32, CounterType.packets) egress_counters;
    COUNTER(32, CounterType.packets) esa_egress_counters;

    action set_switch_address(bit<48> mac, bit<32> ipv4) {
        meta.switch_mac = mac;
        meta.switch_ip = ipv4;
    }
    // The switch's own addresses, the source of everything it sends.
    table switch_address {
        actions = { set_switch_address; }
        default_action = set_switch_address(0, 0);
    }

    action set_endpoint(bit<48> mac, bit<32> ipv4, bit<16> udp_port) {
        hdr.ethernet.dst_addr = mac;
        hdr.ipv4.dst_addr = ipv4;
        hdr.udp.dst_port = udp_port;
    }
    action no_endpoint() {
        mark_to_drop(standard_metadata);
    }
    // Where each worker's results go; the port comes from the multicast node (or the request's ingress port).
    table worker_endpoint {
        key = {
            hdr.inagg.job_id: exact;
            meta.dst_worker: exact;
        }
        actions = { set_endpoint; no_endpoint; }
        default_action = no_endpoint();
        size = 65536;
    }

    // Where each ESA or upstream job's parameter server is (EsaJobConfig.parameterServerPeer,
    // UpstreamAggregation.parameterServerPeer); its port comes from the job table (RAW; upstream PARTIAL and RAW), the
    // holder's holder_reg (evicted PARTIAL) or the multicast node (COMPLETE, flush).
    table server_endpoint {
        key = { hdr.inagg.job_id: exact; }
        actions = { set_endpoint; no_endpoint; }
        default_action = no_endpoint();
        size = 1024;
    }

    apply {
        // ESA: which replicas go to the parameter server, and which of them become a PARTIAL. (Declared before the
        // first return: p4c's uninitialized_use analysis does not follow a local's initialiser past one.)
        bool to_server = false;
        bool partial = false;
        if (!hdr.inagg.isValid()) {
            return;
        }
        if (meta.esa_out == ESA_OUT_RAW) {
            to_server = true;
        } else if (meta.esa_out == ESA_OUT_PARTIAL) {
            to_server = true;
            partial = true;
        } else if (meta.esa_out == ESA_OUT_COMPLETE && standard_metadata.egress_rid == SERVER_RID) {
            to_server = true;
            partial = true;
        } else if (meta.esa_out == ESA_OUT_FLUSH) {
            to_server = true;
            if (standard_metadata.egress_rid == SERVER_RID) {
                // the RAW retransmission, after the flushed PARTIAL: the aggregator's read-out stays out of it
#include "generated/inagg_v1model_agg_invalidate.p4"
            } else {
                partial = true;
            }
        } else if (meta.esa_out == ESA_OUT_ACK && standard_metadata.egress_rid == SERVER_RID) {
            // the server's own result is not sent back to it
            mark_to_drop(standard_metadata);
            return;
        }
        if (partial) {
            // EsaWire.writePartialHeader: Type 5, Worker Id = bitmap words, Element Count = lanes + bitmap words,
            // Session = the block's job's session, Status = reason; lanes from the read-out (evicted, flushed) or the
            // sums.
            hdr.inagg.msg_type = MSG_PARTIAL;
            hdr.inagg.flags = meta.p_flags;
            hdr.inagg.job_id = meta.p_job;
            hdr.inagg.worker_id = meta.p_words;
            hdr.inagg.copy = meta.p_slot_field[15:15];
            hdr.inagg.slot = meta.p_slot_field[14:0];
            hdr.inagg.sequence = meta.p_seq;
            hdr.inagg.element_count = meta.p_lanes + meta.p_words;
            hdr.inagg.block_exponent = meta.p_block_exp;
            hdr.inagg.next_exponent = meta.p_exp;
            hdr.inagg.prio = meta.p_prio;
            hdr.inagg.status = meta.p_reason;
            hdr.inagg.reserved = meta.p_session;
            if (meta.p_from_agg == 1) {
#include "generated/inagg_v1model_lane_invalidate.p4"
            }
        } else {
            // Only a PARTIAL carries bitmap words.
            hdr.bitmap[0].setInvalid();
            hdr.bitmap[1].setInvalid();
            hdr.bitmap[2].setInvalid();
            hdr.bitmap[3].setInvalid();
            hdr.bitmap[4].setInvalid();
            hdr.bitmap[5].setInvalid();
            hdr.bitmap[6].setInvalid();
            hdr.bitmap[7].setInvalid();
        }
        if (to_server) {
            server_endpoint.apply();
        } else {
            if (meta.is_multicast == 1) {
                // One replica per worker, replication id = worker id: rewrite the worker id per copy.
                meta.dst_worker = standard_metadata.egress_rid;
                hdr.inagg.worker_id = standard_metadata.egress_rid;
                if (meta.mode == MODE_SLOT && meta.collective == COLLECTIVE_REDUCE_SCATTER
                        && standard_metadata.egress_rid != meta.owner) {
                    // REDUCE_SCATTER: the lanes to the Owner only; every other worker's copy is header-only (it frees
                    // the worker's slot); truncate below cuts the frame to the 20-byte message.
                    hdr.inagg.element_count = 0;
#include "generated/inagg_v1model_lane_invalidate.p4"
                }
                // ResultMulticast.complete / EsaAggregation.multicastFromPool, fromServer: one per copy
                if (meta.mode == MODE_SLOT) {
                    egress_counters.count(C_RESULTS_SENT);
                } else {
                    esa_egress_counters.count(E_RESULTS_SENT);
                }
            }
            if (meta.reply_to_sender == 1) {
                hdr.ethernet.dst_addr = meta.sender_mac;
                hdr.ipv4.dst_addr = meta.sender_ip;
                hdr.udp.dst_port = meta.sender_port;
            } else {
                worker_endpoint.apply();
            }
        }
        switch_address.apply();
        hdr.ethernet.src_addr = meta.switch_mac;
        hdr.ipv4.src_addr = meta.switch_ip;
        hdr.ipv4.diffserv = 0;
        hdr.ipv4.identification = 0;
        hdr.ipv4.flags = 3w2;
        hdr.ipv4.frag_offset = 0;
        hdr.ipv4.ttl = 64;
        hdr.ipv4.total_len = 48 + (hdr.inagg.element_count << 2);
        hdr.udp.src_port = INAGG_UDP_PORT;
        hdr.udp.length = 28 + (hdr.inagg.element_count << 2);
        hdr.udp.checksum = 0;
        // Exactly the datagram leaves: bytes the frame carried after it (an Ethernet trailer, left in the payload by
        // the parser and appended by the deparser) are cut off.
        truncate(34 + (bit<32>)hdr.udp.length);
    }
}

control InaggComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len, hdr.ipv4.identification,
              hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr,
              hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control InaggDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.inagg);
        packet.emit(hdr.lanes);
        packet.emit(hdr.agg);
        packet.emit(hdr.bitmap);
    }
}

V1Switch(InaggParser(), InaggVerifyChecksum(), InaggIngress(), InaggEgress(), InaggComputeChecksum(),
         InaggDeparser()) main;
