"""Excel 97-2003 workbooks (.xls, BIFF in an OLE2 compound file), read by xlrd and shown as XLSX
sheets are (xlsx.py: the same table, addressing, ranges, outline and search): a cell is its value
drawn under its number format as an XLSX cell's is (xlrd gives each cell's format from the file's
XF records), then its notes; the header says which rows and columns Excel hides. An .xls keeps
only the value a formula last computed, which is what is shown; its charts are not read. xlrd
reads the whole workbook into memory, which an .xls (at most 65,536 rows by 256 columns a sheet)
keeps within bounds.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterator

from agentread.find import Hit, Matcher, Reached
from agentread.readers.office import MAX_SECTIONS
from agentread.readers.office.document import WHITE, unseen_colour
from agentread.readers.office.sheetxml import Row, drawn, format_code, note_text
from agentread.readers.office.xlsx import cell_units, outline_workbook, read_workbook, search_workbook
from agentread.readers.office_detect import OLE2_STREAMS
from agentread.request import InvalidParams, ReadRequest
from agentread.result import ReadError, ReadResult

# xlrd's sheet visibility → the states an XLSX sheet has.
STATES = {0: "visible", 1: "hidden", 2: "veryHidden"}


@dataclass(frozen=True)
class _Sheet:
    name: str
    state: str
    part: int  # its index in the workbook (never None: xlrd lists worksheets only)


class _Book:
    """An .xls workbook as the sheet reader reads one (xlsx.Workbook)."""

    def __init__(self, book) -> None:
        self.book = book
        self.sheets = [_Sheet(sheet.name, STATES.get(sheet.visibility, "hidden"), number)
                       for number, sheet in enumerate(book.sheets())]
        self.formats = {}  # XF record (index) → its number format's code, for those not General
        for index, xf in enumerate(book.xf_list):
            listed = book.format_map.get(xf.format_key)
            if code := format_code(xf.format_key, listed.format_str if listed else None):
                self.formats[index] = code
        self.unseen = {index: why for index, xf in enumerate(book.xf_list) if (why := self._unseen(xf))}

    def rows(self, sheet: _Sheet, start: int) -> Iterator[Row]:
        import xlrd

        cells = self.book.sheet_by_index(sheet.part)
        for row in range(max(start, 1) - 1, cells.nrows):
            values = {}
            for column, cell in enumerate(cells.row(row), 1):
                if cell.ctype in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
                    continue
                values[column] = (self._value(cell), None)
            unseen = {column: self.unseen[cell.xf_index] for column, cell in enumerate(cells.row(row), 1)
                      if column in values and cell.xf_index in self.unseen}
            info = cells.rowinfo_map.get(row)
            yield Row(row + 1, values, bool(info and info.hidden), unseen)

    def declared(self, sheet: _Sheet) -> tuple[int, int]:
        cells = self.book.sheet_by_index(sheet.part)
        return cells.nrows, cells.ncols

    def merges(self, sheet: _Sheet) -> list[str]:
        import xlrd

        return [f"{xlrd.cellname(top, left)}:{xlrd.cellname(bottom - 1, right - 1)}"
                for top, bottom, left, right in self.book.sheet_by_index(sheet.part).merged_cells]

    def notes(self, sheet: _Sheet) -> dict[tuple[int, int], str]:
        return {(row + 1, column + 1): note_text(note.author, note.text)
                for (row, column), note in self.book.sheet_by_index(sheet.part).cell_note_map.items()}

    def hidden_columns(self, sheet: _Sheet) -> list[tuple[int, int]]:
        return [(column + 1, column + 1)
                for column, info in sorted(self.book.sheet_by_index(sheet.part).colinfo_map.items()) if info.hidden]

    def charts(self, sheet: _Sheet, reply_bytes: int) -> list[str]:
        return []  # xlrd does not read an .xls's charts

    def _unseen(self, xf) -> str | None:
        """Why a cell of format record `xf` is not seen: its font's colour is its solid fill's, or
        white with no fill; None where it is seen or a colour is a system one (automatic)."""
        fonts = self.book.font_list
        font = fonts[xf.font_index] if xf.font_index < len(fonts) else None
        colour = self._rgb(font.colour_index) if font is not None else None
        pattern = xf.background.fill_pattern
        under = WHITE if pattern == 0 else self._rgb(xf.background.pattern_colour_index) if pattern == 1 else None
        return unseen_colour(colour, under, "in the cell's colour") if colour and under else None

    def _rgb(self, index: int) -> str | None:
        """A palette colour as six hex digits; None for a system colour, which has none."""
        rgb = self.book.colour_map.get(index)
        return "".join(f"{c:02X}" for c in rgb) if rgb else None

    def _value(self, cell):
        import xlrd

        if cell.ctype == xlrd.XL_CELL_ERROR:
            return xlrd.error_text_from_code.get(cell.value, f"#ERR{cell.value}")
        value = bool(cell.value) if cell.ctype == xlrd.XL_CELL_BOOLEAN else cell.value
        return drawn(value, self.formats.get(cell.xf_index), self.book.datemode == 1)


def read_xls(data: bytes, request: ReadRequest, path: str) -> ReadResult:
    return read_workbook(_open(data, path), request, path)


def outline_xls(data: bytes, request: ReadRequest, path: str) -> ReadResult:
    return outline_workbook(_open(data, path), request, path)


def search_xls(data: bytes, request: ReadRequest, matcher: Matcher) -> tuple[str, Iterator[Hit | Reached]]:
    return search_workbook(cell_units(_open(data, ""), request), matcher)


def _workbook_stream(data: bytes) -> bytes:
    """The workbook's BIFF records, read out of the compound file by olefile, which checks its
    sector chains against the file's size: xlrd's own reader of compound files follows a damaged
    file's chains for minutes, taking gigabytes. xlrd reads the records as they are."""
    import olefile

    with olefile.OleFileIO(data) as ole:
        name = next(stream for stream, what in OLE2_STREAMS if what == "xls" and ole.exists(stream))
        return ole.openstream(name).read()


def _open(data: bytes, path: str) -> _Book:
    import xlrd

    try:
        with open(os.devnull, "w") as quiet:  # xlrd writes its warnings to stdout, the server's protocol channel
            book = xlrd.open_workbook(file_contents=_workbook_stream(data), formatting_info=True, logfile=quiet)
    except (ReadError, InvalidParams, MemoryError, RecursionError):
        raise
    except Exception as exc:  # noqa: BLE001 - xlrd fails in many ways on a damaged file
        message = str(exc).splitlines()[0][:200] if str(exc) else ""
        if "encrypted" in message.lower():
            raise ReadError("encrypted_office", f"{path} is a password-protected Excel 97-2003 workbook: its "
                            "content is encrypted. Passwords cannot be passed to this tool: ask the user for a "
                            "copy saved without a password, or to paste the text you need.") from None
        raise ReadError("damaged_office", f"{path} is a damaged Excel 97-2003 workbook that could not be read "
                        f"({type(exc).__name__}: {message}). Try another copy of the file.") from None
    if book.nsheets > MAX_SECTIONS:
        raise ReadError("too_complex", f"{path} lists {book.nsheets:,} sheets, over the limit of {MAX_SECTIONS:,} "
                        "sheets a file. It cannot be read; ask the user for an export of the part you need.")
    if not book.nsheets:
        raise ReadError("damaged_office", f"{path} is a damaged Excel 97-2003 workbook: it holds no sheet. Try "
                        "another copy of the file.")
    return _Book(book)
