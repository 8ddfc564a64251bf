"""DOCX: the body in reading order as Markdown-like lines, paged by offset/limit like text.

    [This document has tracked changes, shown as all markup: ...]   (only when it has any)
    # Heading 1                      (headings by outline level, as Word's navigation pane shows)
    A paragraph with a footnote[^1], a comment[comment 0] and a [link](https://x.org/#part).
      - a bullet at level 2          (lists from the numbering definitions: "- " or "3. ")
    The fee is {--ten--}{++twelve++} euros.   (tracked changes in place)
    > the text of a text box         (text boxes and shapes, quoted after their paragraph)
    [SmartArt "alt text":]           (SmartArt's items from its data part, smartart.py)
    - Plan
    | Name | Value |                 (tables as pipe tables, the first row as header; a merged
    | --- | --- |                     cell's text once, in its first grid cell)
    [image 1: word/media/image1.png "alt text", image/png 640x480, attached]
    The area is $\\pi r^{2}$.         (equations as LaTeX, omml.py; a display equation on a line
    $$\\frac{a}{b}$$                   of its own, between $$)
    Headers and footers:             (after the body: each once, with its sections and kind)
    Header (sections 1-2): Annual report
    Footnotes:                       (footnotes, endnotes and comments follow)
    [^1]: The footnote's text.
    Comments:
    [comment 0] Ann on "the text it is on": The comment's text.

Python-docx opens the package and resolves styles, sections and parts; each story (the body, a
header, the notes) is walked as XML so that content controls, tracked changes, fields, hyperlinks
and text boxes are read where they stand, with links and pictures resolved in the story's own part.
"""

from __future__ import annotations

import io
import re
from functools import lru_cache
from typing import Iterator

from agentread.find import Hit, Matcher, Reached
from agentread.readers.office.charts import (
    CHART_CONTENT_TYPE,
    CHART_REFERENCE,
    CHARTEX_CONTENT_TYPE,
    CHARTEX_NAMESPACES,
    CHARTEX_REFERENCE,
    MISSING_CHART,
    chart_lines,
)
from agentread.readers.office.document import (
    WHITE,
    Rendered,
    collapsed,
    cut,
    headings_outline,
    held,
    hex_colour,
    pipe_table,
    search_lines,
    show,
    unseen_colour,
)
from agentread.readers.office.omml import M, equation
from agentread.readers.office.smartart import smartart_lines
from agentread.request import ReadRequest
from agentread.result import ReadResult

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"

# Columns one table cell may span: Word's tables have at most 63 columns; a larger span is damage,
# read as one.
MAX_GRID_SPAN = 63
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
WP = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}"
VML = "{urn:schemas-microsoft-com:vml}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
W14 = "{http://schemas.microsoft.com/office/word/2010/wordml}"
W15 = "{http://schemas.microsoft.com/office/word/2012/wordml}"
DGM = "{http://schemas.openxmlformats.org/drawingml/2006/diagram}"

# The namespaces a markup-compatibility choice may require and still be read here: Word 2010's
# shapes, groups, canvases and additions to its markup and drawings, Word 2012's, and the newer
# charts (whose data is read, where the fallback is a picture of them).
READ_CHOICES = {"http://schemas.microsoft.com/office/word/2010/wordprocessingShape",
                "http://schemas.microsoft.com/office/word/2010/wordprocessingGroup",
                "http://schemas.microsoft.com/office/word/2010/wordprocessingCanvas",
                "http://schemas.microsoft.com/office/word/2010/wordprocessingDrawing",
                "http://schemas.microsoft.com/office/word/2010/wordml",
                "http://schemas.microsoft.com/office/word/2012/wordml",
                "http://schemas.microsoft.com/office/drawing/2010/main",
                "http://schemas.openxmlformats.org/officeDocument/2006/math"} | CHARTEX_NAMESPACES

# Tracked changes, shown in place with CriticMarkup's marks; a moved passage is deleted where it was
# and inserted where it went.
CHANGES = {W + "ins": "{{++{}++}}", W + "moveTo": "{{++{}++}}", W + "del": "{{--{}--}}", W + "moveFrom": "{{--{}--}}"}
TRACKED_CHANGES = ("[This document has tracked changes, shown as all markup: inserted text as {++text++}, deleted "
                   "text as {--text--}. The document as it reads with every change accepted has the first and not "
                   "the second.]")
CHANGES_SHOWN = "[Tracked changes are shown as all markup: {++inserted++}, {--deleted--}; line 1 says more.]"

# The kinds of notes, each with its part's relationship, the title it is listed under, and its line.
NOTES = {"footnote": ("/footnotes", "Footnotes:", "[^{id}]: {text}"),
         "endnote": ("/endnotes", "Endnotes:", "[^e{id}]: {text}"),
         "comment": ("/comments", "Comments:", "[comment {id}] {author}{on}: {text}")}

# Characters of the text a comment anchors to shown with it: enough to tell the passage (a comment
# on a whole page would otherwise repeat it).
MAX_ANCHOR_CHARS = 200

# Marks a complex field's result is held between until its paragraph is done (characters that
# cannot occur in XML text): begin, result, end.
FIELD_START, FIELD_END, FIELD_CLOSE = "\x01", "\x02", "\x03"
# The mark after a link to a bookmark until the bookmark's line is known (a character that cannot
# occur in XML text).
BOOKMARK_LINK = "\x04"

