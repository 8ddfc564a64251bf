"""A text result's numbered lines read back as a test checks them, a line cut at MAX_LINE_CHARS
joined again from the reads that continue it (`column`)."""

from __future__ import annotations

import re

NUMBERED = re.compile(r"^ *(-?\d+)\t(.*)$", re.S)

# The marker of a cut line (numbering.cut_at), taken off to join the line's pieces.
CUT_MARK = re.compile(r" \[… line cut at character [\d,]+[^\]]*; [^\]]* reads on\]$")


def numbered_rows(text: str) -> list[tuple[int, str]]:
    """(number, line) of each numbered line of a rendered window; markers and notes are skipped."""
    return [(int(m.group(1)), m.group(2)) for m in map(NUMBERED.match, text.split("\n")) if m]


def take(seen: dict[int, str], asked: dict, window: list[tuple[int, str]]) -> None:
    """A window's lines added to `seen`: a line read on (`column`) joined to its start, the lines
    after it shown again the same."""
    rows = [(n, CUT_MARK.sub("", text)) for n, text in window]
    if asked.get("column"):
        assert rows[0][0] == asked["offset"] and len(seen[rows[0][0]]) == asked["column"] - 1
        seen[rows[0][0]] += rows.pop(0)[1]
    for number, text in rows:
        assert seen.setdefault(number, text) == text, number
