"""The model's view of numbered text: `cat -n` lines and the markers that say what was cut.

cat -n style (number right-aligned in six columns, a tab, the line) because models have seen it
everywhere and cite line numbers from it reliably.
"""

from __future__ import annotations

from agentread.limits import MAX_LINE_CHARS
from agentread.result import ReadError


def numbered(number: int, line: str) -> str:
    return f"{number:6d}\t{line}"


def numbered_lines(first: int, lines: list[str]) -> str:
    """`numbered` for consecutive lines from `first`, joined by newlines, in one C-level format
    call: several times faster than formatting each line on its own."""
    args: list = [None] * (2 * len(lines))
    args[0::2] = range(first, first + len(lines))
    args[1::2] = lines
    return ("%6d\t%s\n" * len(lines) % tuple(args))[:-1]


def cut_line(line: str, total_chars: int | None = None, total_bytes: int | None = None) -> str:
    """Cut a line to MAX_LINE_CHARS with a marker naming its full length (characters, or bytes
    if unknown)."""
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
    """The closing line of a cut window: what was shown, why it stopped, and the exact call
    to continue."""
    of = f" of {total:,}" if total is not None else ""
    span = f"{first:,}-{last:,}" if first > 0 else f"{first:,} to {last:,}"  # counted from the end
    return f"[Showing lines {span}{of} ({reason}). Call again with {call} to continue.]"


def past_end(offset: int, total: int | None, noun: str, of: str) -> ReadError:
    """The error for an offset past the end of what a read numbers (`total` of them, a `noun` each,
    in `of`): every reader's, in the same words."""
    if total is None:
        return ReadError("offset_past_end", f"offset {offset:,} is past the end of {of}. Call again with a smaller "
                         "offset, or without one to read it from the start.")
    nouns = noun if total == 1 else noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return ReadError("offset_past_end", f"offset {offset:,} is past the end of {of}, which has {total:,} {nouns}. "
                     f"Call again with an offset from 1 to {max(total, 1):,}.")


def line_limit_reason(limit: int) -> str:
    return f"limit of {limit:,} lines"


def output_limit_reason(budget: int) -> str:
    return f"output limit of {size_words(budget)}"


def size_words(budget: int) -> str:
    """A text budget as the closing lines name it: "about 50 KB", or exactly when it is small."""
    return f"about {budget // 1000} KB" if budget >= 10_000 else f"{budget:,} bytes"


class Window:
    """Numbered lines collected from `first` within a line limit and a byte budget, and
    why it stopped."""

    def __init__(self, first: int, limit: int, budget: int):
        self.first, self.limit, self.budget = first, limit, budget
        self.lines: list[str] = []
        self.used = 0
        self.reason: str | None = None  # set when a line did not fit: more follows

    @property
    def next_number(self) -> int:
        return self.first + len(self.lines)

    def add(self, line: str) -> bool:
        """Number and keep `line`; False, with the reason, when it does not fit."""
        if len(self.lines) >= self.limit:
            self.reason = line_limit_reason(self.limit)
            return False
        out = numbered(self.next_number, line)
        cost = len(out.encode("utf-8")) + 1
        if self.lines and self.used + cost > self.budget:
            self.reason = output_limit_reason(self.budget)
            return False
        self.lines.append(out)
        self.used += cost
        return True


def window(lines: list[str], offset: int, limit: int, budget: int, also: str = "") -> tuple[list[str], int, bool]:
    """Numbered lines of already-rendered text (a PDF's pages, say) from `offset`, within
    `limit` lines and `budget` bytes, with the closing line when cut → (rendered, last line
    shown, truncated). `also` names the other arguments the continuing call must repeat
    (e.g. the pages)."""
    win = Window(offset, limit, budget)
    for line in lines[offset - 1:]:
        if not win.add(cut_line(line) if len(line) > MAX_LINE_CHARS else line):
            break
    last = win.next_number - 1
    if win.reason:
        win.lines.append(continuation(offset, last, len(lines), win.reason, f"{also}offset={last + 1}"))
    return win.lines, last, win.reason is not None
