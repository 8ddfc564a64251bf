"""Many files in one reply: paths and globs → one read each → the reply's budget shared → one reply
and its `next`.

The reply holds what a single read may (MAX_LINES lines and MAX_OUTPUT_BYTES of text, or the
caller's `maxBytes`; MAX_REPLY_IMAGES images), shared so that no file starves the rest: each file
asks for what its read gives alone; the budget goes first to the files that need least (each gets
all it asks for while that is under an equal share of what is left), and the rest is split evenly
among the larger ones. A file over its share is read again by lines, as many as fit; one that cannot
be cut (an image) and does not fit is not shown. A search's files without a hit cost a count, not a
block each. `next` continues exactly where the reply stopped: the rest of each file cut (or not
shown) before the last shown, then the call's own entries resumed past the last file answered (an
entry's `after`: the listing is sorted, so a path says where), the call's `find` given once.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from agentread.cancel import checkpoint, read_deadline
from agentread.find import FIND_TIME_SHARE
from agentread.limits import MAX_LINES, MAX_OUTPUT_BYTES, MAX_REPLY_IMAGE_BYTES, MAX_REPLY_IMAGES, MIN_REPLY_BYTES
from agentread.many.glob import expand_glob, real_path
from agentread.request import InvalidParams, ReadRequest, max_bytes, parse_request
from agentread.result import ImagePart, ReadResult, TextPart, error_result, joined, sendable
from agentread.versions import version_tag

# Entries of `paths`, and files a call shows. With more, a file's share of the reply falls under 20
# lines, too little to be worth a header.
MAX_MANY_FILES = 100
# Files a call looks at, those a search finds no hit in included: each costs the reply a count, not
# a block, so a search goes through many more than a read shows; bounded so that a call over a huge
# tree answers well within its deadline (the rest is reached by `next`).
MAX_LOOKED_AT = 1000

# Kept back from the budget for the closing lines that say what was cut and how to continue: a few
# lines, and for each file cut or not shown, room to name it in `next` with its window.
SUMMARY_RESERVE_LINES = 6
SUMMARY_RESERVE_BYTES = 500
SUMMARY_RESERVE_PER_FILE = 80
# At most this share of the reply is kept back for them: the files keep the rest (a final trim keeps
# the reply within its budget when paths are long).
MAX_SUMMARY_SHARE = 0.5
# A share that leaves a cut file less than this past its header shows too little: fewer files then
# share the reply.
MIN_SHARE_BYTES = 300
MIN_SHARE_LINES = 5
# When no file found room, the first is shown in at least this many bytes, so that `next`
# always moves on.
MIN_PROGRESS_BYTES = 2000

# Reads of a file over its share, each by fewer lines than the last, before it is left for `next`.
MAX_FIT_TRIES = 4
# Lines differ in length: a re-read aims this far under the share, so that one more is
# rarely needed.
FIT_MARGIN = 0.95

# Kinds whose reads can be cut by offset/limit (lines; a spreadsheet's rows; a listing's entries).
_BY_LINES = {"text", "pdf", "notebook", "document", "presentation", "spreadsheet", "directory"}

# A request's window: the fields of one entry besides its path.
_WINDOW = ("offset", "limit", "pages", "cells", "raw", "column", "char", "range", "view", "outline")
# A file's version and what changed since an earlier one (versions.py), as its result gives them.
_VERSIONED = ("version", "size", "mtime", "unchanged", "changed", "diff")
# The search a call may ask of every file it lists (each entry's own comes first); an entry left for
# `next` carries it.
_FIND = ("find", "regex", "ignoreCase")
# Beside `paths`, `outline` asks every file listed for its outline, as `find` asks for its hits: a
# glob's outlines map a whole tree in one reply.
_FOR_ALL = (*_FIND, "outline")

Read = Callable[[ReadRequest], ReadResult]


@dataclass(frozen=True)
class Entry:
    """One entry of `paths`."""
    given: str | dict[str, Any]  # as the caller wrote it: what `next` repeats
    request: ReadRequest  # its read, the call's find and outline under its own fields; a path may be a glob
    after: str | None = None  # only the files it lists sorted after this path: where a `next` resumes it


@dataclass(frozen=True)
class ManyRequest:
    entries: tuple[Entry, ...]
    max_bytes: int | None = None  # the reply's text in UTF-8 bytes at most (the host's limit); None: no limit
    search: dict[str, Any] = field(default_factory=dict)  # the call's find, regex, ignoreCase, outline, as given

    @property
    def budget(self) -> int:
        """The reply's text, closing lines included, in UTF-8 bytes at most."""
        return MAX_OUTPUT_BYTES if self.max_bytes is None else min(self.max_bytes, MAX_OUTPUT_BYTES)

    @property
    def resume_bytes(self) -> int:
        """What naming the call's own entries again in `next` takes."""
        return len(json.dumps({"paths": [e.given for e in self.entries], **self.search}, ensure_ascii=False)
                   .encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class Listed:
    """A file of the listing, and the entry of `paths` that names it."""
    request: ReadRequest  # a glob's match, by its path from the root
    entry: int


@dataclass
class Listing:
    """The files a call's entries name, and what a `next` needs to name them again."""
    files: list[Listed] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what it left out (caps, matches outside the roots)
    last: dict[int, str] = field(default_factory=dict)  # each entry's last file, its `after` once all are answered
    # The entries whose files a later entry also names, by that later entry: kept in `next` while
    # it is, so that those files stay read once.
    shadowed_by: dict[int, set[int]] = field(default_factory=dict)


@dataclass
class FileRead:
    request: ReadRequest  # the file as listed (a glob's match, by its path from the root)
    result: ReadResult | None = None  # None: not shown, no room left
    images_dropped: int = 0  # image parts named, not attached: the file alone holds more than a reply attaches

    @property
    def state(self) -> str:
        """whole | cut | error | not_shown."""
        if self.result is None:
            return "not_shown"
        if self.result.is_error:
            return "error"
        return "cut" if self.rest is not None else "whole"

    @property
    def no_hit(self) -> bool:
        """A search that found nothing and has nothing else to say (no change, nothing passed over
        unsearched): the reply counts it, and shows it no block."""
        result = self.result
        if (result is None or result.is_error or self.request.find is None or result.next is not None
                or result.changed or result.diff or result.unchanged or (result.shown or {}).get("hits")):
            return False
        return len([line for line in result.text().splitlines() if line != version_tag(result)]) == 1

    @property
    def rest(self) -> str | dict[str, Any] | None:
        """The entry of `paths` that shows what this file has left: its `next`, within what remains
        of the `limit` it was asked for; None when nothing is left."""
        if self.result is None:
            return _entry(self.request)
        if self.result.is_error or self.result.next is None:
            return None
        window = {"raw": self.request.raw or None, **self.result.next}
        asked, shown = self.request.limit, _count_shown(self.result)
        if asked is not None and "offset" in window:
            if shown is not None and asked - shown < 1:
                return None  # the limit asked for is used up: the file is whole as asked
            window["limit"] = asked if shown is None else asked - shown
        return _entry(self.request, window)


@dataclass
class ManyResult:
    files: list[FileRead]  # those this reply answers, in listing order
    content: list[TextPart | ImagePart] = field(default_factory=list)
    next: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)  # what the listing left out (caps, matches outside the roots)

    @property
    def truncated(self) -> bool:
        """Something listed is left to show: `next` shows it. What the listing itself left out (a
        glob that matched nothing, a walk that stopped) is said in words, and is no cut."""
        return self.next is not None

    def text(self) -> str:
        return ReadResult(kind="many", path="", content=self.content).text()

    def to_json(self) -> dict[str, Any]:
        files = []
        for f in self.files:
            entry: dict[str, Any] = {"path": sendable(f.request.path), "state": f.state}
            if f.result is not None:
                whole = f.result.to_json()
                entry.update({k: whole[k] for k in ("kind", "truncated", "next", "shown", "hidden", "error")
                              if k in whole})
                entry.update({k: whole[k] for k in _VERSIONED if k in whole})
            if f.images_dropped:
                entry["imagesLeftOut"] = f.images_dropped
            files.append(entry)
        out: dict[str, Any] = {"kind": "many", "content": [p.to_json() for p in joined(self.content)], "files": files,
                               "truncated": self.truncated}
        if self.next is not None:
            out["next"] = self.next
        out["isError"] = False
        return out


