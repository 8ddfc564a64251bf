"""XLSX: one section per sheet, its cells as pipe-table rows led by the sheet's own row numbers.

    --- Sheet 1 "Budget" (120 rows × 4 columns, A1:D120) ---
    Merged cells: A1:D1
    | row | A | B | C | D |
    | --- | --- | --- | --- | --- |
    | 1 | Budget 2024 |  |  |  |
    | 17 | Rent | 1200 | =B17*12 → 14400 |  |

A cell is cited as column letter and row number (C17). A formula shows its text and the value Excel
last computed (`→`); a workbook never computed by Excel has no such value and shows the formula
alone. Empty rows are left out (the numbers say where).

Addressing: `pages` picks sheets ("2", "2-3", "3-", or a sheet's name); `offset` is the first row of
the first sheet shown and `limit` the number of rows (row numbers, not lines). Without `pages`,
every sheet in order. A read stops at the per-call budget; `next` says where to continue, e.g.
{pages: "2-3", offset: 2001}.

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

import datetime as dt
import io
import zipfile
from typing import Iterator, Protocol

from openpyxl.utils.cell import range_boundaries

from agentread.cancel import checkpoint
from agentread.find import Hit, Matcher, Reached, Unit, call, hits_in
from agentread.limits import MAX_LINE_CHARS
from agentread.numbering import amount, fitting, output_limit_reason, past_end, span
from agentread.outline import Entry, outline_result
from agentread.readers.office.document import MAX_CELL_CHARS, cell_text, pipe_row, select_sections
from agentread.readers.office.sheetxml import (
    Book,
    Sheet,
    declared_dimension,
    merged_ranges,
    open_from_row,
    read_book,
    sheet_rows,
)
from agentread.request import InvalidParams, ReadRequest
from agentread.result import ReadError, ReadResult, TextPart

# Columns shown per row. Past this a row is no longer a line a model reads as a row; the section
# header says how many columns there are and the reader can be asked for a CSV export instead.
MAX_COLUMNS = 100

# Merged ranges listed per sheet; a sheet merging thousands of cells (a formatted report)
# lists the first.
MAX_MERGES_LISTED = 50

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
    `name`, `state` and `part`, None for a chart sheet) and, by sheet, its rows from a row on
    (row number, {column: (value, formula)}), its declared rows and columns, and its merged
    ranges."""

    sheets: list

    def rows(self, sheet, start: int) -> Iterator[tuple[int, dict]]: ...

    def declared(self, sheet) -> tuple[int, int]: ...

    def merges(self, sheet) -> list[str]: ...


def read_xlsx(data: bytes, request: ReadRequest, path: str) -> ReadResult:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        book = _Zipped(archive, read_book(archive))
        if not book.sheets:
            raise ReadError("damaged_office", f"{path} is a damaged XLSX file: it lists no sheet whose part it "
                            "holds. Try another copy of the file.")
        return read_workbook(book, request, path)


