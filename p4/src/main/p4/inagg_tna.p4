/*
 * inagg switch for the Tofino Native Architecture (TNA, Tofino 1 and later).
 *
 * The pipeline of org.inagg.p4.softswitch.SoftwareSwitch and inagg_v1model.p4, shaped for Tofino's constraints: each
 * register is touched by at most one RegisterAction per pass, stateful decisions flow forward through the stages, and
 * a pass carries at most TNA_LANES lanes. Where those constraints force a difference from the software switch it is
 * marked "TNA:" below and listed in docs/p4.md. This program has not been compiled with bf-p4c in this repository
 * (no Tofino SDE here); see docs/p4.md for the expected stage use.
 *
 *   ingress parser   Ethernet / IPv4 / UDP to INAGG_UDP_PORT / inagg header / up to TNA_LANES lanes
 *   ingress          checks -> job_table -> worker_source -> slot check -> seen (seq-tagged bitmap word, both copies)
 *                    -> round+count -> exponent -> 32 lane registers -> decision (multicast, unicast reply, drop)
 *   egress           per replica: worker id = egress_rid, destination from worker_endpoint, source = switch_address
 *
 * Lanes: 32 lanes per packet in one ingress pass, one stateful ALU per lane (four per MAU stage, eight stages). Jobs
 * with more lanes per packet are refused by the control plane for this program; covering 64..256 lanes with
 * recirculation is designed in docs/p4.md but not implemented.
 *
 * Compile:  bf-p4c --target tofino --arch tna -o inagg_tna p4/src/main/p4/inagg_tna.p4
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

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IP_PROTO_UDP = 17;

const bit<4> MSG_AGGREGATE = 1;
const bit<4> MSG_JOIN = 2;
const bit<4> MSG_JOIN_ACK = 3;
const bit<4> MSG_REJECT = 4;
const bit<8> FLAG_RESULT = 0x01;
const bit<8> FLAG_INT32 = 0x04;
const bit<8> NO_EXPONENT = 0x80;
const bit<8> REJECT_UNKNOWN_JOB = 1;
const bit<8> REJECT_WORKER_ID_OUT_OF_RANGE = 2;
const bit<8> REJECT_WORKER_COUNT_MISMATCH = 3;

// Answers of the seen stage
const bit<32> SEEN_FRESH = 0;
const bit<32> SEEN_DUPLICATE = 1;
const bit<32> SEEN_STALE = 2;

// Answers of the round+count stage (besides a count 1..W)
const bit<32> ROUND_COMPLETE = 0x10000;
const bit<32> ROUND_VIOLATION = 0x20000;
const bit<32> ROUND_STALE = 0x30000;
const bit<32> ROUND_OPEN_DUPLICATE = 0x40000;

// What the lane registers do in this pass
const bit<2> LANE_NONE = 0;
const bit<2> LANE_WRITE = 1;
const bit<2> LANE_ADD = 2;
const bit<2> LANE_READ = 3;

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
    bit<8>  priority;
    bit<8>  status;
    bit<16> reserved;
}

header lane_t {
    bit<32> value;
}

// Ingress to egress: what egress must do with this packet.
header bridge_t {
    bit<6>  _pad;
    bit<1>  is_multicast;
    bit<1>  use_endpoint;
    bit<16> dst_worker;
}

struct headers_t {
    bridge_t   bridge;
    ethernet_t ethernet;
    ipv4_t     ipv4;
    udp_t      udp;
    inagg_t    inagg;
#include "generated/inagg_tna_lane_headers.p4"
}

struct ingress_metadata_t {
    bit<1>  job_found;
    bit<16> workers;
    bit<16> slots;
    bit<16> slot_base;
    bit<16> job_lanes;
    bit<16> mcast_grp;
    bit<1>  source_ok;
    bit<32> copy_index;
    bit<32> seen_index;
    bit<32> worker_bit;
    bit<32> seen;
    bit<32> round;
    bit<2>  lane_op;
    bit<8>  exponent;
    bit<16> wire_length;
}

struct egress_metadata_t {
    bit<48> switch_mac;
    bit<32> switch_ip;
}

// Bit-pair layouts of the stateful registers
struct seen_word_t {
    bit<32> seq;     // round the word's bits belong to
    bit<32> bits;    // workers 32*word .. 32*word+31 of that round
}

struct round_t {
    bit<32> seq;     // SlotPool.round
    bit<32> count;   // SlotPool.count; 0 = never used (SlotPool.used == false)
}

parser InaggIngressParser(packet_in pkt, out headers_t hdr, out ingress_metadata_t meta,
                          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
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
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (4w5, 13w0, IP_PROTO_UDP): parse_udp;
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
            default: accept;
        }
    }
#include "generated/inagg_tna_lane_parser.p4"
}

control InaggIngress(inout headers_t hdr, inout ingress_metadata_t meta,
                     in ingress_intrinsic_metadata_t ig_intr_md,
                     in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                     inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                     inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Counter<bit<64>, bit<8>>(32, CounterType_t.PACKETS) inagg_counters;

    // ---- job table and worker sources ------------------------------------------------------------------------
    action set_job(bit<16> workers, bit<16> slots, bit<16> slot_base, bit<16> lanes, bit<16> mcast_grp) {
        meta.job_found = 1;
        meta.workers = workers;
        meta.slots = slots;
        meta.slot_base = slot_base;
        meta.job_lanes = lanes;
        meta.mcast_grp = mcast_grp;
    }
    action unknown_job() {
        meta.job_found = 0;
    }
    table job_table {
        key = { hdr.inagg.job_id: exact @name("job_id"); }
        actions = { set_job; unknown_job; }
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

    // The worker's bit in its bitmap word: a table instead of a variable shift, which a MAU cannot do.
    action set_worker_bit(bit<32> bit_mask) {
        meta.worker_bit = bit_mask;
    }
    table worker_bit {
        key = { hdr.inagg.worker_id: exact; }
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

    // ---- SlotPool.seenAction ---------------------------------------------------------------------------------
    // TNA: the software switch sets the worker's bit in this copy and clears it in the other copy; here the round
    // decision (next stage) needs to know freshness first, and a register is touched once per pass. So each copy's
    // bitmap word is tagged with the round its bits belong to: a packet of a newer round starts the word afresh,
    // which is what clearing the other copy achieves in software, and a packet older than the word's round is
    // stale. One register per shadow copy, indexed by (slot_base + slot) * BITMAP_WORDS + worker / 32; the answer
    // is the worker's old bit (0 = fresh), or all ones for stale.
    Register<seen_word_t, bit<32>>(POOL_SLOTS * BITMAP_WORDS) seen0_reg;
    Register<seen_word_t, bit<32>>(POOL_SLOTS * BITMAP_WORDS) seen1_reg;
#define SEEN_ACTION(reg, name)                                                              \
    RegisterAction<seen_word_t, bit<32>, bit<32>>(reg) name = {                               \
        void apply(inout seen_word_t word, out bit<32> answer) {                              \
            if (word.seq == hdr.inagg.sequence) {                                             \
                answer = word.bits & meta.worker_bit;                                         \
                word.bits = word.bits | meta.worker_bit;                                      \
            } else if (hdr.inagg.sequence - word.seq < 0x80000000) {                          \
                answer = SEEN_FRESH;                                                          \
                word.seq = hdr.inagg.sequence;                                                \
                word.bits = meta.worker_bit;                                                  \
            } else {                                                                          \
                answer = 0xFFFFFFFF;                                                          \
            }                                                                                 \
        }                                                                                     \
    }
    SEEN_ACTION(seen0_reg, seen0_action);
    SEEN_ACTION(seen1_reg, seen1_action);

    // ---- SlotPool.roundAction + SlotPool.countAction ---------------------------------------------------------
    // TNA: (seq, count) in one register pair so the round decision and the count update happen in one stateful
    // ALU; count 0 means never used. Stale packets were stopped by the seen stage. Three comparisons (seq equal,
    // count zero, count = W) may exceed one Tofino 1 stateful ALU; bf-p4c will say, and the fix is to store
    // W - count so that "complete" and "unused" share the zero test (docs/p4.md). For a fresh contribution: same round and incomplete -> count + 1 (returned);
    // newer round on a complete or unused copy -> new round with count 1; newer on an incomplete copy -> violation;
    // older -> stale. For a duplicate: complete -> ROUND_COMPLETE (answer it) else ROUND_OPEN_DUPLICATE.
    Register<round_t, bit<32>>(POOL_COPIES) round_reg;
    RegisterAction<round_t, bit<32>, bit<32>>(round_reg) round_contribute = {
        void apply(inout round_t r, out bit<32> answer) {
            if (r.seq == hdr.inagg.sequence && r.count != 0 && r.count != (bit<32>)meta.workers) {
                r.count = r.count + 1;
                answer = r.count;
            } else if (r.count == 0 || (r.count == (bit<32>)meta.workers && r.seq != hdr.inagg.sequence)) {
                r.seq = hdr.inagg.sequence;
                r.count = 1;
                answer = 1;
            } else if (r.seq == hdr.inagg.sequence) {
                answer = ROUND_COMPLETE;
            } else {
                answer = ROUND_VIOLATION;
            }
        }
    };
    RegisterAction<round_t, bit<32>, bit<32>>(round_reg) round_inspect = {
        void apply(inout round_t r, out bit<32> answer) {
            if (r.seq == hdr.inagg.sequence && r.count == (bit<32>)meta.workers) {
                answer = ROUND_COMPLETE;
            } else {
                answer = ROUND_OPEN_DUPLICATE;
            }
        }
    };

    // ---- SlotPool.exponentAction -----------------------------------------------------------------------------
    Register<bit<8>, bit<32>>(POOL_COPIES) exp_reg;
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

    // ---- SlotPool.lanesAction / readLanes: one register per lane -------------------------------------------
#include "generated/inagg_tna_lane_registers.p4"

    apply {
        ig_dprsr_md.drop_ctl = 1;
        hdr.bridge.setValid();
        hdr.bridge.is_multicast = 0;
        hdr.bridge.use_endpoint = 1;
        meta.lane_op = LANE_NONE;
        if (!hdr.inagg.isValid()) {
            return;
        }
        hdr.bridge.dst_worker = hdr.inagg.worker_id;
        inagg_counters.count(C_RECEIVED);
        meta.wire_length = hdr.inagg.element_count << 2;
        if (hdr.inagg.version != 1 || hdr.udp.length != 28 + meta.wire_length
                || hdr.ipv4.total_len != 48 + meta.wire_length || ig_prsr_md.parser_err != 0) {
            inagg_counters.count(C_DROP_MALFORMED);
            return;
        }
        // Each table is applied at one place: the job table for every message, the worker's registered source for
        // every message whose job exists and whose worker id is in range.
        job_table.apply();
        meta.source_ok = 0;
        if (meta.job_found == 1 && hdr.inagg.worker_id < meta.workers) {
            worker_source.apply();
        }

        if (hdr.inagg.msg_type == MSG_JOIN) {
            // SoftwareSwitch.join in the data plane. TNA: a JOIN carrying lanes cannot be cut short here (no
            // truncation in ingress), so it is dropped as malformed; workers send JOINs without lanes.
            if (hdr.inagg.element_count != 0) {
                inagg_counters.count(C_DROP_MALFORMED);
                return;
            }
            bit<8> reason = 0;
            bit<32> announced_workers = hdr.inagg.sequence;
            if (meta.job_found == 0) {
                reason = REJECT_UNKNOWN_JOB;
            } else if (hdr.inagg.worker_id >= meta.workers) {
                reason = REJECT_WORKER_ID_OUT_OF_RANGE;
            } else {
                if (meta.source_ok == 0) {
                    inagg_counters.count(C_DROP_SOURCE_MISMATCH);
                    return;
                }
                if (announced_workers != (bit<32>)meta.workers) {
                    reason = REJECT_WORKER_COUNT_MISMATCH;
                }
            }
            hdr.inagg.flags = FLAG_RESULT;
            hdr.inagg.copy = 0;
            hdr.inagg.slot = 0;
            hdr.inagg.sequence = 0;
            hdr.inagg.block_exponent = 0;
            hdr.inagg.next_exponent = NO_EXPONENT;
            hdr.inagg.priority = 0;
            hdr.inagg.status = 0;
            hdr.inagg.reserved = 0;
            if (reason == 0) {
                hdr.inagg.msg_type = MSG_JOIN_ACK;
                hdr.inagg.slot = (bit<15>)meta.slots;
                hdr.inagg.sequence = (bit<32>)meta.workers;
                hdr.inagg.reserved = meta.job_lanes;
                inagg_counters.count(C_JOINS);
            } else {
                hdr.inagg.msg_type = MSG_REJECT;
                hdr.inagg.status = reason;
                inagg_counters.count(C_REJECTS);
            }
            // Back to the sender: its addresses become the destination.
            hdr.ethernet.dst_addr = hdr.ethernet.src_addr;
            hdr.ipv4.dst_addr = hdr.ipv4.src_addr;
            hdr.udp.dst_port = hdr.udp.src_port;
            hdr.bridge.use_endpoint = 0;
            ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
            ig_dprsr_md.drop_ctl = 0;
            return;
        }
        if (hdr.inagg.msg_type != MSG_AGGREGATE || (hdr.inagg.flags & FLAG_RESULT) != 0) {
            inagg_counters.count(C_DROP_MALFORMED);
            return;
        }
        if (meta.job_found == 0) {
            inagg_counters.count(C_DROP_UNKNOWN_JOB);
            return;
        }
        if (hdr.inagg.worker_id >= meta.workers) {
            inagg_counters.count(C_DROP_UNKNOWN_WORKER);
            return;
        }
        if (meta.source_ok == 0) {
            inagg_counters.count(C_DROP_SOURCE_MISMATCH);
            return;
        }
        if ((bit<16>)hdr.inagg.slot >= meta.slots) {
            inagg_counters.count(C_DROP_BAD_SLOT);
            return;
        }
        // TNA: every packet of a job carries exactly the job's lanes (no per-round lane count register), so the
        // software switch's ROUND_BAD_SIZE cannot arise; a shorter tail block must be padded by the worker.
        if (hdr.inagg.element_count != meta.job_lanes) {
            inagg_counters.count(C_DROP_BAD_SIZE);
            return;
        }
        worker_bit.apply();
        bit<32> pool_slot = (bit<32>)meta.slot_base + (bit<32>)hdr.inagg.slot;
        meta.copy_index = (pool_slot << 1) | (bit<32>)hdr.inagg.copy;
        meta.seen_index = (pool_slot << 3) | (bit<32>)(hdr.inagg.worker_id >> 5);

        if (hdr.inagg.copy == 0) {
            meta.seen = seen0_action.execute(meta.seen_index);
        } else {
            meta.seen = seen1_action.execute(meta.seen_index);
        }
        if (meta.seen == 0xFFFFFFFF) {
            // Older than the round this word holds: SlotPool.roundAction's ROUND_STALE.
            inagg_counters.count(C_DROP_STALE);
            return;
        }
        if (meta.seen == SEEN_FRESH) {
            meta.round = round_contribute.execute(meta.copy_index);
        } else {
            meta.round = round_inspect.execute(meta.copy_index);
        }

        if (meta.round == ROUND_VIOLATION) {
            inagg_counters.count(C_DROP_VIOLATION);
        } else if (meta.round == ROUND_OPEN_DUPLICATE) {
            inagg_counters.count(C_DUPLICATES);
        } else if (meta.round == ROUND_COMPLETE) {
            // SoftwareSwitch.sendResult: the stored result to this worker alone.
            meta.exponent = exp_read.execute(meta.copy_index);
            meta.lane_op = LANE_READ;
            hdr.inagg.flags = (hdr.inagg.flags & FLAG_INT32) | FLAG_RESULT;
            hdr.inagg.next_exponent = meta.exponent;
            ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
            ig_dprsr_md.drop_ctl = 0;
            inagg_counters.count(C_RETRANSMIT_REPLIES);
        } else {
            // A fresh contribution; meta.round is the new count.
            if (meta.round == 1) {
                meta.exponent = exp_write.execute(meta.copy_index);
                meta.lane_op = LANE_WRITE;
            } else {
                meta.exponent = exp_max.execute(meta.copy_index);
                meta.lane_op = LANE_ADD;
            }
            inagg_counters.count(C_CONTRIBUTIONS);
            if (meta.round == (bit<32>)meta.workers) {
                hdr.inagg.flags = (hdr.inagg.flags & FLAG_INT32) | FLAG_RESULT;
                hdr.inagg.next_exponent = meta.exponent;
                hdr.bridge.is_multicast = 1;
                ig_tm_md.mcast_grp_a = meta.mcast_grp;
                ig_dprsr_md.drop_ctl = 0;
            }
        }
#include "generated/inagg_tna_lane_apply.p4"
    }
}

control InaggIngressDeparser(packet_out pkt, inout headers_t hdr, in ingress_metadata_t meta,
                             in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr.bridge);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.inagg);
#include "generated/inagg_tna_lane_emit.p4"
    }
}

// Egress parses the headers it rewrites; the lanes ride along as payload.
parser InaggEgressParser(packet_in pkt, out headers_t hdr, out egress_metadata_t meta,
                         out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.bridge);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.ipv4);
        pkt.extract(hdr.udp);
        pkt.extract(hdr.inagg);
        transition accept;
    }
}

control InaggEgress(inout headers_t hdr, inout egress_metadata_t meta,
                    in egress_intrinsic_metadata_t eg_intr_md,
                    in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                    inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                    inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    Counter<bit<64>, bit<8>>(32, CounterType_t.PACKETS) egress_counters;

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

    apply {
        if (hdr.bridge.is_multicast == 1) {
            hdr.bridge.dst_worker = eg_intr_md.egress_rid;
            hdr.inagg.worker_id = eg_intr_md.egress_rid;
            egress_counters.count(C_RESULTS_SENT);
        }
        if (hdr.bridge.use_endpoint == 1) {
            worker_endpoint.apply();
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
    }
}

Pipeline(InaggIngressParser(), InaggIngress(), InaggIngressDeparser(),
         InaggEgressParser(), InaggEgress(), InaggEgressDeparser()) pipe;

Switch(pipe) main;
