"""OpenDocument: text (ODT), spreadsheets (ODS) and presentations (ODP), read as the Office readers
read DOCX, XLSX and PPTX (office/document.py: numbered lines, pipe tables, slides and sheets
addressed by `pages`).

    # Heading                        (ODT: headings by outline level; lists as "- " or "1. ",
    A paragraph with a note[^1].      tables as pipe tables, frames' pictures named and attached,
    | Name | Value |                  notes and comments after the body)
    --- Slide 2 ---                  (ODP: the title as "#", then each frame's text, tables and
    # Title                           pictures in the file's order, then the speaker notes)
    --- Sheet 1 "Data" (12 rows × 3 columns) ---   (ODS: each sheet's rows led by their own
    | row | A | B | C |                             numbers, empty rows left out; a cell as
    | 4 | Rent | 1200 | of:=[.B4]*12 → 14400 |     LibreOffice shows it, a formula before it)

odfdo (on lxml) opens the package and its parts; the readers walk the body's elements through its
public Element API. `offset`/`limit` count the rendered lines of the slides or sheets picked.
"""

from __future__ import annotations

import io
import re
from contextlib import contextmanager
from typing import Iterator

from agentread.find import Hit, Matcher, Reached, Unit, hits_in
from agentread.numbering import amount, span
from agentread.outline import Entry, outline_result
from agentread.readers import Source
from agentread.readers.fields import office_kind
from agentread.readers.office.document import (
    Rendered,
    cell_text,
    column_letters,
    headings_outline,
    pipe_row,
    pipe_table,
    select_sections,
    show,
)
from agentread.readers.zipped import check_package, parsing, section_units, sections_result
from agentread.request import ReadRequest
from agentread.result import ReadResult

# What each format is called in messages.
WHAT = {"odt": "OpenDocument text (ODT)", "ods": "OpenDocument spreadsheet (ODS)",
        "odp": "OpenDocument presentation (ODP)"}
# Where each format lists its sections (content.xml), one entry's tag, and what they are called:
# counted before odfdo parses the part, which would set up every one.
_SECTIONS = {"ods": ("content.xml", re.compile(rb"<table:table\s"), "sheets"),
             "odp": ("content.xml", re.compile(rb"<draw:page\s"), "slides")}

# Columns shown per sheet row, as in XLSX: past this a row is no line a model reads as a row.
MAX_COLUMNS = 100
# Copies a repeated row or cell (table:number-rows-repeated, -columns-repeated) stands for, shown.
# Empty repeats fill a sheet's unused million rows and are skipped; a filled row repeated more than
# this is shown this many times, then a line says how many more there are.
MAX_REPEATS = 1000
# Cells of a sheet's first row holding a value named in its outline entry, as in XLSX.
MAX_HEADER_CELLS = 20

# Elements of the text body whose children stand in the body as if they were not there: sections,
# and the bodies of generated indexes (their templates are left out).
_CONTAINERS = {"text:section", "text:table-of-content", "text:illustration-index", "text:table-index",
               "text:object-index", "text:user-index", "text:alphabetical-index", "text:bibliography",
               "text:index-body", "text:index-title", "office:text", "draw:text-box", "text:list-header"}
# Inline elements that show nothing themselves (their tails still do).
_SILENT = {"text:bookmark", "text:bookmark-start", "text:bookmark-end", "text:reference-mark",
           "text:reference-mark-start", "text:reference-mark-end", "text:soft-page-break", "text:change",
           "text:change-start", "text:change-end", "office:annotation-end", "text:alphabetical-index-mark",
           "text:toc-mark", "text:user-index-mark", "draw:image"}
_ROWS = {"table:table-row"}
_ROW_GROUPS = {"table:table-header-rows", "table:table-rows", "table:table-row-group"}
_CELLS = {"table:table-cell", "table:covered-table-cell"}
# Drawn shapes (on a slide, or anchored in a text), which may hold a picture, a table or text.
_SHAPES = {"draw:frame", "draw:custom-shape", "draw:rect", "draw:ellipse", "draw:polygon", "draw:polyline",
           "draw:path", "draw:circle", "draw:line", "draw:connector", "draw:caption", "draw:measure",
           "draw:regular-polygon", "draw:control"}


def read(source: Source, request: ReadRequest) -> ReadResult:
    with _parsing(source) as (fmt, document):
        return _read(fmt, document, source, request)


def outline(source: Source, request: ReadRequest) -> ReadResult:
    with _parsing(source) as (fmt, document):
        return _outline(fmt, document, source, request)


