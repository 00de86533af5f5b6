"""Two emulated hosts on this box: two agents (distinct names and sockets) as the two workers of a software-switch
job, two ranks each (INAGG_HOST_ID tells the ranks apart as hosts)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time

import pytest

from conftest import LAUNCHER, SHM, Agent, assert_ok, free_port, run_ranks


@pytest.fixture()
def switch_port():
    port = free_port(socket.SOCK_DGRAM)
    log = SHM / f"inagg-test-switch-{os.getpid()}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([str(LAUNCHER), "switch", "--bind", f"127.0.0.1:{port}", "--job", "1:2",
                                    "--counters-dir", str(SHM / f"inagg-test-counters-{os.getpid()}")],
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while "listening" not in log.read_text(errors="replace"):
            assert process.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.1)
        yield port
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
        log.unlink(missing_ok=True)


def test_two_hosts_through_the_switch_match_the_exact_sum_within_the_fixed_point_bound(switch_port):
    host_a = Agent("host-a", "--switch", f"127.0.0.1:{switch_port}")
    host_b = Agent("host-b", "--switch", f"127.0.0.1:{switch_port}")
    try:
        env_of = {r: {"INAGG_HOST_ID": "a" if r < 2 else "b",
                      "INAGG_AGENT": str((host_a if r < 2 else host_b).socket), "INAGG_SWITCH_JOB": "1"}
                  for r in range(4)}
        assert_ok(run_ranks("multihost", 4, env_of=env_of, timeout=150))
        assert "2 host(s)" in host_a.log_text() and "2 host(s)" in host_b.log_text()
    finally:
        host_a.stop()
        host_b.stop()
