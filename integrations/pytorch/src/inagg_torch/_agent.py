"""A rank's connection to its host's agent: find or start the agent, say hello, map the job's shared memory, run rounds.

One round: copy (the next piece of) the tensors into this rank's data region, write the request into the rank's
descriptor, ring; the agent sums every local rank's region into the result region (and through the switch when the
job spans hosts) and rings back; copy the result out. One copy in, one copy out; the float16/bfloat16 conversion to
float32 happens inside those copies.

A sum's round goes in chunks when the agent asks for them (the header's chunk elements): the rank rings its request
after the first chunk is in and says each next one with a progress doorbell, so that the agent sums chunk k while the
rank copies chunk k+1 in; with the agent's network chunks it also rings "done" as chunks come back from the switch,
and the rank copies each out while the next is on the network (SharedRegion.java, RoundPipeline.java).
"""

from __future__ import annotations

import errno
import logging
import mmap
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Callable, Optional, Sequence

import torch

from . import _private, errors
from . import _protocol as p
from ._staging import DeviceStaging

log = logging.getLogger("inagg_torch")

ENV_AGENT = "INAGG_AGENT"
ENV_AGENT_NAME = "INAGG_AGENT_NAME"
ENV_HOME = "INAGG_HOME"
ENV_DIR = "INAGG_DIR"
ENV_SWITCH = "INAGG_SWITCH"
ENV_START_TIMEOUT = "INAGG_AGENT_START_TIMEOUT"
ENV_AGENT_ARGS = "INAGG_AGENT_ARGS"
#: The agent's log (in its private directory) becomes .log.1 past this many bytes (the agent's --log-max-bytes; a rank
#: that starts an agent also rotates a log already past it).
LOG_MAX_BYTES = 1 << 20


def shm_dir() -> Path:
    """The agent's private directory: INAGG_DIR, else /dev/shm/inagg-<uid> (/tmp/inagg-<uid> without /dev/shm)."""
    explicit = os.environ.get(ENV_DIR)
    if explicit:
        return Path(explicit)
    parent = Path("/dev/shm")
    return (parent if parent.is_dir() else Path("/tmp")) / f"inagg-{os.geteuid()}"


def default_socket() -> Path:
    return shm_dir() / f"inagg-agent-{os.environ.get(ENV_AGENT_NAME, 'inagg')}.sock"


def find_launcher() -> Optional[Path]:
    """bin/inagg: $INAGG_HOME/bin/inagg, else the repository this package lives in, else `inagg` on PATH."""
    home = os.environ.get(ENV_HOME)
    if home:
        candidate = Path(home) / "bin" / "inagg"
        return candidate if candidate.is_file() else None
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "bin" / "inagg"
        if candidate.is_file() and (parent / "services").is_dir():
            return candidate
    found = shutil.which("inagg")
    return Path(found) if found else None


def _connect(path: Path) -> Optional[socket.socket]:
    """A connection to the agent on ``path``, None when none listens there; raises UntrustedAgentError when the socket
    or the process behind it is not this user's own."""
    if not _private.check_socket(path):
        return None
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(str(path))
    except OSError:
        s.close()
        return None
    try:
        _private.check_peer(s, path)
    except BaseException:
        s.close()
        raise
    return s


def start_agent(path: Path, name: str) -> subprocess.Popen:
    # The private directory first: a directory others may use is refused whether or not an agent could be started.
    _private.ensure_directory(shm_dir())
    launcher = find_launcher()
    if launcher is None:
        raise errors.AgentUnavailableError(
            f"inagg: no agent listening on {path} and none can be started: bin/inagg not found "
            f"(set {ENV_HOME} to the inagg checkout, or run `bin/inagg agent --name {name}` yourself and set "
            f"{ENV_AGENT}={path})")
    args = [str(launcher), "agent", "--name", name, "--socket", str(path), "--dir", str(shm_dir()),
            "--idle-exit-ms", "30000"]
    if os.environ.get(ENV_SWITCH):
        args += ["--switch", os.environ[ENV_SWITCH]]
    if os.environ.get(_private.ENV_AGENT_GROUP):
        args += ["--allow-group", os.environ[_private.ENV_AGENT_GROUP]]
    args += os.environ.get(ENV_AGENT_ARGS, "").split()
    log_path = shm_dir() / f"inagg-agent-{name}.log"
    # The agent caps its own log (moved to .log.1 past the cap); its standard output (and a crash's) goes there too.
    args += ["--log", str(log_path), "--log-max-bytes", str(LOG_MAX_BYTES)]
    log.info("inagg: starting agent: %s (log %s)", " ".join(args), log_path)
    out = _private.open_log(log_path, LOG_MAX_BYTES)
    try:
        return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    finally:
        os.close(out)


