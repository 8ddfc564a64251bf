"""read_notebook: the decision sequence from a request to a ReadResult, and the per-call budgets."""

from __future__ import annotations

import binascii
from collections import Counter
from typing import Iterator

from agentread.find import Hit, Matcher, Reached, Unit, call, hits_in
from agentread.limits import MAX_LINE_CHARS, MAX_LINES, MAX_OUTPUT_BYTES, MAX_REPLY_IMAGE_BYTES, MAX_REPLY_IMAGES
from agentread.numbering import (
    amount,
    column_past_end,
    counted,
    cut_at,
    cut_to_fit,
    past_end,
    shown_lines,
    size_words,
)
from agentread.readers import Source
from agentread.readers.notebook.clean import editor_lines
from agentread.readers.notebook.locate import FileJson
from agentread.readers.notebook.model import DERIVED_ID_PREFIX, Notebook, parse_notebook
from agentread.readers.notebook.render import (
    SVG_MIME,
    Cap,
    ImageRef,
    Line,
    RenderedCell,
    human_size,
    outline_line,
    render_cell,
    svg_rasteriser,
)
from agentread.readers.notebook.schema import schema_problems
from agentread.readers.notebook.select import OUTLINE, format_cells, select_cells
from agentread.readers.notebook.svgcheck import rasterise_within
from agentread.request import ReadRequest
from agentread.result import ATTACHED, ImagePart, ReadError, ReadResult, TextPart

# Each output of a many-cell read keeps at most this much, as head and tail: enough to see how a
# long log began and how it ended, while a 50 KB call still holds a dozen or so such cells.
OUTPUT_CAP = Cap(lines=60, chars=6_000)

