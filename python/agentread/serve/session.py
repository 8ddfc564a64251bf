"""Opt-in: a session's repeated read of an unchanged file answers one line saying so, not the
same text again.

Off by default. A session is one server process: in VS Code one window's server, in MCP one
connection. One that turned it on remembers, for each file and window it read (path, offset, limit,
pages, cells, raw, view), the file's version then (versions.py: what tells one content of a file
from another, as the read gives it). The same window of the same file, still at that version, is
answered with a stub of the same kind and fields, `unchanged: true`, and its text saying so. A
changed file, another window, another session, or a read refused now is read as ever.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, NamedTuple

from agentread.live import LiveNotebook
from agentread.result import ReadError, ReadResult, TextPart

if TYPE_CHECKING:
    from agentread.engine import Plan

# Windows remembered per session, the least recently read dropped first.
MAX_SESSION_READS = 1024


class Mark(NamedTuple):
    """A read `lookup` found no stub for: the window's key, and the file's version as its read
    will give it (engine.plan_version), found once for both."""
    key: tuple
    version: tuple


class ReadSession:
    """The reads of one session: `lookup` before a read, `keep` after it. Safe to use from
    several threads."""

    def __init__(self) -> None:
        self._seen: OrderedDict[tuple, tuple[tuple, ReadResult]] = OrderedDict()
        self._lock = threading.Lock()  # reads on several threads look up and remember windows

    def lookup(self, plan: Plan) -> ReadResult | Mark | None:
        """The stub, when this session read this window of this file and it is unchanged since; else
        the mark `keep` takes after the read, whose version the read is to give (None: the read is
        never stubbed). Reads the file for its version: on a read thread."""
        request = plan.request
        version = _version(plan)
        if version is None:
            return None
        # Every field of the request but the path as given and its consent names what was shown.
        key = (plan.resolved.path, plan.resolved.member, dataclasses.replace(request, path="", consent=frozenset()))
        with self._lock:
            seen = self._seen.get(key)
            if seen is not None and seen[0] == version[0]:
                self._seen.move_to_end(key)
                return _stub(seen[1])
        return Mark(key, version)

    def keep(self, plan: Plan, mark: Mark | None, result: ReadResult, held: list | None = None) -> None:
        """After the read `lookup` marked: remembered if it showed the file as it was then (with
        `held`, added there instead, for `remember` once the caller knows it was shown whole)."""
        if mark is None:
            return
        key, before = mark.key, mark.version[0]
        # A member's result names its own version, not its archive's, which its stub is kept by: an
        # archive changed since it was looked up is not at that version at the next lookup.
        shown = before if plan.resolved.member is not None else result.version
        if result.is_error or shown != before:  # changed since looked up: what was shown is unknown
            with self._lock:
                self._seen.pop(key, None)
            return
        if held is not None:
            held.append((result, key, before))
        else:
            self._remember([(result, key, before)])

    def remember(self, held: list, shown: list[ReadResult]) -> None:
        """Remembers the reads `keep` held back whose results are among `shown` (the
        very objects)."""
        shown_ids = {id(result) for result in shown}
        self._remember([entry for entry in held if id(entry[0]) in shown_ids])

    def _remember(self, entries: list) -> None:
        with self._lock:
            for result, key, before in entries:
                # A read's notes of a change are of that read: its stub says only "unchanged".
                self._seen[key] = (before, dataclasses.replace(result, content=[], changed=False, diff=False))
                self._seen.move_to_end(key)
                if len(self._seen) > MAX_SESSION_READS:
                    self._seen.popitem(last=False)


def _version(plan: Plan) -> tuple | None:
    """(version, size, mtime) of what the plan reads, as the read gives it; None where no stub is
    given (a directory, an open notebook, a file replaced since it was resolved)."""
    from agentread.engine import plan_version

    if plan.resolved.is_dir or isinstance(plan.buffer, LiveNotebook):
        return None
    try:
        return plan_version(plan)
    except (OSError, ReadError):
        return None


def _stub(seen: ReadResult) -> ReadResult:
    where = _window(seen)
    text = (f"[Unchanged: {seen.path}{where} is as it was when it was read earlier in this session; that reply "
            "still holds, and is not repeated. Read another range to see more.]")
    return dataclasses.replace(seen, content=[TextPart(text)], unchanged=True)


def _window(seen: ReadResult) -> str:
    if seen.start_line and seen.end_line:
        return f" (lines {seen.start_line}-{seen.end_line})"
    return ""
