"""Workbooks (readxl's examples, made in Excel) read to their end by following `next`: every sheet
and row, each cell as openpyxl reads it (a formula with the value Excel last computed, a date drawn
in its number format by strftime)."""

from __future__ import annotations

import csv
import datetime as dt
import re
import shutil
import subprocess
import zipfile

import openpyxl
import pytest
from harness import SIZES, THIRDPARTY, arguments_named, body, chain, follow, same_in_every_front_end
from lxml import etree

EXTDATA = ("r-cran-readxl", "usr", "lib", "R", "site-library", "readxl", "extdata")
WORKBOOKS = sorted(p.name for p in THIRDPARTY.joinpath(*EXTDATA).glob("*.xlsx")) or ["(absent)"]


# The number formats these workbooks give their cells, as strftime draws them; a cell of any other
# format fails the comparison (add its drawing here, from Excel's documentation of the codes).
DRAWN = {"mm\\/dd\\/yyyy\\ hh:mm:ss\\ AM/PM": "%m/%d/%Y %I:%M:%S %p", "yyyy/mm/dd": "%Y/%m/%d"}
# General, and the formats Excel draws in its user's locale (the short date, the date and time),
# which the contract shows in ISO 8601.
AS_STORED = ("General", "mm-dd-yy", "m/d/yy h:mm")


def shown(value, number_format: str = "General") -> str:
    """A cell's value as a sheet's table writes it: the contract's presentation of numbers, dates
    and truth values (`TRUE`), and the number formats of DRAWN; nothing else."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if number_format not in AS_STORED and not isinstance(value, str):
        assert number_format in DRAWN, f"{value!r} has the number format {number_format!r}, not in DRAWN"
        return value.strftime(DRAWN[number_format])
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime) and value.time() == dt.time():
        return value.date().isoformat()
    return str(value)


def oracle(path) -> dict[tuple[int, int], list[str]]:
    """(sheet, row) -> its cells, for every row holding a value."""
    # Read-only, as a workbook whose drawing part is missing opens only so; each sheet's size is
    # found from its cells, not from the dimension the file states.
    formulas = openpyxl.load_workbook(path, read_only=True)
    values = openpyxl.load_workbook(path, read_only=True, data_only=True)
    rows = {}
    for number, (sheet, computed) in enumerate(zip(formulas.worksheets, values.worksheets), 1):
        sheet.reset_dimensions()
        computed.reset_dimensions()
        for row, cached in zip(list(sheet.iter_rows()), list(computed.iter_rows())):
            cells = []
            for cell, value in zip(row, cached):
                drawn = getattr(cell, "number_format", "General")
                if getattr(cell, "data_type", None) == "f":
                    cells.append(f"{cell.value} → {shown(value.value, drawn)}")
                else:
                    cells.append(shown(cell.value, drawn))
            if any(cells):
                rows[(number, next(c.row for c in row if hasattr(c, "row")))] = cells
    return rows


CELL = re.compile(r"([A-Z]+)(\d+): (.*)", re.S)  # a read by column: one cell a line
ROW_CUT = re.compile(r"\[… row cut at column [A-Z]+; [^\]]* reads on\]")


def column_number(letters: str) -> int:
    number = 0
    for letter in letters:
        number = number * 26 + ord(letter) - ord("A") + 1
    return number


def rows_read(replies) -> dict[tuple[int, int], list[str]]:
    """Each row's cells as the replies show them: table rows (a row cut where the reply was full
    ends in its marker), and the cells of a row read by column (`A1: …`) put in their places. A
    cell shown twice fails."""
    rows: dict[tuple[int, int], dict[int, str]] = {}

    def put(sheet, row, column, value):
        cells = rows.setdefault((sheet, row), {})
        assert column not in cells, f"sheet {sheet} {row}:{column} shown twice"
        cells[column] = value
    for result in replies:
        sheet = result["shown"]["pages"][0]
        letters: list[str] = []  # the table's columns, as its header names them (a range's start past A)
        for line in body(result).split("\n"):
            if line.startswith("--- Sheet "):
                sheet = int(line.split()[2])
            elif line.startswith("| row | "):
                letters = line[2:-2].split(" | ")[1:]
            elif line.startswith("| ") and line.endswith(" |") and line[2:].split(" | ")[0].isdigit():
                number, *cells = line[2:-2].split(" | ")
                if cells and ROW_CUT.fullmatch(cells[-1]):
                    cells.pop()
                for letter, value in zip(letters, cells):
                    put(sheet, int(number), column_number(letter), value)
            elif match := CELL.fullmatch(line):
                put(sheet, int(match[2]), column_number(match[1]), match[3])
    return {key: [cells.get(c, "") for c in range(1, max(cells, default=0) + 1)] for key, cells in rows.items()}


def within(rows, sheet: int, left: int, top: int, right: int, bottom: int):
    """The oracle's rows cut to a range: its columns (blank left of it), rows holding a value."""
    out = {}
    for (number, row), cells in rows.items():
        kept = ["" if c < left else value for c, value in enumerate(cells[:right], 1)]
        if number == sheet and top <= row <= bottom and any(kept):
            out[(number, row)] = kept
    return out