# A run of at most this size (in half-points: 1 pt) is a line on the page, not text to read.
MAX_UNREADABLE_HALF_POINTS = 2
# The colours Word highlights text with (w:highlight), by name.
HIGHLIGHTS = {"black": "000000", "blue": "0000FF", "cyan": "00FFFF", "green": "00FF00", "magenta": "FF00FF",
              "red": "FF0000", "yellow": "FFFF00", "white": "FFFFFF", "darkBlue": "000080", "darkCyan": "008080",
              "darkGreen": "008000", "darkMagenta": "800080", "darkRed": "800000", "darkYellow": "808000",
              "darkGray": "808080", "lightGray": "C0C0C0"}
# Where a paragraph, a cell and a table keep their shading (w:shd).
SHADED = {W + "p": W + "pPr", W + "tc": W + "tcPr", W + "tbl": W + "tblPr"}
WPS = "{http://schemas.microsoft.com/office/word/2010/wordprocessingShape}"
# A toggle property (w:vanish) set off.
OFF = {"0", "false", "off"}
# A table's choice of its style's conditional formats (w:tblLook): its attributes, else the bits of
# its older hex value; a table that has none takes what Word gives a new table (a header row, a
# first column, banded rows).
LOOK_BITS = {"firstRow": 0x20, "lastRow": 0x40, "firstColumn": 0x80, "lastColumn": 0x100, "noHBand": 0x200,
             "noVBand": 0x400}
NEW_TABLE_LOOK = 0x04A0

_HEADING = re.compile(r"^heading ([1-9])$", re.IGNORECASE)
# A paragraph's outline level (w:outlineLvl) is 0 for the top heading to 8; this one is body text.
BODY_TEXT_LEVEL = 9

# Containers whose children stand in the body or the paragraph as if the container were not there
# (a tracked insertion around rows or paragraphs too; in a paragraph it is marked, CHANGES).
TRANSPARENT = {W + "sdt", W + "sdtContent", W + "customXml", W + "smartTag", W + "ins",
               W + "r", W + "moveTo", W + "dir", W + "bdo"}


def read_docx(data: bytes, request: ReadRequest, path: str) -> ReadResult:
    """A window of the document's lines; one that starts past the first line of a document with
    tracked changes is headed by a line saying how they are shown, as that first line does."""
    out = render_docx(data)
    changed = out.lines[:1] == [TRACKED_CHANGES] and request.line_from(len(out.lines)) > 1
    return show(out, request, path, "document", header=CHANGES_SHOWN if changed else None)


def search_docx(data: bytes, request: ReadRequest, matcher: Matcher) -> tuple[str, Iterator[Hit | Reached]]:
    """Its lines as a read numbers them, from `offset`."""
    return search_lines("document", render_docx(data).lines, request, matcher)


def outline_docx(data: bytes, request: ReadRequest, path: str) -> ReadResult:
    """The headings (by outline level), each spanning its lines to the next at its level or
    higher."""
    return headings_outline(render_docx(data), request, path,
                            " (no paragraph has an outline level or a Heading or Title style)")


@lru_cache(maxsize=1)  # the document read last: paging through a long one renders it once
def render_docx(data: bytes) -> Rendered:
    import docx

    document = docx.Document(io.BytesIO(data))
    walker = _Walker(document)
    walker.render()
    walker.out.mark_hidden()
    return walker.out