# Reading one cell alone (cells="5") gives each output up to half the call budget.
SINGLE_CELL_CAP = Cap(lines=MAX_LINES // 2, chars=MAX_OUTPUT_BYTES // 2)

# Room kept for the closing lines (what was shown, how to continue) so they never push a read
# over budget.
CLOSING_RESERVE_BYTES = 600
CLOSING_RESERVE_LINES = 4

# Schema warnings listed by name; more are counted. A broken notebook should not bury its cells
# in warnings.
MAX_WARNINGS_SHOWN = 5

# Room kept for the warning line of a notebook that may need one (the warnings are known only once
# the cells shown are): its words, and five problems of at most 200 characters (schema.py), most of
# them 1-byte.
WARNING_RESERVE_BYTES = 1_300

# Of a small reply's budget, the most each reserve above takes (a quarter): at the smallest replies
# a host sends (VS Code's chat at its least) fixed reserves would leave the cells no room at all.
RESERVE_SHARE = 4

# A cut cell's closing line names the cells after it when that list is this short; a longer one is
# already spelled in the line's `cells="…"` and is not repeated.
MAX_THEN_CELLS_CHARS = 40


def read(source: Source, request: ReadRequest) -> ReadResult:
    """The reader seam's notebook reader: the .ipynb file's bytes, past any byte order mark."""
    return read_notebook(source.whole()[source.bom:], request, source.path)


def search(source: Source, request: ReadRequest, matcher: Matcher) -> tuple[str, Iterator[Hit | Reached]]:
    """The reader seam's notebook search."""
    return search_notebook(source.whole()[source.bom:], request, matcher)


def search_notebook(data: bytes, request: ReadRequest, matcher: Matcher,
                    saved: bytes | None = None) -> tuple[str, Iterator[Hit | Reached]]:
    """The cells asked for (all by default): each one's source lines and its outputs' lines as a
    read of that cell numbers them (line 1 is its header), cited by cell, id and where. `saved`:
    as for read_notebook."""
    nb = _parsed(data, saved)
    positions = select_cells(nb, request.cells)
    return "notebook", hits_in(_cell_units(nb, positions, request.offset or 1), matcher, request.column or 1)


def _cell_units(nb: Notebook, positions: list[int], offset: int) -> Iterator[Unit]:
    for i, position in enumerate(positions):
        cell = nb.cells[position]
        rendered = render_cell(cell, nb, None)  # its lines uncut: a hit past a long line's cut is found
        sources = len(editor_lines(cell.source))
        where, outputs = "source", 0
        rest = format_cells(nb, positions[i:])
        for line, number in zip(rendered.lines, rendered.numbers):
            if not isinstance(line, str) or number == 1:  # an image, the header
                continue
            if number > 1 + sources + len(cell.attachments) and line.startswith(f"--- output {outputs + 1}: "):
                outputs += 1
                where = f"output {outputs}"
                continue
            if i == 0 and number < offset:
                continue
            yield Unit(line, {"cell": cell.index, "id": cell.id, "in": where, "line": number},
                       {"cells": str(cell.index), "offset": number, "limit": 1}, {"cells": rest, "offset": number})


def read_notebook(data: bytes, request: ReadRequest, path: str, saved: bytes | None = None) -> ReadResult:
    """Read a notebook by cells (whole cells within budget), as an outline, or as a window of
    rendered lines.

    The engine calls this with the raw .ipynb bytes (file or live editor buffer); for a live buffer,
    `saved` is the file on disk, which a raw read shows (a figure's summary names its lines there).
    See the package docstring for the `cells` grammar and the formats.
    """
    return render_notebook(_parsed(data, saved), request, path)


def _parsed(data: bytes, saved: bytes | None) -> Notebook:
    nb = parse_notebook(data)
    if saved is not None:
        nb.file = FileJson(saved)
    return nb


def render_notebook(nb: Notebook, request: ReadRequest, path: str) -> ReadResult:
    """The read of a notebook already parsed (by parse_notebook, or from nbformat's own reading)."""
    if request.outline or (request.cells is not None and request.cells.strip().lower() == OUTLINE):
        return _outline(nb, request, path)  # `outline: true` is the name every kind shares for it
    positions = select_cells(nb, request.cells)
    if request.offset is not None or request.limit is not None or request.column is not None:
        return _window(nb, positions, request, path)
    return _by_cells(nb, positions, path, request.output_bytes)


def notebook_outline(data: bytes, request: ReadRequest, path: str) -> ReadResult:
    """The outline of a notebook (one line per cell), whatever request.cells says;
    offset/limit page it."""
    return _outline(parse_notebook(data), request, path)


class _Parts:
    """The content being built: text lines, with image parts placed right after the line
    that names them."""

    def __init__(self, nb: Notebook, budget: int) -> None:
        """Starts with the notebook's summary line; a notebook that may need a warning line keeps
        room for it."""
        warned = nb.odd or bool(nb.warnings)
        self._warning_bytes = min(WARNING_RESERVE_BYTES, budget // RESERVE_SHARE) if warned else 0
        self._budget_bytes = budget - min(CLOSING_RESERVE_BYTES, budget // RESERVE_SHARE) - self._warning_bytes
        self._budget_lines = MAX_LINES - CLOSING_RESERVE_LINES - warned
        self.content: list[TextPart | ImagePart] = []
        self._lines: list[str] = []
        self.bytes = 0
        self.line_count = 0
        self.attached = 0
        self.image_refs = 0
        self._image_chars = 0
        self.text(_summary(nb))

    def text(self, line: str) -> None:
        self._lines.append(line)
        self.bytes += _size(line)
        self.line_count += 1

    def line(self, line: Line) -> None:
        if isinstance(line, ImageRef):
            self.image(line)
        else:
            self.text(line)

    def image(self, ref: ImageRef) -> None:
        self.image_refs += 1
        see = f"call again with cells=\"{ref.cell}\", offset={ref.line} to see it"
        if self.attached >= MAX_REPLY_IMAGES:
            self.text(f"[image {ref.describe()}, not attached: at most {MAX_REPLY_IMAGES} images per call; {see}]")
            return
        try:
            part, note = _image_part(ref)
        except ReadError as exc:
            self.text(f"[image {ref.describe()}, could not be decoded: {exc.message}]")
            return
        if self._image_chars + len(part.data) > MAX_REPLY_IMAGE_BYTES:
            self.text(f"[image {ref.label}: {part.mime_type} {part.width}x{part.height}, not attached: this "
                      f"call already carries {human_size(self._image_chars)} of images; {see}]")
            return
        self.attached += 1
        self._image_chars += len(part.data)
        self.text(f"[image {self.attached}: {ref.label}, {part.mime_type} {part.width}x{part.height}"
                  f"{f' ({note})' if note else ''}{ATTACHED}")
        self._flush()
        self.content.append(part)

    @property
    def room(self) -> int:
        """Bytes of text the budget has left."""
        return self._budget_bytes - self.bytes

    def fits(self, extra_bytes: int, extra_lines: int) -> bool:
        return (self.bytes + extra_bytes <= self._budget_bytes
                and self.line_count + extra_lines <= self._budget_lines)

    def finish(self, nb: Notebook, positions: list[int]) -> list[TextPart | ImagePart]:
        """The content, with the warning line (if any) for the cells shown placed under the
        summary line."""
        self._flush()
        warning = _warning(nb, positions, self._warning_bytes)
        if warning:
            summary, newline, rest = self.content[0].text.partition("\n")
            self.content[0] = TextPart(summary + "\n" + warning + newline + rest)
        return self.content

    def _flush(self) -> None:
        if self._lines:
            self.content.append(TextPart("\n".join(self._lines)))
            self._lines = []


def _size(line: Line) -> int:
    # An image line is short text; its pixels are budgeted by count and size, not against the
    # text budget.
    return 100 if isinstance(line, ImageRef) else len(line.encode("utf-8", "surrogatepass")) + 1


def _image_part(ref: ImageRef) -> tuple[ImagePart, str | None]:
    from agentread.readers.image import image_part  # Pillow: imported by a notebook that shows an image

    try:
        encoded = ref.encoded()
    except (binascii.Error, ValueError) as exc:
        raise ReadError("image_undecodable", f"its base64 data is damaged ({exc})") from None
    if ref.mime != SVG_MIME:
        return image_part(encoded)
    try:
        # External references are not fetched (cairosvg's default).
        png = rasterise_within(svg_rasteriser(), encoded)
    except Exception as exc:  # noqa: BLE001 - the rasteriser fails in many ways on odd SVG
        raise ReadError("image_undecodable", f"the SVG could not be rasterised ({str(exc)[:200]})") from None
    part, note = image_part(png)
    return part, "rasterised from SVG" + (f"; {note}" if note else "")


def _summary(nb: Notebook) -> str:
    kinds = ", ".join(f"{n} {kind}" for kind, n in Counter(c.cell_type for c in nb.cells).most_common())
    total = len(nb.cells)
    summary = (f"Notebook: {total} cell{'s' if total != 1 else ''}{f' ({kinds})' if kinds else ''}, "
               f"language {nb.language or 'unknown'}, nbformat {nb.version}.")
    if any(c.id.startswith(DERIVED_ID_PREFIX) for c in nb.cells):
        summary += (f" Ids starting with {DERIVED_ID_PREFIX} are derived from the cell source (the file has "
                    "none); they stay the same while the cell is unchanged.")
    return summary


def _warning(nb: Notebook, positions: list[int], room: int) -> str | None:
    """What the reader decided about the file, then (for a notebook off nbformat 4's layout) what
    nbformat's validator finds at its top and in the cells shown: as many problems, whole, as
    `room` bytes hold, the others counted."""
    problems = nb.warnings + (schema_problems(nb, positions) if nb.odd else [])
    if not problems:
        return None
    head = "Warning: the notebook does not follow the nbformat schema; shown as far as it could be read: "
    for count in range(min(len(problems), MAX_WARNINGS_SHOWN), 0, -1):
        more = len(problems) - count
        line = head + "; ".join(problems[:count]) + (f"; and {more} more" if more else "") + "."
        if len(line.encode("utf-8", "surrogatepass")) <= room:
            return line
    line = head + f"{amount(len(problems), 'problem')} (read fewer cells, or a larger reply, to see them)."
    return line.encode("utf-8", "surrogatepass")[:max(room, len(head))].decode("utf-8", "ignore")


def _by_cells(nb: Notebook, positions: list[int], path: str, budget: int) -> ReadResult:
    """Whole cells until a budget (text, lines, images) is reached; a first cell too big
    alone is cut.

    `next` names the cells that follow; after a cut first cell it is that cell (and the rest of the
    selection) with the offset of its first line not sent, which `_window` continues line by line.
    When every selected cell was shown but an output was cut to head and tail, `next` reads what the
    first such cut left out.
    """
    cap = SINGLE_CELL_CAP if len(positions) == 1 else OUTPUT_CAP
    parts = _Parts(nb, budget)
    shown: list[int] = []
    full = ""
    resume: int | None = None  # the line of the first cell (uncut numbering) where a cut first cell resumes
    cell_lines = 0  # the first cell's rendered lines, uncut, when it is cut
    cuts: list[dict] = []  # outputs shown cut to head and tail
    first_cut: dict | None = None  # the call reading what the first of them (or of the long lines cut) left out
    long_lines = False  # a line over MAX_LINE_CHARS was shown cut
    hidden: dict[str, int] = {}  # passages marked hidden in the cells shown
    for pos in positions:
        cell = nb.cells[pos]
        address = format_cells(nb, [pos])
        rendered = render_cell(cell, nb, cap, address)
        lines, line_cuts = _cut_lines(rendered.lines, rendered.numbers, f'cells="{address}", ')
        images = sum(isinstance(line, ImageRef) for line in lines)
        fits = parts.fits(sum(map(_size, lines)), len(lines))
        images_fit = parts.image_refs + images <= MAX_REPLY_IMAGES
        if shown and not (fits and images_fit):
            full = _which_budget(fits, budget)
            break
        shown.append(pos)
        hidden = _add_counts(hidden, rendered.hidden)
        sent = len(lines)
        for i, line in enumerate(lines):
            # Only a first cell over the budget by itself gets here without room: as much of it as
            # fits is sent.
            if i and not fits and not parts.fits(_size(line), 1):
                sent, resume, cell_lines = i, rendered.numbers[i], rendered.numbers[-1]
                break
            parts.line(line)
        cuts += _cuts_shown(cell.index, rendered, sent)
        marks = [(cut.at, {"offset": cut.offset}) for cut in rendered.cuts] + line_cuts
        marks = [mark for mark in marks if mark[0] < sent]
        long_lines = long_lines or any("column" in go for _, go in marks)
        if first_cut is None and marks:
            first_cut = {"cells": address, **min(marks, key=lambda mark: mark[0])[1]}
        if not fits:
            break
    rest = positions[len(shown):]
    next_: dict | None = None
    named = "cell" if len(shown) == 1 else "cells"
    closing = f"[Shown: {named} {format_cells(nb, shown) or 'none'} of {len(nb.cells)}."
    if resume is not None:
        index = nb.cells[shown[0]].index
        next_ = {"cells": format_cells(nb, shown + rest), "offset": resume}
        closing = (f"[Shown: cell {index} (part), its {counted('line', 1, resume - 1)} of {cell_lines}, of "
                   f"{amount(len(nb.cells), 'cell')}. It alone is over the per-call budget ({size_words(budget)}, "
                   f"{MAX_LINES} lines). Continue with cells=\"{next_['cells']}\", offset={resume}: the rest of "
                   f"cell {index}{_then(nb, rest)}, line by line.")
    elif rest:
        next_ = {"cells": format_cells(nb, rest)}
        closing += f" The per-call {full or 'budget'} is reached. Continue with cells=\"{next_['cells']}\"."
    if cuts or long_lines:
        said = ["Outputs too long for this read kept their head and tail"] if cuts else []
        said += [f"{'lines' if cuts else 'Lines'} over {MAX_LINE_CHARS:,} characters were cut"] if long_lines else []
        closing += f" {'; '.join(said)}; each cut says how to read what it left out"
        if next_ is None:
            next_ = first_cut
            closing += f" (the first: {call(first_cut)})"
        closing += "."
    if next_ or len(shown) != len(nb.cells):
        parts.text(closing + "]")
    described: dict = {"cells": [nb.cells[pos].index for pos in shown]}
    if resume is not None:
        described["cellLines"] = [{"cell": nb.cells[shown[0]].index, "lines": [1, resume - 1]}]
    if cuts:
        described["outputs"] = cuts
    return ReadResult(kind="notebook", path=path, content=parts.finish(nb, shown), total_cells=len(nb.cells),
                      truncated=next_ is not None, next=next_, shown=described, hidden=hidden or None)


def _add_counts(total: dict[str, int], more: dict[str, int]) -> dict[str, int]:
    """Passages marked hidden, counted by why (hidden.note), and `more`."""
    return {**total, **{why: total.get(why, 0) + n for why, n in more.items()}}


def _cut_lines(lines: list[Line], numbers, also: str) -> tuple[list[Line], list[tuple[int, dict]]]:
    """The lines as a read shows them, numbered `numbers`: one over MAX_LINE_CHARS cut with a marker
    naming the call (`also` and its offset and column) that reads on → (the lines, (index, {offset,
    column}) of each cut one)."""
    shown: list[Line] = []
    cut: list[tuple[int, dict]] = []
    for i, (line, number) in enumerate(zip(lines, numbers)):
        if isinstance(line, str) and len(line) > MAX_LINE_CHARS:
            line, on = cut_at(line, number, 1, None, also)
            cut.append((i, {"offset": number, "column": on}))
        shown.append(line)
    return shown, cut


def _cuts_shown(index: int, rendered: RenderedCell, sent: int) -> list[dict]:
    """`shown.outputs` entries for the outputs of one cell cut to head and tail, as far as its
    lines were sent."""
    found = []
    for cut in rendered.cuts:
        ranges = cut.shown(sent)
        if ranges:
            found.append({"cell": index, "output": cut.output, "shown": ranges, "totalLines": cut.total})
    return found


def _then(nb: Notebook, rest: list[int]) -> str:
    """", then cells 14-40" for the closing line of a cut cell (a long list of cells is not
    spelled twice)."""
    if not rest:
        return ""
    later = format_cells(nb, rest)
    if len(later) > MAX_THEN_CELLS_CHARS:
        return ", then the other cells named"
    return f", then {'cell' if len(rest) == 1 else 'cells'} {later}"


def _which_budget(text_fits: bool, budget: int) -> str:
    if not text_fits:
        return f"text budget ({size_words(budget)}, {MAX_LINES} lines)"
    return f"image budget ({MAX_REPLY_IMAGES} images)"


def _window(nb: Notebook, positions: list[int], request: ReadRequest, path: str) -> ReadResult:
    """offset/limit page through the uncut rendering of the selected cells, line by line."""
    lines: list[Line] = []
    spans: list[tuple[int, int, int]] = []  # per cell: its position, its first line (0-based), its line count
    hidden: dict[int, dict[str, int]] = {}  # per cell index: the passages marked hidden in it
    for pos in positions:
        rendered = render_cell(nb.cells[pos], nb, None, format_cells(nb, [pos]))
        spans.append((pos, len(lines), len(rendered.lines)))
        hidden[nb.cells[pos].index] = rendered.hidden
        lines.extend(rendered.lines)
    starts = {first: pos for pos, first, _ in spans}

    def context(i: int) -> str | None:
        if i in starts:
            return None
        owner = next(pos for pos, first, count in spans if first <= i < first + count)
        return f"[… continuing cell {nb.cells[owner].index}]"

    def covered(first: int, last: int) -> tuple[list[int], dict]:
        """The cells lines first..last (1-based) fall in, and those shown in part with
        their own lines."""
        shown, partial = [], []
        for pos, start, count in spans:
            own_first, own_last = max(first, start + 1) - start, min(last, start + count) - start
            if own_first > own_last:
                continue
            shown.append(pos)
            if own_first > 1 or own_last < count:
                partial.append({"cell": nb.cells[pos].index, "lines": [own_first, own_last]})
        return shown, {"cellLines": partial} if partial else {}

    result = _paged(nb, lines, context, covered, request, path, "rendered line")
    # Counted per cell the window shows, in whole or in part.
    counts: dict[str, int] = {}
    for index in result.shown.get("cells", []) if result.shown else []:
        counts = _add_counts(counts, hidden[index])
    result.hidden = counts or None
    return result


def _outline(nb: Notebook, request: ReadRequest, path: str) -> ReadResult:
    """One line per cell, built only for the lines in the window: cheap even for a huge notebook."""

    class _Lazy:  # a sequence view so _paged renders only the outline lines it sends
        def __len__(self) -> int:
            return len(nb.cells)

        def __getitem__(self, i: int) -> str:
            return outline_line(nb.cells[i], nb)

    return _paged(nb, _Lazy(), lambda i: None, lambda first, last: (list(range(first - 1, last)), {}), request,
                  path, "outline line", cells=OUTLINE)


def _paged(nb: Notebook, lines, context, covered, request: ReadRequest, path: str, what: str,
           cells: str | None = None) -> ReadResult:
    """A window of `lines`; `covered(first, last)` says which cells lines first..last show
    (positions, and the `shown` fields beyond `cells` and `lines`)."""
    total = len(lines)
    start = request.line_from(total)
    if start > max(total, 1):
        raise past_end(start, total, what, "the notebook")
    parts = _Parts(nb, request.output_bytes)
    if total and (hint := context(start - 1)):
        parts.text(hint)
    cells = cells or request.cells
    also = f'cells="{cells}", ' if cells else ""
    column = request.column or 1
    cut: dict | None = None  # {offset, column} of the first line cut, where it reads on
    end = start - 1
    stop = min(total, start - 1 + request.line_limit)
    while end < stop:
        line, on, from_column = lines[end], None, column if end == start - 1 else 1
        if isinstance(line, str) or from_column > 1:
            text = line if isinstance(line, str) else ""
            if from_column > max(len(text), 1):
                raise column_past_end(from_column, start, len(text))
            line, on = cut_at(text[from_column - 1:], end + 1, from_column, None, also)
            if end < start and not parts.fits(_size(line), 1) and len(text) > from_column:  # over the whole reply
                line, on = cut_to_fit(text[from_column - 1:], end + 1, from_column, None, also, parts.room - 1)
        if end >= start and not parts.fits(_size(line), 1):
            break
        parts.line(line)
        end += 1
        if on is not None and cut is None:
            cut = {"offset": end, "column": on}
    next_ = None
    if cut is not None or end < total:
        next_ = {**(cut or {"offset": end + 1}), **({"cells": cells} if cells else {})}
        why = f"Line {cut['offset']:,} was cut at character {cut['column'] - 1:,}. " if cut else ""
        parts.text(f"[Shown: {counted(what, start, end)} of {total}. {why}Continue with {call(next_)}.]")
    positions, more = covered(start, end) if total else ([], {})
    described = {"cells": [nb.cells[pos].index for pos in positions],
                 **(shown_lines(start, end, column) if total else {}), **more}
    return ReadResult(kind="notebook", path=path, content=parts.finish(nb, positions), total_cells=len(nb.cells),
                      start_line=start if total else None, end_line=end if total else None, total_lines=total,
                      truncated=next_ is not None, next=next_, shown=described)