def search(source: Source, request: ReadRequest, matcher: Matcher) -> tuple[str, Iterator[Hit | Reached]]:
    """ODT: its lines as a read numbers them; ODP: each slide's lines; ODS: each cell, cited by
    sheet and cell, its read the line of its row. The file is walked before the search starts."""
    with _parsing(source) as (fmt, document):
        return _search(fmt, document, request, matcher)


@contextmanager
def _parsing(source: Source) -> Iterator[tuple[str, object]]:
    """The format and the odfdo Document, the package checked first; a failure of odfdo or of the
    walk over the document is the file's damage."""
    fmt = office_kind(source.description)
    data = source.whole()
    what = f"{WHAT[fmt]} file"
    check_package(data, source.name, what, "damaged_office", _SECTIONS.get(fmt))
    from odfdo import Document

    with parsing(source.name, what, "damaged_office"):
        yield fmt, Document(io.BytesIO(data))


def _read(fmt: str, document, source: Source, request: ReadRequest) -> ReadResult:
    if fmt == "odt":
        return show(_Walker(document).text_body(), request, source.path, "document")
    if fmt == "odp":
        out, first, last, total = _slides(document, request)
        return sections_result(out, request, source.path, "presentation", first, last, total, "slides")
    out, first, last, total = _sheets(document, request)
    return sections_result(out, request, source.path, "spreadsheet", first, last, total, "sheets")


def _outline(fmt: str, document, source: Source, request: ReadRequest) -> ReadResult:
    if fmt == "odt":
        return headings_outline(_Walker(document).text_body(), request, source.path)
    if fmt == "odp":
        pages = _pages(document)
        entries = []
        for number, page in enumerate(pages, 1):
            walker = _Walker(document)
            title = walker.slide_title(page)
            if not title:
                walker.slide(page, number)
                text = next((line for line in walker.out.lines[1:] if line.strip()), "")
                title = f"(no title) {' '.join(text.split())}".rstrip()
            entries.append(Entry(0, title, f"slide {number}", {"pages": str(number)}))
        header = (f"[Outline of {source.path}: {len(pages):,} slide{'' if len(pages) == 1 else 's'}, each by its "
                  "title. Read one with the arguments after \"→\" (a range such as pages=\"2-5\" reads several).]")
        return outline_result(entries, request, source.path, "presentation", header, total_pages=len(pages))
    tables = _tables(document)
    entries = [_sheet_entry(number, table) for number, table in enumerate(tables, 1)]
    header = (f"[Outline of {source.path}: {len(tables):,} sheet{'' if len(tables) == 1 else 's'}, each with its "
              "size and its first row holding a value. Read one with the arguments after \"→\".]")
    return outline_result(entries, request, source.path, "spreadsheet", header, total_pages=len(tables))


def _search(fmt: str, document, request: ReadRequest, matcher: Matcher) -> tuple[str, Iterator[Hit | Reached]]:
    first_line = request.offset or 1
    if fmt == "odt":
        lines = _Walker(document).text_body().lines
        units = (Unit(text, {"line": number}, {"offset": number, "limit": 1}, {"offset": number})
                 for number, text in enumerate(lines[first_line - 1:], first_line))
        return "document", hits_in(units, matcher, request.column or 1)
    if fmt == "odp":
        out, first, last, _ = _slides(document, request)
        return "presentation", hits_in(section_units(out, first, last, first_line, "slide"), matcher,
                                       request.column or 1)
    out, first, last, _ = _sheets(document, request, cells := [])

    starts = {number: start for number, start, _ in out.sections}

    def cell_units() -> Iterator[Unit]:
        # A cell's place in its line: the offset and column of a find that goes on from it.
        for sheet, name, line, at, cell, text in cells:
            if (line, at) >= (first_line, request.column or 1) or sheet != first:
                relative = line - starts[sheet] + 1
                yield Unit(text, {"sheet": name, "cell": cell}, {"pages": str(sheet), "offset": relative, "limit": 1},
                           {"pages": span(sheet, last), "offset": relative, "column": at}, reads_on=None)

    return "spreadsheet", hits_in(cell_units(), matcher, first_only=True)


# Presentations.

def _pages(document) -> list:
    return [child for child in document.body.children if child.tag == "draw:page"]


def _slides(document, request: ReadRequest) -> tuple[Rendered, int, int, int]:
    pages = _pages(document)
    first, last = select_sections(request.pages, len(pages), "slide")
    walker = _Walker(document)
    for number in range(first, last + 1):
        walker.slide(pages[number - 1], number)
    return walker.out, first, last, len(pages)


# Spreadsheets.

def _tables(document) -> list:
    return [child for child in document.body.children if child.tag == "table:table"]


