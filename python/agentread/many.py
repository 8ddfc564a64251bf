"""Many files in one reply: paths and globs → one read each → the reply's budget shared → one reply and its `next`.

The reply holds what a single read may (MAX_LINES lines and MAX_OUTPUT_BYTES of text, MAX_MANY_IMAGES images),
shared so that no file starves the rest: each file asks for what its read gives alone; the budget goes first to
the files that need least (each gets all it asks for while that is under an equal share of what is left), and
the rest is split evenly among the larger ones. A file over its share is read again by lines, as many as fit;
one that cannot be cut by lines (an image, a listing) and does not fit is not shown. `next` continues exactly
where the reply stopped: the `next` of each file cut, then the files not shown, in order.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from agentread.cancel import checkpoint
from agentread.limits import MAX_LINES, MAX_OUTPUT_BYTES
from agentread.request import InvalidParams, ReadRequest, parse_request
from agentread.result import ImagePart, ReadError, ReadResult, TextPart, error_result, sendable

# Files a call. With more, a file's share of the reply falls under 20 lines, too little to be worth a header.
MAX_MANY_FILES = 100

# Matches of one glob looked at: a `**` over a huge tree (node_modules) must answer quickly; past this the reply
# says the listing stopped.
MAX_GLOB_MATCHES = 10_000
# Folders one glob's walk opens, for the same reason: a `**` over node_modules stops here and says so.
MAX_GLOB_DIRS = 10_000
# Entries of one folder between two cancellation checks: a folder of a million files must still stop when asked.
SCAN_CHECK_EVERY = 4096

# Images a reply attaches, and their encoded bytes: what a single Word read attaches at most (ten, about 10 MB).
MAX_MANY_IMAGES = 10
MAX_MANY_IMAGE_BYTES = 10 << 20

# Kept back from the budget for the closing lines that say what was cut and how to continue: a few lines, and
# for each file cut or not shown, room to name it twice (where it stops, and in `next`) with its window.
SUMMARY_RESERVE_LINES = 6
SUMMARY_RESERVE_BYTES = 500
SUMMARY_RESERVE_PER_FILE = 80

# Reads of a file over its share, each by fewer lines than the last, before it is left for `next`.
MAX_FIT_TRIES = 4
# Lines differ in length: a re-read aims this far under the share, so that one more is rarely needed.
FIT_MARGIN = 0.95

# Kinds whose reads can be cut by offset/limit (lines; a spreadsheet's rows).
_BY_LINES = {"text", "pdf", "notebook", "document", "presentation", "spreadsheet"}

# A request's window: the fields of one entry besides its path.
_WINDOW = ("offset", "limit", "pages", "cells", "raw")

Read = Callable[[ReadRequest], ReadResult]


@dataclass(frozen=True)
class ManyRequest:
    entries: tuple[ReadRequest, ...]  # as given: a path may be a glob


@dataclass
class FileRead:
    request: ReadRequest  # the file as listed (a glob's match, by its path from the root)
    result: ReadResult | None = None  # None: not shown, no room left
    images_dropped: int = 0  # image parts left out once the reply's images were spent

    @property
    def state(self) -> str:
        """whole | cut | error | not_shown."""
        if self.result is None:
            return "not_shown"
        if self.result.is_error:
            return "error"
        return "cut" if self.result.next is not None else "whole"


@dataclass
class ManyResult:
    files: list[FileRead]
    content: list[TextPart | ImagePart] = field(default_factory=list)
    next: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)  # what the listing left out (caps, matches outside the roots)

    @property
    def truncated(self) -> bool:
        return self.next is not None or bool(self.notes) or any(f.images_dropped for f in self.files)

    def text(self) -> str:
        return ReadResult(kind="many", path="", content=self.content).text()

    def to_json(self) -> dict[str, Any]:
        files = []
        for f in self.files:
            entry: dict[str, Any] = {"path": sendable(f.request.path), "state": f.state}
            if f.result is not None:
                whole = f.result.to_json()
                entry.update({k: whole[k] for k in ("kind", "truncated", "next", "shown", "error") if k in whole})
            if f.images_dropped:
                entry["imagesLeftOut"] = f.images_dropped
            files.append(entry)
        out: dict[str, Any] = {"kind": "many", "content": [p.to_json() for p in self.content], "files": files,
                               "truncated": self.truncated}
        if self.next is not None:
            out["next"] = self.next
        out["isError"] = False
        return out


def parse_many_request(params: Any) -> ManyRequest:
    """{paths: [path | glob | {path, offset?, limit?, pages?, cells?, raw?}]} as a ManyRequest, or InvalidParams."""
    if not isinstance(params, dict) or "paths" not in params:
        raise InvalidParams("params must be an object like {\"paths\": [\"README.md\", \"src/**/*.py\"]}")
    if set(params) != {"paths"}:
        raise InvalidParams(f"unknown parameter(s): {', '.join(sorted(set(params) - {'paths'}))}; known: paths")
    paths = params["paths"]
    if not isinstance(paths, list) or not paths:
        raise InvalidParams("'paths' must be a non-empty list of paths, globs or {path, offset, ...} objects")
    if len(paths) > MAX_MANY_FILES:
        raise InvalidParams(f"'paths' lists {len(paths)} entries; at most {MAX_MANY_FILES} a call. Split them "
                            "over several calls, or use a glob.")
    entries = []
    for item in paths:
        if isinstance(item, str):
            item = {"path": item}
        if not isinstance(item, dict) or "consent" in item:
            raise InvalidParams(f"each entry of 'paths' must be a string or an object {{path, offset?, limit?, "
                                f"pages?, cells?, raw?}}, got {item!r}")
        entries.append(parse_request(item))
    return ManyRequest(tuple(entries))


def read_many(engine, request: ManyRequest, read: Read | None = None) -> ManyResult:
    """Read every file `request` lists into one reply. `read` reads one file (default: engine.read; a server may
    pass one that applies its own consent). Never raises for a file's problem: each is reported in its place."""
    read = _each_own_errors(read or engine.read)
    listed, notes = expand(engine.workspace, request.entries)
    files = []
    for req in listed:
        checkpoint()
        files.append(FileRead(req, read(req)))
    _share(files, read)
    _attach_images(files)
    return _reply(files, notes)


