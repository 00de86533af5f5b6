"""Issue 24, the rank's side: a rank hands its tensors only to its own user's agent, through files nobody else can read
or replace (docs/security.md). Each test fails on the code before the fix: it connected to whatever listened on the
socket path and mapped whatever file it was told."""

from __future__ import annotations

import grp
import os
import re
import signal
import socket
import stat
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import inagg_torch
from inagg_torch import _agent, _private
from inagg_torch import _protocol as p
from inagg_torch._agent import AgentClient
from conftest import SHM, Agent, require_root

NOBODY = 65534


def client(**overrides) -> AgentClient:
    args = dict(rank=0, world_size=1, local_rank=0, local_world_size=1, host_index=0, hosts=1, switch_job=1,
                job_key=f"sec-{os.getpid()}", timeout=20.0)
    args.update(overrides)
    return AgentClient(**args)


@pytest.fixture()
def private(tmp_path) -> Path:
    d = tmp_path / "private"
    d.mkdir(mode=0o700)
    os.chmod(d, 0o700)
    return d


def job_file(path: Path, mode: int, key: str) -> None:
    """A well-formed job file for one local rank of 4096-byte slots: the old client mapped it without a question."""
    capacity = 4096
    data = 8192
    header = p.HEADER.pack(p.SHM_MAGIC, p.VERSION, 1, 1, 0, capacity, data, data + capacity, os.getpid(), len(key), 0)
    body = bytearray(data + 2 * capacity)
    body[:len(header)] = header
    body[64:64 + len(key)] = key.encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    os.write(fd, bytes(body))
    os.close(fd)
    os.chmod(path, mode)


class FakeAgent:
    """Listens on ``path`` and answers every hello with OK and ``shm`` as the job's file: what an impostor does."""

    def __init__(self, path: Path, shm: str) -> None:
        self.server = socket.socket(socket.AF_UNIX)
        self.server.bind(str(path))
        os.chmod(path, 0o600)
        self.server.listen(4)
        self.shm = shm.encode()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(10)
                try:
                    conn.recv(p.HELLO_LENGTH, socket.MSG_WAITALL)
                    reply = bytearray(p.REPLY_LENGTH)
                    struct.pack_into("<iiqii", reply, 0, p.OK, p.VERSION, 4096, len(self.shm), 0)
                    reply[p.REPLY_PATH_OFFSET:p.REPLY_PATH_OFFSET + len(self.shm)] = self.shm
                    conn.sendall(bytes(reply))
                    conn.recv(1)
                except OSError:
                    pass

    def close(self) -> None:
        self.server.close()


def test_job_files_are_the_users_own_in_a_private_directory_with_unguessable_names(agent_env):
    c = client()
    try:
        path = Path(c.path)
        st = os.lstat(path)
        assert path.parent == SHM
        assert stat.S_IMODE(os.lstat(SHM).st_mode) == 0o700 and os.lstat(SHM).st_uid == os.geteuid()
        assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == os.geteuid()
        assert re.fullmatch(r"inagg-[A-Za-z0-9._-]+\+[0-9a-f]{32}\.shm", path.name), path.name
        sock = os.lstat(agent_env.socket)
        assert stat.S_ISSOCK(sock.st_mode) and stat.S_IMODE(sock.st_mode) == 0o600
    finally:
        c.close()


def test_a_socket_others_may_use_is_refused_naming_owner_and_mode(private, monkeypatch):
    path = private / "agent.sock"
    fake = FakeAgent(path, "/nonexistent")
    try:
        os.chmod(path, 0o666)
        monkeypatch.setenv("INAGG_AGENT", str(path))
        with pytest.raises(inagg_torch.UntrustedAgentError,
                           match=rf"socket {re.escape(str(path))}: other users have access \(owner \S+, group \S+, "
                                 r"mode srw-rw-rw-\)"):
            client()
    finally:
        fake.close()


def test_a_symbolic_link_to_the_real_socket_is_refused(agent, private, monkeypatch):
    link = private / "agent.sock"
    link.symlink_to(agent.socket)
    monkeypatch.setenv("INAGG_AGENT", str(link))
    with pytest.raises(inagg_torch.UntrustedAgentError, match="it is a symbolic link"):
        client()


