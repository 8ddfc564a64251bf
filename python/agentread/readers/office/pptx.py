"""PPTX: one section per slide, shapes in reading order (top to bottom, then left to right).

    --- Slide 3 ---                  ("(hidden)" when the slide is hidden in the show)
    # Quarterly results              (the title placeholder)
    - Revenue up 12%                 (text frames, one line per paragraph, indented by level)
    | Region | Q1 | Q2 |             (tables as pipe tables)
    [image 2: ppt/media/image3.png "chart of revenue", image/png 1280x720, attached]
    [chart: Sales (bar clustered)]   (then its data: a row per category, a column per series)
    | category | 2023 | 2024 |
    Notes:                           (the speaker notes)
    Mention the new office.

`pages` picks slides ("3", "2-5", "4-"); `offset`/`limit` page through the lines of the slides
picked (all slides when `pages` is absent), like the lines of a text file.
"""

from __future__ import annotations

import io
from itertools import islice
from typing import Iterator

from agentread.find import Hit, Matcher, Reached, Unit, hits_in
from agentread.numbering import span
from agentread.outline import Entry, outline_result
from agentread.readers.office.document import Rendered, pipe_table, select_sections, show
from agentread.request import ReadRequest
from agentread.result import ReadResult, TextPart

# Shapes read per slide. A slide of text, pictures and tables has tens; one with thousands is a
# drawing exported shape by shape (or made to stall a read: python-pptx takes time over every
# shape), whose text is no prose.
MAX_SHAPES_PER_SLIDE = 2000

_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"  # DrawingML: the namespace of table XML
_C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"  # DrawingML charts


def read_pptx(data: bytes, request: ReadRequest, path: str) -> ReadResult:
    out, first, last, slides = _render(data, request)
    pages = None if request.pages is None else span(first, last)
    result = show(out, request, path, "presentation", pages=pages)
    result.total_pages = len(slides)
    if not slides:
        result.content = [TextPart("[The presentation has no slides: there is nothing to read.]")]
    if result.shown:  # the slides the lines shown fall in
        lines = result.shown["lines"]
        result.shown["pages"] = [n for n, start, end in out.sections if start <= lines[1] and end >= lines[0]]
    return result


def search_pptx(data: bytes, request: ReadRequest, matcher: Matcher) -> tuple[str, Iterator[Hit | Reached]]:
    """The slides asked for, each one's lines numbered as a read of that slide numbers them."""
    out, first, last, _ = _render(data, request)
    offset = request.offset or 1  # a line of the first slide, where a search goes on

    def units() -> Iterator[Unit]:
        for slide, start, end in out.sections:
            skip = offset - 1 if slide == first else 0
            for line, text in enumerate(out.lines[start - 1 + skip:end], skip + 1):
                yield Unit(text, {"slide": slide, "line": line}, {"pages": str(slide), "offset": line, "limit": 1},
                           {"pages": span(slide, last), "offset": line})

    return "presentation", hits_in(units(), matcher, request.column or 1)


def _render(data: bytes, request: ReadRequest) -> tuple[Rendered, int, int, list]:
    """The slides `pages` asks for, rendered → (lines, first, last, every slide)."""
    from pptx import Presentation

    deck = Presentation(io.BytesIO(data))
    slides = list(deck.slides)
    first, last = select_sections(request.pages, len(slides), "slide")
    out = Rendered()
    for number in range(first, last + 1):
        _slide(out, number, slides[number - 1])
    return out, first, last, slides


def outline_pptx(data: bytes, request: ReadRequest, path: str) -> ReadResult:
    """One entry a slide: its title, or its first line of text when it has none."""
    from pptx import Presentation

    slides = list(Presentation(io.BytesIO(data)).slides)
    entries = []
    for number, slide in enumerate(slides, 1):
        title = slide.shapes.title
        text = " ".join(title.text_frame.text.split()) if title is not None and title.has_text_frame else ""
        if not text:
            first = next((shape.text_frame.text for shape in islice(slide.shapes, MAX_SHAPES_PER_SLIDE)
                          if shape.has_text_frame and shape.text_frame.text.strip()), "")
            text = f"(no title) {' '.join(first.split())}".rstrip()
        hidden = ", hidden" if slide.element.get("show") == "0" else ""
        entries.append(Entry(0, text, f"slide {number}{hidden}", {"pages": str(number)}))
    header = (f"[Outline of {path}: {len(slides):,} slide{'' if len(slides) == 1 else 's'}, each by its title. Read "
              "one with the arguments after \"→\" (a range such as pages=\"2-5\" reads several).]")
    return outline_result(entries, request, path, "presentation", header, total_pages=len(slides))


def _slide(out: Rendered, number: int, slide) -> None:
    if out.lines:
        out.add("")
    out.open_section(number)
    out.add(f"--- Slide {number}{' (hidden)' if slide.element.get('show') == '0' else ''} ---")
    title = slide.shapes.title
    if title is not None and title.has_text_frame and title.text_frame.text.strip():
        out.add("# " + " ".join(title.text_frame.text.split()))
    budget = [MAX_SHAPES_PER_SLIDE]  # shapes left to read, groups' members included
    for shape in _reading_order(_first(slide.shapes, budget)):
        # python-pptx makes a new shape object on each access: the same shape is the same element.
        if title is None or shape.element is not title.element:
            _shape(out, shape, budget)
    if budget[0] < 0:
        out.add(f"[Slide {number} has more than {MAX_SHAPES_PER_SLIDE:,} shapes (groups included): the first "
                f"{MAX_SHAPES_PER_SLIDE:,} in the file's order are read.]")
    if slide.has_notes_slide:
        notes = slide.notes_slide.notes_text_frame
        if notes is not None and notes.text.strip():
            out.add("Notes:")
            out.add(notes.text.strip())