def _each_own_errors(read: Read) -> Read:
    """`read`, with a window its reader refuses (pages: "Budget" of a PDF) made that file's error: the other
    files are still read."""
    def guarded(request: ReadRequest) -> ReadResult:
        try:
            return read(request)
        except InvalidParams as exc:
            return error_result(request.path, "invalid_params", f"{request.path}: {exc}. Read it again with a "
                                "window that fits the file (or none); the other files were read.")
    return guarded


def expand(workspace, entries: tuple[ReadRequest, ...]) -> tuple[list[ReadRequest], list[str]]:
    """The files `entries` name, globs expanded (sorted, regular files inside the roots only), duplicates
    dropped, at most MAX_MANY_FILES; and a note for each thing left out."""
    listed: list[ReadRequest] = []
    seen: set = set()
    notes: list[str] = []
    dropped: list[str] = []
    for entry in entries:
        if is_glob(entry.path, workspace):
            names = _glob(workspace, entry.path, notes)
            if not names:
                notes.append(f"`{entry.path}` matched no file inside the workspace.")
            requests = [dataclasses.replace(entry, path=name) for name in names]
        else:
            requests = [entry]
        for req in requests:
            key = (_real(workspace, req.path), *(getattr(req, k) for k in _WINDOW))
            if key in seen:
                continue
            seen.add(key)
            if len(listed) < MAX_MANY_FILES:
                listed.append(req)
            else:
                dropped.append(req.path)
    if dropped:
        notes.append(f"{len(dropped):,} more files were left out: a call reads at most {MAX_MANY_FILES} "
                     f"(from {dropped[0]} to {dropped[-1]}). Narrow the globs, or list those files in another call.")
    return listed, notes


