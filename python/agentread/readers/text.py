"""Text files as numbered lines, read as a stream: a window costs what it shows, not the
file's size.

Lines end at LF, CRLF or a lone CR, as in the editor; a final terminator ends the last line without
starting another (cat -n). ASCII-compatible encodings (UTF-8, cp1252, GBK, Shift_JIS, ...) never use
those bytes inside a character, so lines are split on raw bytes and only the lines shown are
decoded. UTF-16/32 files are transcoded to UTF-8 first.
"""

from __future__ import annotations

import codecs
import io
import os
import re
import threading
from array import array
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass, field
from itertools import accumulate
from operator import add
from typing import BinaryIO, Iterator, Union

from agentread.cancel import checkpoint
from agentread.find import (
    FIND_CONTEXT_CHARS,
    FOLDED_FROM_BEYOND_ASCII,
    Budget,
    Hit,
    Matcher,
    OutOfTime,
    Reached,
    around,
    line_read,
    line_start,
)
from agentread.hidden import carried_as_text, hidden_in, holds_hidden
from agentread.limits import MAX_LINE_CHARS
from agentread.numbering import (
    Window,
    column_past_end,
    line_limit_reason,
    numbered,
    numbered_lines,
    output_limit_reason,
    past_end,
    shown_lines,
)
from agentread.readers import Source
from agentread.request import InvalidParams, ReadRequest
from agentread.result import ReadError, ReadResult, TextPart

# Read size while counting lines, and the spacing of the line index. The buffer the kernel copies
# into must stay in the CPU's L2 cache (512 KB of L2 a core): a buffer that fits in it copies
# several times faster from the page cache than a larger one, however they were filled. Smaller
# chunks add Python work per chunk.
SCAN_CHUNK = 1 << 17

# Line index entries kept per file, thinned by half when full: a 10 GB log still costs a
# few hundred KB.
MAX_INDEX_ENTRIES = 1 << 14

# Read size while collecting a window: a window is usually a few KB to a few hundred KB.
WINDOW_CHUNK = 1 << 16

# A line is held whole up to this size (so its length is reported in characters); past it only
# its head is kept and the rest is counted in bytes, so one 1 GB line costs no more memory than
# a short one.
MAX_HELD_LINE_BYTES = 1 << 20

# A line is measured up to this many bytes; past it the window ends with that line, marked as
# longer than this, so a file that is one huge line answers at once (continuing past it is a fast
# byte count).
MAX_MEASURED_LINE_BYTES = 64 << 20

# A file up to this size is counted whole for `totalLines`, so that the model can go straight to its
# end (a quick count from the page cache, the index filled on the way; 32 MB without the compiled
# counter, below); past it the total is reported once a scan has reached the end (a 2 GB log must
# not ride on every first read).
COUNT_REST_BYTES = 128 << 20

# The common window is rendered a block at a time (see _plain_window): enough bytes for the whole
# output budget and this much more, for a line past it, in the encodings whose decoding that
# cannot change.
PLAIN_WINDOW_SLACK = WINDOW_CHUNK
PLAIN_WINDOW_ENCODINGS = ("utf-8", "ascii")

# The first bytes in UTF-8 of the characters that carry text (tag characters and variation
# selectors: U+E0000-E0FFF, U+FE00-FE3F), which a search looks for in a piece before it searches
# its bytes.
CARRIER_LEAD_BYTES = (b"\xf3\xa0", b"\xef\xb8")

# UTF-16/32 files are transcoded whole; past this size they are refused rather than held in memory.
MAX_TRANSCODE_BYTES = 256 << 20

# A find reads the file this many bytes at a time, cut at the last line end: the work per piece is
# then negligible beside the bytes searched.
FIND_CHUNK = 1 << 20

# A line longer than this is searched in pieces of this size (a match across two is not found), so
# that a file of one huge line costs a piece of memory.
MAX_FIND_LINE_BYTES = 16 << 20

# A search of decoded text (a regular expression) in a UTF-8 file decodes runs of ASCII lines as
# Latin-1, and the lines around bytes that are not ASCII as UTF-8 with the ASCII lines between them
# up to this many bytes: a part costs a few calls of Python, small beside this many bytes, and a
# file with such a line every few KB is decoded in long parts, not a few lines at a time.
FIND_ASCII_RUN = 16 << 10

# Bytes each side of a hit decoded to show FIND_CONTEXT_CHARS characters in any encoding.
FIND_CONTEXT_BYTES = 4 * FIND_CONTEXT_CHARS

# Files whose line positions are remembered between calls (the path and workspace.file_version key
# each entry).
INDEX_CACHE_FILES = 32

# HTML and Markdown files, by their names: the passages a rendered page hides are marked in them
# (markup_hidden.py, imported by their reads alone).
MARKUP_KINDS = {".html": "html", ".htm": "html", ".xhtml": "html", ".md": "markdown", ".markdown": "markdown"}