def read_workbook(book: Workbook, request: ReadRequest, path: str) -> ReadResult:
    """The sheets and rows the request asks for, of a workbook holding at least one sheet."""
    if request.from_end:  # a sheet's last row is known only by reading all of it (its <dimension> is not trusted)
        raise ReadError("offset_from_end", f"offset {request.offset} counts rows from the end, which sheets do not "
                        "support. Call without an offset to read a sheet from its first row (the result says how "
                        "many rows it has), then offset=N to read from its row N.")
    names = [sheet.name for sheet in book.sheets]
    first, last = select_sections(request.pages, len(names), "sheet", names)
    reader = _Reader(book, request, path)
    if request.column is not None:
        return reader.cells(first, last, request.first_line, request.column, request.char or 1)
    if request.char is not None:
        raise InvalidParams("'char' reads on inside one cell: pass it with `column` (the cell's sheet column) "
                            "and `offset` (its row), as a cut cell's `next` does")
    for number in range(first, last + 1):
        start = request.first_line if number == first else 1
        if not reader.sheet(number, book.sheets[number - 1], start, span(number, last)):
            break
    return reader.result()


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
        for parsed, (row, cells) in enumerate(book.rows(book.sheets[number - 1], start), 1):
            if parsed % 1000 == 0:
                checkpoint()
            if row < start:
                continue
            for column, (value, formula) in sorted(cells.items()):
                if number == first and row == request.first_line and column < (request.column or 1):
                    continue
                text = _whole(value, formula)
                # A cell the table cuts is read alone, from the part of it that holds the hit.
                whole = {"column": column} if len(text) > MAX_CELL_CHARS else {}
                yield Unit(text, {"sheet": names[number - 1], "cell": f"{_letters(column)}{row}"},
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
    for rows, (row, cells) in enumerate(book.rows(sheet, 1), 1):
        if rows % 1000 == 0:
            checkpoint()
        if not cells:
            continue
        first = first or (row, cells)
        top, left, right = top or row, min(left or 1 << 30, min(cells)), max(right, max(cells))
        bottom = row
        if rows >= MAX_OUTLINE_ROWS:
            break
    if first is None:
        where = "no cells"
    elif rows >= MAX_OUTLINE_ROWS:
        where = (f"used range from {_letters(left)}{top}, over {MAX_OUTLINE_ROWS:,} rows (the outline looks no "
                 f"further; row {bottom:,} holds values)")
    else:
        where = f"used range {_letters(left)}{top}:{_letters(right)}{bottom}"
    if first is not None:
        row, cells = first
        shown = [f"{_letters(c)}={cell_text(_show(*cells[c]))}" for c in sorted(cells)[:MAX_HEADER_CELLS]]
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

    def rows(self, sheet: Sheet, start: int) -> Iterator[tuple[int, dict]]:
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
            yield from sheet_rows(xml, self.book)
        finally:
            xml.close()

    def merges(self, sheet: Sheet) -> list[str]:
        """Merged ranges of a sheet, scanned from its XML (they come after its cells)."""
        if sheet.part is None:
            return []
        with self.archive.open(sheet.part) as xml:
            return merged_ranges(xml)


class _Reader:
    def __init__(self, book: Workbook, request: ReadRequest, path: str):
        self.book = book
        self.request = request
        self.path = path
        self.lines: list[str] = []
        self.used = 0
        self.rows_left = request.line_limit
        self.next: dict | None = None
        self.closing: str | None = None
        self.shown_sheets: list[int] = []
        self.shown_rows: list[int] | None = None  # of the last sheet listed, [first, last]
        self.showed_rows = False  # whether any sheet before showed a row
        self.cut: dict | None = None  # the cell read showing whole the first cell or row cut

    def _add(self, line: str) -> None:
        self.lines.append(line)
        self.used += len(line.encode("utf-8")) + 1

    def sheet(self, number: int, sheet: Sheet, start: int, remaining: str) -> bool:
        """Render sheet `number` from row `start`; False once the call's budget is spent.

        The extent a sheet declares (its <dimension>) is not trusted: some writers declare A1:A1 for
        a full sheet. Every row is read until the sheet ends or the budget does; the window's rows
        are held (they are what the call shows anyway) to size the table's header."""
        declared_rows, declared_cols = self.book.declared(sheet)
        rows: list[tuple[int, list[str], int]] = []  # row number, the cells shown, the row's cells
        used = self.used
        stop = reason = None
        for parsed, (row_number, cells) in enumerate(self.book.rows(sheet, start), 1):
            if parsed % 1000 == 0:
                checkpoint()
            if row_number < start:  # the shared formulas the window refers to, or rows above it
                continue
            if row_number - start >= self.rows_left:  # the next row of the sheet, written or empty
                stop, reason = start + self.rows_left, f"limit of {amount(self.request.line_limit, 'row')}"
                break
            reads_on = f'pages="{remaining}", offset={row_number}, column='
            shown = [_show(*cells[c], f"{reads_on}{c}") if c in cells else ""
                     for c in range(1, min(max(cells, default=0), MAX_COLUMNS) + 1)]
            while shown and not shown[-1]:
                shown.pop()
            if not shown:
                continue
            width = len(shown)
            room = self.request.output_bytes - CLOSING_RESERVE_BYTES
            # Only the call's first row is cut to the bytes left: later ones wait for the next call.
            alone = not rows and not self.showed_rows
            shown, first_cut = _fit_row(str(row_number), shown, reads_on, room - used if alone else room)
            used += len(pipe_row([str(row_number), *shown]).encode("utf-8")) + 1
            if not alone and used > room:
                stop, reason = row_number, output_limit_reason(self.request.output_bytes)
                break
            rows.append((row_number, shown, width))
            if first_cut and self.cut is None:
                self.cut = {"pages": remaining, "offset": row_number, "column": first_cut}
        if stop is None and start > 1 and not rows:
            raise past_end(start, None, "row", f"sheet {number}")
        if stop is not None and not rows:  # the sheets before filled the call: this one waits whole
            self.next = {"pages": remaining}
            self.closing = f'[Sheet {number} is not begun ({reason}). Call again with pages="{remaining}" to continue.]'
            return False
        if stop is None:
            extent = amount(rows[-1][0], "row") if rows else "empty"
        elif declared_rows >= stop:
            extent = amount(declared_rows, "row")
        else:
            extent = f"more than {amount(stop - 1, 'row')}"
        width = max([declared_cols, *(count for _, _, count in rows)])
        self._header(number, sheet, extent, width)
        self.shown_sheets.append(number)
        self.shown_rows = [rows[0][0], rows[-1][0]] if rows else None
        self.showed_rows = self.showed_rows or bool(rows)
        if rows:
            columns = min(width, MAX_COLUMNS)
            self._add(pipe_row(["row", *(_letters(c) for c in range(1, columns + 1))]))
            self._add(pipe_row(["---"] * (columns + 1)))
            for row_number, cells, count in rows:
                pad = [""] * (columns - len(cells)) if len(cells) == count else []  # a cut row ends at its marker
                self._add(pipe_row([str(row_number), *cells, *pad]))
        if stop is not None:
            self._stop(number, stop, remaining, reason)
            return False
        self.rows_left -= (rows[-1][0] if rows else start) - start + 1
        return True

    def cells(self, number: int, last: int, row: int, column: int, char: int = 1) -> ReadResult:
        """Row `row` of sheet `number` from its column `column` on (that cell from its character
        `char`): each cell whole on a line of its own, within the budget; a first cell over the
        budget is cut where it fills it and `next` reads on inside it, else `next` goes on with the
        cells and rows after it (to sheet `last`)."""
        sheet = self.book.sheets[number - 1]
        remaining = span(number, last)
        found: dict | None = None
        following = None  # the next row holding a value
        for parsed, (row_number, cells) in enumerate(self.book.rows(sheet, row), 1):
            if parsed % 1000 == 0:
                checkpoint()
            if row_number < row or not cells:
                continue
            if row_number > row and found is not None:
                following = row_number
                break
            found = {c: cell for c, cell in cells.items() if c >= column} if row_number == row else {}
        if not found:
            raise ReadError("offset_past_end", f"row {row:,} of sheet {number} holds no value from column "
                            f"{_letters(column)} ({column}) on. Call again with pages=\"{number}\" and no column to "
                            "read its rows.")
        self._add(f'--- Sheet {number} "{sheet.name}", row {row:,} from column {_letters(column)}, '
                  "each cell whole ---")
        budget = self.request.output_bytes - CLOSING_RESERVE_BYTES
        shown: list[int] = []
        for c, (value, formula) in sorted(found.items()):
            text, at = _whole(value, formula), char if c == column else 1
            if at > len(text):
                raise ReadError("offset_past_end", f"char {at:,} is past the end of cell {_letters(c)}{row}, which has "
                                f"{len(text):,} characters. Call again with a char from 1 to {max(len(text), 1):,}, "
                                "or without one.")
            name = f"{_letters(c)}{row}" + (f" from character {at:,}" if at > 1 else "")
            line = f"{name}: {text[at - 1:]}"
            size = len(line.encode("utf-8")) + 1
            if shown and self.used + size > budget:
                self.next = {"pages": remaining, "offset": row, "column": c}
                break
            if self.used + size > budget:  # one cell over the whole reply: what fits of it, and where it reads on
                self.next = {"pages": remaining, "offset": row, "column": c}
                marker = (f" [… cell {_letters(c)}{row} cut at character {{}} of {len(text):,}; {call(self.next)}, "
                          "char={} reads on]")
                room = budget - self.used - len(f"{name}: {marker}".encode("utf-8")) - MARKER_DIGITS_BYTES
                end = at - 1 + fitting(text[at - 1:], room)
                self.next["char"] = end + 1
                line = f"{name}: {text[at - 1:end]}" + marker.format(f"{end:,}", end + 1)
                self._add(line)
                shown.append(c)
                break
            self._add(line)
            shown.append(c)
        if self.next is None and following is not None:
            self.next = {"pages": remaining, "offset": following}
        elif self.next is None and last > number:
            self.next = {"pages": span(number + 1, last)}
        if self.next is not None:
            columns = (f"column {_letters(shown[0])}" if len(shown) == 1 else
                       f"columns {_letters(shown[0])}-{_letters(shown[-1])}")
            self.closing = (f"[Shown: row {row:,} of sheet {number}, {columns}. Call again with {call(self.next)} "
                            "to continue.]")
        self.shown_sheets, self.shown_rows = [number], [row, row]
        return self.result()

    def _header(self, number: int, sheet, extent: str, columns: int) -> None:
        hidden = "" if sheet.state == "visible" else f", {sheet.state}"
        if self.lines:
            self._add("")
        self._add(f'--- Sheet {number} "{sheet.name}" ({extent} × {amount(columns, "column")}{hidden}) ---')
        if columns > MAX_COLUMNS:
            self._add(f"[Columns past {_letters(MAX_COLUMNS)} are not shown: {MAX_COLUMNS} columns per row.]")
        merges = self.book.merges(sheet)
        if merges:
            more = f" and {len(merges) - MAX_MERGES_LISTED:,} more" if len(merges) > MAX_MERGES_LISTED else ""
            self._add(f"Merged cells (value in the first cell): {', '.join(merges[:MAX_MERGES_LISTED])}{more}")

    def _stop(self, sheet: int, row: int, remaining: str, reason: str) -> None:
        self.next = {"pages": remaining, "offset": row}
        # After a cut the read goes on at the cut (result()): this line names no call of its own.
        goes_on = "" if self.cut else f' Call again with pages="{remaining}" and offset={row} to continue.'
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
                          shown=shown)


def _show(value, formula: str | None, reads_on: str | None = None) -> str:
    """A cell as its table shows it; `reads_on` names the call that shows it whole if it is cut."""
    return cell_text(_whole(value, formula), reads_on)


def _whole(value, formula: str | None) -> str:
    """A cell's value, or `formula → value`, uncut."""
    shown = _text(value)
    return (f"{formula} → {shown}" if shown else formula) if formula else shown


def _fit_row(number: str, cells: list[str], reads_on: str, room: int) -> tuple[list[str], int | None]:
    """A row's cells as its table line shows them: those that fit MAX_LINE_CHARS characters and
    `room` bytes, then a marker naming the call that shows the rest whole → (the cells, the first
    column cut, or None). A first cell over either leaves only the marker: the call reads it on."""
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
    return ([*cells[:kept], f"[… row cut at column {_letters(kept + 1)}; {reads_on}{kept + 1} reads on]"],
            min(cut or kept + 1, kept + 1))


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return str(value)


def _letters(column: int) -> str:
    out = ""
    while column:
        column, rest = divmod(column - 1, 26)
        out = chr(65 + rest) + out
    return out