def _sheets(document, request: ReadRequest, cells: list | None = None) -> tuple[Rendered, int, int, int]:
    """The sheets `pages` asks for; `cells` (when given) gets each cell shown as (sheet, its name,
    its line, its column in the line, its name as B17, its text)."""
    tables = _tables(document)
    names = [table.get_attribute("table:name") or f"Sheet{number}" for number, table in enumerate(tables, 1)]
    first, last = select_sections(request.pages, len(tables), "sheet", names)
    out = Rendered()
    for number in range(first, last + 1):
        rows = _sheet_rows(tables[number - 1])
        width = min(max((len(cells) for _, cells in rows), default=0), MAX_COLUMNS)
        if out.lines:
            out.add("")
        out.open_section(number)
        extent = f"{amount(abs(rows[-1][0]), 'row')} × {amount(width, 'column')}" if rows else "empty"
        out.add(f'--- Sheet {number} "{names[number - 1]}" ({extent}) ---')
        if not rows:
            continue
        out.add(pipe_row(["row", *(column_letters(c) for c in range(1, width + 1))]))
        out.add(pipe_row(["---"] * (width + 1)))
        for row, texts in rows:
            if row < 0:  # a repeat cut short: the rows it leaves out
                out.add(f"[Rows {texts[0]}-{-row:,} repeat row {texts[1]}: not shown.]")
                continue
            shown = [cell_text(text) for text in texts[:MAX_COLUMNS]]
            line = pipe_row([str(row), *shown, *[""] * (width - len(shown))])
            if cells is not None:
                at = len(pipe_row([str(row)])) + 1
                for column, text in enumerate(shown, 1):
                    if text:
                        cells.append((number, names[number - 1], len(out.lines) + 1, at,
                                      f"{column_letters(column)}{row}", text))
                    at += len(text) + 3
            out.add(line)
    return out, first, last, len(tables)


def _sheet_rows(table) -> list[tuple[int, list[str]]]:
    """The rows holding a value, as (row number, cell texts), repeats expanded up to MAX_REPEATS;
    the rest of a longer repeat as (-its last row, [its first row, the row it repeats])."""
    rows: list[tuple[int, list[str]]] = []
    number = 0
    for row in _table_rows(table):
        repeat = int(row.get_attribute("table:number-rows-repeated") or 1)
        texts = _row_cells(row)
        if texts:
            for copy in range(min(repeat, MAX_REPEATS)):
                rows.append((number + copy + 1, texts))
            if repeat > MAX_REPEATS:
                rows.append((-(number + repeat), [f"{number + MAX_REPEATS + 1:,}", f"{number + 1:,}"]))
        number += repeat
    return rows


def _table_rows(table) -> Iterator:
    for child in table.children:
        if child.tag in _ROWS:
            yield child
        elif child.tag in _ROW_GROUPS:
            yield from _table_rows(child)


def _row_cells(row) -> list[str]:
    """A sheet row's cells as shown (a formula before its value), trailing empty cells dropped."""
    texts: list[str] = []
    for cell in row.children:
        if cell.tag not in _CELLS:
            continue
        repeat = int(cell.get_attribute("table:number-columns-repeated") or 1)
        text = "\n".join(_plain(p) for p in cell.children if p.tag in ("text:p", "text:h"))
        formula = cell.get_attribute("table:formula")
        if formula:
            text = f"{formula} → {text}" if text else str(formula)
        if text:
            texts += [text] * min(repeat, MAX_COLUMNS)
        elif len(texts) < MAX_COLUMNS:
            texts += [""] * min(repeat, MAX_COLUMNS)
        if len(texts) >= MAX_COLUMNS:
            break
    while texts and not texts[-1]:
        texts.pop()
    return texts


def _sheet_entry(number: int, table) -> Entry:
    name = table.get_attribute("table:name") or f"Sheet{number}"
    rows = _sheet_rows(table)
    if not rows:
        return Entry(0, f'Sheet {number} "{name}"', "no cells", {"pages": str(number)})
    width = max(len(cells) for _, cells in rows)
    row, cells = rows[0]
    named = [f"{column_letters(c)}={cell_text(text)}" for c, text in enumerate(cells, 1) if text][:MAX_HEADER_CELLS]
    more = sum(1 for text in cells if text) - len(named)
    where = (f"{amount(abs(rows[-1][0]), 'row')} × {amount(width, 'column')}; first row with values {row}: "
             f"{', '.join(named)}" + (f" and {more:,} more" if more > 0 else ""))
    return Entry(0, f'Sheet {number} "{name}"', where, {"pages": str(number)})


