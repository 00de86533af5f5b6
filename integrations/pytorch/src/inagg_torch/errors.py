"""Exceptions of the inagg backend: each names what went wrong; all derive from :class:`InaggError`."""

from __future__ import annotations

__all__ = [
    "InaggError",
    "AgentUnavailableError",
    "UntrustedAgentError",
    "AgentMismatchError",
    "AgentSettingsMismatchError",
    "WorldMismatchError",
    "TensorMismatchError",
    "NonFiniteError",
    "SharedMemoryFullError",
    "RankFailedError",
    "SwitchStageError",
    "AgentProtocolError",
    "UnsupportedError",
    "BadInputError",
    "WaitTimeoutError",
]


class InaggError(RuntimeError):
    """Base class of every error the inagg backend raises."""


class AgentUnavailableError(InaggError):
    """No agent is listening and none could be started."""


class UntrustedAgentError(AgentUnavailableError):
    """The agent's socket, directory or shared-memory file is not this user's own, or others may use it (a link, another
    owner, group or other permission bits): the rank refuses it rather than hand its tensors to another local user."""


class AgentMismatchError(InaggError):
    """The agent on this name serves another job, or speaks another protocol version."""


class AgentSettingsMismatchError(AgentMismatchError):
    """The agents of a job's hosts differ in a setting every host must share (``--slot-bytes``,
    ``--network-chunk-bytes``): their packets would not match at the switch. Raised on every rank when the process
    group is made."""


class WorldMismatchError(InaggError):
    """Ranks disagree on rank, world size or local world size."""


class TensorMismatchError(InaggError):
    """Ranks handed tensors of different sizes, element types or ops to the same all-reduce."""


class NonFiniteError(InaggError, ValueError):
    """A float tensor (or the sum) holds NaN or infinity."""


class SharedMemoryFullError(InaggError, MemoryError):
    """Not enough shared memory (/dev/shm) for the job's buffers."""


class RankFailedError(InaggError):
    """Another rank left or died in the middle of a collective, or did not answer in time; the job is over."""


class SwitchStageError(InaggError):
    """The all-reduce between hosts through the switch failed."""


class AgentProtocolError(InaggError):
    """The agent refused a malformed request."""


class UnsupportedError(InaggError, TypeError):
    """An op or element type the backend cannot run and cannot hand to gloo with the same result."""


class BadInputError(InaggError, ValueError):
    """A collective was called with tensors that cannot go together on this rank (sizes, element types) or a root
    rank outside the group; raised before anything is sent, with the tensors untouched."""


class WaitTimeoutError(InaggError, TimeoutError):
    """``Work.wait(timeout)`` returned before the collective finished (the collective itself goes on)."""