class _Walker:
    def __init__(self, document):
        self.document = document
        self.part = document.part  # the part whose story is walked: its relationships resolve links and pictures
        self.out = Rendered()
        self.counters: dict[tuple[str, int], int] = {}
        self._formats: dict[tuple[str, int], str] = {}
        self._styles = {s.style_id: s for s in document.styles}
        self._levels: dict[str, int | None] = {}  # by style id: the heading level its paragraphs take
        self._aside = False  # walking a header, a note or a text box: no headings, no blank lines
        self._fields: list[str] = []  # the instructions of the complex fields open, innermost last
        self._anchors: dict[str, list[str]] = {}  # by comment id: the text its range covers
        self._bookmarks: dict[str, int] = {}  # by name: the line a bookmark in the body lands on
        self._drawn_behind: dict = {}  # by story (its root element): whether it draws behind its text
        self._default_style: tuple | None = None  # the default paragraph style, once found
        self._style_properties: dict[tuple[str, str], object] = {}  # by (style id, tag): its run property
        self._cell_formats: dict = {}  # by cell (w:tc): its table's style and the conditions that format it
        self._table_formats: dict = {}  # by (style id, conditions, path): what the table style gives there
        self._tables: dict = {}  # by table (w:tbl): what places its cells in its style (_table_layout)
        self._cell_columns: dict = {}  # by row (w:tr): its cells' first layout columns and spans
        self._owned: dict = {}  # by (paragraph, cell or table; path): its own property's element
        self._last_hidden: tuple = (None, None)  # the last run asked of and why it is hidden
        defaults = document.styles.element.find(f"{W}docDefaults/{W}rPrDefault/{W}rPr")
        self._defaults = defaults if defaults is not None else ()
        self._page = hex_colour(_attribute(document.element.find(W + "background"), W + "color")) or WHITE

    def render(self) -> None:
        """The body, then the headers and footers, footnotes, endnotes and comments; a first line
        saying how tracked changes are shown when the document holds any."""
        from docx.oxml import parse_xml

        body = self.document.element.body
        headers = self._headers_footers()
        notes = [(kind, part, parse_xml(part.blob)) for kind, part in self._note_parts()]
        stories = [body] + [part.element for _, part, _ in headers] + [root for _, _, root in notes]
        if any(_changed(root) for root in stories):
            self.out.add(TRACKED_CHANGES)
        for root in stories:
            _comment_anchors(root, self._anchors, self._hidden)
        self._body(body)
        self._headers_and_footers(headers)
        for kind, part, root in notes:
            self._notes(kind, part, root)
        self._name_bookmark_lines()

    def _body(self, body) -> None:
        """The body's blocks, noting the line each bookmark in them lands on: the first line a
        block with it shows, or, where it shows none (an empty paragraph), the next block's."""
        waiting: list[str] = []
        for child in body:
            first = len(self.out.lines)
            self.blocks([child])
            waiting += (mark.get(W + "name") or "" for mark in child.iter(W + "bookmarkStart"))
            shown = next((n for n in range(first, len(self.out.lines)) if self.out.lines[n]), None)
            if shown is not None:
                for name in waiting:
                    self._bookmarks.setdefault(name, shown + 1)
                waiting = []

    def _name_bookmark_lines(self) -> None:
        """Each link to a bookmark with the line it leads to, as a Markdown link's title:
        `[text](#name "line 7")`; links are shown before the lines of the bookmarks after them are
        known, so they are marked as they are shown and named here."""
        def named(match: re.Match) -> str:
            line = self._bookmarks.get(match[1])
            return f'(#{match[1]} "line {line}")' if line else f"(#{match[1]})"

        lines = self.out.lines
        for i, line in enumerate(lines):
            if BOOKMARK_LINK in line:
                lines[i] = _BOOKMARK_LINK.sub(named, line)
        self.out.headings[:] = [(level, _BOOKMARK_LINK.sub(named, text), line)
                                for level, text, line in self.out.headings]

    # Body: paragraphs, tables, and the containers that hold them.
    def blocks(self, parent) -> None:
        for child in parent:
            if child.tag == W + "p":
                self.paragraph(child)
            elif child.tag == W + "tbl":
                self.table(child)
            elif child.tag == MC + "AlternateContent":
                self.blocks(_choice(child))
            elif child.tag in TRANSPARENT:
                self.blocks(child)

    def paragraph(self, p) -> None:
        follows: list = []
        text = self.text(p, follows)
        style = self._style(p)
        level = None if self._aside else self._heading_level(p, style)
        if text and level:
            text = "#" * level + " " + text
            self.out.headings.append((level, text, len(self.out.lines) + 1))
        elif text:
            text = self._list_prefix(p, (style.name or "") if style is not None else "") + text
        # Empty paragraphs: one blank line, not many; a paragraph of pictures alone is their lines.
        if text or (not self._aside and not follows and (not self.out.lines or self.out.lines[-1])):
            self.out.add(text)
        self._follow(follows)

    def table(self, tbl) -> None:
        follows: list = []
        rows: list[list[str]] = []
        above: list = []
        for tcs in _grid(tbl):
            row = []
            for i, tc in enumerate(tcs):
                repeated = (i and tcs[i - 1] is tc) or (i < len(above) and above[i] is tc)
                row.append("" if repeated else "\n".join(self.text(p, follows) for p in _outside_boxes(tc, {W + "p"})))
            rows.append(row)
            above = tcs
        if self.out.lines and self.out.lines[-1] and not self._aside:
            self.out.add("")
        for line in pipe_table(rows):
            self.out.add(line)
        if not self._aside:
            self.out.add("")
        self._follow(follows)

    def text(self, el, follows: list) -> str:
        """A paragraph's text (or a note's, a cell's), with the links its fields make."""
        return _field_links(self.inline(el, follows)).strip()

    # Inline content: runs, breaks, references, hyperlinks, tracked changes, fields; pictures,
    # text boxes and SmartArt are collected into `follows` to come after the paragraph.
    def inline(self, el, follows: list) -> str:
        parts: list[str] = []
        for child in el:
            tag = child.tag
            if tag in (W + "t", W + "delText"):
                text = child.text or ""
                why = self._hidden(child.getparent()) if text.strip() else None
                parts.append(held(text, why) if why else text)
            elif tag in (W + "tab", W + "ptab"):
                parts.append("\t")
            elif tag in (W + "br", W + "cr"):
                parts.append("\n")
            elif tag == W + "noBreakHyphen":
                parts.append("-")
            elif tag == W + "footnoteReference":
                parts.append(f"[^{child.get(W + 'id')}]")
            elif tag == W + "endnoteReference":
                parts.append(f"[^e{child.get(W + 'id')}]")
            elif tag == W + "commentReference":
                parts.append(f"[comment {child.get(W + 'id')}]")
            elif tag == W + "hyperlink":
                text = self.inline(child, follows)
                target = self._link_target(child)
                parts.append(f"[{text}]({target})" if target and text.strip() else text)
            elif tag in CHANGES:
                text = self.inline(child, follows)
                parts.append(CHANGES[tag].format(text) if text else "")
            elif tag in (W + "fldChar", W + "instrText"):
                parts.append(self._field(child))
            elif tag == W + "fldSimple":  # a field in one element: its result, a link if it is a HYPERLINK
                text, target = self.inline(child, follows), _hyperlink_field(child.get(W + "instr") or "")
                parts.append(f"[{text}]({target})" if target and text.strip() else text)
            elif tag in (W + "drawing", W + "pict", W + "object"):
                self._drawing(child, follows)
            elif tag == MC + "AlternateContent":
                parts.append(self.inline(_choice(child), follows))
            elif tag in (M + "oMath", M + "oMathPara"):
                parts.append(equation(child))
            elif tag == W + "ruby":  # a phonetic guide: the text, then its reading in brackets
                base, guide = (self.inline(part, follows) if part is not None else ""
                               for part in (child.find(W + "rubyBase"), child.find(W + "rt")))
                parts.append(f"{base}({guide})" if guide else base)
            elif tag in TRANSPARENT:
                parts.append(self.inline(child, follows))
        return "".join(parts)

    def _hidden(self, run) -> str | None:
        """Why a person reading the document does not see run `run`'s text (a reason for
        hidden.passage), or None: Word hides it, it is too small to read, or it is drawn in the
        colour under it (its shading or highlight, its paragraph's, its cell's or text box's, the
        page's). Asked once a run: each of its texts asks, and a run's properties are searched
        for among all its children."""
        if run is not self._last_hidden[0]:
            self._last_hidden = (run, self._why_hidden(run))
        return self._last_hidden[1]

    def _why_hidden(self, run) -> str | None:
        if run.tag != W + "r":
            return None
        paragraph = next(run.iterancestors(W + "p"), None)
        cell = next(paragraph.iterancestors(W + "tc"), None) if paragraph is not None else None
        styles = (self._styles.get(_val(run.find(f"{W}rPr/{W}rStyle"))), cell,
                  self._style(paragraph) if paragraph is not None else None)
        vanish = self._property(run, styles, "vanish")
        if vanish is not None and _val(vanish) not in OFF:
            return "in a run Word hides"
        size = _val(self._property(run, styles, "sz"))
        if size and size.isdigit() and int(size) <= MAX_UNREADABLE_HALF_POINTS:
            return "in type under 1 pt"
        colour = hex_colour(_val(self._property(run, styles, "color")))
        under = self._under(run, styles) if colour else None
        return unseen_colour(colour, under) if under else None

    def _property(self, run, styles: tuple, name: str):
        """A run property's element as Word resolves it: the run's own, else its character
        style's, else its table style's for its cell (`_cell_format`), else its paragraph style's
        (`styles`: the character style, the cell, the paragraph style; each style with the styles
        it is based on), else the document's default; None where none sets it."""
        path = f"{W}rPr/{W}{name}"
        own = run.find(path)
        if own is not None:
            return own
        character, cell, paragraph = styles
        for found in (self._style_property(character, path), self._cell_format(cell, path),
                      self._style_property(paragraph, path)):
            if found is not None:
                return found
        return next((el for el in self._defaults if el.tag == W + name), None)

    def _cell_format(self, tc, path: str):
        """The element at `path` (`w:rPr/w:color`, `w:tcPr/w:shd`) that cell `tc`'s table style
        gives it: from the first of its conditional formats that applies to the cell and sets it
        (a corner cell, the header or last row, the first or last column, a band of rows or of
        columns, the whole table), else the style's own; None where the table has no style or its
        style does not set it. Kept by style, conditions and path: a table's cells share a few."""
        if tc is None:
            return None
        if tc not in self._cell_formats:
            self._cell_formats[tc] = self._conditions(tc)
        key = (*self._cell_formats[tc], path)
        if key[0] is None:
            return None
        if key not in self._table_formats:
            style = self._styles.get(key[0])
            found = None
            for kind in key[1]:
                found = self._style_property(style, f"{W}tblStylePr[@{W}type='{kind}']/{path}")
                if found is not None:
                    break
            self._table_formats[key] = found if found is not None else self._style_property(style, path)
        return self._table_formats[key]

    def _conditions(self, tc) -> tuple:
        """Cell `tc`'s table style (its id) and the kinds of its conditional formats
        (w:tblStylePr) that apply to the cell, the first winning, as the table's w:tblLook chooses
        them; (None, ()) for a cell of a table without a style."""
        tr = next(tc.iterancestors(W + "tr"), None)
        tbl = next(tr.iterancestors(W + "tbl"), None) if tr is not None else None
        if tbl is None:
            return None, ()
        if tbl not in self._tables:
            self._tables[tbl] = self._table_layout(tbl)
        style, look, rows, count, width, row_band, column_band = self._tables[tbl]
        if style is None:
            return None, ()
        if tr not in self._cell_columns:  # the row's cells (those in content controls among them) by column
            cells = [c for c in tr.iter(W + "tc") if next(c.iterancestors(W + "tr"), None) is tr]
            before = _val(tr.find(f"{W}trPr/{W}gridBefore"))
            column = int(before) if before and before.isdigit() else 0
            self._cell_columns[tr] = columns = {}
            for cell in cells:
                span = _span(cell)
                columns[cell] = (column, span)
                column += span
        row, (column, span) = rows[tr], self._cell_columns[tr].get(tc, (0, 1))
        first_row, last_row = look["firstRow"] and row == 0, look["lastRow"] and row == count - 1
        first_column = look["firstColumn"] and column == 0
        last_column = look["lastColumn"] and column + span >= width
        vertical = "n" if first_row else "s" if last_row else ""
        horizontal = "w" if first_column else "e" if last_column else ""
        kinds = [f"{vertical}{horizontal}Cell"] if vertical and horizontal else []
        kinds += ["firstRow"] * first_row + ["lastRow"] * last_row
        kinds += ["firstCol"] * first_column + ["lastCol"] * last_column
        if not (look["noHBand"] or first_row or last_row):
            kinds.append(f"band{(row - look['firstRow']) // row_band % 2 + 1}Horz")
        if not (look["noVBand"] or first_column or last_column):
            kinds.append(f"band{(column - look['firstColumn']) // column_band % 2 + 1}Vert")
        return style, (*kinds, "wholeTable")

    def _table_layout(self, tbl) -> tuple:
        """What places a table's cells in its style's conditional formats: its style's id (None
        where it names none known), its w:tblLook, its rows' numbers (from 0) and count, its
        columns, and the rows and columns in a band of its style."""
        style_id = _val(tbl.find(f"{W}tblPr/{W}tblStyle"))
        style = self._styles.get(style_id)
        if style is None:
            return (None,) * 7
        rows = [r for r in tbl.iter(W + "tr") if next(r.iterancestors(W + "tbl"), None) is tbl]
        width = len(tbl.findall(f"{W}tblGrid/{W}gridCol")) or max((sum(map(_span, r.iter(W + "tc"))) for r in rows),
                                                                 default=0)
        bands = []
        for name in ("tblStyleRowBandSize", "tblStyleColBandSize"):
            size = _val(self._style_property(style, f"{W}tblPr/{W}{name}"))
            bands.append(int(size) if size and size.isdigit() and int(size) > 0 else 1)
        return style_id, _look(tbl), {r: n for n, r in enumerate(rows)}, len(rows), width, *bands

    def _style_property(self, style, path: str):
        """The element at `path` in a style's definition (a run property, `w:rPr/w:color`), or in
        the style it is based on (and so on up); None where none sets it. Kept for every style on
        the way, as _style_level keeps levels, and walked in a loop: a chain can be long."""
        chain: list[str] = []
        found = None
        while style is not None and style.style_id not in chain:
            if (style.style_id, path) in self._style_properties:
                found = self._style_properties[style.style_id, path]
                break
            chain.append(style.style_id)
            found = style.element.find(path)
            if found is not None:
                break
            style = self._styles.get(_val(style.element.find(W + "basedOn")))
        for style_id in chain:
            self._style_properties[style_id, path] = found
        return found

    def _under(self, run, styles: tuple) -> str | None:
        """The colour drawn under a run (hex): its shading or highlight, else its paragraph's
        shading (its own or its style's), its cell's (its own, else its table style's for the
        cell) or its table's, the text box's fill, the page's background; None where that is not
        known here: a text box filled with a theme's colour, a gradient or a picture, the page of a
        story that draws a picture or shape behind its text (a cover page's photograph)."""
        shading = hex_colour(_attribute(self._property(run, styles, "shd"), W + "fill"))
        highlight = HIGHLIGHTS.get(_val(self._property(run, styles, "highlight")) or "")
        if shading or highlight:
            return shading or highlight
        for el in run.iterancestors(W + "p", W + "tc", W + "tbl", W + "txbxContent"):
            if el.tag == W + "txbxContent":
                return _box_fill(el, self._page)
            shd = self._own(el, f"{SHADED[el.tag]}/{W}shd")
            if shd is None and el.tag == W + "p":
                shd = self._style_property(self._style(el), f"{W}pPr/{W}shd")
            if shd is None and el.tag == W + "tc":
                shd = self._cell_format(el, f"{W}tcPr/{W}shd")
            if shd is None and el.tag == W + "tbl":
                shd = self._style_property(self._styles.get(_val(self._own(el, f"{W}tblPr/{W}tblStyle"))),
                                           f"{W}tblPr/{W}shd")
            if hex_colour(_attribute(shd, W + "fill")):
                return hex_colour(shd.get(W + "fill"))
        story = run.getroottree().getroot()
        if story not in self._drawn_behind:
            self._drawn_behind[story] = any(anchor.get("behindDoc") in ("1", "true")
                                            for anchor in story.iter(WP + "anchor"))
        return None if self._drawn_behind[story] else self._page

    def _link_target(self, link) -> str:
        """A hyperlink's address with its fragment (`w:anchor`), or `#bookmark` for a link to a
        place in the document; "" when it has neither."""
        rel = self.part.rels.get(link.get(R + "id") or "")
        address = rel.target_ref if rel is not None and rel.is_external else ""
        return _target(address, link.get(W + "anchor"))

    def _field(self, el) -> str:
        """A complex field's pieces: its instruction is kept (not shown), its result shown between
        marks that _field_links turns into a link for a HYPERLINK field."""
        if el.tag == W + "instrText":
            if self._fields:
                self._fields[-1] += el.text or ""
            return ""
        kind = el.get(W + "fldCharType")
        if kind == "begin":
            self._fields.append("")
            return FIELD_START
        if kind == "end" and self._fields:
            return f"{FIELD_END}{_hyperlink_field(self._fields.pop())}{FIELD_CLOSE}"
        return ""

    def _drawing(self, el, follows: list) -> None:
        """A drawing's pictures, SmartArt and text boxes, to follow the paragraph."""
        from docx.oxml import parse_xml
        from lxml import etree

        alt = next((d.get("descr") or d.get("title") for d in el.iter(WP + "docPr")), None)
        named = f' "{alt}"' if alt else ""
        for node in _outside_boxes(el, {A + "blip", VML + "imagedata", DGM + "relIds", CHART_REFERENCE,
                                        CHARTEX_REFERENCE}):
            rid = node.get(R + "dm") if node.tag == DGM + "relIds" else node.get(R + "embed") or node.get(R + "id")
            part = self.part.related_parts.get(rid) if rid else None
            if part is None and node.tag == CHARTEX_REFERENCE:  # chosen over its fallback picture: say it is lost
                follows.append(lambda: self.out.add(MISSING_CHART))
            if part is None:
                continue
            if node.tag == DGM + "relIds":
                try:
                    lines = [f"[SmartArt{named}:]"] + smartart_lines(parse_xml(part.blob))
                except etree.XMLSyntaxError as exc:
                    lines = [f"[SmartArt{named}: its data could not be read ({exc})]"]
                follows.append(lambda lines=lines: [self.out.add(line) for line in lines])
            elif part.content_type in (CHART_CONTENT_TYPE, CHARTEX_CONTENT_TYPE):  # its title and data, not a picture
                follows.append(lambda part=part: self.out.add("\n".join(chart_lines(part.blob))))
            else:
                label = str(part.partname).lstrip("/") + named
                follows.append(lambda label=label, part=part: self.out.add_image(label, lambda: part.blob))
        for box in _outside_boxes(el, {W + "txbxContent"}):
            follows.append(lambda box=box: self._box(box))

    def _box(self, content) -> None:
        """A text box's or shape's text, its lines quoted (`> `), after its paragraph."""
        first, aside = len(self.out.lines), self._aside
        self._aside = True
        self.blocks(content)
        self._aside = aside
        for i in range(first, len(self.out.lines)):
            if i + 1 not in self.out.images:
                self.out.lines[i] = "> " + self.out.lines[i]

    def _follow(self, follows: list) -> None:
        for add in follows:
            add()

    def _style(self, p):
        """The paragraph's style: the one it names, else the document's default paragraph style."""
        from docx.enum.style import WD_STYLE_TYPE

        style_id = self._own(p, f"{W}pPr/{W}pStyle")
        if style_id is not None:
            return self._styles.get(style_id.get(W + "val"))
        if self._default_style is None:  # python-docx looks through every style for it
            self._default_style = (self.document.styles.default(WD_STYLE_TYPE.PARAGRAPH),)
        return self._default_style[0]

    def _own(self, el, path: str):
        """`el.find(path)`, a paragraph's, cell's or table's own property (`w:pPr/w:pStyle`),
        searched for once: each of its runs asks, and the search goes through all its children."""
        key = (el, path)
        if key not in self._owned:
            self._owned[key] = el.find(path)
        return self._owned[key]

    def _heading_level(self, p, style) -> int | None:
        """The paragraph's heading level (1 at the top) as Word's navigation pane finds it: its own
        outline level, else its style's; None for body text."""
        own = _outline_level(p)
        if own is not None:
            return own or None
        return self._style_level(style)

    def _style_level(self, style) -> int | None:
        """The heading level a paragraph style gives: its outline level, else, for a Heading N or
        Title style that states none, N or 1; else its base style's (basedOn), and so on up. Kept
        for every style on the way, and bases found by id: python-docx's `base_style` searches all
        the styles, so a long chain of styles cost its length squared, on every style."""
        chain: list[str] = []
        level = None
        while style is not None and style.style_id not in chain:
            if style.style_id in self._levels:
                level = self._levels[style.style_id]
                break
            chain.append(style.style_id)
            own = _outline_level(style.element)
            heading = _HEADING.match(style.name or "")
            if own is not None or heading or style.name == "Title":
                level = (own or None) if own is not None else int(heading.group(1)) if heading else 1
                break
            style = self._styles.get(_val(style.element.find(f"{W}basedOn")))
        for style_id in chain:
            self._levels[style_id] = level
        return level

    def _list_prefix(self, p, style: str) -> str:
        num = p.find(f"{W}pPr/{W}numPr")
        if num is None:
            if style.startswith("List Bullet"):
                return "- "
            return "1. " if style.startswith("List Number") else ""
        num_id = _val(num.find(W + "numId")) or "0"
        level = int(_val(num.find(W + "ilvl")) or 0)
        if num_id == "0":  # numId 0 switches numbering off
            return ""
        indent = "  " * level
        if self._format(num_id, level) == "bullet":
            return indent + "- "
        for key in [k for k in self.counters if k[0] == num_id and k[1] > level]:
            del self.counters[key]  # a deeper list starts again after its parent item
        count = self.counters[num_id, level] = self.counters.get((num_id, level), 0) + 1
        return f"{indent}{count}. "

    def _format(self, num_id: str, level: int) -> str:
        key = (num_id, level)
        if key not in self._formats:
            self._formats[key] = "decimal"
            try:
                numbering = self.document.part.numbering_part.element  # a header's lists too
            except (KeyError, NotImplementedError, AttributeError):
                return "decimal"
            for num in numbering.iter(W + "num"):
                if num.get(W + "numId") == num_id:
                    abstract = _val(num.find(W + "abstractNumId"))
                    for a in numbering.iter(W + "abstractNum"):
                        if a.get(W + "abstractNumId") == abstract:
                            for lvl in a.iter(W + "lvl"):
                                if lvl.get(W + "ilvl") == str(level):
                                    self._formats[key] = _val(lvl.find(W + "numFmt")) or "decimal"
        return self._formats[key]

    # Headers and footers, after the body: each once, with the sections it stands in.
    def _headers_footers(self) -> list[tuple[str, object, list[int]]]:
        """(label, part, section numbers) of each header and footer the document shows, in the
        order first met: a section without its own inherits the previous section's."""
        even = self.document.settings.odd_and_even_pages_header_footer
        current: dict[str, object] = {}
        found: dict[tuple[str, str], tuple[str, object, list[int]]] = {}
        for number, section in enumerate(self.document.sections, 1):
            first = section.different_first_page_header_footer
            for label, story, shown in (
                    ("Odd-page header" if even else "Header", section.header, True),
                    ("Odd-page footer" if even else "Footer", section.footer, True),
                    ("First-page header", section.first_page_header, first),
                    ("First-page footer", section.first_page_footer, first),
                    ("Even-page header", section.even_page_header, even),
                    ("Even-page footer", section.even_page_footer, even)):
                if not story.is_linked_to_previous:  # only then is `part` its own, not one made for it
                    current[label] = _story_part(story)
                part = current.get(label)
                if part is not None and shown:
                    found.setdefault((label, str(part.partname)), (label, part, []))[2].append(number)
        return list(found.values())

    def _headers_and_footers(self, headers) -> None:
        """Each as `Header (sections 1-2): its text`, or its label line followed by its lines when
        it has several; an empty one is left out."""
        title = len(self.out.lines)
        self._gap()
        self.out.add("Headers and footers:")
        kept = False
        for label, part, sections in headers:
            first, images = len(self.out.lines), len(self.out.images)
            self.out.add(f"{label} ({_sections(sections)}):")
            self._story(part, part.element)
            added = self.out.lines[first + 1:]
            if not added:
                del self.out.lines[first:]
            elif len(added) == 1 and len(self.out.images) == images:
                self.out.lines[first:] = [f"{self.out.lines[first]} {added[0]}"]
            kept = kept or bool(added)
        if not kept:
            del self.out.lines[title:]

    # Footnotes, endnotes and comments, after the body, each under its marker.
    def _note_parts(self) -> list[tuple[str, object]]:
        """(kind, part) of the footnotes, endnotes and comments the document has."""
        parts = ((tag, self._related(reltype)) for tag, (reltype, _, _) in NOTES.items())
        return [(tag, part) for tag, part in parts if part is not None]

    def _related(self, reltype: str):
        """The document's part of a relationship type (by the end of its URI), or None."""
        return next((rel.target_part for rel in self.document.part.rels.values()
                     if rel.reltype.endswith(reltype) and not rel.is_external), None)

    def _threads(self, root) -> dict[str, str]:
        """By comment id: the comment it replies to and whether it is resolved, as its line says
        them; from the comments' extended part (Word 2013 on), which names each comment by the id
        of its last paragraph."""
        from docx.oxml import parse_xml

        part = self._related("/commentsExtended")
        if part is None:
            return {}
        ids = {}
        for comment in root.iter(W + "comment"):
            last = next(reversed(list(comment.iter(W + "p"))), None)
            if last is not None and last.get(W14 + "paraId"):
                ids[last.get(W14 + "paraId")] = comment.get(W + "id")
        threads = {}
        for entry in parse_xml(part.blob).iter(W15 + "commentEx"):
            own, parent = ids.get(entry.get(W15 + "paraId")), ids.get(entry.get(W15 + "paraIdParent") or "")
            if own is not None:
                threads[own] = ((f", replying to comment {parent}" if parent else "")
                                + (" (resolved)" if entry.get(W15 + "done") == "1" else ""))
        return threads

    def _notes(self, tag: str, part, root) -> None:
        _, title, form = NOTES[tag]
        titled = False
        threads = self._threads(root) if tag == "comment" else {}
        for note in root.iter(W + tag):
            if note.get(W + "type") in ("separator", "continuationSeparator", "continuationNotice"):
                continue
            if not titled:
                self._gap()
                self.out.add(title)
                titled = True
            follows: list = []
            self.part, aside, self._aside, self._fields = part, self._aside, True, []
            text = " ".join(t for t in (self.text(p, follows) for p in _outside_boxes(note, {W + "p"})) if t)
            key = note.get(W + "id") or ""
            anchor = cut(collapsed("".join(self._anchors.get(key, []))), MAX_ANCHOR_CHARS)
            thread = threads.get(key, "")
            # A reply is on its first comment's text: it names that comment instead.
            on = thread if thread.startswith(",") else (f' on "{anchor}"' if anchor else "") + thread
            self.out.add(form.format(id=key, author=note.get(W + "author") or "unknown", on=on, text=text))
            self._follow(follows)
            self.part, self._aside = self.document.part, aside

    def _story(self, part, root) -> None:
        """A header's or footer's blocks, their links and pictures resolved in its own part."""
        self.part, aside, self._aside, self._fields = part, self._aside, True, []
        self.blocks(root)
        self.part, self._aside = self.document.part, aside

    def _gap(self) -> None:
        """A blank line before what follows the body, unless there is one."""
        if self.out.lines and self.out.lines[-1]:
            self.out.add("")


