"""A slide drawn with thousands of shapes (grouped or not) is read up to a cap, and says so."""

from __future__ import annotations

import copy
from pathlib import Path

from agentread.engine import Engine
from agentread.office.pptx import MAX_SHAPES_PER_SLIDE
from agentread.request import parse_request
from agentread.workspace import Workspace

SHAPES = MAX_SHAPES_PER_SLIDE + 10


def deck(path: Path, grouped: bool) -> None:
    """One slide of SHAPES text boxes "part N", stacked top to bottom, in one group or not. The boxes are copies
    of one made by python-pptx (adding thousands one by one costs it minutes)."""
    from lxml.etree import SubElement
    from pptx import Presentation
    from pptx.oxml.ns import qn
    from pptx.util import Emu

    prs = Presentation()
    shapes = prs.slides.add_slide(prs.slide_layouts[6]).shapes  # blank
    if grouped:
        shapes = shapes.add_group_shape().shapes
    box = shapes.add_textbox(Emu(0), Emu(0), Emu(1000), Emu(100))
    tree, model = box._element.getparent(), box._element
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
