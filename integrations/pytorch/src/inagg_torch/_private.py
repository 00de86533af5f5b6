"""What a rank trusts on its host: the agent's directory, socket and shared-memory files must be this user's own, not
links, and closed to other users (to a group too, unless INAGG_AGENT_GROUP names it); the agent at the other end of the
socket must run as this user (or, with the group, be in it). Java: org.inagg.services.agent.PrivateDirectory and
PeerPolicy check the same from the agent's side; docs/security.md says why.
"""

from __future__ import annotations

import grp
import os
import pwd
import socket
import stat
import struct
from pathlib import Path
from typing import Optional

from . import errors

#: A group whose members' agents and files a rank accepts too (the agent's --allow-group); none by default.
ENV_AGENT_GROUP = "INAGG_AGENT_GROUP"

_PEERCRED = struct.Struct("3i")  # pid, uid, gid (struct ucred)


def allowed_group() -> Optional[int]:
    """The gid of INAGG_AGENT_GROUP, or None."""
    name = os.environ.get(ENV_AGENT_GROUP, "").strip()
    if not name:
        return None
    try:
        return grp.getgrnam(name).gr_gid
    except KeyError:
        raise errors.UntrustedAgentError(f"inagg: {ENV_AGENT_GROUP}={name}: no such group") from None


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _group(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def describe(st: os.stat_result) -> str:
    return f"owner {_name(st.st_uid)}, group {_group(st.st_gid)}, mode {stat.filemode(st.st_mode)}"


def problem(st: os.stat_result, kind: int, group: Optional[int]) -> Optional[str]:
    """Why a file of these attributes is not to be trusted as a ``kind`` (stat.S_IFDIR, S_IFSOCK, S_IFREG), or None."""
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if stat.S_IFMT(st.st_mode) != kind:
        return "it is not a " + {stat.S_IFDIR: "directory", stat.S_IFSOCK: "socket", stat.S_IFREG: "file"}[kind]
    in_group = group is not None and st.st_gid == group
    if st.st_uid != os.geteuid() and not in_group:
        return "it belongs to another user"
    if st.st_mode & 0o007:
        return "other users have access"
    if st.st_mode & 0o070 and not in_group:
        return "its group has access"
    return None


def check(path: Path, st: os.stat_result, kind: int, what: str) -> None:
    """Raises UntrustedAgentError naming ``path``, its owner and mode, when ``st`` (an lstat or fstat of it) is not
    this user's own ``kind`` closed to others."""
    why = problem(st, kind, allowed_group())
    if why is not None:
        raise errors.UntrustedAgentError(
            f"inagg: refusing the agent's {what} {path}: {why} ({describe(st)}); this user ({_name(os.geteuid())}) "
            f"trusts only its own, with no access for others"
            + (f" or group {os.environ[ENV_AGENT_GROUP]}" if allowed_group() is not None else "")
            + "; remove it, or point INAGG_AGENT/INAGG_DIR at your own agent")


def ensure_directory(path: Path) -> None:
    """Creates the agent's private directory (mode 0700) if missing, then checks it is this user's own."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    check(path, os.lstat(path), stat.S_IFDIR, "directory")


def check_socket(path: Path) -> bool:
    """False when nothing is at ``path`` yet; raises when something is there that this user must not trust."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    check(path, st, stat.S_IFSOCK, "socket")
    return True


def check_peer(sock: socket.socket, path: Path) -> None:
    """The process listening on ``path`` runs as this user (or in the allowed group), as the kernel says."""
    pid, uid, gid = _PEERCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size))
    group = allowed_group()
    if uid == os.geteuid() or (group is not None and gid == group):
        return
    raise errors.UntrustedAgentError(
        f"inagg: refusing the agent on {path}: it runs as user {_name(uid)}, group {_group(gid)} (pid {pid}), not as "
        f"this user ({_name(os.geteuid())})"
        + (f" nor in group {os.environ[ENV_AGENT_GROUP]}" if group is not None else "")
        + "; another local user may be impersonating the agent")


def open_shared_file(path: str) -> int:
    """Opens the job's shared-memory file for reading and writing, never through a link, and checks it is this
    user's own and closed to others; the descriptor, checked (fstat) rather than the name."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as ex:
        if os.path.islink(path):
            check(Path(path), os.lstat(path), stat.S_IFREG, "shared-memory file")
        raise errors.UntrustedAgentError(f"inagg: cannot open the agent's shared-memory file {path}: {ex}") from ex
    try:
        check(Path(path), os.fstat(fd), stat.S_IFREG, "shared-memory file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_log(path: Path, max_bytes: int) -> int:
    """The agent's log, appended to (mode 0600, never through a link); past ``max_bytes`` the old one becomes
    ``<path>.1`` first (replacing the one before): a tmpfs log never outgrows twice the cap and one run."""
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            check(path, st, stat.S_IFREG, "log")
        if st.st_size > max_bytes:
            os.replace(path, str(path) + ".1")
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    os.fchmod(fd, 0o600)  # a log of an older version may be 0644
    return fd
