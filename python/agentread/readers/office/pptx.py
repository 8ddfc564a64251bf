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
    Comments:                        (review comments, legacy and threaded, with their authors;
    - Ann Lee: Check the figures.     a reply under the comment it answers)
      - Bo Chen: Done.

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
from agentread.readers.office.charts import CHARTEX_REFERENCE, chart_lines
from agentread.readers.office.document import Rendered, pipe_table, select_sections, show
from agentread.request import ReadRequest
from agentread.result import ReadResult, TextPart

# Shapes read per slide. A slide of text, pictures and tables has tens; one with thousands is a
# drawing exported shape by shape (or made to stall a read: python-pptx takes time over every
# shape), whose text is no prose.
MAX_SHAPES_PER_SLIDE = 2000

_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"  # DrawingML: the namespace of table XML
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"  # legacy comments and their authors
_P15 = "{http://schemas.microsoft.com/office/powerpoint/2012/main}"  # a legacy reply's threading
_P188 = "{http://schemas.microsoft.com/office/powerpoint/2018/8/main}"  # threaded comments and their authors


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
    authors = _authors(deck.part)
    for number in range(first, last + 1):
        _slide(out, number, slides[number - 1], authors)
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


def _slide(out: Rendered, number: int, slide, authors: dict[str, str]) -> None:
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
    # The newer chart kinds (waterfall, treemap...) stand in mc:AlternateContent, which python-pptx
    # passes over: their parts are read after the slide's shapes.
    for reference in slide.element.iter(CHARTEX_REFERENCE):
        budget[0] -= 1  # each a shape
        if budget[0] < 0:
            break
        _chart(out, lambda rid=reference.get(_R + "id"): slide.part.related_part(rid).blob)
    if budget[0] < 0:
        out.add(f"[Slide {number} has more than {MAX_SHAPES_PER_SLIDE:,} shapes (groups included): the first "
                f"{MAX_SHAPES_PER_SLIDE:,} in the file's order are read.]")
    if slide.has_notes_slide:
        notes = slide.notes_slide.notes_text_frame
        if notes is not None and notes.text.strip():
            out.add("Notes:")
            out.add(notes.text.strip())
    comments = _comments(slide.part, authors)
    if comments:
        out.add("Comments:")
        for line in comments:
            out.add(line)


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
        _chart(out, lambda: shape.chart_part.blob)
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


def _chart(out: Rendered, blob) -> None:
    """A chart's lines, from its part's bytes (`blob()`)."""
    try:
        data = blob()
    except KeyError:  # the relationship names a part the package lacks
        out.add("[chart: its part is missing from the file, so its data cannot be shown]")
        return
    for line in chart_lines(data):
        out.add(line)


def _related_parts(part, kind: str) -> list:
    """The parts `part` relates to by relationships whose type ends in `/kind` (the legacy and the
    threaded comment parts share their last word, in two namespaces)."""
    return [rel.target_part for rel in part.rels.values() if not rel.is_external and rel.reltype.endswith("/" + kind)]


def _authors(presentation_part) -> dict[str, str]:
    """Comment authors by id: the legacy list (numbers) and the threaded one (GUIDs) together."""
    authors = {}
    for part in _related_parts(presentation_part, "commentAuthors") + _related_parts(presentation_part, "authors"):
        root = _parsed(part)
        for author in [] if root is None else root.iter(_P + "cmAuthor", _P188 + "author"):
            authors[author.get("id", "")] = " ".join((author.get("name") or "").split())
    return authors


def _comments(slide_part, authors: dict[str, str]) -> list[str]:
    """A slide's review comments, a line each (`- Ann Lee: text`), a reply indented under its
    comment: the legacy part's (a reply names its parent in its threading extension) and the
    threaded part's (a reply inside its comment)."""
    lines = []
    for part in _related_parts(slide_part, "comments"):
        root = _parsed(part)
        if root is None:
            lines.append(f"[The comments in {str(part.partname).lstrip('/')} cannot be shown: the part is not "
                         "well-formed XML.]")
            continue
        for cm in root.iterchildren(_P + "cm"):
            answers = next(cm.iter(_P15 + "parentCm"), None) is not None  # a reply to the comment it names
            lines.append(_comment_line(authors, cm.get("authorId"), cm.findtext(_P + "text") or "", answers))
        for cm in root.iterchildren(_P188 + "cm"):
            status = f" ({cm.get('status')})" if cm.get("status") and cm.get("status") != "active" else ""
            lines.append(_comment_line(authors, cm.get("authorId"), _paragraphs(cm.find(_P188 + "txBody")) + status,
                                       False))
            lines += [_comment_line(authors, reply.get("authorId"), _paragraphs(reply.find(_P188 + "txBody")), True)
                      for reply in cm.iter(_P188 + "reply")]
    return lines


def _comment_line(authors: dict[str, str], author_id: str | None, text: str, reply: bool) -> str:
    author = authors.get(author_id or "") or "unknown author"
    return f"{'  ' if reply else ''}- {author}: {' '.join(text.split())}"


def _paragraphs(body) -> str:
    if body is None:
        return ""
    return " ".join("".join(t.text or "" for t in p.iter(_A + "t")) for p in body.iter(_A + "p"))


def _parsed(part):
    """A part's XML, or None where it is not well-formed (the slide is read without it)."""
    from lxml import etree
    from pptx.oxml import parse_xml

    try:
        return parse_xml(part.blob)
    except etree.XMLSyntaxError:
        return None
