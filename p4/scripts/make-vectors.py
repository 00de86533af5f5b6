#!/usr/bin/env python3
"""Writes the conformance vectors p4/src/test/vectors/*.stf (see p4/src/test/vectors/README.md).

Each scenario states its packets and, explicitly, the frames the switch must send: sums, maxima and destinations are
worked out here by hand-written arithmetic, not by running any switch, so that the software switch (JUnit
ConformanceVectorTest) and the P4 programs (scripts/run-vectors-bmv2.sh) are both checked against an independent
statement of the protocol. The setup lines are written in simple_switch_CLI syntax; the JUnit test also checks that the
Java control plane (org.inagg.p4.control.JobTable) emits exactly these lines.

Regenerate after changing a scenario:  python3 p4/scripts/make-vectors.py
"""
import os
import struct

INAGG_PORT = 47000
SWITCH_MAC = "02:00:00:00:00:fe"
SWITCH_IP = "10.0.0.254"

AGGREGATE, JOIN, JOIN_ACK, REJECT = 1, 2, 3, 4
FLAG_RESULT, FLAG_RETRANSMIT, FLAG_INT32 = 0x01, 0x02, 0x04
NO_EXPONENT = -128
UNKNOWN_JOB, WORKER_ID_OUT_OF_RANGE, WORKER_COUNT_MISMATCH = 1, 2, 3

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "test", "vectors")


def mac_bytes(mac):
    return bytes(int(octet, 16) for octet in mac.split(":"))


def ip_bytes(ip):
    return bytes(int(octet) for octet in ip.split("."))


def ipv4_checksum(header):
    total = sum(struct.unpack("!10H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return (~total) & 0xFFFF


def frame(src_mac, dst_mac, src_ip, dst_ip, sport, dport, payload, ident, flags_frag, ttl):
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp) + len(payload), ident, flags_frag, ttl, 17, 0,
                     ip_bytes(src_ip), ip_bytes(dst_ip))
    ip = ip[:10] + struct.pack("!H", ipv4_checksum(ip)) + ip[12:]
    return mac_bytes(dst_mac) + mac_bytes(src_mac) + b"\x08\x00" + ip + udp + payload


def inagg(msg_type, flags, job, worker, slot=0, copy=0, seq=0, lanes=(), count=None, block_exp=0,
          next_exp=NO_EXPONENT, priority=0, status=0, reserved=0, version=1):
    count = len(lanes) if count is None else count
    header = struct.pack("!BBHHHiHbbBBH", (version << 4) | msg_type, flags, job, worker, (copy << 15) | slot, seq,
                         count, block_exp, next_exp, priority, status, reserved)
    return header + b"".join(struct.pack("!i", wrap(v)) for v in lanes)


def wrap(value):
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


class Host:
    def __init__(self, port, mac, ip, udp):
        self.port, self.mac, self.ip, self.udp = port, mac, ip, udp


def host(n, port=None):
    return Host(port if port is not None else n, "02:00:00:00:00:%02x" % n, "10.0.0.%d" % n, 40000 + n)


class Job:
    def __init__(self, job_id, workers, slots, base, lanes, group):
        self.job_id, self.workers, self.slots, self.base, self.lanes, self.group = \
            job_id, workers, slots, base, lanes, group