def trimmed(rows):
    """Cells left of the last one holding a value: a table is as wide as its sheet's used range."""
    out = {}
    for key, cells in rows.items():
        while cells and cells[-1] == "":
            cells = cells[:-1]
        out[key] = cells
    return out


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", WORKBOOKS)
def test_following_next_gives_every_row_as_openpyxl_reads_it(rpc, name, size):
    path = THIRDPARTY.joinpath(*EXTDATA, name)
    if not path.is_file():
        pytest.skip(f"{path} is absent: run ./scripts/fetch-thirdparty")
    params = {"path": str(path)} | ({"maxBytes": size} if size else {})
    assert trimmed(rows_read(follow(rpc, params))) == trimmed(oracle(path))


# Ranges of readxl's workbooks: a date column and formulas (deaths.xlsx), a wide numeric table
# whose sheet declares a wrong extent (datasets.xlsx), whole columns.
RANGES = [("deaths.xlsx", "other!B5:F15", (2, 2, 5, 6, 15)), ("datasets.xlsx", "mtcars!C3:H30", (2, 3, 3, 8, 30)),
          ("datasets.xlsx", "B:C", (1, 2, 1, 3, 1_048_576))]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name, given, bounds", RANGES)
def test_following_next_of_a_range_gives_its_cells_and_no_other(rpc, name, given, bounds, size):
    path = THIRDPARTY.joinpath(*EXTDATA, name)
    if not path.is_file():
        pytest.skip(f"{path} is absent: run ./scripts/fetch-thirdparty")
    replies = follow(rpc, {"path": str(path), "range": given} | ({"maxBytes": size} if size else {}))
    assert all("range" in r["next"] for r in replies[:-1])  # each call goes on within the range
    assert trimmed(rows_read(replies)) == trimmed(within(oracle(path), *bounds))


def test_a_workbook_is_the_same_in_every_front_end(rpc):
    path = THIRDPARTY.joinpath(*EXTDATA, "datasets.xlsx")
    if not path.is_file():
        pytest.skip(f"{path} is absent: run ./scripts/fetch-thirdparty")
    same_in_every_front_end(rpc, chain(rpc, {"path": str(path)})[:4], cli_reads=2)


# A row shown as no cell but the marker of its cut: nothing of it shown.
EMPTY_CUT_ROW = re.compile(r"\| \d+ \| \[… row cut at column A;", re.M)


