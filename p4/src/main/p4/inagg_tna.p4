/*
 * inagg switch for the Tofino Native Architecture (TNA, Tofino 1 and 2).
 *
 * The pipeline of org.inagg.p4.softswitch.SoftwareSwitch (slot jobs) and org.inagg.p4.esa.EsaSwitch (ESA jobs, a
 * shared aggregator pool with preemption and a parameter-server fallback), shaped for Tofino's constraints: each
 * register is touched by at most one RegisterAction per pass, stateful decisions flow forward through the stages, a
 * stateful ALU compares at most two things and answers one 32-bit word, and a pass carries TNA_LANES_PER_PASS lanes.
 * Where those constraints force a difference from the Java switches it is marked "TNA:" below and listed in
 * docs/p4.md. This program has not been compiled with bf-p4c in this repository (no Tofino SDE here); see docs/p4.md
 * for the expected stage use.
 *
 *   ingress parser   [recirculation header, on TNA_RECIRC_PORT] Ethernet / IPv4 / UDP to INAGG_UDP_PORT / inagg header
 *                    / the leading chunk of up to TNA_LANES_PER_PASS lanes (the rest of the packet is payload)
 *   ingress pass 0   checks -> job_table -> worker_source -> per job mode:
 *                      slot: seen (seq-tagged word) -> round+count -> exponent -> lanes of chunk 0
 *                      ESA:  key (claim) -> bitmap, holder swap registers -> exponent, tombstone -> lanes (swap)
 *                    -> decision (multicast, unicast reply, PARTIAL or RAW to the server, recirculate, drop)
 *   ingress pass >0  (recirculated, decision carried in the recirculation header) consume chunk c / harvest chunk c /
 *                    release an ESA aggregator, then recirculate again or deliver
 *   egress           per replica: worker id = egress_rid, destination from worker_endpoint or server_endpoint,
 *                    the server's replica of an ESA completion rewritten into a COMPLETE PARTIAL; source =
 *                    switch_address
 *
 * Lanes: 32 per pass; a packet of 32 * P lanes (P <= TNA_MAX_CHUNKS = 8, i.e. up to 256 lanes) is aggregated by P
 * passes through a recirculation port, a completing packet or a retransmission reply then reads the result back by
 * P - 1 harvest passes (docs/p4.md, "Lanes on TNA").
 *
 * Compile:  bf-p4c --target tofino2 --arch tna -o inagg_tna p4/src/main/p4/inagg_tna.p4     (see docs/p4.md for
 *           Tofino 1: -DTNA_RECIRC_PORT=68 is the default, Tofino 2 needs the recirculation port of its pipe 0)
 * Configure with the BF Runtime script org.inagg.p4.control.JobTable#bfrtPython emits.
 */
#include <core.p4>
#include <tna.p4>

// Keep equal to org.inagg.p4.control.InaggP4 (InaggP4Test checks).
#define INAGG_UDP_PORT 47000
#define POOL_SLOTS 4096
#define POOL_COPIES 8192
#define MAX_WORKERS 256
#define BITMAP_WORDS 8
#define TNA_LANES 32
#define TNA_MAX_CHUNKS 8
#define TNA_LANE_ROWS 32768
#define ESA_AGGREGATORS 4096
#define ESA_MAX_WORKERS 32
// The port whose packets come back into ingress carrying the recirculation header: Tofino 1's pipe-0 recirculation
// port by default; any port in loopback mode of the same pipe works (its queue must keep packets in order).
#ifndef TNA_RECIRC_PORT
#define TNA_RECIRC_PORT 68
#endif

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IP_PROTO_UDP = 17;

const bit<4> MSG_AGGREGATE = 1;
const bit<4> MSG_JOIN = 2;
const bit<4> MSG_JOIN_ACK = 3;
const bit<4> MSG_REJECT = 4;
const bit<4> MSG_PARTIAL = 5;               // org.inagg.p4.esa.EsaWire.TYPE_PARTIAL
const bit<8> FLAG_RESULT = 0x01;
const bit<8> FLAG_RETRANSMIT = 0x02;
const bit<8> FLAG_INT32 = 0x04;
const bit<8> FLAG_RESERVED = 0x80;          // must be 0 in an AGGREGATE, else malformed
const bit<8> RESULT_KEEPS = 0x7C;           // a RESULT keeps the request's INT32 flag, collective and op
const bit<8> NO_EXPONENT = 0x80;

// Collectives and reduce ops of an AGGREGATE: Flags bits 3-4 and 5-6 (docs/wire-format.md "Collectives and reduce
// ops"); value 3 of either is reserved (C_DROP_UNSUPPORTED). A valid one this program does not carry on the packet's
// job is counted so too, and answered with a REJECT UNSUPPORTED_COLLECTIVE (reject_unsupported).
const bit<2> COLLECTIVE_ALL_REDUCE = 0;
const bit<2> COLLECTIVE_REDUCE_SCATTER = 1;
const bit<2> COLLECTIVE_ALL_GATHER = 2;
const bit<2> COLLECTIVE_RESERVED = 3;
const bit<2> OP_SUM = 0;
const bit<2> OP_MIN = 1;
const bit<2> OP_MAX = 2;
const bit<2> OP_RESERVED = 3;
const bit<8> REJECT_UNKNOWN_JOB = 1;
const bit<8> REJECT_WORKER_ID_OUT_OF_RANGE = 2;
const bit<8> REJECT_WORKER_COUNT_MISMATCH = 3;
const bit<8> REJECT_STALE_SESSION = 4;
const bit<8> REJECT_UNSUPPORTED_COLLECTIVE = 5;
const bit<8> COLLECTIVE_AND_OP = 0x78;      // what an UNSUPPORTED_COLLECTIVE REJECT keeps of the AGGREGATE's Flags

// EsaWire reason codes (Status of a RAW or a PARTIAL)
const bit<8> REASON_COLLISION = 1;
const bit<8> REASON_RETRANSMIT = 2;
const bit<8> REASON_TOMBSTONE = 3;
const bit<8> REASON_PREEMPTED = 4;
const bit<8> REASON_FLUSHED = 5;
const bit<8> REASON_COMPLETE = 6;

// Which round_reg action a slot packet ran (meta.round_path), chosen by round_dispatch from the seen answer
const bit<2> PATH_NEWER = 1;                // seen started the word afresh: round_contribute (may start a round)
const bit<2> PATH_FRESH = 2;                // the worker's bit was clear in the word: round_count
const bit<2> PATH_DUP = 3;                  // the worker's bit was set in the word: round_inspect

// What the lane registers do in this pass
const bit<3> LANE_NONE = 0;
const bit<3> LANE_WRITE = 1;
const bit<3> LANE_ADD = 2;
const bit<3> LANE_READ = 3;
const bit<3> LANE_SWAP = 4;
const bit<3> LANE_MIN = 5;
const bit<3> LANE_MAX = 6;

// Recirculation phases (recirc_t.phase)
const bit<8> PHASE_CONSUME = 1;             // chunk c of the packet leads: apply the lane operation, drop it
const bit<8> PHASE_HARVEST = 2;             // read chunk c of the result from the registers, put it in front
const bit<8> PHASE_RELEASE = 3;             // ESA: free the completed aggregator, then multicast

// What a recirculated packet does once its chunks are done (recirc_t.outcome)
const bit<8> OUTCOME_ABSORB = 0;            // a contribution: nothing leaves
const bit<8> OUTCOME_MULTICAST = 1;         // the result, to the job's multicast group
const bit<8> OUTCOME_UNICAST = 2;           // the stored result, back to the requesting worker
const bit<8> OUTCOME_REJECT = 3;            // a REJECT whose chunks are all consumed: back to the sender, header only

// First byte of what ingress hands to egress
const bit<8> KIND_BRIDGE = 0;
const bit<8> KIND_MIRROR_RAW = 1;           // ESA flush: the untouched retransmission, mirrored to the server
const MirrorType_t MIRROR_TYPE_I2E = 1;

// Where egress sends a packet (bridge_t.dst)
const bit<2> DST_WORKER = 0;                // worker_endpoint (job, worker)
const bit<2> DST_SERVER = 1;                // server_endpoint (job): a PARTIAL or a RAW
const bit<2> DST_SENDER = 2;                // addresses already swapped in ingress (JOIN answers)

// Replication id of the parameter server's node in an ESA job's multicast group (worker ids are < MAX_WORKERS)
const bit<16> ESA_SERVER_RID = 0xFFFF;

// Indices of inagg_counters: org.inagg.p4.softswitch.SwitchCounter type id - 200
const bit<8> C_RECEIVED = 1;
const bit<8> C_CONTRIBUTIONS = 2;
const bit<8> C_RESULTS_SENT = 3;
const bit<8> C_RETRANSMIT_REPLIES = 4;
const bit<8> C_DUPLICATES = 5;
const bit<8> C_DROP_MALFORMED = 6;
const bit<8> C_DROP_UNKNOWN_JOB = 7;
const bit<8> C_DROP_UNKNOWN_WORKER = 8;
const bit<8> C_DROP_SOURCE_MISMATCH = 9;
const bit<8> C_DROP_BAD_SLOT = 10;
const bit<8> C_DROP_BAD_SIZE = 11;
const bit<8> C_DROP_STALE = 12;
const bit<8> C_DROP_VIOLATION = 13;
const bit<8> C_JOINS = 15;
const bit<8> C_REJECTS = 16;
const bit<8> C_DROP_STALE_SESSION = 19;
// A JOIN that does not show its worker's credential (join_credential), for every kind of job (inagg_v1model.p4).
const bit<8> C_DROP_BAD_CREDENTIAL = 24;
// A collective or op this program does not carry: the reserved values (dropped unanswered), anything else but
// ALL_REDUCE SUM on ESA jobs, and (TNA:) REDUCE_SCATTER on jobs of more than one chunk (docs/p4.md; an admitted packet
// is answered with REJECT UNSUPPORTED_COLLECTIVE). EsaCounter.DROP_UNSUPPORTED (325) is this cell.
const bit<8> C_DROP_UNSUPPORTED = 25;

// Indices of esa_counters and esa_egress_counters: org.inagg.p4.esa.EsaCounter type id - 300 (ESA jobs only; what
// is counted before the job's mode is known is in inagg_counters, as in inagg_v1model.p4). CONTRIBUTIONS and
// ALLOCATIONS have a counter each (esa_contributions, esa_allocations): one packet adds to them besides its outcome.
const bit<8> E_CONTRIBUTIONS = 2;
const bit<8> E_ALLOCATIONS = 3;
const bit<8> E_COMPLETIONS = 4;
const bit<8> E_RESULTS_SENT = 5;
const bit<8> E_PREEMPTIONS = 6;
const bit<8> E_FLUSHES = 8;
const bit<8> E_FALLBACK_COLLISION = 9;
const bit<8> E_FALLBACK_RETRANSMIT = 10;
const bit<8> E_FALLBACK_TOMBSTONE = 11;
const bit<8> E_DUPLICATES = 12;
const bit<8> E_RESULT_COPIES = 13;
const bit<8> E_DROP_UNKNOWN_WORKER = 19;
const bit<8> E_DROP_BAD_SIZE = 20;
const bit<8> E_JOINS = 22;
const bit<8> E_REJECTS = 23;
const bit<8> E_DROP_SOURCE_MISMATCH = 26;

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
    bit<8>  prio;           // Priority; not named "priority", a keyword of P4_16 (p4c's lexer)
    bit<8>  status;
    bit<16> reserved;
}

