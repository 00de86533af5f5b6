"""The agent protocol is written twice, in Java (AgentProtocol, SharedRegion: what the agent speaks) and in Python
(inagg_torch._protocol: what a rank speaks). These tests read the Java sources and fail, naming the constant or the
field, where the two differ; a numeric constant added on the Java side fails them until it is added to _protocol.py
(and to PYTHON_NAME below) or listed in JAVA_ONLY. Needs only the sources, not a build."""

from __future__ import annotations

import re
import struct
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from inagg_torch import _protocol as p

AGENT = Path(__file__).resolve().parents[3] / "services/src/main/java/org/inagg/services/agent"
PROTOCOL_JAVA = AGENT / "AgentProtocol.java"
REGION_JAVA = AGENT / "SharedRegion.java"
DECODER_JAVA = AGENT / "RequestDecoder.java"
AGENT_JAVA = AGENT / "HostAgent.java"

#: Java constant (class.NAME) -> its name in inagg_torch._protocol, where the two names differ.
PYTHON_NAME = {
    "SharedRegion.MAGIC": "SHM_MAGIC",
    "SharedRegion.KEY_OFFSET": "SHM_KEY_OFFSET",
    "SharedRegion.COMPLETED_SEQUENCE": "COMPLETION_OFFSET",
    "SharedRegion.MESSAGE": "MESSAGE_OFFSET",
}
#: Java constants a rank has no use for (limits the agent enforces; offsets Python reads through a struct, checked by
#: the layout tests below).
JAVA_ONLY = {
    "AgentProtocol.MAX_LOCAL_RANKS", "AgentProtocol.MAX_WORLD_SIZE", "AgentProtocol.MAX_HOSTS",
    "SharedRegion.MAX_KEY_BYTES",
    "SharedRegion.REQUEST_SEQUENCE", "SharedRegion.REQUEST_OP", "SharedRegion.REQUEST_DTYPE",
    "SharedRegion.REQUEST_COUNT", "SharedRegion.REQUEST_TOTAL", "SharedRegion.REQUEST_GATHER_FROM",
    "SharedRegion.REQUEST_GATHER_LENGTH", "SharedRegion.REQUEST_PART_ELEMENTS", "SharedRegion.REQUEST_PART_RANK",
    "SharedRegion.STATUS", "SharedRegion.MESSAGE_LENGTH",
}

_CONSTANT = re.compile(r"public\s+static\s+final\s+(?:int|long|short|byte)\s+([A-Z][A-Z0-9_]*)\s*=\s*([^;]+);")


def java_constants(path: Path) -> Dict[str, int]:
    """The numeric ``public static final`` constants of a Java source, their initializers evaluated (literals, char
    literals, and arithmetic on the constants before them)."""
    values: Dict[str, int] = {}
    for name, expression in _CONSTANT.findall(path.read_text()):
        text = re.sub(r"'(.)'", lambda m: str(ord(m.group(1))), expression)
        text = re.sub(r"\b(0[xX][0-9a-fA-F_]+|\d[\d_]*)[lL]\b", r"\1", text)
        text = re.sub(r"\b[A-Za-z]+\.([A-Z][A-Z0-9_]*)\b", r"\1", text)  # AgentProtocol.X -> X
        try:
            values[name] = int(eval(text, {"__builtins__": {}}, dict(values)))  # noqa: S307 - our own source
        except Exception as ex:  # noqa: BLE001
            raise AssertionError(f"{path.name}: cannot evaluate {name} = {expression}: {ex}") from ex
    assert values, f"no constants found in {path}"
    return values


def _java() -> List[Tuple[str, int]]:
    found = []
    for path in (PROTOCOL_JAVA, REGION_JAVA):
        found += [(f"{path.stem}.{name}", value) for name, value in java_constants(path).items()]
    return found


JAVA = _java()


