"""A workbook read from its XML parts: the sheets it lists, its strings and date styles, and each
sheet's rows as a stream of cells (lxml's streaming parser); and a worksheet's XML looked at as
bytes, where parsing it would cost the whole sheet: its declared extent, its merged ranges (after
the cells), and a stream that starts at a row.

The project reads the parts itself, rather than through openpyxl's workbook, so that opening a
workbook parses no sheet (openpyxl sizes every sheet at load, parsing whole each one that declares
no extent) and one pass over a sheet gives both the values Excel last computed and the formulas.
What a cell means is still openpyxl's (its table of built-in number formats, its translator that
gives each cell of a shared formula, its comments' model), and what it shows is xlfmt's: the text
Excel draws for a value under its number format.

Parsing a sheet of 200,000 rows takes seconds before its last row can be shown; finding that row's
bytes takes a fraction of that. `open_from_row` gives the parser a well-formed document of the rows
from `start` on: the sheet's own root tag, the rows' container, the shared formulas those rows may
refer back to, then the sheet's bytes from the row found.
"""

from __future__ import annotations

import colorsys
import datetime as dt
import functools
import io
import posixpath
import re
import zipfile
from dataclasses import dataclass, field
from typing import BinaryIO, Iterator, NamedTuple, Sequence

from lxml import etree
from openpyxl.comments.comment_sheet import CommentSheet
from openpyxl.formula.translate import Translator
from openpyxl.reader.strings import read_string_table
from openpyxl.styles.colors import COLOR_INDEX, Color, ColorList
from openpyxl.styles.numbers import builtin_format_code
from openpyxl.utils.cell import column_index_from_string, coordinate_to_tuple, range_boundaries
from openpyxl.utils.datetime import from_ISO8601
from xlfmt import format_value

from agentread.readers.office import member
from agentread.readers.office.document import WHITE, hex_colour, unseen_colour

MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_RELATIONSHIPS = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
_CONTENT_TYPES = "{http://schemas.openxmlformats.org/package/2006/content-types}"
_WORKBOOK_TYPES = ("spreadsheetml.sheet.main+xml", "spreadsheetml.template.main+xml",
                   "ms-excel.sheet.macroEnabled.main+xml", "ms-excel.template.macroEnabled.main+xml")
_RELATIONSHIP_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_THREADS = "{http://schemas.microsoft.com/office/spreadsheetml/2018/threadedcomments}"
_DRAWING = "{http://schemas.openxmlformats.org/drawingml/2006/main}"

# The workbook's small parts are parsed whole; no entity is expanded and nothing is fetched.
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True)

# Bytes of sheet XML inflated and scanned at a time.
SCAN_CHUNK = 1 << 20

# Bytes kept from the end of one chunk to be scanned again with the next: more than the longest tag
# or cell a match needs (a shared formula's cell is a formula and a value, well under this).
CARRY_BYTES = 8192

# The root tag and <dimension> come first in a sheet; they are looked for this far.
HEAD_BYTES = 1 << 16

_ROOT = re.compile(rb"<(?:\w+:)?worksheet\b[^>]*>")
_DIMENSION = re.compile(rb'<(?:\w+:)?dimension\s[^>]*\bref="([A-Z]+\d+(?::[A-Z]+\d+)?)"')
_MERGE = re.compile(rb'<(?:\w+:)?mergeCell\s+ref="([A-Z]+\d+(?::[A-Z]+\d+)?)"')
_COLUMN = re.compile(rb"<(?:\w+:)?col\s[^>]*>")
_ROW = re.compile(rb"<((?:\w+:)?)row\b([^>]*)>")
_ROW_NUMBER = re.compile(rb'\sr="(\d+)"')
_SHARED_MASTER = re.compile(rb'<(?:\w+:)?f\s(?=[^>]*\bt="shared")(?=[^>]*\bref=)[^>]*\bsi="(\d+)"[^>]*>')
_CELL_START = re.compile(rb"<(?:\w+:)?c\s")
_CELL_END = re.compile(rb"</(?:\w+:)?c>")