class Vector:
    def __init__(self, name, title):
        self.name, self.lines, self.jobs = name, ["# " + line for line in title.strip().splitlines()], []

    def comment(self, text):
        self.lines.append("")
        self.lines.append("# " + text)

    def setup(self, *jobs):
        self.jobs = list(jobs)
        self.lines.append("")
        self.lines.append("# setup (simple_switch_CLI; the same lines org.inagg.p4.control.JobTable emits)")
        self.lines.append("register_reset InaggIngress.used_reg")
        self.lines.append("register_reset InaggIngress.seen_reg")
        self.lines.append("table_set_default InaggEgress.switch_address InaggEgress.set_switch_address %s %s"
                          % (SWITCH_MAC, SWITCH_IP))
        handle = 0
        for job in jobs:
            self.lines.append("table_add InaggIngress.job_table InaggIngress.set_job %d => %d %d %d %d %d"
                              % (job.job_id, len(job.workers), job.slots, job.base, job.lanes, job.group))
            for w, h in enumerate(job.workers):
                self.lines.append("table_add InaggIngress.worker_source InaggIngress.source_ok %d %d %s %d =>"
                                  % (job.job_id, w, h.ip, h.udp))
            for w, h in enumerate(job.workers):
                self.lines.append("table_add InaggEgress.worker_endpoint InaggEgress.set_endpoint %d %d => %s %s %d"
                                  % (job.job_id, w, h.mac, h.ip, h.udp))
            self.lines.append("mc_mgrp_create %d" % job.group)
            for w, h in enumerate(job.workers):
                self.lines.append("mc_node_create %d %d" % (w, h.port))
                self.lines.append("mc_node_associate %d %d" % (job.group, handle))
                handle += 1

    def send(self, sender, message, port=None, ident=0x1234, dport=INAGG_PORT, ip_len_delta=0):
        data = frame(sender.mac, SWITCH_MAC, sender.ip, SWITCH_IP, sender.udp, dport, message, ident, 0, 64)
        self.lines.append("packet %d %s" % (sender.port if port is None else port, data.hex().upper()))

    def expect(self, receiver, message, port=None):
        """A frame from the switch: fixed IPv4 id 0, DF, TTL 64, UDP source port INAGG_PORT, checksum 0."""
        data = frame(SWITCH_MAC, receiver.mac, SWITCH_IP, receiver.ip, INAGG_PORT, receiver.udp, message, 0, 0x4000,
                     64)
        self.lines.append("expect %d %s" % (receiver.port if port is None else port, data.hex().upper()))

    def counters(self, **expected):
        """Software switch counters after the run; checked by the JUnit runner only (the bmv2 runner skips them)."""
        self.lines.append("")
        for name, value in expected.items():
            self.lines.append("softswitch_counter %s %d" % (name, value))

    def write(self):
        with open(os.path.join(OUT_DIR, self.name + ".stf"), "w") as out:
            out.write("\n".join(self.lines) + "\n")


def contribution(job, worker, slot, copy, seq, lanes, next_exp=0, block_exp=0, flags=0, priority=0):
    return inagg(AGGREGATE, flags, job.job_id, worker, slot, copy, seq, lanes, block_exp=block_exp,
                 next_exp=next_exp, priority=priority)


def result(job, worker, slot, copy, seq, sums, max_exp, block_exp=0, request_flags=0, priority=0):
    return inagg(AGGREGATE, (request_flags & FLAG_INT32) | FLAG_RESULT, job.job_id, worker, slot, copy, seq, sums,
                 block_exp=block_exp, next_exp=max_exp, priority=priority)


def multicast(v, job, slot, copy, seq, sums, max_exp, block_exp=0, request_flags=0, priority=0):
    for w, h in enumerate(job.workers):
        v.expect(h, result(job, w, slot, copy, seq, sums, max_exp, block_exp, request_flags, priority))


