"""Each bad input of issue 13 gets a Python exception naming its cause, and the agent serves the next job."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Iterator, Optional

import pytest
import torch
import torch.distributed as dist

import inagg_torch
from inagg_torch import _protocol as p
from inagg_torch._agent import AgentClient
from conftest import REPO, SHM, Agent, assert_ok, assert_reported, run_ranks


def client(**overrides) -> AgentClient:
    args = dict(rank=0, world_size=1, local_rank=0, local_world_size=1, host_index=0, hosts=1, switch_job=1,
                job_key=f"test-{os.getpid()}", timeout=20.0)
    args.update(overrides)
    return AgentClient(**args)


def test_no_agent_at_inagg_agent_is_named(monkeypatch):
    missing = SHM / f"inagg-agent-missing-{os.getpid()}.sock"
    monkeypatch.setenv("INAGG_AGENT", str(missing))
    with pytest.raises(inagg_torch.AgentUnavailableError, match=str(missing)):
        inagg_torch.ProcessGroupInagg(dist.HashStore(), 0, 1, timedelta(seconds=10))


def test_agent_that_cannot_be_started_says_why(monkeypatch):
    monkeypatch.delenv("INAGG_AGENT", raising=False)
    monkeypatch.setenv("INAGG_AGENT_NAME", f"nostart-{os.getpid()}")
    monkeypatch.setenv("INAGG_HOME", "/nonexistent/inagg")
    with pytest.raises(inagg_torch.AgentUnavailableError, match="bin/inagg not found.*INAGG_HOME"):
        inagg_torch.ProcessGroupInagg(dist.HashStore(), 0, 1, timedelta(seconds=10))


def test_first_local_rank_starts_an_agent_when_none_runs(monkeypatch, agent):
    name = f"autostart-{os.getpid()}"
    monkeypatch.delenv("INAGG_AGENT", raising=False)
    monkeypatch.setenv("INAGG_AGENT_NAME", name)
    monkeypatch.setenv("INAGG_HOME", str(REPO))  # also when the package is installed, not linked, from the checkout
    pg = inagg_torch.ProcessGroupInagg(dist.HashStore(), 0, 1, timedelta(seconds=60))
    try:
        assert pg._client.socket_path == SHM / f"inagg-agent-{name}.sock"
    finally:
        pg.shutdown()
        # The started agent exits by itself after 30 s idle; stop it now through its pid in the log instead of waiting.
        log = SHM / f"inagg-agent-{name}.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        found = re.search(r"agent-(\d+)\.counters", text)
        if found:
            os.kill(int(found.group(1)), 15)
        log.unlink(missing_ok=True)
        (SHM / f"inagg-agent-{name}.lock").unlink(missing_ok=True)  # kept by the agent (docs/security.md)


def test_other_protocol_version_is_refused_by_name(agent_env):
    with pytest.raises(inagg_torch.AgentMismatchError, match="version 99"):
        client(version=99)


def test_world_size_mismatch_and_duplicate_rank_are_refused(agent_env):
    first = client(world_size=2, local_world_size=2, job_key=f"mismatch-{os.getpid()}")
    try:
        with pytest.raises(inagg_torch.WorldMismatchError, match="world size 3"):
            client(rank=1, world_size=3, local_rank=1, local_world_size=3, job_key=f"mismatch-{os.getpid()}")
        with pytest.raises(inagg_torch.WorldMismatchError, match="joined .* twice"):
            client(rank=1, world_size=2, local_rank=0, local_world_size=2, job_key=f"mismatch-{os.getpid()}")
    finally:
        first.close()


@pytest.fixture(scope="module")
def pinned_agent():
    # Serves one job only.
    a = Agent("pinned", "--job-key", "the-other-job")
    yield a
    a.stop()


@pytest.fixture(scope="module")
def small_shm() -> Iterator[Optional[Path]]:
    """A 1 MiB tmpfs, private to this user, for an agent's directory: no job file of 1 MiB slots fits in it, however
    much room /dev/shm has. Mounting needs root (CI); elsewhere None."""
    if os.geteuid() != 0:
        yield None
        return
    d = Path(tempfile.mkdtemp(prefix="inagg-small-shm-"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "inagg-test-shm", str(d)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:  # root without CAP_SYS_ADMIN (a container): the test takes the other way
        d.rmdir()
        yield None
        return
    try:
        yield d
    finally:
        subprocess.run(["umount", str(d)], check=True)
        d.rmdir()


@pytest.fixture(scope="module")
def full_agent(small_shm):
    """(agent, local ranks): a job of that many local ranks does not fit in the agent's directory. On the 1 MiB tmpfs
    one rank of 1 MiB slots (1 MiB + 1 MiB result + 8 KiB); without root 256 local ranks of the largest slot, 16 GiB
    (257 x 16 GiB + 132 KiB, about 4 TiB) in /dev/shm."""
    if small_shm is not None:
        a, ranks = Agent("full", "--slot-bytes", str(1 << 20), directory=small_shm), 1
    else:
        free = os.statvfs(SHM).f_bavail * os.statvfs(SHM).f_frsize
        if free >= 257 << 34:
            pytest.skip(f"{SHM} has {free} bytes free and no tmpfs can be mounted here (not root)")
        a, ranks = Agent("full", "--slot-bytes", str(1 << 34)), 256
    yield a, ranks
    a.stop()


def test_agent_of_another_job_on_the_name_is_refused(monkeypatch, pinned_agent):
    monkeypatch.setenv("INAGG_AGENT", str(pinned_agent.socket))
    with pytest.raises(inagg_torch.AgentMismatchError, match="serves job the-other-job only"):
        inagg_torch.ProcessGroupInagg(dist.HashStore(), 0, 1, timedelta(seconds=10))


def test_shared_memory_full_is_named(monkeypatch, full_agent):
    agent, ranks = full_agent
    monkeypatch.setenv("INAGG_AGENT", str(agent.socket))
    with pytest.raises(inagg_torch.SharedMemoryFullError, match=r"shared memory full: .* bytes free, the job needs"):
        client(world_size=ranks, local_world_size=ranks, job_key=f"full-{os.getpid()}")
    assert agent.alive()
    assert list(agent.dir.glob(f"inagg-{agent.name}+*.shm")) == [], "the refused job's file was left"


@pytest.fixture(scope="module")
def round_errors_run(agent):
    return run_ranks("sizes_differ,nan", 2, env={"INAGG_AGENT": str(agent.socket)})


def test_tensor_sizes_differing_between_ranks(round_errors_run):
    assert_reported(round_errors_run, "sizes_differ", "scenario")


def test_nan_and_overflow_name_the_rank(round_errors_run):
    assert_ok(round_errors_run)


def serves_a_job(agent: Agent, monkeypatch) -> None:
    """The agent runs a round of a new job (one rank: the sum is the rank's own tensor)."""
    monkeypatch.setenv("INAGG_AGENT", str(agent.socket))
    c = client(job_key=f"next-{os.getpid()}-{os.urandom(4).hex()}")
    try:
        t = torch.arange(100, dtype=torch.float32)
        c.round([(t, 0, 100)], p.DTYPE_FLOAT32, p.OP_SUM, 100)
        assert torch.equal(t, torch.arange(100, dtype=torch.float32))
        assert torch.equal(c.views[p.DTYPE_FLOAT32][1][:100], t)  # it went through the agent's result slot
    finally:
        c.close()


@pytest.mark.parametrize("join_late", [False, True], ids=["together", "rank0-after-rank1-gave-up"])
def test_rank_that_cannot_reserve_shared_memory_is_told_why_and_the_agent_serves_the_next_job(agent, monkeypatch,
                                                                                             join_late):
    before = set(SHM.glob(f"inagg-{agent.name}+*.shm"))
    refused = "before every local rank joined (1 of 2 did)"
    refusals = agent.log_text().count(refused)
    results = run_ranks("reserve_fails", 2, env={"INAGG_AGENT": str(agent.socket), "INAGG_COLLECTIVE_TIMEOUT": "5",
                                                 "INAGG_TEST_JOIN_LATE": str(agent.log) if join_late else ""})
    assert_ok(results)
    if join_late:
        assert agent.log_text().count(refused) == refusals + 1, "rank 0 was not refused as a late rank"
    deadline = time.monotonic() + 10
    while not set(SHM.glob(f"inagg-{agent.name}+*.shm")) <= before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert set(SHM.glob(f"inagg-{agent.name}+*.shm")) <= before, "the failed job's file is still there"
    assert agent.alive()
    serves_a_job(agent, monkeypatch)


def test_rank_that_hangs_fails_the_others_within_the_collective_timeout_naming_it(agent, monkeypatch):
    results = run_ranks("rank_hangs", 2, env={"INAGG_AGENT": str(agent.socket), "INAGG_COLLECTIVE_TIMEOUT": "2"})
    assert_ok(results)
    assert "did not submit it within the collective timeout" in agent.log_text()
    assert agent.alive()
    serves_a_job(agent, monkeypatch)


def test_rank_dying_mid_collective_fails_the_others_and_the_agent_serves_the_next_job(agent):
    results = run_ranks("rank_dies", 3, env={"INAGG_AGENT": str(agent.socket), "INAGG_TIMEOUT": "60"})
    assert results[2].returncode == 17
    assert_ok(results, ranks={0, 1})
    assert "disconnected" in agent.log_text()
    assert agent.alive()
    assert_ok(run_ranks("sizes_differ", 2, env={"INAGG_AGENT": str(agent.socket)}))