LINE_END = re.compile(rb"\r\n|\r|\n")
# Encodings whose line ends are not single bytes: transcoded to UTF-8 before lines are split.
WIDE_ENCODINGS = ("utf-16", "utf-32")


@dataclass
class LineIndex:
    """Sparse map from line numbers to byte offsets of line starts, filled in as the file is scanned
    (one entry per scan chunk) and by every window read (its first line), so a repeat read jumps
    straight to its line."""

    start: int = 0  # byte offset of line 1 (after any BOM)
    lines: array = field(default_factory=lambda: array("q"))  # machine integers: 16 bytes an entry
    offsets: array = field(default_factory=lambda: array("q"))
    total: int | None = None  # known once a scan reached the end
    # Reads of one file in several worker threads share its index: the two arrays change together,
    # under this lock, or a line could be paired with another line's offset.
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.lines, self.offsets = array("q", [1]), array("q", [self.start])

    def nearest(self, line: int) -> tuple[int, int]:
        with self._lock:
            i = bisect_right(self.lines, line) - 1
            return self.lines[i], self.offsets[i]

    def add(self, line: int, offset: int) -> None:
        with self._lock:
            i = bisect_right(self.lines, line)
            if self.lines[i - 1] == line:
                return
            self.lines.insert(i, line)
            self.offsets.insert(i, offset)
            if len(self.lines) > MAX_INDEX_ENTRIES:
                # Keep line 1 and every other entry: the spacing doubles, a jump still lands
                # near its line.
                self.lines, self.offsets = self.lines[::2], self.offsets[::2]


class _IndexCache:
    def __init__(self, size: int):
        self._size = size
        self._entries: OrderedDict[tuple, LineIndex] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple | None, start: int) -> LineIndex:
        if key is None:
            return LineIndex(start)
        with self._lock:
            index = self._entries.pop(key, None) or LineIndex(start)
            self._entries[key] = index
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
            return index


INDEXES = _IndexCache(INDEX_CACHE_FILES)


def _count_in_python(buf: bytearray, n: int) -> int:
    """Line ends in buf[:n] as _scan counts them, where it was not built: one pass per byte sought,
    the CR passes only when there is a CR (memchr finds none at once)."""
    ends = buf.count(b"\n", 0, n)
    if buf.find(b"\r", 0, n) < 0:
        return ends
    return ends + buf.count(b"\r", 0, n) - buf.count(b"\r\n", 0, n)


def _ascii_end_in_python(buffer: bytearray, start: int, end: int) -> int:
    """ascii_end where the C module was not built: copies of FIND_ASCII_RUN bytes tested whole, the
    first that is not ASCII halved down to its byte."""
    while start < end:
        stop = min(start + FIND_ASCII_RUN, end)
        if not buffer[start:stop].isascii():
            while stop - start > 1:
                middle = (start + stop) // 2
                start, stop = (middle, stop) if buffer[start:middle].isascii() else (start, middle)
            return start
        start = stop
    return end


# Why number_window stopped a window: the end of the file, the output budget, the line limit.
STOP_NONE, STOP_OUTPUT, STOP_LIMIT = 0, 1, 2

try:  # compiled with the package (setup.py): one pass, several times faster than one bytes.count pass
    from agentread._scan import ascii_end, count_line_ends, number_window
except ImportError:
    count_line_ends, number_window = _count_in_python, None
    ascii_end = _ascii_end_in_python
    COUNT_REST_BYTES = 32 << 20  # counting is several times slower: a first read counts as much as it did before


def _skip_to(f: BinaryIO, index: LineIndex, target: int) -> tuple[int, int, bool]:
    """Byte offset of the start of line `target` → (offset, line reached, found). Counts bytes only.

    At the end of the file, "line reached" is one past the last terminator: the line that would
    start there."""
    line, pos = index.nearest(target)
    buf = bytearray(SCAN_CHUNK)
    while line < target:
        checkpoint()
        f.seek(pos)
        n = f.readinto(buf)
        if not n:
            return pos, line, False
        if n == SCAN_CHUNK and buf[n - 1] == 13:
            n -= 1  # its \n may open the next chunk: count the pair once, there
        ends = count_line_ends(buf, n)
        if line + ends >= target:
            # Line `target` starts after the chunk's first target - line lines, found by
            # splitlines in C.
            lines = bytes(buf[:n]).splitlines(keepends=True)[:target - line]
            if not lines[-1].endswith((b"\n", b"\r")):
                raise AssertionError("the chunk's line ends were miscounted")  # never a wrong line number
            return pos + sum(map(len, lines)), target, True
        last = buf.rfind(b"\n", 0, n)
        last = max(last, buf.rfind(b"\r", last + 1, n))  # a lone CR after it; not a whole-chunk search
        line += ends
        if last >= 0:
            index.add(line, pos + last + 1)
        pos += n
    return pos, line, True