def aggregate_to_completion():
    v = Vector("aggregate_to_completion", """
Three workers fill slot 1 (copy 0, round 7): nothing leaves until the third contribution, whose header (block exponent
2, FLAG_INT32, priority 5) carries the result to every worker with its own worker id; lanes add as wrapping int32 and
Next Exponent is the max (3, 5, -1 -> 5). Then round 8 on copy 1 of the same slot, with fewer lanes than the job's.""")
    w = [host(1), host(2), host(3)]
    job = Job(1, w, 4, 0, 4, 1)
    v.setup(job)
    a = [1, -2, 0x7FFFFFFF, 100]
    b = [10, -20, 1, -100]
    c = [100, 30, 0, 7]
    v.comment("round 7: workers 0 and 1 are absorbed")
    v.send(w[0], contribution(job, 0, 1, 0, 7, a, next_exp=3, block_exp=2, flags=FLAG_INT32, priority=5))
    v.send(w[1], contribution(job, 1, 1, 0, 7, b, next_exp=5, block_exp=2, flags=FLAG_INT32, priority=5))
    v.comment("worker 2 completes the slot: the sum goes to all three (0x7FFFFFFF + 1 wraps)")
    v.send(w[2], contribution(job, 2, 1, 0, 7, c, next_exp=-1, block_exp=2, flags=FLAG_INT32, priority=5))
    multicast(v, job, 1, 0, 7, [111, 8, wrap(0x7FFFFFFF + 1), 7], 5, block_exp=2, request_flags=FLAG_INT32,
              priority=5)
    v.comment("round 8 on copy 1 with 2 lanes: the round takes the lane count of its first packet")
    v.send(w[2], contribution(job, 2, 1, 1, 8, [5, 6], next_exp=-3))
    v.send(w[0], contribution(job, 0, 1, 1, 8, [7, 8], next_exp=-7))
    v.send(w[1], contribution(job, 1, 1, 1, 8, [9, 10], next_exp=-5))
    multicast(v, job, 1, 1, 8, [21, 24], -3)
    return v


def duplicates():
    v = Vector("duplicates", """
A contribution repeated before the slot completes is absorbed once: worker 0 sends round 3 three times (the repeats with
FLAG_RETRANSMIT and other lanes, which must not be added), then worker 1 completes the slot.""")
    w = [host(1), host(2)]
    job = Job(4, w, 2, 0, 3, 9)
    v.setup(job)
    v.send(w[0], contribution(job, 0, 0, 0, 3, [1, 2, 3], next_exp=1))
    v.send(w[0], contribution(job, 0, 0, 0, 3, [1000, 2000, 3000], next_exp=9, flags=FLAG_RETRANSMIT))
    v.send(w[0], contribution(job, 0, 0, 0, 3, [1, 2, 3], next_exp=1, flags=FLAG_RETRANSMIT))
    v.send(w[1], contribution(job, 1, 0, 0, 3, [4, 5, 6], next_exp=2))
    multicast(v, job, 0, 0, 3, [5, 7, 9], 2)
    v.counters(DUPLICATES=2, CONTRIBUTIONS=2, RESULTS_SENT=2)
    return v


def retransmission_after_completion():
    v = Vector("retransmission_after_completion", """
Once a round is complete, any packet of that round gets the result back to its own worker alone and is never added
again: worker 1 lost the multicast and retransmits (twice, once with fewer lanes than the round: the reply has the
round's lanes); the header is the retransmission's, with FLAG_RESULT, the stored lanes and the max Next Exponent.""")
    w = [host(1), host(2)]
    job = Job(2, w, 8, 16, 4, 2)
    v.setup(job)
    v.send(w[0], contribution(job, 0, 5, 1, 40, [1, 1, 1, 1], next_exp=4))
    v.send(w[1], contribution(job, 1, 5, 1, 40, [2, 3, 4, 5], next_exp=6))
    multicast(v, job, 5, 1, 40, [3, 4, 5, 6], 6)
    v.comment("worker 1 retransmits: a unicast reply to worker 1 only")
    v.send(w[1], contribution(job, 1, 5, 1, 40, [2, 3, 4, 5], next_exp=6, flags=FLAG_RETRANSMIT, block_exp=1))
    v.expect(w[1], result(job, 1, 5, 1, 40, [3, 4, 5, 6], 6, block_exp=1))
    v.comment("worker 1 retransmits with 2 lanes: the reply still carries the round's 4 lanes")
    v.send(w[1], contribution(job, 1, 5, 1, 40, [2, 3], next_exp=0, flags=FLAG_RETRANSMIT | FLAG_INT32))
    v.expect(w[1], result(job, 1, 5, 1, 40, [3, 4, 5, 6], 6, request_flags=FLAG_INT32))
    v.comment("worker 0 retransmits too")
    v.send(w[0], contribution(job, 0, 5, 1, 40, [1, 1, 1, 1], next_exp=4, flags=FLAG_RETRANSMIT))
    v.expect(w[0], result(job, 0, 5, 1, 40, [3, 4, 5, 6], 6))
    v.counters(RETRANSMIT_REPLIES=3, CONTRIBUTIONS=2)
    return v


