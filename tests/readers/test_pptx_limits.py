"""A slide drawn with thousands of shapes (grouped or not) is read up to a cap, and says so; a table
of tens of thousands of rows is read whole, its cells as python-pptx gives them."""

from __future__ import annotations

import copy
from pathlib import Path

from agentread.engine import Engine
from agentread.readers.office.pptx import MAX_SHAPES_PER_SLIDE
from agentread.request import parse_request
from agentread.workspace import Workspace

SHAPES = MAX_SHAPES_PER_SLIDE + 10


def deck(path: Path, grouped: bool) -> None:
    """One slide of SHAPES text boxes "part N", stacked top to bottom, in one group or not. The
    boxes are copies of one made by python-pptx (adding thousands one by one costs it minutes)."""
    from lxml.etree import SubElement
    from pptx import Presentation
    from pptx.oxml.ns import qn
    from pptx.util import Emu

    prs = Presentation()
    shapes = prs.slides.add_slide(prs.slide_layouts[6]).shapes  # blank
    if grouped:
        shapes = shapes.add_group_shape().shapes
    box = shapes.add_textbox(Emu(0), Emu(0), Emu(1000), Emu(100))
    tree, model = box.element.getparent(), box.element
    tree.remove(model)
    for n in range(SHAPES):
        element = copy.deepcopy(model)
        element.xpath("./p:nvSpPr/p:cNvPr")[0].set("id", str(100 + n))
        element.xpath("./p:spPr/a:xfrm/a:off")[0].set("y", str(n * 100))
        SubElement(SubElement(element.xpath(".//a:p")[0], qn("a:r")), qn("a:t")).text = f"part {n}"
        tree.append(element)
    prs.save(path)


def read(root: Path, **params):
    result = Engine(Workspace([str(root)])).read(parse_request({"path": "deck.pptx", **params}))
    assert not result.is_error, result.text()
    return result.text()


def test_a_slide_of_thousands_of_shapes_reads_the_first_and_says_so(tmp_path: Path):
    deck(tmp_path / "deck.pptx", grouped=False)
    assert read(tmp_path, limit=3).splitlines()[1:3] == ["     2\tpart 0", "     3\tpart 1"]
    end = read(tmp_path, offset=MAX_SHAPES_PER_SLIDE - 5)
    assert f"part {MAX_SHAPES_PER_SLIDE - 1}\n" in end and f"part {MAX_SHAPES_PER_SLIDE}\n" not in end
    assert f"more than {MAX_SHAPES_PER_SLIDE:,} shapes (groups included): the first {MAX_SHAPES_PER_SLIDE:,}" in end


def test_shapes_inside_a_group_count_against_the_cap(tmp_path: Path):
    deck(tmp_path / "deck.pptx", grouped=True)
    end = read(tmp_path, offset=MAX_SHAPES_PER_SLIDE - 5)
    # The group itself is one of the shapes counted.
    assert f"part {MAX_SHAPES_PER_SLIDE - 2}\n" in end and f"part {MAX_SHAPES_PER_SLIDE - 1}\n" not in end
    assert "more than 2,000 shapes (groups included)" in end


def table_deck(path: Path, rows: int) -> None:
    """One slide with a 2-column table of `rows` rows "r N" | "c N", the first cell holding two
    paragraphs and a line break. Rows are copies of one made by python-pptx (adding them one by one
    is quadratic there)."""
    from pptx import Presentation
    from pptx.oxml.ns import qn
    from pptx.util import Inches

    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[6])
    frame = slide.shapes.add_table(2, 2, Inches(1), Inches(1), Inches(4), Inches(1))
    frame.table.cell(0, 0).text = "head\vsecond line\nnext paragraph"
    frame.table.cell(0, 1).text = "value"
    tbl = frame.element.find(".//" + qn("a:tbl"))
    model = tbl.tr_lst[1]
    for _ in range(2, rows):
        tbl.append(copy.deepcopy(model))
    for n, tr in enumerate(tbl.tr_lst[1:], start=1):
        tr.tc_lst[0].get_or_add_txBody().p_lst[0].add_r().text = f"r {n}"
        tr.tc_lst[1].get_or_add_txBody().p_lst[0].add_r().text = f"c {n}"
    prs.save(path)


def test_table_cells_read_as_python_pptx_gives_them(tmp_path: Path):
    from pptx import Presentation

    table_deck(tmp_path / "deck.pptx", rows=3)
    table = Presentation(str(tmp_path / "deck.pptx")).slides[0].shapes[0].table
    expected = [[cell.text for cell in row.cells] for row in table.rows]
    assert expected[0][0] == "head\vsecond line\nnext paragraph"
    text = read(tmp_path)
    # Paragraphs and line breaks both show as <br> in the one-line cell.
    shown = ["| " + " | ".join(cell.replace("\v", "<br>").replace("\n", "<br>") for cell in row) + " |"
             for row in expected]
    assert shown[0] == "| head<br>second line<br>next paragraph | value |"
    assert [line.split("\t", 1)[1] for line in text.splitlines()[1:]] == [shown[0], "| --- | --- |", *shown[1:]]


def test_a_table_of_twenty_thousand_rows_is_read_to_its_last_row(tmp_path: Path):
    table_deck(tmp_path / "deck.pptx", rows=20_000)
    first = read(tmp_path, limit=5)
    assert "| r 1 | c 1 |" in first
    last = read(tmp_path, offset=20_000, limit=10)
    assert "| r 19999 | c 19999 |" in last
