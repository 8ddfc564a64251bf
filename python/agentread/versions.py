"""Versions: what tells one content of a file from another, and what a read says of a file that
changed since an earlier one.

Every file result carries `version` (a short hash), `size` and `mtime`. A file up to
VERSION_HASH_BYTES is hashed whole, so that a version names its bytes alone (a touch or a formatter
that changes nothing keeps it); a larger one by its size, mtime, inode, change time and three
samples of its bytes, so that a windowed read of a huge log stays as quick as it was. A file's
digest is kept by what the file system says of it (`DIGESTS`), as git's index keeps them, so that a
file read again unchanged is not read for its version again. An editor buffer is hashed by its
text, an archive's member by its own bytes. A version ends with check digits
of the file's path and its hash, so that a version no read of that file gave is told from one it
did, without a record of either.

A read with `since` (a version an earlier read gave) answers one line when the file is still at that
version; when it is not, and the session still holds the earlier text, one line when the window's
lines are still those lines at those numbers, else a unified diff of the window against that version
(or, when the window's lines only moved, how far, and the window as it is now); else the fresh read
under a first line saying it changed. A session also says, in a read's first line, that a file
changed since it last read it, and how many lines differ. A server's session is held in memory
(MemoryStore); the command line's, whose every call is a new process, in a folder its calls share
(FolderStore): one logic, two stores. Every file result names its version in its text, added here
(`with_version`), so that every front end shows the same text.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import re
import tempfile
import threading
import time
from collections import OrderedDict
from typing import TYPE_CHECKING

import xxhash

from agentread import workspace
from agentread.hidden import mark_result
from agentread.limits import MIN_REPLY_BYTES, REPLY_FRAME_BYTES
from agentread.numbering import amount
from agentread.result import ReadError, ReadResult, TextPart

if TYPE_CHECKING:
    import difflib

    from agentread.engine import Plan

# Files up to this size are hashed whole: about 10 ms of hashing, small beside reading them. A
# larger file's version is its size, mtime and samples, so that a window of a 1 GB log is read as
# quickly as without versions (a touch then changes its version), and its inode and change time,
# which no write in place keeps (one that keeps the size and sets the mtime back would).
VERSION_HASH_BYTES = 8 << 20
# Of a larger file, the bytes hashed at its start, its middle and its end: an append, the usual
# change of a big log, changes the last sample as well as the size.
VERSION_SAMPLE_BYTES = 64 << 10
# Hex digits of a version: 48 bits of the file's hash, so that two contents of one file never share
# one in practice, then 16 bits of the check, so that a version made up (or another file's) is taken
# for one of this file's once in 65,536 tries.
HASH_DIGITS = 12
CHECK_DIGITS = 4
VERSION_DIGITS = HASH_DIGITS + CHECK_DIGITS
_VERSION = re.compile(f"[0-9a-f]{{{VERSION_DIGITS}}}")
# Files whose digest a process keeps (a server, each of its workers), the least recently read
# dropped first: as many as a session remembers the last version of. An entry is the same size
# whatever the file's (its status and 12 digits, about 400 bytes): 1.6 MB in all.
DIGESTS_KEPT = 4096
# A file whose status changed this recently when it was hashed may be written again within the
# same tick of the file system's clock, keeping its status (FAT keeps times to 2 s, HFS+ to 1 s,
# Linux's file systems to a scheduler tick): its digest is not kept, and it is hashed again at each
# read until then.
RACY_SECONDS = 2

# Text files whose whole text a session holds to diff a later read against: up to this size each,
# and this much in all, the least recently read dropped first. A diff is of the lines a model reads;
# a bigger file is read again in full (windowed) instead.
HELD_TEXT_BYTES = 1 << 20
HELD_TEXTS_BYTES = 32 << 20
# Files whose last version a session remembers, to say a file changed since its last read.
REMEMBERED_FILES = 4096
# Lines of context around each change in a diff, as `diff -u` gives.
DIFF_CONTEXT = 3
# The folder the command line keeps its session in, between calls; set empty, it keeps none.
SESSION_DIR_VARIABLE = "AGENTREAD_SESSION_DIR"
# A file in that folder the index does not name (a change lost to another call's, a call killed
# mid-write) is removed once this old: far longer than a call takes to write a text and name it.
ORPHAN_SECONDS = 600

TEXT_KINDS = ("text", "delimited")  # the kinds whose text a session holds: their lines are the file's lines
# A line with its end, as the editor ends lines (not form feed, U+2028, NEL); the last may lack one.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_LINE_ENDS = {"\r\n": "CRLF", "\n": "LF", "\r": "CR"}
_HASH_CHUNK = 1 << 20


class Digests:
    """The hash digits of the files this process hashed, by each file's status (DIGESTS_KEPT of
    them, the least recently used dropped first). Safe to use from several threads."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple, str] = OrderedDict()
        self._lock = threading.Lock()  # read threads hash files at once

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, key: tuple) -> str | None:
        with self._lock:
            digits = self._kept.get(key)
            if digits is not None:
                self._kept.move_to_end(key)
            return digits

    def keep(self, key: tuple, digits: str) -> None:
        with self._lock:
            self._kept[key] = digits
            self._kept.move_to_end(key)
            while len(self._kept) > DIGESTS_KEPT:
                self._kept.popitem(last=False)