def _plain(element) -> str:
    """An element's text as shown, without its notes' bodies (a cell's, a title's)."""
    return _Walker(None).inline(element, [])


# Text: the walk every format shares.

class _Walker:
    def __init__(self, document):
        self.document = document
        self.out = Rendered()
        self.notes: list[tuple[str, str, str]] = []  # (class, citation, text)
        self.comments: list[str] = []
        self._numbered: dict[str, set[int]] = {}  # list style → the levels it numbers

    def text_body(self) -> Rendered:
        self.blocks(self.document.body)
        for kind, title in (("footnote", "Footnotes:"), ("endnote", "Endnotes:")):
            notes = [(cite, text) for cls, cite, text in self.notes if cls == kind]
            if notes:
                self.out.add("")
                self.out.add(title)
                for cite, text in notes:
                    self.out.add(f"[^{cite}]: {text}")
        if self.comments:
            self.out.add("")
            self.out.add("Comments:")
            for number, text in enumerate(self.comments):
                self.out.add(f"[comment {number}]: {text}")
        return self.out

    def blocks(self, parent, depth: int = 0) -> None:
        for child in parent.children:
            tag = child.tag
            if tag == "text:h":
                self.heading(child)
            elif tag == "text:p":
                self.paragraph(child)
            elif tag == "text:list":
                self.list(child, depth, child.get_attribute("text:style-name"), [0])
            elif tag == "table:table":
                self.table(child)
            elif tag in _CONTAINERS:
                self.blocks(child, depth)
            elif tag in _SHAPES or tag == "draw:g":
                self.shape(child)

    def heading(self, h) -> None:
        after: list = []
        text = " ".join(self.inline(h, after).split())
        if text:
            level = min(max(int(h.get_attribute("text:outline-level") or 1), 1), 9)
            text = "#" * level + " " + text
            self.out.headings.append((level, text, len(self.out.lines) + 1))
            self.out.add(text)
        for shape in after:
            self.shape(shape)

    def paragraph(self, p, prefix: str = "") -> None:
        after: list = []
        text = self.inline(p, after).strip()
        # Empty paragraphs: one blank line, not many; a paragraph of pictures alone is their lines.
        if text:
            self.out.add(prefix + text)
        elif not after and self.out.lines and self.out.lines[-1]:
            self.out.add("")
        for shape in after:
            self.shape(shape)

    def list(self, element, depth: int, style: str | None, counter: list[int]) -> None:
        numbered = depth + 1 in self._numbered_levels(style)
        for item in element.children:
            if item.tag not in ("text:list-item", "text:list-header"):
                continue
            counter[0] += 1 if item.tag == "text:list-item" else 0
            marker = f"{counter[0]}. " if numbered else "- "
            first = item.tag == "text:list-item"
            for child in item.children:
                if child.tag == "text:list":
                    self.list(child, depth + 1, child.get_attribute("text:style-name") or style, [0])
                elif child.tag in ("text:p", "text:h"):
                    self.paragraph(child, "  " * depth + (marker if first else " " * len(marker)))
                    first = False
                elif child.tag == "table:table":
                    self.table(child)

    def _numbered_levels(self, style: str | None) -> set[int]:
        if not style or self.document is None:
            return set()
        if style not in self._numbered:
            found = self.document.get_style("list", style)
            self._numbered[style] = {int(level.get_attribute("text:level") or 0) for level in
                                     (found.children if found is not None else [])
                                     if level.tag == "text:list-level-style-number"}
        return self._numbered[style]

    def table(self, table) -> None:
        rows: list[list[str]] = []
        for row in _table_rows(table):
            cells = []
            for cell in row.children:
                if cell.tag in _CELLS:
                    text = self._cell(cell)
                    repeat = int(cell.get_attribute("table:number-columns-repeated") or 1)
                    cells += [text] * min(repeat, MAX_COLUMNS)
            repeat = int(row.get_attribute("table:number-rows-repeated") or 1)
            rows += [cells] * (min(repeat, MAX_REPEATS) if any(cells) else 1)
        if not rows:
            return
        if self.out.lines and self.out.lines[-1]:
            self.out.add("")
        for line in pipe_table(rows):
            self.out.add(line)
        self.out.add("")

    def _cell(self, cell) -> str:
        """A table cell's paragraphs, one a line (pipe_table writes the breaks as <br>)."""
        inner = _Walker(self.document)
        inner.notes, inner.comments = self.notes, self.comments
        inner.blocks(cell)
        return "\n".join(line for line in inner.out.lines if line.strip())

    def inline(self, element, after: list) -> str:
        """The text of a paragraph (or a span in it), as shown; the frames and shapes anchored in it
        are collected into `after` (they follow its line), notes and comments into the walker's
        lists."""
        parts = [element.text or ""]
        for child in element.children:
            tag = child.tag
            if tag == "text:s":
                parts.append(" " * int(child.get_attribute("text:c") or 1))
            elif tag == "text:tab":
                parts.append("\t")
            elif tag == "text:line-break":
                parts.append("\n")
            elif tag == "text:note":
                parts.append(self._note(child))
            elif tag == "office:annotation":
                texts = [_plain(p) for p in child.children if p.tag == "text:p"]
                self.comments.append(" ".join(" ".join(texts).split()))
                parts.append(f"[comment {len(self.comments) - 1}]")
            elif tag in _SHAPES or tag == "draw:g" or tag == "draw:a" and any(c.tag in _SHAPES for c in child.children):
                after.append(child)
            elif tag == "text:ruby":
                parts.append("".join(self.inline(c, after) for c in child.children if c.tag == "text:ruby-base"))
            elif tag not in _SILENT:
                parts.append(self.inline(child, after))
            parts.append(child.tail or "")
        return "".join(parts)

    def _note(self, note) -> str:
        cite = next((_plain(c) for c in note.children if c.tag == "text:note-citation"), "")
        body = next((c for c in note.children if c.tag == "text:note-body"), None)
        text = " ".join(_plain(p) for p in (body.children if body is not None else []) if p.tag in ("text:p", "text:h"))
        self.notes.append((note.get_attribute("text:note-class") or "footnote", cite, " ".join(text.split())))
        return f"[^{cite}]"

    def shape(self, shape) -> None:
        """A frame or drawn shape: its picture, its table, its text; a group's shapes in order."""
        if shape.tag in ("draw:g", "draw:a"):
            for child in shape.children:
                if child.tag in _SHAPES or child.tag in ("draw:g", "draw:a"):
                    self.shape(child)
            return
        tags = [child.tag for child in shape.children]
        if "draw:object" in tags or "draw:object-ole" in tags:  # its draw:image is a picture of it
            href = next((c.get_attribute("xlink:href") for c in shape.children if c.tag.startswith("draw:object")), "")
            self.out.add(f"[embedded object: {shape.get_attribute('draw:name') or (href or '').strip('./')}]")
        elif "draw:image" in tags:  # the frame's first image; the others are that one in other formats
            self.image(shape, shape.children[tags.index("draw:image")])
        self.blocks(shape)  # text boxes, a shape's own paragraphs, tables

    def image(self, frame, image) -> None:
        href = image.get_attribute("xlink:href") or ""
        titles = [_plain(c) for c in frame.children if c.tag in ("svg:title", "svg:desc")]
        alt = next((t for t in titles if t.strip()), "")
        label = href + (f' "{alt}"' if alt else "")
        if not href or "://" in href or self.document is None:
            self.out.add(f"[image: {label or 'linked'}]")
            return
        self.out.add_image(label, lambda document=self.document, href=href: document.get_part(href))

    # Presentations.

    def slide_title(self, page) -> str:
        frame = self._title_frame(page)
        return "" if frame is None else " ".join(_plain_all(frame).split())

    @staticmethod
    def _title_frame(page):
        return next((c for c in page.children if c.tag in _SHAPES
                     and c.get_attribute("presentation:class") == "title"), None)

    def slide(self, page, number: int) -> None:
        if self.out.lines:
            self.out.add("")
        self.out.open_section(number)
        name = page.get_attribute("draw:name") or ""
        named = f' "{name}"' if name and not re.fullmatch(r"(page|Slide ?)\d+", name) else ""
        self.out.add(f"--- Slide {number}{named} ---")
        title = self._title_frame(page)
        if title is not None:
            text = " ".join(_plain_all(title).split())
            if text:
                self.out.add("# " + text)
        for child in page.children:
            if (child.tag in _SHAPES or child.tag in ("draw:g", "draw:a")) \
                    and child.get_attribute("presentation:class") != "title":
                self.shape(child)
        notes = next((c for c in page.children if c.tag == "presentation:notes"), None)
        if notes is not None:
            texts = [_plain_all(frame).strip() for frame in notes.children
                     if frame.tag == "draw:frame" and frame.get_attribute("presentation:class") == "notes"]
            texts = [text for text in texts if text]
            if texts:
                self.out.add("Notes:")
                self.out.add("\n".join(texts))


def _plain_all(element) -> str:
    """Every paragraph's text inside a shape (its text boxes'), one a line."""
    walker = _Walker(None)
    walker.blocks(element)
    return "\n".join(line for line in walker.out.lines if line.strip())
