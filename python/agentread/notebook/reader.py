"""read_notebook: the decision sequence from a request to a ReadResult, and the per-call budgets."""

from __future__ import annotations

import binascii
from collections import Counter

from agentread.image import image_part
from agentread.limits import MAX_LINES, MAX_OUTPUT_BYTES
from agentread.notebook.model import DERIVED_ID_PREFIX, Notebook, parse_notebook
from agentread.notebook.render import (SVG_MIME, Cap, ImageRef, Line, human_size, outline_line, render_cell,
                                       svg_rasteriser)
from agentread.notebook.select import OUTLINE, format_cells, select_cells
from agentread.notebook.svgcheck import rasterise_within
from agentread.request import ReadRequest
from agentread.result import ImagePart, ReadError, ReadResult, TextPart

# Images attached per call. A plot costs a model roughly 1-2k tokens, so ten cost about what the 50 KB of
# text does; it also stays well under the number of images providers accept in one request.
MAX_IMAGES_PER_CALL = 10

# Base64 image data attached per call: keeps one tool result well under the 20-30 MB request size
# providers accept, even when every image is near the 5 MB per-image limit.
MAX_IMAGE_DATA_PER_CALL = 10_000_000

# Each output of a many-cell read keeps at most this much, as head and tail: enough to see how a long log
# began and how it ended, while a 50 KB call still holds a dozen or so such cells.
OUTPUT_CAP = Cap(lines=60, chars=6_000)

