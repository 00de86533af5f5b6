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
UNKNOWN_JOB, WORKER_ID_OUT_OF_RANGE, WORKER_COUNT_MISMATCH, STALE_SESSION = 1, 2, 3, 4
UNSUPPORTED_COLLECTIVE = 5
SESSION_CAUSE_CONTROL_PLANE = -1   # Sequence (0xFFFFFFFF) of a STALE_SESSION REJECT the data plane sends

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "test", "vectors")


def mac_bytes(mac):
    return bytes(int(octet, 16) for octet in mac.split(":"))


def ip_bytes(ip):
    return bytes(int(octet) for octet in ip.split("."))


def ipv4_checksum(header):
    total = sum(struct.unpack("!%dH" % (len(header) // 2), header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return (~total) & 0xFFFF


def frame(src_mac, dst_mac, src_ip, dst_ip, sport, dport, payload, ident, flags_frag, ttl, udp_length=None,
          total_length=None, protocol=17, options=b"", ether_type=0x0800, trailer=b"", cut=None):
    """An Ethernet / IPv4 / UDP frame. The keyword arguments after ttl break it for the malformed-frame vectors:
    a UDP length or IPv4 total length other than the payload's, another protocol, IPv4 options (4-byte words),
    another EtherType, bytes after the datagram (trailer), or the frame cut to its first `cut` bytes."""
    udp_length = 8 + len(payload) if udp_length is None else udp_length
    udp = struct.pack("!HHHH", sport, dport, udp_length, 0)
    ihl = 5 + len(options) // 4
    total_length = 4 * ihl + 8 + len(payload) if total_length is None else total_length
    ip = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, total_length, ident, flags_frag, ttl, protocol, 0,
                     ip_bytes(src_ip), ip_bytes(dst_ip)) + options
    ip = ip[:10] + struct.pack("!H", ipv4_checksum(ip)) + ip[12:]
    data = mac_bytes(dst_mac) + mac_bytes(src_mac) + struct.pack("!H", ether_type) + ip + udp + payload + trailer
    return data if cut is None else data[:cut]


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
    def __init__(self, job_id, workers, slots, base, lanes, group, session=0, credentials=None):
        self.job_id, self.workers, self.slots, self.base, self.lanes, self.group = \
            job_id, workers, slots, base, lanes, group
        self.session = session
        # each worker's JOIN credential (0: none), as the controller installs it (docs/security.md)
        self.credentials = credentials or [0] * len(workers)


class Vector:
    def __init__(self, name, title):
        self.name, self.lines, self.jobs = name, ["# " + line for line in title.strip().splitlines()], []
        self.received = 0       # messages the switch receives (SwitchCounter / EsaCounter RECEIVED)

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
            self.lines.append("table_add InaggIngress.job_table InaggIngress.set_job %d => %d %d %d %d %d %d"
                              % (job.job_id, len(job.workers), job.slots, job.base, job.lanes, job.group,
                                 job.session))
            for w, h in enumerate(job.workers):
                self.lines.append("table_add InaggIngress.worker_source InaggIngress.source_ok %d %d %s %d =>"
                                  % (job.job_id, w, h.ip, h.udp))
            for w, credential in enumerate(job.credentials):
                if credential:
                    self.lines.append("table_add InaggIngress.join_credential InaggIngress.set_join_credential %d %d"
                                      " => 0x%016x" % (job.job_id, w, credential))
            for w, h in enumerate(job.workers):
                self.lines.append("table_add InaggEgress.worker_endpoint InaggEgress.set_endpoint %d %d => %s %s %d"
                                  % (job.job_id, w, h.mac, h.ip, h.udp))
            self.lines.append("mc_mgrp_create %d" % job.group)
            for w, h in enumerate(job.workers):
                self.lines.append("mc_node_create %d %d" % (w, h.port))
                self.lines.append("mc_node_associate %d %d" % (job.group, handle))
                handle += 1

    def send(self, sender, message, port=None, ident=0x1234, dport=INAGG_PORT, flags_frag=0, received=True,
             **broken):
        """A frame from `sender` to the switch carrying `message` as its UDP payload. `received`: whether it reaches
        the switch as a message (False: a frame the transport drops, see malformed_headers); `broken`: frame()'s
        keyword arguments that break the frame."""
        data = frame(sender.mac, SWITCH_MAC, sender.ip, SWITCH_IP, sender.udp, dport, message, ident, flags_frag, 64,
                     **broken)
        self.lines.append("packet %d %s" % (sender.port if port is None else port, data.hex().upper()))
        if received:
            self.received += 1

    def expect(self, receiver, message, port=None):
        """A frame from the switch: fixed IPv4 id 0, DF, TTL 64, UDP source port INAGG_PORT, checksum 0."""
        data = frame(SWITCH_MAC, receiver.mac, SWITCH_IP, receiver.ip, INAGG_PORT, receiver.udp, message, 0, 0x4000,
                     64)
        self.lines.append("expect %d %s" % (receiver.port if port is None else port, data.hex().upper()))

    def counters(self, **expected):
        """The switch's counters after the run, every one the run counts (and some that must stay 0), by their
        SwitchCounter / EsaCounter names, RECEIVED first (the messages sent, unless given): checked against the
        software switch (ConformanceVectorTest, which also checks that none it counted is missing) and against the P4
        program's counters of the same names on bmv2 (bmv2_vectors.py)."""
        self.lines.append("")
        expected = dict(RECEIVED=self.received, **{k: v for k, v in expected.items() if k != "RECEIVED"}) \
            if "RECEIVED" not in expected else expected
        for name, value in expected.items():
            self.lines.append("softswitch_counter %s %d" % (name, value))

    def write(self):
        with open(os.path.join(OUT_DIR, self.name + ".stf"), "w") as out:
            out.write("\n".join(self.lines) + "\n")


def contribution(job, worker, slot, copy, seq, lanes, next_exp=0, block_exp=0, flags=0, priority=0, session=None):
    """An AGGREGATE of the job's session (its Reserved field), unless `session` names another."""
    return inagg(AGGREGATE, flags, job.job_id, worker, slot, copy, seq, lanes, block_exp=block_exp,
                 next_exp=next_exp, priority=priority,
                 reserved=getattr(job, "session", 0) if session is None else session)


def result(job, worker, slot, copy, seq, sums, max_exp, block_exp=0, request_flags=0, priority=0):
    return inagg(AGGREGATE, (request_flags & FLAG_INT32) | FLAG_RESULT, job.job_id, worker, slot, copy, seq, sums,
                 block_exp=block_exp, next_exp=max_exp, priority=priority, reserved=getattr(job, "session", 0))


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
    v.counters(CONTRIBUTIONS=6, RESULTS_SENT=6)
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
    v.counters(RETRANSMIT_REPLIES=3, CONTRIBUTIONS=2, RESULTS_SENT=2)
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
    v.counters(CONTRIBUTIONS=6, RESULTS_SENT=6, RETRANSMIT_REPLIES=1)
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
    v.counters(DROP_STALE=1, DROP_VIOLATION=1, CONTRIBUTIONS=6, RESULTS_SENT=6)
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
    v.counters(DROP_SOURCE_MISMATCH=4, CONTRIBUTIONS=2, RESULTS_SENT=2, JOINS=0)
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
    v.counters(DROP_BAD_SIZE=2, DROP_MALFORMED=4, DROP_BAD_SLOT=1, CONTRIBUTIONS=2, RESULTS_SENT=2)
    return v


def malformed_headers():
    v = Vector("malformed_headers", """
Every check the P4 parsers and ingress make on a frame, and what the software switch sees of it. The software switch
gets only the UDP payload (a message) from its transport, so the checks split in two:
- faults of the message, which the software switch sees (InaggHeader.check: shorter than the 20-byte header, a version
  other than 1, a length other than 20 + 4 x Element Count; then a message type it does not take): both targets
  count RECEIVED and DROP_MALFORMED;
- faults of the frame below the message (not IPv4 without options, a fragment, not UDP, another UDP port, a frame
  shorter than its UDP datagram, UDP and IPv4 lengths that disagree): a host's UDP stack, DpdkTransport and the
  vectors' FrameTransport drop such a frame before the switch sees it, and the P4 programs drop it uncounted (what is
  not inagg traffic at all would be forwarded by inagg_v1model.p4's ipv4_forward if it had a route; the vectors set
  none): no counter moves on either target (RECEIVED counts messages only).
Not faults: bytes after the datagram (an Ethernet trailer: the message is used, and what the switch sends has no
trailer), and more lanes than inagg_v1model.p4's lane stack holds (a well-formed message: more lanes than the job's,
DROP_BAD_SIZE; a JOIN is answered). Job 30 (2 workers, 4 lanes) then completes round 0 with exactly its two
contributions.""")
    w = [host(1), host(2)]
    job = Job(30, w, 2, 0, 4, 30)
    v.setup(job)
    good = contribution(job, 0, 0, 0, 0, [1, 2, 3, 4], next_exp=2)
    v.comment("message faults (the software switch sees each message): counted RECEIVED and DROP_MALFORMED")
    v.comment("a message of 12 bytes, shorter than the header (UDP length 20, the frame holds it): TOO_SHORT")
    v.send(w[0], good[:12])
    v.comment("an empty message (UDP length 8): TOO_SHORT")
    v.send(w[0], b"")
    v.comment("Element Count 4, but the message (and the frame) ends after 2 lanes: LENGTH_MISMATCH")
    v.send(w[0], inagg(AGGREGATE, 0, 30, 0, 0, 0, 0, [1, 2], count=4))
    v.comment("Element Count 2, but the message carries 3 lanes: LENGTH_MISMATCH")
    v.send(w[0], inagg(AGGREGATE, 0, 30, 0, 0, 0, 0, [1, 2, 3], count=2))
    v.comment("Element Count 2, the message 2 lanes and 2 more bytes (not a multiple of 4): LENGTH_MISMATCH")
    v.send(w[0], inagg(AGGREGATE, 0, 30, 0, 0, 0, 0, [1, 2]) + b"\x00\x07")
    v.comment("more lanes than the P4 lane stack holds (257, 300): well-formed messages, so not malformed: an")
    v.comment("AGGREGATE with more lanes than the job's is DROP_BAD_SIZE, a JOIN carrying them is answered")
    v.send(w[0], contribution(job, 0, 0, 0, 0, list(range(257))))
    v.send(w[0], inagg(JOIN, 0, 30, 0, seq=2, lanes=list(range(300))))
    v.expect(w[0], inagg(JOIN_ACK, FLAG_RESULT, 30, 0, slot=2, seq=2, reserved=4))
    v.comment("versions 0 and 15: BAD_VERSION")
    v.send(w[0], inagg(AGGREGATE, 0, 30, 0, 0, 0, 0, [1, 2, 3, 4], version=0))
    v.send(w[0], inagg(AGGREGATE, 0, 30, 0, 0, 0, 0, [1, 2, 3, 4], version=15))
    v.comment("well-formed messages of a type the switch does not take: JOIN_ACK, PARTIAL, type 9")
    v.send(w[0], inagg(JOIN_ACK, FLAG_RESULT, 30, 0, slot=2, seq=2, reserved=4))
    v.send(w[0], inagg(PARTIAL, 0, 30, 1, 0, 0, 0, [1, 2, 3, 4, 3]))
    v.send(w[0], inagg(9, 0, 30, 0, 0, 0, 0, [1, 2, 3, 4]))
    v.comment("frame faults: the software switch sees nothing (its transport drops the frame), the P4 program drops")
    v.comment("the frame uncounted; the message inside is worker 0's good contribution every time, never added")
    v.comment("the frame ends inside the lanes (UDP length 44 and IPv4 total length 64 say 4 lanes, 2 are there)")
    v.send(w[0], good, received=False, cut=14 + 20 + 8 + 20 + 8)
    v.comment("the frame ends inside the inagg header")
    v.send(w[0], good, received=False, cut=14 + 20 + 8 + 10)
    v.comment("the frame ends inside the UDP header")
    v.send(w[0], good, received=False, cut=14 + 20 + 4)
    v.comment("UDP length 4 more than the frame holds (IPv4 total length agrees with it)")
    v.send(w[0], good, received=False, udp_length=8 + len(good) + 4, total_length=28 + len(good) + 4)
    v.comment("IPv4 total length 4 less than 20 + UDP length")
    v.send(w[0], good, received=False, total_length=28 + len(good) - 4)
    v.comment("IPv4 total length 4 more than 20 + UDP length, the frame holding it (a host's UDP stack and")
    v.comment("DpdkTransport would hand up the UDP datagram; the P4 programs and FrameTransport require them equal)")
    v.send(w[0], good, received=False, total_length=28 + len(good) + 4, trailer=b"\x00" * 4)
    v.comment("UDP length 7 (less than its own header), IPv4 total length 27")
    v.send(w[0], good, received=False, udp_length=7, total_length=27)
    v.comment("IPv4 with options (IHL 6, one word of NOPs)")
    v.send(w[0], good, received=False, options=b"\x01\x01\x01\x01")
    v.comment("a first fragment (More Fragments set) and a later fragment (offset 8 bytes)")
    v.send(w[0], good, received=False, flags_frag=0x2000)
    v.send(w[0], good, received=False, flags_frag=0x0001)
    v.comment("TCP instead of UDP; UDP to port 47001; an IPv6 EtherType")
    v.send(w[0], good, received=False, protocol=6)
    v.send(w[0], good, received=False, dport=INAGG_PORT + 1)
    v.send(w[0], good, received=False, ether_type=0x86DD)
    v.comment("a trailer is not a fault: worker 0's contribution with 6 bytes after its datagram is added; worker 1's,")
    v.comment("with 2, completes the round; the results carry no trailer")
    v.send(w[0], good, trailer=b"\xAA" * 6)
    v.send(w[1], contribution(job, 1, 0, 0, 0, [10, 20, 30, 40], next_exp=1), trailer=b"\xBB" * 2)
    multicast(v, job, 0, 0, 0, [11, 22, 33, 44], 2)
    v.comment("a JOIN with a 4-byte trailer: the JOIN_ACK is 20 bytes of message")
    v.send(w[1], inagg(JOIN, 0, 30, 1, seq=2), trailer=b"\xCC" * 4)
    v.expect(w[1], inagg(JOIN_ACK, FLAG_RESULT, 30, 1, slot=2, seq=2, reserved=4))
    v.counters(DROP_MALFORMED=10, DROP_BAD_SIZE=1, CONTRIBUTIONS=2, RESULTS_SENT=2, JOINS=2)
    return v


def stale_and_foreign_senders():
    v = Vector("stale_and_foreign_senders", """
Senders that are not who they claim, and packets that come too late. Job 31 has 3 workers (hosts 1..3) and one slot;
rounds 0 (copy 0) and 1 (copy 1) complete, round 2 opens on copy 0. Then: worker 1's id from a stranger, from
worker 2's address, from worker 1's IPv4 address with another UDP port, and from worker 1's UDP port with another
IPv4 address (all DROP_SOURCE_MISMATCH, whatever they carry: also a stranger's retransmission of the complete round
1, which is not answered); worker ids 3 (= W) and 65535 (DROP_UNKNOWN_WORKER); a stranger's AGGREGATE and JOIN for
job 77, which does not exist (DROP_UNKNOWN_JOB; REJECT unknown job, to the stranger). Late packets: round 0 on copy 0
while round 2 is open there is stale; round 1 on copy 1, still complete, is answered; once rounds 2 and 3 are
complete, rounds 1 and 0 are stale, and so is sequence 0xFFFFFFFF (-1: before 0 in serial order, not after 2).""")
    w = [host(1), host(2), host(3)]
    stranger = host(66, port=7)
    job = Job(31, w, 1, 0, 2, 31)
    v.setup(job)
    v.send(w[0], contribution(job, 0, 0, 0, 0, [1, 1]))
    v.send(w[1], contribution(job, 1, 0, 0, 0, [2, 2]))
    v.send(w[2], contribution(job, 2, 0, 0, 0, [3, 3]))
    multicast(v, job, 0, 0, 0, [6, 6], 0)
    v.send(w[2], contribution(job, 2, 0, 1, 1, [10, 20], next_exp=3))
    v.send(w[0], contribution(job, 0, 0, 1, 1, [30, 40], next_exp=1))
    v.send(w[1], contribution(job, 1, 0, 1, 1, [50, 60], next_exp=2))
    multicast(v, job, 0, 1, 1, [90, 120], 3)
    v.send(w[0], contribution(job, 0, 0, 0, 2, [100, 100]))
    v.comment("worker 1's id from a stranger, from worker 2's address, from worker 1's IPv4 address with UDP port")
    v.comment("50000, from worker 1's UDP port with IPv4 address 10.0.0.99: source mismatch, nothing added")
    v.send(stranger, contribution(job, 1, 0, 0, 2, [7, 7]))
    v.send(w[2], contribution(job, 1, 0, 0, 2, [7, 7]))
    v.send(Host(2, w[1].mac, w[1].ip, 50000), contribution(job, 1, 0, 0, 2, [7, 7]))
    v.send(Host(2, w[1].mac, "10.0.0.99", w[1].udp), contribution(job, 1, 0, 0, 2, [7, 7]))
    v.comment("a stranger retransmits worker 0's packet of the complete round 1: source mismatch, not answered")
    v.send(stranger, contribution(job, 0, 0, 1, 1, [30, 40], next_exp=1, flags=FLAG_RETRANSMIT))
    v.comment("worker ids 3 (= W) and 65535 from worker 0's host: unknown worker")
    v.send(w[0], contribution(job, 3, 0, 0, 2, [7, 7]))
    v.send(w[0], contribution(job, 0xFFFF, 0, 0, 2, [7, 7]))
    v.comment("a stranger's AGGREGATE and JOIN for job 77: unknown job; the JOIN is answered with a REJECT")
    v.send(stranger, contribution(Job(77, [stranger], 1, 0, 2, 1), 0, 0, 0, 2, [7, 7]))
    v.send(stranger, inagg(JOIN, 0, 77, 0, seq=1))
    v.expect(stranger, inagg(REJECT, FLAG_RESULT, 77, 0, status=UNKNOWN_JOB))
    v.comment("worker 1's late duplicate of round 0 on copy 0, where round 2 is open: stale")
    v.send(w[1], contribution(job, 1, 0, 0, 0, [2, 2], flags=FLAG_RETRANSMIT))
    v.comment("worker 2 retransmits round 1 on copy 1, still complete: answered from copy 1")
    v.send(w[2], contribution(job, 2, 0, 1, 1, [10, 20], next_exp=3, flags=FLAG_RETRANSMIT))
    v.expect(w[2], result(job, 2, 0, 1, 1, [90, 120], 3))
    v.send(w[1], contribution(job, 1, 0, 0, 2, [200, 200]))
    v.send(w[2], contribution(job, 2, 0, 0, 2, [300, 300]))
    multicast(v, job, 0, 0, 2, [600, 600], 0)
    v.send(w[0], contribution(job, 0, 0, 1, 3, [1, 0]))
    v.send(w[1], contribution(job, 1, 0, 1, 3, [0, 1]))
    v.send(w[2], contribution(job, 2, 0, 1, 3, [1, 1]))
    multicast(v, job, 0, 1, 3, [2, 2], 0)
    v.comment("round 1 on copy 1 (now round 3), round 0 and sequence 0xFFFFFFFF on copy 0 (now round 2): stale")
    v.send(w[0], contribution(job, 0, 0, 1, 1, [30, 40], next_exp=1, flags=FLAG_RETRANSMIT))
    v.send(w[1], contribution(job, 1, 0, 0, 0, [2, 2], flags=FLAG_RETRANSMIT))
    v.send(w[2], contribution(job, 2, 0, 0, -1, [5, 5]))
    v.counters(DROP_SOURCE_MISMATCH=5, DROP_UNKNOWN_WORKER=2, DROP_UNKNOWN_JOB=1, REJECTS=1, DROP_STALE=4,
               RETRANSMIT_REPLIES=1, CONTRIBUTIONS=12, RESULTS_SENT=12)
    return v


def shadow_copy_retransmit():
    v = Vector("shadow_copy_retransmit", """
A worker that lost a result retransmits, and is answered from the shadow copy that still holds the result while the
other copy is reused by the next round. Job 32 (3 workers, 3 lanes, pool slots 4..5), slot 1: round 10 (copy 0) and
round 11 (copy 1) complete; worker 2 lost round 11's result. Round 12 reuses copy 0 (fresh sums: round 10's are not
added) and worker 2, which has round 10's result, contributes to it first; its retransmission of round 11 on copy 1 is
answered from copy 1 (twice: also with 1 lane, the reply has the round's 3); round 12 completes. Round 13 reuses copy
1 while worker 1, which lost round 12's result, retransmits it: answered from copy 0. Round 13 completes; round 11 is
now stale on copy 1, while round 12 is still answered on copy 0. A reply is the retransmission's header (its block
exponent and flags' INT32) with FLAG_RESULT, the stored sums and max Next Exponent.""")
    w = [host(1), host(2), host(3)]
    job = Job(32, w, 2, 4, 3, 32)
    v.setup(job)
    v.send(w[0], contribution(job, 0, 1, 0, 10, [1, 2, 3], next_exp=1))
    v.send(w[1], contribution(job, 1, 1, 0, 10, [4, 5, 6], next_exp=2))
    v.send(w[2], contribution(job, 2, 1, 0, 10, [7, 8, 9], next_exp=3))
    multicast(v, job, 1, 0, 10, [12, 15, 18], 3)
    v.send(w[1], contribution(job, 1, 1, 1, 11, [10, 0, -10], next_exp=-1))
    v.send(w[0], contribution(job, 0, 1, 1, 11, [20, 0, -20], next_exp=-4))
    v.send(w[2], contribution(job, 2, 1, 1, 11, [30, 0, -30], next_exp=-2))
    multicast(v, job, 1, 1, 11, [60, 0, -60], -1)
    v.comment("round 12 reuses copy 0: worker 2 first (it has round 10's result), then worker 0")
    v.send(w[2], contribution(job, 2, 1, 0, 12, [100, 100, 100], next_exp=0))
    v.comment("worker 2 lost round 11's result: answered from copy 1, also for a 1-lane retransmission")
    v.send(w[2], contribution(job, 2, 1, 1, 11, [30, 0, -30], next_exp=-2, block_exp=4, flags=FLAG_RETRANSMIT))
    v.expect(w[2], result(job, 2, 1, 1, 11, [60, 0, -60], -1, block_exp=4))
    v.send(w[2], contribution(job, 2, 1, 1, 11, [30], next_exp=-2, flags=FLAG_RETRANSMIT | FLAG_INT32))
    v.expect(w[2], result(job, 2, 1, 1, 11, [60, 0, -60], -1, request_flags=FLAG_INT32))
    v.send(w[0], contribution(job, 0, 1, 0, 12, [200, 200, 200], next_exp=5))
    v.send(w[1], contribution(job, 1, 1, 0, 12, [300, 300, 300], next_exp=-3))
    multicast(v, job, 1, 0, 12, [600, 600, 600], 5)
    v.comment("round 13 reuses copy 1; worker 1 lost round 12's result: answered from copy 0 meanwhile")
    v.send(w[0], contribution(job, 0, 1, 1, 13, [1, 1, 1], next_exp=0))
    v.send(w[1], contribution(job, 1, 1, 0, 12, [300, 300, 300], next_exp=-3, flags=FLAG_RETRANSMIT))
    v.expect(w[1], result(job, 1, 1, 0, 12, [600, 600, 600], 5))
    v.send(w[1], contribution(job, 1, 1, 1, 13, [2, 2, 2], next_exp=0))
    v.send(w[2], contribution(job, 2, 1, 1, 13, [3, 3, 3], next_exp=0))
    multicast(v, job, 1, 1, 13, [6, 6, 6], 0)
    v.comment("round 11 on copy 1 (now round 13) is stale; round 12 on copy 0 is still answered")
    v.send(w[2], contribution(job, 2, 1, 1, 11, [30, 0, -30], next_exp=-2, flags=FLAG_RETRANSMIT))
    v.send(w[0], contribution(job, 0, 1, 0, 12, [200, 200, 200], next_exp=5, flags=FLAG_RETRANSMIT))
    v.expect(w[0], result(job, 0, 1, 0, 12, [600, 600, 600], 5))
    v.counters(CONTRIBUTIONS=12, RESULTS_SENT=12, RETRANSMIT_REPLIES=4, DROP_STALE=1)
    return v


# ---------------------------------------------------------------------------------------------------------------------
# ESA: the shared aggregator pool (org.inagg.p4.esa.EsaSwitch, docs/esa.md; set_esa_job rows of inagg_v1model.p4).

PARTIAL = 5
COLLISION, RETRANSMIT, TOMBSTONE, PREEMPTED, FLUSHED, COMPLETE, STALE = 1, 2, 3, 4, 5, 6, 7
SERVER_RID, FLUSH_RID = 0xFFFF, 0xFFFE
JOB_MULTIPLIER = 0x9E3779B1
MODE_ESA, MODE_ATP = 1, 2


class EsaPool:
    """N aggregators at the copies of slots [slot_base, slot_base + N / 2); mode MODE_ESA or MODE_ATP; priorities from
    the header (HEADER) or the job table (JOB_TABLE)."""

    def __init__(self, slot_base, aggregators, mode, from_header):
        self.slot_base, self.aggregators, self.mode, self.from_header = slot_base, aggregators, mode, from_header

    def index(self, job, seq):
        """AggregatorPool.index: (sequence + job * 0x9E3779B1) mod N, in 32-bit arithmetic."""
        return ((seq + job.job_id * JOB_MULTIPLIER) & 0xFFFFFFFF) % self.aggregators


class EsaJob:
    def __init__(self, job_id, workers, server, window, lanes, group, flush_group, priority=0):
        self.job_id, self.workers, self.server, self.window, self.lanes = job_id, workers, server, window, lanes
        self.group, self.flush_group, self.priority = group, flush_group, priority


def esa_setup(v, pool, *jobs):
    v.jobs = list(jobs)
    v.lines.append("")
    v.lines.append("# setup (simple_switch_CLI; the same lines org.inagg.p4.control.JobTable emits)")
    for register in ("used_reg", "seen_reg", "key_reg", "tomb_reg"):
        v.lines.append("register_reset InaggIngress.%s" % register)
    v.lines.append("table_set_default InaggEgress.switch_address InaggEgress.set_switch_address %s %s"
                   % (SWITCH_MAC, SWITCH_IP))
    handle = 0
    for job in jobs:
        offset = (job.job_id * JOB_MULTIPLIER) % pool.aggregators
        v.lines.append("table_add InaggIngress.job_table InaggIngress.set_esa_job %d => %d %d %d %d %d %d %d %d %d %d %d %d"
                       % (job.job_id, len(job.workers), job.window, job.lanes, job.group, job.flush_group, pool.mode,
                          2 * pool.slot_base, pool.aggregators - 1, offset, 1 if pool.from_header else 0,
                          job.priority, job.server.port) + " 0")
        for w, h in enumerate(job.workers):
            v.lines.append("table_add InaggIngress.worker_source InaggIngress.source_ok %d %d %s %d =>"
                           % (job.job_id, w, h.ip, h.udp))
        v.lines.append("table_add InaggIngress.server_source InaggIngress.server_ok %d %s %d =>"
                       % (job.job_id, job.server.ip, job.server.udp))
        for w, h in enumerate(job.workers):
            v.lines.append("table_add InaggEgress.worker_endpoint InaggEgress.set_endpoint %d %d => %s %s %d"
                           % (job.job_id, w, h.mac, h.ip, h.udp))
        v.lines.append("table_add InaggEgress.server_endpoint InaggEgress.set_endpoint %d => %s %s %d"
                       % (job.job_id, job.server.mac, job.server.ip, job.server.udp))
        v.lines.append("mc_mgrp_create %d" % job.group)
        nodes = [(w, h.port, job.group) for w, h in enumerate(job.workers)]
        nodes.append((SERVER_RID, job.server.port, job.group))
        nodes.append((FLUSH_RID, job.server.port, job.flush_group))
        nodes.append((SERVER_RID, job.server.port, job.flush_group))
        for rid, port, group in nodes:
            if group == job.flush_group and rid == FLUSH_RID:
                v.lines.append("mc_mgrp_create %d" % job.flush_group)
            v.lines.append("mc_node_create %d %d" % (rid, port))
            v.lines.append("mc_node_associate %d %d" % (group, handle))
            handle += 1


def agg(job, worker, slot, copy, seq, lanes, next_exp=0, block_exp=0, flags=0, priority=0, status=0):
    """An AGGREGATE of the job's session, as a worker sends it or a switch forwards it."""
    return inagg(AGGREGATE, flags, job.job_id, worker, slot, copy, seq, lanes, block_exp=block_exp,
                 next_exp=next_exp, priority=priority, status=status, reserved=getattr(job, "session", 0))


def partial(job, slot, copy, seq, sums, bitmap, flags, block_exp, max_exp, priority, reason):
    """EsaWire PARTIAL: Worker Id = bitmap words, Element Count = lanes + bitmap words, Session = the job's session."""
    return inagg(PARTIAL, flags & FLAG_INT32, job.job_id, len(bitmap), slot, copy, seq, list(sums) + list(bitmap),
                 block_exp=block_exp, next_exp=max_exp, priority=priority, status=reason,
                 reserved=getattr(job, "session", 0))


def esa_results(v, job, slot, copy, seq, sums, max_exp, flags, block_exp, priority):
    """EsaSwitch.multicastFromPool: the completing request's header, the block's stored INT32 flag with FLAG_RESULT."""
    for w, h in enumerate(job.workers):
        v.expect(h, inagg(AGGREGATE, (flags & FLAG_INT32) | FLAG_RESULT, job.job_id, w, slot, copy, seq, sums,
                          block_exp=block_exp, next_exp=max_exp, priority=priority))


def esa_hosts():
    """Job 1: workers hosts 1..3, server host 9 (port 9); job 2: workers hosts 4, 5, server host 10 (port 10)."""
    a = EsaJob(1, [host(1), host(2), host(3)], host(9), 16, 4, 1, 101)
    b = EsaJob(2, [host(4), host(5)], host(10), 16, 4, 2, 102)
    return a, b


def esa_completion():
    v = Vector("esa_completion", """
ESA, pool of 4 aggregators at pool slots 8..9 (copies 16..19), priorities from the header. Job 2's block 5 goes to
aggregator (5 + 2 * 0x9E3779B1) mod 4 = 3. A JOIN is answered with the job's window as the slot count. Nothing leaves
before the second (last) contribution; a repeat is a duplicate, a packet with another lane count is dropped. The
completing packet multicasts the sums to both workers with its own header (block exponent 3, priority 6) but the
block's INT32 flag (from the first packet), and the server gets a COMPLETE PARTIAL with the block's stored slot field,
flags, block exponent 2 and allocation priority 4, bitmap 0b11. The aggregator is free at once: job 1's block 2
((2 + 0x9E3779B1) mod 4 = 3) takes it at priority 0.""")
    a, b = esa_hosts()
    pool = EsaPool(8, 4, MODE_ESA, True)
    esa_setup(v, pool, a, b)
    assert pool.index(b, 5) == 3 and pool.index(a, 2) == 3
    v.comment("JOIN: JOIN_ACK with workers 2, slots = window 16, lanes 4")
    v.send(b.workers[1], inagg(JOIN, 0, 2, 1, seq=2))
    v.expect(b.workers[1], inagg(JOIN_ACK, FLAG_RESULT, 2, 1, slot=16, seq=2, reserved=4))
    v.comment("worker 0 allocates aggregator 3; its repeat is a duplicate; worker 1 with 3 lanes does not fit the block")
    v.send(b.workers[0], agg(b, 0, 5, 0, 5, [1, -2, 0x7FFFFFFF, 100], next_exp=3, block_exp=2, flags=FLAG_INT32,
                             priority=4))
    v.send(b.workers[0], agg(b, 0, 5, 0, 5, [9, 9, 9, 9], next_exp=9, block_exp=2, flags=FLAG_INT32, priority=4))
    v.send(b.workers[1], agg(b, 1, 5, 0, 5, [1, 2, 3], next_exp=9, block_exp=2, priority=4))
    v.comment("worker 1 completes: sums to both workers, COMPLETE PARTIAL to the server (0x7FFFFFFF + 1 wraps)")
    v.send(b.workers[1], agg(b, 1, 5, 0, 5, [10, -20, 1, -100], next_exp=5, block_exp=3, priority=6))
    sums = [11, -22, wrap(0x7FFFFFFF + 1), 0]
    esa_results(v, b, 5, 0, 5, sums, 5, FLAG_INT32, 3, 6)
    v.expect(b.server, partial(b, 5, 0, 5, sums, [0b11], FLAG_INT32, 2, 5, 4, COMPLETE))
    v.comment("the aggregator is free: job 1's block 2 takes it at priority 0, nothing leaves")
    v.send(a.workers[0], agg(a, 0, 2, 0, 2, [1, 1, 1, 1]))
    v.counters(JOINS=1, ALLOCATIONS=2, CONTRIBUTIONS=3, DUPLICATES=1, DROP_BAD_SIZE=1, COMPLETIONS=1,
               RESULTS_SENT=2, RESULT_COPIES=1)
    return v


def esa_preemption():
    v = Vector("esa_preemption", """
ESA, header priorities, pool of 4 at pool slots 8..9. Job 1's block 10 ((10 + 0x9E3779B1) mod 4 = 3) holds workers 0
and 2 at priority 1 (4 lanes); job 2's block 5 (aggregator 3) at priority 7 preempts it: the packet leaves as job 1's
PARTIAL (PREEMPTED: 2 contributors, the sums, bitmap 0b101, holder priority 1) to job 1's server, while its own 2 lanes
take the aggregator. Job 1's straggler follows its block to the server (RAW, TOMBSTONE). Job 2 completes with 2 lanes.""")
    a, b = esa_hosts()
    pool = EsaPool(8, 4, MODE_ESA, True)
    esa_setup(v, pool, a, b)
    assert pool.index(a, 10) == 3 and pool.index(b, 5) == 3
    v.send(a.workers[0], agg(a, 0, 2, 1, 10, [1, 2, 3, 4], next_exp=1, priority=1))
    v.send(a.workers[2], agg(a, 2, 2, 1, 10, [10, 20, 30, 40], next_exp=2, priority=1))
    v.comment("job 2 at priority 7 preempts: job 1's partial goes to job 1's server")
    v.send(b.workers[0], agg(b, 0, 5, 0, 5, [100, 200], next_exp=0, priority=7))
    v.expect(a.server, partial(a, 2, 1, 10, [11, 22, 33, 44], [0b101], 0, 0, 2, 1, PREEMPTED))
    v.comment("job 1's worker 1 for block 10: the tombstone sends it after its block")
    straggler = agg(a, 1, 2, 1, 10, [5, 5, 5, 5], next_exp=0, priority=1)
    v.send(a.workers[1], straggler)
    v.expect(a.server, agg(a, 1, 2, 1, 10, [5, 5, 5, 5], next_exp=0, priority=1, status=TOMBSTONE))
    v.send(b.workers[1], agg(b, 1, 5, 0, 5, [1, 2], next_exp=-1, priority=7))
    esa_results(v, b, 5, 0, 5, [101, 202], 0, 0, 0, 7)
    v.expect(b.server, partial(b, 5, 0, 5, [101, 202], [0b11], 0, 0, 0, 7, COMPLETE))
    v.counters(PREEMPTIONS=1, FALLBACK_TOMBSTONE=1, ALLOCATIONS=2, COMPLETIONS=1, CONTRIBUTIONS=4, RESULTS_SENT=2,
               RESULT_COPIES=1)
    return v


def esa_collision_fallback():
    v = Vector("esa_collision_fallback", """
ESA, header priorities. Job 2's block 5 holds aggregator 3 at priority 5. Job 1's block 10 (aggregator 3) at priority 3
cannot preempt: RAW (COLLISION) to job 1's server, and the tombstone remembers block 10, so job 1's next packet of
block 10 follows it (TOMBSTONE) even at priority 9. Block 14 (aggregator 3) at the equal priority 5 does not preempt
either (equal priorities never do). Job 2 then completes undisturbed.""")
    a, b = esa_hosts()
    pool = EsaPool(8, 4, MODE_ESA, True)
    esa_setup(v, pool, a, b)
    assert pool.index(a, 10) == 3 and pool.index(a, 14) == 3 and pool.index(b, 5) == 3
    v.send(b.workers[0], agg(b, 0, 5, 0, 5, [1, 1, 1, 1], priority=5))
    v.send(a.workers[0], agg(a, 0, 10, 0, 10, [2, 2, 2, 2], next_exp=4, priority=3))
    v.expect(a.server, agg(a, 0, 10, 0, 10, [2, 2, 2, 2], next_exp=4, priority=3, status=COLLISION))
    v.send(a.workers[1], agg(a, 1, 10, 0, 10, [3, 3, 3, 3], priority=9))
    v.expect(a.server, agg(a, 1, 10, 0, 10, [3, 3, 3, 3], priority=9, status=TOMBSTONE))
    v.send(a.workers[2], agg(a, 2, 14, 0, 14, [4, 4, 4, 4], flags=FLAG_INT32, priority=5))
    v.expect(a.server, agg(a, 2, 14, 0, 14, [4, 4, 4, 4], flags=FLAG_INT32, priority=5, status=COLLISION))
    v.send(b.workers[1], agg(b, 1, 5, 0, 5, [2, 2, 2, 2], priority=5))
    esa_results(v, b, 5, 0, 5, [3, 3, 3, 3], 0, 0, 0, 5)
    v.expect(b.server, partial(b, 5, 0, 5, [3, 3, 3, 3], [0b11], 0, 0, 0, 5, COMPLETE))
    v.counters(FALLBACK_COLLISION=2, FALLBACK_TOMBSTONE=1, PREEMPTIONS=0, ALLOCATIONS=1, COMPLETIONS=1,
               CONTRIBUTIONS=2, RESULTS_SENT=2, RESULT_COPIES=1)
    return v


def esa_tombstone():
    v = Vector("esa_tombstone", """
ESA, header priorities. Job 1's block 10 (aggregator 3, workers 0 and 1) is preempted by job 2's block 5, which then
completes and frees the aggregator. Job 1's worker 2 for block 10 finds the aggregator free but its block's tombstone
there: it goes to the server (TOMBSTONE) instead of starting a second partial of block 10 that could never complete.
Job 1's next block at that aggregator (14) is not tombstoned: it allocates and completes in the switch.""")
    a, b = esa_hosts()
    pool = EsaPool(8, 4, MODE_ESA, True)
    esa_setup(v, pool, a, b)
    v.send(a.workers[0], agg(a, 0, 3, 0, 10, [1, 1, 1, 1], priority=1))
    v.send(a.workers[1], agg(a, 1, 3, 0, 10, [2, 2, 2, 2], priority=1))
    v.send(b.workers[0], agg(b, 0, 5, 0, 5, [5, 6, 7, 8], priority=2))
    v.expect(a.server, partial(a, 3, 0, 10, [3, 3, 3, 3], [0b011], 0, 0, 0, 1, PREEMPTED))
    v.send(b.workers[1], agg(b, 1, 5, 0, 5, [1, 1, 1, 1], priority=2))
    esa_results(v, b, 5, 0, 5, [6, 7, 8, 9], 0, 0, 0, 2)
    v.expect(b.server, partial(b, 5, 0, 5, [6, 7, 8, 9], [0b11], 0, 0, 0, 2, COMPLETE))
    v.comment("aggregator 3 is free, but its tombstone is job 1's block 10")
    v.send(a.workers[2], agg(a, 2, 3, 0, 10, [3, 3, 3, 3], priority=1))
    v.expect(a.server, agg(a, 2, 3, 0, 10, [3, 3, 3, 3], priority=1, status=TOMBSTONE))
    v.comment("job 1's block 14 (aggregator 3) allocates and completes in the switch")
    v.send(a.workers[1], agg(a, 1, 3, 1, 14, [10, 0, 0, 1], next_exp=-2, priority=1))
    v.send(a.workers[0], agg(a, 0, 3, 1, 14, [20, 0, 0, 2], next_exp=-5, priority=1))
    v.send(a.workers[2], agg(a, 2, 3, 1, 14, [30, 0, 0, 3], next_exp=-3, priority=1))
    esa_results(v, a, 3, 1, 14, [60, 0, 0, 6], -2, 0, 0, 1)
    v.expect(a.server, partial(a, 3, 1, 14, [60, 0, 0, 6], [0b111], 0, 0, -2, 1, COMPLETE))
    v.counters(PREEMPTIONS=1, FALLBACK_TOMBSTONE=1, ALLOCATIONS=3, COMPLETIONS=2, CONTRIBUTIONS=7, RESULTS_SENT=5,
               RESULT_COPIES=2)
    return v


def esa_retransmit_flush():
    v = Vector("esa_retransmit_flush", """
ESA, header priorities. A retransmission never allocates. Worker 0 retransmits block 10 of job 1 while aggregator 3
holds it (workers 0 and 1): the partial is flushed to the server (PARTIAL, FLUSHED), then the retransmission follows it
(RAW, RETRANSMIT), both to job 1's server and in that order (the server must see the partial first: the RAW of a worker
already in it is then a duplicate, not a partial overlap). Block 10's tombstone sends worker 2 after them. A
retransmission of block 11 (aggregator 0, free) goes to the server alone; block 11's first packet then allocates.""")
    a, b = esa_hosts()
    pool = EsaPool(8, 4, MODE_ESA, True)
    esa_setup(v, pool, a, b)
    assert pool.index(a, 10) == 3 and pool.index(a, 11) == 0
    v.send(a.workers[0], agg(a, 0, 2, 0, 10, [5, 6], next_exp=-1, block_exp=1, flags=FLAG_INT32, priority=3))
    v.send(a.workers[1], agg(a, 1, 2, 0, 10, [7, 8], next_exp=4, block_exp=1, flags=FLAG_INT32, priority=3))
    v.comment("worker 0 retransmits block 10: FLUSHED PARTIAL, then the RAW retransmission")
    v.send(a.workers[0], agg(a, 0, 2, 0, 10, [5, 6], next_exp=-1, block_exp=1, flags=FLAG_RETRANSMIT | FLAG_INT32,
                             priority=3))
    v.expect(a.server, partial(a, 2, 0, 10, [12, 14], [0b11], FLAG_INT32, 1, 4, 3, FLUSHED))
    v.expect(a.server, agg(a, 0, 2, 0, 10, [5, 6], next_exp=-1, block_exp=1, flags=FLAG_RETRANSMIT | FLAG_INT32,
                           priority=3, status=RETRANSMIT))
    v.send(a.workers[2], agg(a, 2, 2, 0, 10, [1, 1], next_exp=0, block_exp=1, flags=FLAG_INT32, priority=3))
    v.expect(a.server, agg(a, 2, 2, 0, 10, [1, 1], next_exp=0, block_exp=1, flags=FLAG_INT32, priority=3,
                           status=TOMBSTONE))
    v.comment("a retransmission for block 11, whose aggregator 0 is free: to the server only, no allocation")
    v.send(a.workers[1], agg(a, 1, 3, 0, 11, [9, 9], flags=FLAG_RETRANSMIT, priority=3))
    v.expect(a.server, agg(a, 1, 3, 0, 11, [9, 9], flags=FLAG_RETRANSMIT, priority=3, status=RETRANSMIT))
    v.send(a.workers[0], agg(a, 0, 3, 0, 11, [8, 8], priority=3))
    v.counters(FLUSHES=1, FALLBACK_RETRANSMIT=2, FALLBACK_TOMBSTONE=1, ALLOCATIONS=2, CONTRIBUTIONS=3, COMPLETIONS=0)
    return v


def esa_same_job_newer_block():
    v = Vector("esa_same_job_newer_block", """
ESA, header priorities. A newer block of the holder's own job always takes the aggregator, whatever the priorities:
job 1's block 14 (priority 0) evicts block 10 (priority 2) from aggregator 3 as a STALE PARTIAL. An older block of the
same job (6, aggregator 3) never does, even at priority 9: RAW (COLLISION). Block 14 completes.""")
    a, b = esa_hosts()
    pool = EsaPool(8, 4, MODE_ESA, True)
    esa_setup(v, pool, a, b)
    assert pool.index(a, 10) == 3 and pool.index(a, 14) == 3 and pool.index(a, 6) == 3
    v.send(a.workers[0], agg(a, 0, 2, 0, 10, [1, 1, 1], next_exp=7, priority=2))
    v.send(a.workers[1], agg(a, 1, 2, 0, 10, [2, 2, 2], next_exp=6, priority=2))
    v.send(a.workers[2], agg(a, 2, 2, 0, 14, [7, 7, 7, 7], priority=0))
    v.expect(a.server, partial(a, 2, 0, 10, [3, 3, 3], [0b011], 0, 0, 7, 2, STALE))
    v.send(a.workers[0], agg(a, 0, 2, 0, 6, [4, 4, 4, 4], priority=9))
    v.expect(a.server, agg(a, 0, 2, 0, 6, [4, 4, 4, 4], priority=9, status=COLLISION))
    v.send(a.workers[0], agg(a, 0, 2, 0, 14, [1, 2, 3, 4], priority=0))
    v.send(a.workers[1], agg(a, 1, 2, 0, 14, [10, 20, 30, 40], priority=0))
    esa_results(v, a, 2, 0, 14, [18, 29, 40, 51], 0, 0, 0, 0)
    v.expect(a.server, partial(a, 2, 0, 14, [18, 29, 40, 51], [0b111], 0, 0, 0, 0, COMPLETE))
    v.counters(STALE_EVICTIONS=1, FALLBACK_COLLISION=1, ALLOCATIONS=2, COMPLETIONS=1, CONTRIBUTIONS=5,
               RESULTS_SENT=3, RESULT_COPIES=1)
    return v


def esa_job_table_priority():
    v = Vector("esa_job_table_priority", """
ESA with job-table priorities (PriorityPolicy.JOB_TABLE): job 1 has priority 1, job 2 priority 7; the header's
Priority is ignored (job 1's packets claim 200 and 255, job 2's 0). Job 2 preempts job 1's block (PARTIAL with holder
priority 1, the table's); job 1's next block cannot preempt job 2 (RAW, COLLISION). The results carry the completing
request's header Priority, the COMPLETE PARTIAL the stored table priority 7.""")
    a, b = esa_hosts()
    a.priority, b.priority = 1, 7
    pool = EsaPool(8, 4, MODE_ESA, False)
    esa_setup(v, pool, a, b)
    v.send(a.workers[0], agg(a, 0, 1, 0, 10, [1, 0, 0, 0], priority=200))
    v.send(b.workers[0], agg(b, 0, 4, 1, 5, [2, 0, 0, 0], priority=0))
    v.expect(a.server, partial(a, 1, 0, 10, [1, 0, 0, 0], [0b1], 0, 0, 0, 1, PREEMPTED))
    v.send(a.workers[1], agg(a, 1, 1, 1, 14, [3, 0, 0, 0], priority=255))
    v.expect(a.server, agg(a, 1, 1, 1, 14, [3, 0, 0, 0], priority=255, status=COLLISION))
    v.send(b.workers[1], agg(b, 1, 4, 1, 5, [4, 0, 0, 0], priority=0))
    esa_results(v, b, 4, 1, 5, [6, 0, 0, 0], 0, 0, 0, 0)
    v.expect(b.server, partial(b, 4, 1, 5, [6, 0, 0, 0], [0b11], 0, 0, 0, 7, COMPLETE))
    v.counters(PREEMPTIONS=1, FALLBACK_COLLISION=1, COMPLETIONS=1, ALLOCATIONS=2, CONTRIBUTIONS=3, RESULTS_SENT=2,
               RESULT_COPIES=1)
    return v


def esa_atp():
    v = Vector("esa_atp", """
ATP (AllocationMode.DEALLOCATE_ON_ACK): a complete block's sum goes to the server only (COMPLETE PARTIAL) and the
aggregator stays held (acknowledged-pending): a late duplicate is dropped, another job's block collides (no preemption
in ATP) and goes to its server. A newer block of the same job takes the pending aggregator without a message (the
server has the sum). A RESULT from anyone but the job's server is dropped; the server's RESULT is multicast to the
workers as it came (worker id rewritten) and frees the aggregator if it still holds that block.""")
    a, b = esa_hosts()
    pool = EsaPool(8, 4, MODE_ATP, True)
    esa_setup(v, pool, a, b)
    assert pool.index(b, 5) == 3 and pool.index(b, 9) == 3 and pool.index(a, 10) == 3
    v.send(b.workers[0], agg(b, 0, 5, 0, 5, [1, 2, 3, 4], next_exp=2, flags=FLAG_INT32, priority=1))
    v.send(b.workers[1], agg(b, 1, 5, 0, 5, [5, 6, 7, 8], next_exp=1, flags=FLAG_INT32, priority=1))
    v.expect(b.server, partial(b, 5, 0, 5, [6, 8, 10, 12], [0b11], FLAG_INT32, 0, 2, 1, COMPLETE))
    v.comment("pending acknowledgement: a late duplicate is dropped, job 1 collides")
    v.send(b.workers[0], agg(b, 0, 5, 0, 5, [1, 2, 3, 4], next_exp=2, flags=FLAG_INT32, priority=1))
    v.send(a.workers[0], agg(a, 0, 2, 0, 10, [1, 1, 1, 1], priority=9))
    v.expect(a.server, agg(a, 0, 2, 0, 10, [1, 1, 1, 1], priority=9, status=COLLISION))
    v.comment("job 2's block 9 takes the pending aggregator silently")
    v.send(b.workers[0], agg(b, 0, 1, 0, 9, [1, 0, 0, 0], priority=1))
    v.comment("a worker posing as the server: dropped (DROP_SOURCE_MISMATCH); the server's result for block 5 goes to "
              "both workers")
    server_result = inagg(AGGREGATE, FLAG_RESULT | FLAG_INT32, 2, 0, 5, 0, 5, [6, 8, 10, 12], next_exp=2, priority=1)
    v.send(b.workers[1], server_result)
    v.send(b.server, server_result)
    for w, h in enumerate(b.workers):
        v.expect(h, inagg(AGGREGATE, FLAG_RESULT | FLAG_INT32, 2, w, 5, 0, 5, [6, 8, 10, 12], next_exp=2,
                          priority=1))
    v.send(b.workers[1], agg(b, 1, 1, 0, 9, [2, 0, 0, 0], priority=1))
    v.expect(b.server, partial(b, 1, 0, 9, [3, 0, 0, 0], [0b11], 0, 0, 0, 1, COMPLETE))
    v.comment("the server's result for block 9 frees aggregator 3 and goes to both workers")
    v.send(b.server, inagg(AGGREGATE, FLAG_RESULT, 2, 0, 1, 0, 9, [3, 0, 0, 0], next_exp=0, priority=1))
    for w, h in enumerate(b.workers):
        v.expect(h, inagg(AGGREGATE, FLAG_RESULT, 2, w, 1, 0, 9, [3, 0, 0, 0], next_exp=0, priority=1))
    v.send(a.workers[0], agg(a, 0, 2, 0, 14, [1, 1, 1, 1], priority=9))
    v.counters(COMPLETIONS=2, DUPLICATES=1, FALLBACK_COLLISION=1, DROP_SOURCE_MISMATCH=1, ACKS=2, RESULTS_SENT=4,
               ALLOCATIONS=3, PREEMPTIONS=0, CONTRIBUTIONS=5, RESULT_COPIES=2)
    return v


def esa_preemption_release():
    v = Vector("esa_preemption_release", """
ESA, header priorities, pool of 4 at pool slots 8..9. A preempted job gets the aggregator back once its preemptor
releases it. JOINs first, counted under EsaSwitch's names: job 1's worker 0 claimed from job 2's worker 0's address
(dropped unanswered, DROP_SOURCE_MISMATCH), job 2's worker id 2 (REJECT, worker id out of range), job 1's worker 0
(JOIN_ACK with the window 16). Job 1's block 6 ((6 + 0x9E3779B1) mod 4 = 3) holds workers 0 and 1 at priority 1; job
2's block 5 (aggregator 3) at priority 5 preempts it (job 1's PARTIAL, PREEMPTED, to job 1's server) and completes,
which releases the aggregator. Job 1's worker 2 then retransmits block 6: a retransmission never allocates, so it
goes to the server (RAW, RETRANSMIT) although the aggregator is free. Job 1's next block at aggregator 3 (10)
allocates it again and completes in the switch. A packet of job 2 from worker id 5 is dropped (DROP_UNKNOWN_WORKER).""")
    a, b = esa_hosts()
    pool = EsaPool(8, 4, MODE_ESA, True)
    esa_setup(v, pool, a, b)
    assert pool.index(a, 6) == 3 and pool.index(b, 5) == 3 and pool.index(a, 10) == 3
    v.comment("JOINs: job 1's worker 0 from job 2's worker 0's address (dropped), job 2's worker id 2 (REJECT), job 1's")
    v.comment("worker 0 (JOIN_ACK)")
    v.send(b.workers[0], inagg(JOIN, 0, 1, 0, seq=3))
    v.send(b.workers[1], inagg(JOIN, 0, 2, 2, seq=2))
    v.expect(b.workers[1], inagg(REJECT, FLAG_RESULT, 2, 2, status=WORKER_ID_OUT_OF_RANGE))
    v.send(a.workers[0], inagg(JOIN, 0, 1, 0, seq=3))
    v.expect(a.workers[0], inagg(JOIN_ACK, FLAG_RESULT, 1, 0, slot=16, seq=3, reserved=4))
    v.send(a.workers[0], agg(a, 0, 2, 0, 6, [1, 2, 3, 4], next_exp=2, priority=1))
    v.send(a.workers[1], agg(a, 1, 2, 0, 6, [5, 6, 7, 8], next_exp=-1, priority=1))
    v.comment("job 2's block 5 at priority 5 preempts job 1's block 6")
    v.send(b.workers[0], agg(b, 0, 5, 1, 5, [10, 10, 10, 10], next_exp=0, flags=FLAG_INT32, priority=5))
    v.expect(a.server, partial(a, 2, 0, 6, [6, 8, 10, 12], [0b011], 0, 0, 2, 1, PREEMPTED))
    v.comment("job 2's block 5 completes: the aggregator is released")
    v.send(b.workers[1], agg(b, 1, 5, 1, 5, [1, 2, 3, 4], next_exp=3, flags=FLAG_INT32, priority=5))
    esa_results(v, b, 5, 1, 5, [11, 12, 13, 14], 3, FLAG_INT32, 0, 5)
    v.expect(b.server, partial(b, 5, 1, 5, [11, 12, 13, 14], [0b11], FLAG_INT32, 0, 3, 5, COMPLETE))
    v.comment("job 1's worker 2 retransmits block 6: to the server, no allocation")
    v.send(a.workers[2], agg(a, 2, 2, 0, 6, [9, 9, 9, 9], flags=FLAG_RETRANSMIT, priority=1))
    v.expect(a.server, agg(a, 2, 2, 0, 6, [9, 9, 9, 9], flags=FLAG_RETRANSMIT, priority=1, status=RETRANSMIT))
    v.comment("job 1's block 10 allocates aggregator 3 again and completes")
    v.send(a.workers[1], agg(a, 1, 3, 1, 10, [1, 0, 0, 0], next_exp=-3, block_exp=2, priority=1))
    v.send(a.workers[2], agg(a, 2, 3, 1, 10, [0, 1, 0, 0], next_exp=-2, block_exp=2, priority=1))
    v.send(a.workers[0], agg(a, 0, 3, 1, 10, [0, 0, 1, 0], next_exp=-5, block_exp=2, priority=1))
    esa_results(v, a, 3, 1, 10, [1, 1, 1, 0], -2, 0, 2, 1)
    v.expect(a.server, partial(a, 3, 1, 10, [1, 1, 1, 0], [0b111], 0, 2, -2, 1, COMPLETE))
    v.send(b.workers[1], agg(b, 5, 5, 0, 9, [1, 1, 1, 1], priority=5))
    v.counters(JOINS=1, REJECTS=1, DROP_UNKNOWN_WORKER=1, DROP_SOURCE_MISMATCH=1, ALLOCATIONS=3, CONTRIBUTIONS=7,
               PREEMPTIONS=1, COMPLETIONS=2, RESULTS_SENT=5, RESULT_COPIES=2, FALLBACK_RETRANSMIT=1, FLUSHES=0)
    return v


# ---------------------------------------------------------------------------------------------------------------------
# Two-level (upstream) aggregation: a slot-protocol job in SoftwareSwitch's UpstreamAggregation mode
# (set_upstream_job rows of inagg_v1model.p4). The switch sums its local workers only and sends the sum to the job's
# parameter server as one PARTIAL (reason SUBTREE, Worker Id = bitmap words, Session = the job's, the local bitmap's
# words after the lanes);
# a packet of a complete round goes to the server as it came (Status RETRANSMIT); other workers are not served here.

SUBTREE = 8


class UpstreamJob:
    """W workers of which this switch serves `local` ({worker id: host}); the server is a host; no multicast group."""

    def __init__(self, job_id, workers, local, server, slots, base, lanes, session=0):
        self.job_id, self.workers, self.local, self.server = job_id, workers, dict(sorted(local.items())), server
        self.slots, self.base, self.lanes, self.session = slots, base, lanes, session

    def words(self):
        """The local bitmap: bit w % 32 of word w / 32, ceil(W / 32) words (the PARTIAL's)."""
        words = [0] * ((self.workers + 31) // 32)
        for w in self.local:
            words[w // 32] |= 1 << (w % 32)
        return words


def upstream_setup(v, *jobs):
    v.lines.append("")
    v.lines.append("# setup (simple_switch_CLI; the same lines org.inagg.p4.control.JobTable emits)")
    v.lines.append("register_reset InaggIngress.used_reg")
    v.lines.append("register_reset InaggIngress.seen_reg")
    v.lines.append("table_set_default InaggEgress.switch_address InaggEgress.set_switch_address %s %s"
                   % (SWITCH_MAC, SWITCH_IP))
    for job in jobs:
        words = job.words() + [0] * (8 - len(job.words()))
        v.lines.append("table_add InaggIngress.job_table InaggIngress.set_upstream_job %d => %d %d %d %d %d %d %s %d"
                       % (job.job_id, job.workers, job.slots, job.base, job.lanes, len(job.local), job.server.port,
                          " ".join(str(word) for word in words), job.session))
        for w, h in job.local.items():
            v.lines.append("table_add InaggIngress.worker_source InaggIngress.source_ok %d %d %s %d =>"
                           % (job.job_id, w, h.ip, h.udp))
        v.lines.append("table_add InaggEgress.server_endpoint InaggEgress.set_endpoint %d => %s %s %d"
                       % (job.job_id, job.server.mac, job.server.ip, job.server.udp))


def upstream_partial(job, slot, copy, seq, sums, flags, block_exp, max_exp, priority):
    """SoftwareSwitch.sendPartialUpstream: the completing request's header fields, the local workers' count and
    bitmap, the round's sums and max Next Exponent."""
    return partial(job, slot, copy, seq, sums, job.words(), flags, block_exp, max_exp, priority, SUBTREE)


def upstream_completion():
    v = Vector("upstream_completion", """
Two-level aggregation: job 20 has 40 workers, of which this switch serves 1, 2 and 33 (bitmap words 0b110, 0b10);
the others send elsewhere. A JOIN is answered with all 40 workers. Nothing leaves before the third local contribution
(a repeat is a duplicate); the third sends ONE PARTIAL to the parameter server (host 9) instead of a multicast: Type 5,
Status SUBTREE, Worker Id = 2 bitmap words, Element Count = 4 lanes + 2 bitmap words, Session = 0 (the job's), the
completing request's flags (INT32), block exponent and Priority, the max Next Exponent, the sums (0x7FFFFFFF + 1
wraps), then the local bitmap. Round 8 on copy 1 with 2 lanes: the PARTIAL carries 2 lanes + 2 words.""")
    w = {1: host(1), 2: host(2), 33: host(33)}
    job = UpstreamJob(20, 40, w, host(9), 4, 0, 4)
    upstream_setup(v, job)
    v.comment("JOIN of worker 33: JOIN_ACK with the job's 40 workers, slots 4, lanes 4")
    v.send(w[33], inagg(JOIN, 0, 20, 33, seq=40))
    v.expect(w[33], inagg(JOIN_ACK, FLAG_RESULT, 20, 33, slot=4, seq=40, reserved=4))
    a = [1, -2, 0x7FFFFFFF, 100]
    b = [10, -20, 1, -100]
    c = [100, 30, 0, 7]
    v.comment("round 7 on slot 1, copy 0: workers 1 and 33 are absorbed, worker 1's repeat is a duplicate")
    v.send(w[1], contribution(job, 1, 1, 0, 7, a, next_exp=3, block_exp=2, flags=FLAG_INT32, priority=5))
    v.send(w[1], contribution(job, 1, 1, 0, 7, [9, 9, 9, 9], next_exp=9, block_exp=2,
                              flags=FLAG_INT32 | FLAG_RETRANSMIT, priority=5))
    v.send(w[33], contribution(job, 33, 1, 0, 7, b, next_exp=5, block_exp=2, flags=FLAG_INT32, priority=5))
    v.comment("worker 2 completes the local sum: one PARTIAL (SUBTREE) to the server, nothing to the workers")
    v.send(w[2], contribution(job, 2, 1, 0, 7, c, next_exp=-1, block_exp=3, flags=FLAG_INT32, priority=6))
    v.expect(job.server, upstream_partial(job, 1, 0, 7, [111, 8, wrap(0x7FFFFFFF + 1), 7], FLAG_INT32, 3, 5, 6))
    v.comment("round 8 on copy 1 with 2 lanes")
    v.send(w[33], contribution(job, 33, 1, 1, 8, [5, 6], next_exp=-3))
    v.send(w[2], contribution(job, 2, 1, 1, 8, [7, 8], next_exp=-7))
    v.send(w[1], contribution(job, 1, 1, 1, 8, [9, 10], next_exp=-5))
    v.expect(job.server, upstream_partial(job, 1, 1, 8, [21, 24], 0, 0, -3, 0))
    v.counters(UPSTREAM_PARTIALS=2, CONTRIBUTIONS=6, DUPLICATES=1, RESULTS_SENT=0, JOINS=1)
    return v


def upstream_retransmit_forward():
    v = Vector("upstream_retransmit_forward", """
Two-level aggregation: job 21 has 4 workers, this switch serves 0 and 1. After the local sum of round 3 has gone up,
the switch holds only that partial sum, not the result: a retransmission of round 3 is forwarded to the parameter
server exactly as it came (its own lanes, also when it carries fewer) with Status RETRANSMIT, never answered here.
Round 4 goes on copy 0 and round 5 reuses copy 1; round 3 is stale from then on and dropped. The job is in session 5
(its row's): its packets carry it, and so does every PARTIAL it sends up (EsaWire: the server merges only its
current session's).""")
    w = {0: host(1), 1: host(2)}
    job = UpstreamJob(21, 4, w, host(9), 2, 8, 4, session=5)
    upstream_setup(v, job)
    v.send(w[0], contribution(job, 0, 0, 1, 3, [1, 2, 3, 4], next_exp=1, priority=2))
    v.send(w[1], contribution(job, 1, 0, 1, 3, [10, 20, 30, 40], next_exp=2, priority=2))
    v.expect(job.server, upstream_partial(job, 0, 1, 3, [11, 22, 33, 44], 0, 0, 2, 2))
    v.comment("worker 1 retransmits round 3: to the server as it came, Status RETRANSMIT")
    v.send(w[1], contribution(job, 1, 0, 1, 3, [10, 20, 30, 40], next_exp=2, flags=FLAG_RETRANSMIT, priority=2))
    v.expect(job.server, agg(job, 1, 0, 1, 3, [10, 20, 30, 40], next_exp=2, flags=FLAG_RETRANSMIT, priority=2,
                             status=RETRANSMIT))
    v.comment("worker 0 retransmits round 3 with 2 lanes: forwarded with its 2 lanes")
    v.send(w[0], contribution(job, 0, 0, 1, 3, [1, 2], next_exp=1, block_exp=1, flags=FLAG_RETRANSMIT | FLAG_INT32))
    v.expect(job.server, agg(job, 0, 0, 1, 3, [1, 2], next_exp=1, block_exp=1, flags=FLAG_RETRANSMIT | FLAG_INT32,
                             status=RETRANSMIT))
    v.comment("round 4 on copy 0, then round 5 reuses copy 1; a late round-3 packet is now stale, dropped")
    v.send(w[1], contribution(job, 1, 0, 0, 4, [1, 1, 1, 1], next_exp=-1))
    v.send(w[0], contribution(job, 0, 0, 0, 4, [2, 2, 2, 2], next_exp=-2))
    v.expect(job.server, upstream_partial(job, 0, 0, 4, [3, 3, 3, 3], 0, 0, -1, 0))
    v.send(w[1], contribution(job, 1, 0, 1, 5, [5, 5, 5, 5]))
    v.send(w[0], contribution(job, 0, 0, 1, 3, [1, 2, 3, 4], next_exp=1, flags=FLAG_RETRANSMIT))
    v.send(w[0], contribution(job, 0, 0, 1, 5, [6, 6, 6, 6]))
    v.expect(job.server, upstream_partial(job, 0, 1, 5, [11, 11, 11, 11], 0, 0, 0, 0))
    v.counters(UPSTREAM_PARTIALS=3, UPSTREAM_FORWARDS=2, RETRANSMIT_REPLIES=0, DROP_STALE=1, CONTRIBUTIONS=6)
    return v


def upstream_foreign_worker():
    v = Vector("upstream_foreign_worker", """
Two-level aggregation: job 22 has 4 workers, this switch serves 1 and 3 (bitmap 0b1010). Workers 0 and 2 are served
elsewhere: their contributions are dropped (DROP_UNKNOWN_WORKER, as for an id out of range) and their JOINs rejected
with WORKER_ID_OUT_OF_RANGE. A local worker id from another source is spoofed (dropped); a local worker's JOIN is
answered with W = 4. Workers 1 and 3 complete the local sum.""")
    w = {1: host(2), 3: host(4)}
    foreign = {0: host(1), 2: host(3)}
    job = UpstreamJob(22, 4, w, host(9), 2, 0, 2)
    upstream_setup(v, job)
    v.comment("workers 0 and 2 are not served here: dropped; worker 0's JOIN: REJECT worker id out of range")
    v.send(foreign[0], contribution(job, 0, 0, 0, 0, [100, 100]))
    v.send(foreign[0], inagg(JOIN, 0, 22, 0, seq=4))
    v.expect(foreign[0], inagg(REJECT, FLAG_RESULT, 22, 0, status=WORKER_ID_OUT_OF_RANGE))
    v.send(foreign[2], contribution(job, 2, 0, 0, 0, [200, 200]))
    v.send(foreign[0], contribution(job, 4, 0, 0, 0, [300, 300]))
    v.comment("worker 3's host claims worker 1: spoofed, dropped")
    v.send(w[3], contribution(job, 1, 0, 0, 0, [400, 400]))
    v.comment("worker 3's JOINs: a wrong worker count is rejected, the right one answered with W = 4")
    v.send(w[3], inagg(JOIN, 0, 22, 3, seq=2))
    v.expect(w[3], inagg(REJECT, FLAG_RESULT, 22, 3, status=WORKER_COUNT_MISMATCH))
    v.send(w[3], inagg(JOIN, 0, 22, 3, seq=4))
    v.expect(w[3], inagg(JOIN_ACK, FLAG_RESULT, 22, 3, slot=2, seq=4, reserved=2))
    v.send(w[1], contribution(job, 1, 0, 0, 0, [1, 2]))
    v.send(w[3], contribution(job, 3, 0, 0, 0, [3, 4]))
    v.expect(job.server, upstream_partial(job, 0, 0, 0, [4, 6], 0, 0, 0, 0))
    v.counters(DROP_UNKNOWN_WORKER=3, DROP_SOURCE_MISMATCH=1, REJECTS=2, JOINS=1, UPSTREAM_PARTIALS=1,
               CONTRIBUTIONS=2)
    return v


def upstream_two_level():
    v = Vector("upstream_two_level", """
Two-level aggregation of one tensor sharded over two jobs with their own parameter servers (a multi-PS plan): job 40
(server host 9) and job 41 (server host 10) have 4 workers each, of which this switch serves 0 and 1 (hosts 1 and 2,
the same in both jobs); job 40 owns pool slots 0..1, job 41 slots 2..3. The same slot, copy and round of both jobs
interleave: each job's local sum goes as its own PARTIAL to its own server, and a retransmission of a complete round
goes to that job's server (RETRANSMIT). What a switch in the middle must not take: a RESULT (the servers answer the
workers themselves; a worker's RESULT is malformed here), another switch's PARTIAL, and a newer round on an
incomplete copy (violation).""")
    local = {0: host(1), 1: host(2)}
    a = UpstreamJob(40, 4, local, host(9), 2, 0, 2)
    b = UpstreamJob(41, 4, local, host(10), 2, 2, 2)
    upstream_setup(v, a, b)
    v.comment("worker 1's JOIN of job 41: JOIN_ACK with W = 4")
    v.send(local[1], inagg(JOIN, 0, 41, 1, seq=4))
    v.expect(local[1], inagg(JOIN_ACK, FLAG_RESULT, 41, 1, slot=2, seq=4, reserved=2))
    v.send(local[0], contribution(a, 0, 1, 0, 5, [1, 2], next_exp=1))
    v.send(local[0], contribution(b, 0, 1, 0, 5, [1000, 2000], next_exp=-1, flags=FLAG_INT32))
    v.send(local[1], contribution(b, 1, 1, 0, 5, [3000, 4000], next_exp=-2, flags=FLAG_INT32))
    v.expect(b.server, upstream_partial(b, 1, 0, 5, [4000, 6000], FLAG_INT32, 0, -1, 0))
    v.send(local[1], contribution(a, 1, 1, 0, 5, [3, 4], next_exp=2))
    v.expect(a.server, upstream_partial(a, 1, 0, 5, [4, 6], 0, 0, 2, 0))
    v.comment("worker 0 retransmits job 41's round 5: to job 41's server as it came, Status RETRANSMIT")
    v.send(local[0], contribution(b, 0, 1, 0, 5, [1000, 2000], next_exp=-1, flags=FLAG_INT32 | FLAG_RETRANSMIT))
    v.expect(b.server, agg(b, 0, 1, 0, 5, [1000, 2000], next_exp=-1, flags=FLAG_INT32 | FLAG_RETRANSMIT,
                           status=RETRANSMIT))
    v.comment("a RESULT for job 40 from worker 0, and a PARTIAL of job 40 from worker 1: malformed here")
    v.send(local[0], inagg(AGGREGATE, FLAG_RESULT, 40, 0, 1, 0, 5, [4, 6], next_exp=2))
    v.send(local[1], partial(a, 1, 0, 5, [4, 6], [0b11], 0, 0, 2, 0, SUBTREE))
    v.comment("round 6 on copy 1 of job 40 opens; round 8 on the same copy while it is incomplete: violation")
    v.send(local[0], contribution(a, 0, 1, 1, 6, [5, 5]))
    v.send(local[1], contribution(a, 1, 1, 1, 8, [9, 9]))
    v.send(local[1], contribution(a, 1, 1, 1, 6, [6, 6]))
    v.expect(a.server, upstream_partial(a, 1, 1, 6, [11, 11], 0, 0, 0, 0))
    v.counters(JOINS=1, CONTRIBUTIONS=6, UPSTREAM_PARTIALS=3, UPSTREAM_FORWARDS=1, DROP_MALFORMED=2,
               DROP_VIOLATION=1, RESULTS_SENT=0)
    return v


def sessions():
    v = Vector("sessions", """
Sessions (docs/sessions.md): job 12 is in session 5, the value its job table row carries (the control plane rewrites the
row, and clears the job's registers, to start a new run). A JOIN asking for session 0 (any) or 5 gets a JOIN_ACK
granting 5 in Priority and Status; one asking for 4 or 0x105 is refused (REJECT STALE_SESSION, Reserved = 5, Sequence
= 0xFFFFFFFF: the session came from the control plane). AGGREGATEs of sessions 4 and 6 (a delayed packet of the last
run, a confused sender) are dropped before any register, counted DROP_STALE_SESSION, and answered to their sender
with the same REJECT (no lanes); session 5's round completes with only its own lanes, and its results carry session 5.
A retransmission of that round stamped with session 4 is refused, not answered with the sums; a stranger's stale
packet claiming worker 0 is a source mismatch (no answer).""")
    w = [host(1), host(2)]
    stranger = host(66, port=7)
    job = Job(12, w, 2, 0, 2, 12, session=5)
    v.setup(job)

    def ack(worker):
        return inagg(JOIN_ACK, FLAG_RESULT, 12, worker, slot=2, seq=2, reserved=2, priority=0, status=5)

    def stale(worker):
        return inagg(REJECT, FLAG_RESULT, 12, worker, seq=SESSION_CAUSE_CONTROL_PLANE, status=STALE_SESSION,
                     reserved=5)

    v.comment("JOINs asking for any session and for session 5: JOIN_ACK granting 5")
    v.send(w[0], inagg(JOIN, 0, 12, 0, seq=2))
    v.expect(w[0], ack(0))
    v.send(w[1], inagg(JOIN, 0, 12, 1, seq=2, reserved=5))
    v.expect(w[1], ack(1))
    v.comment("JOINs asking for sessions 4 and 0x105: REJECT STALE_SESSION naming session 5")
    v.send(w[1], inagg(JOIN, 0, 12, 1, seq=2, reserved=4))
    v.expect(w[1], stale(1))
    v.send(w[0], inagg(JOIN, 0, 12, 0, seq=2, reserved=0x105))
    v.expect(w[0], stale(0))
    v.comment("AGGREGATEs of sessions 4 and 6: dropped, counted, answered with the REJECT")
    v.send(w[0], contribution(job, 0, 0, 0, 0, [100, 100], session=4))
    v.expect(w[0], stale(0))
    v.send(w[1], contribution(job, 1, 0, 0, 0, [200, 200], session=6))
    v.expect(w[1], stale(1))
    v.comment("session 5's round: only its own lanes")
    v.send(w[0], contribution(job, 0, 0, 0, 0, [1, 2]))
    v.send(w[1], contribution(job, 1, 0, 0, 0, [3, 4]))
    multicast(v, job, 0, 0, 0, [4, 6], 0)
    v.comment("a session-4 retransmission of the complete round: refused, not answered with the sums")
    v.send(w[0], contribution(job, 0, 0, 0, 0, [1, 2], flags=FLAG_RETRANSMIT, session=4))
    v.expect(w[0], stale(0))
    v.comment("a stranger's stale packet for worker 0: source mismatch first, no answer")
    v.send(stranger, contribution(job, 0, 0, 0, 0, [7, 7], session=4))
    v.counters(JOINS=2, REJECTS=2, DROP_STALE_SESSION=3, CONTRIBUTIONS=2, RESULTS_SENT=2, DROP_SOURCE_MISMATCH=1)
    return v


def credential_lanes(credential):
    """A JOIN credential as the two lanes a JOIN carries it in (InaggHeader.JOIN_CREDENTIAL_LANES), high word first."""
    return [wrap(credential >> 32), wrap(credential & 0xFFFFFFFF)]


def join_credential_security():
    v = Vector("join_credential_security", """
JOIN credentials (issue 24, docs/security.md): job 14 (session 3) holds a credential per worker, written by the control
plane into join_credential. A JOIN showing its worker's credential in two lanes (high word first) is answered as
before, with a 20-byte JOIN_ACK (the lanes cut off). JOINs from worker 1's registered address with a new incarnation
(a forged source) that show no credential, a wrong one, worker 0's, half of it, one lane or three lanes are dropped
unanswered and counted DROP_BAD_CREDENTIAL, also when they ask for another session or state another worker count
(the credential is checked right after the source): the session is unchanged, the running round completes with both
workers' lanes and worker 1's next JOIN is granted session 3. A stranger showing worker 0's credential is a source
mismatch; a JOIN with a credential for an unknown job is rejected as before.""")
    w = [host(1), host(2)]
    stranger = host(66, port=7)
    c0, c1 = 0x0123456789ABCDEF, 0xFEDCBA9876543210
    job = Job(14, w, 2, 0, 2, 14, session=3, credentials=[c0, c1])
    v.setup(job)

    def ack(worker):
        return inagg(JOIN_ACK, FLAG_RESULT, 14, worker, slot=2, seq=2, reserved=2, priority=0, status=3)

    def forged(lanes, **fields):
        # a new incarnation (0x11223344) from worker 1's own address
        return inagg(JOIN, 0, 14, 1, **dict(dict(seq=2, lanes=lanes, block_exp=0x11, next_exp=0x22, priority=0x33,
                                                  status=0x44), **fields))

    v.comment("each worker JOINs showing its own credential: JOIN_ACK granting session 3, 20 bytes")
    v.send(w[0], inagg(JOIN, 0, 14, 0, seq=2, lanes=credential_lanes(c0)))
    v.expect(w[0], ack(0))
    v.send(w[1], inagg(JOIN, 0, 14, 1, seq=2, lanes=credential_lanes(c1), reserved=3))
    v.expect(w[1], ack(1))
    v.comment("worker 0 contributes to round 5")
    v.send(w[0], contribution(job, 0, 1, 0, 5, [1, 2]))
    v.comment("forged JOINs from worker 1's address with a new incarnation: dropped unanswered, counted")
    v.send(w[1], forged([]))
    v.send(w[1], forged(credential_lanes(0xBAD)))
    v.send(w[1], forged(credential_lanes(c0)))
    v.send(w[1], forged(credential_lanes(c1 & 0xFFFFFFFF00000000)))
    v.send(w[1], forged([wrap(c1 >> 32)]))
    v.send(w[1], forged(credential_lanes(c1) + [0]))
    v.send(w[1], forged(credential_lanes(0xBAD), reserved=4))
    v.send(w[1], forged([], seq=3))
    v.comment("the session and the round are untouched: worker 1 completes round 5 with worker 0's lanes")
    v.send(w[1], contribution(job, 1, 1, 0, 5, [10, 20]))
    multicast(v, job, 1, 0, 5, [11, 22], 0)
    v.send(w[1], inagg(JOIN, 0, 14, 1, seq=2, lanes=credential_lanes(c1)))
    v.expect(w[1], ack(1))
    v.comment("a stranger showing worker 0's credential: a source mismatch, no answer")
    v.send(stranger, inagg(JOIN, 0, 14, 0, seq=2, lanes=credential_lanes(c0)))
    v.comment("an unknown job: REJECT as before (20 bytes)")
    v.send(w[0], inagg(JOIN, 0, 15, 0, seq=2, lanes=credential_lanes(c0)))
    v.expect(w[0], inagg(REJECT, FLAG_RESULT, 15, 0, status=UNKNOWN_JOB))
    v.counters(JOINS=3, REJECTS=1, DROP_BAD_CREDENTIAL=8, CONTRIBUTIONS=2, RESULTS_SENT=2, DROP_SOURCE_MISMATCH=1)
    return v


# ---- Collectives and reduce ops (docs/wire-format.md "Collectives and reduce ops", issue 25) ----------------------
# Written by hand from the spec, like every vector here; the software switch's side (SoftwareSwitch, SlotPool) is built
# on another branch, so until it lands ConformanceVectorTest expects these to fail there (AWAITING_SOFTWARE_SWITCH).

ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER = 0, 1, 2
OP_SUM, OP_MIN, OP_MAX = 0, 1, 2
FLAG_RESERVED = 0x80
RESULT_KEEPS = 0x7C         # a RESULT keeps the request's INT32 flag, collective and op


def collective_flags(collective, op=OP_SUM):
    return (collective << 3) | (op << 5)


def owned(job, worker, slot, copy, seq, lanes, collective, owner, op=OP_SUM, next_exp=0, block_exp=0, flags=0):
    """An AGGREGATE of a collective: its Flags bits, the Owner in Priority and Status (ALL_REDUCE: Priority = owner)."""
    return inagg(AGGREGATE, flags | collective_flags(collective, op), job.job_id, worker, slot, copy, seq, lanes,
                 block_exp=block_exp, next_exp=next_exp, priority=owner >> 8, status=owner & 0xFF,
                 reserved=getattr(job, "session", 0))


def owned_result(job, worker, slot, copy, seq, lanes, max_exp, collective, owner, op=OP_SUM, block_exp=0,
                 request_flags=0):
    """The switch's RESULT: the request's header with FLAG_RESULT, its INT32 flag, collective, op and Owner kept;
    `lanes` empty for a header-only RESULT (Element Count 0)."""
    flags = ((request_flags | collective_flags(collective, op)) & RESULT_KEEPS) | FLAG_RESULT
    return inagg(AGGREGATE, flags, job.job_id, worker, slot, copy, seq, lanes, block_exp=block_exp,
                 next_exp=max_exp, priority=owner >> 8, status=owner & 0xFF, reserved=getattr(job, "session", 0))


def owned_multicast(v, job, slot, copy, seq, lanes, max_exp, collective, owner, op=OP_SUM, block_exp=0,
                    request_flags=0):
    """A completed round to every worker: REDUCE_SCATTER's lanes to the Owner only, header-only to the others."""
    for w, h in enumerate(job.workers):
        mine = collective != REDUCE_SCATTER or w == owner
        v.expect(h, owned_result(job, w, slot, copy, seq, lanes if mine else [], max_exp, collective, owner, op,
                                 block_exp, request_flags))


def reduce_scatter():
    v = Vector("reduce_scatter", """
REDUCE_SCATTER (Flags bits 3-4 = 1): every worker contributes lanes, the sum goes with its lanes to the Owner (bytes
16-17) only, every other worker gets a header-only RESULT (Element Count 0, 20 bytes) that frees its slot. Round 1: the
owner (worker 2) contributes last; round 2: the owner (worker 0) first, a non-owner completes. Retransmissions of a
complete round are answered as its result was: with the lanes to the owner, header-only to anyone else (also when the
retransmission carries fewer lanes). The RESULT keeps the request's INT32 flag, collective, op and Owner, and the
job's session (3).""")
    w = [host(1), host(2), host(3)]
    job = Job(20, w, 2, 0, 4, 20, session=3)
    v.setup(job)
    v.comment("round 1 (slot 0, copy 0): owner 2 contributes last")
    v.send(w[0], owned(job, 0, 0, 0, 1, [1, -2, 3, 0x7FFFFFFF], REDUCE_SCATTER, 2, next_exp=1))
    v.send(w[1], owned(job, 1, 0, 0, 1, [10, -20, 30, 1], REDUCE_SCATTER, 2, next_exp=4))
    v.send(w[2], owned(job, 2, 0, 0, 1, [100, -200, 300, 0], REDUCE_SCATTER, 2, next_exp=-2))
    owned_multicast(v, job, 0, 0, 1, [111, -222, 333, wrap(0x7FFFFFFF + 1)], 4, REDUCE_SCATTER, 2)
    v.comment("round 2 (slot 1, copy 0, INT32): owner 0 contributes first, worker 1 completes")
    v.send(w[0], owned(job, 0, 1, 0, 2, [5, 6, 7, 8], REDUCE_SCATTER, 0, next_exp=-1, flags=FLAG_INT32))
    v.send(w[2], owned(job, 2, 1, 0, 2, [50, 60, 70, 80], REDUCE_SCATTER, 0, next_exp=-3, flags=FLAG_INT32))
    v.send(w[1], owned(job, 1, 1, 0, 2, [500, 600, 700, 800], REDUCE_SCATTER, 0, next_exp=-5, flags=FLAG_INT32))
    owned_multicast(v, job, 1, 0, 2, [555, 666, 777, 888], -1, REDUCE_SCATTER, 0, request_flags=FLAG_INT32)
    v.comment("round 1 retransmitted by its owner (worker 2): the sums, to worker 2 alone")
    v.send(w[2], owned(job, 2, 0, 0, 1, [100, -200, 300, 0], REDUCE_SCATTER, 2, next_exp=-2,
                       flags=FLAG_RETRANSMIT))
    v.expect(w[2], owned_result(job, 2, 0, 0, 1, [111, -222, 333, wrap(0x7FFFFFFF + 1)], 4, REDUCE_SCATTER, 2))
    v.comment("round 1 retransmitted by worker 0, not its owner: a header-only RESULT")
    v.send(w[0], owned(job, 0, 0, 0, 1, [1, -2, 3, 0x7FFFFFFF], REDUCE_SCATTER, 2, next_exp=1,
                       flags=FLAG_RETRANSMIT))
    v.expect(w[0], owned_result(job, 0, 0, 0, 1, [], 4, REDUCE_SCATTER, 2))
    v.comment("round 2 retransmitted by worker 2 with 2 lanes: header-only; by its owner with 2 lanes: the 4 sums")
    v.send(w[2], owned(job, 2, 1, 0, 2, [50, 60], REDUCE_SCATTER, 0, flags=FLAG_RETRANSMIT | FLAG_INT32))
    v.expect(w[2], owned_result(job, 2, 1, 0, 2, [], -1, REDUCE_SCATTER, 0, request_flags=FLAG_INT32))
    v.send(w[0], owned(job, 0, 1, 0, 2, [5, 6], REDUCE_SCATTER, 0, flags=FLAG_RETRANSMIT | FLAG_INT32))
    v.expect(w[0], owned_result(job, 0, 1, 0, 2, [555, 666, 777, 888], -1, REDUCE_SCATTER, 0,
                                request_flags=FLAG_INT32))
    v.counters(CONTRIBUTIONS=6, RESULTS_SENT=6, RETRANSMIT_REPLIES=4)
    return v


def all_gather():
    v = Vector("all_gather", """
ALL_GATHER (Flags bits 3-4 = 2): the Owner sends the lanes, every other worker a header-only contribution (Element Count
0) that only sets its bit and the count; the owner's lanes are written as they are, never added (whatever the op
says), and the result (the stored lanes, the round's lane count) goes to every worker, the owner included, even when
the last contribution is header-only. Round 0: owner 1 first, header-only last. Round 1: owner 1 last (op MAX is
ignored). Round 2: header-only first (it neither sets nor checks the round's lane count), then the owner (worker 0)
with 2 of the job's 4 lanes, header-only last. Lanes from a non-owner, or none from the owner: DROP_BAD_SIZE.
Retransmissions get the stored lanes, header-only or not.""")
    w = [host(1), host(2), host(3)]
    job = Job(21, w, 2, 4, 4, 21)
    v.setup(job)
    v.comment("round 0 (slot 0, copy 0): owner 1 first")
    v.send(w[1], owned(job, 1, 0, 0, 0, [7, -8, 0x7FFFFFFF, -2147483648], ALL_GATHER, 1, next_exp=2))
    v.comment("worker 0 sends lanes, owner 1 sends none: both DROP_BAD_SIZE")
    v.send(w[0], owned(job, 0, 0, 0, 0, [1, 1, 1, 1], ALL_GATHER, 1))
    v.send(w[1], owned(job, 1, 0, 0, 0, [], ALL_GATHER, 1))
    v.send(w[0], owned(job, 0, 0, 0, 0, [], ALL_GATHER, 1, next_exp=5))
    v.comment("worker 2's header-only contribution completes the round: the stored lanes to all three")
    v.send(w[2], owned(job, 2, 0, 0, 0, [], ALL_GATHER, 1, next_exp=-1))
    owned_multicast(v, job, 0, 0, 0, [7, -8, 0x7FFFFFFF, -2147483648], 5, ALL_GATHER, 1)
    v.comment("round 1 (slot 1, copy 0, op MAX ignored): header-only first, owner 1 last")
    v.send(w[0], owned(job, 0, 1, 0, 1, [], ALL_GATHER, 1, op=OP_MAX, flags=FLAG_INT32))
    v.send(w[2], owned(job, 2, 1, 0, 1, [], ALL_GATHER, 1, op=OP_MAX, flags=FLAG_INT32))
    v.send(w[1], owned(job, 1, 1, 0, 1, [-1, -2, -3, -4], ALL_GATHER, 1, op=OP_MAX, flags=FLAG_INT32))
    owned_multicast(v, job, 1, 0, 1, [-1, -2, -3, -4], 0, ALL_GATHER, 1, op=OP_MAX, request_flags=FLAG_INT32)
    v.comment("round 2 (slot 0, copy 1): header-only first, the owner (worker 0) with 2 lanes, header-only last")
    v.send(w[1], owned(job, 1, 0, 1, 2, [], ALL_GATHER, 0, next_exp=-4))
    v.send(w[0], owned(job, 0, 0, 1, 2, [42, -42], ALL_GATHER, 0, next_exp=-6))
    v.send(w[2], owned(job, 2, 0, 1, 2, [], ALL_GATHER, 0, next_exp=-5))
    owned_multicast(v, job, 0, 1, 2, [42, -42], -4, ALL_GATHER, 0)
    v.comment("retransmissions: header-only from worker 0 (round 0) and worker 2 (round 2), the owner's of round 1")
    v.send(w[0], owned(job, 0, 0, 0, 0, [], ALL_GATHER, 1, flags=FLAG_RETRANSMIT))
    v.expect(w[0], owned_result(job, 0, 0, 0, 0, [7, -8, 0x7FFFFFFF, -2147483648], 5, ALL_GATHER, 1))
    v.send(w[2], owned(job, 2, 0, 1, 2, [], ALL_GATHER, 0, flags=FLAG_RETRANSMIT))
    v.expect(w[2], owned_result(job, 2, 0, 1, 2, [42, -42], -4, ALL_GATHER, 0))
    v.send(w[1], owned(job, 1, 1, 0, 1, [-1, -2, -3, -4], ALL_GATHER, 1, op=OP_MAX,
                       flags=FLAG_INT32 | FLAG_RETRANSMIT))
    v.expect(w[1], owned_result(job, 1, 1, 0, 1, [-1, -2, -3, -4], 0, ALL_GATHER, 1, op=OP_MAX,
                                request_flags=FLAG_INT32))
    v.counters(CONTRIBUTIONS=9, RESULTS_SENT=9, RETRANSMIT_REPLIES=3, DROP_BAD_SIZE=2)
    return v


def broadcast():
    v = Vector("broadcast", """
A broadcast is an ALL_GATHER whose Owner is the root in every packet: root 3 of 4 workers sends its blocks, the others
header-only contributions; each block goes to all four, the root included. Block 0 (slot 0): the root second;
block 1 (slot 1): the root last; block 2 (slot 0, copy 1) while block 1 is still answered from its copy.""")
    w = [host(1), host(2), host(3), host(4)]
    job = Job(22, w, 2, 0, 3, 22)
    v.setup(job)
    root = 3
    v.send(w[0], owned(job, 0, 0, 0, 10, [], ALL_GATHER, root))
    v.send(w[root], owned(job, root, 0, 0, 10, [1, 2, 3], ALL_GATHER, root, next_exp=3))
    v.send(w[2], owned(job, 2, 0, 0, 10, [], ALL_GATHER, root))
    v.send(w[1], owned(job, 1, 0, 0, 10, [], ALL_GATHER, root))
    owned_multicast(v, job, 0, 0, 10, [1, 2, 3], 3, ALL_GATHER, root)
    v.send(w[1], owned(job, 1, 1, 0, 11, [], ALL_GATHER, root))
    v.send(w[2], owned(job, 2, 1, 0, 11, [], ALL_GATHER, root))
    v.send(w[0], owned(job, 0, 1, 0, 11, [], ALL_GATHER, root))
    v.send(w[root], owned(job, root, 1, 0, 11, [-4, -5, -6], ALL_GATHER, root))
    owned_multicast(v, job, 1, 0, 11, [-4, -5, -6], 0, ALL_GATHER, root)
    v.send(w[root], owned(job, root, 0, 1, 12, [7, 8, 9], ALL_GATHER, root))
    v.send(w[2], owned(job, 2, 1, 0, 11, [], ALL_GATHER, root, flags=FLAG_RETRANSMIT))
    v.expect(w[2], owned_result(job, 2, 1, 0, 11, [-4, -5, -6], 0, ALL_GATHER, root))
    v.send(w[0], owned(job, 0, 0, 1, 12, [], ALL_GATHER, root))
    v.send(w[1], owned(job, 1, 0, 1, 12, [], ALL_GATHER, root))
    v.send(w[2], owned(job, 2, 0, 1, 12, [], ALL_GATHER, root))
    owned_multicast(v, job, 0, 1, 12, [7, 8, 9], 0, ALL_GATHER, root)
    v.counters(CONTRIBUTIONS=12, RESULTS_SENT=12, RETRANSMIT_REPLIES=1)
    return v


INT_MIN, INT_MAX = -2147483648, 0x7FFFFFFF


def reduce_min_max():
    v = Vector("reduce_min_max", """
Reduce ops MIN and MAX (Flags bits 5-6 = 1, 2): signed int32 minimum and maximum, negative numbers and both ends of
the range included; the first contribution stores its lanes, each later one is combined. All-reduce MIN (round 0),
all-reduce MAX (round 1, another copy), a retransmission of the MIN round (the stored minima), and a REDUCE_SCATTER
MAX whose maxima go to the owner (worker 1) only.""")
    w = [host(1), host(2), host(3)]
    job = Job(23, w, 2, 0, 4, 23)
    v.setup(job)
    v.comment("round 0: all-reduce MIN")
    v.send(w[0], owned(job, 0, 0, 0, 0, [5, -3, INT_MAX, INT_MIN], ALL_REDUCE, 0, op=OP_MIN, next_exp=1))
    v.send(w[1], owned(job, 1, 0, 0, 0, [-7, 2, -1, 0], ALL_REDUCE, 0, op=OP_MIN, next_exp=2))
    v.send(w[2], owned(job, 2, 0, 0, 0, [0, -3, 100, 5], ALL_REDUCE, 0, op=OP_MIN, next_exp=-1))
    owned_multicast(v, job, 0, 0, 0, [-7, -3, -1, INT_MIN], 2, ALL_REDUCE, 0, op=OP_MIN)
    v.comment("round 1 (copy 1): all-reduce MAX of negative numbers")
    v.send(w[2], owned(job, 2, 0, 1, 1, [-6, -4, INT_MIN, 0], ALL_REDUCE, 0, op=OP_MAX, flags=FLAG_INT32))
    v.send(w[0], owned(job, 0, 0, 1, 1, [-5, -1, INT_MIN, 3], ALL_REDUCE, 0, op=OP_MAX, flags=FLAG_INT32))
    v.send(w[1], owned(job, 1, 0, 1, 1, [-7, -2, INT_MIN + 1, -3], ALL_REDUCE, 0, op=OP_MAX, flags=FLAG_INT32))
    owned_multicast(v, job, 0, 1, 1, [-5, -1, INT_MIN + 1, 3], 0, ALL_REDUCE, 0, op=OP_MAX,
                    request_flags=FLAG_INT32)
    v.comment("worker 1 retransmits the MIN round: the stored minima")
    v.send(w[1], owned(job, 1, 0, 0, 0, [-7, 2, -1, 0], ALL_REDUCE, 0, op=OP_MIN, flags=FLAG_RETRANSMIT))
    v.expect(w[1], owned_result(job, 1, 0, 0, 0, [-7, -3, -1, INT_MIN], 2, ALL_REDUCE, 0, op=OP_MIN))
    v.comment("round 2 (slot 1): REDUCE_SCATTER MAX, owner 1")
    v.send(w[0], owned(job, 0, 1, 0, 2, [INT_MIN, -1, 7, -9], REDUCE_SCATTER, 1, op=OP_MAX))
    v.send(w[1], owned(job, 1, 1, 0, 2, [INT_MIN, -2, INT_MAX, -8], REDUCE_SCATTER, 1, op=OP_MAX))
    v.send(w[2], owned(job, 2, 1, 0, 2, [INT_MIN, -3, -7, -10], REDUCE_SCATTER, 1, op=OP_MAX))
    owned_multicast(v, job, 1, 0, 2, [INT_MIN, -1, INT_MAX, -8], 0, REDUCE_SCATTER, 1, op=OP_MAX)
    v.counters(CONTRIBUTIONS=9, RESULTS_SENT=9, RETRANSMIT_REPLIES=1)
    return v


def collective_unsupported():
    v = Vector("collective_unsupported", """
The reserved values: collective 3 and op 3 (either or both, with any owner) are dropped and counted DROP_UNSUPPORTED
(inagg_counters[25]) before they touch the slot; Flags bit 7 set makes an AGGREGATE malformed. The round then
completes with the valid contributions only.""")
    w = [host(1), host(2)]
    job = Job(24, w, 2, 0, 2, 24)
    v.setup(job)
    v.send(w[0], owned(job, 0, 0, 0, 3, [1000, 1000], 3, 0))
    v.send(w[0], owned(job, 0, 0, 0, 3, [2000, 2000], ALL_REDUCE, 0, op=3))
    v.send(w[1], owned(job, 1, 0, 0, 3, [3000, 3000], 3, 1, op=3))
    v.send(w[1], owned(job, 1, 0, 0, 3, [4000, 4000], REDUCE_SCATTER, 1, op=3))
    v.send(w[1], owned(job, 1, 0, 0, 3, [5000, 5000], ALL_GATHER, 1, op=3))
    v.comment("Flags bit 7 (reserved): malformed")
    v.send(w[0], owned(job, 0, 0, 0, 3, [6000, 6000], ALL_REDUCE, 0, flags=FLAG_RESERVED))
    v.send(w[0], owned(job, 0, 0, 0, 3, [1, 2], ALL_REDUCE, 0))
    v.send(w[1], owned(job, 1, 0, 0, 3, [3, 4], ALL_REDUCE, 0))
    owned_multicast(v, job, 0, 0, 3, [4, 6], 0, ALL_REDUCE, 0)
    v.counters(DROP_UNSUPPORTED=5, DROP_MALFORMED=1, CONTRIBUTIONS=2, RESULTS_SENT=2)
    return v


def collective_owner_out_of_range():
    v = Vector("collective_owner_out_of_range", """
The Owner (bytes 16-17) of a REDUCE_SCATTER or ALL_GATHER must be below the job's worker count: owners 2 (= W),
0x0100 and 0xFFFF are dropped as DROP_UNKNOWN_WORKER (also a retransmission of a complete round). An ALL_REDUCE's
Priority and Status are not an owner (Priority 0xFF is no fault).""")
    w = [host(1), host(2)]
    job = Job(25, w, 2, 0, 2, 25)
    v.setup(job)
    v.send(w[0], owned(job, 0, 0, 0, 0, [1, 1], REDUCE_SCATTER, 2))
    v.send(w[1], owned(job, 1, 0, 0, 0, [], ALL_GATHER, 0x0100))
    v.send(w[0], owned(job, 0, 0, 0, 0, [1, 1], ALL_GATHER, 0xFFFF))
    v.comment("a REDUCE_SCATTER round with owner 1 completes")
    v.send(w[0], owned(job, 0, 0, 0, 0, [1, 2], REDUCE_SCATTER, 1))
    v.send(w[1], owned(job, 1, 0, 0, 0, [3, 4], REDUCE_SCATTER, 1))
    owned_multicast(v, job, 0, 0, 0, [4, 6], 0, REDUCE_SCATTER, 1)
    v.comment("its retransmission naming owner 2: dropped, not answered")
    v.send(w[1], owned(job, 1, 0, 0, 0, [3, 4], REDUCE_SCATTER, 2, flags=FLAG_RETRANSMIT))
    v.comment("ALL_REDUCE with Priority 0xFF and Status 0x07 (owner bytes 0xFF07): aggregated as before")
    v.send(w[0], owned(job, 0, 1, 0, 1, [5, 5], ALL_REDUCE, 0xFF07))
    v.send(w[1], owned(job, 1, 1, 0, 1, [6, 6], ALL_REDUCE, 0xFF07))
    owned_multicast(v, job, 1, 0, 1, [11, 11], 0, ALL_REDUCE, 0xFF07)
    v.counters(DROP_UNKNOWN_WORKER=4, CONTRIBUTIONS=4, RESULTS_SENT=4)
    return v


def unsupported(job, worker, collective, op=OP_SUM):
    """The REJECT UNSUPPORTED_COLLECTIVE a P4 program answers an admitted AGGREGATE with (InaggHeader.writeReject):
    Flags = RESULT and the AGGREGATE's collective and op (not its INT32 flag), no lanes, the job's session."""
    return inagg(REJECT, FLAG_RESULT | collective_flags(collective, op), job.job_id, worker,
                 status=UNSUPPORTED_COLLECTIVE, reserved=getattr(job, "session", 0))


def upstream_collective_unsupported():
    v = Vector("upstream_collective_unsupported", """
Two-level jobs carry ALL_REDUCE SUM only in the P4 programs (they send sums up): REDUCE_SCATTER, ALL_GATHER, MIN and
MAX are dropped, counted DROP_UNSUPPORTED and answered to their sender with REJECT UNSUPPORTED_COLLECTIVE (Flags =
RESULT | the collective and op, no lanes, the job's session 7), so that the worker fails at once. A reserved op is
dropped unanswered (no node carries it); a stranger's packet for worker 0 is a source mismatch first (no answer).
The ALL_REDUCE SUM round's PARTIAL goes to the server as before.""")
    local = {0: host(1), 1: host(2)}
    stranger = host(66, port=7)
    job = UpstreamJob(42, 3, local, host(9), 2, 0, 2, session=7)
    upstream_setup(v, job)
    v.send(local[0], owned(job, 0, 0, 0, 1, [1, 1], REDUCE_SCATTER, 0))
    v.expect(local[0], unsupported(job, 0, REDUCE_SCATTER))
    v.send(local[1], owned(job, 1, 0, 0, 1, [], ALL_GATHER, 0))
    v.expect(local[1], unsupported(job, 1, ALL_GATHER))
    v.send(local[0], owned(job, 0, 0, 0, 1, [1, 1], ALL_REDUCE, 0, op=OP_MIN, flags=FLAG_INT32))
    v.expect(local[0], unsupported(job, 0, ALL_REDUCE, OP_MIN))
    v.send(local[1], owned(job, 1, 0, 0, 1, [1, 1], REDUCE_SCATTER, 0, op=OP_MAX))
    v.expect(local[1], unsupported(job, 1, REDUCE_SCATTER, OP_MAX))
    v.comment("a reserved op (3): dropped unanswered; a stranger's REDUCE_SCATTER for worker 0: source mismatch")
    v.send(local[0], owned(job, 0, 0, 0, 1, [1, 1], REDUCE_SCATTER, 0, op=3))
    v.send(stranger, owned(job, 0, 0, 0, 1, [1, 1], REDUCE_SCATTER, 0))
    v.send(local[0], contribution(job, 0, 0, 0, 1, [1, 2]))
    v.send(local[1], contribution(job, 1, 0, 0, 1, [3, 4]))
    v.expect(job.server, upstream_partial(job, 0, 0, 1, [4, 6], 0, 0, 0, 0))
    v.counters(DROP_UNSUPPORTED=5, DROP_SOURCE_MISMATCH=1, CONTRIBUTIONS=2, UPSTREAM_PARTIALS=1)
    return v


def esa_collective_unsupported():
    v = Vector("esa_collective_unsupported", """
The P4 programs' ESA jobs carry ALL_REDUCE SUM only: a REDUCE_SCATTER, an ALL_GATHER (header-only) and a MIN of job 2
are dropped and counted DROP_UNSUPPORTED (EsaCounter 325, inagg_counters[25] in the P4 programs) before they touch an
aggregator, and answered to their sender with REJECT UNSUPPORTED_COLLECTIVE (Flags = RESULT | the collective and op,
no lanes, the job's session 0). Dropped unanswered, counted the same: a packet the worker checks would not admit (a
stranger claiming worker 0, worker id 2 of 2, another session) and a reserved collective. The SUM block then
allocates aggregator 3 and completes as in esa_completion.""")
    a, b = esa_hosts()
    pool = EsaPool(8, 4, MODE_ESA, True)
    esa_setup(v, pool, a, b)
    stranger = host(66, port=7)
    v.send(b.workers[0], inagg(AGGREGATE, collective_flags(REDUCE_SCATTER), 2, 0, 5, 0, 5, [1, 2, 3, 4]))
    v.expect(b.workers[0], unsupported(b, 0, REDUCE_SCATTER))
    v.send(b.workers[1], inagg(AGGREGATE, collective_flags(ALL_GATHER), 2, 1, 5, 0, 5, []))
    v.expect(b.workers[1], unsupported(b, 1, ALL_GATHER))
    v.send(b.workers[1], inagg(AGGREGATE, collective_flags(ALL_REDUCE, OP_MIN), 2, 1, 5, 0, 5, [1, 2, 3, 4]))
    v.expect(b.workers[1], unsupported(b, 1, ALL_REDUCE, OP_MIN))
    v.comment("not answered: a stranger as worker 0, worker id 2, session 9, a reserved collective")
    v.send(stranger, inagg(AGGREGATE, collective_flags(REDUCE_SCATTER), 2, 0, 5, 0, 5, [1, 2, 3, 4]))
    v.send(b.workers[1], inagg(AGGREGATE, collective_flags(REDUCE_SCATTER), 2, 2, 5, 0, 5, [1, 2, 3, 4]))
    v.send(b.workers[0], inagg(AGGREGATE, collective_flags(REDUCE_SCATTER), 2, 0, 5, 0, 5, [1, 2, 3, 4],
                               reserved=9))
    v.send(b.workers[0], inagg(AGGREGATE, collective_flags(3), 2, 0, 5, 0, 5, [1, 2, 3, 4]))
    v.send(b.workers[0], agg(b, 0, 5, 0, 5, [1, 2, 3, 4], next_exp=1))
    v.send(b.workers[1], agg(b, 1, 5, 0, 5, [10, 20, 30, 40], next_exp=2))
    esa_results(v, b, 5, 0, 5, [11, 22, 33, 44], 2, 0, 0, 0)
    v.expect(b.server, partial(b, 5, 0, 5, [11, 22, 33, 44], [0b11], 0, 0, 2, 0, COMPLETE))
    v.counters(DROP_UNSUPPORTED=7, ALLOCATIONS=1, CONTRIBUTIONS=2, COMPLETIONS=1, RESULTS_SENT=2, RESULT_COPIES=1)
    return v


def main():
    for make in (aggregate_to_completion, duplicates, retransmission_after_completion, shadow_copy_reuse,
                 stale_late_duplicates, multi_job_isolation, spoofing, unknown_job_and_worker, bad_sizes,
                 esa_completion, esa_preemption, esa_collision_fallback, esa_tombstone, esa_retransmit_flush,
                 esa_same_job_newer_block, esa_job_table_priority, esa_atp, upstream_completion,
                 upstream_retransmit_forward, upstream_foreign_worker, malformed_headers, stale_and_foreign_senders,
                 shadow_copy_retransmit, upstream_two_level, esa_preemption_release, sessions,
                 join_credential_security, reduce_scatter, all_gather, broadcast, reduce_min_max,
                 collective_unsupported, collective_owner_out_of_range, upstream_collective_unsupported,
                 esa_collective_unsupported):
        make().write()

if __name__ == "__main__":
    main()
