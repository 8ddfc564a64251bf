"""Excel 97-2003 workbooks (.xls, BIFF in an OLE2 compound file), read by xlrd and shown as XLSX
sheets are (xlsx.py: the same table, addressing, outline and search): a cell is its value as xlrd
types it by the cell's number format (a date shows as a date, a truth value as TRUE or FALSE, an
error as Excel writes it). An .xls keeps only the value a formula last computed, which is what
is shown. xlrd reads the whole workbook into memory, which an .xls (at most 65,536 rows by 256
columns a sheet) keeps within bounds.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterator

from agentread.find import Hit, Matcher, Reached
from agentread.readers.office import MAX_SECTIONS
from agentread.readers.office.xlsx import cell_units, outline_workbook, read_workbook, search_workbook
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

    def rows(self, sheet: _Sheet, start: int) -> Iterator[tuple[int, dict]]:
        import xlrd

        cells = self.book.sheet_by_index(sheet.part)
        for row in range(max(start, 1) - 1, cells.nrows):
            values = {}
            for column, cell in enumerate(cells.row(row), 1):
                if cell.ctype in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
                    continue
                values[column] = (self._value(cell), None)
            yield row + 1, values

    def declared(self, sheet: _Sheet) -> tuple[int, int]:
        cells = self.book.sheet_by_index(sheet.part)
        return cells.nrows, cells.ncols

    def merges(self, sheet: _Sheet) -> list[str]:
        import xlrd

        return [f"{xlrd.cellname(top, left)}:{xlrd.cellname(bottom - 1, right - 1)}"
                for top, bottom, left, right in self.book.sheet_by_index(sheet.part).merged_cells]

    def _value(self, cell):
        import xlrd

        if cell.ctype == xlrd.XL_CELL_BOOLEAN:
            return bool(cell.value)
        if cell.ctype == xlrd.XL_CELL_ERROR:
            return xlrd.error_text_from_code.get(cell.value, f"#ERR{cell.value}")
        if cell.ctype == xlrd.XL_CELL_DATE:
            try:
                when = xlrd.xldate_as_datetime(cell.value, self.book.datemode)
            except (xlrd.XLDateError, ValueError, OverflowError):
                return cell.value
            return when.time() if 0 <= cell.value < 1 else when
        return cell.value


def read_xls(data: bytes, request: ReadRequest, path: str) -> ReadResult:
    return read_workbook(_open(data, path), request, path)


def outline_xls(data: bytes, request: ReadRequest, path: str) -> ReadResult:
    return outline_workbook(_open(data, path), request, path)


def search_xls(data: bytes, request: ReadRequest, matcher: Matcher) -> tuple[str, Iterator[Hit | Reached]]:
    return search_workbook(cell_units(_open(data, ""), request), matcher)


def _open(data: bytes, path: str) -> _Book:
    import xlrd

    try:
        with open(os.devnull, "w") as quiet:  # xlrd writes its warnings to stdout, the server's protocol channel
            book = xlrd.open_workbook(file_contents=data, formatting_info=True, logfile=quiet)
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