def connect_agent(local_rank: int, timeout: float) -> tuple[socket.socket, Path]:
    """Connects to the agent; local rank 0 starts one when none listens (unless INAGG_AGENT names one)."""
    explicit = os.environ.get(ENV_AGENT)
    path = Path(explicit) if explicit else default_socket()
    s = _connect(path)
    if s is not None:
        return s, path
    if explicit:
        raise errors.AgentUnavailableError(
            f"inagg: no agent listening on {ENV_AGENT}={path} (start it with `bin/inagg agent --socket {path}`, "
            f"or unset {ENV_AGENT} to let the first local rank start one)")
    start_timeout = float(os.environ.get(ENV_START_TIMEOUT, "60"))
    deadline = time.monotonic() + min(timeout, start_timeout)
    process = None
    if local_rank == 0:
        process = start_agent(path, os.environ.get(ENV_AGENT_NAME, "inagg"))
    delay = 0.01
    while time.monotonic() < deadline:
        s = _connect(path)
        if s is not None:
            return s, path
        if process is not None and process.poll() is not None:
            tail = ""
            log_path = shm_dir() / f"inagg-agent-{os.environ.get(ENV_AGENT_NAME, 'inagg')}.log"
            try:
                tail = log_path.read_text(errors="replace")[-600:]
            except OSError:
                pass
            raise errors.AgentUnavailableError(
                f"inagg: the agent started for {path} exited with status {process.returncode}: {tail.strip()}")
        time.sleep(delay)
        delay = min(delay * 2, 0.2)
    raise errors.AgentUnavailableError(
        f"inagg: no agent listening on {path} after {min(timeout, start_timeout):.0f} s"
        + (" (local rank 0 started one; see its log)" if local_rank == 0 else
           " (local rank 0 should have started one; did it fail?)"))


