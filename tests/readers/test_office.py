"""Office documents through the engine: real files (tests/data/office, see SOURCES.md) and files
generated here for the edge cases (merged cells, a 100,000-row sheet, notes, tables and images,
legacy and encrypted files)."""

from __future__ import annotations

import io
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from PIL import Image

from agentread.engine import Engine
from agentread.readers.office_detect import ooxml_format
from agentread.request import InvalidParams, parse_request
from agentread.result import ImagePart
from agentread.sniff import sniff
from agentread.workspace import Workspace
from builders import chart_deck

DATA = Path(__file__).resolve().parents[1] / "data" / "office"


def read(root: Path, **params):
    return Engine(Workspace([str(root)])).read(parse_request(params))


def text_of(result) -> str:
    assert not result.is_error, result.text()
    return result.text()


def images(result) -> list[ImagePart]:
    return [p for p in result.content if isinstance(p, ImagePart)]


def png(color: str, size=(64, 48)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, "PNG")
    return out.getvalue()


@pytest.fixture
def real(tmp_path: Path) -> Path:
    for f in DATA.iterdir():
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


# Detection: by content, not by name.

@pytest.mark.parametrize("name, kind", [("docx-test.docx", "docx"), ("deaths.xlsx", "xlsx"),
                                        ("pptx-test-slides.pptx", "pptx")])
def test_real_files_are_told_apart_by_content(name: str, kind: str):
    head = (DATA / name).read_bytes()[:65536]
    assert ooxml_format(head) == kind
    assert sniff(head, "renamed.bin").kind == "office"


def test_a_plain_zip_is_an_archive_not_a_document(tmp_path: Path):
    import zipfile

    with zipfile.ZipFile(tmp_path / "a.zip", "w") as z:
        z.writestr("word/notes.txt", "not a document")
    assert sniff((tmp_path / "a.zip").read_bytes(), "a.docx").kind == "archive"


def test_a_docx_renamed_is_read_as_a_docx(real: Path):
    (real / "docx-test.docx").rename(real / "report.dat")
    assert "# python-docx was here!" in text_of(read(real, path="report.dat"))


# DOCX

def test_real_docx_heading_and_paragraph(real: Path):
    result = read(real, path="docx-test.docx")
    assert result.kind == "document"
    assert text_of(result).splitlines()[:2] == ["     1\t# python-docx was here!", "     2\tpython-docx was here too!"]


def test_real_docx_comments_are_marked_and_listed(real: Path):
    text = text_of(read(real, path="docx-comments.docx"))
    assert "Some text worthy of note.[comment 0]" in text
    # with its author, the text it is on, and its link resolved in the comments' own part
    assert ('[comment 0] Steve Canny on "Some text worthy of note.": Text with hyperlink '
            "[https://google.com](https://google.com) embedded.") in text


def test_real_docx_images_are_attached_after_their_lines(real: Path):
    result = read(real, path="docx-having-images.docx")
    assert len(images(result)) == 6  # five in the body, one in its header
    assert "Header (section 1):\n     9\t[image 6: word/media/image3.png" in text_of(result)
    assert "[image 1: word/media/image1.png, image/png 211x71, attached]" in text_of(result)
    first = result.content.index(images(result)[0])
    assert result.content[first - 1].text.endswith("attached]")