def _story_part(story):
    """A header's or footer's own part; None when its reference leads nowhere, or to a part that
    is not XML (a damaged file: the rest of it is read)."""
    try:
        part = story.part
    except KeyError:
        return None
    return part if hasattr(part, "element") else None


def _sections(numbers: list[int]) -> str:
    """Section numbers as runs: "section 2", "sections 1-3, 5"."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and runs[-1][1] == n - 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
    return f"section{'s' if len(numbers) > 1 else ''} {text}"


def _changed(root) -> bool:
    """Whether a story holds a tracked insertion or deletion of text."""
    return any(next(change.iter(W + "t", W + "delText"), None) is not None for change in root.iter(*CHANGES))


def _comment_anchors(root, anchors: dict[str, list[str]], hidden) -> None:
    """The text each comment's range (commentRangeStart to commentRangeEnd) covers in a story, up
    to a little past MAX_ANCHOR_CHARS: a range is only added to while it is open and short. A
    run's text `hidden(run)` gives a reason for is held as a hidden passage, as in its line."""
    wanting: dict[str, int] = {}  # the ranges open and still short, with their length so far
    for el in root.iter(W + "commentRangeStart", W + "commentRangeEnd", W + "t", W + "delText", W + "p"):
        key = el.get(W + "id") or ""
        if el.tag == W + "commentRangeStart":
            anchors.setdefault(key, [])
            wanting[key] = sum(map(len, anchors[key]))
        elif el.tag == W + "commentRangeEnd":
            wanting.pop(key, None)
        elif wanting and (text := " " if el.tag == W + "p" else el.text):
            why = hidden(el.getparent()) if el.tag != W + "p" and text.strip() else None
            text = held(text, why) if why else text
            for key in list(wanting):
                anchors[key].append(text)
                wanting[key] += len(text)
                if wanting[key] > MAX_ANCHOR_CHARS:
                    del wanting[key]


