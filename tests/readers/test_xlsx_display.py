"""XLSX cells as Excel shows them, through the JSON-RPC server (and the MCP server and the CLI for
`range`): number formats, formulas beside their values, notes and threaded comments, what Excel
hides, and a window by A1 range. Real workbooks made in Excel (readxl's, tests/data/office) where
one has the feature; the rest built here with openpyxl, threads added as Excel writes them."""

from __future__ import annotations

import datetime as dt
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import openpyxl
import pytest
from openpyxl.comments import Comment

from rpc import ServerProcess, serving

DATA = Path(__file__).resolve().parents[1] / "data" / "office"
THIRDPARTY = (Path(__file__).resolve().parents[2] / ".thirdparty" / "r-cran-readxl" / "usr" / "lib" / "R" /
              "site-library" / "readxl" / "extdata")

# Values and the number formats Excel gives them, each with the text Excel shows in the cell.
FORMATS = [
    (1234.5, '"$"#,##0.00', "$1,234.50"),
    (1234567.891, "#,##0.00", "1,234,567.89"),
    (1234567, "#,##0", "1,234,567"),
    (3.14159, "0.00", "3.14"),
    (0.125, "0.0%", "12.5%"),
    (0.5, "0%", "50%"),
    (-1234.5, "#,##0.00_);[Red](#,##0.00)", "(1,234.50)"),
    (dt.date(2024, 3, 5), "d mmm yyyy", "5 Mar 2024"),
    (dt.datetime(2024, 3, 6, 9, 15), "yyyy-mm-dd hh:mm", "2024-03-06 09:15"),
    (dt.time(14, 30), "h:mm AM/PM", "2:30 PM"),
    (dt.date(2024, 3, 5), "mm-dd-yy", "2024-03-05"),  # built-in 14, the user's short date: ISO 8601
    ("007", "@", "007"),
    (1 / 3, "General", "0.3333333333333333"),  # General: the number as stored, in full
    (1234.5, "0.00E+00", "1.23E+03"),
]


def formatted(path: Path) -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Formats"
    for row, (value, code, _) in enumerate(FORMATS, 1):
        ws.cell(row, 1, code)
        ws.cell(row, 2, value).number_format = code
    wb.save(path)


def with_cached(path: Path, cell: str, value: str) -> None:
    """The workbook as Excel saves it once it has computed `cell`'s formula: its value beside it."""
    parts = _parts(path)
    sheet = parts["xl/worksheets/sheet1.xml"].decode()
    start = sheet.index(f'<c r="{cell}"')
    end = sheet.index("</c>", start)
    parts["xl/worksheets/sheet1.xml"] = (sheet[:start] + sheet[start:end].replace("<v></v>", f"<v>{value}</v>")
                                         + sheet[end:]).encode()
    _write(path, parts)


def _parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _write(path: Path, parts: dict[str, bytes]) -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    path.write_bytes(out.getvalue())


THREADS = "http://schemas.microsoft.com/office/spreadsheetml/2018/threadedcomments"
THREAD_REL = "http://schemas.microsoft.com/office/2017/10/relationships/threadedComment"
PERSON_REL = "http://schemas.microsoft.com/office/2017/10/relationships/person"