@pytest.mark.parametrize("java_name,value", JAVA, ids=[n for n, _ in JAVA])
def test_every_java_constant_has_the_same_value_in_python(java_name, value):
    if java_name in JAVA_ONLY:
        return
    name = PYTHON_NAME.get(java_name, java_name.split(".", 1)[1])
    assert hasattr(p, name), (f"{java_name} = {value} has no counterpart inagg_torch._protocol.{name}: add it there "
                              f"(or list it in JAVA_ONLY of {Path(__file__).name} if a rank has no use for it)")
    mine = getattr(p, name)
    if isinstance(mine, bytes):
        assert len(mine) == 1, f"_protocol.{name} = {mine!r} is not one byte"
        mine = mine[0]
    assert mine == value, f"{java_name} = {value} (Java) but inagg_torch._protocol.{name} = {mine} (Python)"


def test_the_error_codes_are_the_java_ones_each_with_its_exception():
    codes = {name: value for name, value in JAVA if name.startswith("AgentProtocol.ERROR_")}
    assert set(p.ERRORS) == set(codes.values()), (f"Java's error codes {sorted(codes.items(), key=lambda c: c[1])} "
                                                  f"but _protocol.ERRORS maps {sorted(p.ERRORS)}")
    assert set(p.JOB_ERRORS) <= set(codes.values())


def _struct_fields(layout: struct.Struct, base: int = 0) -> List[Tuple[int, str]]:
    """(offset, 'i' or 'q') of each field of a little-endian struct without padding codes."""
    fields, offset = [], base
    for code in layout.format.lstrip("<"):
        fields.append((offset, code))
        offset += struct.calcsize("<" + code)
    return fields


def test_the_descriptor_request_and_completion_are_where_shared_region_puts_them():
    java = dict(JAVA)
    want = [(java["SharedRegion.REQUEST_SEQUENCE"], "q"), (java["SharedRegion.REQUEST_OP"], "i"),
            (java["SharedRegion.REQUEST_DTYPE"], "i"), (java["SharedRegion.REQUEST_COUNT"], "q"),
            (java["SharedRegion.REQUEST_TOTAL"], "q"), (java["SharedRegion.REQUEST_GATHER_FROM"], "q"),
            (java["SharedRegion.REQUEST_GATHER_LENGTH"], "q"), (java["SharedRegion.REQUEST_PART_ELEMENTS"], "q"),
            (java["SharedRegion.REQUEST_PART_RANK"], "i")]
    assert _struct_fields(p.REQUEST) == want, f"_protocol.REQUEST {p.REQUEST.format}: Java's request fields {want}"
    want = [(java["SharedRegion.COMPLETED_SEQUENCE"], "q"), (java["SharedRegion.STATUS"], "i"),
            (java["SharedRegion.MESSAGE_LENGTH"], "i")]
    got = _struct_fields(p.COMPLETION, p.COMPLETION_OFFSET)
    assert got == want, f"_protocol.COMPLETION {p.COMPLETION.format} at {p.COMPLETION_OFFSET}: Java's fields {want}"
    assert got[-1][0] + 4 == java["SharedRegion.READY_ELEMENTS"]
    assert java["SharedRegion.READY_ELEMENTS"] + 8 == java["SharedRegion.DONE_ELEMENTS"]
    assert java["SharedRegion.DONE_ELEMENTS"] + 8 == java["SharedRegion.MESSAGE"]


def _fields(source: str, pattern: str, what: str) -> Dict[str, Tuple[int, str]]:
    """Java's name of each field -> (literal offset, 'i' or 'q'), for each match of ``pattern`` (groups: type word,
    offset, name) in ``source``."""
    found = {name.strip(): (int(offset), "q" if kind.lower().startswith("long") else "i")
             for kind, offset, name in re.findall(pattern, source)}
    assert found, f"no {what} field with a literal offset found in the Java source any more: update {__file__}"
    return found


def _unmapped(java, mapping, what: str) -> None:
    missing = sorted(set(java) - set(mapping))
    assert not missing, f"{what}: Java has fields {missing} that {Path(__file__).name} does not map to Python's"