def parse_many_request(params: Any) -> ManyRequest:
    """{paths: [path | glob | {path, offset?, limit?, pages?, cells?, raw?, since?, after?}],
    find?, ...} as a ManyRequest, or InvalidParams."""
    if not isinstance(params, dict) or "paths" not in params:
        raise InvalidParams("params must be an object like {\"paths\": [\"README.md\", \"src/**/*.py\"]}")
    known = {"paths", "maxBytes", *_FOR_ALL}
    if set(params) - known:
        raise InvalidParams(f"unknown parameter(s): {', '.join(sorted(set(params) - known))}; "
                            f"known: {', '.join(sorted(known))}")
    search = {key: params[key] for key in _FOR_ALL if key in params}
    paths = params["paths"]
    if not isinstance(paths, list) or not paths:
        raise InvalidParams("'paths' must be a non-empty list of paths, globs or {path, offset, ...} objects")
    if len(paths) > MAX_MANY_FILES:
        raise InvalidParams(f"'paths' lists {len(paths)} entries; at most {MAX_MANY_FILES} a call. Split them "
                            "over several calls, or use a glob.")
    entries = []
    for given in paths:
        item = {"path": given} if isinstance(given, str) else given
        if not isinstance(item, dict) or "consent" in item:
            raise InvalidParams(f"each entry of 'paths' must be a string or an object {{path, offset?, limit?, "
                                f"pages?, cells?, raw?, since?, after?}}, got {given!r}")
        item = dict(item)
        after = item.pop("after", None)
        if after is not None and (not isinstance(after, str) or not after):
            raise InvalidParams(f"'after' must be a path, as a reply's `next` gives it, got {after!r}")
        entries.append(Entry(given, parse_request({**search, **item}), after))
    return ManyRequest(tuple(entries), max_bytes(params), search)