def add_thread(path: Path) -> None:
    """A thread on B2 (a comment and a reply), as Excel 365 writes one: its part and its authors',
    and the note it keeps beside it for older versions (which the thread is shown instead of)."""
    parts = _parts(path)
    ann, bob = "{11111111-1111-1111-1111-111111111111}", "{22222222-2222-2222-2222-222222222222}"
    first = "{33333333-3333-3333-3333-333333333333}"
    parts["xl/persons/person.xml"] = (
        f'<?xml version="1.0"?><personList xmlns="{THREADS}"><person displayName="Ann Lee" id="{ann}" '
        f'userId="ann" providerId="None"/><person displayName="Bob Roy" id="{bob}" userId="bob" '
        'providerId="None"/></personList>').encode()
    parts["xl/threadedComments/threadedComment1.xml"] = (
        f'<?xml version="1.0"?><ThreadedComments xmlns="{THREADS}"><threadedComment ref="B2" '
        f'dT="2024-05-01T10:00:00.00" personId="{ann}" id="{first}"><text>Is this the final figure?</text>'
        f'</threadedComment><threadedComment ref="B2" dT="2024-05-01T11:00:00.00" personId="{bob}" '
        f'id="{{44444444-4444-4444-4444-444444444444}}" parentId="{first}"><text>Yes, signed off.</text>'
        '</threadedComment></ThreadedComments>').encode()
    rels = parts["xl/worksheets/_rels/sheet1.xml.rels"].decode()
    parts["xl/worksheets/_rels/sheet1.xml.rels"] = rels.replace("</Relationships>", (
        f'<Relationship Id="rIdT1" Type="{THREAD_REL}" Target="../threadedComments/threadedComment1.xml"/>'
        "</Relationships>")).encode()
    rels = parts["xl/_rels/workbook.xml.rels"].decode()
    parts["xl/_rels/workbook.xml.rels"] = rels.replace("</Relationships>", (
        f'<Relationship Id="rIdP1" Type="{PERSON_REL}" Target="persons/person.xml"/></Relationships>')).encode()
    _write(path, parts)


def commented(path: Path, thread: bool = False) -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Budget"
    ws.append(["Item", "Amount"])
    ws.append(["Rent", 1200])
    ws.append(["Food", 300])
    ws["B2"].comment = Comment("[Threaded comment] Your version of Excel allows you to read this threaded comment"
                               if thread else "Check with the landlord", "Ann")
    ws["D9"].comment = Comment("Nothing here yet", "Bob")  # a note on an empty cell of an empty row
    wb.save(path)
    if thread:
        add_thread(path)


def hiding(path: Path) -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Visible"
    for row in range(1, 7):
        ws.append([f"a{row}", f"b{row}", f"c{row}", f"d{row}", f"e{row}"])
    ws.row_dimensions[3].hidden = True
    ws.row_dimensions[4].hidden = True
    ws.row_dimensions[6].hidden = True
    ws.column_dimensions["B"].hidden = True
    ws.column_dimensions["D"].hidden = True
    ws.column_dimensions["E"].hidden = True
    secret = wb.create_sheet("Secret")
    secret["A1"] = "salaries"
    secret.sheet_state = "hidden"
    deep = wb.create_sheet("Deep")
    deep["A1"] = "macros' data"
    deep.sheet_state = "veryHidden"
    wb.save(path)


def ranged(path: Path) -> None:
    """Two sheets, the second's name needing quotes: a grid of 40 rows × 8 columns."""
    wb = openpyxl.Workbook()
    wb.active.title = "First"
    wb.active["A1"] = "first sheet"
    for row in range(1, 6):
        for column in range(1, 9):
            wb.active.cell(row, column, f"F{row}.{column}")
    ws = wb.create_sheet("Q1 Data")
    for row in range(1, 41):
        for column in range(1, 9):
            ws.cell(row, column, f"r{row}c{column}")
    ws["C5"] = "x" * 700  # a cell the table cuts
    ws.merge_cells("B2:C2")
    ws.merge_cells("G30:H31")  # outside B2:F40's columns
    wb.save(path)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    formatted(tmp_path / "formats.xlsx")
    commented(tmp_path / "notes.xlsx")
    commented(tmp_path / "thread.xlsx", thread=True)
    hiding(tmp_path / "hidden.xlsx")
    ranged(tmp_path / "grid.xlsx")
    wb = openpyxl.Workbook()
    wb.active.append(["Rent", 1200])
    wb.active.append(["Food", 300.25])
    wb.active["B3"] = "=SUM(B1:B2)"
    wb.active["B3"].number_format = '"$"#,##0.00'
    wb.save(tmp_path / "total.xlsx")
    with_cached(tmp_path / "total.xlsx", "B3", "1500.25")
    for name in ("deaths.xlsx", "datasets.xlsx"):
        (tmp_path / name).write_bytes((DATA / name).read_bytes())
    (tmp_path / "notes.txt").write_text("plain\n")
    return tmp_path


