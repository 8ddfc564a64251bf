"""The model's view of numbered text: `cat -n` lines and the markers that say what was cut.

cat -n style (number right-aligned in six columns, a tab, the line) because models have seen it
everywhere and cite line numbers from it reliably.
"""

from __future__ import annotations

from agentread.limits import MAX_LINE_CHARS
from agentread.result import ReadError

# Bytes kept beside a line cut to fit a reply for the numbers of its marker, which grow with it.
MARKER_SLACK_BYTES = 16


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


def span(first: int, last: int) -> str:
    """A run of pages, slides, sheets or cells as `pages` and `cells` take it and the replies name
    it: "7" for one, "7-9" for several."""
    return str(first) if last == first else f"{first}-{last}"


def counted(noun: str, first: int, last: int) -> str:
    """A run in words: "page 7", "pages 7-9"."""
    return f"{noun} {first}" if last == first else f"{noun}s {first}-{last}"


def shown_lines(first: int, last: int, column: int = 1) -> dict:
    """A result's `shown` of numbered lines first..last: with the character the first is shown from
    when past its first (a read that goes on with a cut line shows that line in part)."""
    return {"lines": [first, last], **({"column": column} if column > 1 else {})}


def amount(count: int, noun: str) -> str:
    """A count with its noun: "1 line", "2,000 lines"."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def label_span(first: str, last: str) -> str:
    """A run of page labels as the replies name it: "i-xxx", or "T-1 to T-2" where a label holds a
    hyphen itself, so that the run's two ends read apart."""
    return f"{first} to {last}" if "-" in first + last else f"{first}-{last}"


def up_to(total: int, name: str, article: str = "", quoted: bool = False) -> str:
    """The values an argument may take, as an error's "Call again with" names them: "an offset from
    1 to 45", or "offset=1" when there is one."""
    if total <= 1:
        return f'{name}="1"' if quoted else f"{name}=1"
    return f"{article}{name} from 1 to {total:,}"


def continuation(first: int, last: int, total: int | None, reason: str, call: str) -> str:
    """The closing line of a cut window: what was shown, why it stopped, and the exact call
    to continue."""
    of = f" of {total:,}" if total is not None else ""
    if first == last:
        lines = f"line {first:,}"
    else:  # from the end, a hyphen would read as a minus
        lines = f"lines {first:,}-{last:,}" if first > 0 else f"lines {first:,} to {last:,}"
    return f"[Showing {lines}{of} ({reason}). Call again with {call} to continue.]"


def past_end(offset: int, total: int | None, noun: str, of: str) -> ReadError:
    """The error for an offset past the end of what a read numbers (`total` of them, a `noun` each,
    in `of`): every reader's, in the same words."""
    if total is None:
        return ReadError("offset_past_end", f"offset {offset:,} is past the end of {of}. Call again with a smaller "
                         "offset, or without one to read it from the start.")
    nouns = noun if total == 1 else noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return ReadError("offset_past_end", f"offset {offset:,} is past the end of {of}, which has {total:,} {nouns}. "
                     f"Call again with {up_to(total, 'offset', 'an ')}.")


def line_limit_reason(limit: int) -> str:
    return f"limit of {amount(limit, 'line')}"


def output_limit_reason(budget: int) -> str:
    return f"output limit of {size_words(budget)}"


def size_words(budget: int) -> str:
    """A text budget as the closing lines name it: "about 50 KB", or exactly when it is small."""
    return f"about {budget // 1000} KB" if budget >= 10_000 else f"{budget:,} bytes"


def cut_at(text: str, number: int, column: int = 1, size: str | None = None,
           also: str = "", chars: int = MAX_LINE_CHARS) -> tuple[str, int | None]:
    """Line `number` as shown from its character `column` (`text` starts there): at most `chars`
    characters, and when cut a marker naming the call that reads on → (shown, the column it reads
    on at, or None when whole). `size` names the whole line's length when known. A line held in
    part must hold more than `chars` characters of it."""
    if len(text) <= chars:
        return text, None
    on = column + chars
    of = f" of {size or f'{column - 1 + len(text):,} characters'}"
    return (f"{text[:chars]} [… line cut at character {on - 1:,}{of}; {also}offset={number}, "
            f"column={on} reads on]"), on


def cut_to_fit(text: str, number: int, column: int, size: str | None, also: str,
               room: int) -> tuple[str, int | None]:
    """`cut_at`, cut where the line with its marker takes `room` bytes: a line over a whole reply
    shows what fits of it, and its marker names the column that reads on."""
    marker = (len(cut_at(text, number, column, size, also, chars=1)[0].encode("utf-8", "surrogatepass"))
              - len(text[0].encode("utf-8", "surrogatepass")) + MARKER_SLACK_BYTES)
    return cut_at(text, number, column, size, also, chars=fitting(text[:MAX_LINE_CHARS], room - marker))