header lane_t {
    bit<32> value;
}

// The JOIN credential a JOIN shows in its two lanes (InaggHeader.JOIN_CREDENTIAL_LANES): parsed as a header of its
// own, so the answer can leave without it (a parsed header that is not emitted is cut; unparsed lanes could not be).
header join_credential_t {
    bit<32> high;
    bit<32> low;
}

// The one bitmap word of an ESA PARTIAL (EsaWire: B = 1 for W <= 32), after the lanes.
header bitmap_t {
    bit<32> word;
}

// Ingress to egress: what egress must do with this packet.
header bridge_t {
    bit<8>  kind;            // KIND_BRIDGE
    bit<1>  is_multicast;
    bit<2>  dst;             // DST_WORKER / DST_SERVER / DST_SENDER
    bit<1>  esa_complete;    // the server's replica becomes a COMPLETE PARTIAL
    bit<1>  scatter;         // REDUCE_SCATTER result: every replica but the owner's leaves header-only
    bit<3>  _pad;
    bit<16> dst_worker;
    bit<16> owner;           // REDUCE_SCATTER: the worker whose replica keeps the lanes
    bit<32> full_mask;       // ESA completion: the bitmap word of all W workers
}

// Ingress mirror (ESA flush): the retransmission as it came, for the job's server.
header mirror_h {
    bit<8>  kind;            // KIND_MIRROR_RAW
}

// Ingress to ingress, in front of the Ethernet header of a recirculated packet: the decision of pass 0 and where
// the packet is in its passes. Never leaves the switch (recirculation bypasses egress).
header recirc_t {
    bit<8>   phase;          // PHASE_CONSUME / PHASE_HARVEST / PHASE_RELEASE
    bit<8>   chunk;          // the chunk this pass touches
    bit<8>   chunks;         // P: chunks of the packet
    bit<8>   lane_op;        // LANE_*: what the consume passes do with their chunk
    bit<32>  lane_row;       // row of chunk 0 in the lane registers (chunk c: lane_row + c)
    bit<8>   outcome;        // OUTCOME_*
    bit<8>   _pad0;
    bit<16>  mcast_grp;
    bit<7>   _pad1;
    PortId_t reply_port;     // the worker's port (OUTCOME_UNICAST, OUTCOME_REJECT)
    bit<32>  esa_index;      // PHASE_RELEASE: the aggregator (its key at ESA_KEY_BASE + esa_index)
    bit<32>  esa_tag;
    bit<32>  full_mask;
}

struct headers_t {
    bridge_t   bridge;
    mirror_h   mirror;
    recirc_t   recirc;
    ethernet_t ethernet;
    ipv4_t     ipv4;
    udp_t      udp;
    inagg_t    inagg;
    join_credential_t credential;
#include "generated/inagg_tna_lane_headers.p4"
    bitmap_t   bitmap;
}

struct ingress_metadata_t {
    bit<1>   job_found;
    bit<16>  session;            // the job's session (docs/sessions.md), from its job table row
    bit<1>   esa;                // the job's mode: 0 slot protocol, 1 ESA pool
    bit<16>  workers;
    bit<16>  slots;              // slot jobs: slots; ESA jobs: the window the JOIN_ACK offers
    bit<16>  slot_base;
    bit<16>  job_lanes;
    bit<16>  mcast_grp;
    bit<32>  lane_base;
    bit<8>   chunks;
    bit<2>   chunk_shift;
    bit<32>  hash_offset;
    bit<32>  job_tag;
    bit<32>  full_mask;
    bit<32>  rank;
    bit<1>   rank_from_header;
    MirrorId_t ps_session;
    bit<1>   source_ok;
    bit<1>   credential_required;   // join_credential: the worker's JOINs must show credential_high ++ credential_low
    bit<32>  credential_high;
    bit<32>  credential_low;
    bit<32>  copy_index;
    bit<32>  pool_index;         // round_reg, exp_reg: the copy (slot jobs) or POOL_COPIES + aggregator (ESA)
    bit<32>  key_index;          // seen1_reg: the seen word (slot jobs) or ESA_KEY_BASE + aggregator (ESA key)
    bit<32>  seen_index;
    bit<32>  worker_bit;
    bit<32>  seen;               // the seen word's old bits (0: the word was started afresh)
    bit<2>   round_path;         // PATH_*
    bit<32>  round;              // the round_reg answer (see round_contribute, round_count, round_inspect)
    // Signed copies for the seq-tagged seen words / ESA keys (seen_word_t is int<32>: the seen stage compares
    // sequences in a signed or an unsigned frame, see SEEN_ACTION)
    int<32>  seq_s;
    int<32>  worker_bit_s;
    int<32>  esa_tag_s;
    int<32>  rank_s;
    bit<3>   lane_op;
    bit<32>  lane_row;
    // the AGGREGATE's collective, op and Owner (Priority ++ Status); header_only: an ALL_GATHER contribution without
    // lanes; harvest_all: a header-only packet that needs the stored result (every chunk read from the registers)
    bit<2>   collective;
    bit<2>   op;
    bit<16>  owner;
    bit<1>   header_only;
    bit<1>   harvest_all;
    bit<8>   exponent;
    bit<16>  wire_length;
    bit<8>   outcome;
    bit<1>   recirculate;
    bit<1>   consumed;
    // ESA
    bit<32>  esa_index;
    bit<32>  esa_tag;
    bit<32>  claim;
    bit<32>  bits;
    bit<32>  holder_seq;
    bit<32>  holder_id;
    bit<32>  holder_fmt;
    bit<16>  holder_session;
    bit<32>  new_id;
    bit<32>  new_fmt;
    bit<32>  tomb;
    bit<16>  server_job;
    bit<8>   mirror_kind;
    MirrorId_t mirror_session;
}

struct egress_metadata_t {
    bit<48> switch_mac;
    bit<32> switch_ip;
    bit<2>  dst;
}

// Bit-pair layouts of the stateful registers
struct seen_word_t {
    int<32> seq;     // slot jobs: round the word's bits belong to.      ESA key: the holder's tag
    int<32> bits;    // slot jobs: workers 32*word .. 32*word+31.        ESA key: the holder's rank, 0 = free
}

struct round_t {
    bit<32> seq;     // slot jobs: SlotPool.round.                       ESA: unused
    bit<32> state;   // slot jobs: W - SlotPool.count + 1 while the round is open (2..W), 1 = complete, 0 = never
                     // used.                                            ESA: the aggregator's worker bitmap
}

struct tomb_t {
    bit<32> seq;     // the block last evicted from or diverted at the aggregator
    bit<32> job;
}

parser InaggIngressParser(packet_in pkt, out headers_t hdr, out ingress_metadata_t meta,
                          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        // Every field starts at 0 (ingress writes what it reads, but an out parameter must be written here).
        meta = {...};
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition select(ig_intr_md.ingress_port) {
            TNA_RECIRC_PORT: parse_recirc;
            default: parse_ethernet;
        }
    }
    // A recirculated packet was checked in pass 0: its headers are what pass 0 emitted.
    state parse_recirc {
        pkt.extract(hdr.recirc);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.ipv4);
        pkt.extract(hdr.udp);
        pkt.extract(hdr.inagg);
        transition select(hdr.recirc.phase) {
            PHASE_CONSUME: parse_lane_0;
            default: accept;
        }
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        // No options; not a fragment (More Fragments clear, offset 0); UDP.
        transition select(hdr.ipv4.ihl, hdr.ipv4.flags[0:0], hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (4w5, 1w0, 13w0, IP_PROTO_UDP): parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            INAGG_UDP_PORT: parse_inagg;
            default: accept;
        }
    }
    state parse_inagg {
        pkt.extract(hdr.inagg);
        transition select(hdr.inagg.msg_type, hdr.inagg.element_count) {
            (MSG_AGGREGATE, 0): accept;
            (MSG_AGGREGATE, _): parse_lane_0;
            (MSG_JOIN, 2): parse_join_credential;
            default: accept;
        }
    }
    state parse_join_credential {
        pkt.extract(hdr.credential);
        transition accept;
    }
#include "generated/inagg_tna_lane_parser.p4"
}