@pytest.fixture
def server(ws: Path):
    yield from serving(ws)


def text(result: dict) -> str:
    assert not result["isError"], result
    return "\n".join(part["text"] for part in result["content"] if part["type"] == "text")


def cells(result: dict) -> dict[int, list[str]]:
    """Each table row of a reply: its number → its cells."""
    return {int(line[2:-2].split(" | ")[0]): line[2:-2].split(" | ")[1:] for line in text(result).split("\n")
            if line.startswith("| ") and line[2:].split(" | ")[0].isdigit()}


# Number formats

def test_each_cell_shows_as_its_number_format_draws_it(server: ServerProcess):
    shown = cells(server.read(path="formats.xlsx"))
    assert [shown[row][1] for row in range(1, len(FORMATS) + 1)] == [want for _, _, want in FORMATS]


def test_a_workbook_on_the_1904_calendar_shows_its_dates_as_excel_does(server: ServerProcess, ws: Path):
    from openpyxl.utils.datetime import CALENDAR_MAC_1904

    wb = openpyxl.Workbook()
    wb.epoch = CALENDAR_MAC_1904
    wb.active["A1"] = dt.date(2024, 3, 5)
    wb.active["A1"].number_format = "d mmm yyyy"
    wb.save(ws / "mac.xlsx")
    with zipfile.ZipFile(ws / "mac.xlsx") as archive:  # the serial counts days from 1904
        assert "<v>43894</v>" in archive.read("xl/worksheets/sheet1.xml").decode()
    assert cells(server.read(path="mac.xlsx"))[1] == ["5 Mar 2024"]


def test_a_format_excel_would_not_draw_shows_the_value_as_general(server: ServerProcess, ws: Path):
    wb = openpyxl.Workbook()
    for value, code in ((1e308, "#,##0"), (2958466, "yyyy-mm-dd"), (5, "0" * 300), (-5, "yyyy-mm-dd")):
        wb.active.append([value])
        wb.active.cell(wb.active.max_row, 1).number_format = code
    wb.save(ws / "odd.xlsx")
    # Past the calendar, a format over Excel's 255 characters: the value as stored. A negative date
    # is what Excel draws for it.
    assert [row[0] for row in cells(server.read(path="odd.xlsx")).values()] == ["1e+308", "2958466", "5", "########"]


def test_a_date_and_time_made_in_excel_shows_in_its_format(server: ServerProcess, tmp_path: Path):
    # type-me.xlsx (readxl) formats A4 `mm/dd/yyyy hh:mm:ss AM/PM` and A3 as the short date (14).
    source = THIRDPARTY / "type-me.xlsx"
    if not source.is_file():
        pytest.skip(f"{source} is absent: run ./scripts/fetch-thirdparty")
    (tmp_path / "type-me.xlsx").write_bytes(source.read_bytes())
    shown = cells(server.read(path="type-me.xlsx", pages="3"))
    assert shown[4][0] == "04/28/2016 11:30:00 AM" and shown[3][0] == "2016-05-23"


def test_a_formula_shows_beside_its_value_as_formatted(server: ServerProcess):
    assert cells(server.read(path="total.xlsx"))[3] == ["", "=SUM(B1:B2) → $1,500.25"]
    # deaths.xlsx (made in Excel): the formula with the value Excel computed, dates in ISO 8601.
    row = cells(server.read(path="deaths.xlsx", pages="1", offset=6, limit=1))[6]
    assert row == ["David Bowie", "musician", '=DATEDIF(E6,F6,"y") → 69', "TRUE", "1947-01-08", "2016-01-10"]