# Reading one cell alone (cells="5") gives each output up to half the call budget.
SINGLE_CELL_CAP = Cap(lines=MAX_LINES // 2, chars=MAX_OUTPUT_BYTES // 2)

# Room kept for the closing lines (what was shown, how to continue) so they never push a read over budget.
CLOSING_RESERVE_BYTES = 600
CLOSING_RESERVE_LINES = 4

# Schema warnings listed by name; more are counted. A broken notebook should not bury its cells in warnings.
MAX_WARNINGS_SHOWN = 5

# A cut cell's closing line names the cells after it when that list is this short; a longer one is already
# spelled in the line's `cells="…"` and is not repeated.
MAX_THEN_CELLS_CHARS = 40

_BUDGET_BYTES = MAX_OUTPUT_BYTES - CLOSING_RESERVE_BYTES
_BUDGET_LINES = MAX_LINES - CLOSING_RESERVE_LINES


def read_notebook(data: bytes, request: ReadRequest, path: str) -> ReadResult:
    """Read a notebook by cells (whole cells within budget), as an outline, or as a window of rendered lines.

    The engine calls this with the raw .ipynb bytes (file or live editor buffer). See the package docstring
    for the `cells` grammar and the formats.
    """
    nb = parse_notebook(data)
    if request.cells is not None and request.cells.strip().lower() == OUTLINE:
        return _outline(nb, request, path)
    positions = select_cells(nb, request.cells)
    if request.offset is not None or request.limit is not None:
        return _window(nb, positions, request, path)
    return _by_cells(nb, positions, path)


def notebook_outline(data: bytes, request: ReadRequest, path: str) -> ReadResult:
    """The outline of a notebook (one line per cell), whatever request.cells says; offset/limit page it."""
    return _outline(parse_notebook(data), request, path)


class _Parts:
    """The content being built: text lines, with image parts placed right after the line that names them."""

    def __init__(self) -> None:
        self.content: list[TextPart | ImagePart] = []
        self._lines: list[str] = []
        self.bytes = 0
        self.line_count = 0
        self.attached = 0
        self.image_refs = 0
        self._image_chars = 0

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
        if self.attached >= MAX_IMAGES_PER_CALL:
            self.text(f"[image {ref.describe()}, not attached: at most {MAX_IMAGES_PER_CALL} images per call; {see}]")
            return
        try:
            part, note = _image_part(ref)
        except ReadError as exc:
            self.text(f"[image {ref.describe()}, could not be decoded: {exc.message}]")
            return
        if self._image_chars + len(part.data) > MAX_IMAGE_DATA_PER_CALL:
            self.text(f"[image {ref.label}: {part.mime_type} {part.width}x{part.height}, not attached: this "
                      f"call already carries {human_size(self._image_chars)} of images; {see}]")
            return
        self.attached += 1
        self._image_chars += len(part.data)
        self.text(f"[image {self.attached}: {ref.label}, {part.mime_type} {part.width}x{part.height}"
                  f"{f' ({note})' if note else ''}, attached]")
        self._flush()
        self.content.append(part)

    def fits(self, extra_bytes: int, extra_lines: int) -> bool:
        return self.bytes + extra_bytes <= _BUDGET_BYTES and self.line_count + extra_lines <= _BUDGET_LINES

    def finish(self) -> list[TextPart | ImagePart]:
        self._flush()
        return self.content

    def _flush(self) -> None:
        if self._lines:
            self.content.append(TextPart("\n".join(self._lines)))
            self._lines = []


def _size(line: Line) -> int:
    # An image line is short text; its pixels are budgeted by count and size, not against the text budget.
    return 100 if isinstance(line, ImageRef) else len(line.encode("utf-8", "surrogatepass")) + 1


def _image_part(ref: ImageRef) -> tuple[ImagePart, str | None]:
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


def _preamble(nb: Notebook) -> list[str]:
    kinds = ", ".join(f"{n} {kind}" for kind, n in Counter(c.cell_type for c in nb.cells).most_common())
    total = len(nb.cells)
    summary = (f"Notebook: {total} cell{'s' if total != 1 else ''}{f' ({kinds})' if kinds else ''}, "
               f"language {nb.language or 'unknown'}, nbformat {nb.version}.")
    if any(c.id.startswith(DERIVED_ID_PREFIX) for c in nb.cells):
        summary += (f" Ids starting with {DERIVED_ID_PREFIX} are derived from the cell source (the file has "
                    "none); they stay the same while the cell is unchanged.")
    lines = [summary]
    if nb.warnings:
        shown = nb.warnings[:MAX_WARNINGS_SHOWN]
        more = len(nb.warnings) - len(shown)
        lines.append("Warning: the notebook does not follow the nbformat schema, read anyway: "
                     + "; ".join(shown) + (f"; and {more} more" if more else "") + ".")
    return lines


def _by_cells(nb: Notebook, positions: list[int], path: str) -> ReadResult:
    """Whole cells until a budget (text, lines, images) is reached; a first cell too big alone is cut.

    `next` names the cells that follow; after a cut first cell it is that cell (and the rest of the selection)
    with the offset of its first line not sent, which `_window` continues line by line.
    """
    cap = SINGLE_CELL_CAP if len(positions) == 1 else OUTPUT_CAP
    parts = _Parts()
    for line in _preamble(nb):
        parts.text(line)
    shown: list[int] = []
    full = ""
    resume: int | None = None  # the line of the first cell (uncut numbering) where a cut first cell resumes
    cell_lines = 0  # the first cell's rendered lines, uncut, when it is cut
    outputs_cut = False  # a shown output kept only its head and tail
    for pos in positions:
        rendered = render_cell(nb.cells[pos], cap)
        images = sum(isinstance(line, ImageRef) for line in rendered.lines)
        fits = parts.fits(sum(map(_size, rendered.lines)), len(rendered.lines))
        images_fit = parts.image_refs + images <= MAX_IMAGES_PER_CALL
        if shown and not (fits and images_fit):
            full = _which_budget(fits)
            break
        shown.append(pos)
        if fits:
            for line in rendered.lines:
                parts.line(line)
            outputs_cut = outputs_cut or rendered.cut
            continue
        # The first cell alone is over the budget: send as much of it as fits, and say where it stops.
        for i, line in enumerate(rendered.lines):
            if i and not parts.fits(_size(line), 1):
                resume, cell_lines = rendered.numbers[i], rendered.numbers[-1]
                break
            parts.line(line)
        outputs_cut = outputs_cut or rendered.cut
        break
    rest = positions[len(shown):]
    next_: dict | None = None
    closing = f"[Shown: cells {format_cells(nb, shown) or 'none'} of {len(nb.cells)}."
    if resume is not None:
        index = nb.cells[shown[0]].index
        next_ = {"cells": format_cells(nb, shown + rest), "offset": resume}
        closing = (f"[Shown: cell {index} (part), its lines 1-{resume - 1} of {cell_lines}, of {len(nb.cells)} "
                   f"cells. It alone is over the per-call budget ({MAX_OUTPUT_BYTES // 1000} KB, {MAX_LINES} "
                   f"lines). Continue with cells=\"{next_['cells']}\", offset={resume}: the rest of cell {index}"
                   f"{_then(nb, rest)}, line by line.")
    elif rest:
        next_ = {"cells": format_cells(nb, rest)}
        closing += f" The per-call {full or 'budget'} is reached. Continue with cells=\"{next_['cells']}\"."
    if outputs_cut:
        closing += (" Outputs too long for this read kept their head and tail; each cut says how to read what "
                    "it left out.")
    if next_ or outputs_cut or len(shown) != len(nb.cells):
        parts.text(closing + "]")
    return ReadResult(kind="notebook", path=path, content=parts.finish(), total_cells=len(nb.cells),
                      truncated=next_ is not None or outputs_cut, next=next_)


def _then(nb: Notebook, rest: list[int]) -> str:
    """", then cells 14-40" for the closing line of a cut cell (a long list of cells is not spelled twice)."""
    if not rest:
        return ""
    later = format_cells(nb, rest)
    if len(later) > MAX_THEN_CELLS_CHARS:
        return ", then the other cells named"
    return f", then {'cell' if len(rest) == 1 else 'cells'} {later}"


def _which_budget(text_fits: bool) -> str:
    if not text_fits:
        return f"text budget ({MAX_OUTPUT_BYTES // 1000} KB, {MAX_LINES} lines)"
    return f"image budget ({MAX_IMAGES_PER_CALL} images)"


def _window(nb: Notebook, positions: list[int], request: ReadRequest, path: str) -> ReadResult:
    """offset/limit page through the uncut rendering of the selected cells, line by line."""
    lines: list[Line] = []
    owners: list[int] = []  # the cell index each line belongs to
    for pos in positions:
        rendered = render_cell(nb.cells[pos], None)
        lines.extend(rendered.lines)
        owners.extend([nb.cells[pos].index] * len(rendered.lines))

    def context(i: int) -> str | None:
        starts_cell = i == 0 or owners[i] != owners[i - 1]
        return None if starts_cell else f"[… continuing cell {owners[i]}]"

    return _paged(nb, lines, context, request, path, "rendered lines")


def _outline(nb: Notebook, request: ReadRequest, path: str) -> ReadResult:
    """One line per cell, built only for the lines in the window: cheap even for a huge notebook."""

    class _Lazy:  # a sequence view so _paged renders only the outline lines it sends
        def __len__(self) -> int:
            return len(nb.cells)

        def __getitem__(self, i: int) -> str:
            return outline_line(nb.cells[i])

    return _paged(nb, _Lazy(), lambda i: None, request, path, "outline lines", cells=OUTLINE)


def _paged(nb: Notebook, lines, context, request: ReadRequest, path: str, what: str,
           cells: str | None = None) -> ReadResult:
    total = len(lines)
    start = request.line_from(total)
    if start > max(total, 1):
        raise ReadError("offset_past_end", f"offset {start} is past the end: the notebook has {total} {what}; "
                        "call again with a smaller offset")
    parts = _Parts()
    for line in _preamble(nb):
        parts.text(line)
    if total and (hint := context(start - 1)):
        parts.text(hint)
    end = start - 1
    stop = min(total, start - 1 + request.line_limit)
    while end < stop:
        line = lines[end]
        if end >= start and not parts.fits(_size(line), 1):
            break
        parts.line(line)
        end += 1
    cells = cells or request.cells
    next_ = None
    if end < total:
        next_ = {"offset": end + 1, **({"cells": cells} if cells else {})}
        also = f", cells=\"{cells}\"" if cells else ""
        parts.text(f"[Shown: {what} {start}-{end} of {total}. Continue with offset={end + 1}{also}.]")
    return ReadResult(kind="notebook", path=path, content=parts.finish(), total_cells=len(nb.cells),
                      start_line=start if total else None, end_line=end if total else None, total_lines=total,
                      truncated=next_ is not None, next=next_)

