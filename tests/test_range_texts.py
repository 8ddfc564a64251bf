"""What the replies say of the runs they show and the calls that go on, at the edges: one line,
page, slide, sheet, entry, member or hit is named alone ("line 2", `pages="6"`), never as a run of
one ("lines 2-2", `pages="6-6"`), and a count of one is singular. Through the server, on real
files."""

from __future__ import annotations

import shutil
from pathlib import Path

from rpc import text_of

DATA = Path(__file__).resolve().parent / "data"


def test_a_window_of_one_line_names_it_alone(tmp_path: Path, server):
    (tmp_path / "three.txt").write_text("one\ntwo\nthree\n")
    reply = server.read(path="three.txt", offset=2, limit=1)
    assert "[Showing line 2 of 3 (limit of 1 line). Call again with offset=3 to continue.]" in text_of(reply)
    past = server.read(path="three.txt", offset=9)["error"]["message"]
    assert past.endswith("which has 3 lines. Call again with an offset from 1 to 3.")
    (tmp_path / "one.txt").write_text("alone\n")
    assert server.read(path="one.txt", offset=5)["error"]["message"].endswith(
        "which has 1 line. Call again with offset=1.")


def test_a_listing_of_one_entry_or_member(tmp_path: Path, server):
    folder = tmp_path / "three"
    folder.mkdir()
    for name in "abc":
        (folder / name).write_text(name)
    middle = text_of(server.read(path="three", offset=2, limit=1))
    assert "(3 entries; folders first; entry 2):" in middle
    assert "[1 more entry not listed. Read on with offset=3," in middle
    (tmp_path / "single").mkdir()
    (tmp_path / "single" / "x").write_text("x")
    assert "(1 entry; folders first):" in text_of(server.read(path="single"))
    shutil.copy(DATA / "archive" / "bundle.zip", tmp_path / "bundle.zip")
    last = text_of(server.read(path="bundle.zip", offset=2))
    assert "(zip, 2 members, in archive order; member 2):" in last


def test_an_outline_window_of_one_entry(tmp_path: Path, server):
    shutil.copy(DATA / "code" / "eval.rs", tmp_path / "eval.rs")
    reply = server.read(path="eval.rs", outline=True, offset=2, limit=1)
    assert "[Showing outline entry 2 of " in text_of(reply) and "(limit of 1 line)" in text_of(reply)


def test_slides_and_sheets_named_alone_in_next_and_errors(tmp_path: Path, server):
    for name in ("markitdown-test.pptx", "pptx-test-slides.pptx", "datasets.xlsx"):
        shutil.copy(DATA / "office" / name, tmp_path / name)
    slide = server.read(path="markitdown-test.pptx", find="the", pages="6", limit=1)
    assert slide["next"]["pages"] == "6" and 'pages="6", offset=' in text_of(slide)
    sheet = server.read(path="datasets.xlsx", find="5.4", pages="4", limit=1)
    assert sheet["next"]["pages"] == "4"
    missing = server.read(path="pptx-test-slides.pptx", pages="3")["error"]["message"]
    assert missing == 'slide 3 does not exist: there is 1 slide. Call again with pages="1".'


def test_one_hit_of_more_is_named_alone(tmp_path: Path, server):
    (tmp_path / "log.txt").write_text("ERROR one\nfine\nERROR two\n")
    reply = server.read(path="log.txt", find="ERROR", limit=1)
    assert text_of(reply).startswith("[Hit 1 of text 'ERROR' in ") and reply["next"]["offset"] == 3


def test_a_pdf_or_deck_without_pages_says_so_and_offers_no_page(tmp_path: Path, server):
    from builders import build_pdf, deck

    (tmp_path / "empty.pdf").write_bytes(build_pdf([]))
    read = server.read(path="empty.pdf")
    assert text_of(read).startswith("[The PDF has no pages: there is nothing to read.]") and read["totalPages"] == 0
    assert "shown" not in read and not read["truncated"]
    asked = server.read(path="empty.pdf", pages="1")["error"]
    assert asked == {"code": "page_out_of_range",
                     "message": "page 1 does not exist: the PDF has no pages, so there is nothing to read."}
    assert text_of(server.read(path="empty.pdf", outline=True)).startswith(
        "[empty.pdf has no pages: there is nothing to outline or read.]")
    assert text_of(server.read(path="empty.pdf", find="x")).startswith("[No hit of text 'x' in ")
    (tmp_path / "empty.pptx").write_bytes(deck())
    assert text_of(server.read(path="empty.pptx")).startswith("[The presentation has no slides: there is nothing")
    assert server.read(path="empty.pptx", pages="1")["error"]["message"] == \
        "slide 1 does not exist: there are no slides, so there is nothing to read."


def test_one_bookmark_is_counted_as_one(corpus: Path, tmp_path: Path, server):
    from pypdf import PdfWriter

    writer = PdfWriter(clone_from=corpus / "pdf" / "pdflatex-4-pages.pdf")
    writer.add_outline_item(title="Only", page_number=1)
    writer.write(tmp_path / "one.pdf")
    assert text_of(server.read(path="one.pdf", outline=True)).startswith("[Outline of one.pdf: 1 bookmark in 4 pages.")


def test_a_sheet_of_one_row_and_column(tmp_path: Path, server):
    from builders import workbook

    (tmp_path / "one.xlsx").write_bytes(workbook({"A1": "x"}))
    assert text_of(server.read(path="one.xlsx")).startswith('--- Sheet 1 "Sheet" (1 row × 1 column) ---')
    (tmp_path / "two.xlsx").write_bytes(workbook({"A1": "x", "A2": "y"}))
    assert "[Sheet 1 stops before row 2 (limit of 1 row). Call again with pages=\"1\" and offset=2 to continue.]" \
        in text_of(server.read(path="two.xlsx", limit=1))