def _choice(alternate):
    """What a markup-compatibility block holds for this reader: its first choice whose required
    namespaces are all READ_CHOICES (a text box as a DrawingML shape), else its fallback (the same
    as VML, or a picture of ink)."""
    for choice in alternate.iterchildren(MC + "Choice"):
        if all(choice.nsmap.get(prefix) in READ_CHOICES for prefix in (choice.get("Requires") or "").split()):
            return choice
    return next(alternate.iterchildren(MC + "Fallback"), ())


def _outside_boxes(el, tags: set[str]):
    """The elements of `tags` within `el`, in order, but those inside a text box in it (walked as
    the box) and those in a fallback of markup compatibility (the same content again)."""
    for child in el:
        if child.tag in tags:  # not looked into: a paragraph holds another only in a text box
            yield child
        elif child.tag not in (W + "txbxContent", MC + "Fallback") and len(child):
            yield from _outside_boxes(child, tags)


# A field instruction's words: a quoted argument or a run of other characters.
_FIELD_WORD = re.compile(r'"([^"]*)"|(\S+)')
# The HYPERLINK field's switches that take an argument: \l the bookmark, \o the tooltip, \t
# the frame.
_LINK_SWITCHES = {"\\l", "\\o", "\\t"}
_BOOKMARK_LINK = re.compile(f"\\(#([^{BOOKMARK_LINK})]*){BOOKMARK_LINK}\\)")
_FIELD_MARKS = re.compile(f"([{FIELD_START}{FIELD_END}{FIELD_CLOSE}])")


