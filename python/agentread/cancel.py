"""Cooperative cancellation: a reader calls `checkpoint()` in its loops; a cancelled request
stops there.

The server runs each read in a worker thread with its own event; `$/cancelRequest` sets it, and so
does the read's deadline (read_deadline), by which a search stops itself first (find.py).
"""

from __future__ import annotations

import math
import os
import threading
from typing import Callable, TypeVar

from agentread.logs import logger

T = TypeVar("T")
_current = threading.local()

# A read still running after this long is answered with a `timeout` error and told to stop (in a
# worker process: the worker is killed): an agent must not hang on a hostile file. Generous,
# because paging a big PDF cold can take seconds on a slow machine. A read is timed from its start
# (on a thread, in a worker), not while it waits its turn. AGENTREAD_READ_DEADLINE sets another
# (tests use short ones).
DEFAULT_READ_DEADLINE_SECONDS = 60.0
DEADLINE_VARIABLE = "AGENTREAD_READ_DEADLINE"


class Cancelled(Exception):
    """The client cancelled the request; nobody is waiting for its answer."""


def checkpoint() -> None:
    if stopped():
        raise Cancelled()


def stopped() -> bool:
    """Whether this thread's read is cancelled, for code that cannot raise (a callback from C)."""
    event = getattr(_current, "event", None)
    return event is not None and event.is_set()


def run_cancellable(event: threading.Event, fn: Callable[..., T], *args) -> T:
    _current.event = event
    try:
        return fn(*args)
    finally:
        _current.event = None


def read_deadline(env=os.environ) -> float:
    """AGENTREAD_READ_DEADLINE in seconds; a value that is not a positive finite number keeps the
    default, with a warning."""
    raw = env.get(DEADLINE_VARIABLE)
    if raw is None:
        return DEFAULT_READ_DEADLINE_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if 0 < seconds < math.inf:
        return seconds
    logger(__name__).warning("%s=%r is not a positive number of seconds; the default is used", DEADLINE_VARIABLE, raw)
    return DEFAULT_READ_DEADLINE_SECONDS
