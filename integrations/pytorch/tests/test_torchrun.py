"""torchrun as users run it: the test scenarios and the example, with the agent found through INAGG_AGENT."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, RANKS

TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone"]


def torchrun(nproc: int, args, env, timeout: float = 180) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e.update(env)
    try:
        return subprocess.run(TORCHRUN + ["--nproc-per-node", str(nproc)] + [str(a) for a in args], env=e,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as ex:
        pytest.fail(f"torchrun {args} did not finish in {timeout} s:\n{ex.output}")


@pytest.mark.parametrize("nproc,scenario", [(2, "coalesced"), (4, "async")])
def test_torchrun_ranks(agent, nproc, scenario):
    r = torchrun(nproc, [RANKS, scenario], {"INAGG_AGENT": str(agent.socket)})
    assert r.returncode == 0, r.stdout[-4000:]
    assert all(f"RANK {i} OK" in r.stdout for i in range(nproc)), r.stdout[-4000:]


def test_example_trains_to_gloo_accuracy(agent, tmp_path):
    pytest.importorskip("sklearn")
    accuracy = {}
    for backend in ("inagg", "gloo"):
        r = torchrun(2, [REPO / "examples" / "pytorch" / "train.py", "--backend", backend, "--epochs", "6",
                         "--out", tmp_path], {"INAGG_AGENT": str(agent.socket)})
        assert r.returncode == 0, r.stdout[-4000:]
        assert "wall" in r.stdout
        accuracy[backend] = json.loads((tmp_path / f"history-{backend}.json").read_text())["accuracy"][-1]
    assert abs(accuracy["inagg"] - accuracy["gloo"]) <= 0.5, accuracy
    assert accuracy["inagg"] > 80, accuracy
    if pytest.importorskip("matplotlib"):
        assert (tmp_path / "curves.png").stat().st_size > 10_000


@pytest.mark.parametrize("mesh,ranks", [("flat", 2), ("hsdp", 4)])
def test_fsdp_example_trains_like_gloo_without_falling_back(agent, tmp_path, mesh, ranks):
    """The FSDP2 example (flat on 2 ranks, HSDP on a 2x2 mesh), inagg under INAGG_STRICT=1 and gloo: the same
    parameters after 2 epochs (the gradient sums' float32 rounding apart), the same accuracy, the curves drawn."""
    pytest.importorskip("sklearn")
    for backend in ("inagg", "gloo"):
        r = torchrun(ranks, [REPO / "examples" / "pytorch" / "train_fsdp.py", "--backend", backend, "--epochs", "2",
                             "--mesh", mesh, "--out", tmp_path],
                     {"INAGG_AGENT": str(agent.socket), "INAGG_STRICT": "1"})
        assert r.returncode == 0, r.stdout[-4000:]
        assert "final test accuracy" in r.stdout, r.stdout[-4000:]
    import torch

    prefix = "fsdp" if mesh == "flat" else "hsdp"
    pytest.importorskip("matplotlib")
    assert (tmp_path / f"{prefix}-curves.png").stat().st_size > 0
    inagg, gloo = (torch.load(tmp_path / f"{prefix}-{b}.pt") for b in ("inagg", "gloo"))
    assert inagg.keys() == gloo.keys() and len(inagg) == 6
    for name in inagg:
        err = (inagg[name] - gloo[name]).abs().max().item()
        assert err < 1e-4, f"{name}: inagg vs gloo {err}"
    accuracy = {b: json.loads((tmp_path / f"{prefix}-{b}.json").read_text())["accuracy"][-1] for b in ("inagg", "gloo")}
    assert abs(accuracy["inagg"] - accuracy["gloo"]) <= 1.0 and accuracy["inagg"] > 70, accuracy  # 2 epochs
