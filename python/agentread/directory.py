"""Directories: a short sorted listing (folders first), so the model can pick what to read next."""

from __future__ import annotations

import os

from agentread.cancel import checkpoint
from agentread.limits import MAX_DIR_ENTRIES
from agentread.result import ReadResult, TextPart

# Entries looked at before giving up on an exact count: a directory of millions of files must still answer
# quickly; past this the listing says "more than".
MAX_DIR_SCAN = 100_000


def _describe(entry: os.DirEntry) -> tuple[int, str]:
    try:
        if entry.is_symlink():
            target = os.readlink(entry.path)
            return 1, f"{entry.name} -> {target}"
        if entry.is_dir():
            return 0, entry.name + "/"
        return 1, f"{entry.name}  ({_size(entry.stat().st_size)})"
    except OSError:
        return 1, f"{entry.name}  (unreadable)"


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def read_directory(path: str) -> ReadResult:
    entries: list[os.DirEntry] = []
    complete = True
    with os.scandir(path) as it:
        for entry in it:
            if len(entries) >= MAX_DIR_SCAN:
                complete = False
                break
            entries.append(entry)
            if len(entries) % 4096 == 0:
                checkpoint()
    listed = sorted((_describe(e) for e in entries), key=lambda d: (d[0], d[1].lower()))
    shown = [line for _, line in listed[:MAX_DIR_ENTRIES]]
    total = f"{len(entries):,}" if complete else f"more than {MAX_DIR_SCAN:,}"
    lines = [f"Directory {path} ({total} entries; folders first):"] + shown
    left = len(entries) - len(shown)
    if left > 0 or not complete:
        lines.append(f"[{left:,}{'' if complete else '+'} more entries not listed. Read a subdirectory or a "
                     "file by name.]")
    if not entries:
        lines.append("[The directory is empty.]")
    return ReadResult(kind="directory", path=path, content=[TextPart("\n".join(lines))],
                      truncated=left > 0 or not complete, shown={"entries": [1, len(shown)]} if shown else None)
