#!/usr/bin/env python3
"""Runs inagg conformance vectors (p4/src/test/vectors/*.stf, format in its README.md) on bmv2 simple_switch.

For each vector: write every `packet` into per-port input pcap files (timestamps in file order), start a fresh
simple_switch in pcap-file mode with a start delay, push the setup lines through simple_switch_CLI during that delay,
let it process the packets, stop it, and compare each port's output pcap with the vector's `expect` lines, byte for
byte and in order. `softswitch_counter` lines are for the software switch only and are skipped here.

Usage: bmv2_vectors.py --json inagg_v1model.json [--start-delay S] VECTOR.stf...
Standard library only.
"""
import argparse
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

PCAP_HEADER = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)


def read_vector(path):
    setup, packets, expected = [], [], {}
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
            continue
        else:
            setup.append(line)
    return setup, packets, expected


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


def run_vector(path, json_file, start_delay, keep):
    name = os.path.basename(path)
    setup, packets, expected = read_vector(path)
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
                "--thrift-port", str(thrift)]
        for port in ports:
            args += ["-i", "%d@pcap%d" % (port, port)]
        args.append(os.path.abspath(json_file))
        switch = subprocess.Popen(args, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        started = time.time()
        try:
            if not wait_for_thrift(thrift, switch):
                print("FAIL %s: simple_switch did not start (see %s)" % (name, folder))
                keep = True
                return False
            cli = subprocess.run(["simple_switch_CLI", "--thrift-port", str(thrift)], input="\n".join(setup) + "\n",
                                 capture_output=True, text=True, timeout=60)
            if time.time() - started > start_delay:
                print("FAIL %s: the setup took longer than the start delay (%ss); raise --start-delay" % (name, start_delay))
                return False
            errors = [line for line in cli.stdout.splitlines() if "Error" in line or "Invalid" in line]
            if cli.returncode != 0 or errors:
                print("FAIL %s: simple_switch_CLI rejected the setup:\n  %s" % (name, "\n  ".join(errors or [cli.stderr])))
                return False
            time.sleep(max(0.0, start_delay - (time.time() - started)) + 2.0 + 0.01 * len(packets))
        finally:
            switch.terminate()
            switch.wait()
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
    parser.add_argument("--start-delay", type=int, default=5, help="seconds bmv2 waits before reading the pcaps")
    parser.add_argument("--keep", action="store_true", help="keep every work folder")
    parser.add_argument("vectors", nargs="+")
    options = parser.parse_args()
    failed = [v for v in options.vectors if not run_vector(v, options.json, options.start_delay, options.keep)]
    print("%d of %d vectors passed on bmv2" % (len(options.vectors) - len(failed), len(options.vectors)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
