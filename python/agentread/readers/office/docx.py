"""DOCX: the body in reading order as Markdown-like lines, paged by offset/limit like text.

    # Heading 1                      (headings by outline level, as Word's navigation pane shows)
    A paragraph with a footnote[^1] and a comment[comment 0].
      - a bullet at level 2          (lists from the numbering definitions: "- " or "3. ")
    | Name | Value |                 (tables as pipe tables, the first row as header; a merged
    | --- | --- |                     cell's text once, in its first grid cell)
    [image 1: word/media/image1.png "alt text", image/png 640x480, attached]
    The area is $\\pi r^{2}$.         (equations as LaTeX, omml.py; a display equation on a line
    $$\\frac{a}{b}$$                   of its own, between $$)
    Footnotes:                       (footnotes, endnotes and comments follow the body)
    [^1]: The footnote's text.

Python-docx opens the package and resolves styles and parts; the body is walked as XML so that
content controls, tracked insertions, hyperlinks and text boxes are read where they stand.
"""

from __future__ import annotations

import io
import re
from typing import Iterator

from agentread.find import Hit, Matcher, Reached
from agentread.outline import heading_entries, outline_result
from agentread.readers.office.document import Rendered, pipe_table, search_lines, show
from agentread.readers.office.omml import M, equation
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

_HEADING = re.compile(r"^heading ([1-9])$", re.IGNORECASE)
# A paragraph's outline level (w:outlineLvl) is 0 for the top heading to 8; this one is body text.
BODY_TEXT_LEVEL = 9

# Containers whose children stand in the body or the paragraph as if the container were not there.
TRANSPARENT = {W + "sdt", W + "sdtContent", W + "customXml", W + "smartTag", W + "ins", W + "fldSimple",
               W + "r", W + "moveTo"}


def read_docx(data: bytes, request: ReadRequest, path: str) -> ReadResult:
    return show(render_docx(data), request, path, "document")


def search_docx(data: bytes, request: ReadRequest, matcher: Matcher) -> tuple[str, Iterator[Hit | Reached]]:
    """Its lines as a read numbers them, from `offset`."""
    return search_lines("document", render_docx(data).lines, request, matcher)


def outline_docx(data: bytes, request: ReadRequest, path: str) -> ReadResult:
    """The headings (by outline level), each spanning its lines to the next at its level or
    higher."""
    out = render_docx(data)
    entries = heading_entries(out.headings, len(out.lines))
    if entries:
        header = (f"[Outline of {path}: {len(entries):,} heading{'' if len(entries) == 1 else 's'} in "
                  f"{len(out.lines):,} lines. Read one with the arguments after \"→\".]")
    else:
        header = (f"[{path} has no headings (no paragraph has an outline level or a Heading or Title style); "
                  f"it has {len(out.lines):,} lines: read it with offset and limit.]")
    return outline_result(entries, request, path, "document", header, total_lines=len(out.lines))


def render_docx(data: bytes) -> Rendered:
    import docx

    document = docx.Document(io.BytesIO(data))
    walker = _Walker(document)
    walker.blocks(document.element.body)
    walker.notes()
    return walker.out