control InaggIngress(inout headers_t hdr, inout ingress_metadata_t meta,
                     in ingress_intrinsic_metadata_t ig_intr_md,
                     in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                     inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                     inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    // TNA: a counter is addressed once per pass, so every path counts at most one outcome in each of these, and
    // what one packet counts besides its outcome has a counter of its own: SwitchCounter.RECEIVED (received_counter),
    // EsaCounter CONTRIBUTIONS (esa_contributions: an allocation and a preemption are contributions too) and
    // ALLOCATIONS (esa_allocations: a preemption allocates). An ESA completion counts its contribution in pass 0 and
    // COMPLETIONS in its release pass; what is counted per copy sent (RESULTS_SENT, RESULT_COPIES) and the flush's
    // raw retransmission (FALLBACK_RETRANSMIT, besides FLUSHES) are counted in egress (egress_counters,
    // esa_egress_counters). So every counter counts what the software switches count under its name.
    Counter<bit<64>, bit<1>>(1, CounterType_t.PACKETS) received_counter;
    Counter<bit<64>, bit<8>>(32, CounterType_t.PACKETS) inagg_counters;
    Counter<bit<64>, bit<8>>(32, CounterType_t.PACKETS) esa_counters;
    Counter<bit<64>, bit<1>>(1, CounterType_t.PACKETS) esa_contributions;
    Counter<bit<64>, bit<1>>(1, CounterType_t.PACKETS) esa_allocations;

    // ---- job table and worker sources ------------------------------------------------------------------------
    // A slot job (SoftwareSwitch / SwitchJobConfig). lane_base, chunks, chunk_shift: where its lanes live in the
    // lane registers (rows lane_base + ((2 * slot + copy) << chunk_shift) + chunk, chunk < chunks = lanes / 32).
    action set_job(bit<16> workers, bit<16> slots, bit<16> slot_base, bit<16> lanes, bit<16> mcast_grp,
                   bit<32> lane_base, bit<8> chunks, bit<2> chunk_shift, bit<16> session) {
        meta.job_found = 1;
        meta.session = session;
        meta.esa = 0;
        meta.workers = workers;
        meta.slots = slots;
        meta.slot_base = slot_base;
        meta.job_lanes = lanes;
        meta.mcast_grp = mcast_grp;
        meta.lane_base = lane_base;
        meta.chunks = chunks;
        meta.chunk_shift = chunk_shift;
    }
    // An ESA job (EsaSwitch / EsaJobConfig, docs/esa.md items 1 and 2). hash_offset = job * 0x9E3779B1 mod
    // ESA_AGGREGATORS, distinct per ESA job; job_tag = 0x80000000 | (esa job number < 128) << 24 (see esa_tag);
    // full_mask = the bitmap word of all W workers; rank = static or SRF priority + 1 (rank_from_header = 1: the
    // header's Priority + 1, PriorityPolicy.HEADER); the multicast group holds the workers and the server (replication
    // id ESA_SERVER_RID); ps_session: a mirror session to the server's port (flush).
    action set_esa_job(bit<16> workers, bit<16> window, bit<16> lanes, bit<16> mcast_grp, bit<32> lane_base,
                       bit<32> hash_offset, bit<32> job_tag, bit<32> full_mask, bit<32> rank,
                       bit<1> rank_from_header, MirrorId_t ps_session, bit<16> session) {
        meta.job_found = 1;
        meta.session = session;
        meta.esa = 1;
        meta.workers = workers;
        meta.slots = window;
        meta.job_lanes = lanes;
        meta.mcast_grp = mcast_grp;
        meta.lane_base = lane_base;
        meta.chunks = 1;
        meta.hash_offset = hash_offset;
        meta.job_tag = job_tag;
        meta.full_mask = full_mask;
        meta.rank = rank;
        meta.rank_from_header = rank_from_header;
        meta.ps_session = ps_session;
    }
    action unknown_job() {
        meta.job_found = 0;
        meta.session = 0;
    }
    table job_table {
        key = { hdr.inagg.job_id: exact @name("job_id"); }
        actions = { set_job; set_esa_job; unknown_job; }
        default_action = unknown_job();
        size = 1024;
    }

    action source_ok() {
        meta.source_ok = 1;
    }
    action source_mismatch() {
        meta.source_ok = 0;
    }
    table worker_source {
        key = {
            hdr.inagg.job_id: exact @name("job_id");
            hdr.inagg.worker_id: exact @name("worker_id");
            hdr.ipv4.src_addr: exact @name("src_addr");
            hdr.udp.src_port: exact @name("src_port");
        }
        actions = { source_ok; source_mismatch; }
        default_action = source_mismatch();
        size = 65536;
    }

    // The JOIN credential of each worker id (inagg_v1model.p4's join_credential, docs/security.md): a JOIN must show
    // exactly it, else it is dropped unanswered and counted (C_DROP_BAD_CREDENTIAL); no row: none required.
    // TNA: the action splits the 64-bit parameter into two 32-bit words, compared one each.
    action set_join_credential(bit<64> credential) {
        meta.credential_required = 1;
        meta.credential_high = credential[63:32];
        meta.credential_low = credential[31:0];
    }
    action no_join_credential() {
        meta.credential_required = 0;
    }
    table join_credential {
        key = {
            hdr.inagg.job_id: exact @name("job_id");
            hdr.inagg.worker_id: exact @name("worker_id");
        }
        actions = { set_join_credential; no_join_credential; }
        default_action = no_join_credential();
        size = 65536;
    }

    // The worker's bit in its bitmap word: a table instead of a variable shift, which a MAU cannot do.
    action set_worker_bit(bit<32> bit_mask) {
        meta.worker_bit = bit_mask;
        meta.worker_bit_s = (int<32>)bit_mask;
    }
    // Keyed on the worker id's low 5 bits: the bit within the worker's seen word (word = worker_id >> 5), so workers
    // 32..255 of a slot job find their bit too.
    table worker_bit {
        key = { hdr.inagg.worker_id[4:0]: exact; }
        actions = { set_worker_bit; }
        const entries = {
            0: set_worker_bit(32w1 << 0);   1: set_worker_bit(32w1 << 1);   2: set_worker_bit(32w1 << 2);
            3: set_worker_bit(32w1 << 3);   4: set_worker_bit(32w1 << 4);   5: set_worker_bit(32w1 << 5);
            6: set_worker_bit(32w1 << 6);   7: set_worker_bit(32w1 << 7);   8: set_worker_bit(32w1 << 8);
            9: set_worker_bit(32w1 << 9);   10: set_worker_bit(32w1 << 10); 11: set_worker_bit(32w1 << 11);
            12: set_worker_bit(32w1 << 12); 13: set_worker_bit(32w1 << 13); 14: set_worker_bit(32w1 << 14);
            15: set_worker_bit(32w1 << 15); 16: set_worker_bit(32w1 << 16); 17: set_worker_bit(32w1 << 17);
            18: set_worker_bit(32w1 << 18); 19: set_worker_bit(32w1 << 19); 20: set_worker_bit(32w1 << 20);
            21: set_worker_bit(32w1 << 21); 22: set_worker_bit(32w1 << 22); 23: set_worker_bit(32w1 << 23);
            24: set_worker_bit(32w1 << 24); 25: set_worker_bit(32w1 << 25); 26: set_worker_bit(32w1 << 26);
            27: set_worker_bit(32w1 << 27); 28: set_worker_bit(32w1 << 28); 29: set_worker_bit(32w1 << 29);
            30: set_worker_bit(32w1 << 30); 31: set_worker_bit(32w1 << 31);
        }
        size = 32;
    }

    // ESA: the switch port of a job's parameter server, looked up for the packet's own job (RAW, flush) or for the
    // holder's job read back from esa_id_reg (eviction: the PARTIAL goes to the holder's server; docs/esa.md item 4).
    action set_server_port(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
    }
    action no_server() {
        ig_dprsr_md.drop_ctl = 1;
    }
    table esa_server_port {
        key = { meta.server_job: exact @name("job_id"); }
        actions = { set_server_port; no_server; }
        default_action = no_server();
        size = 1024;
    }

    // ---- SlotPool.seenAction ---------------------------------------------------------------------------------
    // TNA: the software switch sets the worker's bit in this copy and clears it in the other copy; here the round
    // decision (next stage) needs to know freshness first, and a register is touched once per pass. So each copy's
    // bitmap word is tagged with the round its bits belong to: a packet of a newer round starts the word afresh,
    // which is what clearing the other copy achieves in software, and a packet older than the word's round leaves
    // it alone. One register per shadow copy, indexed by (slot_base + slot) * BITMAP_WORDS + worker / 32.
    // TNA: a pair register's action answers one source (Tofino 1 stateful ALU: mem_lo/mem_hi/alu_lo/alu_hi/phv or a
    // predicate constant, else 0) and compares at most two things. So the answer is the word's OLD bits (mem_hi)
    // when the packet is of the word's round or older (the word untouched then), and 0 when it started the word
    // afresh; the worker's bit is tested by round_dispatch (a ternary match on the answer and meta.worker_bit, so
    // no AND of two PHV fields is needed), and staleness is told by round_reg (next stage), whose sequence an
    // older packet does not match. A word that holds a round always has a bit set, so 0 means "started afresh"
    // (or a never-used word, which the round stage treats alike: its first contributor).
    // Sequences compare as serial numbers (SlotPool.roundAction: sequence - round as an int), which a 34-bit
    // stateful ALU cannot do in one comparison. So there are two variants: the packet's sequence q and the word's
    // are compared unsigned when q is in [2^30, 2^32 - 2^24), and signed (int<32>) when q is in [2^32 - 2^24, 2^32)
    // or [0, 2^30) (around the wraparound, where the unsigned order breaks). Either is the serial order as long as
    // the word's round and q are less than 2^24 sequences apart across the wrap, resp. 2^30 elsewhere
    // (docs/p4.md, "Compile status / known risks", for the two corner cases).
    // TNA: seen1_reg also holds the ESA pool's keys, at ESA_KEY_BASE + aggregator: both are read before anything
    // else of their mode, so they share one stateful ALU (and its stage) instead of taking two; its four register
    // actions are seen1_unsigned, seen1_signed, esa_key_claim and esa_key_free.
    Register<seen_word_t, bit<32>>(POOL_SLOTS * BITMAP_WORDS) seen0_reg;
    Register<seen_word_t, bit<32>>(POOL_SLOTS * BITMAP_WORDS + ESA_AGGREGATORS) seen1_reg;
#define ESA_KEY_BASE (POOL_SLOTS * BITMAP_WORDS)
// Two comparisons (word.seq == q, NEWER), one output source (mem_hi under a predicate), hi half written two ways
// (| worker bit, = worker bit), lo half one way. The answer is assigned first, before the word is written, so that
// it is the old value (mem_hi) in every branch; "old_bits = 0" at the top is the output's 0 where the predicate is
// false (what a stateful ALU answers there anyway), written out so that every path assigns the out parameter.
#define SEEN_ACTION(reg, name, NEWER)                                                                   \
    RegisterAction<seen_word_t, bit<32>, bit<32>>(reg) name = {                                          \
        void apply(inout seen_word_t word, out bit<32> old_bits) {                                       \
            old_bits = 0;                                                                                \
            if (word.seq == meta.seq_s || !(NEWER)) {                                                    \
                old_bits = (bit<32>)word.bits;                                                           \
            }                                                                                            \
            if (word.seq == meta.seq_s) {                                                                \
                word.bits = word.bits | meta.worker_bit_s;                                               \
            } else if (NEWER) {                                                                          \
                word.seq = meta.seq_s;                                                                   \
                word.bits = meta.worker_bit_s;                                                           \
            }                                                                                            \
        }                                                                                                \
    }
#define SEEN_NEWER_UNSIGNED ((bit<32>)word.seq < (bit<32>)meta.seq_s)
#define SEEN_NEWER_SIGNED (word.seq < meta.seq_s)
    SEEN_ACTION(seen0_reg, seen0_unsigned, SEEN_NEWER_UNSIGNED);
    SEEN_ACTION(seen0_reg, seen0_signed, SEEN_NEWER_SIGNED);
    SEEN_ACTION(seen1_reg, seen1_unsigned, SEEN_NEWER_UNSIGNED);
    SEEN_ACTION(seen1_reg, seen1_signed, SEEN_NEWER_SIGNED);

    // ---- ESA key: AggregatorPool.holds / isFree / EsaSwitch.preempts in one stateful ALU (docs/esa.md item 3) ----
    // TNA: the key is {tag, rank}. tag = 1 | esa job (7 bits) | sequence[31:8]: at aggregator i = (sequence +
    // hash_offset) mod ESA_AGGREGATORS the low bits of the sequence follow from i and the job's offset, so the tag
    // names the block (job, sequence) exactly in 32 bits (ESA_AGGREGATORS >= 256, offsets distinct per job). rank =
    // priority + 1, 0 = free. Two comparisons (tag equal, rank greater), as a Tofino 1 stateful ALU allows, and one
    // output source, the holder's old tag (mem_lo), driven except on TAKE:
    //   tag equal                 -> HELD: answer = the tag (this packet's own). A completed or flushed block keeps
    //                                its tag with rank 0, so its late duplicates still meet their own bitmap (all
    //                                bits set after completion: dropped as duplicates; EsaSwitch re-allocates).
    //   rank > holder's rank      -> TAKE: the key becomes this block's; answer 0 (no tag is 0: tags have bit 31
    //                                set). Whether the aggregator was free (allocation) or held (eviction:
    //                                PREEMPTED) is told by the holder's esa_fmt_reg word (its low byte is 1 while a
    //                                block holds the aggregator), swapped in the next stage anyway.
    //   otherwise                 -> COLLIDE: answer = the holder's tag (not 0: a holder with rank >= 1 was
    //                                written by a TAKE).
    // TNA: EsaSwitch also lets a newer block of the holder's own job evict it (STALE); that third comparison does not
    // fit, and is not needed for liveness here: completed blocks never leak (they keep their tag), and a stuck block
    // is flushed by its workers' retransmissions.
    RegisterAction<seen_word_t, bit<32>, bit<32>>(seen1_reg) esa_key_claim = {
        void apply(inout seen_word_t key, out bit<32> holder_tag) {
            holder_tag = 0;     // TAKE's answer (the predicate's 0, written out)
            if (key.seq == meta.esa_tag_s || !(meta.rank_s > key.bits)) {
                holder_tag = (bit<32>)key.seq;
            }
            if (key.seq != meta.esa_tag_s && meta.rank_s > key.bits) {
                key.seq = meta.esa_tag_s;
                key.bits = meta.rank_s;
            }
        }
    };
    // AggregatorPool.release: a retransmission's flush (EsaSwitch, docs/esa.md item 5) and the completion's release
    // pass (PHASE_RELEASE) free the aggregator if it holds meta.esa_tag's block with a rank (answer 1: freed, the
    // predicate output as the constant 1; else 0). TNA: one action for both (the register holds four, two of them
    // the slot path's); a completion whose block was flushed meanwhile finds rank 0 and frees nothing, as before.
    RegisterAction<seen_word_t, bit<32>, bit<32>>(seen1_reg) esa_key_free = {
        void apply(inout seen_word_t key, out bit<32> freed) {
            freed = 0;
            if (key.seq == meta.esa_tag_s && key.bits != 0) {
                key.bits = 0;
                freed = 1;
            }
        }
    };

    // ---- SlotPool.roundAction + SlotPool.countAction ---------------------------------------------------------
    // TNA: (seq, state) in one register pair so the round decision and the count update happen in one stateful
    // ALU. state counts down: W - count + 1 while the round is open (2..W), 1 = complete, 0 = never used (what a
    // cleared register holds), so "complete or unused" is one comparison (state < 2). Which action runs is decided
    // by round_dispatch from the seen answer; each compares at most two things and answers one source, and only
    // round_contribute may start a round, so a stale packet (which never starts a seen word afresh) cannot restart
    // a copy:
    //   round_contribute (the seen word was started afresh, or never used): a complete or never-used copy starts a
    //     new round with this packet (SlotPool ROUND_NEW + countAction: state = W); the copy's open round takes it
    //     (ROUND_OPEN + countAction: state - 1); a different sequence on an open copy is ROUND_VIOLATION (unchanged).
    //     Answer: the NEW state (alu_hi), 0 for a violation. W: the first contribution; 1: it completes the round.
    //     TNA: a packet of the copy's own (complete) round cannot arrive here in normal operation (a complete round
    //     has every word tagged with it), and would start the round again.
    //   round_count (the worker's bit was clear in a word of this round or a newer one): same sequence and open ->
    //     state - 1 (ROUND_OPEN + countAction); same sequence and complete -> ROUND_COMPLETE (answered from the
    //     registers); another sequence -> ROUND_STALE. Answer: the OLD state (mem_hi) if the sequence matches, else
    //     0. 0: stale; 1: complete; 2: this contribution completes the round; 3..W: a contribution.
    //   round_inspect (the worker's bit was set): ROUND_COMPLETE (1), the open round's duplicate (2..W) or stale (0),
    //     same answer as round_count, nothing written.
    // TNA: a newer sequence on an incomplete copy is a violation only if the worker's seen word was started afresh;
    // one older than the copy's round whose word had not moved past it yet is counted as a violation, not stale
    // (both are dropped; only the counter differs from SlotPool).
    // TNA: round_reg also holds the ESA aggregators' worker bitmaps (state half, at POOL_COPIES + aggregator): the
    // stage after the key, as the slot path's round comes after its seen word; esa_bits is its fourth action.
    Register<round_t, bit<32>>(POOL_COPIES + ESA_AGGREGATORS) round_reg;
    RegisterAction<round_t, bit<32>, bit<32>>(round_reg) round_contribute = {
        void apply(inout round_t r, out bit<32> state) {
            state = 0;          // a violation's answer (the predicate's 0, written out)
            if (r.state < 2) {
                r.seq = hdr.inagg.sequence;
                r.state = (bit<32>)meta.workers;
                state = r.state;
            } else if (r.seq == hdr.inagg.sequence) {
                r.state = r.state - 1;
                state = r.state;
            }
        }
    };
    RegisterAction<round_t, bit<32>, bit<32>>(round_reg) round_count = {
        void apply(inout round_t r, out bit<32> state) {
            state = 0;          // stale
            if (r.seq == hdr.inagg.sequence) {
                state = r.state;
                if (r.state > 1) {
                    r.state = r.state - 1;
                }
            }
        }
    };
    RegisterAction<round_t, bit<32>, bit<32>>(round_reg) round_inspect = {
        void apply(inout round_t r, out bit<32> state) {
            state = 0;          // stale
            if (r.seq == hdr.inagg.sequence) {
                state = r.state;
            }
        }
    };
    // AggregatorPool.seenAction (HELD) / allocate (TAKE, swap semantics): answers the old bitmap word (the worker's
    // bit: a duplicate; on TAKE the evicted holder's bitmap) and sets the worker's bit (HELD) or makes the word this
    // worker's alone (TAKE: meta.claim == 0, the key's answer). The flush path reads the word with it, with
    // meta.worker_bit = 0. TNA: one action for both (a stateful ALU holds at most 4, and round_reg has three
    // others); one comparison on a PHV field, the old word (mem_hi) as the one output.
    RegisterAction<round_t, bit<32>, bit<32>>(round_reg) esa_bits = {
        void apply(inout round_t r, out bit<32> old_bits) {
            old_bits = r.state;
            if (meta.claim == 0) {
                r.state = meta.worker_bit;
            } else {
                r.state = r.state | meta.worker_bit;
            }
        }
    };
    // Picks the round action from the seen answer (AggregationNode.onMessage's order: round, then seen): 0 -> the
    // word was started afresh; the worker's bit set -> a duplicate; else the worker is fresh in the word's round.
    // TNA: a ternary table instead of "(seen & worker_bit) != 0", which would need an AND of two PHV fields (an
    // action, i.e. one more stage) before the round stage.
    action round_newer() {
        meta.round_path = PATH_NEWER;
        meta.round = round_contribute.execute(meta.pool_index);
    }
    action round_fresh() {
        meta.round_path = PATH_FRESH;
        meta.round = round_count.execute(meta.pool_index);
    }
    action round_duplicate() {
        meta.round_path = PATH_DUP;
        meta.round = round_inspect.execute(meta.pool_index);
    }
    table round_dispatch {
        key = {
            meta.seen: ternary;
            meta.worker_bit: ternary;
        }
        actions = { round_newer; round_fresh; round_duplicate; }
        const entries = {
            (0, _): round_newer();
            (32w0x00000001 &&& 32w0x00000001, 32w0x00000001 &&& 32w0x00000001): round_duplicate();
            (32w0x00000002 &&& 32w0x00000002, 32w0x00000002 &&& 32w0x00000002): round_duplicate();
            (32w0x00000004 &&& 32w0x00000004, 32w0x00000004 &&& 32w0x00000004): round_duplicate();
            (32w0x00000008 &&& 32w0x00000008, 32w0x00000008 &&& 32w0x00000008): round_duplicate();
            (32w0x00000010 &&& 32w0x00000010, 32w0x00000010 &&& 32w0x00000010): round_duplicate();
            (32w0x00000020 &&& 32w0x00000020, 32w0x00000020 &&& 32w0x00000020): round_duplicate();
            (32w0x00000040 &&& 32w0x00000040, 32w0x00000040 &&& 32w0x00000040): round_duplicate();
            (32w0x00000080 &&& 32w0x00000080, 32w0x00000080 &&& 32w0x00000080): round_duplicate();
            (32w0x00000100 &&& 32w0x00000100, 32w0x00000100 &&& 32w0x00000100): round_duplicate();
            (32w0x00000200 &&& 32w0x00000200, 32w0x00000200 &&& 32w0x00000200): round_duplicate();
            (32w0x00000400 &&& 32w0x00000400, 32w0x00000400 &&& 32w0x00000400): round_duplicate();
            (32w0x00000800 &&& 32w0x00000800, 32w0x00000800 &&& 32w0x00000800): round_duplicate();
            (32w0x00001000 &&& 32w0x00001000, 32w0x00001000 &&& 32w0x00001000): round_duplicate();
            (32w0x00002000 &&& 32w0x00002000, 32w0x00002000 &&& 32w0x00002000): round_duplicate();
            (32w0x00004000 &&& 32w0x00004000, 32w0x00004000 &&& 32w0x00004000): round_duplicate();
            (32w0x00008000 &&& 32w0x00008000, 32w0x00008000 &&& 32w0x00008000): round_duplicate();
            (32w0x00010000 &&& 32w0x00010000, 32w0x00010000 &&& 32w0x00010000): round_duplicate();
            (32w0x00020000 &&& 32w0x00020000, 32w0x00020000 &&& 32w0x00020000): round_duplicate();
            (32w0x00040000 &&& 32w0x00040000, 32w0x00040000 &&& 32w0x00040000): round_duplicate();
            (32w0x00080000 &&& 32w0x00080000, 32w0x00080000 &&& 32w0x00080000): round_duplicate();
            (32w0x00100000 &&& 32w0x00100000, 32w0x00100000 &&& 32w0x00100000): round_duplicate();
            (32w0x00200000 &&& 32w0x00200000, 32w0x00200000 &&& 32w0x00200000): round_duplicate();
            (32w0x00400000 &&& 32w0x00400000, 32w0x00400000 &&& 32w0x00400000): round_duplicate();
            (32w0x00800000 &&& 32w0x00800000, 32w0x00800000 &&& 32w0x00800000): round_duplicate();
            (32w0x01000000 &&& 32w0x01000000, 32w0x01000000 &&& 32w0x01000000): round_duplicate();
            (32w0x02000000 &&& 32w0x02000000, 32w0x02000000 &&& 32w0x02000000): round_duplicate();
            (32w0x04000000 &&& 32w0x04000000, 32w0x04000000 &&& 32w0x04000000): round_duplicate();
            (32w0x08000000 &&& 32w0x08000000, 32w0x08000000 &&& 32w0x08000000): round_duplicate();
            (32w0x10000000 &&& 32w0x10000000, 32w0x10000000 &&& 32w0x10000000): round_duplicate();
            (32w0x20000000 &&& 32w0x20000000, 32w0x20000000 &&& 32w0x20000000): round_duplicate();
            (32w0x40000000 &&& 32w0x40000000, 32w0x40000000 &&& 32w0x40000000): round_duplicate();
            (32w0x80000000 &&& 32w0x80000000, 32w0x80000000 &&& 32w0x80000000): round_duplicate();
        }
        default_action = round_fresh();
        size = 40;
    }

    // ---- ESA holder identity, swapped on TAKE (docs/esa.md item 4) -------------------------------------------
    // TNA: a stateful ALU answers one 32-bit word, so what a PARTIAL needs of an evicted holder is spread over four
    // registers written when a block takes the aggregator and answered (old value) at the same time: its sequence,
    // its job id | slot field, its INT32 flag | block exponent | priority | held (low byte 1 while a block holds the
    // aggregator: esa_key_claim answers only "taken", so this tells an eviction from an allocation; cleared by
    // esa_fmt_free when the key is freed by a flush or a completion), and its job's session (esa_session_reg).
    Register<bit<32>, bit<32>>(ESA_AGGREGATORS) esa_seq_reg;
    RegisterAction<bit<32>, bit<32>, bit<32>>(esa_seq_reg) esa_seq_swap = {
        void apply(inout bit<32> v, out bit<32> old) { old = v; v = hdr.inagg.sequence; }
    };
    Register<bit<32>, bit<32>>(ESA_AGGREGATORS) esa_id_reg;
    RegisterAction<bit<32>, bit<32>, bit<32>>(esa_id_reg) esa_id_swap = {
        void apply(inout bit<32> v, out bit<32> old) { old = v; v = meta.new_id; }
    };
    Register<bit<32>, bit<32>>(ESA_AGGREGATORS) esa_fmt_reg;
    RegisterAction<bit<32>, bit<32>, bit<32>>(esa_fmt_reg) esa_fmt_swap = {
        void apply(inout bit<32> v, out bit<32> old) { old = v; v = meta.new_fmt; }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(esa_fmt_reg) esa_fmt_free = {
        void apply(inout bit<32> v) { v = 0; }
    };
    // The holder job's session, for the Session field of its PARTIAL when another job's packet evicts it (EsaWire):
    // a fourth swap, as none of the three words above has 16 bits to spare.
    Register<bit<16>, bit<32>>(ESA_AGGREGATORS) esa_session_reg;
    RegisterAction<bit<16>, bit<32>, bit<16>>(esa_session_reg) esa_session_swap = {
        void apply(inout bit<16> v, out bit<16> old) { old = v; v = meta.session; }
    };

    // ---- ESA tombstone: AggregatorPool.tombstone / isTombstoned (docs/esa.md item 6) ---------------------------
    // TNA: written after the key decision (a register is touched once per pass, and what is written depends on the
    // key), so it is checked on the COLLIDE path only: a block diverted or evicted here is reported as TOMBSTONE
    // instead of COLLISION. EsaSwitch also checks it before taking a *free* aggregator; on TNA such a straggler takes
    // it (a second incarnation, which completes nowhere until a retransmission flushes it to the server; the sums
    // stay exact, docs/esa.md "Exactness").
    Register<tomb_t, bit<32>>(ESA_AGGREGATORS) esa_tomb_reg;
    RegisterAction<tomb_t, bit<32>, bit<32>>(esa_tomb_reg) esa_tomb_collide = {
        void apply(inout tomb_t t, out bit<32> answer) {
            if (t.seq == hdr.inagg.sequence && t.job == (bit<32>)hdr.inagg.job_id) {
                answer = 1;
            } else {
                t.seq = hdr.inagg.sequence;
                t.job = (bit<32>)hdr.inagg.job_id;
                answer = 0;
            }
        }
    };
    RegisterAction<tomb_t, bit<32>, bit<32>>(esa_tomb_reg) esa_tomb_evict = {
        void apply(inout tomb_t t) {
            t.seq = meta.holder_seq;
            t.job = (bit<32>)meta.holder_id[31:16];   // a slice: a stateful ALU has no shifter
        }
    };
    RegisterAction<tomb_t, bit<32>, bit<32>>(esa_tomb_reg) esa_tomb_flush = {
        void apply(inout tomb_t t) {
            t.seq = hdr.inagg.sequence;
            t.job = (bit<32>)hdr.inagg.job_id;
        }
    };

    // ---- SlotPool.exponentAction / AggregatorPool.contribute (Next Exponent) ---------------------------------
    // ESA aggregators at POOL_COPIES + aggregator. Indexed, like round_reg, by meta.pool_index only.
    Register<bit<8>, bit<32>>(POOL_COPIES + ESA_AGGREGATORS) exp_reg;
    RegisterAction<bit<8>, bit<32>, bit<8>>(exp_reg) exp_write = {
        void apply(inout bit<8> e, out bit<8> result) { e = hdr.inagg.next_exponent; result = e; }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(exp_reg) exp_max = {
        void apply(inout bit<8> e, out bit<8> result) {
            if ((int<8>)hdr.inagg.next_exponent > (int<8>)e) { e = hdr.inagg.next_exponent; }
            result = e;
        }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(exp_reg) exp_read = {
        void apply(inout bit<8> e, out bit<8> result) { result = e; }
    };
    // TNA: a stateful ALU holds at most 4 register actions, so the ESA path executes exp_max and exp_read too
    // (in the other branch of meta.esa: mutually exclusive with the slot path's calls, same stage).
    // AggregatorPool.allocate with swap semantics: the evicted holder's max Next Exponent comes back.
    RegisterAction<bit<8>, bit<32>, bit<8>>(exp_reg) esa_exp_swap = {
        void apply(inout bit<8> e, out bit<8> result) { result = e; e = hdr.inagg.next_exponent; }
    };

    // ---- SlotPool.lanesAction / readLanes, AggregatorPool lanes: one register per lane position ----------------
#include "generated/inagg_tna_lane_registers.p4"

    // Leaves by the recirculation port for the next pass, carrying meta's decision; egress is bypassed (the bridge
    // header is dropped at the end of the pass, meta.recirculate).
    action recirculate_next(in bit<8> phase, in bit<8> chunk) {
        hdr.recirc.phase = phase;
        hdr.recirc.chunk = chunk;
        ig_tm_md.ucast_egress_port = TNA_RECIRC_PORT;
        ig_tm_md.bypass_egress = 1;
        ig_dprsr_md.drop_ctl = 0;
        meta.recirculate = 1;
    }

    // A packet back to its sender (a JOIN's answer, a REJECT): the sender's addresses become the destination.
    action to_sender(in PortId_t port) {
        hdr.ethernet.dst_addr = hdr.ethernet.src_addr;
        hdr.ipv4.dst_addr = hdr.ipv4.src_addr;
        hdr.udp.dst_port = hdr.udp.src_port;
        hdr.bridge.dst = DST_SENDER;
        ig_tm_md.ucast_egress_port = port;
        ig_dprsr_md.drop_ctl = 0;
    }

    // The REJECT UNSUPPORTED_COLLECTIVE of an admitted AGGREGATE (inagg_v1model.p4's reject_aggregate): job and
    // worker id as they came, Flags = RESULT | the collective and op, Status = 5, Session = the job's; no lanes (the
    // parsed chunk is cut here, the later chunks of a longer packet by consume passes, OUTCOME_REJECT).
    action reject_unsupported() {
        hdr.inagg.msg_type = MSG_REJECT;
        hdr.inagg.flags = FLAG_RESULT | (hdr.inagg.flags & COLLECTIVE_AND_OP);
        hdr.inagg.copy = 0;
        hdr.inagg.slot = 0;
        hdr.inagg.sequence = 0;
        hdr.inagg.element_count = 0;
        hdr.inagg.block_exponent = 0;
        hdr.inagg.next_exponent = NO_EXPONENT;
        hdr.inagg.prio = 0;
        hdr.inagg.status = REJECT_UNSUPPORTED_COLLECTIVE;
        hdr.inagg.reserved = meta.session;
#include "generated/inagg_tna_lane_invalidate.p4"
    }

    // Pass 0's decision for the passes after it (meta.outcome, meta.lane_op from the row of chunk 0 on).
    action carry_decision(in bit<32> first_row) {
        hdr.recirc.setValid();
        hdr.recirc.chunks = meta.chunks;
        hdr.recirc.lane_op = (bit<8>)meta.lane_op;
        hdr.recirc.lane_row = first_row;
        hdr.recirc.outcome = meta.outcome;
        hdr.recirc._pad0 = 0;
        hdr.recirc.mcast_grp = meta.mcast_grp;
        hdr.recirc._pad1 = 0;
        hdr.recirc.reply_port = ig_intr_md.ingress_port;
        hdr.recirc.esa_index = 0;
        hdr.recirc.esa_tag = 0;
        hdr.recirc.full_mask = 0;
    }

    apply {
        // Locals are declared before the first return (p4c's uninitialized_use analysis does not carry an
        // initialiser past one).
        bool deliver = false;
        bit<8> reason = 0;
        ig_dprsr_md.drop_ctl = 1;
        hdr.bridge.setValid();
        hdr.bridge.kind = KIND_BRIDGE;
        hdr.bridge.is_multicast = 0;
        hdr.bridge.dst = DST_WORKER;
        hdr.bridge.esa_complete = 0;
        hdr.bridge.scatter = 0;
        hdr.bridge._pad = 0;
        hdr.bridge.owner = 0;
        hdr.bridge.full_mask = 0;
        meta.lane_op = LANE_NONE;
        meta.consumed = 0;
        meta.recirculate = 0;
        meta.outcome = OUTCOME_ABSORB;
        meta.server_job = 0;
        if (!hdr.udp.isValid() || hdr.udp.dst_port != INAGG_UDP_PORT) {
            // Not inagg traffic: this program only aggregates.
            return;
        }

        if (hdr.recirc.isValid()) {
            // ---- passes after the first: the decision is in the recirculation header ------------------------
            hdr.bridge.dst_worker = hdr.inagg.worker_id;
            meta.lane_row = hdr.recirc.lane_row + (bit<32>)hdr.recirc.chunk;
            if (hdr.recirc.phase == PHASE_CONSUME) {
                meta.lane_op = (bit<3>)hdr.recirc.lane_op;
                if (hdr.recirc.chunk + 1 != hdr.recirc.chunks) {
                    meta.consumed = 1;
                    recirculate_next(PHASE_CONSUME, hdr.recirc.chunk + 1);
                } else if (hdr.recirc.outcome == OUTCOME_REJECT) {
                    // A REJECT's last chunk goes too (reject_unsupported): the header alone, back to the sender,
                    // whose addresses the packet still carries (recirculation bypassed egress).
                    meta.consumed = 1;
                    to_sender(hdr.recirc.reply_port);
                    deliver = true;
                } else if (hdr.recirc.outcome != OUTCOME_ABSORB) {
                    // The last chunk's lanes are the result's last chunk: keep them, read the others back.
                    recirculate_next(PHASE_HARVEST, hdr.recirc.chunk - 1);
                }
                // else: a contribution whose chunks are all in the registers; nothing leaves.
            } else if (hdr.recirc.phase == PHASE_HARVEST) {
#include "generated/inagg_tna_lane_validate.p4"
                meta.lane_op = LANE_READ;
                if (hdr.recirc.chunk != 0) {
                    recirculate_next(PHASE_HARVEST, hdr.recirc.chunk - 1);
                } else {
                    deliver = true;
                }
            } else if (hdr.recirc.phase == PHASE_RELEASE) {
                // AggregatorPool.release after EsaAggregation.complete: the aggregator is free once its sum leaves.
                meta.esa_index = hdr.recirc.esa_index;
                meta.key_index = ESA_KEY_BASE + hdr.recirc.esa_index;
                meta.esa_tag_s = (int<32>)hdr.recirc.esa_tag;
                meta.claim = esa_key_free.execute(meta.key_index);
                if (meta.claim == 1) {
                    esa_fmt_free.execute(meta.esa_index);
                }
                esa_counters.count(E_COMPLETIONS);
                hdr.bridge.esa_complete = 1;
                hdr.bridge.full_mask = hdr.recirc.full_mask;
                deliver = true;
            }
            if (deliver) {
                ig_tm_md.bypass_egress = 0;
                ig_dprsr_md.drop_ctl = 0;
                if (hdr.recirc.outcome == OUTCOME_MULTICAST) {
                    hdr.bridge.is_multicast = 1;
                    ig_tm_md.mcast_grp_a = hdr.recirc.mcast_grp;
                } else {
                    ig_tm_md.ucast_egress_port = hdr.recirc.reply_port;
                }
                hdr.recirc.setInvalid();
            }
        } else {
            // ---- pass 0 ---------------------------------------------------------------------------------------
            // The frame must carry one whole UDP datagram (inagg_v1model.p4, docs/p4.md "Wire format and parser"):
            // else it is no message, dropped uncounted, as the software switch's transports drop it.
            if (hdr.udp.length < 8 || hdr.ipv4.total_len != hdr.udp.length + 20) {
                return;
            }
            if (!hdr.inagg.isValid()) {
                // The parser could not extract the inagg header: a message shorter than it if the UDP length says so
                // (InaggHeader.check's TOO_SHORT), else a frame shorter than its datagram (no message).
                if (hdr.udp.length < 28) {
                    received_counter.count(0);
                    inagg_counters.count(C_DROP_MALFORMED);
                }
                return;
            }
            hdr.bridge.dst_worker = hdr.inagg.worker_id;
            meta.wire_length = hdr.inagg.element_count << 2;
            if (hdr.udp.length == 28 + meta.wire_length && ig_prsr_md.parser_err != 0) {
                // The lengths agree but the frame ends inside the lanes (of the chunk this pass parses): a frame
                // shorter than its datagram, no message. TNA: ingress has no frame length, so a frame cut after
                // the first chunk is not found here.
                return;
            }
            received_counter.count(0);
            // InaggHeader.check: version 1, length = header + Element Count lanes.
            if (hdr.inagg.version != 1 || hdr.udp.length != 28 + meta.wire_length || ig_prsr_md.parser_err != 0) {
                inagg_counters.count(C_DROP_MALFORMED);
                return;
            }
            // Each table is applied at one place: the job table for every message, the worker's registered
            // source for every message whose job exists and whose worker id is in range.
            job_table.apply();
            meta.source_ok = 0;
            if (meta.job_found == 1 && hdr.inagg.worker_id < meta.workers) {
                worker_source.apply();
            }

            if (hdr.inagg.msg_type == MSG_JOIN) {
                // JoinStage.join in the data plane (an ESA job offers its window as slots).
                // TNA: a JOIN carrying lanes cannot be cut short here (no truncation in ingress), so it is dropped
                // as malformed; workers send JOINs without lanes, or with the two of a credential, which the parser
                // extracted as a header (hdr.credential) and the answer leaves without.
                if (hdr.inagg.element_count != 0 && !hdr.credential.isValid()) {
                    inagg_counters.count(C_DROP_MALFORMED);
                    return;
                }
                bit<32> announced_workers = hdr.inagg.sequence;
                if (meta.job_found == 0) {
                    reason = REJECT_UNKNOWN_JOB;
                } else if (hdr.inagg.worker_id >= meta.workers) {
                    reason = REJECT_WORKER_ID_OUT_OF_RANGE;
                } else {
                    if (meta.source_ok == 0) {
                        // Every node counts a JOIN from another source as a source mismatch (JoinStage)
                        if (meta.esa == 1) {
                            esa_counters.count(E_DROP_SOURCE_MISMATCH);
                        } else {
                            inagg_counters.count(C_DROP_SOURCE_MISMATCH);
                        }
                        return;
                    }
                    // JobMembership.join: the worker's credential, before anything the JOIN could change.
                    join_credential.apply();
                    if (meta.credential_required == 1) {
                        if (!hdr.credential.isValid() || hdr.credential.high != meta.credential_high
                                || hdr.credential.low != meta.credential_low) {
                            inagg_counters.count(C_DROP_BAD_CREDENTIAL);
                            return;
                        }
                    }
                    if (announced_workers != (bit<32>)meta.workers) {
                        reason = REJECT_WORKER_COUNT_MISMATCH;
                    } else if (hdr.inagg.reserved != 0 && hdr.inagg.reserved != meta.session) {
                        reason = REJECT_STALE_SESSION;
                    }
                }
                hdr.inagg.flags = FLAG_RESULT;
                hdr.inagg.copy = 0;
                hdr.inagg.slot = 0;
                hdr.inagg.sequence = 0;
                // the answer carries no lanes: the credential is not emitted (egress sets the lengths from the count)
                hdr.credential.setInvalid();
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
                    if (meta.esa == 1) {
                        esa_counters.count(E_JOINS);
                    } else {
                        inagg_counters.count(C_JOINS);
                    }
                } else {
                    hdr.inagg.msg_type = MSG_REJECT;
                    hdr.inagg.status = reason;
                    hdr.inagg.reserved = meta.session;
                    if (reason == REJECT_STALE_SESSION) {
                        hdr.inagg.sequence = 0xFFFFFFFF;    // started by the control plane
                    }
                    if (meta.job_found == 1 && meta.esa == 1) {
                        esa_counters.count(E_REJECTS);
                    } else {
                        inagg_counters.count(C_REJECTS);
                    }
                }
                to_sender(ig_intr_md.ingress_port);
                return;
            }
            if (hdr.inagg.msg_type != MSG_AGGREGATE || (hdr.inagg.flags & FLAG_RESULT) != 0
                    || (hdr.inagg.flags & FLAG_RESERVED) != 0) {
                inagg_counters.count(C_DROP_MALFORMED);
                return;
            }
            if (meta.job_found == 0) {
                inagg_counters.count(C_DROP_UNKNOWN_JOB);
                return;
            }
            meta.collective = hdr.inagg.flags[4:3];
            meta.op = hdr.inagg.flags[6:5];
            meta.owner = hdr.inagg.prio ++ hdr.inagg.status;
            // ESA jobs carry ALL_REDUCE SUM only here, as in inagg_v1model.p4: a worker's packet the checks below
            // would admit (worker id, source, session) is answered with REJECT UNSUPPORTED_COLLECTIVE, a reserved
            // value dropped unanswered. TNA: only a packet whose lanes this pass parsed (at most 32, as every ESA
            // job's) can be cut to the REJECT's header; one with more is dropped unanswered.
            if (meta.esa == 1 && (meta.collective != COLLECTIVE_ALL_REDUCE || meta.op != OP_SUM)) {
                inagg_counters.count(C_DROP_UNSUPPORTED);
                if (hdr.inagg.worker_id < meta.workers && meta.source_ok == 1 && hdr.inagg.reserved == meta.session
                        && meta.collective != COLLECTIVE_RESERVED && meta.op != OP_RESERVED
                        && hdr.inagg.element_count <= TNA_LANES) {
                    reject_unsupported();
                    to_sender(ig_intr_md.ingress_port);
                }
                return;
            }
            // Worker and source (AggregationNode.admit), then the lanes.
            if (hdr.inagg.worker_id >= meta.workers) {
                if (meta.esa == 1) {
                    esa_counters.count(E_DROP_UNKNOWN_WORKER);
                } else {
                    inagg_counters.count(C_DROP_UNKNOWN_WORKER);
                }
                return;
            }
            if (meta.source_ok == 0) {
                if (meta.esa == 1) {
                    esa_counters.count(E_DROP_SOURCE_MISMATCH);
                } else {
                    inagg_counters.count(C_DROP_SOURCE_MISMATCH);
                }
                return;
            }
            // Session check: a packet of another run of the job never touches its registers. TNA: dropped and
            // counted without an answer (the lanes cannot be cut off in ingress); the old run's workers learn of the
            // new session from the REJECT of their liveness JOIN (docs/sessions.md).
            if (hdr.inagg.reserved != meta.session) {
                inagg_counters.count(C_DROP_STALE_SESSION);
                return;
            }
            // Collective and op: the reserved values are unsupported (dropped unanswered; TNA: so is REDUCE_SCATTER on
            // a job of more than one chunk, after the lane count, below). The Owner of a REDUCE_SCATTER or ALL_GATHER
            // must be one of the job's workers.
            if (meta.collective == COLLECTIVE_RESERVED || meta.op == OP_RESERVED) {
                inagg_counters.count(C_DROP_UNSUPPORTED);
                return;
            }
            if (meta.collective != COLLECTIVE_ALL_REDUCE && meta.owner >= meta.workers) {
                inagg_counters.count(C_DROP_UNKNOWN_WORKER);
                return;
            }
            // TNA: every packet of a job carries exactly the job's lanes (no per-round lane count register), so
            // the software switch's ROUND_BAD_SIZE cannot arise; a shorter tail block must be padded by the worker.
            // An ALL_GATHER contribution of a worker that is not the Owner carries none (header-only).
            bit<16> expected_lanes = meta.job_lanes;
            meta.header_only = 0;
            meta.harvest_all = 0;
            if (meta.collective == COLLECTIVE_ALL_GATHER && hdr.inagg.worker_id != meta.owner) {
                expected_lanes = 0;
                meta.header_only = 1;
            }
            if (hdr.inagg.element_count != expected_lanes) {
                if (meta.esa == 1) {
                    esa_counters.count(E_DROP_BAD_SIZE);
                } else {
                    inagg_counters.count(C_DROP_BAD_SIZE);
                }
                return;
            }
            worker_bit.apply();

            if (meta.esa == 0 && meta.collective == COLLECTIVE_REDUCE_SCATTER && meta.chunks != 1) {
                // TNA: REDUCE_SCATTER on a job of more than one chunk is unsupported (egress would have to cut the
                // unparsed chunks off the non-owners' copies; docs/p4.md). Answered with REJECT
                // UNSUPPORTED_COLLECTIVE once the packet is known to carry the job's lanes (above): chunk 0 is cut
                // in this pass, chunks 1 .. P - 1 by consume passes that touch no register (OUTCOME_REJECT).
                inagg_counters.count(C_DROP_UNSUPPORTED);
                reject_unsupported();
                meta.outcome = OUTCOME_REJECT;
                carry_decision(0);
                recirculate_next(PHASE_CONSUME, 1);
            } else if (meta.esa == 0) {
                // ---- slot job: AggregationNode.onMessage ------------------------------------------------------
                if ((bit<16>)hdr.inagg.slot >= meta.slots) {
                    inagg_counters.count(C_DROP_BAD_SLOT);
                    return;
                }
                bit<32> pool_slot = (bit<32>)meta.slot_base + (bit<32>)hdr.inagg.slot;
                meta.copy_index = (pool_slot << 1) | (bit<32>)hdr.inagg.copy;
                meta.seen_index = (pool_slot << 3) | (bit<32>)(hdr.inagg.worker_id >> 5);
                // Row of chunk 0: the job's rows are (2 * slot + copy) << chunk_shift from lane_base (constant
                // shifts only: a MAU cannot shift by a variable).
                bit<32> job_copy = ((bit<32>)hdr.inagg.slot << 1) | (bit<32>)hdr.inagg.copy;
                if (meta.chunk_shift == 0) {
                    meta.lane_row = meta.lane_base + job_copy;
                } else if (meta.chunk_shift == 1) {
                    meta.lane_row = meta.lane_base + (job_copy << 1);
                } else if (meta.chunk_shift == 2) {
                    meta.lane_row = meta.lane_base + (job_copy << 2);
                } else {
                    meta.lane_row = meta.lane_base + (job_copy << 3);
                }

                meta.pool_index = meta.copy_index;
                meta.key_index = meta.seen_index;
                meta.seq_s = (int<32>)hdr.inagg.sequence;
                // SlotPool.seenAction in the frame where the unsigned or the signed order is the serial order of
                // sequences near this one (SEEN_ACTION).
                bool signed_frame = hdr.inagg.sequence[31:30] == 0 || hdr.inagg.sequence[31:24] == 0xFF;
                if (hdr.inagg.copy == 0) {
                    if (signed_frame) {
                        meta.seen = seen0_signed.execute(meta.seen_index);
                    } else {
                        meta.seen = seen0_unsigned.execute(meta.seen_index);
                    }
                } else {
                    if (signed_frame) {
                        meta.seen = seen1_signed.execute(meta.key_index);
                    } else {
                        meta.seen = seen1_unsigned.execute(meta.key_index);
                    }
                }
                // SlotPool.roundAction + countAction (round_contribute / round_count / round_inspect).
                round_dispatch.apply();

                bool first = false;
                bool completes = false;
                if (meta.round == 0) {
                    if (meta.round_path == PATH_NEWER) {
                        // A newer round on the copy while its round is incomplete: SlotPool's ROUND_VIOLATION.
                        inagg_counters.count(C_DROP_VIOLATION);
                    } else {
                        // Not the copy's round (older than it): SlotPool's ROUND_STALE.
                        inagg_counters.count(C_DROP_STALE);
                    }
                } else if (meta.round_path != PATH_NEWER && meta.round == 1) {
                    // SlotPool's ROUND_COMPLETE: ResultMulticast.completedAgain, the stored result to this worker alone.
                    // Answered as the round's result was: REDUCE_SCATTER header-only to a worker other than the Owner
                    // (one chunk: every lane was parsed, so invalidating them cuts the message to its header), an
                    // ALL_GATHER's header-only request with the stored lanes, read chunk by chunk (harvest_all).
                    meta.exponent = exp_read.execute(meta.pool_index);
                    meta.outcome = OUTCOME_UNICAST;
                    if (meta.collective == COLLECTIVE_REDUCE_SCATTER && hdr.inagg.worker_id != meta.owner) {
                        hdr.inagg.element_count = 0;
#include "generated/inagg_tna_lane_invalidate.p4"
                    } else if (meta.header_only == 1) {
                        meta.harvest_all = 1;
                    } else {
                        meta.lane_op = LANE_READ;
                    }
                    hdr.inagg.flags = (hdr.inagg.flags & RESULT_KEEPS) | FLAG_RESULT;
                    hdr.inagg.next_exponent = meta.exponent;
                    inagg_counters.count(C_RETRANSMIT_REPLIES);
                } else if (meta.round_path == PATH_DUP) {
                    // The open round already has this worker: SoftwareSwitch's DUPLICATES.
                    inagg_counters.count(C_DUPLICATES);
                } else {
                    // A fresh contribution (countAction): round_contribute answered the new state (W: the first
                    // contributor, 1: the last), round_count the old one (2: the last).
                    if (meta.round_path == PATH_NEWER) {
                        if (meta.round == (bit<32>)meta.workers) {
                            first = true;
                        }
                        if (meta.round == 1) {
                            completes = true;
                        }
                    } else if (meta.round == 2) {
                        completes = true;
                    }
                    if (first) {
                        meta.exponent = exp_write.execute(meta.pool_index);
                    } else {
                        meta.exponent = exp_max.execute(meta.pool_index);
                    }
                    // The first contribution and an ALL_GATHER's Owner write their lanes; later ones combine by
                    // the op; a header-only contribution touches no lane.
                    if (meta.header_only == 1) {
                        meta.lane_op = LANE_NONE;
                    } else if (first || meta.collective == COLLECTIVE_ALL_GATHER) {
                        meta.lane_op = LANE_WRITE;
                    } else if (meta.op == OP_MIN) {
                        meta.lane_op = LANE_MIN;
                    } else if (meta.op == OP_MAX) {
                        meta.lane_op = LANE_MAX;
                    } else {
                        meta.lane_op = LANE_ADD;
                    }
                    inagg_counters.count(C_CONTRIBUTIONS);
                    if (completes) {
                        meta.outcome = OUTCOME_MULTICAST;
                        hdr.inagg.flags = (hdr.inagg.flags & RESULT_KEEPS) | FLAG_RESULT;
                        hdr.inagg.next_exponent = meta.exponent;
                        // An ALL_GATHER completed by a header-only contribution: the stored lanes, read back.
                        meta.harvest_all = meta.header_only;
                        if (meta.collective == COLLECTIVE_REDUCE_SCATTER) {
                            // every replica but the owner's leaves header-only (egress)
                            hdr.bridge.scatter = 1;
                            hdr.bridge.owner = meta.owner;
                        }
                    }
                }
                bit<32> first_row = meta.lane_row;
                if (meta.harvest_all == 1) {
                    // The result of job_lanes lanes from the registers: chunk P - 1 in this pass, into lane headers
                    // made valid here, then chunks P - 2 .. 0 by harvest passes, each put in front.
#include "generated/inagg_tna_lane_validate_count.p4"
                    meta.lane_op = LANE_READ;
                    hdr.inagg.element_count = meta.job_lanes;
                    meta.lane_row = meta.lane_row + (bit<32>)(meta.chunks - 1);
                }
                if (meta.chunks == 1 || (meta.lane_op == LANE_NONE && meta.harvest_all == 0)) {
                    // One pass (or nothing to aggregate): deliver now.
                    if (meta.outcome == OUTCOME_MULTICAST) {
                        hdr.bridge.is_multicast = 1;
                        ig_tm_md.mcast_grp_a = meta.mcast_grp;
                        ig_dprsr_md.drop_ctl = 0;
                    } else if (meta.outcome == OUTCOME_UNICAST) {
                        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
                        ig_dprsr_md.drop_ctl = 0;
                    }
                } else {
                    // Chunk 0 is done in this pass (harvest_all: chunk P - 1); the decision rides along for the
                    // other chunks.
                    carry_decision(first_row);
                    if (meta.harvest_all == 1) {
                        recirculate_next(PHASE_HARVEST, meta.chunks - 2);
                    } else {
                        meta.consumed = 1;
                        recirculate_next(PHASE_CONSUME, 1);
                    }
                }
            } else {
                // ---- ESA job: EsaAggregation.fromWorker (docs/esa.md "What the P4 programs would need") -------------
                // TNA: ESA jobs carry one chunk (at most 32 lanes) and at most 32 workers (one bitmap word), so an
                // eviction swaps the holder's whole partial into the packet in one pass; the control plane refuses
                // larger ESA jobs (docs/p4.md).
                meta.esa_index = (hdr.inagg.sequence + meta.hash_offset) & (ESA_AGGREGATORS - 1);
                meta.esa_tag = meta.job_tag | (hdr.inagg.sequence >> 8);
                meta.lane_row = meta.lane_base + meta.esa_index;
                bit<8> int32_flag = hdr.inagg.flags & FLAG_INT32;
                meta.new_id = hdr.inagg.job_id ++ hdr.inagg.copy ++ hdr.inagg.slot;
                // Low byte 1: a block holds the aggregator (esa_fmt_reg).
                meta.new_fmt = int32_flag ++ hdr.inagg.block_exponent ++ hdr.inagg.prio ++ 8w1;
                if (meta.rank_from_header == 1) {
                    meta.rank = (bit<32>)hdr.inagg.prio + 1;
                }
                meta.esa_tag_s = (int<32>)meta.esa_tag;
                meta.rank_s = (int<32>)meta.rank;
                meta.server_job = hdr.inagg.job_id;
                meta.pool_index = POOL_COPIES + meta.esa_index;
                meta.key_index = ESA_KEY_BASE + meta.esa_index;

                if ((hdr.inagg.flags & FLAG_RETRANSMIT) != 0) {
                    // A retransmission never allocates; if the aggregator holds its block, the partial is flushed
                    // to the server (this packet, lanes read back) and the raw retransmission follows it there (an
                    // ingress mirror of the packet as it came, docs/esa.md item 5).
                    meta.worker_bit = 0;    // esa_bits below only reads the word (meta.claim is 1 then)
                    meta.claim = esa_key_free.execute(meta.key_index);
                    if (meta.claim == 1) {
                        meta.bits = esa_bits.execute(meta.pool_index);
                        meta.exponent = exp_read.execute(meta.pool_index);
                        esa_tomb_flush.execute(meta.esa_index);
                        esa_fmt_free.execute(meta.esa_index);
                        meta.lane_op = LANE_READ;
                        hdr.inagg.msg_type = MSG_PARTIAL;
                        hdr.inagg.flags = hdr.inagg.flags & FLAG_INT32;
                        // B = 1 bitmap word; Session stays the packet's: its block's job passed the session check,
                        // and the block is of that session because the control plane clears a job's aggregators when
                        // it starts a new session (v1model reads the holder's session here; the same while that holds).
                        hdr.inagg.worker_id = 1;
                        hdr.inagg.next_exponent = meta.exponent;
                        hdr.inagg.status = REASON_FLUSHED;
                        hdr.inagg.element_count = hdr.inagg.element_count + 1;
                        hdr.bitmap.setValid();
                        hdr.bitmap.word = meta.bits;
                        ig_dprsr_md.mirror_type = MIRROR_TYPE_I2E;
                        meta.mirror_kind = KIND_MIRROR_RAW;
                        meta.mirror_session = meta.ps_session;
                        esa_counters.count(E_FLUSHES);
                    } else {
                        hdr.inagg.status = REASON_RETRANSMIT;
                        esa_counters.count(E_FALLBACK_RETRANSMIT);
                    }
                    hdr.bridge.dst = DST_SERVER;
                    ig_dprsr_md.drop_ctl = 0;
                } else {
                    // meta.claim: this block's tag (HELD), 0 (TAKE) or the holder's tag (COLLIDE).
                    meta.claim = esa_key_claim.execute(meta.key_index);
                    if (meta.claim == meta.esa_tag) {
                        // HELD: AggregatorPool.seenAction + contribute.
                        meta.bits = esa_bits.execute(meta.pool_index);
                        if ((meta.bits & meta.worker_bit) != 0) {
                            esa_counters.count(E_DUPLICATES);
                        } else {
                            meta.exponent = exp_max.execute(meta.pool_index);
                            meta.lane_op = LANE_ADD;
                            if ((meta.bits | meta.worker_bit) == meta.full_mask) {
                                meta.outcome = OUTCOME_MULTICAST;
                            }
                            esa_contributions.count(0);
                        }
                    } else if (meta.claim == 0) {
                        // TAKE: AggregatorPool.allocate, with swap semantics (the holder's state comes back).
                        meta.bits = esa_bits.execute(meta.pool_index);
                        meta.holder_seq = esa_seq_swap.execute(meta.esa_index);
                        meta.holder_id = esa_id_swap.execute(meta.esa_index);
                        meta.holder_fmt = esa_fmt_swap.execute(meta.esa_index);
                        meta.holder_session = esa_session_swap.execute(meta.esa_index);
                        meta.exponent = esa_exp_swap.execute(meta.pool_index);
                        // AggregatorPool.allocate: an allocation and this packet's contribution, also on eviction.
                        esa_allocations.count(0);
                        esa_contributions.count(0);
                        if (meta.holder_fmt[7:0] == 0) {
                            // It was free: this packet's lanes are the sum so far (W = 1 is refused for ESA).
                            meta.lane_op = LANE_WRITE;
                        } else {
                            // PREEMPTED: the packet leaves as the holder's PARTIAL, for the holder's server; its
                            // own lanes take the holder's place (lane_k_swap).
                            esa_tomb_evict.execute(meta.esa_index);
                            meta.lane_op = LANE_SWAP;
                            meta.server_job = (bit<16>)(meta.holder_id >> 16);
                            hdr.inagg.msg_type = MSG_PARTIAL;
                            hdr.inagg.flags = meta.holder_fmt[31:24];
                            hdr.inagg.job_id = (bit<16>)(meta.holder_id >> 16);
                            hdr.inagg.worker_id = 1;    // B: one bitmap word
                            hdr.inagg.copy = meta.holder_id[15:15];
                            hdr.inagg.slot = meta.holder_id[14:0];
                            hdr.inagg.sequence = meta.holder_seq;
                            hdr.inagg.element_count = hdr.inagg.element_count + 1;
                            hdr.inagg.block_exponent = meta.holder_fmt[23:16];
                            hdr.inagg.next_exponent = meta.exponent;
                            hdr.inagg.prio = meta.holder_fmt[15:8];
                            hdr.inagg.status = REASON_PREEMPTED;
                            hdr.inagg.reserved = meta.holder_session;
                            hdr.bitmap.setValid();
                            hdr.bitmap.word = meta.bits;
                            hdr.bridge.dst = DST_SERVER;
                            ig_dprsr_md.drop_ctl = 0;
                            esa_counters.count(E_PREEMPTIONS);
                        }
                    } else {
                        // COLLIDE: ATP's fallback, the packet to its server as it came (docs/esa.md item 7).
                        meta.tomb = esa_tomb_collide.execute(meta.esa_index);
                        if (meta.tomb == 1) {
                            hdr.inagg.status = REASON_TOMBSTONE;
                            esa_counters.count(E_FALLBACK_TOMBSTONE);
                        } else {
                            hdr.inagg.status = REASON_COLLISION;
                            esa_counters.count(E_FALLBACK_COLLISION);
                        }
                        hdr.bridge.dst = DST_SERVER;
                        ig_dprsr_md.drop_ctl = 0;
                    }
                }
                if (hdr.bridge.dst == DST_SERVER) {
                    esa_server_port.apply();
                }
                if (meta.outcome == OUTCOME_MULTICAST) {
                    // EsaAggregation.complete: the sum (this packet's running sums) goes to the workers and, as a
                    // COMPLETE PARTIAL, to the server (a member of the job's group); the key is freed by one more
                    // pass (TNA: the key register was already touched in this one).
                    hdr.inagg.flags = (hdr.inagg.flags & FLAG_INT32) | FLAG_RESULT;
                    hdr.inagg.next_exponent = meta.exponent;
                    hdr.recirc.setValid();
                    hdr.recirc.chunks = 1;
                    hdr.recirc.lane_op = (bit<8>)LANE_NONE;
                    hdr.recirc.lane_row = 0;
                    hdr.recirc.outcome = OUTCOME_MULTICAST;
                    hdr.recirc._pad0 = 0;
                    hdr.recirc.mcast_grp = meta.mcast_grp;
                    hdr.recirc._pad1 = 0;
                    hdr.recirc.reply_port = ig_intr_md.ingress_port;
                    hdr.recirc.esa_index = meta.esa_index;
                    hdr.recirc.esa_tag = meta.esa_tag;
                    hdr.recirc.full_mask = meta.full_mask;
                    recirculate_next(PHASE_RELEASE, 0);
                }
            }
        }

#include "generated/inagg_tna_lane_apply.p4"
        if (meta.consumed == 1) {
#include "generated/inagg_tna_lane_invalidate.p4"
        }
        if (meta.recirculate == 1) {
            // Recirculated packets bypass egress: no bridge header.
            hdr.bridge.setInvalid();
        }
    }
}

control InaggIngressDeparser(packet_out pkt, inout headers_t hdr, in ingress_metadata_t meta,
                             in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Mirror() mirror;
    apply {
        if (ig_dprsr_md.mirror_type == MIRROR_TYPE_I2E) {
            mirror.emit<mirror_h>(meta.mirror_session, {meta.mirror_kind});
        }
        pkt.emit(hdr.bridge);
        pkt.emit(hdr.recirc);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.inagg);
#include "generated/inagg_tna_lane_emit.p4"
        pkt.emit(hdr.bitmap);
    }
}

// Egress parses the headers it rewrites; the lanes ride along as payload, except for an ESA completion, whose
// server replica gets its bitmap word appended after them.
parser InaggEgressParser(packet_in pkt, out headers_t hdr, out egress_metadata_t meta,
                         out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        meta = {...};
        pkt.extract(eg_intr_md);
        transition select(pkt.lookahead<bit<8>>()) {
            KIND_MIRROR_RAW: parse_mirror;
            default: parse_bridge;
        }
    }
    state parse_mirror {
        pkt.extract(hdr.mirror);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.ipv4);
        pkt.extract(hdr.udp);
        pkt.extract(hdr.inagg);
        transition accept;
    }
    state parse_bridge {
        pkt.extract(hdr.bridge);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.ipv4);
        pkt.extract(hdr.udp);
        pkt.extract(hdr.inagg);
        transition select(hdr.bridge.esa_complete, hdr.bridge.scatter) {
            (1, _): parse_lane_0;
            (_, 1): parse_lane_0;
            default: accept;
        }
    }