def _start_from_end(f: BinaryIO, start: int, back: int) -> tuple[int, int | None]:
    """Byte offset of the start of line -`back` (-1 is the last line), found by reading backwards
    from the end a chunk at a time, so the end of a large file is reached without counting the lines
    before it → (offset, None); or, when the file has no more than `back` lines, (offset of line
    1, its line count).

    Line -k starts after the k-th line end before the last line (a final terminator ends
    the last line)."""
    end = f.seek(0, io.SEEK_END)
    if end <= start:
        return start, 0
    f.seek(max(start, end - 2))
    tail = f.read(2)
    end -= 2 if tail == b"\r\n" else 1 if tail.endswith((b"\n", b"\r")) else 0
    buf = bytearray(SCAN_CHUNK)
    pos, needed, after = end, back, b""  # after: the byte just past the chunk being read
    while pos > start:
        checkpoint()
        chunk_start = max(start, pos - SCAN_CHUNK)
        f.seek(chunk_start)
        n = f.readinto(memoryview(buf)[:pos - chunk_start])
        # A CR ending this chunk before an LF opening the next is one line end, counted
        # there already.
        split_pair = after == b"\n" and buf[n - 1] == 13
        ends = count_line_ends(buf, n) - split_pair
        if ends >= needed:
            # Line -back starts after the chunk's last `needed` - 1 whole lines and the head of a
            # line going on past it. splitlines finds them in C, far faster than a regex search
            # per line end.
            kept = n - split_pair
            pieces = bytes(buf[:kept]).splitlines(keepends=True)
            after_start = needed - 1 + (not pieces[-1].endswith((b"\n", b"\r")))
            return chunk_start + kept - sum(map(len, pieces[len(pieces) - after_start:])), None
        needed -= ends
        after = bytes(buf[:1])
        pos = chunk_start
    return start, back - needed + 1


def _lines(f: BinaryIO, pos: int) -> Iterator[tuple[bytes, int]]:
    """Lines from byte `pos`: (bytes held, full length in bytes). Long lines yield only their head;
    a line longer than MAX_MEASURED_LINE_BYTES yields length -1 and ends the stream.

    bytes.splitlines ends lines exactly where the editor does (LF, CRLF, lone CR, nothing else), a
    chunk at a time in C: a 2,000-line window costs one call, not 2,000 regex searches."""
    f.seek(pos)
    rest = b""
    held, held_len = None, 0  # the head of a line too long to hold, and its length so far
    while True:
        checkpoint()
        chunk = f.read(WINDOW_CHUNK if held is None else SCAN_CHUNK)
        eof = not chunk
        lines = (rest + chunk if rest else chunk).splitlines(keepends=True)
        # The last piece may go on in the next chunk: unterminated, or a CR that may be
        # half of a CRLF.
        rest = lines.pop() if lines and not eof and not lines[-1].endswith(b"\n") else b""
        for line in lines:
            cut = 2 if line.endswith(b"\r\n") else 1 if line.endswith((b"\n", b"\r")) else 0
            body = line[:-cut] if cut else line
            if held is not None:
                yield held, held_len + len(body)
                held, held_len = None, 0
            else:
                yield body, len(body)
        if eof:
            if held is not None:
                yield held, held_len
            return
        if len(rest) > MAX_HELD_LINE_BYTES:
            keep = rest[:-1] if rest.endswith(b"\r") else rest
            if held is None:
                held = keep[: MAX_LINE_CHARS * 4 + 4]  # more than MAX_LINE_CHARS characters in any encoding
            held_len += len(keep)
            rest = rest[len(keep):]
            if held_len > MAX_MEASURED_LINE_BYTES:
                yield held, -1
                return


def _plain_window(stream: BinaryIO, start: int, first: int, limit: int, budget: int,
                  encoding: str) -> tuple[str, int, str | None] | None:
    """The common window (UTF-8, no line to cut) rendered a block at a time → (numbered text, next
    number, stop reason), the same as the line-by-line loop in read_text gives; None when that loop
    must decide.

    The block's lines are numbered in one compiled call (or, many times slower, a few C-level calls,
    below) instead of a dozen calls per line. UTF-8 only: its decoder never lets a bad sequence
    swallow the bytes between lines, so decoding the numbered lines whole equals decoding each."""
    if encoding not in PLAIN_WINDOW_ENCODINGS:
        return None
    stream.seek(start)
    wanted = budget + PLAIN_WINDOW_SLACK
    block = stream.read(wanted)
    eof = len(block) < wanted
    if number_window is not None:
        window = number_window(block, eof, first, limit, budget, MAX_LINE_CHARS)
        if window is None:
            return None
        rendered, shown, stop = window
        try:
            return rendered.decode(encoding), first + shown, _stop_reason(stop, limit, budget)
        except UnicodeDecodeError:
            pass  # bad bytes, shown replaced: each line is sized as shown, below
    return _number_block(block, eof, first, limit, budget, encoding)


