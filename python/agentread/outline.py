"""Outlines: a document's structure as entries, each with the exact arguments that read it.

Every reader that knows a kind's structure (bookmarks, headings, symbols, slides, sheets) builds a
list of `Entry`; `outline_result` shows a window of them as the model reads it, one line an entry,
indented by nesting, bounded like any reply and paged with `offset`/`limit` over the entries:

    [Outline of src/engine.py: 14 symbols in 207 lines. Read one with the arguments after "→".]
    class Plan  (lines 40-51)  → offset=40 limit=12
      def read  (lines 59-61)  → offset=59 limit=3
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from agentread.numbering import counted, line_limit_reason, output_limit_reason, past_end
from agentread.request import ReadRequest
from agentread.result import ReadResult, TextPart

# An entry's title is cut to this many characters: a bookmark or a heading can be a whole
# paragraph, and an outline is for finding where to look, not for reading.
MAX_TITLE_CHARS = 200

# Nesting shown by indentation at most this deep: deeper entries line up with the deepest, so a
# hostile document nesting thousands of levels cannot spend a reply on spaces.
MAX_INDENT_LEVELS = 12


@dataclass(frozen=True)
class Entry:
    level: int  # 0 at the top, 1 inside it, ...
    title: str  # "class Engine", "## Install", a bookmark's text
    where: str  # what it spans, in words: "lines 12-40", "page 37 (xxxvii)"
    read: dict[str, Any]  # the arguments that read it: {"offset": 12, "limit": 29}, {"pages": "37"}


def lines_entry(level: int, title: str, first: int, last: int) -> Entry:
    """An entry spanning lines first..last of a numbered text."""
    where = counted("line", first, last)
    return Entry(level, title, where, {"offset": first, "limit": last - first + 1})


def arguments(read: dict[str, Any]) -> str:
    """Read arguments as the closing lines write them: offset=12 limit=29, pages="37"."""
    return " ".join(f'{key}="{value}"' if isinstance(value, str) else f"{key}={value}" for key, value in read.items())


def entry_line(entry: Entry) -> str:
    title = " ".join(entry.title.split())
    if len(title) > MAX_TITLE_CHARS:
        title = title[:MAX_TITLE_CHARS] + "…"
    read = f"  → {arguments(entry.read)}" if entry.read else ""
    return f"{'  ' * min(entry.level, MAX_INDENT_LEVELS)}{title}  ({entry.where}){read}"


Heading = tuple[int, str, int]  # (level from 1, title, first line)


def heading_entries(headings: list[Heading], total: int) -> list[Entry]:
    """Heading entries, each spanning to the line before the next heading of its level or higher
    (or the last of `total` lines)."""
    ends = section_ends([(level, first) for level, _, first in headings], total, shared=False)
    return [lines_entry(level - 1, title, first, end) for (level, title, first), end in zip(headings, ends)]


def section_ends(starts: list[tuple[int, int | None]], total: int, shared: bool) -> list[int | None]:
    """Where each section of (level, start) ends, in document order: before the start of the next
    at its level or higher, or on it when `shared` (a PDF page the next bookmark begins on may
    hold this one's end), else at `total`. A section with no start (None) ends nowhere and bounds
    none."""
    deepest = max((level for level, _ in starts), default=0)
    following = [total + (0 if shared else 1)] * (deepest + 1)  # by level: the next start at it or higher
    ends: list[int | None] = []
    for level, start in reversed(starts):
        if start is None:
            ends.append(None)
            continue
        ends.append(max(start, following[level] - (0 if shared else 1)))
        following[level:] = [start] * (deepest + 1 - level)
    return ends[::-1]


def entry_lines(entries: Sequence[Entry], budget: int) -> tuple[list[str], int]:
    """Entry lines from the first while they fit in `budget` bytes (the first always)
    → (lines, count)."""
    out: list[str] = []
    used = 0
    for entry in entries:
        line = entry_line(entry)
        used += len(line.encode("utf-8")) + 1
        if out and used > budget:
            break
        out.append(line)
    return out, len(out)


def outline_result(entries: Sequence[Entry], request: ReadRequest, path: str, kind: str, header: str,
                   **totals: Any) -> ReadResult:
    """A window of `entries` (offset/limit count entries) under `header`, within the reply's budget,
    ending with the call that lists the rest; `totals` are the result's totals (total_pages=...)."""
    total = len(entries)
    first = request.line_from(total)
    if first > max(total, 1):
        raise past_end(first, total, "outline entry", "the outline")
    budget = request.output_bytes - len(header.encode("utf-8")) - 1
    stop = min(total, first - 1 + request.line_limit)
    lines, shown = entry_lines(entries[first - 1:stop], budget)
    last = first + shown - 1
    result = ReadResult(kind=kind, path=path, **totals)
    if total:
        result.shown = {"outline": [first, last]}
    text = [header, *lines]
    if last < total:
        reason = line_limit_reason(request.line_limit) if last == stop else output_limit_reason(request.output_bytes)
        result.truncated = True
        result.next = {"outline": True, "offset": last + 1}
        entries = f"outline entry {first:,}" if first == last else f"outline entries {first:,}-{last:,}"
        text.append(f"[Showing {entries} of {total:,} ({reason}). Call again with "
                    f"outline=true offset={last + 1} to continue.]")
    result.content = [TextPart("\n".join(text))]
    return result
