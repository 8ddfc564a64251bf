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
from dataclasses import dataclass, field
from itertools import islice
from typing import Iterator

from agentread.find import Hit, Matcher, Reached, Unit, hits_in
from agentread.numbering import span
from agentread.outline import Entry, outline_result
from agentread.readers.office.charts import CHARTEX_REFERENCE, MISSING_CHART, chart_lines
from agentread.readers.office.document import (
    WHITE,
    Rendered,
    collapsed,
    held,
    hex_colour,
    pipe_table,
    select_sections,
    show,
    unseen_colour,
)
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

# A background style (p:bgRef idx) from this number on is the theme's background fill of that
# place in its list, counted from 1; below it, no background fill.
FIRST_BACKGROUND_STYLE = 1001

# The ways a shape's properties fill it.
FILLS = {_A + "noFill", _A + "solidFill", _A + "gradFill", _A + "blipFill", _A + "pattFill", _A + "grpFill"}

# The master's text style a placeholder's text takes, by the placeholder's type (a:ph type, "obj"
# where it names none); any other placeholder takes the body's.
TEXT_STYLES = {"title": "titleStyle", "ctrTitle": "titleStyle", "dt": "otherStyle", "ftr": "otherStyle",
               "sldNum": "otherStyle", "hdr": "otherStyle"}
# The master placeholder a layout's placeholder of a type inherits from (any other: the body).
MASTER_PLACEHOLDERS = {"title": "title", "ctrTitle": "title", "dt": "dt", "ftr": "ftr", "sldNum": "sldNum"}

# A shape's box: left, top, right, bottom, in EMU on the slide.
Box = tuple[float, float, float, float]


@dataclass
class _Sight:
    """What decides whether a slide's text is in sight: the slide's size (None where the deck
    states none), whether it is hidden in the show, the colour of its background (None where it
    is not one colour), its theme's colours by name, and the boxes of what its layout and master
    draw under its shapes."""

    size: tuple[int, int] | None
    hidden_slide: bool
    background: str | None
    scheme: dict[str, str]
    beneath: list[Box] = field(default_factory=list)
    # The list styles a shape's text inherits (_inherited_lists), by the shape's placeholder (its
    # a:ph type and idx; None for a shape that is none): kept for the slides of one layout.
    lists: dict = field(default_factory=dict)


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
    size = (deck.slide_width, deck.slide_height) if deck.slide_width and deck.slide_height else None
    known: dict = {}  # by layout: what it and its master give each slide on it (_sight)
    for number in range(first, last + 1):
        _slide(out, number, slides[number - 1], authors, size, known)
    out.mark_hidden()
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


def _slide(out: Rendered, number: int, slide, authors: dict[str, str], size: tuple[int, int] | None,
           known: dict) -> None:
    if out.lines:
        out.add("")
    out.open_section(number)
    out.add(f"--- Slide {number}{' (hidden)' if slide.element.get('show') == '0' else ''} ---")
    title = slide.shapes.title
    sight = _sight(slide, size, known)
    budget = [MAX_SHAPES_PER_SLIDE]  # shapes left to read, groups' members included
    shapes = _first(slide.shapes, budget)
    boxes = _boxes(shapes, IDENTITY, known.setdefault(("places", str(slide.slide_layout.part.partname)), {}))
    if title is not None and title.has_text_frame and title.text_frame.text.strip():
        # python-pptx makes a new shape object on each access: the same shape is the same element.
        at = next((i for i, shape in enumerate(shapes) if shape.element is title.element), None)
        below = [] if at is None else boxes[:at]
        lines = _paragraphs_of(title, sight, None if at is None else boxes[at], below)
        out.add("# " + collapsed(" ".join(line for _, line in lines)))
    for at in _reading_order(shapes, boxes):
        if title is None or shapes[at].element is not title.element:
            _shape(out, shapes[at], budget, sight, IDENTITY, boxes[at], boxes[:at])
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


def _reading_order(shapes, boxes: list) -> list[int]:
    """The places of `shapes` in reading order: top to bottom, then left to right; by their
    `boxes` where known (a placeholder finds its place in its layout anew on each call)."""
    def key(i: int) -> tuple:
        box = boxes[i]
        return (box[1], box[0]) if box is not None else ((shapes[i].top or 0), (shapes[i].left or 0))
    return sorted(range(len(shapes)), key=key)


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