def _hyperlink_field(instruction: str) -> str:
    """The target of a HYPERLINK field (`HYPERLINK "url" \\l "bookmark"`), else ""."""
    words = [(quoted, bare) for quoted, bare in _FIELD_WORD.findall(instruction)]
    if not words or words[0][1].upper() != "HYPERLINK":
        return ""
    address, anchor, switch = "", None, None
    for quoted, bare in words[1:]:
        word = quoted or bare
        if switch == "\\l":
            anchor = word
        elif switch is None and not bare.startswith("\\") and not address:
            address = word
        switch = bare.lower() if bare.lower() in _LINK_SWITCHES and switch is None else None
    return _target(address, anchor)


def _target(address: str, anchor: str | None) -> str:
    """A link's target: its address with its fragment, or a bookmark in the document marked for
    _name_bookmark_lines."""
    if address:
        return f"{address}#{anchor}" if anchor else address
    return f"#{anchor}{BOOKMARK_LINK}" if anchor else ""


def _field_links(text: str) -> str:
    """A text's complex fields as their results, a HYPERLINK field's as a link; the marks of a
    field begun or ended in another paragraph dropped."""
    results: list[list[str]] = [[]]  # the text outside any field, then each open field's result
    target = None  # a field's target, between its end's two marks
    for piece in _FIELD_MARKS.split(text):
        if piece == FIELD_START:
            results.append([])
        elif piece == FIELD_END:
            target = ""
        elif piece == FIELD_CLOSE:
            if len(results) > 1:
                result = "".join(results.pop())
                results[-1].append(f"[{result}]({target})" if target and result.strip() else result)
            target = None
        elif target is not None:
            target += piece
        else:
            results[-1].append(piece)
    return "".join("".join(pieces) for pieces in results)