def _stop_reason(stop: int, limit: int, budget: int) -> str | None:
    """number_window's stop code as the closing line names it, in Window's words."""
    if stop == STOP_OUTPUT:
        return output_limit_reason(budget)
    return line_limit_reason(limit) if stop == STOP_LIMIT else None


def _number_block(block: bytes, eof: bool, first: int, limit: int, budget: int,
                  encoding: str) -> tuple[str, int, str | None] | None:
    """_plain_window's numbering in a few C-level calls on the block, for where number_window was
    not compiled and for lines with bad bytes (each then costs its replaced text, not its bytes)."""
    pieces = block.splitlines()
    if not eof:
        del pieces[-1:]  # may go on past the block
    pieces = pieces[: limit + 1]  # one past the limit tells whether more follow
    if not pieces or max(map(len, pieces)) > MAX_LINE_CHARS:
        return None
    joined = b"\n".join(pieces)
    try:
        lines = joined.decode(encoding).split("\n")
        sizes = map(len, pieces)  # valid: each line's output bytes are its bytes in the file
    except UnicodeDecodeError:
        lines = joined.decode(encoding, errors="replace").split("\n")
        sizes = (len(line.encode("utf-8")) for line in lines)
    column = len(numbered(first, ""))  # the number and its tab
    if len(numbered(first + len(lines), "")) != column:
        return None  # the number column widens within the window (line 1,000,000): the loop sizes each line
    # What the first k lines cost in the output: their bytes, plus a number column and a
    # newline each.
    costs = list(map(add, accumulate(sizes), range(column + 1, (column + 1) * (len(lines) + 1), column + 1)))
    if costs[0] > budget:
        return None  # one line over the whole budget: the loop cuts it to fit
    shown = bisect_right(costs, budget)
    stop = STOP_OUTPUT if shown < len(lines) else STOP_NONE
    if stop == STOP_NONE or shown >= limit:
        if len(pieces) > limit:
            shown, stop = limit, STOP_LIMIT
        elif not eof:
            return None  # the block ran out before the window did: the loop reads on
    return numbered_lines(first, lines[:shown]), first + shown, _stop_reason(stop, limit, budget)


def _open_text(source: BinaryIO, encoding: str, bom: int, size: int) -> tuple[BinaryIO, str, bool]:
    """A byte stream of lines in an ASCII-compatible encoding; wide encodings are
    transcoded to UTF-8."""
    if not encoding.startswith(WIDE_ENCODINGS):
        source.seek(bom)
        return source, encoding, False
    if size > MAX_TRANSCODE_BYTES:
        raise ReadError("file_too_large", f"the file is {encoding.upper()} text of {size:,} bytes; files in "
                        f"this encoding are read only up to {MAX_TRANSCODE_BYTES:,} bytes. Convert it to UTF-8 "
                        "(e.g. iconv) and read the converted file.")
    source.seek(bom)
    text = source.read().decode(encoding, errors="replace")
    return io.BytesIO(text.encode("utf-8")), "utf-8", True


def read(source: Source, request: ReadRequest) -> ReadResult:
    """The reader seam's text reader: a window of the file as numbered lines; a first read of a
    file too long for one reply ends with the outline of the rest (structure.py), so the next read
    can aim. An HTML or Markdown file's hidden passages are marked (markup_hidden.py)."""
    def window(request: ReadRequest) -> ReadResult:
        result = read_text(source.stream, request, source.path, source.encoding or "utf-8", source.bom, source.size,
                           None if source.from_editor else source.cache_key,
                           label="utf-8 (editor buffer)" if source.from_editor else None)
        if markup_kind(source.path) is None:
            return result
        from agentread.readers.markup_hidden import marked

        return marked(source, result, request.column or 1)

    result = window(request)
    if result.truncated and request.offset is None and request.limit is None:
        from agentread.readers.structure import with_outline_of_rest

        return with_outline_of_rest(source, request, result, window)
    return result


def markup_kind(path: str) -> str | None:
    """"html" or "markdown" for a file of those kinds by its name, None for any other."""
    return MARKUP_KINDS.get(os.path.splitext(path)[1].lower())