def _blocks(xml: BinaryIO) -> Iterator[tuple[bytes, int, int]]:
    """(block, keep, base): each chunk after the carried tail of the one before; a match
    starting at or past `keep` is left for the next block (it may be cut); `base` is the block's
    offset in the stream."""
    tail, base = b"", 0
    while True:
        chunk = xml.read(SCAN_CHUNK)
        block = tail + chunk
        keep = len(block) - CARRY_BYTES if chunk else len(block)
        yield block, keep, base
        if not chunk:
            return
        cut = max(keep, 0)
        tail, base = block[cut:], base + cut


def declared_dimension(xml: BinaryIO) -> str | None:
    """The range a sheet declares (`A1:D120`), which some writers leave out or get wrong."""
    match = _DIMENSION.search(xml.read(HEAD_BYTES))
    return match.group(1).decode() if match else None


def merged_ranges(xml: BinaryIO) -> list[str]:
    return [m.group(1).decode() for block, keep, _ in _blocks(xml)
            for m in _MERGE.finditer(block) if m.start() < keep]


def hidden_columns(xml: BinaryIO) -> list[tuple[int, int]]:
    """The runs of columns (first, last) the sheet hides, from its column list, which comes before
    its cells (a list past HEAD_BYTES is not looked at)."""
    head = xml.read(HEAD_BYTES)
    head = head[:head.find(b"sheetData")] if b"sheetData" in head else head
    runs = []
    for match in _COLUMN.finditer(head):
        tag = match.group(0)
        low, high = _attribute(tag, b"min"), _attribute(tag, b"max")
        if _attribute(tag, b"hidden") in (b"1", b"true") and low.isdigit() and high.isdigit():
            runs.append((int(low), int(high)))
    return runs


def _attribute(tag: bytes, name: bytes) -> bytes:
    match = re.search(rb"\s" + name + rb'="([^"]*)"', tag)
    return match.group(1) if match else b""


def open_from_row(xml: BinaryIO, start: int) -> BinaryIO | None:
    """The sheet from its first row numbered `start` or more, or None where that cannot be found
    from the bytes (a row without its number, an unexpected layout): the caller then parses the
    sheet from its start."""
    head = b""
    masters: dict[bytes, bytes] = {}  # shared formula id → its master cell, which later cells refer to
    for block, keep, base in _blocks(xml):
        if not head:
            head = block[:HEAD_BYTES]
        for match in _ROW.finditer(block):
            if match.start() >= keep:
                break  # seen whole in the next block
            number = _ROW_NUMBER.search(match.group(2))
            if number is None:
                return None
            if int(number.group(1)) >= start:
                _collect_masters(block, masters, match.start())
                return _document(head, match.group(1), masters, start, block[match.start():], xml)
        _collect_masters(block, masters, keep)
    return _document(head, b"", masters, start, b"", xml) if head else None


def _collect_masters(block: bytes, masters: dict[bytes, bytes], before: int) -> None:
    """The shared formula masters whose tag starts before `before` (a cell may end past it)."""
    if b'"shared"' not in block:
        return
    for match in _SHARED_MASTER.finditer(block):
        if match.start() >= before:
            break
        begin = block.rfind(b"<", 0, match.start())
        end = _CELL_END.search(block, match.end())
        if begin >= 0 and _CELL_START.match(block, begin) and end:
            masters[match.group(1)] = block[begin:end.end()]


def _document(head: bytes, prefix: bytes, masters: dict[bytes, bytes], start: int, rest: bytes,
              xml: BinaryIO) -> BinaryIO | None:
    root = _ROOT.search(head)
    if root is None:
        return None
    # The masters ride in a row numbered just before the window: the parser learns them, the
    # reader skips it.
    carrier = (b'<%srow r="%d">%s</%srow>' % (prefix, start - 1, b"".join(masters.values()), prefix)
               if masters else b"")
    opening = b'<?xml version="1.0" encoding="UTF-8"?>' + root.group(0) + b"<%ssheetData>" % prefix + carrier
    if not rest:  # no row from `start` on: an empty sheet body
        xml.close()
        root_name = re.match(rb"<((?:\w+:)?worksheet)", root.group(0)).group(1)
        return io.BytesIO(opening + b"</%ssheetData></%s>" % (prefix, root_name))
    return _Joined(opening + rest, xml)