def _outline_level(el) -> int | None:
    """The heading level (1-9) of the outline level a paragraph or style element states in its
    properties, 0 for body text, None where it states none (or one out of range)."""
    value = _val(el.find(f"{W}pPr/{W}outlineLvl"))
    if value is None or not value.isdigit() or int(value) > BODY_TEXT_LEVEL:
        return None
    return 0 if int(value) == BODY_TEXT_LEVEL else int(value) + 1


def _val(el) -> str | None:
    return None if el is None else el.get(W + "val")


def _attribute(el, name: str) -> str | None:
    return None if el is None else el.get(name)


def _look(tbl) -> dict[str, bool]:
    """Which of its style's conditional formats a table turns on (LOOK_BITS' names)."""
    look = tbl.find(f"{W}tblPr/{W}tblLook")
    value = _val(look) if look is not None else None
    try:
        bits = NEW_TABLE_LOOK if look is None else int(value, 16) if value else 0
    except ValueError:
        bits = 0
    return {name: (look.get(W + name) not in OFF if look is not None and look.get(W + name) is not None
                   else bool(bits & bit)) for name, bit in LOOK_BITS.items()}


def _span(tc) -> int:
    """The layout columns a cell spans (w:gridSpan), within MAX_GRID_SPAN."""
    count = _val(tc.find(f"{W}tcPr/{W}gridSpan")) or "1"
    return int(count) if count.isdigit() and 0 < int(count) <= MAX_GRID_SPAN else 1