def _shape(out: Rendered, shape, budget: list[int], sight: _Sight, transform: tuple, box: Box | None,
           below: list[Box]) -> None:
    """A shape's lines; `transform` places its coordinates on the slide (a group's members'),
    `box` is where it lies there (None where it states no place), `below` the boxes of the
    slide's shapes drawn before it."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    why = _out_of_sight(sight, box)
    if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
        inner = _group_transform(shape, transform)
        members = _first(shape.shapes, budget)
        boxes = _boxes(members, inner)
        for at in _reading_order(members, boxes):
            _shape(out, members[at], budget, sight, inner, boxes[at], below + boxes[:at])
    elif getattr(shape, "has_table", False) and shape.has_table:
        rows = _table_rows(shape)
        for line in pipe_table([[held(cell, why) for cell in row] for row in rows] if why else rows):
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
        for level, text in _paragraphs_of(shape, sight, box, below):
            bullet = "  " * level + "- " if level else ""
            out.add(bullet + text)


def _paragraphs_of(shape, sight: _Sight, box: Box | None, below: list[Box]) -> list[tuple[int, str]]:
    """A text frame's paragraphs that hold text, as (level, text): a line break as a newline,
    fields (a slide number, a date) as their text, as python-pptx's `paragraph.text` has them;
    runs out of sight held as hidden passages (a whole paragraph, where the shape is)."""
    why = _out_of_sight(sight, box)
    under = None if why else _under(shape, sight, box, below)
    body = shape.element.find(_P + "txBody")
    lists = [] if under is None or body is None else [body.find(_A + "lstStyle"), *_inherited_lists(shape, sight)]
    found = []
    for paragraph, p in zip(shape.text_frame.paragraphs, [] if body is None else body.iterchildren(_A + "p")):
        pieces = []
        level = f"{_A}lvl{min(max(paragraph.level, 0), 8) + 1}pPr/{_A}defRPr"
        inherited = [styles if styles is None or styles.tag == _A + "fontRef" else styles.find(level)
                     for styles in lists]
        for child in p.iterchildren(_A + "r", _A + "fld", _A + "br"):
            text = "\n" if child.tag == _A + "br" else child.findtext(_A + "t") or ""
            colour = _text_colour([child.find(_A + "rPr"), *inherited], sight.scheme) if under else None
            unseen = unseen_colour(colour, under) if colour and under and text.strip() else None
            pieces.append(held(text, unseen) if unseen else text)
        text = "".join(pieces).strip()
        if text:
            found.append((paragraph.level, held(text, why) if why else text))
    return found


def _text_colour(chain: list, scheme: dict[str, str]) -> str | None:
    """A run's colour: the fill of the first in `chain` (its properties, then the defaults of
    the list styles it inherits, nearest first) that sets one, where it is one known colour; a
    shape style's font colour (p:style a:fontRef) stands in a chain as its own colour."""
    for properties in chain:
        if properties is None:
            continue
        if properties.tag == _A + "fontRef":
            if len(properties):
                return _colour(properties, scheme)
            continue
        fill = next((el for el in properties if el.tag in FILLS), None)
        if fill is not None:
            return _colour(fill, scheme) if fill.tag == _A + "solidFill" else None
    return None


def _inherited_lists(shape, sight: _Sight) -> list:
    """What a shape's text inherits its runs' properties from, past its own list style, nearest
    first: for a placeholder, its layout's placeholder's list style and its master's, then the
    master's text style for its kind (title, body, other); for another shape, its shape style's
    font (p:style a:fontRef), then the master's text style for other text. A list style holds
    a:lvl1pPr…a:lvl9pPr, each with its a:defRPr."""
    placeholder = shape.element.find(f"{_P}nvSpPr/{_P}nvPr/{_P}ph")
    key = None if placeholder is None else (placeholder.get("type", "obj"), placeholder.get("idx", "0"))
    if key in sight.lists:
        found = sight.lists[key]
    else:
        found = sight.lists[key] = _placeholder_lists(shape, key) if key else \
            [_master_style(shape, "otherStyle")]
    if key is None:
        return [shape.element.find(f"{_P}style/{_A}fontRef"), *found]
    return found


def _placeholder_lists(shape, key: tuple[str, str]) -> list:
    """A slide placeholder's inherited list styles (_inherited_lists): its layout's placeholder
    of the same idx (else type), the master's placeholder of its kind, the master's text style."""
    kind, idx = key
    layout = shape.part.slide_layout
    master = layout.slide_master
    theirs = [next((ph for ph in layout.placeholders if str(ph.placeholder_format.idx) == idx), None)
              or next((ph for ph in layout.placeholders if _kind(ph) == kind), None),
              next((ph for ph in master.placeholders if _kind(ph) == MASTER_PLACEHOLDERS.get(kind, "body")), None)]
    return [*(None if ph is None else ph.element.find(f"{_P}txBody/{_A}lstStyle") for ph in theirs),
            _master_style(shape, TEXT_STYLES.get(kind, "bodyStyle"))]


