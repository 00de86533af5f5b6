#!/usr/bin/env python3
"""Runs inagg conformance vectors (p4/src/test/vectors/*.stf, format in its README.md) on bmv2 simple_switch.

For each vector: write every `packet` into per-port input pcap files (timestamps in file order), start a fresh
simple_switch in pcap-file mode with a start delay, push the setup lines through simple_switch_CLI during that delay,
wait for evidence that it processed every packet, read its counters, stop it, and compare each port's output pcap with
the vector's `expect` lines, byte for byte and in order.

Waiting is on evidence, never on a sleep tuned to one machine: simple_switch logs each packet it takes from an input
pcap and each frame it transmits; the run waits (up to --timeout seconds) until every input packet was taken, at least
the expected number of frames went out, and the log has been quiet for a moment (so extra frames show up too). The
log also proves the setup finished before the first packet was read (simple_switch's start delay only begins after
it has loaded the JSON, so the delay is not measured from the process start); if it did not, the vector is run again
with twice the start delay (up to three runs), since that says nothing about the program.

`softswitch_counter NAME VALUE` lines are checked here too when the P4 program has the counter: both targets count
every outcome under the same name. The P4 program keeps a SwitchCounter NAME at index `C_NAME` (type id - 200) and an
EsaCounter NAME at index `E_NAME` (type id - 300), both read from inagg_v1model.p4; a C_ index is counted in
`InaggIngress.inagg_counters` and, for what egress counts (one per replica: RESULTS_SENT), `InaggEgress.egress_counters`;
an E_ index in `InaggIngress.esa_counters` and `InaggEgress.esa_egress_counters`. The value of NAME on bmv2 is the sum of
all of them. That is one switch's count whatever the vector holds: a slot-protocol vector counts nothing in the ESA
arrays (only ESA jobs do), and an ESA vector counts in the C_ arrays only what the switch counts before it knows the
job's mode (RECEIVED, DROP_MALFORMED, DROP_UNKNOWN_JOB, a JOIN for an unknown job), which EsaSwitch counts under the
same names. Names the P4 program does not keep must be software-only (TX_FULL, the byte counters): any other fails the
vector.

Usage: bmv2_vectors.py --json inagg_v1model.json --p4 inagg_v1model.p4 [--start-delay S] [--timeout S] VECTOR.stf...
Standard library only.
"""
import argparse
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

PCAP_HEADER = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)


def read_vector(path):
    setup, packets, expected, counters = [], [], {}, {}
    for raw in open(path):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if words[0] == "packet":
            packets.append((int(words[1]), bytes.fromhex("".join(words[2:]))))
        elif words[0] == "expect":
            expected.setdefault(int(words[1]), []).append("".join(words[2:]).upper())
        elif words[0] == "softswitch_counter":
            counters[words[1]] = int(words[2])
        else:
            setup.append(line)
    return setup, packets, expected, counters


# Counters only the software switches keep (transport back-pressure, bytes); every other name a vector states must be
# one the P4 program keeps.
SOFTWARE_ONLY_COUNTERS = {"TX_FULL", "FALLBACK_BYTES", "RESULT_COPY_BYTES"}

# The counter arrays of each index kind: C_ (SwitchCounter type id - 200), E_ (EsaCounter type id - 300).
COUNTER_ARRAYS = {"C": ("InaggIngress.inagg_counters", "InaggEgress.egress_counters"),
                  "E": ("InaggIngress.esa_counters", "InaggEgress.esa_egress_counters")}


def read_counter_indices(p4_file, json_file):
    """Counter name -> [(counter array, index), ...] from the C_* and E_* constants of the P4 program, over the arrays
    of COUNTER_ARRAYS that the compiled program has; a name's value is the sum of all its cells."""
    present = {array["name"] for array in json.load(open(json_file)).get("counter_arrays", [])}
    cells = {}
    for match in re.finditer(r"const\s+bit<32>\s+([CE])_([A-Z0-9_]+)\s*=\s*(\d+)\s*;", open(p4_file).read()):
        kind, name, index = match.group(1), match.group(2), int(match.group(3))
        cells.setdefault(name, []).extend((array, index) for array in COUNTER_ARRAYS[kind] if array in present)
    return cells


