"""Two emulated hosts through a real P4 target: `bin/inagg lab` puts each host in a network namespace wired to bmv2
simple_switch running inagg_v1model.p4, programs one job over them and starts each host's agent bound to the source
registered for it; four ranks (two per host) all-reduce through it. Needs root and the P4 tools (INAGG_P4TOOLS,
default ../shared/p4tools beside the repository); skipped without them unless INAGG_REQUIRE_BMV2=1 (CI)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import LAUNCHER, REPO, SHM, assert_ok, run_ranks, stop

P4TOOLS = Path(os.environ.get("INAGG_P4TOOLS", REPO.parent / "shared" / "p4tools"))


def missing() -> str:
    if os.geteuid() != 0:
        return "needs root (network namespaces, veths)"
    if not (P4TOOLS / "bin" / "simple_switch").exists():
        return f"no P4 tools at INAGG_P4TOOLS={P4TOOLS}"
    if shutil.which("ip") is None or shutil.which("ethtool") is None:
        return "needs iproute2 and ethtool"
    if not (REPO / "cli" / "target" / "inagg.jar").is_file():
        return "cli/target/inagg.jar is not built (./mvnw -q install -DskipTests)"
    return ""


@pytest.fixture()
def lab():
    why = missing()
    if why:
        if os.environ.get("INAGG_REQUIRE_BMV2") == "1":
            pytest.fail(f"INAGG_REQUIRE_BMV2=1 but the bmv2 lab cannot run: {why}")
        pytest.skip(why)
    name = f"pt{os.getpid()}"
    log = SHM / f"inagg-test-lab-{name}.log"
    env = dict(os.environ, INAGG_P4TOOLS=str(P4TOOLS))
    with open(log, "wb") as out:
        process = subprocess.Popen([str(LAUNCHER), "lab", "--hosts", "2", "--name", name,
                                    "--stats-interval", "1"], stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True, env=env)
    try:
        deadline = time.monotonic() + 300  # the first compile of the program takes a minute or two
        while "lab ready" not in log.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"inagg lab did not start:\n{log.read_text(errors='replace')[-4000:]}")
            time.sleep(0.2)
        yield process, log
    finally:
        stop(process, log, wait=60)


def test_two_hosts_through_bmv2_match_the_exact_sum_within_the_fixed_point_bound(lab):
    process, log = lab
    text = log.read_text(errors="replace")
    hosts = dict(re.findall(r"^host (\d+): .* INAGG_AGENT=(\S+) ", text, re.M))
    namespaces = re.findall(r"^host \d+: namespace (\S+),", text, re.M)
    assert sorted(hosts) == ["1", "2"], text
    env_of = {r: {"INAGG_HOST_ID": "1" if r < 2 else "2", "INAGG_AGENT": hosts["1" if r < 2 else "2"],
                  "INAGG_SWITCH_JOB": "1"} for r in range(4)}
    results = run_ranks("multihost", 4, env_of=env_of, timeout=240)
    if any(r.returncode != 0 for r in results):
        pytest.fail(log.read_text(errors="replace")[-3000:] + "\n--- ranks:\n"
                    + "\n".join(r.stdout[-1500:] for r in results))
    assert_ok(results)
    # The sums came from simple_switch: its counters (read through its control plane) saw every host's packets, at
    # least one per 256 elements of each all-reduce (3 x 70,000 elements and 1,000 from each host).
    time.sleep(2.5)
    stats = re.findall(r"^bmv2: received (\d+), contributions (\d+)", log.read_text(errors="replace"), re.M)
    assert stats, log.read_text(errors="replace")[-3000:]
    assert int(stats[-1][1]) >= 2 * (3 * 70_000 + 1_000) // 256, stats[-1]
    process.send_signal(signal.SIGTERM)
    process.wait(60)
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(ns in listed for ns in namespaces), f"namespaces left behind: {listed}"