def test_a_sheet_the_reply_has_no_room_for_waits_whole(rpc):
    """From a sheet's middle at the smallest reply: a later sheet the reply has no room for is left
    to the next call, not begun with a row cut to nothing; every reply's one call to go on is its
    `next`, on its last line."""
    path = THIRDPARTY.joinpath(*EXTDATA, "datasets.xlsx")
    if not path.is_file():
        pytest.skip(f"{path} is absent: run ./scripts/fetch-thirdparty")
    replies = follow(rpc, {"path": str(path), "pages": "2-4", "offset": 21, "maxBytes": SIZES[-1]})
    assert len(replies) > 1, [r.get("next") for r in replies]
    for result in replies[:-1]:
        text = body(result)
        assert not EMPTY_CUT_ROW.search(text), text[-400:]
        last = text.rstrip("\n").split("\n")[-1]
        assert arguments_named(last, result["next"]) and text.count("Call again") == 1, (last, result["next"])


# xlrd's workbooks whose parts are stored under names of another case than their relationships
# give (`xl/sharedstrings.xml`, `xl/SharedStrings.xml`, `xl/worksheets/Sheet1.xml`,
# `[content_types].xml`), as OPC allows: it compares part names without regard to case.
RECASED_WORKBOOKS = ["issue150.xlsx", "err_cell_empty.xlsx"]
XLRD_TESTS = ("xlrd-1.2.0", "xlrd-1.2.0", "tests")
# LibreOffice's CSV export of every sheet (the last field, -1), each cell as it is shown (the
# ninth, true), in UTF-8 (76).
MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
EVERY_SHEET_AS_SHOWN = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true,false,false,-1"


def libreoffice_rows(path, folder) -> dict[tuple[int, int], list[str]]:
    """(sheet, row) -> its cells as LibreOffice Calc shows them, for every row holding a value; a
    cell as one line of the table shows it (its edges' white space off). LibreOffice 7.4 finds no
    package in a zip whose content types part is named in lower case: the copy it reads names that
    part as Excel does, and stores every other part as the file does."""
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) is not installed: scripts/test installs it")
    copy = folder / path.name
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(copy, "w") as target:
        for info in source.infolist():
            named = "[Content_Types].xml" if info.filename.lower() == "[content_types].xml" else info.filename
            target.writestr(named, source.read(info))
    subprocess.run(["soffice", f"-env:UserInstallation={(folder / 'profile').as_uri()}", "--headless",
                    "--convert-to", EVERY_SHEET_AS_SHOWN, "--outdir", str(folder), str(copy)],
                   check=True, capture_output=True, timeout=300)
    with zipfile.ZipFile(path) as source:  # the sheets in order, one CSV file each, named by the sheet
        names = [sheet.get("name") for sheet in etree.fromstring(source.read("xl/workbook.xml")).iter(f"{MAIN}sheet")]
    sheets = [folder / f"{path.stem}-{name}.csv" for name in names]
    if not all(sheet.is_file() for sheet in sheets):
        pytest.skip("LibreOffice could not read the workbook: is Calc (libreoffice-calc-nogui) installed?")
    rows = {}
    for number, sheet in enumerate(sheets, 1):
        with open(sheet, encoding="utf-8", newline="") as f:
            for row, cells in enumerate(csv.reader(f), 1):
                if any(cells):
                    rows[(number, row)] = [cell.strip() for cell in cells]
    return rows


@pytest.mark.parametrize("name", RECASED_WORKBOOKS)
def test_parts_named_in_another_case_read_as_libreoffice_reads_them(rpc, tmp_path, name):
    path = THIRDPARTY.joinpath(*XLRD_TESTS, name)
    if not path.is_file():
        pytest.skip(f"{path} is absent: run ./scripts/fetch-thirdparty")
    expected = trimmed(libreoffice_rows(path, tmp_path))
    assert trimmed(rows_read(follow(rpc, {"path": str(path), "maxBytes": SIZES[1]}))) == expected
    if name == "issue150.xlsx":  # what xlrd's own test of it reads
        assert expected[(1, 1)][1] == "Cycle" and expected[(1, 2)][1] == "1"