def read_counters(thrift, wanted):
    """Reads {name: [(array, index), ...]} through simple_switch_CLI; returns {name: packets summed over the cells}."""
    cells = sorted({cell for name in wanted for cell in wanted[name]})
    commands = "\n".join("counter_read %s %d" % cell for cell in cells) + "\n"
    cli = subprocess.run(["simple_switch_CLI", "--thrift-port", str(thrift)], input=commands, capture_output=True,
                         text=True, timeout=60)
    read = {}
    for array, index in cells:
        match = re.search(r"%s\[%d\]=\s*\(\d+ bytes, (\d+) packets\)" % (re.escape(array), index), cli.stdout)
        read[(array, index)] = int(match.group(1)) if match else None
    values = {}
    for name in sorted(wanted):
        parts = [read[cell] for cell in wanted[name]]
        values[name] = None if None in parts else sum(parts)
    return values


def log_lines(path):
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def wait_for_evidence(folder, log_path, ports, packets, expected_frames, switch, timeout, quiet=0.3):
    """Waits until every input packet was taken, at least the expected frames were sent and the log is quiet.
    Returns None, or why the wait ended without that evidence."""
    deadline = time.time() + timeout
    last_size, last_change = -1, time.time()
    while time.time() < deadline:
        if switch.poll() is not None:
            return "simple_switch exited with status %d" % switch.returncode
        size = os.path.getsize(log_path) if os.path.exists(log_path) else 0
        if size != last_size:
            last_size, last_change = size, time.time()
        taken = sum(1 for line in log_lines(log_path) if "Processing packet received on port" in line)
        sent = sum(len(read_pcap(os.path.join(folder, "pcap%d_out.pcap" % port))) for port in ports)
        if taken >= packets and sent >= expected_frames and time.time() - last_change >= quiet:
            return None
        time.sleep(0.05)
    return ("no evidence after %ss: %d of %d packets taken, %d of %d frames sent"
            % (timeout, taken, packets, sent, expected_frames))


def setup_raced_packets(log_path):
    """True if a runtime call (setup) was logged after the first packet was taken."""
    seen_packet = False
    for line in log_lines(log_path):
        if "Processing packet received on port" in line:
            seen_packet = True
        elif seen_packet and "] bm_" in line:
            return True
    return False


