"""The agent protocol (Java: org.inagg.services.agent.AgentProtocol, which draws the frames, and SharedRegion, which
draws the shared-memory file). tests/test_protocol.py reads the Java constants and fails, naming the constant, when
the two sides differ; a constant added on the Java side must be added here or listed there as Java's own."""

from __future__ import annotations

import struct
import sys

from . import errors

VERSION = 4  # 4: the header's network chunk bytes (compared across hosts: _agreement.py)
HELLO_MAGIC = 0x48414E49
HELLO_LENGTH = 256
HELLO_KEY_OFFSET = 44
HELLO_TIMEOUT_OFFSET = 252  # collective timeout in ms; 0: the agent's default
MAX_KEY_BYTES = HELLO_TIMEOUT_OFFSET - HELLO_KEY_OFFSET
MAX_TIMEOUT_MS = 2 ** 31 - 1
REPLY_LENGTH = 512
REPLY_PATH_OFFSET = 24
PATH_BYTES = 200
REPLY_MESSAGE_OFFSET = REPLY_PATH_OFFSET + PATH_BYTES
MESSAGE_BYTES = REPLY_LENGTH - REPLY_MESSAGE_OFFSET

DOORBELL_REQUEST = b"R"
DOORBELL_BYE = b"B"
DOORBELL_COMPLETE = b"C"
DOORBELL_PROGRESS = b"P"  # rank -> agent: its ready count grew (it copied the next chunk in)
DOORBELL_DONE = b"D"  # agent -> rank: the done count grew (that much of the result may be copied out)

OP_SUM = 1
OP_AVG = 2
OP_GATHER = 3  # not a sum: each rank gives a byte range of the round (all-gather, broadcast)
OP_MIN = 4  # element-wise minimum (exact; the switch's MIN between hosts)
OP_MAX = 5  # element-wise maximum
DTYPE_FLOAT32 = 1
DTYPE_INT32 = 2

# Shared-memory file (SharedRegion.java draws it).
SHM_MAGIC = 0x4D48534747414E49
HEADER_LENGTH = 4096
DESCRIPTOR_LENGTH = 512
SHM_KEY_OFFSET = 64  # the job key in the header, UTF-8
#: sequence, op, dtype, count, collective total, gather from, gather length (bytes), part elements, part rank at
#: descriptor offset 0
REQUEST = struct.Struct("<qiiqqqqqi")
COMPLETION = struct.Struct("<qii")  # completed sequence, status, message length at offset 64
COMPLETION_OFFSET = 64
READY_ELEMENTS = 80  # long, written by the rank: elements of the round its data region holds
DONE_ELEMENTS = 88  # long, written by the agent: elements of the result that are final
MESSAGE_OFFSET = 96
MAX_MESSAGE_BYTES = DESCRIPTOR_LENGTH - MESSAGE_OFFSET


def counts(buffer, descriptor_offset: int) -> memoryview:
    """A descriptor's ready count ([0], the rank's) and done count ([1], the agent's) as native int64 words (the
    platforms inagg runs on are little-endian, as the file is), each stored and loaded whole.

    Each count is written by one side while the other may read it: the agent reads a rank's ready count when it
    handles a progress doorbell, possibly while the rank already writes the next chunk's. ``struct.pack_into`` is no
    way to write them: it zeroes the field before packing it byte by byte, and an agent reading in between saw a ready
    count of 0 below the one it had read before (failing the job). A memoryview item is one aligned 8-byte store or
    load (the fields are 8-aligned in a page-aligned mapping).

    Ordering: on x86-64 (total store order) a rank's data stores are visible before the count store that follows
    them, so a count the agent reads covers data it can read. On weakly ordered CPUs (aarch64) nothing here orders
    them, so the agent sums no further than the doorbells announced: the request the first chunk, each progress
    doorbell one more (``RequestDecoder.announcedReady``; a doorbell is a system call, which orders them). A rank must
    therefore ring once per chunk, never once for several. The done count the other way (network chunks, off by
    default) is not yet covered: a rank reads whatever done count is there when a DONE doorbell comes (issue 25)."""
    if sys.byteorder != "little":
        raise errors.AgentMismatchError("inagg: the agent's shared memory is little-endian, this host is not")
    if descriptor_offset % 8:
        raise ValueError(f"descriptor at {descriptor_offset} is not 8-aligned")
    start = descriptor_offset + READY_ELEMENTS
    return memoryview(buffer)[start:start + 16].cast("q")