def test_find_searches_the_values_as_shown(server: ServerProcess):
    found = server.read(path="formats.xlsx", find="$1,234.50")
    assert [hit["cell"] for hit in found["shown"]["hits"]] == ["B1"]


# Comments

def test_a_note_shows_after_its_cells_value_and_on_an_empty_cell(server: ServerProcess):
    shown = cells(server.read(path="notes.xlsx"))
    assert shown[2] == ["Rent", "1200 [note, Ann: Check with the landlord]", "", ""]
    assert shown[9] == ["", "", "", "[note, Bob: Nothing here yet]"]
    hits = server.read(path="notes.xlsx", find="landlord")["shown"]["hits"]
    assert [hit["cell"] for hit in hits] == ["B2"]


def test_a_thread_shows_each_comment_with_its_author_instead_of_its_note(server: ServerProcess):
    shown = cells(server.read(path="thread.xlsx"))
    assert shown[2][1] == "1200 [comment, Ann Lee: Is this the final figure? — reply, Bob Roy: Yes, signed off.]"
    assert "Your version of Excel" not in text(server.read(path="thread.xlsx"))


def test_a_comment_naming_no_cell_is_passed_over(server: ServerProcess, ws: Path):
    parts = _parts(ws / "notes.xlsx")
    name = next(n for n in parts if n.startswith("xl/comments"))
    bad = "".join(f'<comment ref="{ref}" authorId="0"><text><t>nowhere</t></text></comment>'
                  for ref in ("", "B2:C3", "A0", "ZZZZ1"))
    parts[name] = parts[name].replace(b"<commentList>", b"<commentList>" + bad.encode())
    _write(ws / "broken.xlsx", parts)
    result = server.read(path="broken.xlsx")
    assert cells(result)[2][1] == "1200 [note, Ann: Check with the landlord]" and "nowhere" not in text(result)


def test_a_row_read_from_further_down_shows_only_its_own_notes(server: ServerProcess):
    result = server.read(path="notes.xlsx", offset=3)
    assert sorted(cells(result)) == [3, 9] and "landlord" not in text(result)


# What Excel hides

def test_hidden_rows_columns_and_sheets_are_shown_and_said_hidden(server: ServerProcess):
    result = server.read(path="hidden.xlsx")
    body = text(result)
    assert "Hidden in Excel (shown here): rows 3-4, 6; columns B, D-E" in body
    # Each cell Excel hides is shown, marked as hidden from a person, and counted.
    row, column, sheet = ("\u27e6hidden: in rows Excel hides\u27e7{}\u27e6/hidden\u27e7",
                          "\u27e6hidden: in columns Excel hides\u27e7{}\u27e6/hidden\u27e7",
                          "\u27e6hidden: in sheets Excel hides\u27e7{}\u27e6/hidden\u27e7")
    assert cells(result)[3] == [row.format(c + "3") for c in "abcde"]
    assert f"| 1 | a1 | {column.format('b1')} | c1 |" in body
    assert '--- Sheet 2 "Secret" (1 row × 1 column, hidden) ---' in body and sheet.format("salaries") in body
    assert '--- Sheet 3 "Deep" (1 row × 1 column, veryHidden) ---' in body
    assert result["hidden"]["in rows Excel hides"] == 15 and result["hidden"]["in sheets Excel hides"] == 2
    assert body.startswith("[Hidden from a person reading the file: ")
    # A window names only what it shows.
    window = text(server.read(path="hidden.xlsx", range="C5:D6"))
    assert "Hidden in Excel (shown here): row 6; column D\n" in window


# A window by range