def read_many(engine, request: ManyRequest, read: Read | None = None) -> ManyResult:
    """Read every file `request` lists into one reply, or as many as it holds and a `next` that
    resumes after them. `read` reads one file (default: engine.read; a server may pass one that
    applies its own consent). Never raises for a file's problem: each is reported in its place."""
    read = _each_own_errors(read or engine.read)
    listing = _listing(engine.workspace, request.entries)
    files = _look(listing.files, read, request)
    blocks = [f for f in files if not f.no_hit]
    _share(blocks, read, request.budget, request.resume_bytes)
    _attach_images(blocks)
    if blocks and all(f.result is None for f in blocks):
        _show_first(blocks, read, _assemble(files, listing, request).text(), request.budget)
    return _reply(files, listing, request)


def _each_own_errors(read: Read) -> Read:
    """`read`, with a window its reader refuses (pages: "Budget" of a PDF) made that file's error:
    the other files are still read."""
    def guarded(request: ReadRequest) -> ReadResult:
        try:
            return read(request)
        except InvalidParams as exc:
            return error_result(request.path, "invalid_params", f"{request.path}: {exc}. Read it again with a "
                                "window that fits the file (or none); the other files were read.")
    return guarded


def expand(workspace, request: ManyRequest) -> list[ReadRequest]:
    """The files a call of `request` may read, for a client to ask its user about first."""
    return [listed.request for listed in _listing(workspace, request.entries).files[:MAX_LOOKED_AT]]


