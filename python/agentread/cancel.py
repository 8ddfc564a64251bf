"""Cooperative cancellation: a reader calls `checkpoint()` in its loops; a cancelled request
stops there.

The server runs each read in a worker thread with its own event; `$/cancelRequest` sets it.
"""

from __future__ import annotations

import threading
from typing import Callable, TypeVar

T = TypeVar("T")
_current = threading.local()


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
