"""The PyTorch backend across the hosts of an emulated cluster (`bin/inagg cluster`, docs/cluster.md): two hosts in
network namespaces on rate-limited links to a switch namespace running the software switch, each host's agent bound
to the source the switch registered for it, torchrun across the namespaces with its rendezvous over the emulated links,
two ranks per host; the benchmark checks every result against the exact sum and compares with gloo on the same links.
Once with one agent per host (in-host sum first) and once with an agent per rank. Needs root and iproute2; skipped
without them unless INAGG_REQUIRE_CLUSTER=1 (CI)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from conftest import LAUNCHER, REPO


def missing() -> str:
    if os.geteuid() != 0:
        return "needs root (network namespaces, veths, tc)"
    if shutil.which("ip") is None or shutil.which("tc") is None:
        return "needs iproute2 (ip, tc)"
    if not (REPO / "cli" / "target" / "inagg.jar").is_file():
        return "cli/target/inagg.jar is not built (./mvnw -q install -DskipTests)"
    return ""


@pytest.mark.parametrize("workers_per_host", [1, 2])
def test_ranks_on_two_emulated_hosts_all_reduce_through_the_switch(tmp_path, workers_per_host):
    why = missing()
    if why:
        if os.environ.get("INAGG_REQUIRE_CLUSTER") == "1":
            pytest.fail(f"INAGG_REQUIRE_CLUSTER=1 but the emulated cluster cannot run: {why}")
        pytest.skip(why)
    env = dict(os.environ, LOG2="12", PER_HOST="2", OUT=str(tmp_path / "bench"), TMPDIR=str(tmp_path))
    done = subprocess.run([str(LAUNCHER), "cluster", "--hosts", "2", "--link-rate", "200mbit",
                           "--workers-per-host", str(workers_per_host), "--timeout-s", "240", "--run",
                           "integrations/pytorch/benchmarks/cluster_host.sh"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-6000:]
    assert "--run ended with status 0" in out, out[-6000:]
    assert "| 4,096 |" in out, out[-6000:]
    assert "cluster: removed (0 namespaces left)" in out, out[-6000:]
