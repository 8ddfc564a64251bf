"""Versions: what tells one content of a file from another, and what a read says of a file that
changed since an earlier one.

Every file result carries `version` (a short hash), `size` and `mtime`. A file up to
VERSION_HASH_BYTES is hashed whole, so that a version names its bytes alone (a touch or a formatter
that changes nothing keeps it); a larger one by its size, mtime and three samples of its bytes, so
that a windowed read of a huge log stays as quick as it was. An editor buffer is hashed by its text.

A read with `since` (a version an earlier read gave) answers one line when the file is still at that
version; when it is not, a unified diff of the window against that version, if the session still
holds the earlier text, else the fresh read under a first line saying it changed. A server session
also says, in a read's first line, that a file changed since this session last read it, and how many
lines differ. The command line has no session: `since` there tells unchanged from changed only.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import re
import threading
from collections import OrderedDict
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from agentread.limits import MIN_REPLY_BYTES, REPLY_FRAME_BYTES
from agentread.result import ReadError, ReadResult, TextPart

if TYPE_CHECKING:
    from agentread.engine import Plan

# Files up to this size are hashed whole: about 10 ms of hashing, small beside reading them. A
# larger file's version is its size, mtime and samples, so that a window of a 1 GB log is read as
# quickly as without versions (a touch then changes its version).
VERSION_HASH_BYTES = 8 << 20
# Of a larger file, the bytes hashed at its start, its middle and its end: an append, the usual
# change of a big log, changes the last sample as well as the size.
VERSION_SAMPLE_BYTES = 64 << 10
# Hex digits of a version: 64 bits, so that two contents of one file never share one in practice.
VERSION_DIGITS = 16

# Text files whose whole text a session holds to diff a later read against: up to this size each,
# and this much in all, the least recently read dropped first. A diff is of the lines a model reads;
# a bigger file is read again in full (windowed) instead.
HELD_TEXT_BYTES = 1 << 20
HELD_TEXTS_BYTES = 32 << 20
# Files whose last version a session remembers, to say a file changed since its last read.
REMEMBERED_FILES = 4096
# Lines of context around each change in a diff, as `diff -u` gives.
DIFF_CONTEXT = 3

TEXT_KINDS = ("text", "delimited")  # the kinds whose text a session holds: their lines are the file's lines
_LINE_END = re.compile(r"\r\n|\r|\n")  # as the editor ends lines (not form feed, U+2028, NEL)
_HASH_CHUNK = 1 << 20


def file_version(f, size: int, mtime_ns: int) -> str:
    """The version of the open file `f` of `size` bytes: its bytes' hash when small, else of its
    size, mtime and samples. Leaves `f` at its start."""
    digest = hashlib.blake2b(digest_size=VERSION_DIGITS // 2)
    f.seek(0)
    if size <= VERSION_HASH_BYTES:
        while chunk := f.read(_HASH_CHUNK):
            digest.update(chunk)
    else:
        digest.update(b"%d:%d" % (size, mtime_ns))
        for at in (0, size // 2, max(size - VERSION_SAMPLE_BYTES, 0)):
            f.seek(at)
            digest.update(f.read(VERSION_SAMPLE_BYTES))
    f.seek(0)
    return digest.hexdigest()


def text_version(text: str) -> str:
    """An editor buffer's version: of its text, as UTF-8."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=VERSION_DIGITS // 2).hexdigest()