def _listing(workspace, entries: tuple[Entry, ...]) -> Listing:
    """The files `entries` name, globs expanded (sorted, regular files inside the roots only),
    duplicates dropped, and each entry's files up to its `after` left out (answered by an earlier
    call); and a note for each thing the listing left out."""
    listing = Listing()
    seen: dict = {}  # each file, by where it leads and its window: the entry that names it first
    for index, entry in enumerate(entries):
        if workspace.is_glob(entry.request.path):
            names = expand_glob(workspace, entry.request.path, listing.notes)
            if not names:
                listing.notes.append(f"`{entry.request.path}` matched no file inside the workspace.")
            requests = [dataclasses.replace(entry.request, path=name) for name in names]
        else:
            requests = [entry.request]
        for req in requests:
            key = (real_path(workspace, req.path), *(getattr(req, k) for k in _WINDOW))
            if key in seen:
                listing.shadowed_by.setdefault(index, set()).add(seen[key])
                continue
            seen[key] = index
            listing.last[index] = req.path
            if entry.after is None or req.path > entry.after:  # the order expand_glob sorts in
                listing.files.append(Listed(req, index))
    return listing


def _look(listing: list[Listed], read: Read, request: ManyRequest) -> list[FileRead]:
    """The files this call reads, in listing order: at most MAX_MANY_FILES to show and
    MAX_LOOKED_AT in all. A search stops sooner once the hits it found fill the reply, or once
    its share of the deadline is spent (FIND_TIME_SHARE): the rest wait for `next`."""
    searching = "find" in request.search
    ends = time.monotonic() + FIND_TIME_SHARE * read_deadline()
    files: list[FileRead] = []
    shown = need = 0
    for listed in listing:
        if shown >= MAX_MANY_FILES or len(files) >= MAX_LOOKED_AT:
            break
        if searching and files and (need > request.budget or time.monotonic() > ends):
            break
        checkpoint()
        f = FileRead(listed.request, read(listed.request))
        files.append(f)
        if not f.no_hit:
            shown += 1
            need += _measure(f)[0]
    return files


def _measure(f: FileRead) -> tuple[int, int]:
    """Bytes and lines of text the file takes in the reply, its header included."""
    text = _header(f) + "\n" + (f.result.text() if f.result is not None else "")
    return len(text.encode("utf-8", "surrogatepass")), text.count("\n") + 1


