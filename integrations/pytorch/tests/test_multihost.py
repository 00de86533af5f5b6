"""Two emulated hosts on this box: two agents (distinct names and sockets) as the two workers of a software-switch
job, two ranks each (INAGG_HOST_ID tells the ranks apart as hosts)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import json
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import LAUNCHER, SHM, Agent, assert_ok, free_port, run_ranks, stop


@pytest.fixture()
def switch_port():
    port = free_port(socket.SOCK_DGRAM)
    log = SHM / f"inagg-test-switch-{os.getpid()}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([str(LAUNCHER), "switch", "--bind", f"127.0.0.1:{port}", "--job", "1:2", "--open",
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
        switch_log = SHM / f"inagg-test-switch-{os.getpid()}.log"
        assert_ok(run_ranks("multihost,fsdp", 4, env_of=env_of, timeout=200),  # FSDP2 across the hosts too
                  logs=(host_a.log, host_b.log, switch_log))
        assert "2 host(s)" in host_a.log_text() and "2 host(s)" in host_b.log_text()
    finally:
        host_a.stop()
        host_b.stop()


@pytest.mark.parametrize("option, values", [
    ("--network-chunk-bytes", ("4096", "0")),  # the chunks of each host must match packet for packet at the switch
    ("--slot-bytes", ("65536", "131072")),  # the ranks cut tensors into rounds of a slot each
])
def test_hosts_whose_agents_differ_in_a_setting_they_must_share_are_refused_on_every_rank(switch_port, option, values):
    """A setting every host's agent must share, different on the two hosts: each rank's process group is refused when
    it is made, naming the option, both values and the hosts, within seconds (not after the agents' peer timeout)."""
    hosts = []
    try:
        for name, value in zip(("host-a", "host-b"), values):
            extra = ["--switch", f"127.0.0.1:{switch_port}", "--peer-timeout-ms", "20000", option, value]
            if option == "--network-chunk-bytes":
                extra += ["--chunk-bytes", "4096"]
            hosts.append(Agent(name, *extra))
        env_of = {r: {"INAGG_HOST_ID": "ab"[r // 2], "INAGG_AGENT": str(hosts[r // 2].socket),
                      "INAGG_SWITCH_JOB": "1", "INAGG_TEST_SETTING": option, "INAGG_TEST_VALUES": ",".join(values)}
                  for r in range(4)}
        started = time.monotonic()
        results = run_ranks("settings_differ", 4, env_of=env_of, timeout=90)
        assert_ok(results, logs=tuple(h.log for h in hosts))
        assert time.monotonic() - started < 60
    finally:
        for h in hosts:
            h.stop()


def start(name: str, args: list, ready: str, env: dict | None = None):
    """A `bin/inagg` service of the test; returns (process, log path) once its log says ``ready``."""
    log = SHM / f"inagg-test-{name}-{os.getpid()}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([str(LAUNCHER), *args], stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True, env={**os.environ, **(env or {})})
    deadline = time.monotonic() + 60
    while ready not in log.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            stop(process, log)
            raise RuntimeError(f"{name} did not start: {log.read_text(errors='replace')}")
        time.sleep(0.1)
    return process, log


@pytest.fixture()
def controller(tmp_path):
    """A software switch with no job of its own and a controller that programs it through its control port."""
    data, control, http = free_port(socket.SOCK_DGRAM), free_port(), free_port()
    switch = start("ctl-switch", ["switch", "--bind", f"127.0.0.1:{data}", "--control", f"127.0.0.1:{control}",
                                  "--counters-dir", str(tmp_path)],
                   "listening")
    try:
        ctl = start("controller", ["controller", "--bind", f"127.0.0.1:{http}", "--switch-control",
                                   f"http://127.0.0.1:{control}", "--journal", str(tmp_path / "journal")],
                    "listening", env={"INAGG_OPERATOR_TOKEN": OPERATOR_TOKEN})
        try:
            yield f"http://127.0.0.1:{http}"
        finally:
            stop(*ctl)
    finally:
        stop(*switch)


OPERATOR_TOKEN = "multihost-operator-token"


def jobs(url: str) -> list:
    """Every job the controller holds: the operator's token sees them all (a job's own secret sees only it)."""
    request = urllib.request.Request(f"{url}/v1/jobs", headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"})
    with urllib.request.urlopen(request, timeout=5) as answer:
        return json.load(answer)["jobs"]


def test_two_hosts_whose_agents_get_their_switch_job_from_the_controller(controller, monkeypatch):
    """No switch address, no switch job on the agents or the ranks: each agent registers as worker <host index> of
    the job named by the job key; the controller programs the switch, and frees the job when the agents leave."""
    monkeypatch.setenv("INAGG_CONTROLLER", controller)  # the agents read it (as `inagg worker` does)
    host_a = Agent("ctl-a")
    host_b = Agent("ctl-b")
    monkeypatch.delenv("INAGG_CONTROLLER")
    try:
        env_of = {r: {"INAGG_HOST_ID": "ab"[r], "INAGG_AGENT": str((host_a, host_b)[r].socket)} for r in range(2)}
        results = run_ranks("multihost", 2, env_of=env_of, timeout=150)
        if any(r.returncode != 0 for r in results):
            pytest.fail("\n".join(f"--- agent {a.name}:\n{a.log_text()[-3000:]}" for a in (host_a, host_b))
                        + "\n--- ranks:\n" + "\n".join(r.stdout[-1500:] for r in results))
        for host, agent in enumerate((host_a, host_b)):
            assert f"host {host} of 2 is worker {host} of switch job 1" in agent.log_text(), agent.log_text()[-3000:]
            assert "from the controller " + controller in agent.log_text()
        deadline = time.monotonic() + 20
        while jobs(controller) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert jobs(controller) == [], "the controller still holds the job after both agents left"
    finally:
        host_a.stop()
        host_b.stop()
