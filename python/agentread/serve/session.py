"""Opt-in: a session's repeated read of an unchanged file answers one line saying so, not the
same text again.

Off by default. A session is one server process: in VS Code one window's server, in MCP one
connection. One that turned it on remembers, for each file and window it read (path, offset, limit,
pages, cells, raw, view), what the file was: size, mtime, ctime, inode and a hash of its bytes (of
the text, for an editor buffer). The same window of the same file, still the same, is answered with
a stub of the same kind and fields, `unchanged: true`, and its text saying so. A changed file,
another window, another session, or a read refused now is read as ever.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from agentread.live import LiveNotebook
from agentread.result import ReadError, ReadResult, TextPart
from agentread.workspace import Resolved, open_verified

if TYPE_CHECKING:
    from agentread.engine import Plan

# Files larger than this are never stubbed: telling them unchanged would mean hashing them whole
# on every read.
MAX_STUB_FILE_BYTES = 16 << 20

# Windows remembered per session, the least recently read dropped first.
MAX_SESSION_READS = 1024

_HASH_CHUNK = 1 << 20


class ReadSession:
    """The reads of one session: `lookup` before a read, `keep` after it. Safe to use from
    several threads."""

    def __init__(self) -> None:
        self._seen: OrderedDict[tuple, tuple[tuple, ReadResult]] = OrderedDict()
        self._lock = threading.Lock()  # reads on several threads look up and remember windows

    def lookup(self, plan: Plan) -> ReadResult | tuple | None:
        """The stub, when this session read this window of this file and it is unchanged since; else
        the mark `keep` takes after the read (None: the read is never stubbed). Hashes the file: on
        a read thread."""
        request = plan.request
        before = _fingerprint(plan.resolved, plan.buffer)
        if before is None:
            return None
        # Every field of the request but the path as given and its consent names what was shown.
        key = (plan.resolved.path, plan.resolved.member, dataclasses.replace(request, path="", consent=frozenset()))
        with self._lock:
            seen = self._seen.get(key)
            if seen is not None and seen[0] == before:
                self._seen.move_to_end(key)
                return _stub(seen[1])
        return key, before

    def keep(self, plan: Plan, mark: tuple | None, result: ReadResult, held: list | None = None) -> None:
        """After the read `lookup` marked: remembered if it showed the file as it was then (with
        `held`, added there instead, for `remember` once the caller knows it was shown whole)."""
        if mark is None:
            return
        key, before = mark
        if result.is_error or not _same(plan, before):  # changed while read: what was shown is unknown
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
                self._seen[key] = (before, dataclasses.replace(result, content=[]))
                self._seen.move_to_end(key)
                if len(self._seen) > MAX_SESSION_READS:
                    self._seen.popitem(last=False)


def _same(plan: Plan, before: tuple) -> bool:
    """Whether the file is as `before` found it: a write changes its ctime, so its status tells
    without hashing it again; an editor buffer is the same text."""
    if isinstance(plan.buffer, str):
        return _fingerprint(plan.resolved, plan.buffer) == before
    try:
        st = os.stat(plan.resolved.path)
    except OSError:
        return False
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) == before[:5]


def _fingerprint(resolved: Resolved, buffer) -> tuple | None:
    """What tells this content of the file from any other; None where no stub is given (a directory,
    a large file, an open notebook, a file replaced since it was resolved)."""
    if isinstance(buffer, LiveNotebook):
        return None
    if isinstance(buffer, str):
        return "buffer", hashlib.blake2b(buffer.encode("utf-8", "surrogatepass")).digest()
    if resolved.is_dir or resolved.st.st_size > MAX_STUB_FILE_BYTES:
        return None
    try:
        # Opened as the engine opens it: never blocking on a FIFO swapped in, and only the
        # file resolved.
        with open_verified(resolved) as f:
            st = os.fstat(f.fileno())
            if st.st_size > MAX_STUB_FILE_BYTES:
                return None
            digest = hashlib.blake2b()
            while chunk := f.read(_HASH_CHUNK):
                digest.update(chunk)
    except (OSError, ReadError):
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, digest.digest()


def _stub(seen: ReadResult) -> ReadResult:
    where = _window(seen)
    text = (f"[Unchanged: {seen.path}{where} is as it was when it was read earlier in this session; that reply "
            "still holds, and is not repeated. Read another range to see more.]")
    return dataclasses.replace(seen, content=[TextPart(text)], unchanged=True)


def _window(seen: ReadResult) -> str:
    if seen.start_line and seen.end_line:
        return f" (lines {seen.start_line}-{seen.end_line})"
    return ""