def _fair(needs: list[int], total: int) -> list[int]:
    """Max-min fair shares of `total`: the smallest needs are met in full while they are under an
    equal share of what is left; the rest is split evenly."""
    shares = [0] * len(needs)
    left = total
    order = sorted(range(len(needs)), key=needs.__getitem__)
    for done, i in enumerate(order):
        shares[i] = min(needs[i], left // (len(needs) - done))
        left -= shares[i]
    return shares


def _reserve(named: list[ReadRequest], resume_bytes: int, budget: int) -> int:
    """Bytes kept back for the closing lines: a few, each file `named` once in `next` with its
    window, and the call's own entries resumed."""
    names = sum(SUMMARY_RESERVE_PER_FILE + len(json.dumps(_entry(req), ensure_ascii=False).encode("utf-8",
                "surrogatepass")) for req in named[:MAX_MANY_FILES])
    return min(SUMMARY_RESERVE_BYTES + names + resume_bytes, int(budget * MAX_SUMMARY_SHARE))


def _share(files: list[FileRead], read: Read, budget: int, resume_bytes: int) -> None:
    """Fit each file into its share of the reply, cutting by lines what can be cut; what cannot
    is not shown. When the shares are too small to show much of a file (many files, long paths),
    the first half of the files share the reply, then the first quarter, ...: the rest wait,
    whole, for `next`."""
    if not files:
        return
    needs = [_measure(f) for f in files]
    count = len(files)
    while True:
        shares = _shares(files[:count], needs[:count], resume_bytes, budget)
        if count == 1 or not any(_too_small(f, need, share) for f, need, share in zip(files, needs, shares)):
            break
        count //= 2
    for f in files[count:]:
        f.result = None
    for f, (nbytes, nlines), (room_b, room_l) in zip(files, needs, shares):
        if nbytes > room_b or nlines > room_l:
            checkpoint()
            f.result = _fit(f, read, room_b, room_l)


def _shares(files: list[FileRead], needs: list[tuple[int, int]], resume_bytes: int,
            budget: int) -> list[tuple[int, int]]:
    """Each file's room in the reply, (bytes, lines), besides the closing lines."""
    line_shares = _fair([n for _, n in needs], MAX_LINES - SUMMARY_RESERVE_LINES)
    # The closing `next` names only the files cut or not shown: room is kept for every
    # file at first, then for those over that first share. The shares only grow, so no
    # other file joins them.
    named = files
    for _ in range(2):
        byte_shares = _fair([b for b, _ in needs], budget - _reserve([f.request for f in named], resume_bytes,
                                                                     budget))
        named = [f for f, (b, n), room_b, room_l in zip(files, needs, byte_shares, line_shares)
                 if b > room_b or n > room_l or f.rest is not None]
    return list(zip(byte_shares, line_shares))


def _too_small(f: FileRead, need: tuple[int, int], share: tuple[int, int]) -> bool:
    """Whether the file must be cut to a share that shows little more than its header."""
    over = need[0] > share[0] or need[1] > share[1]
    return over and not f.result.is_error and (share[0] < len(_header(f).encode("utf-8", "surrogatepass"))
                                               + MIN_SHARE_BYTES or share[1] < MIN_SHARE_LINES)


def _show_first(files: list[FileRead], read: Read, closing: str, budget: int) -> None:
    """Nothing found room (long paths, many files): the first file is shown, cut to what the
    `closing` lines leave, one line at least, so that following `next` always moves on."""
    room_b = max(budget - len(closing.encode("utf-8", "surrogatepass")), min(MIN_PROGRESS_BYTES, budget // 2))
    room_l = MAX_LINES - closing.count("\n") - 1
    first = files[0]
    first.result = read(first.request)
    nbytes, nlines = _measure(first)
    if nbytes > room_b or nlines > room_l:
        first.result = _fit(first, read, room_b, room_l, at_least=1) or first.result  # an image: shown whole


def _fit(f: FileRead, read: Read, room_b: int, room_l: int, at_least: int = 0) -> ReadResult | None:
    """The file read by as many lines as fit in (room_b bytes, room_l lines), and `at_least` lines;
    None if not even one line does."""
    result = f.result
    if result.is_error:
        return result  # an error is always shown in its place; it is a few hundred bytes
    if result.kind not in _BY_LINES:
        return None
    shown = _count_shown(result) or result.text().count("\n") + 1
    limit = min(shown, f.request.line_limit)
    # A diff over its share: the file is read again, cut, under the note that it changed.
    request = dataclasses.replace(f.request, since=None) if result.diff else f.request
    for _ in range(MAX_FIT_TRIES):
        nbytes, nlines = _measure(f)
        ratio = min(room_b / nbytes, room_l / nlines)
        limit = max(min(limit - 1, int(limit * ratio * FIT_MARGIN)), at_least, 1)
        f.result = read(dataclasses.replace(request, limit=limit))
        if f.result.is_error:
            return f.result
        nbytes, nlines = _measure(f)
        if nbytes <= room_b and nlines <= room_l:
            return f.result
        if limit == 1:
            break
    return _cut_by_bytes(f, read, request, room_b, shown=at_least > 0)


def _cut_by_bytes(f: FileRead, read: Read, request: ReadRequest, room_b: int, shown: bool) -> ReadResult | None:
    """The file's first line (or a spreadsheet's cell read) over the room alone, read again cut
    where the room is full, its `column` (`char`) reading on; None when the room is under the
    smallest reply, unless the file must be `shown` (then in the smallest reply)."""
    size = room_b - (_measure(f)[0] - f.result.text_bytes())  # less its header and the line breaks between parts
    if size < MIN_REPLY_BYTES and not shown:
        return None
    f.result = read(dataclasses.replace(request, limit=1, max_bytes=max(size, MIN_REPLY_BYTES)))
    return f.result if shown or f.result.is_error or _measure(f)[0] <= room_b else None


def _count_shown(result: ReadResult) -> int | None:
    """Lines (a listing's or an outline's entries) the read shows, when it says."""
    if result.start_line is not None and result.end_line is not None:
        return result.end_line - result.start_line + 1
    shown = result.shown or {}
    entries = shown.get("entries") or shown.get("outline")
    return entries[1] - entries[0] + 1 if entries else None


def _attach_images(files: list[FileRead]) -> None:
    """Images in order while the reply's image budget lasts. A file whose images find it spent is
    not shown (it is in `next`), but for the first file with images: one that alone holds more than
    a reply attaches has the rest named, as reading it alone would."""
    count = size = 0
    for f in files:
        if f.result is None:
            continue
        images = [p for p in f.result.content if isinstance(p, ImagePart)]
        needed = sum(len(p.data) for p in images)
        if count + len(images) <= MAX_REPLY_IMAGES and size + needed <= MAX_REPLY_IMAGE_BYTES:
            count, size = count + len(images), size + needed
        elif count:
            f.result = None
        else:
            f.result.content = _name_past_budget(f)
            count, size = MAX_REPLY_IMAGES, MAX_REPLY_IMAGE_BYTES


def _name_past_budget(f: FileRead) -> list[TextPart | ImagePart]:
    """The file's parts, its images past the reply's budget named with what shows them."""
    kept: list[TextPart | ImagePart] = []
    count = size = 0
    for part in f.result.content:
        if isinstance(part, ImagePart):
            if count < MAX_REPLY_IMAGES and size + len(part.data) <= MAX_REPLY_IMAGE_BYTES:
                count, size = count + 1, size + len(part.data)
            else:
                f.images_dropped += 1
                part = TextPart(f"[image not attached ({part.mime_type} {part.width}x{part.height}): a reply "
                                f"attaches at most {MAX_REPLY_IMAGES} images. Read {f.request.path} by parts to "
                                "see it.]")
        kept.append(part)
    return kept


def _given(value: Any) -> bool:
    return value is not None and value is not False  # 0 is a value (a limit used up), False is not


def _header(f: FileRead) -> str:
    """The file's header line, which names its version (versions.py) when it is shown."""
    window = ", ".join(f"{k}={getattr(f.request, k)}" for k in _WINDOW if _given(getattr(f.request, k)))
    tag = version_tag(f.result) if f.result is not None else None
    return f"==> {f.request.path}{f' ({window})' if window else ''} <=={f' {tag}' if tag else ''}"


def _entry(request: ReadRequest, window: dict[str, Any] | None = None) -> str | dict[str, Any]:
    """One entry of `paths`: the bare path when it has no window."""
    fields = window if window is not None else {k: getattr(request, k) for k in _WINDOW}
    if window is None and request.find is not None:
        fields.update(find=request.find, regex=request.regex, ignoreCase=request.ignore_case)
    if window is None and request.since is not None:  # a file not shown is still asked what changed since
        fields["since"] = request.since
    fields = {k: v for k, v in fields.items() if _given(v)}
    return {"path": request.path, **fields} if fields else request.path


def _without(entry: str | dict[str, Any], search: dict[str, Any]) -> str | dict[str, Any]:
    """An entry of `next`, less what the call's `find` (or `outline`) beside `paths` says of all."""
    if isinstance(entry, str):
        return entry
    fields = {k: v for k, v in entry.items() if k == "path" or k not in search or search[k] != v}
    return fields if len(fields) > 1 else fields["path"]


def _resumed(request: ManyRequest, listing: Listing, end: int) -> list[str | dict[str, Any]]:
    """The call's own entries that list files from `listing.files[end]` on, as given, the one
    holding the last file answered resumed past it (`after`); and before them each entry answered
    whose files they name too, past its last file: it lists none, and they do not list those."""
    files = listing.files
    kept = dict.fromkeys(listed.entry for listed in files[end:])
    shadows = {w for index in kept for w in listing.shadowed_by.get(index, ()) if w not in kept}
    out: list[str | dict[str, Any]] = []
    for index in sorted(shadows | set(kept)):
        given = request.entries[index].given
        after = listing.last[index] if index in shadows else \
            files[end - 1].request.path if end and files[end - 1].entry == index else None
        if after is not None:
            given = {**({"path": given} if isinstance(given, str) else given), "after": after}
        out.append(given)
    return out


def _reply(files: list[FileRead], listing: Listing, request: ManyRequest) -> ManyResult:
    """The reply, within the budget: past it (the shares are estimates), or past what `next` may
    list, the last files shown are left for `next`, all but one. The files without a hit are
    named when there is room."""
    reply = _assemble(files, listing, request)
    shown = [f for f in files if f.result is not None and not f.no_hit]
    while len(shown) > 1 and (_over_budget(reply, request.budget)
                              or len(reply.next["paths"] if reply.next else ()) > MAX_MANY_FILES):
        shown.pop().result = None
        reply = _assemble(files, listing, request)
    named = _assemble(files, listing, request, name_misses=True)
    return reply if _over_budget(named, request.budget) else named


def _over_budget(reply: ManyResult, budget: int) -> bool:
    text = reply.text()
    return len(text.encode("utf-8", "surrogatepass")) > budget or text.count("\n") + 1 > MAX_LINES


def _assemble(files: list[FileRead], listing: Listing, request: ManyRequest, name_misses: bool = False
              ) -> ManyResult:
    """The reply: the files up to the first not shown after the last shown (each shown under its
    header, each without a hit counted), and a `next` that resumes at the first file past them."""
    last = max((i for i, f in enumerate(files) if f.result is not None and not f.no_hit), default=-1)
    end = next((i for i in range(last + 1, len(files)) if files[i].result is None), len(files))
    answered = files[:end]
    reply = ManyResult(answered, notes=list(listing.notes))
    for f in answered:
        if f.result is not None and not f.no_hit:
            reply.content.append(TextPart(_header(f)))
            reply.content.extend(f.result.content)
    rest = [_without(entry, request.search) for entry in (f.rest for f in answered) if entry is not None]
    paths = rest + _resumed(request, listing, end)
    misses = [f.request.path for f in answered if f.no_hit]
    states = [f.state for f in answered if not f.no_hit]
    summary = [f"[{len(answered)} files: {states.count('whole')} shown whole, {states.count('cut')} cut, "
               f"{states.count('error')} errors, {states.count('not_shown')} not shown (no room left)"
               + (f", {len(misses)} without a hit" if misses else "") + ".]"]
    if misses:
        summary.append("[Without a hit: " + (", ".join(misses) if name_misses or len(misses) == 1 else
                                              f"{len(misses)} files, from {misses[0]} to {misses[-1]}") + ".]")
    pictures = [f"{f.request.path} ({f.images_dropped})" for f in answered if f.images_dropped]
    if pictures:
        summary.append("[Images not attached, over what a reply attaches: " + ", ".join(pictures) + ".]")
    summary.extend(f"[{note}]" for note in listing.notes)
    if end < len(listing.files):
        summary.append(f"[{len(listing.files) - end:,} more files listed are not in this reply, from "
                       f"{listing.files[end].request.path} on: `next` reads on there.]")
    if paths:
        reply.next = {"paths": paths, **request.search}
        summary.append("[To continue, call read_many again with " + json.dumps(reply.next, ensure_ascii=False)
                       + "]")
    reply.content.append(TextPart("\n".join(summary)))
    return reply
