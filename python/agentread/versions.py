"""Versions: what tells one content of a file from another, and what a read says of a file that
changed since an earlier one.

Every file result carries `version` (a short hash), `size` and `mtime`. A file up to
VERSION_HASH_BYTES is hashed whole, so that a version names its bytes alone (a touch or a formatter
that changes nothing keeps it); a larger one by its size, mtime, inode, change time and three
samples of its bytes, so that a windowed read of a huge log stays as quick as it was. An editor
buffer is hashed by its text.

A read with `since` (a version an earlier read gave) answers one line when the file is still at that
version; when it is not, a unified diff of the window against that version, if the session still
holds the earlier text, else the fresh read under a first line saying it changed. A session also
says, in a read's first line, that a file changed since it last read it, and how many lines differ.
A server's session is held in memory (MemoryStore); the command line's, whose every call is a new
process, in a folder its calls share (FolderStore): one logic, two stores. Every file result ends
with its version line, added here, so that every front end shows the same text.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import hashlib
import json
import os
import re
import tempfile
import threading
import time
from collections import OrderedDict
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from agentread import workspace
from agentread.limits import MIN_REPLY_BYTES, REPLY_FRAME_BYTES
from agentread.result import ReadError, ReadResult, TextPart

if TYPE_CHECKING:
    from agentread.engine import Plan

# Files up to this size are hashed whole: about 10 ms of hashing, small beside reading them. A
# larger file's version is its size, mtime and samples, so that a window of a 1 GB log is read as
# quickly as without versions (a touch then changes its version), and its inode and change time,
# which no write in place keeps (one that keeps the size and sets the mtime back would).
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
# The folder the command line keeps its session in, between calls; set empty, it keeps none.
SESSION_DIR_VARIABLE = "AGENTREAD_SESSION_DIR"
# A file in that folder the index does not name (a change lost to another call's, a call killed
# mid-write) is removed once this old: far longer than a call takes to write a text and name it.
ORPHAN_SECONDS = 600

TEXT_KINDS = ("text", "delimited")  # the kinds whose text a session holds: their lines are the file's lines
_LINE_END = re.compile(r"\r\n|\r|\n")  # as the editor ends lines (not form feed, U+2028, NEL)
_HASH_CHUNK = 1 << 20


def file_version(f, size: int, st: os.stat_result) -> str:
    """The version of the open file `f` of `size` bytes (whose file system entry `st` is): its
    bytes' hash when small, else of its size, identity (workspace.file_version) and samples. Leaves
    `f` at its start."""
    digest = _digest()
    f.seek(0)
    if size <= VERSION_HASH_BYTES:
        while chunk := f.read(_HASH_CHUNK):
            digest.update(chunk)
    else:
        digest.update(repr((size, *workspace.file_version(st))).encode())
        for at in (0, size // 2, max(size - VERSION_SAMPLE_BYTES, 0)):
            f.seek(at)
            digest.update(f.read(VERSION_SAMPLE_BYTES))
    f.seek(0)
    return digest.hexdigest()


def text_version(text: str) -> str:
    """An editor buffer's version: of its text, as UTF-8."""
    return _digest(text.encode("utf-8", "surrogatepass")).hexdigest()


def _digest(data: bytes = b""):
    """The hash every version is made with."""
    return hashlib.blake2b(data, digest_size=VERSION_DIGITS // 2)


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
    return _differing(difflib.SequenceMatcher(None, earlier, now, autojunk=False).get_opcodes())


def _differing(opcodes) -> int:
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in opcodes if tag != "equal")


def _lines_differ(count: int) -> str:
    return f"{count} line{'' if count == 1 else 's'} differ"


def _diff_answer(result: ReadResult, before: str, earlier: list[str], now: list[str]) -> ReadResult | None:
    """The diff of the window the read shows (its lines, or the whole file) against the earlier
    text; None if it is longer than the read it would replace."""
    matcher = difflib.SequenceMatcher(None, earlier, now, autojunk=False)
    groups = list(matcher.get_grouped_opcodes(DIFF_CONTEXT))
    first, last = (result.start_line, result.end_line) if result.start_line and result.end_line and \
        result.start_line > 0 else (1, len(now))
    shown = [g for g in groups if g[0][3] + 1 <= last and g[-1][4] >= first - 1]
    count = _differing(opcode for group in groups for opcode in group)
    where = f"lines {first}-{last}" if (first, last) != (1, len(now)) else "the whole file"
    head = f"[Changed: {result.path} is no longer at version {before} (now {result.version}; {_lines_differ(count)})."
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
        version line added (the one place every front end's reply, and each file of many, gets
        it), and this version remembered (with its text, for a small text file). Reads a small
        text file again: on a read thread. Of a read of many files, `call` keeps the version each
        file had before it: a file read again there (cut to fit) is compared with that one too."""
        if result.is_error or result.version is None:
            return result
        path, version, before = plan.resolved.path, result.version, plan.request.since
        last = self.store.swap_last(path, version)
        if call is not None:
            last = call.before.setdefault(path, last)
        result = with_version_line(self._answer(plan, result, path, version, before, last))
        if call is not None:
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
            return since(result, before)
        if earlier is not None and now is not None:
            earlier, now = lines_of(earlier), lines_of(now)
        if before is not None:
            return since(result, before, earlier, now)
        line = f"[Changed since this session last read {result.path} (version {last}, now {version})"
        if earlier is not None and now is not None:
            line += f": {_lines_differ(differing(earlier, now))}; since={last} shows the diff"
        return noted(result, line + ".]", changed=True)

    def _text_now(self, plan: Plan, version: str) -> str | None:
        """The text of a small text file at `version`, or None (another kind, too big, changed
        since the read; a sensitive file read with consent, for a store on disk)."""
        if plan.kind not in TEXT_KINDS or plan.resolved.st.st_size > HELD_TEXT_BYTES:
            return None
        from agentread.workspace import SENSITIVE, open_verified

        if self.store.on_disk and SENSITIVE in plan.request.consent:  # a secret is never written out
            return None
        if isinstance(plan.buffer, str):
            return plan.buffer if text_version(plan.buffer) == version else None
        try:
            with open_verified(plan.resolved) as f:
                data = f.read(HELD_TEXT_BYTES + 1)
        except (OSError, ReadError):  # gone or replaced since: nothing to hold
            return None
        if len(data) > HELD_TEXT_BYTES or _digest(data).hexdigest() != version:
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
        key = hashlib.blake2b(f"{path}\0{version}".encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
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


def version_line_bytes(result: ReadResult) -> int:
    """Bytes the version line adds to the result's text: a reply held to `maxBytes` leaves room
    for it."""
    line = version_line(result)
    return len(line.encode("utf-8")) + 1 if line else 0


def with_version_line(result: ReadResult) -> ReadResult:
    """`result` ending with its version line (if it has one): what every front end shows."""
    line = version_line(result)
    return dataclasses.replace(result, content=[*result.content, TextPart(line)]) if line else result


def version_line(result: ReadResult) -> str | None:
    """The line that tells a model, which sees only a reply's text, the version to pass as `since`
    (and an edit tool's check); None for a result without one, or one already saying it."""
    if result.version is None or result.unchanged:
        return None
    return f"[version {result.version} · {result.size:,} bytes · modified {result.mtime}]"