# This process's: a server's, or a worker's, which the server sends every read of a file to while
# it is free (serve/workers.py), so that its digest serves the next read of it there.
DIGESTS = Digests()


def kept_version(st: os.stat_result, path: str) -> str | None:
    """The version of the regular file at `path` whose status is `st`, if its digest is kept for
    that status (DIGESTS); else None (file_version hashes it)."""
    digits = DIGESTS.get(workspace.file_version(st))
    return None if digits is None else _stamped(digits, path)


def file_version(f, path: str) -> str:
    """The version of the regular file open as `f` at `path`: its digest, hashed again only when
    what the file system says of it (workspace.file_version) changed since it was (DIGESTS)."""
    st = os.fstat(f.fileno())
    key = workspace.file_version(st)
    digits = DIGESTS.get(key)
    if digits is None:
        started = time.time_ns()
        digits = hash_digits(f, st.st_size, repr(key).encode())
        if started - max(st.st_mtime_ns, st.st_ctime_ns) >= RACY_SECONDS * 1_000_000_000:
            DIGESTS.keep(key, digits)
    return _stamped(digits, path)


def bytes_version(data: bytes, st: os.stat_result, path: str) -> str:
    """The version of `data`, which stand for the file whose status is `st` (an open notebook's
    cells merged into its outputs): of the bytes, never kept, as they are not the file's."""
    return content_version(io.BytesIO(data), len(data), repr(workspace.file_version(st)).encode(), path)


def content_version(f, size: int, identity: bytes, path: str) -> str:
    """The version of the `size` bytes of the seekable `f`, read at `path` (see hash_digits)."""
    return _stamped(hash_digits(f, size, identity), path)