#include "generated/inagg_tna_lane_parser.p4"
}

control InaggEgress(inout headers_t hdr, inout egress_metadata_t meta,
                    in egress_intrinsic_metadata_t eg_intr_md,
                    in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                    inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                    inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    // Counted per copy that leaves: SwitchCounter RESULTS_SENT (egress_counters), EsaCounter RESULTS_SENT and
    // RESULT_COPIES, and the flush's raw retransmission, FALLBACK_RETRANSMIT (esa_egress_counters).
    Counter<bit<64>, bit<8>>(32, CounterType_t.PACKETS) egress_counters;
    Counter<bit<64>, bit<8>>(32, CounterType_t.PACKETS) esa_egress_counters;

    action set_switch_address(bit<48> mac, bit<32> ipv4) {
        meta.switch_mac = mac;
        meta.switch_ip = ipv4;
    }
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
        eg_dprsr_md.drop_ctl = 1;
    }
    table worker_endpoint {
        key = {
            hdr.inagg.job_id: exact @name("job_id");
            hdr.bridge.dst_worker: exact @name("worker");
        }
        actions = { set_endpoint; no_endpoint; }
        default_action = no_endpoint();
        size = 65536;
    }
    // ESA: the job's parameter server (PARTIALs carry the holder's job id by now).
    table server_endpoint {
        key = { hdr.inagg.job_id: exact @name("job_id"); }
        actions = { set_endpoint; no_endpoint; }
        default_action = no_endpoint();
        size = 1024;
    }

    apply {
        meta.dst = DST_SENDER;
        if (hdr.mirror.isValid()) {
            // The raw retransmission of an ESA flush (RAW, reason RETRANSMIT).
            hdr.inagg.status = REASON_RETRANSMIT;
            meta.dst = DST_SERVER;
            esa_egress_counters.count(E_FALLBACK_RETRANSMIT);
        } else {
            meta.dst = hdr.bridge.dst;
            if (hdr.bridge.is_multicast == 1) {
                if (eg_intr_md.egress_rid == ESA_SERVER_RID) {
                    // EsaAggregation.sendPartial(REASON_COMPLETE): the sum with every worker's bit (docs/esa.md item 8).
                    hdr.inagg.msg_type = MSG_PARTIAL;
                    hdr.inagg.flags = hdr.inagg.flags & FLAG_INT32;
                    hdr.inagg.worker_id = 1;    // B: one bitmap word; Session stays the request's (the job's)
                    hdr.inagg.element_count = hdr.inagg.element_count + 1;
                    hdr.inagg.status = REASON_COMPLETE;
                    hdr.bitmap.setValid();
                    hdr.bitmap.word = hdr.bridge.full_mask;
                    meta.dst = DST_SERVER;
                    esa_egress_counters.count(E_RESULT_COPIES);
                } else {
                    hdr.bridge.dst_worker = eg_intr_md.egress_rid;
                    hdr.inagg.worker_id = eg_intr_md.egress_rid;
                    if (hdr.bridge.scatter == 1 && eg_intr_md.egress_rid != hdr.bridge.owner) {
                        // REDUCE_SCATTER: the lanes to the Owner only; the others' copies leave header-only (one
                        // chunk, all parsed here, so invalidating the lanes cuts them off).
                        hdr.inagg.element_count = 0;
#include "generated/inagg_tna_lane_invalidate.p4"
                    }
                    if (hdr.bridge.esa_complete == 1) {
                        esa_egress_counters.count(E_RESULTS_SENT);
                    } else {
                        egress_counters.count(C_RESULTS_SENT);
                    }
                }
            }
        }
        if (meta.dst == DST_WORKER) {
            worker_endpoint.apply();
        } else if (meta.dst == DST_SERVER) {
            server_endpoint.apply();
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
        hdr.bridge.setInvalid();
        hdr.mirror.setInvalid();
    }
}

control InaggEgressDeparser(packet_out pkt, inout headers_t hdr, in egress_metadata_t meta,
                            in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_checksum;
    apply {
        hdr.ipv4.hdr_checksum = ipv4_checksum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len, hdr.ipv4.identification,
            hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr,
            hdr.ipv4.dst_addr });
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.inagg);
#include "generated/inagg_tna_lane_emit.p4"
        pkt.emit(hdr.bitmap);
    }
}

Pipeline(InaggIngressParser(), InaggIngress(), InaggIngressDeparser(),
         InaggEgressParser(), InaggEgress(), InaggEgressDeparser()) pipe;

Switch(pipe) main;