def _kind(placeholder) -> str:
    return placeholder.element.find(f"{_P}nvSpPr/{_P}nvPr/{_P}ph").get("type", "obj")


def _master_style(shape, name: str):
    """One of the slide master's text styles (p:txStyles: titleStyle, bodyStyle, otherStyle)."""
    return shape.part.slide_layout.slide_master.element.find(f"{_P}txStyles/{_P}{name}")


def _out_of_sight(sight: _Sight, box: Box | None) -> str | None:
    """Why all of a shape's text is out of sight (a reason for hidden.passage), or None."""
    if sight.hidden_slide:
        return "on a hidden slide"
    if box is not None and sight.size is not None and not _overlap(box, (0, 0, *sight.size)):
        return "off the slide"
    return None


def _under(shape, sight: _Sight, box: Box | None, below: list[Box]) -> str | None:
    """The colour under a shape's text: its solid fill, or with no fill, the slide's background
    where nothing drawn before it (on the slide, its layout or master) lies under it; None where
    that is not one known colour (a gradient, a picture, a theme's fill style, a shape beneath)."""
    properties = shape.element.find(_P + "spPr")
    fill = None if properties is None else next((el for el in properties if el.tag in FILLS), None)
    if fill is not None and fill.tag != _A + "noFill":
        return _colour(fill, sight.scheme) if fill.tag == _A + "solidFill" else None
    style = shape.element.find(f"{_P}style/{_A}fillRef")
    if fill is None and style is not None and style.get("idx") != "0":
        return None  # filled by the theme's style
    if box is None or any(_overlap(box, other) for other in below + sight.beneath):
        return None
    return sight.background


def _sight(slide, size: tuple[int, int] | None, known: dict) -> _Sight:
    """A slide's _Sight; `known` keeps what its layout and master give, for the next slide on
    them (python-pptx finds a shape's place and a part's relationships anew on each call)."""
    layout = slide.slide_layout
    master = layout.slide_master
    key = str(layout.part.partname)
    if key not in known:
        known[key] = _looks(layout, master)
    theme, scheme, layout_drawn, master_drawn = known[key]
    if (mapping := slide.element.find(f"{_P}clrMapOvr/{_A}overrideClrMapping")) is not None:
        scheme = _scheme(mapping, theme)
    shows_master = slide.element.get("showMasterSp") != "0"
    beneath = (layout_drawn if shows_master else []) + \
        (master_drawn if shows_master and layout.element.get("showMasterSp") != "0" else [])
    return _Sight(size, slide.element.get("show") == "0", _background((slide, layout, master), scheme, theme),
                  scheme, beneath, known.setdefault(("lists", key), {}))


def _looks(layout, master) -> tuple:
    """What a layout and its master give their slides: the theme (parsed), its colours by name,
    the boxes of the layout's and of the master's own drawings (not their placeholders)."""
    from pptx.opc.constants import RELATIONSHIP_TYPE as RT

    try:
        theme = _parsed(master.part.part_related_by(RT.THEME))
    except KeyError:
        theme = None
    drawn = []
    for part in (layout, master):
        shapes = [shape for shape in part.shapes if not shape.is_placeholder]
        drawn.append([box for box in _boxes(shapes, IDENTITY) if box is not None])
    mapping = layout.element.find(f"{_P}clrMapOvr/{_A}overrideClrMapping")
    return theme, _scheme(master.element.find(_P + "clrMap") if mapping is None else mapping, theme), *drawn


def _scheme(mapping, theme) -> dict[str, str]:
    """The theme's colours by name (dk1, accent1…) and by the names `mapping` (the master's
    p:clrMap, or a layout's or slide's override) maps to them (bg1, tx1…)."""
    colours: dict[str, str] = {}
    found = None if theme is None else theme.find(f"{_A}themeElements/{_A}clrScheme")
    for el in [] if found is None else found:
        colour = _colour(el, {})
        if colour:
            colours[el.tag.rpartition("}")[2]] = colour
    for name, value in ({} if mapping is None else mapping.attrib).items():
        if value in colours:
            colours[name] = colours[value]
    return colours