def write_pcaps(folder, packets, ports):
    files = {port: open(os.path.join(folder, "pcap%d_in.pcap" % port), "wb") for port in ports}
    for f in files.values():
        f.write(PCAP_HEADER)
    for n, (port, data) in enumerate(packets):
        micros = 1000 * (n + 1)
        files[port].write(struct.pack("<IIII", micros // 1000000, micros % 1000000, len(data), len(data)) + data)
    for f in files.values():
        f.close()


def read_pcap(path):
    frames = []
    if not os.path.exists(path):
        return frames
    data = open(path, "rb").read()
    if len(data) < 24:
        return frames
    offset = 24
    while offset + 16 <= len(data):
        incl = struct.unpack("<IIII", data[offset:offset + 16])[2]
        frames.append(data[offset + 16:offset + 16 + incl].hex().upper())
        offset += 16 + incl
    return frames


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_thrift(port, process, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if process.poll() is not None:
            return False
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.1)
    return False


RACED = "raced"    # run_vector's answer when the setup was not complete before the first packet


def run_vector(path, json_file, counter_indices, start_delay, timeout, keep):
    """True (pass), False (fail) or RACED (no verdict: run it again with a longer start delay)."""
    name = os.path.basename(path)
    setup, packets, expected, counters = read_vector(path)
    checked_counters = {n: counter_indices[n] for n in counters if counter_indices.get(n)}
    unknown = sorted(n for n in counters if n not in checked_counters and n not in SOFTWARE_ONLY_COUNTERS)
    if unknown:
        print("FAIL %s: the P4 program keeps no counter %s (no C_/E_ constant counted in %s)"
              % (name, ", ".join(unknown), ", ".join(a for arrays in COUNTER_ARRAYS.values() for a in arrays)))
        return False
    # Every port a packet, an expect or a multicast node names (a server's port too): a frame the switch sends to a
    # port nobody expects must show up in that port's pcap, not vanish for want of an interface.
    node_ports = {int(line.split()[2]) for line in setup if line.startswith("mc_node_create ")}
    # an upstream job's server port (set_upstream_job: ... => workers slots base lanes contributors server_port ...)
    node_ports |= {int(line.split()[10]) for line in setup if " InaggIngress.set_upstream_job " in line}
    ports = sorted({port for port, _ in packets} | set(expected) | node_ports)
    folder = tempfile.mkdtemp(prefix="inagg-bmv2-")
    try:
        write_pcaps(folder, packets, ports)
        thrift = free_port()
        args = ["simple_switch", "--log-file", "switch", "--log-flush", "--use-files", str(start_delay),
                "--thrift-port", str(thrift),
                # its own notification socket: the default ipc:///tmp/bmv2-0-notifications.ipc admits one switch
                "--notifications-addr", "ipc://%s" % os.path.join(folder, "notifications.ipc")]
        for port in ports:
            args += ["-i", "%d@pcap%d" % (port, port)]
        args.append(os.path.abspath(json_file))
        switch = subprocess.Popen(args, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        log_path = os.path.join(folder, "switch.txt")
        try:
            if not wait_for_thrift(thrift, switch):
                print("FAIL %s: simple_switch did not start (see %s)" % (name, folder))
                keep = True
                return False
            cli = subprocess.run(["simple_switch_CLI", "--thrift-port", str(thrift)], input="\n".join(setup) + "\n",
                                 capture_output=True, text=True, timeout=60)
            errors = [line for line in cli.stdout.splitlines() if "Error" in line or "Invalid" in line]
            if cli.returncode != 0 or errors:
                print("FAIL %s: simple_switch_CLI rejected the setup:\n  %s" % (name, "\n  ".join(errors or [cli.stderr])))
                return False
            expected_frames = sum(len(frames) for frames in expected.values())
            why = wait_for_evidence(folder, log_path, ports, len(packets), expected_frames, switch,
                                    timeout + start_delay)
            if setup_raced_packets(log_path):
                # Not a verdict on the program: the setup took longer than the start delay (a loaded machine).
                print("RETRY %s: simple_switch read packets before the setup was complete (start delay %ss)"
                      % (name, start_delay))
                return RACED
            got_counters = read_counters(thrift, checked_counters) if checked_counters and why is None else {}
        finally:
            switch.terminate()
            switch.wait()
        if why is not None:
            print("FAIL %s: %s (log and pcaps in %s)" % (name, why, folder))
            keep = True
            return False
        ok = True
        for port in ports:
            got = read_pcap(os.path.join(folder, "pcap%d_out.pcap" % port))
            want = expected.get(port, [])
            if got != want:
                ok = False
                print("FAIL %s: port %d sent %d frames, expected %d" % (name, port, len(got), len(want)))
                for i in range(max(len(got), len(want))):
                    g = got[i] if i < len(got) else "(none)"
                    w = want[i] if i < len(want) else "(none)"
                    if g != w:
                        print("  frame %d\n    got      %s\n    expected %s" % (i, g, w))
        for counter_name in sorted(got_counters):
            if got_counters[counter_name] != counters[counter_name]:
                ok = False
                print("FAIL %s: counter %s is %s on bmv2, expected %d" % (name, counter_name, got_counters[counter_name],
                                                                      counters[counter_name]))
        if not ok:
            keep = True
        print("%s %s" % ("PASS" if ok else "FAIL", name) + ("" if ok else " (log and pcaps in %s)" % folder))
        return ok
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", required=True, help="inagg_v1model.json from p4c-bm2-ss")
    parser.add_argument("--p4", required=True, help="inagg_v1model.p4 (its C_* and E_* counter indices)")
    parser.add_argument("--start-delay", type=int, default=3,
                        help="seconds simple_switch waits, after loading the JSON, before reading the pcaps")
    parser.add_argument("--timeout", type=int, default=120, help="seconds to wait for the evidence of a finished run")
    parser.add_argument("--keep", action="store_true", help="keep every work folder")
    parser.add_argument("vectors", nargs="+")
    options = parser.parse_args()
    indices = read_counter_indices(options.p4, options.json)
    failed = []
    for vector in options.vectors:
        delay, result = options.start_delay, RACED
        for _ in range(3):
            result = run_vector(vector, options.json, indices, delay, options.timeout, options.keep)
            if result is not RACED:
                break
            delay *= 2
        if result is RACED:
            print("FAIL %s: the setup raced the packets three times (last start delay %ss)"
                  % (os.path.basename(vector), delay // 2))
        if result is not True:
            failed.append(vector)
    print("%d of %d vectors passed on bmv2" % (len(options.vectors) - len(failed), len(options.vectors)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
