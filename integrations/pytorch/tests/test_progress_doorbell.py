"""A rank's chunked round as the agent sees it: the agent reads a rank's ready count whenever it handles one of its
doorbells, which may be while the rank already writes the next chunk's count. Every count it can read must be one the
rank published, never below one it read before (the agent fails the job on a count that shrinks: "ready count 0 of
round #153 is not in 5120..8320", seen under torchrun when the rank wrote the count with struct.pack_into, which zeroes
the field before packing it)."""

from __future__ import annotations

import mmap
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import torch

from inagg_torch import _protocol as p
from inagg_torch._agent import AgentClient
from inagg_torch._staging import DeviceStaging

#: ROUNDS rounds of COUNT elements, copied in chunks of CHUNK: one progress doorbell each (the old struct writes were
#: caught in 3 runs of 3 on a loaded 2-core machine: the check needs the two processes on two cores at once)
ROUNDS = 3
COUNT = 100_000
CHUNK = 1
DATA = p.HEADER_LENGTH + p.DESCRIPTOR_LENGTH  # data region at 4096 + 512 (8-aligned is all the counts need)


def _rank_side(mm: mmap.mmap, sock: socket.socket) -> AgentClient:
    """A client of local rank 0 mapped onto ``mm`` as AgentClient._map maps a job's file (no agent, no hello)."""
    client = AgentClient.__new__(AgentClient)
    client.rank = client.local_rank = 0
    client.timeout = 60.0
    client.sequence = 0
    client.closed = False
    client.failure = None
    client.staging = DeviceStaging()
    client.sock, client.socket_path = sock, "socketpair"
    client.mm = mm
    client.chunk = CHUNK
    client.descriptor_offset = p.HEADER_LENGTH
    client.counts = p.counts(mm, client.descriptor_offset)
    whole = torch.frombuffer(mm, dtype=torch.uint8)
    data = whole[DATA:DATA + COUNT * 4]
    result = whole[DATA + COUNT * 4:DATA + COUNT * 8]
    client.views = {p.DTYPE_FLOAT32: (data.view(torch.float32), result.view(torch.float32))}
    client.elements = COUNT
    return client


def rank_main(path: str, fd: int) -> int:
    """The rank (a process of its own, started fresh: a fork of a process running torch's threads may hang): ROUNDS
    chunked SUM rounds through the shared file ``path`` and the socket ``fd``; exit 0 when each result came back."""
    with open(path, "r+b") as file:
        mm = mmap.mmap(file.fileno(), DATA + COUNT * 8, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    rank = _rank_side(mm, socket.socket(fileno=fd))
    for r in range(ROUNDS):
        tensor = torch.arange(COUNT, dtype=torch.float32)
        rank.round([(tensor, 0, COUNT)], p.DTYPE_FLOAT32, p.OP_SUM, COUNT)
        if not torch.equal(tensor, torch.full((COUNT,), float(r))):
            return 2
    return 0


def test_the_agent_never_reads_a_ready_count_the_rank_did_not_publish(tmp_path):
    path = tmp_path / "job.shm"
    path.write_bytes(bytes(DATA + COUNT * 8))
    with open(path, "r+b") as file:
        mm = mmap.mmap(file.fileno(), DATA + COUNT * 8, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    agent_end, rank_end = socket.socketpair()
    agent_end.settimeout(60)
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import test_progress_doorbell as t; "
            f"sys.exit(t.rank_main({str(path)!r}, {rank_end.fileno()}))")
    process = subprocess.Popen([sys.executable, "-c", code], pass_fds=[rank_end.fileno()])
    rank_end.close()
    # The agent: after each doorbell (and between them, as a busy agent would), the rank's current count.
    ready = p.counts(mm, p.HEADER_LENGTH)
    reads, wrong = 0, []
    try:
        for r in range(ROUNDS):
            bells = bytearray()
            seen = 0
            deadline = time.monotonic() + 60
            while len(bells) < -(-COUNT // CHUNK) and time.monotonic() < deadline:
                if select.select([agent_end], [], [], 0)[0]:
                    got = agent_end.recv(65536)
                    assert got, "the rank closed its end before its last chunk"
                    bells += got
                if not bells:
                    continue
                for _ in range(200):
                    value = ready[0]
                    reads += 1
                    if value < seen or value > COUNT or (value % CHUNK and value != COUNT):
                        wrong.append((r + 1, seen, value))
                    seen = max(seen, value)
            assert bells[:1] == p.DOORBELL_REQUEST and set(bells[1:]) <= {p.DOORBELL_PROGRESS[0]}, bytes(bells[:16])
            assert len(bells) == COUNT // CHUNK and ready[0] == COUNT
            torch.frombuffer(mm, dtype=torch.float32, offset=DATA + COUNT * 4, count=COUNT).fill_(float(r))
            p.COMPLETION.pack_into(mm, p.HEADER_LENGTH + p.COMPLETION_OFFSET, r + 1, p.OK, 0)
            agent_end.sendall(p.DOORBELL_COMPLETE)
    finally:
        agent_end.close()
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
    assert not wrong, (f"{len(wrong)} of {reads} reads of the ready count saw a count the rank never published "
                       f"(round, last seen, read): {wrong[:5]}")
    assert process.returncode == 0