def shadow_copy_reuse():
    v = Vector("shadow_copy_reuse", """
A slot alternates its two shadow copies: round 0 on copy 0, round 1 on copy 1, round 2 back on copy 0. A complete copy
is reused by a newer round, which starts from fresh sums (round 0's are not added in) and fresh seen bits (each
worker's bit in copy 0 was cleared when it contributed to copy 1); round 1's result stays answerable meanwhile.""")
    w = [host(1), host(2)]
    job = Job(3, w, 1, 0, 2, 3)
    v.setup(job)
    v.send(w[0], contribution(job, 0, 0, 0, 0, [1, 2]))
    v.send(w[1], contribution(job, 1, 0, 0, 0, [3, 4]))
    multicast(v, job, 0, 0, 0, [4, 6], 0)
    v.send(w[1], contribution(job, 1, 0, 1, 1, [10, 20], next_exp=2))
    v.send(w[0], contribution(job, 0, 0, 1, 1, [30, 40], next_exp=1))
    multicast(v, job, 0, 1, 1, [40, 60], 2)
    v.comment("round 2 reuses copy 0")
    v.send(w[0], contribution(job, 0, 0, 0, 2, [100, 200], next_exp=-2))
    v.comment("round 1 (copy 1) is still complete: worker 1's retransmission is answered")
    v.send(w[1], contribution(job, 1, 0, 1, 1, [10, 20], next_exp=2, flags=FLAG_RETRANSMIT))
    v.expect(w[1], result(job, 1, 0, 1, 1, [40, 60], 2))
    v.send(w[1], contribution(job, 1, 0, 0, 2, [300, 400], next_exp=-4))
    multicast(v, job, 0, 0, 2, [400, 600], -2)
    return v


def stale_late_duplicates():
    v = Vector("stale_late_duplicates", """
Late packets of an older round are stale and dropped: with round 2 open on copy 0, a late duplicate of round 0 from
worker 1 adds nothing; a packet of round 4 on the same incomplete copy is a protocol violation and is dropped too.
Round 2 then completes with exactly its two contributions.""")
    w = [host(1), host(2)]
    job = Job(5, w, 2, 100, 2, 5)
    v.setup(job)
    v.send(w[0], contribution(job, 0, 1, 0, 0, [1, 1]))
    v.send(w[1], contribution(job, 1, 1, 0, 0, [2, 2]))
    multicast(v, job, 1, 0, 0, [3, 3], 0)
    v.send(w[0], contribution(job, 0, 1, 1, 1, [5, 5]))
    v.send(w[1], contribution(job, 1, 1, 1, 1, [6, 6]))
    multicast(v, job, 1, 1, 1, [11, 11], 0)
    v.send(w[0], contribution(job, 0, 1, 0, 2, [7, 8]))
    v.comment("late duplicate of round 0 from worker 1: stale, dropped")
    v.send(w[1], contribution(job, 1, 1, 0, 0, [2, 2], flags=FLAG_RETRANSMIT))
    v.comment("round 4 while round 2 is incomplete on copy 0: violation, dropped")
    v.send(w[1], contribution(job, 1, 1, 0, 4, [50, 50]))
    v.send(w[1], contribution(job, 1, 1, 0, 2, [9, 10]))
    multicast(v, job, 1, 0, 2, [16, 18], 0)
    v.counters(DROP_STALE=1, DROP_VIOLATION=1, CONTRIBUTIONS=6)
    return v