def _reading_order(shapes):
    return sorted(shapes, key=lambda s: ((s.top or 0), (s.left or 0)))


def _first(shapes, budget: list[int]) -> list:
    """As many of `shapes` as the budget allows, taken from it; the budget goes below 0 when
    some are left."""
    taken = []
    for shape in shapes:
        budget[0] -= 1
        if budget[0] < 0:
            break
        taken.append(shape)
    return taken


def _table_rows(frame) -> list[list[str]]:
    """The cells' text row by row, read from the table's XML (in its graphic frame) in one walk:
    python-pptx's `rows[i]` counts the rows again on every access and its cell text is slow to get,
    which made a damaged deck's 20,000-row table stall the read."""
    return [[_cell_text(tc) for tc in tr.iterchildren(_A + "tc")] for tr in frame.element.iter(_A + "tr")]


def _cell_text(tc) -> str:
    """Paragraphs and line breaks as newlines (python-pptx's `cell.text` gives a break as a
    vertical tab)."""
    return "\n".join("".join("\n" if el.tag == _A + "br" else el.text or "" for el in p.iter(_A + "t", _A + "br"))
                     for p in tc.iter(_A + "p"))


def _shape(out: Rendered, shape, budget: list[int]) -> None:
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
        for inner in _reading_order(_first(shape.shapes, budget)):
            _shape(out, inner, budget)
    elif getattr(shape, "has_table", False) and shape.has_table:
        for line in pipe_table(_table_rows(shape)):
            out.add(line)
    elif getattr(shape, "has_chart", False) and shape.has_chart:
        try:
            _chart(out, shape.chart)
        except (ValueError, NotImplementedError, KeyError) as exc:  # a chart kind python-pptx does not model
            out.add(f"[chart: its data could not be read ({type(exc).__name__}: {str(exc)[:200]})]")
    elif shape.shape_type == MSO_SHAPE_TYPE.PICTURE or hasattr(shape.element, "blip_rId"):
        try:
            part = shape.part.related_part(shape.element.blip_rId)
        except (AttributeError, ValueError, KeyError):  # a linked or empty placeholder picture: no data
            return
        alt = shape.element.xpath("./*[1]/p:cNvPr/@descr")
        label = str(part.partname).lstrip("/") + (f' "{alt[0]}"' if alt and alt[0] else "")
        out.add_image(label, lambda part=part: part.blob)
    elif shape.has_text_frame:
        for paragraph in shape.text_frame.paragraphs:
            # The paragraph's text, not its runs': it holds line breaks (as vertical tabs) and
            # fields (a slide number, a date), which are not runs.
            text = paragraph.text.strip()
            if text:
                bullet = "  " * paragraph.level + "- " if paragraph.level else ""
                out.add(bullet + text.replace("\v", "\n"))


def _chart(out: Rendered, chart) -> None:
    """The chart's title and type, then its data: one row per category, one column per series (all
    plots' series: a combined chart has several plots), every row and series: the rows are numbered
    lines that a read pages and a find searches, and a row too wide is cut and read on by `column`,
    like any line. Plots, series and categories come from
    python-pptx's chart API; the values are read from the chart's XML in one walk, as python-pptx's
    `values` looks each point up anew (a series of 5,000 points took seconds)."""
    title = chart.chart_title.text_frame.text if chart.has_title and chart.chart_title.has_text_frame else ""
    kind = str(chart.chart_type).split(" ")[0].lower().replace("_", " ") if chart.chart_type else "chart"
    out.add(f"[chart: {title + ' ' if title else ''}({kind})]")
    plots = list(chart.plots)
    series = [s for plot in plots for s in plot.series]
    categories = [str(c) for c in plots[0].categories] if plots else []
    by_index = {ser.find(_C + "idx").get("val"): ser for ser in chart.element.iter(_C + "ser")
                if ser.find(_C + "idx") is not None}
    columns = [_values(by_index.get(str(s.index))) for s in series]
    # The points the file holds (not the count it declares, nor an index it names: either may be
    # anything), so the rows are as many as its XML has values.
    points = sorted(set(range(len(categories))).union(*columns))
    if not points:
        return
    rows = [["category" if categories else "point", *(s.name or f"series {i}" for i, s in enumerate(series, 1))]]
    for i in points:
        label = categories[i] if i < len(categories) else str(i + 1)
        rows.append([label, *(values.get(i, "") for values in columns)])
    for line in pipe_table(rows):
        out.add(line)


def _values(ser) -> dict[int, str]:
    """A series' values by point index."""
    values: dict[int, str] = {}
    data = None if ser is None else ser.find(_C + "val")
    data = ser.find(_C + "yVal") if data is None and ser is not None else data
    if data is None:
        return values
    for pt in data.iter(_C + "pt"):
        idx = pt.get("idx", "")
        if idx.isdigit():
            values[int(idx)] = _number(pt.findtext(_C + "v") or "")
    return values


def _number(text: str) -> str:
    """A value as Excel would show it unformatted: 2000, not 2000.0."""
    try:
        value = float(text)
    except ValueError:
        return text.strip()
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