#: SharedRegion.create's value expressions -> the index of their field in _protocol.HEADER.
HEADER_FIELDS = {"MAGIC": 0, "AgentProtocol.VERSION": 1, "localRanks": 2, "worldSize": 3, "networkChunkBytes": 4,
                 "slotCapacity": 5, "region.dataOffset": 6, "region.resultOffset()": 7,
                 "ProcessHandle.current().pid()": 8, "keyLength": 9, "chunkElements": 10}


def test_the_shared_memory_header_is_where_shared_region_writes_it():
    java = _fields(REGION_JAVA.read_text(), r"mapping\.set\((INT|LONG),\s*(\d+),\s*([^;]+)\);", "header")
    _unmapped(java, HEADER_FIELDS, "SharedRegion header")
    layout = _struct_fields(p.HEADER)
    for name, place in java.items():
        mine = layout[HEADER_FIELDS[name]]
        assert mine == place, (f"SharedRegion header: {name} is at offset {place[0]} ({place[1]}) in Java, at "
                               f"{mine[0]} ({mine[1]}) in _protocol.HEADER {p.HEADER.format}")
    assert p.HEADER.size <= p.SHM_KEY_OFFSET


def test_the_hello_fields_are_where_the_agent_reads_them():
    """A hello of distinct values, read at the offsets RequestDecoder.decodeHello reads each field from."""
    java = {name: (int(offset), "i") for name, offset in
            re.findall(r"final int (\w+) = f\.getInt\((\d+)\);", DECODER_JAVA.read_text())}
    assert java, f"RequestDecoder reads no hello field at a literal offset any more: update {__file__}"
    key = "job-key"
    want = {"magic": p.HELLO_MAGIC, "version": 7, "rank": 101, "worldSize": 102, "localRank": 103,
            "localWorldSize": 104, "hostIndex": 105, "hosts": 106, "switchJob": 107, "pid": 108,
            "keyLength": len(key)}
    _unmapped(java, want, "hello")
    frame = p.hello(101, 102, 103, 104, 105, 106, 107, 108, key, version=7, collective_timeout_ms=109)
    assert len(frame) == p.HELLO_LENGTH
    for name, (offset, _) in java.items():
        got = struct.unpack_from("<i", frame, offset)[0]
        assert got == want[name], f"hello: the agent reads {name} at offset {offset}, where _protocol.hello() put {got}"
    assert struct.unpack_from("<i", frame, p.HELLO_TIMEOUT_OFFSET)[0] == 109
    assert frame[p.HELLO_KEY_OFFSET:p.HELLO_KEY_OFFSET + len(key)] == key.encode()


def test_the_reply_fields_are_where_the_agent_writes_them():
    """A reply laid out as HostAgent.reply writes it, read back by _protocol.parse_reply."""
    java = _fields(AGENT_JAVA.read_text(), r"\.put(Int|Long)\((\d+),\s*([^)]*)\)", "reply")
    path, message = "/dev/shm/inagg-0/x.shm", "refused: why"
    values = {"status": 5, "AgentProtocol.VERSION": 7, "capacity": 1 << 33, "p.length": len(path),
              "m.length": len(message)}
    _unmapped(java, values, "HostAgent reply")
    frame = bytearray(p.REPLY_LENGTH)
    for name, (offset, code) in java.items():
        struct.pack_into("<" + code, frame, offset, values[name])
    frame[p.REPLY_PATH_OFFSET:p.REPLY_PATH_OFFSET + len(path)] = path.encode()
    frame[p.REPLY_MESSAGE_OFFSET:p.REPLY_MESSAGE_OFFSET + len(message)] = message.encode()
    assert p.parse_reply(bytes(frame)) == (5, 7, 1 << 33, path, message), (
        f"_protocol.parse_reply() does not read the fields where HostAgent writes them: {java}")