def hash_digits(f, size: int, identity: bytes) -> str:
    """The hash digits of a version of the `size` bytes of the seekable `f`: of the bytes when
    small, else of `identity` (what tells a large content from another without reading it) and
    samples. Leaves `f` at its start."""
    digest = _digest()
    f.seek(0)
    if size <= VERSION_HASH_BYTES:
        while chunk := f.read(_HASH_CHUNK):
            digest.update(chunk)
    else:
        digest.update(identity)
        for at in (0, size // 2, max(size - VERSION_SAMPLE_BYTES, 0)):
            f.seek(at)
            digest.update(f.read(VERSION_SAMPLE_BYTES))
    f.seek(0)
    return _digits(digest)


def text_version(text: str, path: str) -> str:
    """An editor buffer's version: of its text, as UTF-8."""
    return _stamped(_digits(_digest(text.encode("utf-8", "surrogatepass"))), path)


def _digest(data: bytes = b""):
    """The hash every version is made with: XXH3, a hash made to tell contents apart at the speed
    memory is read (not to resist contents made to collide, as a version needs not: see
    docs/CONTRACT.md "Versions")."""
    return xxhash.xxh3_64(data)


def _digits(digest) -> str:
    return digest.hexdigest()[:HASH_DIGITS]


def _stamped(digits: str, path: str) -> str:
    """A version: the hash's digits, then the check digits of the path and them."""
    return digits + _check(digits, path)


def _check(digits: str, path: str) -> str:
    return xxhash.xxh3_64_hexdigest(f"{path}\0{digits}".encode("utf-8", "surrogatepass"))[:CHECK_DIGITS]


def issued(version: str, path: str) -> bool:
    """Whether `version` is one a read of `path` can have given: its check digits are the path's."""
    return bool(_VERSION.fullmatch(version)) and _check(version[:HASH_DIGITS], path) == version[HASH_DIGITS:]


def path_of(resolved) -> str:
    """The path a file's versions and session records are of: an archive member's own."""
    return resolved.path if resolved.member is None else f"{resolved.path}/{resolved.member}"


def mtime_text(mtime: float) -> str:
    """A modification time as the result gives it: ISO 8601 in UTC, to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(mtime))


def lines_of(text: str) -> list[str]:
    """The lines of `text` as the editor numbers them, each with its line end: a final line end
    starts no other line."""
    return _LINE.findall(text)


def _bare(line: str) -> str:
    """A line of `lines_of` without its line end."""
    return line.rstrip("\r\n")


def since(result: ReadResult, request_since: str | None, path: str, earlier: str | None = None,
          now: str | None = None) -> ReadResult:
    """The answer to a read with `since` of the file at `path`: unchanged (one line), unknown (a
    version no read of it gave: the fresh read under a line saying so), or, given the earlier and
    current texts, what `_window_answer` says of the window; else the fresh read under a line saying
    it changed. Other results as they are."""
    if request_since is None or result.is_error or result.version is None:
        return result
    if request_since == result.version:
        return dataclasses.replace(result, content=[TextPart(
            f"[Unchanged: {result.path} is still at version {result.version}; what that read showed still "
            "holds.]")], unchanged=True, truncated=False, next=None)
    if not issued(request_since, path):
        return noted(result, f"[Unknown version: no read of {result.path} gave version {request_since}, so what "
                             f"changed since cannot be told; it is read below, at version {result.version}. Pass "
                             "`since` the version a read of this file gave: this one's, to ask later.]")
    if earlier is not None and now is not None:
        if "hits" in (result.shown or {}) or "outline" in (result.shown or {}):
            # Hits and outline entries stand for lines the reply does not show: a diff of the file's
            # lines would not say where they are now, so they are given as they are now.
            return noted(result, f"[Changed: {result.path} is no longer at version {request_since} (now "
                                 f"{result.version}; {_differ(differing(lines_of(earlier), lines_of(now)))}); "
                                 "what this read finds in it now follows.]", changed=True)
        answered = _window_answer(result, request_since, lines_of(earlier), lines_of(now))
        if answered is not None:
            return answered
    return noted(result, f"[Changed: {result.path} is no longer at version {request_since} (now "
                         f"{result.version}); it is read again below.]", changed=True)


def noted(result: ReadResult, line: str, changed: bool = False) -> ReadResult:
    """`result` with `line` first."""
    return dataclasses.replace(result, content=[TextPart(line), *result.content], changed=changed or result.changed)


def differing(earlier: list[str], now: list[str]) -> int:
    """How many lines differ: of each changed block, the longer side."""
    return _differing(_matcher(earlier, now).get_opcodes())


def _matcher(earlier: list[str], now: list[str]) -> difflib.SequenceMatcher:
    """The lines matched with their ends: a line whose end changed (CRLF to LF) has changed."""
    import difflib  # imported by the reads that diff: most never do

    return difflib.SequenceMatcher(None, earlier, now, autojunk=False)


def _differing(opcodes) -> int:
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in opcodes if tag != "equal")


def _differ(count: int) -> str:
    return f"{amount(count, 'line')} differ{'s' if count == 1 else ''}"


def _window_answer(result: ReadResult, before: str, earlier: list[str], now: list[str]) -> ReadResult | None:
    """What changed in the window the read shows (its lines, or the whole file) since the earlier
    text. Unchanged only when the window holds the same lines at the same numbers, line ends
    included: one line. Lines that only moved: how far, and the window as it is now. Else the diff
    of the hunks that touch the window as it was or as it is, numbered as the file is now (None
    when it is longer than the read it would replace)."""
    first, last = (result.start_line, result.end_line) if result.start_line and result.end_line and \
        result.start_line > 0 else (1, len(now))
    # A window that reaches the file's end now showed, then, every line the file had from `first`.
    shown = earlier[first - 1:] if last >= len(now) else earlier[first - 1:last]
    matcher = _matcher(earlier, now)
    opcodes = matcher.get_opcodes()
    where = f"lines {first:,}-{last:,}" if (first, last) != (1, len(now)) else "the whole file"
    head = (f"[Changed: {result.path} is no longer at version {before} (now {result.version}; "
            f"{_differ(_differing(opcodes))}).")
    if shown == now[first - 1:last]:
        return _answered(result, head + f" Nothing changed in {where}: what that read showed of them still holds, "
                         "at the same numbers.]")
    start, end = first - 1, first - 1 + len(shown)  # the window as it was, from 0
    moves = {j1 - i1 for tag, i1, i2, j1, _ in opcodes if tag == "equal" and i1 < end and i2 > start}
    moved = next(iter(moves)) if len(moves) == 1 and shown else 0
    if moved and any(tag == "equal" and i1 <= start and end <= i2 for tag, i1, i2, _, _ in opcodes):
        then, now_at = f"{first:,}-{first + len(shown) - 1:,}", f"{first + moved:,}-{first + moved + len(shown) - 1:,}"
        return noted(result, head + f" What that read showed as lines {then} is unchanged, but {_moved(moved)}: "
                     f"they are lines {now_at} now. {where.capitalize()} as they are now follow.]", changed=True)
    groups = [g for g in matcher.get_grouped_opcodes(DIFF_CONTEXT)
              if (g[0][3] < last and g[-1][4] >= first - 1) or (g[0][1] < end and g[-1][2] >= start)]
    if not groups:
        return None
    also = f"; its unchanged lines {_moved(moved)}" if moved else ""
    text = "\n".join([head + f" The diff of {where} against that version follows, numbered as the file is now"
                      f"{also}.]", f"--- {result.path}@{before}", f"+++ {result.path}@{result.version}",
                      *(_hunk(g, earlier, now) for g in groups)])
    answered = _answered(result, text)
    if answered.text_bytes() > max(result.text_bytes(), MIN_REPLY_BYTES - REPLY_FRAME_BYTES):
        return None
    return answered


def _moved(by: int) -> str:
    return (f"moved {amount(abs(by), 'line')} {'down' if by > 0 else 'up'} "
            f"(lines {'added' if by > 0 else 'removed'} above)")


def _answered(result: ReadResult, text: str) -> ReadResult:
    """`result` answered by `text` alone (a diff, or the line saying the window has none): changed,
    nothing to continue. The text is the file's as stored, so its hidden characters are marked and
    counted here (hidden.mark_result), as a read's are: a change cannot bring them in unseen."""
    return mark_result(dataclasses.replace(result, content=[TextPart(text)], changed=True, diff=True,
                                           truncated=False, next=None, hidden=None))


def _hunk(group: list, earlier: list[str], now: list[str]) -> str:
    i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
    lines = [f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@"]
    for tag, a1, a2, b1, b2 in group:
        if tag == "equal":
            lines += [" " + _bare(line) for line in now[b1:b2]]
            continue
        before, after = earlier[a1:a2], now[b1:b2]
        ends = [_bare(line) for line in before] == [_bare(line) for line in after]  # only their ends changed
        lines += ["-" + _bare(line) + (_end(line) if ends else "") for line in before]
        lines += ["+" + _bare(line) + (_end(line) if ends else "") for line in after]
    return "\n".join(lines)


def _end(line: str) -> str:
    """A marker naming the line's end, for lines that differ only there (they look the same)."""
    end = line[len(_bare(line)):]
    return f"  [line end: {_LINE_ENDS.get(end, 'none')}]"


class ManyCall:
    """One read of many files, as its session's versions see it: each file's version before the
    call, and which file each result answered is of (by the result's identity)."""

    def __init__(self) -> None:
        self.before: dict[str, str | None] = {}
        self.answered: dict[int, tuple[ReadResult, str]] = {}  # held, so that no other takes its id


class Versions:
    """A session's memory of versions: the last version of each file it read, and the text of the
    small text files at the versions it read them, kept by its store (in memory for a server, in a
    folder for the command line). Bounded; safe to use from several threads."""

    def __init__(self, store: MemoryStore | FolderStore | None = None) -> None:
        self.store = store if store is not None else MemoryStore()

    @property
    def held_bytes(self) -> int:
        return self.store.held_bytes

    def __len__(self) -> int:
        return len(self.store)

    def answer(self, plan: Plan, result: ReadResult, call: ManyCall | None = None) -> ReadResult:
        """After a read: `since` answered, a change since this session's last read noted, the
        version named in its text (the one place every front end's reply gets it; a file of many
        gets it on its header, `version_tag`), and this version remembered (with its text, for a
        small text file). Reads a small text file again: on a read thread. Of a read of many files,
        `call` keeps the version each file had before it: a file read again there (cut to fit) is
        compared with that one too."""
        if result.is_error or result.version is None:
            return result
        path, version, before = path_of(plan.resolved), result.version, plan.request.since
        last = self.store.swap_last(path, version)
        if call is not None:
            last = call.before.setdefault(path, last)
        result = self._answer(plan, result, path, version, before, last)
        if call is None:
            result = with_version(result)
        else:
            call.answered[id(result)] = (result, path)
        return result

    def flush(self) -> None:
        """What this session changed, kept where its store keeps it (the command line's folder)."""
        self.store.flush()

    def settle(self, call: ManyCall, shown: list[ReadResult]) -> None:
        """After a read of many files: a file it read but did not show (no room left) is, for this
        session, still at the version it had before, so that the next read notes its change."""
        seen = {call.answered[id(r)][1] for r in shown if id(r) in call.answered}
        self.store.restore_last({path: last for path, last in call.before.items() if path not in seen})

    def _answer(self, plan: Plan, result: ReadResult, path: str, version: str, before: str | None,
                last: str | None) -> ReadResult:
        compared = before or last
        now = self.store.text(path, version)
        # The earlier text, before `hold` can drop it; none to look for when it is this version.
        earlier = self.store.text(path, compared) if compared not in (None, version) else None
        if now is None:
            now = self._text_now(plan, version)
        if now is not None:
            self.store.hold(path, version, now)
        if compared in (None, version):  # unchanged, or nothing to compare with
            return since(result, before, path)
        if before is not None:
            return since(result, before, path, earlier, now)
        line = f"[Changed since this session last read {result.path} (version {last}, now {version})"
        if earlier is not None and now is not None:
            line += f": {_differ(differing(lines_of(earlier), lines_of(now)))}; since={last} shows the diff"
        return noted(result, line + ".]", changed=True)

    def _text_now(self, plan: Plan, version: str) -> str | None:
        """The text of a small text file at `version`, or None (another kind, too big, changed
        since the read; a sensitive file read with consent, for a store on disk)."""
        if plan.kind not in TEXT_KINDS or plan.resolved.st.st_size > HELD_TEXT_BYTES:
            return None
        if self.store.on_disk and workspace.SENSITIVE in plan.request.consent:  # a secret is never written out
            return None
        path = path_of(plan.resolved)
        if isinstance(plan.buffer, str):
            return plan.buffer if text_version(plan.buffer, path) == version else None
        try:
            with workspace.open_verified(plan.resolved) as f:
                # The digest kept for the file's status answers without hashing it again.
                if file_version(f, path) != version:
                    return None
                data = f.read(HELD_TEXT_BYTES + 1)
        except (OSError, ReadError):  # gone or replaced since: nothing to hold
            return None
        if len(data) > HELD_TEXT_BYTES:
            return None
        info = plan.info
        return data[info.bom:].decode(info.encoding or "utf-8", errors="replace")


class Held:
    """The bounded record both stores keep: the last version of each file (REMEMBERED_FILES), and
    which texts are held with their sizes (HELD_TEXTS_BYTES in all), least recently used first."""

    def __init__(self, last: list | None = None, texts: list | None = None) -> None:
        self.last: OrderedDict[str, str] = OrderedDict(last or ())
        self.sizes: OrderedDict[tuple[str, str], int] = OrderedDict(((p, v), n) for p, v, n in texts or ())
        self.bytes = sum(self.sizes.values())

    def swap_last(self, path: str, version: str) -> str | None:
        """The last version of `path` remembered, now `version`."""
        last = self.last.pop(path, None)
        self.last[path] = version
        while len(self.last) > REMEMBERED_FILES:
            self.last.popitem(last=False)
        return last

    def restore_last(self, lasts: dict[str, str | None]) -> None:
        for path, last in lasts.items():
            self.last.pop(path, None)
            if last is not None:
                self.last[path] = last

    def add(self, key: tuple[str, str], size: int) -> list[tuple[str, str]]:
        """`key`'s text held (or used again, if it was); the keys dropped to stay in bounds."""
        if key in self.sizes:
            self.sizes.move_to_end(key)
            return []
        self.sizes[key] = size
        self.bytes += size
        dropped = []
        while self.bytes > HELD_TEXTS_BYTES and self.sizes:
            gone, freed = self.sizes.popitem(last=False)
            self.bytes -= freed
            dropped.append(gone)
        return dropped


class MemoryStore:
    """A server's session: held in memory, for as long as the process runs."""

    on_disk = False

    def __init__(self) -> None:
        self._held = Held()
        self._texts: dict[tuple[str, str], str] = {}  # held whole: one object each
        self._lock = threading.Lock()

    @property
    def held_bytes(self) -> int:
        return self._held.bytes  # characters, for a text in memory

    def __len__(self) -> int:
        return len(self._texts)

    def swap_last(self, path: str, version: str) -> str | None:
        with self._lock:
            return self._held.swap_last(path, version)

    def restore_last(self, lasts: dict[str, str | None]) -> None:
        with self._lock:
            self._held.restore_last(lasts)

    def text(self, path: str, version: str) -> str | None:
        with self._lock:
            return self._texts.get((path, version))

    def hold(self, path: str, version: str, text: str) -> None:
        with self._lock:
            key = (path, version)
            self._texts[key] = text
            for gone in self._held.add(key, len(text)):
                del self._texts[gone]

    def flush(self) -> None:
        """Nothing to write: what a server holds lives as long as it does."""


class FolderStore:
    """The command line's session: held in a folder, so that one call sees what an earlier one
    read. Its index (index.json: the Held record) is read at a call's first use and written once at
    its end (`flush`), however many files the call reads; each text is a file named by its path and
    version, written when held. Every file is written whole under another name, then renamed over
    the old one, so that calls running at once never see half a file (one's change may be lost to
    the other's: a session then knows a little less). A folder that cannot be read or written, or
    an index that is not one, is no session: nothing is held, and reads go on."""

    on_disk = True

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self._index = os.path.join(folder, "index.json")
        self._lock = threading.Lock()  # one change at a time within a process
        self._held: Held | None = None  # the index as this call has it, once read
        self._dropped: list[tuple[str, str]] = []  # texts out of the bound, whose files go at `flush`
        self._changed = False

    @property
    def held_bytes(self) -> int:
        with self._lock:
            return self._record().bytes  # bytes of UTF-8 on disk

    def __len__(self) -> int:
        with self._lock:
            return len(self._record().sizes)

    def swap_last(self, path: str, version: str) -> str | None:
        with self._lock:
            self._changed = True
            return self._record().swap_last(path, version)

    def restore_last(self, lasts: dict[str, str | None]) -> None:
        if lasts:
            with self._lock:
                self._changed = True
                self._record().restore_last(lasts)

    def text(self, path: str, version: str) -> str | None:
        try:
            with open(self._text_file(path, version), "rb") as f:
                return f.read().decode("utf-8", "surrogatepass")
        except (OSError, UnicodeDecodeError):
            return None

    def hold(self, path: str, version: str, text: str) -> None:
        data = text.encode("utf-8", "surrogatepass")
        name = self._text_file(path, version)
        with self._lock:
            if not os.path.exists(name) and not self._write(name, data):
                return
            self._changed = True
            self._dropped += self._record().add((path, version), len(data))

    def flush(self) -> None:
        """The call's changes written: the index, then the texts dropped from it (and any left
        behind) removed."""
        with self._lock:
            if not self._changed or not self._save(self._held):
                return
            self._changed = False
            dropped, self._dropped = [key for key in self._dropped if key not in self._held.sizes], []
            for gone in dropped:
                with contextlib.suppress(OSError):
                    os.unlink(self._text_file(*gone))
            if dropped:  # at the bound: any file left behind by an earlier call goes too
                self._sweep(self._held)

    def _record(self) -> Held:
        if self._held is None:
            self._held = self._load()
        return self._held

    def _sweep(self, held: Held) -> None:
        """Removes the old files the index does not name."""
        named = {self._text_file(*key) for key in held.sizes}
        old = time.time() - ORPHAN_SECONDS
        with contextlib.suppress(OSError), os.scandir(self.folder) as entries:
            for entry in entries:
                if entry.name.endswith((".txt", ".part")) and entry.path not in named:
                    with contextlib.suppress(OSError):
                        if entry.stat().st_mtime < old:
                            os.unlink(entry.path)

    def _text_file(self, path: str, version: str) -> str:
        key = xxhash.xxh3_128_hexdigest(f"{path}\0{version}".encode("utf-8", "surrogatepass"))
        return os.path.join(self.folder, key + ".txt")

    def _load(self) -> Held:
        try:
            with open(self._index, "rb") as f:
                index = json.load(f)
            last, texts = index["last"], index["texts"]
            if _rows(last, (str, str)) and _rows(texts, (str, str, int)):
                return Held(last, texts)
        except (OSError, ValueError, KeyError, TypeError):  # none yet, or unreadable
            pass
        return Held()  # none yet, unreadable, or not an index: started afresh

    def _save(self, held: Held) -> bool:
        index = {"last": list(held.last.items()), "texts": [[p, v, n] for (p, v), n in held.sizes.items()]}
        return self._write(self._index, json.dumps(index).encode("ascii"))  # a name's lone surrogates escaped

    def _write(self, name: str, data: bytes) -> bool:
        """`data` as the file `name`, written whole then renamed into place (mode 0600, in a folder
        of mode 0700); False if it could not be."""
        try:
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=self.folder, prefix=".", suffix=".part")
        except OSError:
            return False
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(temporary, name)
            return True
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            return False


def _rows(rows, types: tuple) -> bool:
    """Whether `rows` is a list of lists of `types`."""
    return isinstance(rows, list) and all(
        isinstance(row, list) and len(row) == len(types) and all(isinstance(x, t) for x, t in zip(row, types))
        for row in rows)


def command_line_versions(env=os.environ) -> Versions:
    """The command line's session: in SESSION_DIR_VARIABLE's folder, else in the user's cache; none
    (each call on its own) when that variable is set empty."""
    folder = env.get(SESSION_DIR_VARIABLE)
    if folder is None:
        cache = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(cache, "agentread", "session")
    return Versions(FolderStore(folder) if folder else None)


def version_tag(result: ReadResult) -> str | None:
    """What tells a model, which sees only a reply's text, the version to pass as `since` (and an
    edit tool's check); None for a result without one, or one already saying it (unchanged)."""
    if result.version is None or result.unchanged:
        return None
    return f"[version {result.version}]"


def version_tag_bytes(result: ReadResult) -> int:
    """Bytes the tag adds to the result's text (with the space or line break beside it): a reply
    held to `maxBytes` leaves room for it."""
    tag = version_tag(result)
    return len(tag) + 1 if tag else 0


def with_version(result: ReadResult) -> ReadResult:
    """`result` naming its version, where every front end shows it: first on the closing line of a
    truncated read (which stays last, ending with how to continue), else on a line of its own at the
    end."""
    tag = version_tag(result)
    if tag is None:
        return result
    content = list(result.content)
    last = content[-1] if content else None
    if result.truncated and isinstance(last, TextPart):
        head, end, closing = last.text.rpartition("\n")
        if closing.startswith("[") and closing.endswith("]"):
            content[-1] = TextPart(f"{head}{end}{tag} {closing}")
            return dataclasses.replace(result, content=content)
    return dataclasses.replace(result, content=[*content, TextPart(tag)])