def fitting(text: str, budget: int) -> int:
    """How many characters from the start of `text` take at most `budget` bytes in UTF-8 (one at
    least, so that a read always moves on)."""
    return max(1, len(text.encode("utf-8", "surrogatepass")[:max(budget, 0)].decode("utf-8", "ignore")))


class Window:
    """Numbered lines collected from `first` within a line limit and a byte budget, why it stopped,
    and the first line it cut (a window that cut a line goes on from there). `also` names the other
    arguments a continuing call must repeat (e.g. the pages)."""

    def __init__(self, first: int, limit: int, budget: int, also: str = "", fit_first: bool = True):
        self.first, self.limit, self.budget, self.also = first, limit, budget, also
        self.fit_first = fit_first  # a first line over the budget is cut to fit (False: it follows other lines)
        self.lines: list[str] = []
        self.count = 0  # lines numbered (a block added whole counts all its lines)
        self.used = 0
        self.reason: str | None = None  # set when a line did not fit: more follows
        self.cut: dict | None = None  # {offset, column} of the first line cut, where it reads on

    @property
    def next_number(self) -> int:
        return self.first + self.count

    def add(self, line: str, column: int = 1, size: str | None = None) -> bool:
        """Number and keep `line` (from its character `column`), cut when long; False, with the
        reason, when it does not fit. `size`: the whole line's length, when more of it than `line`
        holds."""
        if self.count >= self.limit:
            self.reason = line_limit_reason(self.limit)
            return False
        number = self.next_number
        shown, on = cut_at(line, number, column, size, self.also)
        out = numbered(number, shown)
        cost = len(out.encode("utf-8")) + 1
        if (self.lines or not self.fit_first) and self.used + cost > self.budget:
            self.reason = output_limit_reason(self.budget)
            return False
        if cost > self.budget and self.fit_first and len(line) > 1:  # a line over the whole reply: what fits
            shown, on = self._fit(line, number, column, size)
            out = numbered(number, shown)
            cost = len(out.encode("utf-8")) + 1
        if on is not None and self.cut is None:
            self.cut = {"offset": number, "column": on}
        self.lines.append(out)
        self.count += 1
        self.used += cost
        return True

    def _fit(self, line: str, number: int, column: int, size: str | None) -> tuple[str, int | None]:
        """Line `number` cut to what the budget holds beside its number and its marker."""
        room = self.budget - len(numbered(number, "").encode("utf-8")) - 1
        return cut_to_fit(line, number, column, size, self.also, room)

    def extend(self, other: Window) -> None:
        """The lines of a window that goes on from this one's next line, within what is left of this
        one's line limit and budget: where it stopped at either, this window stopped at its own."""
        self.lines += other.lines
        self.count += other.count
        self.used += other.used
        self.reason = other.reason
        if other.reason == line_limit_reason(other.limit):
            self.reason = line_limit_reason(self.limit)
        elif other.reason == output_limit_reason(other.budget):
            self.reason = output_limit_reason(self.budget)
        self.cut = self.cut or other.cut

    @property
    def truncated(self) -> bool:
        return self.reason is not None or self.cut is not None

    def next_args(self) -> dict | None:
        """What a call sends to go on: the first cut line's rest, else the next line."""
        if self.cut is not None:
            return dict(self.cut)
        return {"offset": self.next_number} if self.reason else None

    def closing(self, total: int | None) -> str:
        """The closing line of a truncated window."""
        args = self.next_args()
        call = self.also + ", ".join(f"{key}={value}" for key, value in args.items())
        reason = self.reason or f"line {self.cut['offset']:,} was cut at character {self.cut['column'] - 1:,}"
        return continuation(self.first, self.next_number - 1, total, reason, call)


def window(lines: list[str], offset: int, limit: int, budget: int, also: str = "",
           column: int = 1) -> tuple[list[str], int, dict | None]:
    """Numbered lines of already-rendered text (a PDF's pages, say) from `offset` (its first line
    from character `column`), within `limit` lines and `budget` bytes, with the closing line when
    cut → (rendered, last line shown, the arguments that go on or None). `also` names the other
    arguments the continuing call must repeat (e.g. the pages)."""
    win = Window(offset, limit, budget, also)
    for line in lines[offset - 1:]:
        first = not win.count and column > 1
        if first and column > len(lines[offset - 1]):
            raise column_past_end(column, offset, len(line))
        if not win.add(line[column - 1:] if first else line, column if first else 1):
            break
    last = win.next_number - 1
    if win.truncated:
        win.lines.append(win.closing(len(lines)))
    return win.lines, last, win.next_args()


def column_past_end(column: int, number: int, length: int) -> ReadError:
    return ReadError("offset_past_end", f"column {column:,} is past the end of line {number:,}, which has "
                     f"{length:,} characters. Call again with {up_to(length, 'column', 'a ')}, or without one.")