def multi_job_isolation():
    v = Vector("multi_job_isolation", """
Two jobs use the same slot index, copy and round, interleaved: job 10 owns pool slots 0..1, job 11 pool slots 2..3.
Each completes with its own sums, to its own workers, through its own multicast group; one host (10.0.0.2) works for
both jobs, as worker 1 of job 10 and worker 0 of job 11. A worker of job 11 naming job 10 is not job 10's worker.""")
    a = [host(1), host(2), host(3)]
    b = [host(2), host(4)]
    job10 = Job(10, a, 2, 0, 2, 10)
    job11 = Job(11, b, 2, 2, 2, 11)
    v.setup(job10, job11)
    v.send(a[0], contribution(job10, 0, 0, 0, 1, [1, 2], next_exp=1))
    v.send(b[0], contribution(job11, 0, 0, 0, 1, [1000, 2000], next_exp=7))
    v.send(a[1], contribution(job10, 1, 0, 0, 1, [3, 4], next_exp=2))
    v.comment("job 11's worker 1 claims to be job 10's worker 2: wrong source, dropped")
    v.send(b[1], contribution(job10, 2, 0, 0, 1, [99, 99], next_exp=9))
    v.send(b[1], contribution(job11, 1, 0, 0, 1, [3000, 4000], next_exp=6))
    multicast(v, job11, 0, 0, 1, [4000, 6000], 7)
    v.send(a[2], contribution(job10, 2, 0, 0, 1, [5, 6], next_exp=0))
    multicast(v, job10, 0, 0, 1, [9, 12], 2)
    v.counters(DROP_SOURCE_MISMATCH=1, CONTRIBUTIONS=5, RESULTS_SENT=5)
    return v


def spoofing():
    v = Vector("spoofing", """
A packet whose IPv4 source and UDP source port are not those registered for its worker id is dropped, never added:
worker 1's host claiming worker 0, a stranger claiming worker 0, worker 0's address from another UDP port, a JOIN from
a stranger for worker 1 (dropped unanswered). The genuine contributions then complete with their own sums.""")
    w = [host(1), host(2)]
    stranger = host(66, port=7)
    other_port = Host(1, w[0].mac, w[0].ip, 41234)
    job = Job(6, w, 2, 0, 2, 6)
    v.setup(job)
    v.send(w[1], contribution(job, 0, 0, 0, 0, [100, 100], next_exp=9))
    v.send(stranger, contribution(job, 0, 0, 0, 0, [200, 200], next_exp=9))
    v.send(other_port, contribution(job, 0, 0, 0, 0, [300, 300], next_exp=9))
    v.send(stranger, inagg(JOIN, 0, job.job_id, 1, seq=2))
    v.send(w[0], contribution(job, 0, 0, 0, 0, [1, 2]))
    v.send(w[1], contribution(job, 1, 0, 0, 0, [3, 4]))
    multicast(v, job, 0, 0, 0, [4, 6], 0)
    v.counters(DROP_SOURCE_MISMATCH=4, CONTRIBUTIONS=2, JOINS=0)
    return v


