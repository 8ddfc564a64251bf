"""XLSX reads from a deep row start the parse at that row's bytes (office/sheetxml.py): the rows,
their numbers, shared formulas defined above the window and sheets without a declared extent must
read exactly as a parse from the top would show them. The sheets are written here as XML, the forms
Excel and other writers produce."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import pytest

from agentread.engine import Engine
from agentread.readers.office.sheetxml import open_from_row
from agentread.request import parse_request
from agentread.workspace import Workspace

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
ROWS = 3000


def workbook(sheet_xml: str) -> bytes:
    """A one-sheet XLSX around `sheet_xml`, with the parts every reader expects."""
    parts = {
        "[Content_Types].xml": '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
        'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships'
        '+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override '
        'PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.'
        'spreadsheetml.worksheet+xml"/></Types>',
        "_rels/.rels": '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
        'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        "xl/workbook.xml": f'<?xml version="1.0"?><workbook xmlns="{MAIN}" xmlns:r="http://schemas.openxmlformats.'
        'org/officeDocument/2006/relationships"><sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets>'
        '</workbook>',
        "xl/_rels/workbook.xml.rels": '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.'
        'org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
        'officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
        "xl/worksheets/sheet1.xml": sheet_xml,
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
    return out.getvalue()


def sheet(rows: str, prefix: str = "", dimension: bool = True) -> str:
    p = f"{prefix}:" if prefix else ""
    xmlns = f'xmlns:{prefix}="{MAIN}"' if prefix else f'xmlns="{MAIN}"'
    extent = f'<{p}dimension ref="A1:C{ROWS}"/>' if dimension else ""
    return (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<{p}worksheet {xmlns} '
            f'xmlns:x14ac="http://schemas.microsoft.com/office/spreadsheetml/2009/9/ac">{extent}<{p}sheetData>'
            f'{rows}</{p}sheetData><{p}mergeCells count="1"><{p}mergeCell ref="A1:C1"/></{p}mergeCells>'
            f'</{p}worksheet>')


def rows_with_shared_formulas(prefix: str = "", numbered: bool = True, every: int = 1) -> str:
    """Row 1 a title; rows 2.. hold n, a label and C = A*2 as one shared formula defined in C2."""
    p = f"{prefix}:" if prefix else ""
    out = [f'<{p}row r="1"><{p}c r="A1" t="inlineStr"><{p}is><{p}t>Totals</{p}t></{p}is></{p}c></{p}row>']
    for n in range(2, ROWS + 1):
        if n % every:
            continue  # a row left out, as writers leave out empty rows
        formula = (f'<{p}f t="shared" ref="C2:C{ROWS}" si="0">A2*2</{p}f>' if n == 2 else f'<{p}f t="shared" si="0"/>')
        r = f' r="{n}"' if numbered else ""
        out.append(f'<{p}row{r} spans="1:3" x14ac:dyDescent="0.25"><{p}c r="A{n}"><{p}v>{n}</{p}v></{p}c>'
                   f'<{p}c r="B{n}" t="inlineStr"><{p}is><{p}t>item {n}</{p}t></{p}is></{p}c>'
                   f'<{p}c r="C{n}">{formula}<{p}v>{2 * n}</{p}v></{p}c></{p}row>')
    return "".join(out)


def read(tmp_path: Path, data: bytes, **params):
    (tmp_path / "book.xlsx").write_bytes(data)
    result = Engine(Workspace([str(tmp_path)])).read(parse_request({"path": "book.xlsx", **params}))
    assert not result.is_error, result.text()
    return result


def table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"^\| \d+ \|", line)]


@pytest.mark.parametrize("prefix", ["", "x"])
def test_a_deep_window_shows_its_rows_and_shared_formulas_defined_above_it(tmp_path, prefix):
    result = read(tmp_path, workbook(sheet(rows_with_shared_formulas(prefix), prefix)), offset=2500, limit=3)
    assert table_rows(result.text()) == [
        f"| {n} | {n} | item {n} | =A{n}*2 → {2 * n} |" for n in (2500, 2501, 2502)]
    assert result.next == {"pages": "1", "offset": 2503}
    assert "Merged cells (value in the first cell): A1:C1" in result.text()


def test_the_deep_window_equals_the_same_rows_read_from_the_top(tmp_path):
    data = workbook(sheet(rows_with_shared_formulas(every=3)))  # only every third row exists
    deep = table_rows(read(tmp_path, data, offset=2000, limit=60).text())
    walked, params = [], {}
    while True:  # from the top, following next
        result = read(tmp_path, data, **params)
        walked += table_rows(result.text())
        if not result.next:
            break
        params = result.next
    from_top = [row for row in walked if 2000 <= int(row.split("|")[1]) < 2060]
    assert deep == from_top and deep[0].startswith("| 2001 |")  # 2000 is left out: the window starts at 2001


def test_a_sheet_without_its_extent_reads_first_and_deep_windows(tmp_path):
    data = workbook(sheet(rows_with_shared_formulas(), dimension=False))
    assert table_rows(read(tmp_path, data, limit=2).text())[1] == "| 2 | 2 | item 2 | =A2*2 → 4 |"
    assert table_rows(read(tmp_path, data, offset=ROWS, limit=5).text()) == [f"| {ROWS} | {ROWS} | item {ROWS} | "
                                                                             f"=A{ROWS}*2 → {2 * ROWS} |"]


def test_rows_without_numbers_are_parsed_from_the_top(tmp_path):
    data = workbook(sheet(rows_with_shared_formulas(numbered=False)))
    xml = zipfile.ZipFile(io.BytesIO(data)).open("xl/worksheets/sheet1.xml")
    assert open_from_row(xml, 100) is None  # the bytes cannot tell where row 100 is
    assert table_rows(read(tmp_path, data, offset=100, limit=1).text()) == ["| 100 | 100 | item 100 | =A100*2 → 200 |"]


def test_an_offset_past_the_last_row_is_an_error_that_says_so(tmp_path):
    (tmp_path / "book.xlsx").write_bytes(workbook(sheet(rows_with_shared_formulas())))
    result = Engine(Workspace([str(tmp_path)])).read(parse_request({"path": "book.xlsx", "offset": ROWS + 10}))
    assert result.error.code == "offset_past_end" and "past the end of sheet 1" in result.text()


def test_a_workbook_listing_thousands_of_sheets_is_refused_at_once(tmp_path):
    from agentread.readers.office import MAX_SECTIONS

    data = workbook(sheet(rows_with_shared_formulas()))
    listed = "".join(f'<sheet name="S{n}" sheetId="{n}" r:id="rId1"/>' for n in range(1, MAX_SECTIONS + 2))
    with zipfile.ZipFile(io.BytesIO(data)) as original:
        parts = {name: original.read(name) for name in original.namelist()}
    parts["xl/workbook.xml"] = re.sub(rb"<sheets>.*</sheets>", f"<sheets>{listed}</sheets>".encode(),
                                      parts["xl/workbook.xml"])
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, body in parts.items():
            archive.writestr(name, body)
    (tmp_path / "many.xlsx").write_bytes(out.getvalue())
    result = Engine(Workspace([str(tmp_path)])).read(parse_request({"path": "many.xlsx"}))
    assert result.error.code == "too_complex" and f"{MAX_SECTIONS + 1:,} sheets" in result.text()


def test_every_row_is_found_wherever_the_scan_chunks_cut_its_tag(tmp_path, monkeypatch):
    from agentread.readers.office import sheetxml

    # Chunks of a few hundred bytes cut row tags and shared formula cells at every possible place.
    monkeypatch.setattr(sheetxml, "SCAN_CHUNK", 300)
    monkeypatch.setattr(sheetxml, "CARRY_BYTES", 150)
    data = workbook(sheet(rows_with_shared_formulas()))
    for offset in range(2, 80):
        assert table_rows(read(tmp_path, data, offset=offset, limit=1).text()) == [
            f"| {offset} | {offset} | item {offset} | =A{offset}*2 → {2 * offset} |"], offset