def test_a_socket_of_another_user_is_refused(private, monkeypatch):
    require_root("needs root to own a socket as another user")
    path = private / "agent.sock"
    fake = FakeAgent(path, "/nonexistent")
    try:
        os.chmod(path, 0o600)
        os.chown(path, NOBODY, NOBODY)
        monkeypatch.setenv("INAGG_AGENT", str(path))
        with pytest.raises(inagg_torch.UntrustedAgentError, match=r"it belongs to another user \(owner nobody"):
            client()
    finally:
        fake.close()


IMPOSTOR = r"""
import os, socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o600)
os.setresgid(65534, 65534, 65534)
os.setgroups([])
os.setresuid(65534, 65534, 65534)
s.listen(1)  # the kernel records the listener's credentials now: nobody's
print("listening", flush=True)
c, _ = s.accept()
c.settimeout(10)
hello = c.recv(256, socket.MSG_WAITALL)
print("got hello of", len(hello), "bytes", flush=True)
"""


def test_an_agent_of_another_user_behind_our_own_socket_is_refused_by_its_credentials(private, monkeypatch):
    require_root("needs root to start an impostor that drops to nobody")
    path = private / "agent.sock"
    impostor = subprocess.Popen([sys.executable, "-c", IMPOSTOR, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert impostor.stdout.readline().strip() == "listening"
        assert os.lstat(path).st_uid == 0 and stat.S_IMODE(os.lstat(path).st_mode) == 0o600
        monkeypatch.setenv("INAGG_AGENT", str(path))
        with pytest.raises(inagg_torch.UntrustedAgentError, match=r"runs as user nobody.*impersonating"):
            client()
        impostor.wait(10)
        assert "got hello of 0 bytes" in impostor.stdout.read()  # the rank hung up without sending its hello
    finally:
        impostor.kill()
        impostor.wait()


@pytest.mark.parametrize("what", ["open-mode", "symlink"])
def test_a_job_file_others_may_use_or_a_link_is_not_mapped(private, monkeypatch, what):
    key = f"sec-{os.getpid()}"
    real = private / "job.shm"
    job_file(real, 0o644 if what == "open-mode" else 0o600, key)
    told = real
    if what == "symlink":
        told = private / "link.shm"
        told.symlink_to(real)
    fake = FakeAgent(private / "agent.sock", str(told))
    try:
        monkeypatch.setenv("INAGG_AGENT", str(private / "agent.sock"))
        expected = "other users have access" if what == "open-mode" else "it is a symbolic link"
        with pytest.raises(inagg_torch.UntrustedAgentError, match=rf"shared-memory file {re.escape(str(told))}: "
                                                                  rf"{expected}"):
            client(job_key=key)
    finally:
        fake.close()


def test_a_directory_others_may_use_is_refused_before_an_agent_starts(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o755)
    monkeypatch.delenv("INAGG_AGENT", raising=False)
    monkeypatch.setenv("INAGG_DIR", str(shared))
    monkeypatch.setenv("INAGG_AGENT_NAME", f"open-dir-{os.getpid()}")
    with pytest.raises(inagg_torch.UntrustedAgentError,
                       match=rf"directory {re.escape(str(shared))}: other users have access.*mode drwxr-xr-x"):
        client()
    assert list(shared.iterdir()) == []


def test_a_killed_agents_files_are_removed_by_the_next_agent_of_its_name(monkeypatch):
    first = Agent("sec-killed")
    try:
        monkeypatch.setenv("INAGG_AGENT", str(first.socket))
        c = client()
        left = Path(c.path)
        # Killed while the rank is still connected: a rank that closes first has its job's file removed by the agent
        # (it did, now and then, before the SIGKILL landed: CI).
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(10)
        c.close()
        assert left.exists() and first.socket.exists()  # SIGKILL: nobody cleaned up
        second = Agent("sec-killed")
        try:
            assert not left.exists()
            assert f"removed {left}, left by a dead agent" in second.log_text()
            c = client()
            c.close()
        finally:
            second.stop()
    finally:
        first.stop()


def test_the_agents_log_is_rotated_once_past_its_cap(private, tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    launcher = home / "bin" / "inagg"
    launcher.write_text("#!/bin/sh\necho started\n")
    launcher.chmod(0o755)
    monkeypatch.setenv("INAGG_HOME", str(home))
    monkeypatch.setenv("INAGG_DIR", str(private))
    log = private / "inagg-agent-rotated.log"
    log.write_bytes(b"x" * (_agent.LOG_MAX_BYTES + 1))
    _agent.start_agent(private / "inagg-agent-rotated.sock", "rotated").wait(10)
    assert (private / "inagg-agent-rotated.log.1").stat().st_size == _agent.LOG_MAX_BYTES + 1
    assert log.read_text() == "started\n"
    assert stat.S_IMODE(os.lstat(log).st_mode) == 0o600
    _agent.start_agent(private / "inagg-agent-rotated.sock", "rotated").wait(10)
    assert log.read_text() == "started\nstarted\n"  # under the cap: appended


def test_an_agent_a_rank_starts_caps_its_own_log(private, monkeypatch):
    """The rotation at start does not bound one long run: the agent's --log does (BoundedLogHandler)."""
    name = f"capped-{os.getpid()}"
    monkeypatch.setenv("INAGG_DIR", str(private))
    monkeypatch.setenv("INAGG_HOME", str(Path(__file__).resolve().parents[3]))
    monkeypatch.setattr(_agent, "LOG_MAX_BYTES", 2048)
    if not (Path(__file__).resolve().parents[3] / "cli" / "target" / "inagg.jar").is_file():
        pytest.skip("cli/target/inagg.jar is not built")
    sock = private / f"inagg-agent-{name}.sock"
    process = _agent.start_agent(sock, name)
    try:
        deadline = time.monotonic() + 60
        while not sock.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        monkeypatch.setenv("INAGG_AGENT", str(sock))
        for i in range(12):  # each refused hello logs a line of a few hundred bytes
            with pytest.raises(inagg_torch.AgentMismatchError):
                client(version=99, job_key=f"log-{i}")
        log = private / f"inagg-agent-{name}.log"
        assert log.stat().st_size <= 2048
        assert (private / f"inagg-agent-{name}.log.1").stat().st_size <= 2048
        assert "refused" in log.read_text() + (private / f"inagg-agent-{name}.log.1").read_text()
        assert stat.S_IMODE(os.lstat(log).st_mode) == 0o600
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(15)


def test_a_log_replaced_by_a_link_is_not_written_through(private, tmp_path, monkeypatch):
    target = tmp_path / "elsewhere"
    target.write_text("keep\n")
    (private / "inagg-agent-linked.log").symlink_to(target)
    monkeypatch.setenv("INAGG_DIR", str(private))
    monkeypatch.setenv("INAGG_HOME", str(Path(__file__).resolve().parents[3]))
    with pytest.raises(inagg_torch.UntrustedAgentError, match="log .*it is a symbolic link"):
        _agent.start_agent(private / "inagg-agent-linked.sock", "linked")
    assert target.read_text() == "keep\n"


def fake_stat(mode: int, uid: int, gid: int) -> os.stat_result:
    return os.stat_result((mode, 1, 1, 1, uid, gid, 0, 0, 0, 0))


def test_the_allowed_group_opens_group_files_and_nothing_more(monkeypatch):
    try:
        gid = grp.getgrnam("nogroup").gr_gid
    except KeyError:
        pytest.skip("no group nogroup")
    other_gid = gid + 1 if gid + 1 != os.getegid() else gid + 2
    shared = fake_stat(stat.S_IFREG | 0o660, NOBODY, gid)
    assert _private.problem(shared, stat.S_IFREG, None) == "it belongs to another user"
    monkeypatch.setenv(_private.ENV_AGENT_GROUP, "nogroup")
    group = _private.allowed_group()
    assert group == gid
    assert _private.problem(shared, stat.S_IFREG, group) is None
    assert _private.problem(fake_stat(stat.S_IFREG | 0o664, NOBODY, gid), stat.S_IFREG, group) == \
        "other users have access"
    assert _private.problem(fake_stat(stat.S_IFREG | 0o660, NOBODY, other_gid), stat.S_IFREG, group) == \
        "it belongs to another user"
    assert _private.problem(fake_stat(stat.S_IFREG | 0o660, os.geteuid(), other_gid), stat.S_IFREG, group) == \
        "its group has access"
    assert _private.problem(fake_stat(stat.S_IFLNK | 0o777, os.geteuid(), gid), stat.S_IFREG, group) == \
        "it is a symbolic link"
    monkeypatch.setenv(_private.ENV_AGENT_GROUP, "no-such-group-inagg")
    with pytest.raises(inagg_torch.UntrustedAgentError, match="no such group"):
        _private.allowed_group()