def read_text(source: BinaryIO, request: ReadRequest, path: str, encoding: str, bom: int = 0,
              size: int = 0, cache_key: tuple | None = None, label: str | None = None) -> ReadResult:
    """A window of numbered lines from `source`, a binary stream positioned anywhere.

    `cache_key` (path, mtime, size...) lets repeat reads of an unchanged file jump straight
    to their line.
    """
    stream, decode_as, transcoded = _open_text(source, encoding, bom, size)
    index = INDEXES.get(None if transcoded else cache_key, 0 if transcoded else bom)
    encoding_label = label or (f"{encoding} with BOM" if bom else encoding)
    first = request.first_line
    if request.from_end:
        total = index.total
        if total is None and size <= COUNT_REST_BYTES:
            total = _count_total(stream, index)  # a first read counts such a file anyway
        if total is None:
            start, total = _start_from_end(stream, index.start, -request.offset)
            if total is None:
                return _from_end(stream, start, request, path, decode_as, encoding_label, size)
            index.total = total
        first = request.line_from(total)
    start, reached, found = _skip_to(stream, index, first)
    if not found or (first > 1 and _at_end(stream, start)):
        total = index.total if index.total is not None else _count_total(stream, index)
        if first == 1 and total == 0:
            return ReadResult(kind="text", path=path, content=[TextPart("[The file is empty: 0 lines.]")],
                              total_lines=0, encoding=encoding_label)
        raise past_end(first, total, "line", "the file")
    index.add(first, start)  # a repeat read of this window starts here without a scan

    win = _window(stream, start, first, request.line_limit, request.output_bytes, decode_as, request.column or 1,
                  also=_also(request))
    last = win.next_number - 1
    if last == first - 1 and first == 1:
        return ReadResult(kind="text", path=path, content=[TextPart("[The file is empty: 0 lines.]")],
                          total_lines=0, encoding=encoding_label)

    total = index.total
    if win.reason is None:
        total = last
        index.total = total
    elif total is None and size <= COUNT_REST_BYTES:
        total = _count_total(stream, index)
    result = ReadResult(kind="text", path=path, total_lines=total, start_line=first, end_line=last,
                        truncated=win.truncated, shown=shown_lines(first, last, request.column or 1),
                        encoding=encoding_label)
    if win.truncated:
        win.lines.append(win.closing(total))
        result.next = _next_args(win, request)
    result.content = [TextPart("\n".join(win.lines))]
    return result


def _also(request: ReadRequest) -> str:
    """What the calls a window names carry besides offset and column: a raw read's go on raw (a
    notebook's JSON, not its rendered cells)."""
    return "raw=true and " if request.raw else ""


def _next_args(win: Window, request: ReadRequest) -> dict | None:
    args = win.next_args()
    return {"raw": True, **args} if request.raw and args else args


def _window(stream: BinaryIO, start: int, first: int, limit: int, budget: int, encoding: str,
            column: int = 1, fit_first: bool = True, also: str = "") -> Window:
    """Numbered lines from byte `start`, the first numbered `first` and shown from its character
    `column`, within `limit` lines and `budget` bytes (a first line over them cut to fit, unless
    other lines come before it); `also` as Window takes it."""
    win = Window(first, limit, budget, also=also, fit_first=fit_first)
    if column > 1:
        text, length, following = _from_column(stream, start, column, encoding)
        if not text:
            raise column_past_end(column, first, length)
        win.add(text, column, f"{length:,} characters")
        if following is not None and win.count < limit:
            win.extend(_window(stream, following, first + 1, limit - 1, max(1, budget - win.used), encoding,
                               fit_first=False, also=also))
        elif following is not None:
            win.reason = line_limit_reason(limit)  # lines follow the one continued
        return win
    fast = _plain_window(stream, start, first, limit, budget, encoding)
    if fast is not None:
        block, number, win.reason = fast
        win.lines, win.count = [block], number - first
        return win
    for raw, full_len in _lines(stream, start):
        text = raw.decode(encoding, errors="replace")
        if full_len < 0:
            size = f"more than {MAX_MEASURED_LINE_BYTES >> 20} MB"
        else:
            size = f"{full_len:,} bytes" if full_len > len(raw) else None
        if not win.add(text, size=size):
            break
        if full_len < 0:
            win.reason = "a line too long to measure"
            break
    return win


