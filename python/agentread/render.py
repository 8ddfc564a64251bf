"""The model's view of numbered text: `cat -n` lines and the markers that say what was cut.

cat -n style (number right-aligned in six columns, a tab, the line) because models have seen it everywhere and
cite line numbers from it reliably.
"""

from __future__ import annotations

from agentread.limits import MAX_LINE_CHARS


def numbered(number: int, line: str) -> str:
    return f"{number:6d}\t{line}"


def cut_line(line: str, total_chars: int | None = None, total_bytes: int | None = None) -> str:
    """Cut a line to MAX_LINE_CHARS with a marker naming its full length (characters, or bytes if unknown)."""
    if len(line) <= MAX_LINE_CHARS and total_chars is None and total_bytes is None:
        return line
    if total_chars is not None:
        size = f"{total_chars:,} characters"
    elif total_bytes is not None:
        size = f"{total_bytes:,} bytes"
    else:
        size = f"{len(line):,} characters"
    return f"{line[:MAX_LINE_CHARS]} [… line cut at {MAX_LINE_CHARS:,} of {size}]"


def continuation(first: int, last: int, total: int | None, reason: str, call: str) -> str:
    """The closing line of a cut window: what was shown, why it stopped, and the exact call to continue."""
    of = f" of {total:,}" if total is not None else ""
    return f"[Showing lines {first:,}-{last:,}{of} ({reason}). Call again with {call} to continue.]"


def window(lines: list[str], offset: int, limit: int, budget: int, also: str = "") -> tuple[list[str], int, bool]:
    """Numbered lines of already-rendered text (a PDF's pages, say) from `offset`, within `limit` lines and
    `budget` bytes, with the closing line when cut → (rendered, last line shown, truncated).
    `also` names the other arguments the continuing call must repeat (e.g. the pages)."""
    out: list[str] = []
    used = 0
    last = offset - 1
    reason = None
    for number in range(offset, len(lines) + 1):
        if number - offset >= limit:
            reason = f"limit of {limit:,} lines"
            break
        line = numbered(number, cut_line(lines[number - 1]) if len(lines[number - 1]) > MAX_LINE_CHARS
                        else lines[number - 1])
        cost = len(line.encode("utf-8")) + 1
        if out and used + cost > budget:
            reason = f"output limit of about {budget // 1000} KB"
            break
        out.append(line)
        used += cost
        last = number
    if reason:
        out.append(continuation(offset, last, len(lines), reason, f"{also}offset={last + 1}"))
    return out, last, reason is not None