def _background(slides, scheme: dict[str, str], theme) -> str | None:
    """The colour of a slide's background: the first of the slide, its layout and its master that
    sets one (white where none does); None where it is not one colour."""
    for slide in slides:
        background = slide.element.find(f"{_P}cSld/{_P}bg")
        if background is None:
            continue
        properties = background.find(_P + "bgPr")
        if properties is not None:
            return _colour(properties.find(_A + "solidFill"), scheme)
        reference = background.find(_P + "bgRef")
        styles = None if theme is None else theme.find(f"{_A}themeElements/{_A}fmtScheme/{_A}bgFillStyleLst")
        index = _number(reference.get("idx")) - FIRST_BACKGROUND_STYLE if reference is not None else -1
        if styles is None or not 0 <= index < len(styles) or styles[index].tag != _A + "solidFill":
            return None
        own = _colour(styles[index], scheme)  # phClr, the placeholder colour, is the reference's
        return own or _colour(reference, scheme)
    return WHITE  # what PowerPoint shows without a background set


def _colour(container, scheme: dict[str, str]) -> str | None:
    """The colour an element names in its first child (a solid fill's, a background reference's,
    a theme's entry), as six hex digits; None where it is none, or altered (a tint, a shade, some
    transparency: no longer the colour named)."""
    colour = None if container is None else next(iter(container), None)
    if colour is None or len(colour):
        return None
    if colour.tag == _A + "srgbClr":
        return hex_colour(colour.get("val"))
    if colour.tag == _A + "schemeClr":
        return scheme.get(colour.get("val") or "")
    if colour.tag == _A + "sysClr":
        return hex_colour(colour.get("lastClr"))
    return None


IDENTITY = (0.0, 0.0, 1.0, 1.0)  # x, y offset and x, y scale: the slide's own coordinates


def _group_transform(group, transform: tuple) -> tuple:
    """The transform placing a group's members on the slide: the group's box maps its child
    extents (a:chOff, a:chExt) onto where the group stands."""
    ox, oy, sx, sy = transform
    xfrm = group.element.find(f"{_P}grpSpPr/{_A}xfrm")
    parts = [None if xfrm is None else xfrm.find(_A + tag) for tag in ("off", "ext", "chOff", "chExt")]
    if any(part is None for part in parts):
        return transform
    (x, y), (cx, cy), (chx, chy), (chcx, chcy) = ((_number(p.get(a)), _number(p.get(b)))
                                                 for p, (a, b) in zip(parts, [("x", "y"), ("cx", "cy")] * 2))
    kx, ky = (cx / chcx if chcx else 1.0), (cy / chcy if chcy else 1.0)
    return (ox + sx * (x - chx * kx), oy + sy * (y - chy * ky), sx * kx, sy * ky)


def _number(value: str | None) -> int:
    """An integer attribute's value, 0 where it is none or not a number (a damaged file)."""
    try:
        return int(value or 0)
    except ValueError:
        return 0


def _boxes(shapes, transform: tuple, inherited: dict | None = None) -> list[Box | None]:
    """Each shape's box on the slide, None where it states no place. `inherited` keeps the places
    placeholders without their own take from their layout, by placeholder (python-pptx finds one
    anew on each call, for each of the four)."""
    ox, oy, sx, sy = transform
    boxes: list[Box | None] = []
    for shape in shapes:
        placeholder = shape.element.find(f"{_P}nvSpPr/{_P}nvPr/{_P}ph")
        if inherited is not None and placeholder is not None and shape.element.find(f"{_P}spPr/{_A}xfrm") is None:
            key = (placeholder.get("type"), placeholder.get("idx"))
            if key not in inherited:
                inherited[key] = (shape.left, shape.top, shape.width, shape.height)
            place = inherited[key]
        else:
            place = (shape.left, shape.top, shape.width, shape.height)
        if any(value is None for value in place):
            boxes.append(None)
            continue
        left, top, width, height = place
        boxes.append((ox + sx * left, oy + sy * top, ox + sx * (left + width), oy + sy * (top + height)))
    return boxes


def _overlap(one: Box, other: Box) -> bool:
    """Whether two boxes share some of their area (or one, of no size, lies inside the other)."""
    return one[0] <= other[2] and other[0] <= one[2] and one[1] <= other[3] and other[1] <= one[3] \
        and not (one[0] == other[2] or other[0] == one[2] or one[1] == other[3] or other[1] == one[3])


def _chart(out: Rendered, blob) -> None:
    """A chart's lines, from its part's bytes (`blob()`)."""
    try:
        data = blob()
    except KeyError:  # the relationship names a part the package lacks
        out.add(MISSING_CHART)
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