def is_glob(path: str, workspace) -> bool:
    """Whether `path` is a glob to expand: it has glob characters and names no file as it is."""
    if not any(c in path for c in "*?["):
        return False
    try:
        return not os.path.lexists(workspace.absolute(path))  # a file may hold "[" in its name
    except ReadError:  # an invalid path is read, and refused, as a path
        return False


@dataclass
class _Walk:
    """One glob's walk over the file system, by os.scandir: what it matched and what it passed by. A `**` does
    not enter links to folders (a link back into its own folder would loop forever); a link matched by a plain
    wildcard is followed, the pattern's depth bounding it."""
    base: str  # what a relative pattern is taken from
    matches: list[str] = field(default_factory=list)  # as the pattern spells them
    dirs: int = 0  # folders opened
    links: int = 0  # links to folders a `**` passed by
    stopped: bool = False  # a cap was reached

    def match(self, folder: str, parts: list[str]) -> None:
        """The paths under `folder` that `parts` (the pattern's components still to match) name."""
        part, rest = parts[0], parts[1:]
        if self.stopped:
            return
        if not _magic(part):
            name = os.path.join(folder, part)
            if rest and os.path.isdir(os.path.join(self.base, name)):
                self.match(name, rest)
            elif not rest and os.path.lexists(os.path.join(self.base, name)):
                self.add(name)
            return
        entries = self.scan(folder)
        if part == "**":  # no folder, then each folder below, recursively
            if rest:
                self.match(folder, rest)
            else:
                for entry in entries:
                    if not entry.name.startswith(".") and not _is_dir(entry):
                        self.add(os.path.join(folder, entry.name))
            for entry in entries:
                if entry.name.startswith(".") or not _is_dir(entry):
                    continue
                if entry.is_symlink():
                    self.links += 1
                else:
                    self.match(os.path.join(folder, entry.name), parts)
            return
        pattern = re.compile(fnmatch.translate(part))
        for entry in entries:
            if (entry.name.startswith(".") and not part.startswith(".")) or not pattern.match(entry.name):
                continue
            if rest and _is_dir(entry):
                self.match(os.path.join(folder, entry.name), rest)
            elif not rest:
                self.add(os.path.join(folder, entry.name))

    def scan(self, folder: str) -> list[os.DirEntry]:
        """The entries of `folder`, sorted (so that a walk cut short is the same each time)."""
        if self.dirs >= MAX_GLOB_DIRS:
            self.stopped = True
            return []
        self.dirs += 1
        checkpoint()
        entries = []
        try:
            with os.scandir(os.path.join(self.base, folder) or ".") as it:
                for entry in it:
                    entries.append(entry)
                    if len(entries) % SCAN_CHECK_EVERY == 0:
                        checkpoint()
        except OSError:  # unreadable or gone: nothing matches in it
            return []
        return sorted(entries, key=lambda e: e.name)

    def add(self, name: str) -> None:
        self.matches.append(name)
        if len(self.matches) >= MAX_GLOB_MATCHES:
            self.stopped = True


def _magic(part: str) -> bool:
    return any(c in part for c in "*?[")


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _glob(workspace, pattern: str, notes: list[str]) -> list[str]:
    """The regular files `pattern` matches inside the roots, sorted, by the path as the pattern spells it (from the
    first root when relative). Matches that lead outside the roots (through a link) are left out and counted."""
    spelled = os.path.expanduser(pattern)
    absolute = os.path.isabs(spelled)
    parts = [p for p in spelled.split(os.sep) if p and p != "."]
    parts = [p for i, p in enumerate(parts) if not (p == "**" and i and parts[i - 1] == "**")]  # `**/**` is `**`
    literal = next(i for i, p in enumerate(parts) if _magic(p) or i == len(parts) - 1)
    walk = _Walk(base="" if absolute else workspace.absolute("."))
    walk.match(os.path.join(os.sep if absolute else "", *parts[:literal]), parts[literal:])
    if len(walk.matches) >= MAX_GLOB_MATCHES:
        notes.append(f"`{pattern}` matched {MAX_GLOB_MATCHES:,} paths, where the walk stopped; later ones were not "
                     "looked at. Narrow the glob.")
    elif walk.stopped:
        notes.append(f"`{pattern}`: the walk stopped after {MAX_GLOB_DIRS:,} folders; files past them were not "
                     "looked at. Narrow the glob.")
    if walk.links:
        notes.append(f"`{pattern}`: `**` passed by {walk.links:,} links to folders without entering them (a link "
                     "can lead back into its own folder). To glob through one, name it: `link/**/*.py`.")
    files, outside = [], 0
    for name in walk.matches:
        real = _real(workspace, name)
        if not os.path.isfile(real):
            continue
        if workspace.relative(real) is None:
            outside += 1
        else:
            files.append(name)
    if outside:
        notes.append(f"`{pattern}` matched {outside:,} files that lead outside the workspace (through links); they "
                     "were not read. Name one as a path to ask the user for it.")
    return sorted(files)


