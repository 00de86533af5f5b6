/*
 * inagg switch for the v1model architecture (bmv2 simple_switch).
 *
 * The same pipeline as org.inagg.p4.softswitch.SoftwareSwitch, which is its reference; the conformance vectors in
 * p4/src/test/vectors run against both (p4/scripts/run-vectors-bmv2.sh here, ConformanceVectorTest there).
 *
 *   parser      Ethernet / IPv4 (no options) / UDP to INAGG_UDP_PORT / inagg header / Element Count int32 lanes
 *   ingress     header checks -> job_table -> worker check -> worker_source -> slot check
 *               -> roundAction -> seenAction -> countAction -> lanesAction -> exponentAction -> decision
 *   egress      per replica: worker id = egress_rid, destination from worker_endpoint, source = switch_address
 *
 * Registers form one shared pool of POOL_SLOTS slots; a job owns slots [slot_base, slot_base + slots) (job_table), so
 * jobs never touch each other's registers. Every register is indexed by the copy index
 * 2 * (slot_base + slot) + copy, except the seen bitmaps (BITMAP_WORDS words of 32 bits per copy, word = worker / 32),
 * which cover MAX_WORKERS workers.
 *
 * Compile:  p4c-bm2-ss --std p4-16 -o inagg_v1model.json p4/src/main/p4/inagg_v1model.p4
 * Configure with the simple_switch_CLI commands org.inagg.p4.control.JobTable emits; see docs/p4.md.
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
const bit<8> NO_EXPONENT = 0x80;
const bit<8> REJECT_UNKNOWN_JOB = 1;
const bit<8> REJECT_WORKER_ID_OUT_OF_RANGE = 2;
const bit<8> REJECT_WORKER_COUNT_MISMATCH = 3;

// Outcomes of SlotPool.roundAction
const bit<3> ROUND_NEW = 0;
const bit<3> ROUND_OPEN = 1;
const bit<3> ROUND_COMPLETE = 2;
const bit<3> ROUND_STALE = 3;
const bit<3> ROUND_VIOLATION = 4;
const bit<3> ROUND_BAD_SIZE = 5;

// Indices of inagg_counters: org.inagg.p4.softswitch.SwitchCounter type id - 200
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

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    udp_t      udp;
    inagg_t    inagg;
    lane_t[MAX_LANES] lanes;
}

struct metadata_t {
    bit<16> lanes_left;
    // job_table
    bit<1>  job_found;
    bit<16> workers;
    bit<16> slots;
    bit<16> slot_base;
    bit<16> job_lanes;
    bit<16> mcast_grp;
    // worker_source
    bit<1>  source_ok;
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
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (4w5, 13w0, IP_PROTO_UDP): parse_udp;
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
#include "generated/inagg_v1model_lane_registers.p4"
    COUNTER(32, CounterType.packets) inagg_counters;

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
    // The job table of SoftwareSwitch (SwitchJobConfig): exact match on the job id.
    table job_table {
        key = { hdr.inagg.job_id: exact; }
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

    apply {
        mark_to_drop(standard_metadata);
        meta.is_multicast = 0;
        meta.reply_to_sender = 0;
        if (!hdr.inagg.isValid()) {
            // Not inagg traffic: this program only aggregates.
            return;
        }
        inagg_counters.count(C_RECEIVED);
        // InaggHeader.check: version, and the length equal to the header plus Element Count lanes.
        if (standard_metadata.parser_error != error.NoError
                || hdr.inagg.version != 1
                || (bit<32>)hdr.udp.length != 28 + ((bit<32>)hdr.inagg.element_count << 2)
                || hdr.ipv4.total_len != hdr.udp.length + 20
                || standard_metadata.packet_length < 34 + (bit<32>)hdr.udp.length) {
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
            // SoftwareSwitch.join: answered from the job table, back to the sender.
            meta.reply_to_sender = 1;
            meta.sender_mac = hdr.ethernet.src_addr;
            meta.sender_ip = hdr.ipv4.src_addr;
            meta.sender_port = hdr.udp.src_port;
            bit<8> reason = 0;
            bit<32> announced_workers = hdr.inagg.sequence;
            if (meta.job_found == 0) {
                reason = REJECT_UNKNOWN_JOB;
            } else if (hdr.inagg.worker_id >= meta.workers) {
                reason = REJECT_WORKER_ID_OUT_OF_RANGE;
            } else {
                if (meta.source_ok == 0) {
                    // Not the registered source: no answer to a spoofed address.
                    inagg_counters.count(C_DROP_SOURCE_MISMATCH);
                    return;
                }
                if (announced_workers != (bit<32>)meta.workers) {
                    reason = REJECT_WORKER_COUNT_MISMATCH;
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
#include "generated/inagg_v1model_lane_invalidate.p4"
            standard_metadata.egress_spec = standard_metadata.ingress_port;
            return;
        }
        if (hdr.inagg.msg_type != MSG_AGGREGATE || (hdr.inagg.flags & FLAG_RESULT) != 0) {
            inagg_counters.count(C_DROP_MALFORMED);
            return;
        }

        // Job table
        if (meta.job_found == 0) {
            inagg_counters.count(C_DROP_UNKNOWN_JOB);
            return;
        }
        // Worker check: id below the job's workers, source equal to the registered one.
        if (hdr.inagg.worker_id >= meta.workers) {
            inagg_counters.count(C_DROP_UNKNOWN_WORKER);
            return;
        }
        if (meta.source_ok == 0) {
            inagg_counters.count(C_DROP_SOURCE_MISMATCH);
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
        meta.copy_index = (((bit<32>)meta.slot_base + (bit<32>)hdr.inagg.slot) << 1) | (bit<32>)hdr.inagg.copy;

        // SlotPool.roundAction on (used, seq, count, width) of the copy; sequences compare as serial numbers.
        used_reg.read(meta.used, meta.copy_index);
        seq_reg.read(meta.round_seq, meta.copy_index);
        count_reg.read(meta.count, meta.copy_index);
        width_reg.read(meta.round_lanes, meta.copy_index);
        bit<32> age = hdr.inagg.sequence - meta.round_seq;
        bool newer = age != 0 && age[31:31] == 0;
        if (meta.used == 0 || (newer && meta.count == meta.workers)) {
            used_reg.write(meta.copy_index, 1);
            seq_reg.write(meta.copy_index, hdr.inagg.sequence);
            count_reg.write(meta.copy_index, 0);
            width_reg.write(meta.copy_index, hdr.inagg.element_count);
            meta.count = 0;
            meta.round_lanes = hdr.inagg.element_count;
            meta.round = ROUND_NEW;
        } else if (age == 0) {
            if (meta.count == meta.workers) {
                meta.round = ROUND_COMPLETE;
            } else if (meta.round_lanes == hdr.inagg.element_count) {
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
        } else if (meta.round == ROUND_COMPLETE) {
            // SoftwareSwitch.sendResult: the stored result back to this worker alone, never added again.
            exp_reg.read(meta.exponent, meta.copy_index);
#include "generated/inagg_v1model_lane_read.p4"
            hdr.inagg.flags = (hdr.inagg.flags & FLAG_INT32) | FLAG_RESULT;
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
            meta.first = meta.count == 1 ? 1w1 : 1w0;

#include "generated/inagg_v1model_lane_add.p4"

            // SlotPool.exponentAction: the first contributor writes, the others max-reduce (signed).
            exp_reg.read(meta.exponent, meta.copy_index);
            if (meta.first == 1 || (int<8>)hdr.inagg.next_exponent > (int<8>)meta.exponent) {
                meta.exponent = hdr.inagg.next_exponent;
                exp_reg.write(meta.copy_index, meta.exponent);
            }
            inagg_counters.count(C_CONTRIBUTIONS);

            // Decision: the W-th contribution multicasts the sum (SoftwareSwitch.multicastResult); others are absorbed.
            if (meta.count == meta.workers) {
                hdr.inagg.flags = (hdr.inagg.flags & FLAG_INT32) | FLAG_RESULT;
                hdr.inagg.element_count = meta.round_lanes;
                hdr.inagg.next_exponent = meta.exponent;
                meta.is_multicast = 1;
                standard_metadata.mcast_grp = meta.mcast_grp;
            }
        }
    }
}

control InaggEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t standard_metadata) {
    COUNTER(32, CounterType.packets) egress_counters;

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

    apply {
        if (!hdr.inagg.isValid()) {
            return;
        }
        if (meta.is_multicast == 1) {
            // One replica per worker, replication id = worker id: rewrite the worker id per copy.
            meta.dst_worker = standard_metadata.egress_rid;
            hdr.inagg.worker_id = standard_metadata.egress_rid;
            egress_counters.count(C_RESULTS_SENT);
        }
        if (meta.reply_to_sender == 1) {
            hdr.ethernet.dst_addr = meta.sender_mac;
            hdr.ipv4.dst_addr = meta.sender_ip;
            hdr.udp.dst_port = meta.sender_port;
        } else {
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
    }
}

V1Switch(InaggParser(), InaggVerifyChecksum(), InaggIngress(), InaggEgress(), InaggComputeChecksum(),
         InaggDeparser()) main;
