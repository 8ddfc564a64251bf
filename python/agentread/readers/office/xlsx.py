"""XLSX: one section per sheet, its cells as pipe-table rows led by the sheet's own row numbers.

    --- Sheet 1 "Budget" (120 rows × 4 columns, A1:D120) ---
    Merged cells: A1:D1
    | row | A | B | C | D |
    | --- | --- | --- | --- | --- |
    | 1 | Budget 2024 |  |  |  |
    | 17 | Rent | 1200 | =B17*12 → 14400 |  |

A cell is cited as column letter and row number (C17). Its value shows as its number format draws it
($1,234.50, 12.5%, 5 Mar 2024), then its comments; a formula shows its text and the value Excel last
computed (`→`); a workbook never computed by Excel has no such value and shows the formula alone.
Empty rows are left out (the numbers say where); what Excel hides is shown, and the header says so;
a cell Excel keeps from sight (a hidden sheet, row or column, a format that draws nothing, a font in
the cell's colour) is marked as a hidden passage (`hiding`).

Addressing: `pages` picks sheets ("2", "2-3", "3-", or a sheet's name); `offset` is the first row of
the first sheet shown and `limit` the number of rows (row numbers, not lines). Without `pages`,
every sheet in order. `range` instead reads one block of one sheet ("Data!B2:F40"), every call that
goes on naming what is left of it. A read stops at the per-call budget; `next` says where to
continue, e.g. {pages: "2-3", offset: 2001}, {range: "Data!B41:F90"}.

A cell over MAX_CELL_CHARS, or a row over MAX_LINE_CHARS, is cut with a marker naming the call that
shows it whole: `column` is then a sheet column (A = 1), and a read with it shows row `offset`'s
cells from that column on, one a line and each whole ({pages: "1", offset: 17, column: 3} shows
C17 whole). A read that cut something is truncated and its `next` is the first cut; the cell read's
`next` goes on with the rows after it.

Sheets are streamed row by row (sheetxml.py): a 1,000,000-row sheet costs the memory of the rows
shown, and one pass gives each cell's value and formula. Opening the workbook parses its small
parts only (sheet list, strings, styles), never a sheet. A read from a deep row starts the parse
at that row's bytes, and a sheet's extent is taken from its declaration alone, never by parsing
the whole sheet.

The table, its addressing, outline and search take any Workbook (below): xls.py reads Excel 97-2003
workbooks through them.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterator, Protocol

from openpyxl.utils.cell import range_boundaries

from agentread.cancel import checkpoint
from agentread.find import Hit, Matcher, Reached, Unit, call, hits_in
from agentread.hidden import passage
from agentread.limits import MAX_LINE_CHARS
from agentread.numbering import amount, fitting, output_limit_reason, past_end, span
from agentread.outline import Entry, outline_result
from agentread.readers.office.charts import sheet_charts
from agentread.readers.office.document import MAX_CELL_CHARS, cell_text, column_letters, pipe_row, select_sections
from agentread.readers.office.sheetxml import (
    Book,
    Row,
    Sheet,
    Value,
    declared_dimension,
    general,
    hidden_columns,
    merged_ranges,
    open_from_row,
    read_book,
    sheet_notes,
    sheet_rows,
    shows_nothing,
    table_range,
)
from agentread.request import InvalidParams, ReadRequest, quoted
from agentread.result import ReadError, ReadResult, TextPart

# Columns shown per row. Past this a row is no longer a line a model reads as a row; the section
# header says how many columns there are and the reader can be asked for a CSV export instead.
MAX_COLUMNS = 100

# Merged ranges listed per sheet; a sheet merging thousands of cells (a formatted report)
# lists the first.
MAX_MERGES_LISTED = 50

# Runs of hidden rows, and of hidden columns, a sheet's header lists; past them it counts the rest.
MAX_HIDDEN_RUNS = 50

# Rows of a sheet an outline reads to find its used range: the declared one (<dimension>) is not
# trusted, and a sheet of millions of rows must not hold up the outline.
MAX_OUTLINE_ROWS = 100_000

# Cells of a sheet's header row named in its outline entry: enough to know what the columns hold.
MAX_HEADER_CELLS = 20

# Room kept for the closing line (where the read stopped, how to continue).
CLOSING_RESERVE_BYTES = 400
# Room kept in a cut row's line for its marker (the call that reads on, all ASCII).
ROW_MARKER_CHARS = 100
# Kept beside a cell cut to fit a reply for the numbers its marker names (where it was cut).
MARKER_DIGITS_BYTES = 24



class Workbook(Protocol):
    """A workbook as the sheet reader reads it, whatever its file format: its sheets (each with
    `name`, `state` and `part`, None for a chart sheet) and, by sheet, its rows from a row on (each
    cell's text as its number format draws it, and its formula), its declared rows and columns, its
    merged ranges, its comments by (row, column), the runs of columns it hides, and the lines that
    describe its charts. A format that has none of these gives none."""

    sheets: list

    def rows(self, sheet, start: int) -> Iterator[Row]: ...

    def declared(self, sheet) -> tuple[int, int]: ...

    def merges(self, sheet) -> list[str]: ...

    def notes(self, sheet) -> dict[tuple[int, int], str]: ...

    def hidden_columns(self, sheet) -> list[tuple[int, int]]: ...

    def charts(self, sheet, reply_bytes: int) -> list[str]: ...


def read_xlsx(data: bytes, request: ReadRequest, path: str) -> ReadResult:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        book = _Zipped(archive, read_book(archive))
        if not book.sheets:
            raise ReadError("damaged_office", f"{path} is a damaged XLSX file: it lists no sheet whose part it "
                            "holds. Try another copy of the file.")
        return read_workbook(book, request, path)


def read_workbook(book: Workbook, request: ReadRequest, path: str) -> ReadResult:
    """The sheets and rows (or the range) the request asks for, of a workbook holding at least one
    sheet."""
    if request.from_end:  # a sheet's last row is known only by reading all of it (its <dimension> is not trusted)
        raise ReadError("offset_from_end", f"offset {request.offset} counts rows from the end, which sheets do not "
                        "support. Call without an offset to read a sheet from its first row (the result says how "
                        "many rows it has), then offset=N to read from its row N.")
    names = [sheet.name for sheet in book.sheets]
    if request.char is not None and request.column is None:
        raise InvalidParams("'char' reads on inside one cell: pass it with `column` (the cell's sheet column) "
                            "and `offset` (its row), as a cut cell's `next` does")
    if request.range is not None:
        area = parse_range(request, names)
        reader = _Reader(book, request, path, area)
        if request.column is not None:
            return reader.cells(area.sheet, area.sheet, area.top, request.column, request.char or 1)
        reader.sheet(area.sheet, book.sheets[area.sheet - 1], area.top, str(area.sheet))
        return reader.result()
    first, last = select_sections(request.pages, len(names), "sheet", names)
    reader = _Reader(book, request, path)
    if request.column is not None:
        return reader.cells(first, last, request.first_line, request.column, request.char or 1)
    for number in range(first, last + 1):
        start = request.first_line if number == first else 1
        if not reader.sheet(number, book.sheets[number - 1], start, span(number, last)):
            break
    return reader.result()


# Excel's grid: a range past it names no cell.
EXCEL_ROWS = 1_048_576
EXCEL_COLUMNS = 16_384

# A sheet name a range names without quotes, as Excel writes it; any other is quoted ('My Sheet').
BARE_SHEET_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")

RANGE_FORMS = ('an A1 range of one sheet: "B2:F40" (of the first sheet), "Data!B2:F40", "\'My Sheet\'!B2:F40", a cell '
               '"B2", whole columns "B:D" or whole rows "2:5"')


@dataclass(frozen=True)
class Area:
    """A range of one sheet (`range`): its sheet's number and name, its first and last columns and
    rows."""

    sheet: int
    name: str
    left: int
    top: int
    right: int
    bottom: int

    def rest(self, row: int) -> str:
        """The range from row `row` on, as `range` takes it: how a read of it goes on."""
        name = self.name if BARE_SHEET_NAME.fullmatch(self.name) else "'" + self.name.replace("'", "''") + "'"
        return f"{name}!{column_letters(self.left)}{row}:{column_letters(self.right)}{self.bottom}"


def parse_range(request: ReadRequest, names: list[str]) -> Area:
    """The `range` asked for, or InvalidParams saying what a range is (and, for a sheet not in the
    workbook, which sheets are)."""
    given = request.range
    if request.pages is not None or request.offset is not None:
        raise InvalidParams(f"'range' names its sheet and rows: call with range={quoted(given)} alone (and `limit` for "
                            "fewer rows), without pages or offset")
    sheet, bang, cells = given.rpartition("!")
    if bang and len(sheet) > 1 and sheet[0] == sheet[-1] == "'":
        sheet = sheet[1:-1].replace("''", "'")
    if bang and sheet not in names:
        listed = ", ".join(repr(name) for name in names)
        raise InvalidParams(f"'range' names sheet {quoted(sheet)}, which the workbook does not hold; its sheets are "
                            f"{listed}; send {RANGE_FORMS}")
    try:
        left, top, right, bottom = range_boundaries(cells.replace(" ", "").upper())
    except (ValueError, TypeError):
        raise InvalidParams(f"'range' must be {RANGE_FORMS}; got {quoted(given)}") from None
    left, right = (1, EXCEL_COLUMNS) if left is None else (min(left, right), max(left, right))
    top, bottom = (1, EXCEL_ROWS) if top is None else (min(top, bottom), max(top, bottom))
    if not (1 <= left and right <= EXCEL_COLUMNS and 1 <= top and bottom <= EXCEL_ROWS):
        raise InvalidParams(f"'range' {quoted(given)} goes past Excel's grid (columns A to XFD, rows 1 to "
                            f"{EXCEL_ROWS:,}); send {RANGE_FORMS}")
    number = names.index(sheet) + 1 if bang else 1
    return Area(number, names[number - 1], left, top, right, bottom)


def search_xlsx(data: bytes, request: ReadRequest, matcher: Matcher) -> tuple[str, Iterator[Hit | Reached]]:
    def units() -> Iterator[Unit]:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            yield from cell_units(_Zipped(archive, read_book(archive)), request)

    return search_workbook(units(), matcher)


def search_workbook(units: Iterator[Unit], matcher: Matcher) -> tuple[str, Iterator[Hit | Reached]]:
    """Each cell of the sheets asked for as its table shows it (uncut), cited by sheet and cell: one
    hit a cell. `offset` is the first row searched and `column` its first column (A is 1)."""
    return "spreadsheet", hits_in(units, matcher, first_only=True)


def cell_units(book: Workbook, request: ReadRequest) -> Iterator[Unit]:
    names = [sheet.name for sheet in book.sheets]
    first, last = select_sections(request.pages, len(names), "sheet", names)
    for number in range(first, last + 1):
        start = request.first_line if number == first else 1
        why = hiding(book, book.sheets[number - 1])
        for parsed, line in enumerate(noted_rows(book, book.sheets[number - 1], start), 1):
            if parsed % 1000 == 0:
                checkpoint()
            row, cells = line.number, line.cells
            if row < start:
                continue
            for column, cell in sorted(cells.items()):
                if number == first and row == request.first_line and column < (request.column or 1):
                    continue
                text = _marked(_whole(*cell), why(line, column))
                # A cell the table cuts is read alone, from the part of it that holds the hit.
                whole = {"column": column} if len(text) > MAX_CELL_CHARS else {}
                yield Unit(text, {"sheet": names[number - 1], "cell": f"{column_letters(column)}{row}"},
                           {"pages": str(number), "offset": row, "limit": 1, **whole},
                           {"pages": span(number, last), "offset": row, "column": column},
                           reads_on="char" if whole else None)


def outline_xlsx(data: bytes, request: ReadRequest, path: str) -> ReadResult:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return outline_workbook(_Zipped(archive, read_book(archive)), request, path)


def outline_workbook(book: Workbook, request: ReadRequest, path: str) -> ReadResult:
    """One entry a sheet: its used range (its cells found, up to MAX_OUTLINE_ROWS rows) and its
    header row (its first row holding a value)."""
    entries = []
    for number, sheet in enumerate(book.sheets, 1):
        checkpoint()
        entries.append(_sheet_entry(book, number, sheet))
    header = (f"[Outline of {path}: {len(entries):,} sheet{'' if len(entries) == 1 else 's'}, each with its used "
              "range and its first row holding a value. Read one with the arguments after \"→\" (offset=N starts "
              "at its row N).]")
    return outline_result(entries, request, path, "spreadsheet", header, total_pages=len(entries))


def _sheet_entry(book: Workbook, number: int, sheet) -> Entry:
    hidden = "" if sheet.state == "visible" else f", {sheet.state}"
    if sheet.part is None:
        return Entry(0, f'Sheet {number} "{sheet.name}"', f"a chart sheet, no cells{hidden}", {"pages": str(number)})
    first = None
    rows = top = left = right = 0
    for rows, line in enumerate(book.rows(sheet, 1), 1):
        row, cells = line.number, line.cells
        if rows % 1000 == 0:
            checkpoint()
        if not cells:
            continue
        first = first or line
        top, left, right = top or row, min(left or 1 << 30, min(cells)), max(right, max(cells))
        bottom = row
        if rows >= MAX_OUTLINE_ROWS:
            break
    if first is None:
        where = "no cells"
    elif rows >= MAX_OUTLINE_ROWS:
        where = (f"used range from {column_letters(left)}{top}, over {MAX_OUTLINE_ROWS:,} rows (the outline looks no "
                 f"further; row {bottom:,} holds values)")
    else:
        where = f"used range {column_letters(left)}{top}:{column_letters(right)}{bottom}"
    if first is not None:
        row, cells = first.number, first.cells
        why = hiding(book, sheet)  # a cell kept from sight shows marked, as in the table (not counted)
        shown = [f"{column_letters(c)}={_marked(cell_text(_show(*cells[c])), why(first, c))}"
                 for c in sorted(cells)[:MAX_HEADER_CELLS]]
        more = f" and {len(cells) - MAX_HEADER_CELLS:,} more" if len(cells) > MAX_HEADER_CELLS else ""
        where += f"; header row {row}: {', '.join(shown)}{more}"
    return Entry(0, f'Sheet {number} "{sheet.name}"', where + hidden, {"pages": str(number)})


class _Zipped:
    """An XLSX workbook (a Workbook): its sheets' XML streamed from the zip."""

    def __init__(self, archive: zipfile.ZipFile, book: Book):
        self.archive, self.book, self.sheets = archive, book, book.sheets

    def declared(self, sheet: Sheet) -> tuple[int, int]:
        """Rows and columns the sheet declares, from its first bytes (0, 0 where it
        declares none)."""
        if sheet.part is None:
            return 0, 0
        with self.archive.open(sheet.part) as xml:
            ref = declared_dimension(xml)
        if not ref:
            return 0, 0
        _, _, columns, rows = range_boundaries(ref)
        return rows or 0, columns or 0

    def rows(self, sheet: Sheet, start: int) -> Iterator[Row]:
        """The sheet's rows, parsed from row `start` on where the bytes tell where it begins."""
        if sheet.part is None:  # a chart sheet
            return
        xml = self.archive.open(sheet.part)
        try:
            if start > 1:
                skipped = open_from_row(xml, start)
                if skipped is None:
                    xml.close()
                    xml = self.archive.open(sheet.part)
                else:
                    xml = skipped
            tables = [area for part in sheet.tables if (area := table_range(self.archive, part))]
            yield from sheet_rows(xml, self.book, tables)
        finally:
            xml.close()

    def merges(self, sheet: Sheet) -> list[str]:
        """Merged ranges of a sheet, scanned from its XML (they come after its cells)."""
        if sheet.part is None:
            return []
        with self.archive.open(sheet.part) as xml:
            return merged_ranges(xml)

    def notes(self, sheet: Sheet) -> dict[tuple[int, int], str]:
        return sheet_notes(self.archive, self.book, sheet)

    def hidden_columns(self, sheet: Sheet) -> list[tuple[int, int]]:
        if sheet.part is None:
            return []
        with self.archive.open(sheet.part) as xml:
            return hidden_columns(xml)

    def charts(self, sheet: Sheet, reply_bytes: int) -> list[str]:
        return sheet_charts(self.archive, sheet.part or sheet.chartsheet, reply_bytes)


def noted_rows(book: Workbook, sheet, start: int) -> Iterator[Row]:
    """The sheet's rows from row `start` on (and any the parse gives before it), each cell (text,
    formula, comments); a cell holding only a comment is given too."""
    notes: dict[int, dict[int, str]] = {}  # row → column → its comments
    for (row, column), note in book.notes(sheet).items():
        notes.setdefault(row, {})[column] = note
    pending = deque(sorted(row for row in notes if row >= start))  # rows whose comments are still to give
    for row in book.rows(sheet, start):
        while pending and pending[0] < row.number:
            yield _noted(Row(pending.popleft(), {}, False, {}), notes)
        if pending and pending[0] == row.number:
            pending.popleft()
        yield _noted(row, notes)
    for number in pending:
        yield _noted(Row(number, {}, False, {}), notes)


def hiding(book: Workbook, sheet) -> Callable[[Row, int], str | None]:
    """Why a cell of `sheet` (its row, its column) is kept from a person's sight, for
    hidden.passage, or None where it is seen: the one place the reasons are decided, for every
    view of a cell (the table, a cell read whole, a search)."""
    columns = book.hidden_columns(sheet)

    def why(row: Row, column: int) -> str | None:
        if sheet.state != "visible":
            return "in sheets Excel hides"
        if row.hidden:
            return "in rows Excel hides"
        if any(first <= column <= last for first, last in columns):
            return "in columns Excel hides"
        cell = row.cells.get(column)
        if cell is not None and shows_nothing(cell[0]):
            return "in a format that shows nothing"
        return row.unseen.get(column)
    return why


class _Reader:
    def __init__(self, book: Workbook, request: ReadRequest, path: str, area: Area | None = None):
        self.book = book
        self.request = request
        self.path = path
        self.area = area  # a read of a range: its bounds, and every call that goes on names what is left of it
        self.left, self.right = (area.left, area.right) if area else (1, EXCEL_COLUMNS)
        self.bottom = area.bottom if area else EXCEL_ROWS
        self.lines: list[str] = []
        self.used = 0
        self.rows_left = request.line_limit
        self.next: dict | None = None
        self.closing: str | None = None
        self.shown_sheets: list[int] = []
        self.shown_rows: list[int] | None = None  # of the last sheet listed, [first, last]
        self.showed_rows = False  # whether any sheet before showed a row
        self.cut: dict | None = None  # the cell read showing whole the first cell or row cut
        self.concealed: dict[str, int] = {}  # cells shown that Excel hides, by why (hidden.py)

    def _add(self, line: str) -> None:
        self.lines.append(line)
        self.used += len(line.encode("utf-8")) + 1

    def _at(self, remaining: str, row: int, column: int | None = None) -> dict:
        """The arguments that read on from `row` (its cells from `column`), of the sheets
        `remaining` or of the range."""
        where = {"range": self.area.rest(row)} if self.area else {"pages": remaining, "offset": row}
        return where | ({"column": column} if column is not None else {})

    def sheet(self, number: int, sheet: Sheet, start: int, remaining: str) -> bool:
        """Render sheet `number` from row `start`; False once the call's budget is spent.

        The extent a sheet declares (its <dimension>) is not trusted: some writers declare A1:A1 for
        a full sheet. Every row is read until the sheet ends or the budget does; the window's rows
        are held (they are what the call shows anyway) to size the table's header."""
        declared_rows, declared_cols = self.book.declared(sheet)
        rows: list[tuple[int, list[str], int]] = []  # row number, the cells shown, the row's cells
        hidden: list[int] = []  # the rows shown that Excel hides
        used = self.used
        stop = reason = None
        left = self.left
        last_column = min(self.right, left + MAX_COLUMNS - 1)
        why = hiding(self.book, sheet)
        for parsed, line in enumerate(noted_rows(self.book, sheet, start), 1):
            row_number, cells = line.number, line.cells
            if parsed % 1000 == 0:
                checkpoint()
            if row_number < start:  # the shared formulas the window refers to, or rows above it
                continue
            if row_number > self.bottom:  # a range's end, as a sheet's
                break
            if row_number - start >= self.rows_left:  # the next row of the sheet, written or empty
                stop, reason = start + self.rows_left, f"limit of {amount(self.request.line_limit, 'row')}"
                break

            def reads_on(column: int, row_number=row_number) -> str:
                return call(self._at(remaining, row_number, column))
            placed = range(left, min(max(cells, default=0), last_column) + 1)
            whys = [why(line, c) if c in cells else None for c in placed]
            shown = [_marked(_show(*cells[c], reads_on(c)), whys[i]) if c in cells else ""
                     for i, c in enumerate(placed)]
            while shown and not shown[-1]:
                shown.pop()
            if not shown:
                continue
            width = len(shown)
            room = self.request.output_bytes - CLOSING_RESERVE_BYTES
            # Only the call's first row is cut to the bytes left: later ones wait for the next call.
            alone = not rows and not self.showed_rows
            whole = shown
            shown, first_cut = _fit_row(str(row_number), shown, lambda i: reads_on(left + i - 1),
                                        room - used if alone else room)
            used += len(pipe_row([str(row_number), *shown]).encode("utf-8")) + 1
            if not alone and used > room:
                stop, reason = row_number, output_limit_reason(self.request.output_bytes)
                break
            rows.append((row_number, shown, width))
            kept = len(shown) if shown is whole else len(shown) - 1  # a cut row ends at its marker
            for text, reason in zip(shown[:kept], whys):
                self._count(text, reason)
            if line.hidden:
                hidden.append(row_number)
            if first_cut and self.cut is None:
                self.cut = self._at(remaining, row_number, left + first_cut - 1)
        if stop is None and start > 1 and not rows and self.area is None:
            raise past_end(start, None, "row", f"sheet {number}")
        if stop is not None and not rows:  # the sheets before filled the call: this one waits whole
            self.next = {"pages": remaining}
            self.closing = f'[Sheet {number} is not begun ({reason}). Call again with pages="{remaining}" to continue.]'
            return False
        if self.area is not None:
            extent = f"range {self.area.rest(self.area.top).partition('!')[2]}"
        elif stop is None:
            extent = amount(rows[-1][0], "row") if rows else "empty"
        elif declared_rows >= stop:
            extent = amount(declared_rows, "row")
        else:
            extent = f"more than {amount(stop - 1, 'row')}"
        widest = max([declared_cols, *(left + count - 1 for _, _, count in rows)])
        columns = max(min(widest, last_column) - left + 1, 0)  # the table's, from column `left`
        self._header(number, sheet, extent, widest, hidden, left + columns - 1)
        self.shown_sheets.append(number)
        self.shown_rows = [rows[0][0], rows[-1][0]] if rows else None
        self.showed_rows = self.showed_rows or bool(rows)
        if rows:
            self._add(pipe_row(["row", *(column_letters(c) for c in range(left, left + columns))]))
            self._add(pipe_row(["---"] * (columns + 1)))
            for row_number, cells, count in rows:
                pad = [""] * (columns - len(cells)) if len(cells) == count else []  # a cut row ends at its marker
                self._add(pipe_row([str(row_number), *cells, *pad]))
        elif self.area is not None:
            self._add("(No cell of this range holds a value.)")
        if stop is not None:
            self._stop(number, stop, remaining, reason)
            return False
        self.rows_left -= (rows[-1][0] if rows else start) - start + 1
        return True

    def cells(self, number: int, last: int, row: int, column: int, char: int = 1) -> ReadResult:
        """Row `row` of sheet `number` from its column `column` on (that cell from its character
        `char`): each cell whole on a line of its own, within the budget; a first cell over the
        budget is cut where it fills it and `next` reads on inside it, else `next` goes on with the
        cells and rows after it (to sheet `last`, or to the range's end)."""
        sheet = self.book.sheets[number - 1]
        remaining = span(number, last)
        found: dict | None = None
        following = None  # the next row holding a value
        why = hiding(self.book, sheet)
        for parsed, line in enumerate(noted_rows(self.book, sheet, row), 1):
            row_number, cells = line.number, line.cells
            if parsed % 1000 == 0:
                checkpoint()
            if row_number < row or not cells:
                continue
            if row_number > row and found is not None:
                following = row_number if row_number <= self.bottom else None
                break
            found = ({c: (_marked(_whole(*cell), why(line, c)), why(line, c)) for c, cell in cells.items()
                      if max(column, self.left) <= c <= self.right} if row_number == row else {})
        if not found:
            where = f'range="{self.area.rest(row)}"' if self.area else f'pages="{number}"'
            raise ReadError("offset_past_end", f"row {row:,} of sheet {number} holds no value from column "
                            f"{column_letters(column)} ({column}) on. Call again with {where} and no column to "
                            "read its rows.")
        self._add(f'--- Sheet {number} "{sheet.name}", row {row:,} from column {column_letters(column)}, '
                  "each cell whole ---")
        budget = self.request.output_bytes - CLOSING_RESERVE_BYTES
        shown: list[int] = []
        for c, (text, reason) in sorted(found.items()):
            at = char if c == column else 1
            if at > len(text):
                raise ReadError("offset_past_end", f"char {at:,} is past the end of cell {column_letters(c)}{row}, "
                                f"which has {len(text):,} characters. Call again with a char from 1 to "
                                f"{max(len(text), 1):,}, or without one.")
            name = f"{column_letters(c)}{row}" + (f" from character {at:,}" if at > 1 else "")
            line = f"{name}: {text[at - 1:]}"
            size = len(line.encode("utf-8")) + 1
            if shown and self.used + size > budget:
                self.next = self._at(remaining, row, c)
                break
            if self.used + size > budget:  # one cell over the whole reply: what fits of it, and where it reads on
                self.next = self._at(remaining, row, c)
                marker = (f" [… cell {column_letters(c)}{row} cut at character {{}} of {len(text):,}; "
                          f"{call(self.next)}, char={{}} reads on]")
                room = budget - self.used - len(f"{name}: {marker}".encode("utf-8")) - MARKER_DIGITS_BYTES
                end = at - 1 + fitting(text[at - 1:], room)
                self.next["char"] = end + 1
                line = f"{name}: {text[at - 1:end]}" + marker.format(f"{end:,}", end + 1)
                self._add(line)
                self._count(text, reason)
                shown.append(c)
                break
            self._add(line)
            self._count(text, reason)
            shown.append(c)
        if self.next is None and following is not None:
            self.next = self._at(remaining, following)
        elif self.next is None and last > number:
            self.next = {"pages": span(number + 1, last)}
        if self.next is not None:
            columns = (f"column {column_letters(shown[0])}" if len(shown) == 1 else
                       f"columns {column_letters(shown[0])}-{column_letters(shown[-1])}")
            self.closing = (f"[Shown: row {row:,} of sheet {number}, {columns}. Call again with {call(self.next)} "
                            "to continue.]")
        self.shown_sheets, self.shown_rows = [number], [row, row]
        return self.result()

    def _header(self, number: int, sheet, extent: str, columns: int, hidden: list[int], last: int) -> None:
        """The sheet's header: its extent (or the range read), its state, what it merges and what it
        hides among the rows shown and the columns from `self.left` to `last`."""
        state = "" if sheet.state == "visible" else f", {sheet.state}"
        if self.lines:
            self._add("")
        size = "" if self.area else f" × {amount(columns, 'column')}"
        self._add(f'--- Sheet {number} "{sheet.name}" ({extent}{size}{state}) ---')
        if last - self.left + 1 >= MAX_COLUMNS and columns > last:
            self._add(f"[Columns past {column_letters(last)} are not shown: {MAX_COLUMNS} columns per row.]")
        merges = self.book.merges(sheet)
        if self.area is not None:  # those the range meets
            merges = [m for m in merges if _meets(range_boundaries(m), self.area)]
        if merges:
            more = f" and {len(merges) - MAX_MERGES_LISTED:,} more" if len(merges) > MAX_MERGES_LISTED else ""
            self._add(f"Merged cells (value in the first cell): {', '.join(merges[:MAX_MERGES_LISTED])}{more}")
        hid = []
        if hidden:
            hid.append(f"{'row' if len(hidden) == 1 else 'rows'} {_runs([(r, r) for r in hidden], str)}")
        shown = [(max(a, self.left), min(b, last)) for a, b in self.book.hidden_columns(sheet)
                 if a <= last and b >= self.left]
        if shown:
            one = len(shown) == 1 and shown[0][0] == shown[0][1]
            hid.append(f"{'column' if one else 'columns'} {_runs(shown, column_letters)}")
        if hid:
            self._add(f"Hidden in Excel (shown here): {'; '.join(hid)}")
        for line in self.book.charts(sheet, self.request.output_bytes):
            self._add(line)

    def _count(self, text: str, why: str | None) -> None:
        """A cell shown counted as a passage hidden from a person (see `hiding`), where it shows
        anything."""
        if why is not None and text:
            self.concealed[why] = self.concealed.get(why, 0) + 1

    def _stop(self, sheet: int, row: int, remaining: str, reason: str) -> None:
        self.next = self._at(remaining, row)
        # After a cut the read goes on at the cut (result()): this line names no call of its own.
        words = call(self.next) if self.area else f'pages="{remaining}" and offset={row}'
        goes_on = "" if self.cut else f" Call again with {words} to continue."
        self.closing = f"[Sheet {sheet} stops before row {row:,} ({reason}).{goes_on}]"

    def result(self) -> ReadResult:
        if self.closing:
            self.lines.append(self.closing)
        if self.cut is not None:
            self.next = self.cut
            self.lines.append(f"[Cells over {MAX_CELL_CHARS} characters or rows over {MAX_LINE_CHARS:,} characters "
                              "were cut; each cut names the call that shows it whole. Read the first with "
                              f"{call(self.cut)}.]")
        shown = {"pages": self.shown_sheets, **({"rows": self.shown_rows} if self.shown_rows else {})}
        return ReadResult(kind="spreadsheet", path=self.path, content=[TextPart("\n".join(self.lines))],
                          total_pages=len(self.book.sheets), truncated=self.next is not None, next=self.next,
                          shown=shown, hidden=self.concealed or None)


def _noted(row: Row, notes: dict[int, dict[int, str]]) -> Row:
    """The row with its cells' comments: (text, formula, comments) a cell."""
    cells = {c: (*cell, None) for c, cell in row.cells.items()}
    for column, note in notes.get(row.number, {}).items():
        text, formula, _ = cells.get(column, ("", None, None))
        cells[column] = (text, formula, note)
    return Row(row.number, dict(sorted(cells.items())), row.hidden, row.unseen)


def _show(value: Value | str, formula: str | None, note: str | None = None, reads_on: str | None = None) -> str:
    """A cell as its table shows it; `reads_on` names the call that shows it whole if it is cut."""
    return cell_text(_whole(value, formula, note), reads_on)


def _marked(text: str, why: str | None) -> str:
    """A cell's text as a passage hidden for `why` (hidden.passage), where it shows anything."""
    return passage(text, why) if why is not None and text else text


def _whole(value: Value | str, formula: str | None, note: str | None = None) -> str:
    """A cell's text, or `formula → text`, then its comments; uncut. A value its number format
    draws as nothing is shown as General draws it (`hiding` says why)."""
    text = general(value.value) if shows_nothing(value) else str(value)
    shown = (f"{formula} → {text}" if text else formula) if formula else text
    return f"{shown} {note}" if shown and note else shown or note or ""


def _fit_row(number: str, cells: list[str], reads_on: Callable[[int], str],
             room: int) -> tuple[list[str], int | None]:
    """A row's cells as its table line shows them: those that fit MAX_LINE_CHARS characters and
    `room` bytes, then a marker naming the call (`reads_on` of the cell's place in `cells`) that
    shows the rest whole → (the cells, the place of the first cell cut, or None). A first cell over
    either leaves only the marker: the call reads it on."""
    cut = next((i for i, cell in enumerate(cells, 1) if len(cell) > MAX_CELL_CHARS), None)
    line = pipe_row([number, *cells])
    if len(line) <= MAX_LINE_CHARS and len(line.encode("utf-8")) <= room:
        return cells, cut
    kept, length, size = 0, len(pipe_row([number])), len(pipe_row([number]).encode("utf-8"))
    while (kept < len(cells) and length + len(cells[kept]) + 3 <= MAX_LINE_CHARS - ROW_MARKER_CHARS
           and size + len(cells[kept].encode("utf-8")) + 3 <= room - ROW_MARKER_CHARS):
        length += len(cells[kept]) + 3
        size += len(cells[kept].encode("utf-8")) + 3
        kept += 1
    return ([*cells[:kept], f"[… row cut at column {column_letters(kept + 1)}; {reads_on(kept + 1)} reads on]"],
            min(cut or kept + 1, kept + 1))


def _meets(bounds: tuple, area: Area) -> bool:
    left, top, right, bottom = bounds
    return left <= area.right and right >= area.left and top <= area.bottom and bottom >= area.top


def _runs(spans: list[tuple[int, int]], name: Callable[[int], str]) -> str:
    """Spans of rows or columns as a header lists them, neighbours joined: "5-7, 12", "B, D-E";
    at most MAX_HIDDEN_RUNS, then a count of the rest."""
    joined: list[list[int]] = []
    for first, last in sorted(spans):
        if joined and first <= joined[-1][1] + 1:
            joined[-1][1] = max(joined[-1][1], last)
        else:
            joined.append([first, last])
    listed = [name(a) if a == b else f"{name(a)}-{name(b)}" for a, b in joined[:MAX_HIDDEN_RUNS]]
    more = f" and {len(joined) - MAX_HIDDEN_RUNS:,} more" if len(joined) > MAX_HIDDEN_RUNS else ""
    return ", ".join(listed) + more