class _Walker:
    def __init__(self, document):
        self.document = document
        self.part = document.part
        self.out = Rendered()
        self.counters: dict[tuple[str, int], int] = {}
        self._formats: dict[tuple[str, int], str] = {}
        self._styles = {s.style_id: s for s in document.styles}
        self._levels: dict[str, int | None] = {}  # by style id: the heading level its paragraphs take

    # Body: paragraphs, tables, and the containers that hold them.
    def blocks(self, parent) -> None:
        for child in parent:
            if child.tag == W + "p":
                self.paragraph(child)
            elif child.tag == W + "tbl":
                self.table(child)
            elif child.tag in TRANSPARENT:
                self.blocks(child)

    def paragraph(self, p) -> None:
        images: list = []
        text = self.inline(p, images).strip()
        style = self._style(p)
        level = self._heading_level(p, style)
        if text and level:
            text = "#" * level + " " + text
            self.out.headings.append((level, text, len(self.out.lines) + 1))
        elif text:
            text = self._list_prefix(p, (style.name or "") if style is not None else "") + text
        # Empty paragraphs: one blank line, not many; a paragraph of pictures alone is their lines.
        if text or (not images and (not self.out.lines or self.out.lines[-1])):
            self.out.add(text)
        self._images(images)

    def table(self, tbl) -> None:
        images: list = []
        rows: list[list[str]] = []
        above: list = []
        for tcs in _grid(tbl):
            row = []
            for i, tc in enumerate(tcs):
                repeated = (i and tcs[i - 1] is tc) or (i < len(above) and above[i] is tc)
                row.append("" if repeated else "\n".join(self.inline(p, images).strip() for p in tc.iter(W + "p")))
            rows.append(row)
            above = tcs
        if self.out.lines and self.out.lines[-1]:
            self.out.add("")
        for line in pipe_table(rows):
            self.out.add(line)
        self.out.add("")
        self._images(images)

    # Inline content: runs, breaks, references, hyperlinks, images (collected to follow
    # the paragraph).
    def inline(self, el, images: list) -> str:
        parts: list[str] = []
        for child in el:
            tag = child.tag
            if tag == W + "t":
                parts.append(child.text or "")
            elif tag == W + "tab":
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
                text = self.inline(child, images)
                rel = self.part.rels.get(child.get(R + "id") or "")
                parts.append(f"[{text}]({rel.target_ref})" if rel is not None and rel.is_external and text else text)
            elif tag in (W + "drawing", W + "pict", W + "object"):
                self._find_images(child, images)
                parts.extend(self.inline(p, images) + " " for p in child.iter(W + "p"))  # text boxes
            elif tag in (M + "oMath", M + "oMathPara"):
                parts.append(equation(child))
            elif tag in TRANSPARENT or tag == W + "hyperlink":
                parts.append(self.inline(child, images))
        return "".join(parts)

    def _find_images(self, el, images: list) -> None:
        alt = next((d.get("descr") or d.get("title") for d in el.iter(WP + "docPr")), None)
        for node in el.iter(A + "blip", VML + "imagedata"):
            rid = node.get(R + "embed") or node.get(R + "id")
            part = self.part.related_parts.get(rid) if rid else None
            if part is not None:
                images.append((str(part.partname).lstrip("/") + (f' "{alt}"' if alt else ""), part))

    def _images(self, images: list) -> None:
        for label, part in images:
            self.out.add_image(label, lambda part=part: part.blob)

    def _style(self, p):
        """The paragraph's style: the one it names, else the document's default paragraph style."""
        from docx.enum.style import WD_STYLE_TYPE

        style_id = p.find(f"{W}pPr/{W}pStyle")
        if style_id is not None:
            return self._styles.get(style_id.get(W + "val"))
        return self.document.styles.default(WD_STYLE_TYPE.PARAGRAPH)

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
                numbering = self.part.numbering_part.element
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

    # Footnotes, endnotes and comments, after the body, each under its marker.
    def notes(self) -> None:
        from docx.oxml import parse_xml

        kinds = (("/footnotes", "footnote", "Footnotes:", "[^{id}]: {text}"),
                 ("/endnotes", "endnote", "Endnotes:", "[^e{id}]: {text}"),
                 ("/comments", "comment", "Comments:", "[comment {id}] {author}: {text}"))
        for reltype, tag, title, form in kinds:
            part = next((rel.target_part for rel in self.part.rels.values()
                         if rel.reltype.endswith(reltype) and not rel.is_external), None)
            if part is None:
                continue
            lines = []
            for note in parse_xml(part.blob).iter(W + tag):
                if note.get(W + "type") in ("separator", "continuationSeparator", "continuationNotice"):
                    continue
                text = " ".join(self.inline(p, []).strip() for p in note.iter(W + "p")).strip()
                lines.append(form.format(id=note.get(W + "id"), author=note.get(W + "author") or "unknown",
                                         text=text))
            if lines:
                if self.out.lines and self.out.lines[-1]:
                    self.out.add("")
                self.out.add(title)
                for line in lines:
                    self.out.add(line)


def _outline_level(el) -> int | None:
    """The heading level (1-9) of the outline level a paragraph or style element states in its
    properties, 0 for body text, None where it states none (or one out of range)."""
    value = _val(el.find(f"{W}pPr/{W}outlineLvl"))
    if value is None or not value.isdigit() or int(value) > BODY_TEXT_LEVEL:
        return None
    return 0 if int(value) == BODY_TEXT_LEVEL else int(value) + 1


def _val(el) -> str | None:
    return None if el is None else el.get(W + "val")


def _grid(tbl) -> list[list]:
    """The table's cells (`w:tc` elements) row by row, one per layout column, as python-docx's
    `Row.cells` lays them out: a cell spanning columns repeated, a cell merged down into from above
    given as the cell it continues (the same element), so that merged text is shown once."""
    grid: list[list] = []
    for tr in tbl.iterchildren(W + "tr"):
        row: list = []
        for tc in tr.iterchildren(W + "tc"):
            span = tc.find(f"{W}tcPr/{W}gridSpan")
            merge = tc.find(f"{W}tcPr/{W}vMerge")
            if merge is not None and merge.get(W + "val", "continue") == "continue" and grid \
                    and len(row) < len(grid[-1]):
                tc = grid[-1][len(row)]
            count = span.get(W + "val", "1") if span is not None else "1"
            row += [tc] * (int(count) if count.isdigit() and 0 < int(count) <= MAX_GRID_SPAN else 1)
        grid.append(row)
    return grid