def _from_column(stream: BinaryIO, start: int, column: int, encoding: str) -> tuple[str, int, int | None]:
    """The line at byte `start` from its character `column`: at most MAX_LINE_CHARS + 1 characters
    (the one more says it goes on), its length in characters, and where the next line starts (None:
    the file ends with it). Decoded a chunk at a time: a line of any length costs a chunk."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    stream.seek(start)
    pos, length, kept = start, 0, ""
    while True:
        checkpoint()
        chunk = stream.read(SCAN_CHUNK)
        end = LINE_END.search(chunk)
        text = decoder.decode(chunk[:end.start()] if end else chunk, final=not chunk or end is not None)
        if len(kept) <= MAX_LINE_CHARS:
            skip = max(0, column - 1 - length)
            kept += text[skip:skip + MAX_LINE_CHARS + 1 - len(kept)]
        length += len(text)
        if not chunk:
            return kept, length, None
        if end is not None:
            following = pos + end.end()
            if end.group() == b"\r" and end.end() == len(chunk):  # the CR of a CRLF split between chunks
                stream.seek(following)
                following += stream.read(1) == b"\n"
            stream.seek(following)
            return kept, length, following if stream.read(1) else None
        pos += len(chunk)


def _from_end(stream: BinaryIO, start: int, request: ReadRequest, path: str, encoding: str, label: str,
              size: int) -> ReadResult:
    """A window counted back from the end of a file whose line count is not known: its lines are
    numbered from the end (-1 is the last line), as counting the lines before them would mean
    reading the whole file."""
    first = request.offset
    # Lines appended since the end was found are not shown: the window stops at line -1 as
    # it was found.
    win = _window(stream, start, first, min(request.line_limit, -first), request.output_bytes, encoding,
                  request.column or 1, also=_also(request))
    last = win.next_number - 1
    if last >= -1:
        win.reason = None  # nothing follows: no call to continue with (offset 0 would be malformed)
    note = (f"[Lines numbered from the end of the file: -1 is its last line. The file is {size / 2**20:,.0f} MB; "
            "its line count, and so the editor's numbers for these lines, would take reading all of it.]")
    result = ReadResult(kind="text", path=path, start_line=first, end_line=last, truncated=win.truncated,
                        shown=shown_lines(first, last, request.column or 1), encoding=label)
    if win.truncated:
        win.lines.append(win.closing(None))
        result.next = _next_args(win, request)
    result.content = [TextPart("\n".join([note] + win.lines))]
    return result


def _at_end(stream: BinaryIO, pos: int) -> bool:
    stream.seek(pos)
    return not stream.read(1)


def _count_total(stream: BinaryIO, index: LineIndex) -> int:
    """Lines in the file, counted as cat -n does; the scan fills the index on its way to the end."""
    end, line, _ = _skip_to(stream, index, 1 << 62)
    total = line - 1
    if end > index.start:
        stream.seek(end - 1)
        if stream.read(1) not in (b"\n", b"\r"):
            total += 1  # a last line without a terminator
    index.total = total
    return total


def search(source: Source, request: ReadRequest, matcher: Matcher) -> tuple[str, Iterator[Hit | Reached]]:
    """The reader seam's text search; an HTML or Markdown file's hits in hidden passages show their
    markers (markup_hidden.py)."""
    hits = _search(source, request, matcher)
    if markup_kind(source.path) is None:
        return "text", hits
    from agentread.readers.markup_hidden import marked_hits

    return "text", marked_hits(source, hits, matcher)


def _search(source: Source, request: ReadRequest, matcher: Matcher) -> Iterator[Hit | Reached]:
    """The hits from line `offset` (its character `column`) on, the file read a piece of whole lines
    at a time. A UTF-8 file is searched as bytes for a plain string (the bytes of a UTF-8 string are
    found only where the string is), other searches in the decoded text; only the lines around a
    hit are decoded to show it."""
    if request.from_end:
        raise InvalidParams(f"find searches forwards from a line: offset must be 1 or more, got {request.offset}")
    stream, decode_as, transcoded = _open_text(source.stream, source.encoding or "utf-8", source.bom, source.size)
    index = INDEXES.get(None if transcoded or source.from_editor else source.cache_key, 0 if transcoded else source.bom)
    first = request.first_line
    start, _, found = _skip_to(stream, index, first)
    if not found or (first > 1 and _at_end(stream, start)):
        raise past_end(first, index.total if index.total is not None else _count_total(stream, index), "line",
                       "the file")
    needle = _byte_needle(matcher, decode_as)
    # A UTF-8 file's lines are searched a part at a time (_texts), which never splits a line.
    in_parts = needle is None and decode_as in PLAIN_WINDOW_ENCODINGS and not LINE_END.search(
        matcher.text.encode("utf-8"))

    def shown(hit: Hit) -> bool:
        return hit.where["line"] > first or hit.where["column"] >= (request.column or 1)

    line, carried = first, 0  # carried: characters of the current line in pieces before (a line split)
    budget = Budget()
    for buffer, size, whole in _pieces(stream, start):
        # Out of time at a line's start (a `next` searches a line from its start): the file goes on
        # from `line`, and the reply says so.
        if not carried and budget.spent():
            yield _reached(line)
            return
        # A piece holding characters that carry text is searched decoded, those read as what they
        # carry (hidden.carried_as_text).
        carrying = decode_as not in PLAIN_WINDOW_ENCODINGS or _carries(buffer, size)
        if needle is not None and not carrying:
            hits = _Hits(buffer, size, decode_as, line, carried)
            spans = matcher.ascii_spans(buffer, 0, size) if matcher.ignore_case else _find_all(buffer, needle, size)
            yield from filter(shown, (hits.at(begin, end) for begin, end in spans))
        elif in_parts and not carrying:
            hits = _Hits(buffer, size, decode_as, line, carried)
            for at, text in _texts(buffer, size, decode_as, matcher.in_place):
                if isinstance(text, int):  # ASCII lines up to `text`, searched in the buffer
                    yield from filter(shown, (hits.at(begin, end) for begin, end in
                                              matcher.ascii_spans(buffer, at, text)))
                    continue
                part = None
                try:
                    for begin, end in matcher.line_spans(text, budget):
                        if part is None:  # the lines before the part are counted once it has a hit
                            part = _Hits(text, len(text), decode_as, hits.line_at(at), 0 if at else carried)
                        hit = part.at(begin, end)
                        if shown(hit):
                            yield hit
                except OutOfTime as stop:
                    part = part or _Hits(text, len(text), decode_as, hits.line_at(at), 0 if at else carried)
                    yield _reached(part.line_at(stop.at))
                    return
        else:
            data = buffer[:size].decode(decode_as, errors="replace")
            hits = _Hits(data, len(data), decode_as, line, carried)
            try:
                yield from filter(shown, (hits.at(begin, end) for begin, end in
                                          matcher.line_spans(carried_as_text(data), budget)))
            except OutOfTime as stop:
                yield _reached(hits.line_at(stop.at))
                return
        line, carried = hits.after(whole)


def _carries(buffer: bytearray, size: int) -> bool:
    """Whether buffer[:size] holds the first bytes of a character that carries text: each lead
    byte looked for alone first, which runs at memory's speed where a two-byte search does not."""
    for lead in CARRIER_LEAD_BYTES:
        at = buffer.find(lead[0], 0, size)
        if at >= 0 and buffer.find(lead, at, size) >= 0:
            return True
    return False