def _real(workspace, path: str) -> str:
    try:
        return os.path.realpath(workspace.absolute(path))
    except (ReadError, ValueError):  # an invalid path: its read reports it
        return path


def _measure(f: FileRead) -> tuple[int, int]:
    """Bytes and lines of text the file takes in the reply, its header included."""
    text = _header(f) + "\n" + (f.result.text() if f.result is not None else "")
    return len(text.encode("utf-8", "surrogatepass")), text.count("\n") + 1


def _fair(needs: list[int], total: int) -> list[int]:
    """Max-min fair shares of `total`: the smallest needs are met in full while they are under an equal share of
    what is left; the rest is split evenly."""
    shares = [0] * len(needs)
    left = total
    order = sorted(range(len(needs)), key=needs.__getitem__)
    for done, i in enumerate(order):
        shares[i] = min(needs[i], left // (len(needs) - done))
        left -= shares[i]
    return shares


def _share(files: list[FileRead], read: Read) -> None:
    """Fit each file into its share of the reply, cutting by lines what can be cut; what cannot is not shown."""
    if not files:
        return
    needs = [_measure(f) for f in files]
    line_shares = _fair([n for _, n in needs], MAX_LINES - SUMMARY_RESERVE_LINES)
    # The closing lines name only the files cut or not shown: room is kept for every file at first, then for
    # those over that first share. The shares only grow, so no other file joins them.
    named = files
    for _ in range(2):
        reserve = SUMMARY_RESERVE_BYTES + sum(SUMMARY_RESERVE_PER_FILE + 2 * len(f.request.path.encode("utf-8",
                                              "replace")) for f in named)
        byte_shares = _fair([b for b, _ in needs], MAX_OUTPUT_BYTES - reserve)
        over = [b > room_b or n > room_l for (b, n), room_b, room_l in zip(needs, byte_shares, line_shares)]
        named = [f for f, cut in zip(files, over) if cut or (f.result is not None and f.result.next is not None)]
    for f, cut, (room_b, room_l) in zip(files, over, zip(byte_shares, line_shares)):
        if cut:
            checkpoint()
            f.result = _fit(f, read, room_b, room_l)


def _fit(f: FileRead, read: Read, room_b: int, room_l: int) -> ReadResult | None:
    """The file read by as many lines as fit in (room_b bytes, room_l lines); None if not even one line does."""
    result = f.result
    if result.is_error:
        return result  # an error is always shown in its place; it is a few hundred bytes
    if result.kind not in _BY_LINES:
        return None
    shown = (result.end_line - result.start_line + 1) if result.start_line and result.end_line \
        else result.text().count("\n") + 1
    limit = min(shown, f.request.line_limit)
    for _ in range(MAX_FIT_TRIES):
        nbytes, nlines = _measure(f)
        ratio = min(room_b / nbytes, room_l / nlines)
        limit = min(limit - 1, int(limit * ratio * FIT_MARGIN))
        if limit < 1:
            return None
        f.result = read(dataclasses.replace(f.request, limit=limit))
        if f.result.is_error:
            return f.result
        nbytes, nlines = _measure(f)
        if nbytes <= room_b and nlines <= room_l:
            return f.result
    return None


def _attach_images(files: list[FileRead]) -> None:
    """Images in order while the reply's image budget lasts; past it, each is named with what shows it. An image
    file whose image does not fit is not shown (it is in `next`)."""
    count = size = 0
    for f in files:
        if f.result is None:
            continue
        kept: list[TextPart | ImagePart] = []
        for part in f.result.content:
            if isinstance(part, ImagePart):
                if count < MAX_MANY_IMAGES and size + len(part.data) <= MAX_MANY_IMAGE_BYTES:
                    count += 1
                    size += len(part.data)
                else:
                    f.images_dropped += 1
                    part = TextPart(f"[image not attached ({part.mime_type} {part.width}x{part.height}): this "
                                    f"reply's {MAX_MANY_IMAGES} images are spent. Read {f.request.path} alone to "
                                    "see it.]")
            kept.append(part)
        if f.images_dropped and f.result.kind == "image":
            f.result, f.images_dropped = None, 0
        else:
            f.result.content = kept


def _header(f: FileRead) -> str:
    window = ", ".join(f"{k}={getattr(f.request, k)}" for k in _WINDOW if getattr(f.request, k) not in (None, False))
    return f"==> {f.request.path}{f' ({window})' if window else ''} <=="


def _entry(request: ReadRequest, window: dict[str, Any] | None = None) -> str | dict[str, Any]:
    """One entry of `paths`: the bare path when it has no window."""
    fields = window if window is not None else {k: getattr(request, k) for k in _WINDOW}
    fields = {k: v for k, v in fields.items() if v not in (None, False)}
    return {"path": request.path, **fields} if fields else request.path


def _continuation(f: FileRead) -> str | dict[str, Any]:
    """The entry that reads the rest of a cut file: its `next`, within the limit it was asked for."""
    window = {"raw": f.request.raw or None, **f.result.next}
    asked, result = f.request.limit, f.result
    if asked is not None and result.start_line and result.end_line and "offset" in window \
            and set(result.next) == {"offset"}:
        window["limit"] = asked - (result.end_line - result.start_line + 1)
    return _entry(f.request, window)


def _reply(files: list[FileRead], notes: list[str]) -> ManyResult:
    reply = ManyResult(files, notes=list(notes))
    rest: list[str | dict[str, Any]] = []
    cut, not_shown = [], []
    for f in files:
        reply.content.append(TextPart(_header(f)))
        if f.result is None:
            reply.content.append(TextPart("[Not shown: no room left in this reply. It is in the `next` paths.]"))
            rest.append(_entry(f.request))
            not_shown.append(f.request.path)
            continue
        reply.content.extend(f.result.content)
        if f.result.next is not None and not f.result.is_error:
            entry = _continuation(f)
            if not (isinstance(entry, dict) and entry.get("limit", 1) < 1):
                rest.append(entry)
                cut.append(f"{f.request.path} at {json.dumps(f.result.next)}")
    errors = sum(f.state == "error" for f in files)
    summary = [f"[{len(files)} files: {sum(f.state == 'whole' for f in files)} shown whole, {len(cut)} cut, "
               f"{errors} errors, {len(not_shown)} not shown.]"]
    if cut:
        summary.append("[Cut, and where each continues: " + "; ".join(cut) + ".]")
    if not_shown:
        summary.append("[Not shown: " + ", ".join(not_shown) + ".]")
    pictures = [f"{f.request.path} ({f.images_dropped})" for f in files if f.images_dropped]
    if pictures:
        summary.append("[Images not attached, the reply's images spent (read each file alone to see them): "
                       + ", ".join(pictures) + ".]")
    summary.extend(f"[{note}]" for note in notes)
    if rest:
        reply.next = {"paths": rest}
        summary.append("[To continue, call read_many again with paths: " + json.dumps(rest, ensure_ascii=False)
                       + "]")
    reply.content.append(TextPart("\n".join(summary)))
    return reply