def unknown_job_and_worker():
    v = Vector("unknown_job_and_worker", """
Contributions for a job the switch does not have, or from a worker id not below the job's worker count, are dropped.
JOINs are answered from the job table: REJECT (unknown job, worker id out of range, worker count mismatch) to the
sender, or JOIN_ACK with Sequence = workers, Slot = slots, Reserved = lanes per packet.""")
    w = [host(1), host(2)]
    stranger = host(66, port=7)
    job = Job(7, w, 16, 0, 64, 7)
    v.setup(job)
    v.send(w[0], contribution(Job(99, w, 1, 0, 2, 1), 0, 0, 0, 0, [1, 2]))
    v.send(w[0], contribution(job, 2, 0, 0, 0, [1, 2]))
    v.send(w[0], contribution(job, 0x1234, 0, 0, 0, [1, 2]))
    v.comment("JOIN for job 99 from a stranger: REJECT unknown job, back to the stranger")
    v.send(stranger, inagg(JOIN, 0, 99, 0, seq=2, priority=3))
    v.expect(stranger, inagg(REJECT, FLAG_RESULT, 99, 0, status=UNKNOWN_JOB))
    v.comment("JOIN as worker 2 of a 2-worker job: REJECT worker id out of range")
    v.send(w[0], inagg(JOIN, 0, 7, 2, seq=2))
    v.expect(w[0], inagg(REJECT, FLAG_RESULT, 7, 2, status=WORKER_ID_OUT_OF_RANGE))
    v.comment("JOIN with a worker count of 3: REJECT worker count mismatch")
    v.send(w[1], inagg(JOIN, 0, 7, 1, seq=3))
    v.expect(w[1], inagg(REJECT, FLAG_RESULT, 7, 1, status=WORKER_COUNT_MISMATCH))
    v.comment("good JOIN: JOIN_ACK with workers 2, slots 16, lanes 64")
    v.send(w[1], inagg(JOIN, 0, 7, 1, seq=2, block_exp=4, next_exp=3))
    v.expect(w[1], inagg(JOIN_ACK, FLAG_RESULT, 7, 1, slot=16, seq=2, reserved=64))
    v.comment("a JOIN that carries lanes gets the same 20-byte answer")
    v.send(w[0], inagg(JOIN, 0, 7, 0, seq=2, lanes=[5, 6]))
    v.expect(w[0], inagg(JOIN_ACK, FLAG_RESULT, 7, 0, slot=16, seq=2, reserved=64))
    v.counters(DROP_UNKNOWN_JOB=1, DROP_UNKNOWN_WORKER=2, REJECTS=3, JOINS=2, CONTRIBUTIONS=0)
    return v


def bad_sizes():
    v = Vector("bad_sizes", """
Malformed or ill-sized packets are dropped before they touch a register: more lanes than the job's, an Element Count
that disagrees with the UDP length (both ways), a slot beyond the job's, an unknown header version, a result sent by a
worker; and within a round, a packet whose lane count differs from the round's. The round then completes cleanly.""")
    w = [host(1), host(2)]
    job = Job(8, w, 2, 0, 4, 8)
    v.setup(job)
    v.send(w[0], contribution(job, 0, 0, 0, 0, [1, 2, 3, 4, 5]))
    v.send(w[0], inagg(AGGREGATE, 0, 8, 0, 0, 0, 0, [1, 2, 3], count=4))
    v.send(w[0], inagg(AGGREGATE, 0, 8, 0, 0, 0, 0, [1, 2, 3], count=2))
    v.send(w[0], contribution(job, 0, 2, 0, 0, [1, 2]))
    v.send(w[0], inagg(AGGREGATE, 0, 8, 0, 0, 0, 0, [1, 2], version=2))
    v.send(w[0], inagg(AGGREGATE, FLAG_RESULT, 8, 0, 0, 0, 0, [1, 2]))
    v.comment("worker 0 opens round 0 with 2 lanes; worker 1's 3-lane packet does not fit the round")
    v.send(w[0], contribution(job, 0, 0, 0, 0, [1, 2]))
    v.send(w[1], contribution(job, 1, 0, 0, 0, [10, 20, 30]))
    v.send(w[1], contribution(job, 1, 0, 0, 0, [10, 20]))
    multicast(v, job, 0, 0, 0, [11, 22], 0)
    v.counters(DROP_BAD_SIZE=2, DROP_MALFORMED=4, DROP_BAD_SLOT=1, CONTRIBUTIONS=2)
    return v


def main():
    for make in (aggregate_to_completion, duplicates, retransmission_after_completion, shadow_copy_reuse,
                 stale_late_duplicates, multi_job_isolation, spoofing, unknown_job_and_worker, bad_sizes):
        make().write()


if __name__ == "__main__":
    main()
