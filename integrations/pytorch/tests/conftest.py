"""Fixtures: an agent (and a switch) of the test session's own, and a runner of multi-process scenarios that never
hangs (every process has a deadline and is killed past it)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence

import pytest

REPO = Path(__file__).resolve().parents[3]
LAUNCHER = REPO / "bin" / "inagg"
RANKS = Path(__file__).resolve().parent / "_ranks.py"
#: The agents' private directory (the agent's and inagg_torch's default): /dev/shm/inagg-<uid>, made here as they would.
SHM = (Path("/dev/shm") if Path("/dev/shm").is_dir() else Path("/tmp")) / f"inagg-{os.geteuid()}"
SHM.mkdir(mode=0o700, exist_ok=True)
#: A small slot (16 Ki elements) so tests cover tensors that take several rounds without big buffers.
SLOT_BYTES = 65536
#: Small chunks (1 Ki elements) so that a sum's round goes in several: copied in, summed and (across hosts, with the
#: network chunks the agent has off by default) sent and copied out chunk by chunk.
CHUNK_BYTES = 4096
#: Test agents run chunked rounds (as the agent does by default where the host has more cores than the job's local
#: ranks); INAGG_TEST_CHUNKED=0 runs them with whole rounds (--chunk-bytes 0).
CHUNKED = os.environ.get("INAGG_TEST_CHUNKED", "1") != "0"


def require_root(why: str) -> None:
    """Skips the calling test unless it runs as root; fails instead with INAGG_REQUIRE_ROOT=1 (CI, which runs as
    root), as the Java tests do with -Dinagg.root.tests.require=true."""
    if os.geteuid() != 0:
        if os.environ.get("INAGG_REQUIRE_ROOT") == "1":
            pytest.fail(f"INAGG_REQUIRE_ROOT=1 but this test {why} and runs as uid {os.geteuid()}")
        pytest.skip(why)


def free_port(kind=socket.SOCK_STREAM) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_socket(path: Path, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"agent for {path} exited with {process.returncode}")
        if path.exists():
            with socket.socket(socket.AF_UNIX) as s:
                try:
                    s.connect(str(path))
                    return
                except OSError:
                    pass
        time.sleep(0.05)
    raise RuntimeError(f"no agent on {path} after {timeout} s")


class Agent:
    """A `bin/inagg agent` process of the tests; stopped and its files removed at the end."""

    def __init__(self, name: str, *extra: str, directory: Optional[Path] = None) -> None:
        """``directory``: the agent's private directory (``--dir``: its socket, lock and job files) instead of SHM."""
        if not (REPO / "cli" / "target" / "inagg.jar").is_file():
            pytest.skip("cli/target/inagg.jar is not built (./mvnw -q install -DskipTests)")
        self.name = f"{name}-{os.getpid()}"
        self.dir = directory if directory is not None else SHM
        self.socket = self.dir / f"inagg-agent-{self.name}.sock"
        self.log = SHM / f"inagg-agent-{self.name}.log"
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(
                [str(LAUNCHER), "agent", "--name", self.name, "--counters-dir",
                 str(SHM / f"inagg-test-counters-{os.getpid()}"), *extra]
                + ([] if directory is None else ["--dir", str(directory)])
                + ([] if "--slot-bytes" in extra else ["--slot-bytes", str(SLOT_BYTES)])
                + ([] if "--chunk-bytes" in extra else ["--chunk-bytes", "0"] if not CHUNKED
                   else ["--chunk-bytes", str(CHUNK_BYTES), "--network-chunk-bytes", str(CHUNK_BYTES)]),
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        wait_for_socket(self.socket, self.process)

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        for f in self.dir.glob(f"inagg-{self.name}+*.shm"):
            f.unlink(missing_ok=True)
        self.socket.unlink(missing_ok=True)
        (self.dir / f"inagg-agent-{self.name}.lock").unlink(missing_ok=True)
        self.log.unlink(missing_ok=True)
        counters = SHM / f"inagg-test-counters-{os.getpid()}"
        for f in counters.glob("*"):
            f.unlink(missing_ok=True)
        try:
            counters.rmdir()
        except OSError:
            pass  # another agent of this session still has its file there


@pytest.fixture(scope="session")
def agent() -> Iterator[Agent]:
    a = Agent("pytest")
    yield a
    a.stop()


@pytest.fixture()
def agent_env(agent: Agent, monkeypatch) -> Agent:
    """This process's (in-process tests') INAGG_AGENT is the session's agent."""
    monkeypatch.setenv("INAGG_AGENT", str(agent.socket))
    return agent


class RankRun(subprocess.CompletedProcess):
    """One rank process of :func:`run_ranks`: its exit status and output, and the outcome of each case and scenario
    it reported (``"OK"``, or the failure: exception type and message), read from its report file, not its output."""

    def __init__(self, done: subprocess.CompletedProcess, report: Path) -> None:
        super().__init__(done.args, done.returncode, done.stdout, None)
        self.cases: Dict[str, str] = {}
        self.scenarios: Dict[str, str] = {}
        if report.is_file():
            for line in report.read_text().splitlines():
                entry = json.loads(line)
                (self.cases if entry["kind"] == "case" else self.scenarios)[entry["name"]] = entry["outcome"]


def run_ranks(scenario: str, world: int, env_of: Optional[Dict[int, Dict[str, str]]] = None,
              env: Optional[Dict[str, str]] = None, timeout: float = 120) -> List[RankRun]:
    """Runs `_ranks.py SCENARIO` as ranks 0..world-1 (RANK/WORLD_SIZE/MASTER_* env, as torchrun sets them); each
    rank reports its cases and scenarios into a file of its own (INAGG_TEST_REPORT)."""
    port = free_port()
    reports = Path(tempfile.mkdtemp(prefix="inagg-ranks-"))
    procs = []
    for rank in range(world):
        e = dict(os.environ)
        e.update({"RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank),
                  "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "OMP_NUM_THREADS": "1",
                  "PYTHONUNBUFFERED": "1", "INAGG_TEST_REPORT": str(reports / f"rank{rank}.jsonl")})
        e.update(env or {})
        e.update((env_of or {}).get(rank, {}))
        procs.append(subprocess.Popen([sys.executable, str(RANKS), scenario], env=e, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    try:
        return [RankRun(done, reports / f"rank{rank}.jsonl") for rank, done in enumerate(collect(procs, timeout))]
    finally:
        shutil.rmtree(reports, ignore_errors=True)


def assert_reported(results: List[RankRun], name: str, kind: str = "case") -> None:
    """Every rank reported ``name`` (a case, or a scenario) as OK."""
    for rank, r in enumerate(results):
        outcome = (r.cases if kind == "case" else r.scenarios).get(name, "not reached")
        assert outcome == "OK", f"rank {rank}, {kind} {name}: {outcome} (exit {r.returncode}):\n{r.stdout[-4000:]}"


def collect(procs: List[subprocess.Popen], timeout: float) -> List[subprocess.CompletedProcess]:
    deadline = time.monotonic() + timeout
    results = []
    for proc in procs:
        try:
            out, _ = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            out, _ = proc.communicate()
            out += f"\n<killed after {timeout} s>"
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, None))
    return results


def assert_ok(results: List[subprocess.CompletedProcess], ranks=None, logs: Sequence[Path] = ()) -> None:
    """Every rank (of ``ranks``) said OK; otherwise fails with the first failed rank's output, every other failed
    rank's last line, and the tail of each of ``logs`` (the agents' and switches' of the test)."""
    failed = [rank for rank, r in enumerate(results) if (ranks is None or rank in ranks)
              and not (r.returncode == 0 and f"RANK {rank} OK" in r.stdout)]
    if not failed:
        return
    first = results[failed[0]]
    message = f"rank {failed[0]} failed ({first.returncode}):\n{first.stdout[-4000:]}"
    for rank in failed[1:]:
        lines = results[rank].stdout.strip().splitlines()
        message += f"\nrank {rank} failed ({results[rank].returncode}): {lines[-1] if lines else ''}"
    for log in logs:
        text = log.read_text(errors="replace") if log.is_file() else "(no log)"
        message += f"\n--- {log.name}, last 3000 characters:\n{text[-3000:]}"
    raise AssertionError(message)


def stop(process: subprocess.Popen, log: Path, wait: float = 15) -> None:
    """Stops a service of the tests (SIGTERM, then SIGKILL after ``wait`` s) and removes its log unless
    INAGG_TEST_KEEP_LOGS is set."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(wait)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
    if not os.environ.get("INAGG_TEST_KEEP_LOGS"):
        log.unlink(missing_ok=True)