class AgentClient:
    """This rank's membership in a job on its host's agent."""

    def __init__(self, *, rank: int, world_size: int, local_rank: int, local_world_size: int, host_index: int,
                 hosts: int, switch_job: int, job_key: str, timeout: float, version: int = p.VERSION,
                 collective_timeout: float = 0.0, staging: Optional[DeviceStaging] = None) -> None:
        """``timeout``: seconds this rank waits for the agent's answer; ``collective_timeout``: seconds the agent waits
        for the job's other local ranks once one submitted a round (0: the agent's default)."""
        self.rank = rank
        self.local_rank = local_rank
        self.timeout = timeout
        self.sequence = 0
        self.closed = False
        self.failure: Optional[errors.InaggError] = None
        self.staging = staging if staging is not None else DeviceStaging()
        self.sock, self.socket_path = connect_agent(local_rank, timeout)
        try:
            self.sock.settimeout(timeout)
            self.sock.sendall(p.hello(rank, world_size, local_rank, local_world_size, host_index, hosts, switch_job,
                                      os.getpid(), job_key, version, round(collective_timeout * 1000)))
            reply = self._recv_exactly(p.REPLY_LENGTH, "the agent's reply to hello")
            status, agent_version, capacity, path, message = p.parse_reply(reply)
            if status != p.OK:
                raise p.error(status, f"agent on {self.socket_path} refused rank {rank}: {message}")
            self.capacity = capacity
            self.path = path
            self._map(path, local_world_size, job_key)
        except BaseException:
            self.sock.close()
            raise

    def _recv_exactly(self, n: int, what: str) -> bytes:
        data = bytearray()
        while len(data) < n:
            try:
                chunk = self.sock.recv(n - len(data))
            except socket.timeout as ex:
                raise errors.RankFailedError(f"inagg: no answer from the agent on {self.socket_path} within "
                                             f"{self.timeout:.0f} s waiting for {what}") from ex
            if not chunk:
                raise errors.AgentUnavailableError(f"inagg: the agent on {self.socket_path} closed the connection "
                                                   f"before {what}")
            data += chunk
        return bytes(data)

    def _map(self, path: str, local_world_size: int, job_key: str) -> None:
        fd = _private.open_shared_file(path)
        try:
            size = os.fstat(fd).st_size
            (magic, version, local_ranks, _world, network_chunk, capacity, data_offset, result_offset, _pid,
             key_length, chunk) = p.HEADER.unpack(os.pread(fd, p.HEADER.size, 0))
            if magic != p.SHM_MAGIC or version != p.VERSION:
                raise errors.AgentMismatchError(
                    f"inagg: {path} is not an inagg v{p.VERSION} job file (magic {magic:#x}, version {version}); "
                    "an agent of another version uses this name")
            key = os.pread(fd, key_length, p.SHM_KEY_OFFSET).decode("utf-8", "replace")
            if key != job_key[:len(key)] or local_ranks != local_world_size:
                raise errors.AgentMismatchError(f"inagg: {path} belongs to job {key} ({local_ranks} local ranks), "
                                                f"not to job {job_key}")
            #: elements of the chunks a sum is copied in (0: whole rounds)
            self.chunk = max(0, chunk)
            #: the agent's --network-chunk-bytes (0: rounds through the switch whole), the same on every host of a job
            #: (_agreement.py)
            self.network_chunk_bytes = network_chunk
            self.data_offset = data_offset + self.local_rank * capacity
            self.result_offset = result_offset
            self.descriptor_offset = p.HEADER_LENGTH + self.local_rank * p.DESCRIPTOR_LENGTH
            try:
                # Reserve the pages now: a full /dev/shm is an error here, not a SIGBUS in the middle of a copy.
                os.posix_fallocate(fd, self.data_offset, capacity)
                if self.local_rank == 0:
                    os.posix_fallocate(fd, 0, data_offset)
                    os.posix_fallocate(fd, result_offset, capacity)
            except OSError as ex:
                if ex.errno == errno.ENOSPC:
                    cause = f"shared memory full: {Path(path).parent} has no room left for {capacity} more bytes"
                else:
                    cause = f"{ex.strerror} ({errno.errorcode.get(ex.errno, ex.errno)})"
                raise errors.SharedMemoryFullError(
                    f"inagg: rank {self.rank} cannot reserve its {capacity} bytes of shared memory in {path}: {cause}; "
                    f"free space in {Path(path).parent}, or start the agent with a smaller --slot-bytes") from ex
            self.mm = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
        #: this rank's ready count [0] and the agent's done count [1], each written whole (p.counts)
        self.counts = p.counts(self.mm, self.descriptor_offset)
        whole = torch.frombuffer(self.mm, dtype=torch.uint8)
        self._data = whole[self.data_offset:self.data_offset + capacity]
        self._result = whole[self.result_offset:self.result_offset + capacity]
        self.views = {
            p.DTYPE_FLOAT32: (self._data.view(torch.float32), self._result.view(torch.float32)),
            p.DTYPE_INT32: (self._data.view(torch.int32), self._result.view(torch.int32)),
        }
        self.elements = capacity // 4
        # The two slots this rank copies through are the staging buffers of its device tensors: pinned for CUDA.
        self.staging.pin(self._data, self._result)

    def round(self, pieces: Sequence[tuple[torch.Tensor, int, int]], dtype: int, op: int, total: int,
              copy_out: Optional[Callable[[Sequence[tuple[torch.Tensor, int, int]], torch.Tensor], None]] = None,
              parts: tuple[int, int] = (0, 0)) -> None:
        """All-reduces one round: ``pieces`` are (flat tensor, start, length) filling the slot in order; the result
        goes back into them, or to ``copy_out(pieces, result)`` (a reduce-scatter takes only its part). ``parts``:
        (elements per rank's part, first part's rank) of a reduce-scatter's round over several hosts, or (0, 0)."""
        self._check_alive()
        data, result = self.views[dtype]
        count = sum(length for _, _, length in pieces)
        step = self.chunk if self.chunk and op in (p.OP_SUM, p.OP_AVG) else max(count, 1)
        rang = False
        for lo in range(0, max(count, 1), step):
            hi = min(count, lo + step)
            for flat, start, length, at in _slice(pieces, lo, hi):
                data[at:at + length].copy_(flat[start:start + length])
            if not rang:
                self._request(op, dtype, count, total, 0, 0, *parts, ready=hi)
                rang = True
            else:
                self.counts[0] = hi
                self._send(p.DOORBELL_PROGRESS)
        copied = 0
        while True:
            bell = self._bell()
            if bell != p.DOORBELL_DONE:
                break
            done = self.counts[1]
            if not copied <= done <= count:
                self._fail(errors.AgentProtocolError(f"inagg: agent said {done} elements of all-reduce "
                                                     f"#{self.sequence} are done, not in {copied}..{count}"))
                raise self.failure
            self._copy_out(pieces, result, copied, done, copy_out)
            copied = done
        self._completion(bell)
        self._copy_out(pieces, result, copied, count, copy_out)

    @staticmethod
    def _copy_out(pieces, result: torch.Tensor, lo: int, hi: int, copy_out) -> None:
        """Elements [lo, hi) of the round's result back into the pieces (or to ``copy_out``)."""
        if lo >= hi:
            return
        if copy_out is not None:
            copy_out([(flat, start, length) for flat, start, length, _ in _slice(pieces, lo, hi)], result[lo:hi])
            return
        for flat, start, length, at in _slice(pieces, lo, hi):
            flat[start:start + length].copy_(result[at:at + length])

    def gather_round(self, nbytes: int, total: int, give: Optional[tuple[int, torch.Tensor]],
                     parts: tuple[int, int] = (0, 0)) -> torch.Tensor:
        """One GATHER round of ``nbytes`` bytes (``total``: int32 words of the whole collective): ``give`` is this
        rank's (offset in the round, uint8 bytes) or None; ``parts`` as :meth:`round`'s, in int32 words; returns the
        round's bytes in the result slot, valid until this rank's next round."""
        self._check_alive()
        start, length = 0, 0
        if give is not None:
            start, data = give
            length = data.numel()
            self._data[start:start + length].copy_(data)
        self._ring(p.OP_GATHER, p.DTYPE_INT32, -(-nbytes // 4), total, start, length, *parts)
        return self._result[:nbytes]

    def _check_alive(self) -> None:
        if self.failure is not None:
            raise type(self.failure)(f"{self.failure} (the job failed earlier; create a new process group)")

    def _ring(self, op: int, dtype: int, count: int, total: int, gather_from: int, gather_length: int,
              part_elements: int = 0, part_rank: int = 0) -> None:
        """Writes the request (the whole round copied in), rings, and waits for the completion (raises what the agent
        answered)."""
        self._request(op, dtype, count, total, gather_from, gather_length, part_elements, part_rank, ready=count)
        self._completion(self._bell())

    def _request(self, op: int, dtype: int, count: int, total: int, gather_from: int, gather_length: int,
                 part_elements: int = 0, part_rank: int = 0, *, ready: int) -> None:
        """Writes the next request, ``ready`` elements of it copied in, and rings."""
        self.sequence += 1
        p.REQUEST.pack_into(self.mm, self.descriptor_offset, self.sequence, op, dtype, count, total, gather_from,
                            gather_length, part_elements, part_rank)
        self.counts[0] = ready
        self._send(p.DOORBELL_REQUEST)

    def _send(self, bell: bytes) -> None:
        try:
            self.sock.sendall(bell)
        except socket.timeout as ex:
            # A doorbell that did not go out within the timeout (the agent stopped reading): the agent sums no further
            # than the doorbells announced, so the round could only time out later; fail it now, saying why.
            self._fail(errors.RankFailedError(
                f"inagg: all-reduce #{self.sequence} of rank {self.rank}: the agent took no doorbell within "
                f"{self.timeout:.0f} s (it hangs)"))
            raise self.failure from ex
        except OSError:
            pass  # the agent is gone: the next _bell() says so

    def _bell(self) -> bytes:
        """The agent's next doorbell; b"" when the connection ended."""
        try:
            return self.sock.recv(1)
        except socket.timeout as ex:
            self._fail(errors.RankFailedError(
                f"inagg: all-reduce #{self.sequence} of rank {self.rank}: no answer within {self.timeout:.0f} s "
                "(another rank stopped calling it, or the agent hangs)"))
            raise self.failure from ex
        except OSError:
            return b""

    def _completion(self, bell: bytes) -> None:
        """Checks the completion the agent rang ``bell`` for (raises what the agent answered)."""
        completed, status, length = p.COMPLETION.unpack_from(self.mm, self.descriptor_offset + p.COMPLETION_OFFSET)
        if completed == self.sequence and (bell == p.DOORBELL_COMPLETE or status != p.OK):
            if status != p.OK:
                start = self.descriptor_offset + p.MESSAGE_OFFSET
                length = max(0, min(length, p.MAX_MESSAGE_BYTES))
                message = bytes(self.mm[start:start + length]).decode("utf-8", "replace")
                exc = p.error(status, message)
                if status in p.JOB_ERRORS:  # the agent freed the job
                    self._fail(exc)
                raise exc
        elif not bell:
            self._fail(errors.RankFailedError(
                f"inagg: the agent on {self.socket_path} closed the connection during all-reduce #{self.sequence} "
                "(did it stop?)"))
            raise self.failure
        else:
            self._fail(errors.AgentProtocolError(
                f"inagg: agent answered {bell!r} for all-reduce #{self.sequence} but completed #{completed}"))
            raise self.failure

    def _fail(self, exc: errors.InaggError) -> None:
        self.failure = exc
        self.close(bye=False)

    def close(self, bye: bool = True) -> None:
        if self.closed:
            return
        self.closed = True
        if hasattr(self, "mm"):
            self.staging.unpin()
        try:
            if bye:
                self.sock.sendall(p.DOORBELL_BYE)
        except OSError:
            pass
        self.sock.close()


def _slice(pieces: Sequence[tuple[torch.Tensor, int, int]], lo: int, hi: int):
    """The parts of ``pieces`` (laid end to end in the round) within elements [lo, hi) of the round: (tensor, start,
    length, offset in the round) each."""
    at = 0
    for flat, start, length in pieces:
        a, b = max(lo, at), min(hi, at + length)
        if a < b:
            yield flat, start + a - at, b - a, a
        at += length
        if at >= hi:
            return