def mtime_text(mtime: float) -> str:
    """A modification time as the result gives it: ISO 8601 in UTC, to the second."""
    return datetime.fromtimestamp(mtime, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def lines_of(text: str) -> list[str]:
    """The lines of `text` as the editor numbers them: a final line end starts no other line."""
    lines = _LINE_END.split(text) if "\r" in text else text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def since(result: ReadResult, request_since: str | None, earlier: list[str] | None = None,
          now: list[str] | None = None) -> ReadResult:
    """The answer to a read with `since`: unchanged (one line), a diff of the window (given the
    earlier and current lines), or the fresh read under a line saying it changed. Other results as
    they are."""
    if request_since is None or result.is_error or result.version is None:
        return result
    if request_since == result.version:
        return dataclasses.replace(result, content=[TextPart(
            f"[Unchanged: {result.path} is still at version {result.version}; what that read showed still "
            "holds.]")], unchanged=True, truncated=False, next=None)
    if earlier is not None and now is not None:
        diffed = _diff_answer(result, request_since, earlier, now)
        if diffed is not None:
            return diffed
    return noted(result, f"[Changed: {result.path} is no longer at version {request_since} (now "
                         f"{result.version}); it is read again below.]", changed=True)


def noted(result: ReadResult, line: str, changed: bool = False) -> ReadResult:
    """`result` with `line` first."""
    return dataclasses.replace(result, content=[TextPart(line), *result.content], changed=changed or result.changed)


def differing(earlier: list[str], now: list[str]) -> int:
    """How many lines differ: of each changed block, the longer side."""
    matcher = difflib.SequenceMatcher(None, earlier, now, autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")


def _diff_answer(result: ReadResult, before: str, earlier: list[str], now: list[str]) -> ReadResult | None:
    """The diff of the window the read shows (its lines, or the whole file) against the earlier
    text; None if it is longer than the read it would replace."""
    matcher = difflib.SequenceMatcher(None, earlier, now, autojunk=False)
    groups = list(matcher.get_grouped_opcodes(DIFF_CONTEXT))
    first, last = (result.start_line, result.end_line) if result.start_line and result.end_line and \
        result.start_line > 0 else (1, len(now))
    shown = [g for g in groups if g[0][3] + 1 <= last and g[-1][4] >= first - 1]
    count = sum(max(i2 - i1, j2 - j1) for g in groups for tag, i1, i2, j1, j2 in g if tag != "equal")
    where = f"lines {first}-{last}" if (first, last) != (1, len(now)) else "the whole file"
    head = (f"[Changed: {result.path} is no longer at version {before} (now {result.version}; {count} line"
            f"{'' if count == 1 else 's'} differ).")
    if not shown:
        text = head + f" Nothing changed in {where}: what that read showed of them still holds.]"
    else:
        text = "\n".join([head + f" The diff of {where} against that version follows, numbered as the file is "
                          "now.]", f"--- {result.path}@{before}", f"+++ {result.path}@{result.version}",
                          *(_hunk(g, earlier, now) for g in shown)])
    if len(text.encode("utf-8")) > max(result.text_bytes(), MIN_REPLY_BYTES - REPLY_FRAME_BYTES):
        return None
    return dataclasses.replace(result, content=[TextPart(text)], changed=True, diff=True, truncated=False,
                               next=None)


def _hunk(group: list, earlier: list[str], now: list[str]) -> str:
    i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
    lines = [f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@"]
    for tag, a1, a2, b1, b2 in group:
        if tag == "equal":
            lines += [" " + line for line in now[b1:b2]]
            continue
        lines += ["-" + line for line in earlier[a1:a2]]
        lines += ["+" + line for line in now[b1:b2]]
    return "\n".join(lines)


class ManyCall:
    """One read of many files, as its session's versions see it: each file's version before the
    call, and which file each result answered is of (by the result's identity)."""

    def __init__(self) -> None:
        self.before: dict[str, str | None] = {}
        self.answered: dict[int, tuple[ReadResult, str]] = {}  # held, so that no other takes its id


class Versions:
    """A session's memory of versions: the last version of each file it read, and the text of the
    small text files at the versions it read them. Bounded; safe to use from several threads."""

    def __init__(self) -> None:
        self._last: OrderedDict[str, str] = OrderedDict()
        self._texts: OrderedDict[tuple[str, str], str] = OrderedDict()  # held whole: one object each
        self._held = 0  # characters held in _texts
        self._lock = threading.Lock()

    @property
    def held_bytes(self) -> int:
        return self._held

    def __len__(self) -> int:
        return len(self._texts)

    def answer(self, plan: Plan, result: ReadResult, call: ManyCall | None = None) -> ReadResult:
        """After a read: `since` answered, a change since this session's last read noted, and
        this version remembered (with its text, for a small text file). Reads a small text file
        again: on a read thread. Of a read of many files, `call` keeps the version each file had
        before it: a file read again there (cut to fit) is compared with that one too."""
        if result.is_error or result.version is None:
            return result
        path, version, before = plan.resolved.path, result.version, plan.request.since
        with self._lock:
            last = self._last.pop(path, None)
            self._last[path] = version
            if len(self._last) > REMEMBERED_FILES:
                self._last.popitem(last=False)
        if call is not None:
            last = call.before.setdefault(path, last)
            result = self._answer(plan, result, path, version, before, last)
            call.answered[id(result)] = (result, path)
            return result
        return self._answer(plan, result, path, version, before, last)

    def settle(self, call: ManyCall, shown: list[ReadResult]) -> None:
        """After a read of many files: a file it read but did not show (no room left) is, for this
        session, still at the version it had before, so that the next read notes its change."""
        seen = {call.answered[id(r)][1] for r in shown if id(r) in call.answered}
        with self._lock:
            for path, last in call.before.items():
                if path in seen:
                    continue
                self._last.pop(path, None)
                if last is not None:
                    self._last[path] = last

    def _answer(self, plan: Plan, result: ReadResult, path: str, version: str, before: str | None,
                last: str | None) -> ReadResult:
        with self._lock:
            now = self._texts.get((path, version))
            earlier = self._texts.get((path, before or last or ""))
        if now is None:
            now = self._text_now(plan, version)
        if now is not None:
            self._hold(path, version, now)
        if (before or last or version) == version:  # unchanged, or nothing to compare with
            return since(result, before)
        if earlier is not None and now is not None:
            earlier, now = lines_of(earlier), lines_of(now)
        if before is not None:
            return since(result, before, earlier, now)
        line = f"[Changed since this session last read {result.path} (version {last}, now {version})"
        if earlier is not None and now is not None:
            count = differing(earlier, now)
            line += f": {count} line{'' if count == 1 else 's'} differ; since={last} shows the diff"
        return noted(result, line + ".]", changed=True)

    def _text_now(self, plan: Plan, version: str) -> str | None:
        """The text of a small text file at `version`, or None (another kind, too big, changed
        since the read)."""
        if plan.kind not in TEXT_KINDS or plan.resolved.st.st_size > HELD_TEXT_BYTES:
            return None
        if isinstance(plan.buffer, str):
            return plan.buffer if text_version(plan.buffer) == version else None
        from agentread.workspace import open_verified

        try:
            with open_verified(plan.resolved) as f:
                data = f.read(HELD_TEXT_BYTES + 1)
        except (OSError, ReadError):  # gone or replaced since: nothing to hold
            return None
        if len(data) > HELD_TEXT_BYTES or hashlib.blake2b(data, digest_size=VERSION_DIGITS // 2).hexdigest() != version:
            return None
        info = plan.info
        return data[info.bom:].decode(info.encoding or "utf-8", errors="replace")

    def _hold(self, path: str, version: str, text: str) -> None:
        with self._lock:
            key = (path, version)
            if key in self._texts:
                self._texts.move_to_end(key)
                return
            self._texts[key] = text
            self._held += len(text)
            while self._held > HELD_TEXTS_BYTES and self._texts:
                _, dropped = self._texts.popitem(last=False)
                self._held -= len(dropped)



def version_line(result: ReadResult) -> str | None:
    """The line that tells a model, which sees only a reply's text, the version to pass as `since`
    (and an edit tool's check); None for a result without one, or one already saying it."""
    if result.version is None or result.unchanged:
        return None
    return f"[version {result.version} · {result.size:,} bytes · modified {result.mtime}]"