@pytest.fixture
def report(tmp_path: Path) -> Path:
    import docx

    d = docx.Document()
    d.add_heading("Annual report", level=1)
    d.add_paragraph("Intro paragraph.")
    d.add_heading("Numbers", level=2)
    d.add_paragraph("first point", style="List Bullet")
    d.add_paragraph("second point", style="List Bullet")
    table = d.add_table(rows=3, cols=3)
    for r, row in enumerate([["Region", "Q1", "Q2"], ["North", "10", "12"], ["South", "7", "a|b"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    table.cell(0, 1).merge(table.cell(0, 2))  # "Q1" spans two columns
    for n in range(12):
        d.add_picture(io.BytesIO(png(["red", "green", "blue"][n % 3])))
    for n in range(3000):
        d.add_paragraph(f"filler line {n}")
    d.save(tmp_path / "report.docx")
    return tmp_path


def test_generated_docx_headings_lists_tables(report: Path):
    text = text_of(read(report, path="report.docx", limit=20))
    lines = [line.split("\t", 1)[1] for line in text.splitlines() if "\t" in line]
    assert lines[:5] == ["# Annual report", "Intro paragraph.", "## Numbers", "- first point", "- second point"]
    assert "| Region | Q1<br>Q2 |  |" in lines
    assert "| South | 7 | a\\|b |" in lines


def test_generated_docx_images_within_the_per_call_budget(report: Path):
    result = read(report, path="report.docx", limit=40)
    assert len(images(result)) == 10
    assert "not attached: at most 10 images" in result.text()
    held = re.search(r"not attached: .* offset=(\d+) to see them", result.text()).group(1)
    again = read(report, path="report.docx", offset=int(held), limit=5)
    assert len(images(again)) >= 1


def test_generated_docx_pages_by_offset_and_next(report: Path):
    first = read(report, path="report.docx")
    assert first.truncated and first.next == {"offset": first.end_line + 1}
    assert first.end_line <= 2000
    second = read(report, path="report.docx", **first.next)
    assert second.start_line == first.end_line + 1
    assert f"{second.start_line:6d}\tfiller line" in second.text()
    last = read(report, path="report.docx", offset=second.total_lines)
    assert not last.truncated and last.next is None
    past = read(report, path="report.docx", offset=second.total_lines + 5)
    assert past.error.code == "offset_past_end"
    end = read(report, path="report.docx", offset=-1)  # counted back from the end: the last line
    assert (end.start_line, end.end_line) == (second.total_lines, second.total_lines)
    assert end.text() == last.text()


# XLSX

def test_real_xlsx_formulas_dates_merges(real: Path):
    result = read(real, path="deaths.xlsx")
    text = text_of(result)
    assert result.kind == "spreadsheet" and result.total_pages == 2
    assert '--- Sheet 1 "arts" (19 rows × 6 columns) ---' in text
    assert "Merged cells (value in the first cell): B4:E4" in text
    assert '| 6 | David Bowie | musician | =DATEDIF(E6,F6,"y") → 69 | TRUE | 1947-01-08 | 2016-01-10 |' in text
    assert '--- Sheet 2 "other"' in text


def test_real_xlsx_declaring_a_wrong_extent_is_read_whole(real: Path):
    # datasets.xlsx declares A1:A1 for full sheets; the rows and columns are found by reading them.
    text = text_of(read(real, path="datasets.xlsx", pages="mtcars"))
    assert '--- Sheet 2 "mtcars" (33 rows × 11 columns) ---' in text
    assert "| 1 | mpg | cyl |" in text


def test_xlsx_pages_pick_sheets_and_offset_picks_rows(real: Path):
    result = read(real, path="deaths.xlsx", pages="2", offset=10, limit=2)
    text = text_of(result)
    assert '--- Sheet 2 "other"' in text and "| 10 | Antonin Scalia |" in text and "| 11 | Jo Cox |" in text
    assert "| 12 |" not in text
    assert result.next == {"pages": "2", "offset": 12}
    from_end = read(real, path="deaths.xlsx", pages="2", offset=-2)
    assert from_end.error.code == "offset_from_end" and "offset=N" in from_end.text()
    assert read(real, path="deaths.xlsx", pages="3").error.code == "page_out_of_range"
    with pytest.raises(InvalidParams):
        read(real, path="deaths.xlsx", pages="no such sheet")


@pytest.fixture
def big(tmp_path: Path) -> Path:
    import openpyxl

    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("Data")
    ws.append(["id", "name", "amount", "double"])
    for n in range(2, 100_002):
        ws.append([n, f"item {n}", n * 1.5, f"=C{n}*2"])
    other = wb.create_sheet("Summary")
    other.append(["total", "=SUM(Data!C2:C100001)"])
    wb.save(tmp_path / "big.xlsx")
    return tmp_path


def test_100k_row_sheet_pages_by_rows_and_next_reaches_the_next_sheet(big: Path):
    first = read(big, path="big.xlsx")
    text = text_of(first)
    # A write-only openpyxl file declares no extent: the total is known once a read reaches the end.
    assert text.startswith('--- Sheet 1 "Data" (more than 1,')
    assert "| 2 | 2 | item 2 | 3 | =C2*2 |" in text  # never computed by Excel: the formula alone
    assert first.truncated and first.next["pages"] == "1-2"
    row = first.next["offset"]
    assert f"| {row - 1} |" in text and f"| {row} |" not in text
    deep = read(big, path="big.xlsx", pages="1-2", offset=99_990)
    deep_text = text_of(deep)
    assert deep_text.startswith('--- Sheet 1 "Data" (100,001 rows × 4 columns) ---')
    assert "| 100001 | 100001 | item 100001 |" in deep_text
    assert '--- Sheet 2 "Summary"' in deep_text and "=SUM(Data!C2:C100001)" in deep_text
    assert not deep.truncated


def test_generated_merged_cells_and_cached_values(tmp_path: Path):
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Plan"
    ws["A1"] = "Merged title"
    ws.merge_cells("A1:C1")
    ws["A3"], ws["B3"] = 2, "=A3*10"
    wb.save(tmp_path / "plan.xlsx")
    text = text_of(read(tmp_path, path="plan.xlsx"))
    assert "Merged cells (value in the first cell): A1:C1" in text
    assert "| 1 | Merged title |  |  |" in text
    assert "\n| 2 |" not in text  # an empty row is left out; the numbers say where
    assert "| 3 | 2 | =A3*10 |  |" in text


def test_a_wide_xlsx_row_ends_at_a_cell_naming_the_column_that_reads_on(tmp_path: Path):
    import openpyxl

    wb = openpyxl.Workbook()
    wb.active.append(["wide", *(f"value {i} " * 20 for i in range(40))])
    wb.save(tmp_path / "wide.xlsx")
    result = read(tmp_path, path="wide.xlsx")
    row = text_of(result).split("\n")[3]
    column = int(re.search(r'; pages="1", offset=1, column=(\d+) reads on\] \|$', row).group(1))
    assert len(row) <= 2000 and row.count(" | ") == column  # the row number, then columns A to the one before
    assert result.truncated and result.next == {"pages": "1", "offset": 1, "column": column}
    rest = text_of(read(tmp_path, path="wide.xlsx", **result.next)).split("\n")
    assert rest[1] == f"{openpyxl.utils.get_column_letter(column)}1: value {column - 2} " + f"value {column - 2} " * 19
    # Its header, then every cell from there to AO (the 41st), and nothing follows.
    assert len(rest) == 1 + 41 - column + 1 and rest[-1].startswith("AO1: ")
    past = read(tmp_path, path="wide.xlsx", pages="1", offset=1, column=50)
    assert past.error.code == "offset_past_end" and "column AX (50)" in past.error.message


def test_a_cut_xlsx_row_is_the_one_call_that_reads_on(tmp_path: Path):
    import openpyxl

    wb = openpyxl.Workbook()
    wb.active.append([f"cell {i} " + "x" * 60 for i in range(30)])
    wb.active.append(["a" * 300, "b"])
    wb.save(tmp_path / "wide.xlsx")
    result = read(tmp_path, path="wide.xlsx", maxBytes=1400)
    *_, stop, cut = text_of(result).split("\n")
    # The row after the cut one waits for a later call; the cut is where this one goes on, and the
    # only call the reply names.
    assert stop == "[Sheet 1 stops before row 2 (output limit of 1,400 bytes).]"
    assert result.next == {"pages": "1", "offset": 1, "column": 13} and cut.endswith('offset=1, column=13.]')


def test_an_xlsx_cell_over_a_whole_reply_reads_on_with_char(tmp_path: Path):
    from builders import workbook

    cell = "".join(chr(0x4E00 + i % 5000) for i in range(30_000))  # 90,000 bytes: more than a reply of 50 KB
    (tmp_path / "cell.xlsx").write_bytes(workbook({"B2": cell}))
    first = read(tmp_path, path="cell.xlsx", pages="1", offset=2, column=2)
    char = first.next["char"]
    assert first.next == {"pages": "1", "offset": 2, "column": 2, "char": char} and 10_000 < char < 17_000
    assert text_of(first).split("\n")[1] == (f"B2: {cell[:char - 1]} [… cell B2 cut at character {char - 1:,} of "
                                             f'30,000; pages="1", offset=2, column=2, char={char} reads on]')
    rest = read(tmp_path, path="cell.xlsx", **first.next)
    assert text_of(rest).split("\n")[1] == f"B2 from character {char:,}: {cell[char - 1:]}" and rest.next is None
    past = read(tmp_path, path="cell.xlsx", pages="1", offset=2, column=2, char=30_001)
    assert past.error.code == "offset_past_end" and "30,000 characters" in past.error.message
    with pytest.raises(InvalidParams, match="'char' reads on inside one cell"):
        read(tmp_path, path="cell.xlsx", pages="1", offset=2, char=5)


# PPTX

def test_real_pptx_slide_with_pictures_group_and_table(real: Path):
    result = read(real, path="pptx-test-slides.pptx")
    text = text_of(result)
    assert result.kind == "presentation" and result.total_pages >= 1
    assert "--- Slide 1 ---" in text
    assert "| Col head 1 | Col head 2 |" in text and "Group test text" in text
    assert len(images(result)) == 2


def test_real_pptx_notes(real: Path):
    assert "Notes:" in text_of(read(real, path="pptx-notes.pptx", pages="1"))


@pytest.fixture
def deck(tmp_path: Path) -> Path:
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    for n in range(1, 31):
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = f"Slide title {n}"
        slide.placeholders[1].text_frame.text = f"body point {n}"
        slide.notes_slide.notes_text_frame.text = f"say this on slide {n}"
        if n % 5 == 0:
            rows = slide.shapes.add_table(2, 2, Inches(1), Inches(5), Inches(4), Inches(1)).table
            rows.cell(0, 0).text, rows.cell(1, 1).text = "head", f"value {n}"
        if n <= 12:
            slide.shapes.add_picture(io.BytesIO(png("navy")), Inches(6), Inches(6))
    prs.save(tmp_path / "deck.pptx")
    return tmp_path


def test_generated_deck_slides_notes_tables_images(deck: Path):
    result = read(deck, path="deck.pptx", pages="5")
    text = text_of(result)
    for want in ("--- Slide 5 ---", "# Slide title 5", "body point 5", "Notes:", "say this on slide 5",
                 "| head |  |", "|  | value 5 |"):
        assert want in text
    assert len(images(result)) == 1 and result.total_pages == 30


def test_generated_deck_image_budget_and_paging(deck: Path):
    result = read(deck, path="deck.pptx")
    assert len(images(result)) == 10
    assert "not attached: at most 10 images" in result.text()
    window = read(deck, path="deck.pptx", pages="2-29", limit=10)
    assert window.next == {"pages": "2-29", "offset": 11}
    again = read(deck, path="deck.pptx", **window.next, limit=10)
    assert again.start_line == 11
    assert read(deck, path="deck.pptx", pages="31").error.code == "page_out_of_range"


# Legacy and encrypted files: tests/readers/test_legacy.py

def test_damaged_office_file(tmp_path: Path, real: Path):
    data = (real / "docx-test.docx").read_bytes()
    (tmp_path / "cut.docx").write_bytes(data[: len(data) // 2])
    result = read(tmp_path, path="cut.docx")
    assert result.error.code == "damaged_office"


# Found by bench/fuzz.py.

@pytest.mark.parametrize("name, pages", [("pptx-test-slides.pptx", "2-"), ("deaths.xlsx", "3-")])
def test_an_open_range_past_the_last_slide_or_sheet_is_out_of_range(real: Path, name: str, pages: str):
    # Not a malformed range: the model asked for slides (sheets) from one past the last, which it
    # could not know.
    assert read(real, path=name, pages=pages).error.code == "page_out_of_range"


def test_a_member_compressed_by_an_unknown_method_is_a_damaged_file(tmp_path: Path):
    data = bytearray((DATA / "docx-test.docx").read_bytes())
    assert data.startswith(b"PK\x03\x04") and data[30:49] == b"[Content_Types].xml"
    central = data.index(b"PK\x01\x02")
    data[8:10] = data[central + 10:central + 12] = (99).to_bytes(2, "little")  # its local and central headers
    (tmp_path / "f.docx").write_bytes(data)
    result = read(tmp_path, path="f.docx")
    assert result.error.code == "damaged_office" and "compression method" in result.error.message


def test_a_bloated_workbook_part_is_parsed_without_openpyxls_workbook_model(tmp_path: Path, monkeypatch):
    # openpyxl models the workbook part whole as it loads; one repeated 20,000 times (41 KB zipped)
    # cost seconds a load. The reader takes the sheet list from the part itself (office/sheetxml.py)
    # and never loads it so.
    from openpyxl.reader.excel import ExcelReader

    with zipfile.ZipFile(DATA / "deaths.xlsx") as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    view = re.search(rb"<workbookView[^>]*/>", parts["xl/workbook.xml"]).group(0)
    parts["xl/workbook.xml"] = parts["xl/workbook.xml"].replace(view, view * 20_000)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in parts.items():
            archive.writestr(name, body)
    (tmp_path / "bloated.xlsx").write_bytes(out.getvalue())
    loads = []  # every way of loading a workbook (openpyxl.load_workbook included) runs ExcelReader.read
    real_read = ExcelReader.read
    monkeypatch.setattr(ExcelReader, "read", lambda self, *a, **k: loads.append(self) or real_read(self, *a, **k))
    assert "Antonin Scalia" in text_of(read(tmp_path, path="bloated.xlsx", pages="2"))
    assert "Antonin Scalia" in text_of(read(tmp_path, path="bloated.xlsx", pages="2-3"))
    assert not loads


# `shown`: what a reply holds, without parsing its text.

def test_shown_docx_lines(report: Path):
    first = read(report, path="report.docx", limit=50)
    assert first.shown == {"lines": [1, 50]}
    assert read(report, path="report.docx", offset=100, limit=7).shown == {"lines": [100, 106]}


def test_shown_pptx_slides_and_lines(deck: Path):
    one = read(deck, path="deck.pptx", pages="5")
    assert one.shown["pages"] == [5] and one.shown["lines"] == [1, one.end_line]
    window = read(deck, path="deck.pptx", pages="2-9", offset=4, limit=12)
    text = text_of(window)
    slides = [int(n) for n in re.findall(r"--- Slide (\d+) ---", text)]
    # The window starts inside slide 2 (after its header) and ends in a slide whose header it shows.
    assert window.shown["lines"] == [4, 15] and window.shown["pages"] == [2, *slides]
    assert window.shown["pages"] == list(range(2, window.shown["pages"][-1] + 1))


def test_shown_xlsx_sheets_and_rows(real: Path, big: Path):
    both = read(real, path="deaths.xlsx")
    assert both.shown == {"pages": [1, 2], "rows": [1, 19]}  # the rows of sheet 2, the last listed
    rows = read(real, path="deaths.xlsx", pages="2", offset=10, limit=2)
    assert rows.shown == {"pages": [2], "rows": [10, 11]}
    first = read(big, path="big.xlsx")
    assert first.shown == {"pages": [1], "rows": [1, first.next["offset"] - 1]}


# Equations, charts, titles and alt texts in real files (markitdown's test files, MIT)

def test_real_docx_equations_read_as_latex_inline_and_display(real: Path):
    lines = text_of(read(real, path="markitdown-equations.docx")).splitlines()
    assert lines[0] == "     1\tFor $m=1$,"
    assert lines[1].endswith("\t$$sin θ=\\frac{mλ}{a}=\\frac{(1)(550×{10}^{-6} mm)}{2.5 mm}=2.2×{10}^{-4}$$")
    assert "\tThe angle is $θ={sin}^{-1} (2.2×{10}^{-4})=2.2×{10}^{-4}rad$." in lines[2]
    assert lines[4].endswith("\t$$\\frac{a}{λ}=\\frac{m}{sin θ}=\\frac{1}{sin {45.0}^{∘}}=1.41.$$")


def test_real_pptx_chart_data_as_a_table_under_its_title(real: Path):
    text = text_of(read(real, path="markitdown-test.pptx", pages="4"))
    assert "[chart: a3f6004b-6f4f-4ea8-bee3-3741f4dc385f (column clustered)]\n" \
           "     4\t| category | Series 1 |\n     5\t| --- | --- |\n     6\t| 2000 | 2000 |" in text
    assert "     9\t| 2003 | 2003 |" in text


def test_generated_chart_data_is_shown_whole_every_row_and_series(tmp_path: Path):
    (tmp_path / "big-chart.pptx").write_bytes(chart_deck(200, 20))
    result = read(tmp_path, path="big-chart.pptx")
    text = text_of(result)
    assert not result.truncated and "cut" not in text
    assert "| category | s1 | s2 |" in text and "| s20 |" in text
    assert "| day 200 | 200 | 400 |" in text and text.rstrip().endswith("| 4000 |")


def test_a_chart_of_more_rows_than_a_reply_is_read_to_its_last_row_by_following_next(tmp_path: Path):
    (tmp_path / "long-chart.pptx").write_bytes(chart_deck(3000))
    params: dict = {"path": "long-chart.pptx", "pages": "1"}
    rows: list[str] = []
    for _ in range(10):
        result = read(tmp_path, **params)
        rows += re.findall(r"\| (day \d+) \|", text_of(result))
        if not result.truncated:
            break
        params = {"path": "long-chart.pptx", **result.next}
    assert rows == [f"day {n}" for n in range(1, 3001)]


def test_real_pptx_slide_title_once(real: Path):
    text = text_of(read(real, path="markitdown-test.pptx"))
    assert text.count("A table to test parsing:") == 1
    assert "     6\t# 2cdda5c8-e50e-4db4-b5f0-9722a649f455\n     7\t[image 1: ppt/media/image1.jpeg" in text


def test_real_docx_multiline_alt_text_is_one_numbered_line(real: Path):
    result = read(real, path="markitdown-test.docx")
    text = text_of(result)
    numbered = [line for line in text.splitlines() if re.match(r" {0,5}\d+\t", line)]
    assert [int(line.split("\t")[0]) for line in numbered] == list(range(1, len(numbered) + 1))
    assert '    22\t[image 1: word/media/image1.png "图形用户界面, 文本, 应用程序, 信件 AI 生成的内容可能不正确。", ' \
           "image/png 1274x870, attached]" in text
    assert result.total_lines == 22 and len(images(result)) == 1


# Pictures in Word files

def test_real_docx_picture_with_its_alt_text_at_its_place(real: Path):
    result = read(real, path="markitdown-test.docx")
    text_part, image, closing = result.content  # the closing line: its line 10 is cut at 2,000 characters
    assert "offset=10, column=2001" in closing.text
    assert text_part.text.rstrip("\n").endswith("    20\t\n    21\tTest Image:\n    22\t"
                                                 "[image 1: word/media/image1.png "
                                                 "\"图形用户界面, 文本, 应用程序, 信件 AI 生成的内容可能不正确。\", "
                                                 "image/png 1274x870, attached]")
    assert (image.mime_type, image.width, image.height) == ("image/png", 1274, 870)


def test_a_word_metafile_picture_is_named_and_the_others_attached_in_order(tmp_path: Path):
    """A picture stored as EMF (python-pptx's own icon, a real metafile) between two PNGs."""
    import docx
    import pptx

    document = docx.Document()
    for n, color in enumerate(("red", "blue", "green"), 1):
        document.add_paragraph(f"figure {n}")
        document.add_picture(io.BytesIO(png(color, (20 + n, 10))))
    document.save(tmp_path / "built.docx")
    emf = (Path(pptx.__file__).parent / "templates" / "docx-icon.emf").read_bytes()
    with zipfile.ZipFile(tmp_path / "built.docx") as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    media = sorted(m for m in members if m.startswith("word/media/"))
    assert len(media) == 3
    second = media[1]
    members[second.replace(".png", ".emf")] = emf
    del members[second]
    rels = "word/_rels/document.xml.rels"
    members[rels] = members[rels].replace(second.split("/", 1)[1].encode(), second.split("/", 1)[1]
                                          .replace(".png", ".emf").encode())
    members["[Content_Types].xml"] = members["[Content_Types].xml"].replace(
        b"<Default ", b'<Default Extension="emf" ContentType="image/x-emf"/><Default ', 1)
    with zipfile.ZipFile(tmp_path / "pictures.docx", "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    result = read(tmp_path, path="pictures.docx")
    text = text_of(result)
    assert re.search(r"figure 2\n     4\t\[image 2: word/media/image\d\.emf, not attached: it could not be decoded "
                     r"\(it is a Windows metafile \(EMF, 104x65\), which Pillow draws only on Windows; ask the user "
                     r"for a PNG export to see it\)\]", text)
    assert [(p.width, p.height) for p in images(result)] == [(21, 10), (23, 10)]


def test_a_chart_of_a_kind_python_pptx_does_not_model_is_read_from_its_part(tmp_path: Path):
    from pptx import Presentation
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    data = CategoryChartData()
    data.categories = ["a", "b"]
    data.add_series("s", [1, 2])
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[6])
    slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, 0, 0, Inches(4), Inches(3), data)
    slide.shapes.add_textbox(0, Inches(4), Inches(4), Inches(1)).text_frame.text = "after the chart"
    buffer = io.BytesIO()
    prs.save(buffer)
    with zipfile.ZipFile(buffer) as z, zipfile.ZipFile(tmp_path / "surface.pptx", "w") as out:
        for info in z.infolist():
            body = z.read(info)
            out.writestr(info, body.replace(b"c:barChart>", b"c:surfaceChart>") if "charts/chart" in info.filename
                         else body)
    text = text_of(read(tmp_path, path="surface.pptx"))
    assert "\t[chart: (surface)]\n     3\t| category | s |\n     4\t| --- | --- |\n     5\t| a | 1 |\n" \
           "     6\t| b | 2 |\n     7\tafter the chart" in text


def _docx_with_math(folder: Path, *omml: str) -> Path:
    import docx
    from docx.oxml import parse_xml

    m = 'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"'
    document = docx.Document()
    for xml in omml:
        paragraph = document.add_paragraph("eq: ")
        paragraph._p.append(parse_xml(xml.replace("<m:oMath>", f"<m:oMath {m}>", 1)))
    document.save(folder / "math.docx")
    return folder


def _r(text: str) -> str:
    return f"<m:r><m:t>{text}</m:t></m:r>"


def test_generated_equations_fraction_root_sum_matrix_and_accent(tmp_path: Path):
    omml = [f"<m:oMath><m:f><m:num>{_r('a')}</m:num><m:den>{_r('b+1')}</m:den></m:f></m:oMath>",
            f"<m:oMath><m:rad><m:deg>{_r('3')}</m:deg><m:e>{_r('x')}</m:e></m:rad></m:oMath>",
            f'<m:oMath><m:nary><m:naryPr><m:chr m:val="∑"/></m:naryPr><m:sub>{_r("i=1")}</m:sub>'
            f"<m:sup>{_r('n')}</m:sup><m:e>{_r('i')}</m:e></m:nary></m:oMath>",
            f"<m:oMath><m:m><m:mr><m:e>{_r('1')}</m:e><m:e>{_r('0')}</m:e></m:mr>"
            f"<m:mr><m:e>{_r('0')}</m:e><m:e>{_r('1')}</m:e></m:mr></m:m></m:oMath>",
            f'<m:oMath><m:acc><m:accPr><m:chr m:val="\u20d7"/></m:accPr><m:e>{_r("v")}</m:e></m:acc></m:oMath>',
            "<m:oMath>" + "<m:d><m:e>" * 100 + _r("deep") + "</m:e></m:d>" * 100 + "</m:oMath>"]
    lines = text_of(read(_docx_with_math(tmp_path, *omml), path="math.docx")).splitlines()
    assert [line.split("\t", 1)[1] for line in lines[:5]] == [
        "eq: $\\frac{a}{b+1}$", "eq: $\\sqrt[3]{x}$", "eq: $\\sum_{i=1}^{n} i$",
        "eq: $\\begin{matrix}1 & 0 \\\\ 0 & 1\\end{matrix}$", "eq: $\\vec{v}$"]
    # Nesting past MAX_DEPTH is given as its text: the outer brackets, then the innermost text.
    assert re.fullmatch(r" +6\teq: \$\(+deep\)+\$", lines[5]) and lines[5].count("(") < 100


def test_generated_equations_with_scripts_and_limits(tmp_path: Path):
    omml = [f"<m:oMath><m:sSub><m:e>{_r('x')}</m:e><m:sub>{_r('i')}</m:sub></m:sSub></m:oMath>",
            f"<m:oMath><m:sSubSup><m:e>{_r('x')}</m:e><m:sub>{_r('i')}</m:sub><m:sup>{_r('2')}</m:sup></m:sSubSup>"
            "</m:oMath>",
            f"<m:oMath><m:limLow><m:e>{_r('lim')}</m:e><m:lim>{_r('n→∞')}</m:lim></m:limLow></m:oMath>",
            f"<m:oMath><m:limUpp><m:e>{_r('a+b')}</m:e><m:lim>{_r('k')}</m:lim></m:limUpp></m:oMath>"]
    lines = text_of(read(_docx_with_math(tmp_path, *omml), path="math.docx")).splitlines()
    assert [line.split("\t", 1)[1] for line in lines[:4]] == [
        "eq: $x_{i}$", "eq: $x_{i}^{2}$", "eq: ${lim}_{n→∞}$", "eq: ${a+b}^{k}$"]


def _table_files(folder: Path, cell: str) -> None:
    """A DOCX and a PPTX, each with a table whose second row holds `cell`, and a line after it."""
    import docx
    import pptx
    from pptx.util import Inches

    document = docx.Document()
    document.add_paragraph("before")
    table = document.add_table(rows=2, cols=2)
    for (row, column), text in {(0, 0): "name", (0, 1): "note", (1, 0): "long", (1, 1): cell}.items():
        table.cell(row, column).text = text
    document.add_paragraph("after")
    document.save(folder / "cell.docx")
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    grid = slide.shapes.add_table(2, 2, Inches(1), Inches(1), Inches(6), Inches(2)).table
    for (row, column), text in {(0, 0): "name", (0, 1): "note", (1, 0): "long", (1, 1): cell}.items():
        grid.cell(row, column).text = text
    deck.slides.add_slide(deck.slide_layouts[6])
    deck.save(folder / "cell.pptx")


@pytest.mark.parametrize("name", ["cell.docx", "cell.pptx"])
def test_a_3000_character_table_cell_is_read_to_its_end_by_following_next(tmp_path: Path, name: str):
    cell = " ".join(f"word{i}" for i in range(600))[:2995] + " LAST"
    _table_files(tmp_path, cell)
    first = read(tmp_path, path=name)
    assert first.truncated and first.next["column"] == 2001
    row_line = first.next["offset"]
    pieces, params = [], {"path": name}
    for _ in range(5):
        result = read(tmp_path, **params)
        text = text_of(result)
        line = next(x for x in text.splitlines() if x.startswith(f"{row_line:6}\t"))
        pieces.append(line.split("\t", 1)[1].split(" [… line cut at character")[0])
        if result.next is None:
            break
        assert result.truncated and result.next["offset"] == row_line
        params = {"path": name, **result.next}
    assert not result.truncated and len(pieces) == 2
    assert "".join(pieces) == f"| long | {cell} |"  # every character of the row, the cell whole
    hit = read(tmp_path, path=name, find="LAST").shown["hits"][0]
    assert hit["column"] == len(f"| long | {cell}") - 3  # past the cell's 500th character and the line's 2,000th
    assert "LAST" in text_of(read(tmp_path, path=name, **hit["read"]))