class _Joined(io.RawIOBase):
    """`first`, then the rest of `stream`: a file object a streaming parser can read."""

    def __init__(self, first: bytes, stream: BinaryIO):
        self.first = first
        self.stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self.first[:len(buffer)] if self.first else self.stream.read(len(buffer))
        self.first = self.first[len(data):]
        buffer[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self.stream.close()
        super().close()


# --- the workbook
# -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Sheet:
    name: str
    state: str  # visible, hidden or veryHidden
    part: str | None  # the sheet's XML in the zip; None for a chart sheet, which has no cells
    notes: str | None = None  # its notes' part (Excel's comments before threads), if any
    threads: str | None = None  # its threaded comments' part, if any
    chartsheet: str | None = None  # a chart sheet's XML, which names its chart's drawing
    tables: tuple[str, ...] = ()  # its Excel tables' parts, whose styles draw fills no cell style states


@dataclass(frozen=True)
class Book:
    sheets: list[Sheet]
    strings: list[str]
    formats: dict[int, str]  # cell style (index) → its number format's code, for styles not General
    date1904: bool  # the calendar of old Macs: day 0 is 1904-01-01
    persons: dict[str, str]  # a threaded comment's author id → the name Excel shows
    # cell style (index) → why a cell of that style is not seen (hidden.passage's `why`), for the
    # styles whose font is drawn in the colour of the cell under it
    unseen: dict[int, str] = field(default_factory=dict)
    unfilled: frozenset[int] = frozenset()  # those of them judged on no fill (white)


# Number formats Excel draws in the locale of whoever opens the file (the short date, the date and
# time): shown in ISO 8601, which every reader takes the same way.
LOCALE_FORMATS = {14: "yyyy-mm-dd", 22: "yyyy-mm-dd hh:mm"}

# The longest number format Excel accepts; a longer code in a file is no format Excel would draw,
# and its cells show their values as General does.
MAX_FORMAT_CHARS = 255


def read_book(archive: zipfile.ZipFile) -> Book:
    """The workbook's sheets, shared strings, number formats and comment authors: every part but
    the sheets themselves."""
    main = _main_part(archive)
    present = set(archive.namelist())
    # A part listed but missing from the zip is left out, as openpyxl does (a sheet without its part
    # is not listed; a workbook without styles has no number formats).
    related = {rel_id: (kind, target) for rel_id, kind, target in relationships(archive, main) if target in present}
    first = {}  # the first part of each kind (styles, sharedStrings, person)
    for kind, target in related.values():
        first.setdefault(kind, target)
    root = etree.fromstring(archive.read(main), _PARSER)
    sheets = []
    for entry in root.iter(f"{MAIN}sheet"):
        kind, target = related.get(entry.get(_RELATIONSHIP_ID), (None, None))
        if kind == "worksheet":
            related_parts = [(kind, part) for _, kind, part in relationships(archive, target) if part in present]
            own = dict(related_parts)
            sheets.append(Sheet(entry.get("name", ""), entry.get("state", "visible"), target, own.get("comments"),
                                own.get("threadedComment"),
                                tables=tuple(part for kind, part in related_parts if kind == "table")))
        elif kind is not None:
            sheets.append(Sheet(entry.get("name", ""), entry.get("state", "visible"), None,
                                chartsheet=target if kind == "chartsheet" else None))
    properties = root.find(f"{MAIN}workbookPr")
    mac = properties is not None and properties.get("date1904") in ("1", "true")
    strings = []
    if "sharedStrings" in first:
        with archive.open(first["sharedStrings"]) as xml:
            strings = read_string_table(xml)
    persons = {}
    if "person" in first:
        for person in etree.fromstring(archive.read(first["person"]), _PARSER).iter(f"{_THREADS}person"):
            persons[person.get("id", "")] = person.get("displayName", "")
    styles = etree.fromstring(archive.read(first["styles"]), _PARSER) if "styles" in first else None
    theme = _theme_colours(archive, first["theme"]) if "theme" in first else {}
    unseen, unfilled = _unseen_styles(styles, theme)
    return Book(sheets, strings, _number_formats(styles), mac, persons, unseen, unfilled)


def _main_part(archive: zipfile.ZipFile) -> str:
    """The workbook part: as the content types name it (where Excel and openpyxl look), else as
    the package's relationships do, else where every writer puts it. A damaged list is passed over
    for the next. Every part is named as the zip stores it (`member`)."""
    listed = member(archive, "[Content_Types].xml")
    try:
        types = etree.fromstring(archive.read(listed), _PARSER) if listed else None
    except etree.XMLSyntaxError:
        types = None
    for override in types.iter(f"{_CONTENT_TYPES}Override") if types is not None else ():
        if override.get("ContentType", "").endswith(_WORKBOOK_TYPES):
            name = override.get("PartName", "").lstrip("/")
            return member(archive, name) or name
    try:
        return next(target for _, kind, target in relationships(archive, "") if kind == "officeDocument")
    except (StopIteration, etree.XMLSyntaxError):
        return member(archive, "xl/workbook.xml") or "xl/workbook.xml"


def relationships(archive: zipfile.ZipFile, part: str) -> list[tuple[str, str, str]]:
    """(id, kind, target part) of each relationship of `part` within the zip; the kind is the last
    word of its type (officeDocument, worksheet, styles...). A target is named as the zip stores
    it, where it differs only in case (`member`)."""
    folder, name = posixpath.split(part)
    stored = member(archive, posixpath.join(folder, "_rels", f"{name}.rels"))
    if stored is None:
        return []
    out = []
    for rel in etree.fromstring(archive.read(stored), _PARSER).iter(_RELATIONSHIPS):
        target = rel.get("Target", "")
        if rel.get("TargetMode") != "External":
            target = target[1:] if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
            out.append((rel.get("Id"), rel.get("Type", "").rsplit("/", 1)[-1], member(archive, target) or target))
    return out


def _number_formats(root) -> dict[int, str]:
    if root is None:
        return {}
    custom = {fmt.get("numFmtId"): fmt.get("formatCode", "") for fmt in root.iter(f"{MAIN}numFmt")}
    formats = {}
    styles = root.find(f"{MAIN}cellXfs")
    for index, style in enumerate(styles.iterchildren(f"{MAIN}xf") if styles is not None else ()):
        number = style.get("numFmtId", "0")
        builtin = int(number) if number.isdigit() else None
        code = format_code(builtin, custom.get(number) or (builtin_format_code(builtin) if builtin else None))
        if code:
            formats[index] = code
    return formats


def format_code(number: int | None, code: str | None) -> str | None:
    """The code a cell of number format `number` (whose code the file gives as `code`) is drawn
    with, or None for General and a code no Excel would draw."""
    code = LOCALE_FORMATS.get(number) or code
    return code if code and code != "General" and len(code) <= MAX_FORMAT_CHARS else None


# --- the colours of a cell's text and of the cell under it

# A cell style's theme colour (its `theme` index) is the theme's colour in this order: the theme
# lists dark 1, light 1, dark 2, light 2, which a sheet's index takes light first.
THEME_ORDER = ("lt1", "dk1", "lt2", "dk2", "accent1", "accent2", "accent3", "accent4", "accent5", "accent6",
               "hlink", "folHlink")


def _theme_colours(archive: zipfile.ZipFile, part: str) -> dict[int, str]:
    """A theme part's colours by a cell style's theme index: an RGB, or a system colour as last
    saved; none where the part is damaged (its colours are then not judged)."""
    try:
        scheme = etree.fromstring(archive.read(part), _PARSER).find(f"{_DRAWING}themeElements/{_DRAWING}clrScheme")
    except etree.XMLSyntaxError:
        return {}
    named = {}
    for entry in scheme if scheme is not None else ():
        for colour in entry:
            value = colour.get("val") if colour.tag == f"{_DRAWING}srgbClr" else colour.get("lastClr")
            if rgb := hex_colour(value):
                named[etree.QName(entry).localname] = rgb
    return {index: named[name] for index, name in enumerate(THEME_ORDER) if name in named}


def _unseen_styles(root, theme: dict[int, str]) -> tuple[dict[int, str], frozenset[int]]:
    """The cell styles (cellXfs index) whose font colour is the colour under the cell, with why:
    its solid fill, or white where it has no fill (those styles also given apart); a style with
    any other pattern or a gradient, or a colour that cannot be resolved (automatic, a system
    colour), is not judged."""
    if root is None:
        return {}, frozenset()
    listed = root.find(f"{MAIN}colors")
    try:
        palette = (ColorList.from_tree(listed).index if listed is not None else None) or COLOR_INDEX
    except (TypeError, ValueError):  # a damaged palette: Excel's own
        palette = COLOR_INDEX
    fonts = [_resolved(font.find(f"{MAIN}color"), theme, palette) for font in root.iterfind(f"{MAIN}fonts/{MAIN}font")]
    fills = [_under(fill, theme, palette) for fill in root.iterfind(f"{MAIN}fills/{MAIN}fill")]
    unseen, unfilled = {}, set()
    for index, style in enumerate(root.iterfind(f"{MAIN}cellXfs/{MAIN}xf")):
        font, fill = (_listed(items, style.get(name)) for items, name in ((fonts, "fontId"), (fills, "fillId")))
        if font and fill and fill[0] and (why := unseen_colour(font, fill[0], "in the cell's colour")):
            unseen[index] = why
            if not fill[1]:
                unfilled.add(index)
    return unseen, frozenset(unfilled)


def table_range(archive: zipfile.ZipFile, part: str) -> tuple[int, int, int, int] | None:
    """The cells an Excel table covers (its `ref`), as left, top, right, bottom; None where it
    names none."""
    try:
        left, top, right, bottom = range_boundaries(etree.fromstring(archive.read(part), _PARSER).get("ref") or "")
    except (TypeError, ValueError, etree.XMLSyntaxError):
        return None
    return (left, top, right, bottom) if None not in (left, top, right, bottom) else None


def _listed(items: list, index: str | None):
    return items[int(index)] if index and index.isdigit() and int(index) < len(items) else None


def _under(fill, theme: dict[int, str], palette: list[str]) -> tuple[str | None, bool]:
    """The colour a fill draws under a cell's text, and whether it is a fill: (white, False) for
    none, a solid pattern's colour; None where it is not one colour."""
    pattern = fill.find(f"{MAIN}patternFill")
    if pattern is None:  # a gradient
        return None, True
    kind = pattern.get("patternType", "none")
    if kind == "none":
        return WHITE, False
    return (_resolved(pattern.find(f"{MAIN}fgColor"), theme, palette) if kind == "solid" else None), True


def _resolved(element, theme: dict[int, str], palette: list[str]) -> str | None:
    """A style's colour element as six hex digits (its tint applied), or None where it is
    automatic, a system colour, or missing."""
    if element is None:
        return None
    try:
        colour = Color.from_tree(element)
    except (TypeError, ValueError):  # a value that is not a colour
        return None
    if colour.type == "rgb":
        rgb = hex_colour(colour.rgb[-6:]) if isinstance(colour.rgb, str) else None
    elif colour.type == "theme":
        rgb = theme.get(colour.theme)
    elif colour.type == "indexed" and 0 <= colour.indexed < len(palette):
        rgb = hex_colour(str(palette[colour.indexed])[-6:])
    else:
        rgb = None
    return _tinted(rgb, colour.tint) if rgb and colour.tint else rgb


def _tinted(rgb: str, tint: float) -> str:
    """`rgb` lightened (a positive tint) or darkened (a negative one) as a style's tint says: its
    luminance moved that fraction of the way to white or to black."""
    hue, light, saturation = colorsys.rgb_to_hls(*(int(rgb[i:i + 2], 16) / 255 for i in (0, 2, 4)))
    light = light * (1 + tint) if tint < 0 else light * (1 - tint) + tint
    return "".join(f"{round(min(max(c, 0), 1) * 255):02X}" for c in colorsys.hls_to_rgb(hue, light, saturation))


# --- a sheet's rows
# -----------------------------------------------------------------------------------------

_REF = re.compile(r"([A-Z]{1,3})(\d+)$")


class Row(NamedTuple):
    number: int
    cells: dict[int, tuple[Value | str, str | None]]  # column → (what Excel shows, its formula or None)
    hidden: bool  # hidden in Excel (the reader shows it, and says so)
    unseen: dict[int, str]  # column → why its cell's style keeps its text from sight (hidden.passage's `why`)


def sheet_rows(xml: BinaryIO, book: Book, tables: Sequence[tuple[int, int, int, int]] = ()) -> Iterator[Row]:
    """Each row the sheet holds, in order; empty rows are not written by most writers and not
    given here. A cell's text is the value Excel last computed as its number format shows it ("" if
    it never computed one); its formula is its text (`=A2*2`), a shared formula's translated to its
    cell. A cell whose style has no fill is not judged on white inside `tables` (their ranges as
    left, top, right, bottom), whose styles fill it."""
    shared: dict[str, Translator] = {}  # a shared formula's id → its master's formula, to translate
    number = given = 0
    for _, row in etree.iterparse(xml, events=("end",), tag=f"{MAIN}row", resolve_entities=False,
                                  no_network=True):
        number = _row_number(row.get("r"), number)
        cells: dict[int, tuple[Value | str, str | None]] = {}
        unseen: dict[int, str] = {}
        column = 0
        for cell in row.iterchildren(f"{MAIN}c"):
            ref = _REF.match(cell.get("r") or "")
            column = column_index_from_string(ref.group(1)) if ref else column + 1
            cells[column] = (_value(cell, book), _formula(cell, ref.group(0) if ref else None, shared))
            if book.unseen and (why := book.unseen.get(style := _style(cell))) and not (
                    style in book.unfilled and any(a <= column <= c and b <= number <= d for a, b, c, d in tables)):
                unseen[column] = why
        if number > given:  # a row repeated, or out of order, is not given again (nor by openpyxl)
            given = number
            yield Row(number, cells, row.get("hidden") in ("1", "true"), unseen)
        row.clear()  # a streamed sheet keeps no row it has given
        while row.getprevious() is not None:
            del row.getparent()[0]


def _row_number(r: str | None, previous: int) -> int:
    if r is None:
        return previous + 1  # a row without its number follows the one before, as in Excel
    number = float(r)
    if not number.is_integer():
        raise ValueError(f"{r} is not a row number")
    return int(number)


def _value(cell, book: Book) -> Value | str:
    kind = cell.get("t", "n")
    if kind == "inlineStr":
        text = cell.find(f"{MAIN}is")
        return "" if text is None else "".join(
            t.text or "" for t in text.iter(f"{MAIN}t") if t.getparent().tag != f"{MAIN}rPh")  # not phonetic
    value = cell.findtext(f"{MAIN}v") or None
    if value is None:
        return ""
    if kind == "s":
        value = book.strings[int(value)]
    elif kind == "b":
        value = bool(int(value))
    elif kind == "n":
        value = float(value) if any(c in value for c in ".Ee") else int(value)
    elif kind == "d":
        value = from_ISO8601(value)
    elif kind == "e":
        return value  # an error such as #DIV/0!, which no format changes
    return drawn(value, book.formats.get(_style(cell)), book.date1904)


def _style(cell) -> int:
    style = cell.get("s") or "0"
    return int(style) if style.isdigit() else -1


def drawn(value, code: str | None, date1904: bool) -> Value | str:
    """A cell's value as a sheet's row gives it: to be drawn under its number format `code` when
    shown, or its text under General."""
    return Value(value, code, date1904) if code else general(value)


class Value(NamedTuple):
    """A value under a number format, drawn when it is shown (`str`): a read draws the cells it
    shows, not every cell it parses."""

    value: object
    code: str
    date1904: bool

    def __str__(self) -> str:
        # A text is drawn afresh: one can be 32,767 characters, too many to keep thousands of.
        draw = shown if isinstance(self.value, str) else _kept
        return draw(self.value, self.code, self.date1904)


# Numbers and dates drawn under their formats, kept: a sheet's dates and repeated amounts are drawn
# once.
DRAWN_KEPT = 4096


def shown(value, code: str | None, date1904: bool = False) -> str:
    """A value as Excel draws it under number format `code`. General, and a format xlfmt cannot
    draw, show the value itself: a number in full (as Excel's formula bar shows it), a date in ISO
    8601."""
    if code is not None and not isinstance(value, bool):
        try:
            return str(format_value(value, code, date1904=date1904))
        except Exception:  # a format Excel would refuse; the value is still there to show
            pass
    return general(value)


_kept = functools.lru_cache(maxsize=DRAWN_KEPT, typed=True)(shown)  # typed: TRUE is not the number 1


def shows_nothing(value: Value | str) -> bool:
    """Whether a value's number format is made of empty sections (`;;;`, `;;` for a number) that
    draw nothing of it: its cell looks empty in Excel, though it holds a value. (A format that
    draws a zero as nothing, `#`, is a sheet's ordinary way to leave zeros out.)"""
    return (isinstance(value, Value) and not value.code.strip(" ;") and not str(value).strip()
            and bool(general(value.value).strip()))


def general(value) -> str:
    """A value as General draws it."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return str(value)


def _formula(cell, ref: str | None, shared: dict[str, Translator]) -> str | None:
    element = cell.find(f"{MAIN}f")
    if element is None or element.get("t") == "dataTable":  # a what-if table's cells show their values only
        return None
    text = "=" + (element.text or "")
    if element.get("t") == "shared":
        master = shared.get(element.get("si"))
        if master is not None and ref:
            return master.translate_formula(ref)
        if text != "=" and ref:
            shared[element.get("si")] = Translator(text, ref)
    return text if text != "=" else None


# --- a sheet's comments
# -------------------------------------------------------------------------------------------

def sheet_notes(archive: zipfile.ZipFile, book: Book, sheet: Sheet) -> dict[tuple[int, int], str]:
    """(row, column) → the comments on that cell as its table shows them after its value: a thread
    (`[comment, Ann: Is this right? — reply, Bob: Yes]`), else a note (`[note, Ann: text]`). Excel
    writes a note beside each thread for older versions to show; the thread is shown instead."""
    notes: dict[tuple[int, int], str] = {}
    if sheet.notes is not None:
        for ref, comment in CommentSheet.from_tree(etree.fromstring(archive.read(sheet.notes), _PARSER)).comments:
            if cell := _cell(ref):
                notes[cell] = note_text(comment.author, comment.text)
    if sheet.threads is not None:
        threads: dict[tuple[int, int], list[str]] = {}
        for entry in etree.fromstring(archive.read(sheet.threads), _PARSER).iter(f"{_THREADS}threadedComment"):
            author = book.persons.get(entry.get("personId", ""))
            said = "reply" if entry.get("parentId") else "comment"
            text = entry.findtext(f"{_THREADS}text") or ""
            if cell := _cell(entry.get("ref")):
                threads.setdefault(cell, []).append(f"{said}{f', {author}' if author else ''}: {text}")
        notes.update({cell: f"[{' — '.join(said)}]" for cell, said in threads.items()})
    return notes


def note_text(author: str | None, text: str) -> str:
    """A note as its cell's table shows it after the cell's value; an author that is only white
    space (LibreOffice writes one space in an .xls note) names no one and is left out."""
    author = (author or "").strip()
    return f"[note{f', {author}' if author else ''}: {text}]"


def _cell(ref: str | None) -> tuple[int, int] | None:
    """(row, column) of a comment's cell; None for a reference that names no cell, which no table
    row could show."""
    try:
        cell = coordinate_to_tuple(ref) if ref else None
    except ValueError:
        return None
    return cell if cell and cell[0] >= 1 else None