#: magic, version, local ranks, world, network chunk bytes (0: rounds through the switch whole), capacity, data, result,
#: pid, key length, chunk elements (0: whole rounds)
HEADER = struct.Struct("<qiiiiqqqqii")

OK = 0
ERROR_BAD_REQUEST = 1
ERROR_SIZE_MISMATCH = 2
ERROR_NON_FINITE = 3
ERROR_RANK_LEFT = 4
ERROR_JOB_MISMATCH = 5
ERROR_VERSION = 6
ERROR_WORLD_MISMATCH = 7
ERROR_SHM_FULL = 8
ERROR_NETWORK = 9
ERROR_OP_MISMATCH = 10
ERROR_COLLECTIVE_TIMEOUT = 11
#: The exception each status raises.
ERRORS = {
    ERROR_BAD_REQUEST: errors.AgentProtocolError,
    ERROR_SIZE_MISMATCH: errors.TensorMismatchError,
    ERROR_NON_FINITE: errors.NonFiniteError,
    ERROR_RANK_LEFT: errors.RankFailedError,
    ERROR_JOB_MISMATCH: errors.AgentMismatchError,
    ERROR_VERSION: errors.AgentMismatchError,
    ERROR_WORLD_MISMATCH: errors.WorldMismatchError,
    ERROR_SHM_FULL: errors.SharedMemoryFullError,
    ERROR_NETWORK: errors.SwitchStageError,
    ERROR_OP_MISMATCH: errors.TensorMismatchError,
    ERROR_COLLECTIVE_TIMEOUT: errors.RankFailedError,
}
#: Statuses after which the agent has freed the job (the others fail one all-reduce only).
JOB_ERRORS = (ERROR_BAD_REQUEST, ERROR_RANK_LEFT, ERROR_SHM_FULL, ERROR_NETWORK, ERROR_COLLECTIVE_TIMEOUT)


def error(status: int, message: str) -> errors.InaggError:
    """The exception for an agent status code."""
    return ERRORS.get(status, errors.InaggError)(f"inagg: {message}")


def hello(rank: int, world: int, local_rank: int, local_world: int, host_index: int, hosts: int, switch_job: int,
          pid: int, key: str, version: int = VERSION, collective_timeout_ms: int = 0) -> bytes:
    raw = key.encode("utf-8")
    if not 1 <= len(raw) <= MAX_KEY_BYTES:
        raise ValueError(f"job key of {len(raw)} bytes is not in 1..{MAX_KEY_BYTES}")
    frame = bytearray(HELLO_LENGTH)
    struct.pack_into("<11i", frame, 0, HELLO_MAGIC, version, rank, world, local_rank, local_world, host_index, hosts,
                     switch_job, pid, len(raw))
    frame[HELLO_KEY_OFFSET:HELLO_KEY_OFFSET + len(raw)] = raw
    struct.pack_into("<i", frame, HELLO_TIMEOUT_OFFSET, max(0, min(collective_timeout_ms, MAX_TIMEOUT_MS)))
    return bytes(frame)


def parse_reply(frame: bytes) -> tuple[int, int, int, str, str]:
    """(status, version, slot capacity, shm path, message)."""
    status, version, capacity, path_length, message_length = struct.unpack_from("<iiqii", frame, 0)
    path = frame[REPLY_PATH_OFFSET:REPLY_PATH_OFFSET + max(0, min(path_length, PATH_BYTES))].decode("utf-8", "replace")
    message = frame[REPLY_MESSAGE_OFFSET:REPLY_MESSAGE_OFFSET + max(0, min(message_length, MESSAGE_BYTES))].decode(
        "utf-8", "replace")
    return status, version, capacity, path, message