def _box_fill(content, page: str) -> str | None:
    """The fill of the shape a text box's content stands in: its plain colour, the page's where
    it has none, None where it is a theme's, a gradient or a picture (or a VML shape's)."""
    shape = next(content.iterancestors(WPS + "wsp"), None)
    properties = shape.find(WPS + "spPr") if shape is not None else None
    if properties is None:
        return None
    if properties.find(A + "noFill") is not None:
        return page
    return hex_colour(_attribute(properties.find(f"{A}solidFill/{A}srgbClr"), "val"))


def _grid(tbl) -> list[list]:
    """The table's cells (`w:tc` elements) row by row, one per layout column, as python-docx's
    `Row.cells` lays them out: a cell spanning columns repeated, a cell merged down into from above
    given as the cell it continues (the same element), so that merged text is shown once."""
    grid: list[list] = []
    for tr in tbl.iterchildren(W + "tr"):
        row: list = []
        for tc in tr.iterchildren(W + "tc"):
            span = _span(tc)
            merge = tc.find(f"{W}tcPr/{W}vMerge")
            if merge is not None and merge.get(W + "val", "continue") == "continue" and grid \
                    and len(row) < len(grid[-1]):
                tc = grid[-1][len(row)]
            row += [tc] * span
        grid.append(row)
    return grid