def test_a_range_shows_its_cells_and_no_others(server: ServerProcess):
    result = server.read(path="grid.xlsx", range="'Q1 Data'!B2:D4")
    body = text(result)
    assert body.startswith('--- Sheet 2 "Q1 Data" (range B2:D4) ---\nMerged cells (value in the first cell): B2:C2\n'
                           "| row | B | C | D |\n")
    assert "G30" not in body  # a merge the range does not meet
    assert cells(result) == {2: ["r2c2", "", "r2c4"], 3: ["r3c2", "r3c3", "r3c4"], 4: ["r4c2", "r4c3", "r4c4"]}
    assert result["shown"] == {"pages": [2], "rows": [2, 4]} and not result["truncated"]
    # Without a sheet: the first sheet; a cell alone; whole columns.
    assert cells(server.read(path="grid.xlsx", range="B2:C3")) == {2: ["F2.2", "F2.3"], 3: ["F3.2", "F3.3"]}
    assert cells(server.read(path="grid.xlsx", range="First!$C$4")) == {4: ["F4.3"]}
    assert cells(server.read(path="grid.xlsx", range="h:h")) == {row: [f"F{row}.8"] for row in range(1, 6)}
    # A sheet name Excel would quote is found without its quotes too.
    assert cells(server.read(path="grid.xlsx", range="Q1 Data!B2")) == {2: ["r2c2"]}


def test_next_of_a_range_goes_on_within_it_to_its_end(server: ServerProcess):
    params = {"path": "grid.xlsx", "range": "'Q1 Data'!B6:F40", "maxBytes": 2000}
    seen: dict[int, list[str]] = {}
    replies = 0
    while True:
        result = server.read(**params)
        replies += 1
        assert not set(seen) & set(cells(result))
        seen.update(cells(result))
        if not result["truncated"]:
            break
        assert set(result["next"]) == {"range"} and result["next"]["range"].startswith("'Q1 Data'!B")
        assert result["next"]["range"].endswith(":F40")
        params = {"path": "grid.xlsx", "maxBytes": 2000, **result["next"]}
    assert replies > 1
    assert seen == {row: [f"r{row}c{column}" for column in range(2, 7)] for row in range(6, 41)}


def test_a_range_with_a_limit_stops_there_and_goes_on_within_it(server: ServerProcess):
    result = server.read(path="grid.xlsx", range="'Q1 Data'!A10:B40", limit=3)
    assert sorted(cells(result)) == [10, 11, 12]
    assert result["next"] == {"range": "'Q1 Data'!A13:B40"}
    assert text(result).endswith("""Call again with range="'Q1 Data'!A13:B40" to continue.]""")


def test_a_cell_cut_in_a_range_reads_whole_and_then_on_within_the_range(server: ServerProcess):
    result = server.read(path="grid.xlsx", range="'Q1 Data'!B5:D7")
    assert cells(result)[5][1].endswith("""range="'Q1 Data'!B5:D7", column=3 reads it whole]""")
    assert result["next"] == {"range": "'Q1 Data'!B5:D7", "column": 3}
    whole = server.read(path="grid.xlsx", **result["next"])
    assert text(whole).split("\n")[1:3] == ["C5: " + "x" * 700, "D5: r5c4"]  # E5 is past the range
    assert whole["next"] == {"range": "'Q1 Data'!B6:D7"}
    assert sorted(cells(server.read(path="grid.xlsx", **whole["next"]))) == [6, 7]


@pytest.mark.parametrize("given, says", [
    ("Nope!A1:B2", "its sheets are 'First', 'Q1 Data'"),
    ("B2:", 'must be an A1 range of one sheet: "B2:F40" (of the first sheet)'),
    ("A1:XFE2", "goes past Excel's grid"),
    ("Q" * 900 + "!A1", "its sheets are 'First', 'Q1 Data'"),
])
def test_a_bad_range_is_refused_saying_what_a_range_is(server: ServerProcess, given: str, says: str):
    answer = server.request("agentread/read", {"path": "grid.xlsx", "range": given})
    assert answer["error"]["code"] == -32602 and says in answer["error"]["message"], answer
    assert "Q" * 81 not in answer["error"]["message"]  # a value is quoted at most 80 characters


