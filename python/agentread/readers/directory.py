"""Directories: a short sorted listing (folders first), so the model can pick what to read next."""

from __future__ import annotations

import os

from agentread.cancel import checkpoint
from agentread.limits import MAX_DIR_ENTRIES
from agentread.numbering import past_end
from agentread.request import ReadRequest
from agentread.result import ReadError, ReadResult, TextPart

# Entries looked at before giving up on an exact count: a directory of millions of files must still
# answer quickly; past this the listing says "more than".
MAX_DIR_SCAN = 100_000


def _describe(entry: os.DirEntry, folder: int) -> tuple[int, str]:
    try:
        if entry.is_symlink():
            target = os.readlink(entry.name, dir_fd=folder)
            return 1, f"{entry.name} -> {target}"
        if entry.is_dir():
            return 0, entry.name + "/"
        return 1, f"{entry.name}  ({human_size(entry.stat().st_size)})"
    except OSError:
        return 1, f"{entry.name}  (unreadable)"


def human_size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def read_directory(path: str, folder: int, request: ReadRequest) -> ReadResult:
    """The sorted listing of the folder at the real path `path`, open as the descriptor `folder`
    (workspace.open_folder: the folder vetted, not what the path leads to now), MAX_DIR_ENTRIES at
    a time: `offset`/`limit` count its entries as they count lines."""
    if request.find is not None:
        raise ReadError("find_in_directory", f"{request.path} is a directory; find searches files. To search "
                        f"the files in it, call read_many with a glob such as {request.path.rstrip('/')}/**/*.py "
                        "and the same find.")
    entries: list[os.DirEntry] = []
    complete = True
    with os.scandir(folder) as it:
        for entry in it:
            if len(entries) >= MAX_DIR_SCAN:
                complete = False
                break
            entries.append(entry)
            if len(entries) % 4096 == 0:
                checkpoint()
    listed = sorted((_describe(e, folder) for e in entries), key=lambda d: (d[0], d[1].lower()))
    stop = None if complete else (f"The listing stops at the first {MAX_DIR_SCAN:,} entries the directory gave. "
                                  "Read a subdirectory or a file by name.")
    count = "entry" if len(listed) == 1 and complete else "entries"
    return page_listing(request, "directory", path, [line for _, line in listed], stop,
                        heading=f"Directory {path} ({{total}} {count}; folders first{{where}}):",
                        what=("entry", "entries", "read a subdirectory or a file by name"),
                        empty="The directory is empty.")


def page_listing(request: ReadRequest, kind: str, path: str, listed: list[str], stop: str | None, heading: str,
                 what: tuple[str, str, str], empty: str, closing: str = "") -> ReadResult:
    """One page of a listing (a directory's, an archive's), MAX_DIR_ENTRIES at most:
    `offset`/`limit` count its entries as they count lines. `stop`: why the entries listed are not
    all there are, as the listing's last line (None: they are). `heading` is formatted with the
    `total` and `where`; `what`: an entry's name, the entries', and what else to read; `closing`: a
    last line, when the listing is not cut."""
    one, unit, instead = what
    complete = stop is None
    first = request.line_from(len(listed))
    if first > max(len(listed), 1):
        raise past_end(first, len(listed), "entry", f"the listing of {request.path}")
    end = min(len(listed), first - 1 + min(request.line_limit, MAX_DIR_ENTRIES))
    shown, used = [], 0
    for line in listed[first - 1:end]:
        used += len(line.encode("utf-8", "surrogatepass")) + 1
        if shown and used > request.output_bytes:  # long names: the text budget ends the page before the count
            break
        shown.append(line)
    end = first - 1 + len(shown)
    total = f"{len(listed):,}" if complete else f"more than {len(listed):,}"
    named = f"{one} {first:,}" if end == first else f"{unit} {first:,}-{end:,}"
    where = f"; {named}" if shown and (first > 1 or end < len(listed)) else ""
    lines = [heading.format(total=total, where=where)] + shown
    left = len(listed) - end
    next_ = {"offset": end + 1} if left > 0 else None
    if next_:
        more = one if left == 1 and complete else unit
        lines.append(f"[{left:,}{'' if complete else '+'} more {more} not listed. Read on with offset={end + 1}, "
                     f"or {instead}.]")
    elif not complete:
        lines.append(f"[{stop}]")
    elif closing and listed:
        lines.append(closing)
    if not listed:
        lines.append(f"[{empty}]")
    # Past a stop no call continues: the rest was never looked at, so it cannot be sorted in.
    return ReadResult(kind=kind, path=path, content=[TextPart("\n".join(lines))],
                      truncated=next_ is not None or not complete, next=next_,
                      shown={"entries": [first, end]} if shown else None)