def _reached(line: int) -> Reached:
    """Where a search out of time got to: the start of `line`, which it has yet to search."""
    return Reached({"line": line}, {"offset": line})


def _texts(buffer: bytearray, size: int, encoding: str,
           ascii_in_place: bool = False) -> Iterator[tuple[int, str | int]]:
    """buffer[:size], UTF-8 or ASCII, decoded as (byte offset, text) parts of whole lines, as
    buffer[:size].decode(encoding, errors="replace") decodes them (a decoder never joins a line end
    to the bytes around it). A run of ASCII lines decodes as Latin-1, a copy, or with
    `ascii_in_place` is given as where it ends, to be searched in the buffer (its bytes are its
    characters); the lines around a byte that is not ASCII go through the UTF-8 decoder, with the
    ASCII lines between them up to FIND_ASCII_RUN bytes (text of another script is decoded in long
    parts, not a line at a time)."""
    with memoryview(buffer) as view:
        at = 0
        while at < size:
            other = ascii_end(buffer, at, size)
            if other == size:
                yield at, size if ascii_in_place else str(view[at:size], "latin-1")
                return
            lf = buffer.rfind(b"\n", at, other)
            start = max(lf + 1, buffer.rfind(b"\r", max(lf, at), other) + 1, at)  # the start of its line
            if start > at:
                yield at, start if ascii_in_place else str(view[at:start], "latin-1")
            end = line_start(buffer, other + 1, size)
            while end < size:
                reach = min(end + FIND_ASCII_RUN, size)
                if ascii_end(buffer, end, reach) == reach:
                    break
                end = line_start(buffer, reach, size)
            yield start, str(view[start:end], encoding, "replace")
            at = end


Piece = Union[bytearray, str]


def _byte_needle(matcher: Matcher, encoding: str) -> bytes | None:
    """The bytes that find the search in a UTF-8 or ASCII file, where they find exactly what the
    decoded text would: a plain string, as is, or ASCII regardless of case when no character beyond
    ASCII matches any of its letters (found by a caseless pass over the bytes, which folds ASCII
    only)."""
    if encoding not in PLAIN_WINDOW_ENCODINGS or not matcher.plain:
        return None
    if not matcher.ignore_case:
        return matcher.text.encode("utf-8")
    text = matcher.text.lower()
    return text.encode("ascii") if text.isascii() and not FOLDED_FROM_BEYOND_ASCII & set(text) else None


def _find_all(data: bytearray, needle: bytes, size: int) -> Iterator[tuple[int, int]]:
    at = data.find(needle, 0, size)
    while at >= 0:
        yield at, at + len(needle)
        at = data.find(needle, at + len(needle), size)