def test_a_range_is_refused_where_it_does_not_apply(server: ServerProcess):
    text_file = server.read(path="notes.txt", range="A1")
    error = text_file["error"]
    assert error["code"] == "not_for_this_kind" and "Call again without range" in error["message"]
    search = server.read(path="grid.xlsx", range="A1", find="r2")
    assert search["error"]["code"] == "not_for_this_kind"
    both = server.request("agentread/read", {"path": "grid.xlsx", "range": "B2:C3", "pages": "2"})
    assert both["error"]["code"] == -32602 and "range='B2:C3' alone" in both["error"]["message"]


def test_a_range_through_mcp_and_the_cli_reads_as_over_json_rpc(server: ServerProcess, ws: Path):
    pytest.importorskip("mcp", reason="the MCP SDK (the mcp extra) is not installed")
    from mcp_client import run, texts

    asked = {"path": "grid.xlsx", "range": "'Q1 Data'!B2:D4"}
    expected = text(server.read(**asked))

    async def calls(client):
        return [await client.call_tool("read", args) for args in (asked, {**asked, "range": "Nope!A1"})]
    good, bad = run({}, "--root", str(ws), calls=calls)
    assert texts(good).rsplit("\n", 1)[0] == expected.rsplit("\n", 1)[0]  # the last line: the session's version
    assert bad.is_error and "its sheets are 'First', 'Q1 Data'" in texts(bad)
    cli = subprocess.run([sys.executable, "-m", "agentread", "read", "grid.xlsx", "--range", asked["range"],
                          "--json"], cwd=ws, capture_output=True, text=True, check=True)
    assert json.loads(cli.stdout)["content"][0]["text"].rsplit("\n", 1)[0] == expected.rsplit("\n", 1)[0]



# Part names as some writers store them, unlike the names the package's relationships and content
# types give: OPC compares part names without regard to case, and Excel opens such a workbook.
RECASED = {"[Content_Types].xml": "[content_types].xml", "xl/sharedStrings.xml": "xl/sharedstrings.xml",
           "xl/worksheets/sheet1.xml": "xl/worksheets/Sheet1.xml", "xl/comments1.xml": "xl/Comments1.xml"}


def test_parts_stored_under_names_of_another_case_are_read(server: ServerProcess, tmp_path: Path):
    """A workbook (XlsxWriter's, strings shared as Excel writes them) whose shared strings, sheet,
    comments and content types are stored under names that differ from those its relationships
    give only in case, as in xlrd's issue150.xlsx: its text, numbers and note read, through the
    server and the CLI."""
    import xlsxwriter

    saved = io.BytesIO()
    with xlsxwriter.Workbook(saved) as book:
        sheet = book.add_worksheet("FAM")
        sheet.write_row(0, 0, ["Cycle", "A1", "A2"])
        sheet.write_row(1, 0, [1, 11698.24, 10700.21])
        sheet.write_comment("B1", "first well", {"author": "Ann"})
    out = io.BytesIO()
    with zipfile.ZipFile(saved) as source, zipfile.ZipFile(out, "w") as target:
        assert set(RECASED) <= set(source.namelist())
        for info in source.infolist():
            target.writestr(RECASED.get(info.filename, info.filename), source.read(info))
    (tmp_path / "recased.xlsx").write_bytes(out.getvalue())
    expected = ['--- Sheet 1 "FAM" (2 rows × 3 columns) ---', "| row | A | B | C |", "| --- | --- | --- | --- |",
                "| 1 | Cycle | A1 [note, Ann: first well] | A2 |", "| 2 | 1 | 11698.24 | 10700.21 |"]
    assert text(server.read(path="recased.xlsx")).split("\n")[:5] == expected
    cli = subprocess.run([sys.executable, "-m", "agentread", "read", "recased.xlsx"], cwd=tmp_path,
                         capture_output=True, text=True, check=True)
    assert cli.stdout.split("\n")[:5] == expected
