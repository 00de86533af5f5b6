"""A process group's settings: read from the environment once, validated once, when the group is made.

============================  ===========================================================================  ==========
variable                      what                                                                         default
============================  ===========================================================================  ==========
``INAGG_COLLECTIVE_TIMEOUT``  seconds the agent waits for the job's other local ranks once one submitted  group's
``INAGG_TIMEOUT``             seconds this rank waits for gloo, and for the agent's answer                 see below
``INAGG_SWITCH_JOB``          the switch's job id (jobs spanning hosts)                                    1
``INAGG_HOST_ID``             what names this host among the job's (ranks with the same id share an agent) hostname
============================  ===========================================================================  ==========

The agent's connection and start-up variables (``INAGG_AGENT``, ``INAGG_DIR``...) are read by :mod:`._agent`, strict
mode (``INAGG_STRICT``) by :mod:`._fallback`.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import timedelta
from typing import Optional

ENV_HOST_ID = "INAGG_HOST_ID"
ENV_SWITCH_JOB = "INAGG_SWITCH_JOB"
ENV_TIMEOUT = "INAGG_TIMEOUT"
ENV_COLLECTIVE_TIMEOUT = "INAGG_COLLECTIVE_TIMEOUT"
#: Seconds a rank waits for the agent beyond the collective timeout before it gives up on the agent itself: room for
#: the switch stage (the agent's --peer-timeout, 30 s) after the last local rank submitted.
AGENT_GRACE_SECONDS = 60.0
#: torch's default process-group timeout, for a group made without one.
DEFAULT_GROUP_SECONDS = 1800.0


def seconds(variable: str, default: float) -> float:
    """The positive number of seconds in ``variable``, ``default`` when it is unset or empty; raises ValueError naming
    the variable otherwise."""
    text = os.environ.get(variable)
    if text is None or text == "":
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ValueError(f"inagg: {variable}={text!r} is not a positive number of seconds")
    return value


@dataclass(frozen=True)
class Config:
    """What one process group was configured with."""

    #: Seconds the agent fails a round that waits longer for a local rank, naming it.
    collective_timeout: float
    #: Seconds the gloo group waits.
    gloo_timeout: float
    #: Seconds this rank waits for the agent's answer: a little longer than the collective timeout, so that the
    #: agent's named error, not a bare timeout, is what it raises.
    agent_wait: float
    #: The switch's job id.
    switch_job: int
    #: This host's name among the job's hosts.
    host_id: str

    @classmethod
    def from_env(cls, group_timeout: Optional[timedelta]) -> "Config":
        """The settings for a group made with ``group_timeout`` (None: torch's default), from the environment."""
        group_seconds = group_timeout.total_seconds() if group_timeout is not None else DEFAULT_GROUP_SECONDS
        collective_timeout = seconds(ENV_COLLECTIVE_TIMEOUT, group_seconds)
        return cls(collective_timeout=collective_timeout,
                   gloo_timeout=seconds(ENV_TIMEOUT, group_seconds),
                   agent_wait=seconds(ENV_TIMEOUT, collective_timeout + AGENT_GRACE_SECONDS),
                   switch_job=int(os.environ.get(ENV_SWITCH_JOB, "1")),
                   host_id=os.environ.get(ENV_HOST_ID) or socket.gethostname())