class _Hits:
    """Hits in one piece of a file (whole lines, bytes or decoded: data[:size]), numbered from its
    first line."""

    def __init__(self, data: Piece, size: int, encoding: str, line: int, carried: int):
        self.data, self.size, self.encoding, self.carried = data, size, encoding, carried
        self.lf, self.cr = ("\n", "\r") if isinstance(data, str) else (b"\n", b"\r")
        self._has_cr: bool | None = None
        self.line, self.pos = line, 0  # the line at position `pos`
        self.start = self.end = -1  # the current hit line's bounds in data

    @property
    def has_cr(self) -> bool:
        if self._has_cr is None:
            self._has_cr = self.data.find(self.cr, 0, self.size) >= 0
        return self._has_cr

    def _ends(self, start: int, end: int) -> int:
        if start == 0 and isinstance(self.data, bytearray):
            return count_line_ends(self.data, end)  # one compiled pass
        ends = self.data.count(self.lf, start, end)
        if self.has_cr:
            ends += self.data.count(self.cr, start, end) - self.data.count(self.cr + self.lf, start, end)
        return ends

    def _text(self, start: int, end: int) -> str:
        piece = self.data[start:end]
        return piece.decode(self.encoding, errors="replace") if isinstance(piece, bytearray) else piece

    def line_at(self, pos: int) -> int:
        """The line position `pos` (at or after the last one asked) is on; lines are counted from
        the last position on, once."""
        self.line += self._ends(self.pos, pos)
        self.pos = pos
        return self.line

    def at(self, begin: int, end: int) -> Hit:
        ends = self._ends(self.pos, begin)
        if ends or self.start < 0:
            data, size = self.data, self.size
            self.start = max(data.rfind(self.lf, 0, begin), data.rfind(self.cr, 0, begin) if self.has_cr else -1) + 1
            found = [i for i in (data.find(self.lf, begin, size), data.find(self.cr, begin, size) if self.has_cr
                                 else -1) if i >= 0]
            self.end = min(found, default=size)
        self.line += ends
        self.pos = begin
        wide = FIND_CONTEXT_BYTES if isinstance(self.data, bytearray) else FIND_CONTEXT_CHARS
        left, right = max(self.start, begin - wide), min(self.end, end + wide)
        before = self._text(left, begin)
        column = (len(before) if left == self.start else len(self._text(self.start, begin))) + 1
        column += self.carried if self.start == 0 else 0
        where = {"line": self.line, "column": column}
        match = self._text(begin, end)
        text = around(before, match, self._text(end, right), left > self.start or column > len(before) + 1,
                      right < self.end)
        resume = {"offset": self.line, **({"column": column} if column > 1 else {})}
        hidden = ()
        if holds_hidden(match):  # the line, to tell what hides it
            at = column - 1 - (self.carried if self.start == 0 else 0)
            hidden = hidden_in(self._text(self.start, self.end), at, at + len(match), passages=False)
        return Hit(where, text, line_read({"offset": self.line, "limit": 1}, column, len(match)), resume, hidden)

    def after(self, whole: bool) -> tuple[int, int]:
        """The line the next piece starts on, and the characters of it this piece holds (a line
        split between pieces)."""
        line = self.line + self._ends(self.pos, self.size)
        if whole:
            return line, 0
        data = self.data
        start = max(data.rfind(self.lf, 0, self.size), data.rfind(self.cr, 0, self.size)) + 1
        return line, (self.carried if start == 0 else 0) + len(self._text(start, self.size))


def _pieces(stream: BinaryIO, start: int) -> Iterator[tuple[bytearray, int, bool]]:
    """The file from byte `start` as (buffer, size, whether buffer[:size] ends at a line end or the
    file's end): about FIND_CHUNK bytes of whole lines at a time, a line over MAX_FIND_LINE_BYTES in
    several pieces. The buffer is reused: a piece is done with before the next is asked for."""
    stream.seek(start)
    buffer = bytearray(FIND_CHUNK)
    kept = 0  # bytes of a line not yet ended, moved to the buffer's start
    while True:
        checkpoint()
        if len(buffer) < kept + FIND_CHUNK:
            buffer.extend(bytes(kept + FIND_CHUNK - len(buffer)))
        with memoryview(buffer) as view:
            read = stream.readinto(view[kept:kept + FIND_CHUNK])
        total = kept + read
        if not read:
            if total:
                yield buffer, total, True
            return
        # A CR ending the data may be the half of a CRLF whose LF opens the next read: the cut is
        # at the line end before it.
        end = total - (buffer[total - 1] == 13)
        cut = max(buffer.rfind(b"\n", 0, end), buffer.rfind(b"\r", 0, end)) + 1
        if cut > 0:
            yield buffer, cut, True
        elif total >= MAX_FIND_LINE_BYTES:
            yield buffer, total, False
            cut = total
        kept = total - cut if cut else total
        if cut:
            buffer[:kept] = buffer[cut:total]
