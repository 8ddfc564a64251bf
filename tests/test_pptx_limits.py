"""A slide drawn with thousands of shapes is read up to a cap, and says so."""

from __future__ import annotations

from pathlib import Path

from agentread.engine import Engine
from agentread.office.pptx import MAX_SHAPES_PER_SLIDE
from agentread.request import parse_request
from agentread.workspace import Workspace


def test_a_slide_of_thousands_of_shapes_reads_the_first_and_says_how_many(tmp_path: Path):
    from pptx import Presentation
    from pptx.util import Emu

    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[6])  # blank
    for n in range(MAX_SHAPES_PER_SLIDE + 50):
        box = slide.shapes.add_textbox(Emu(0), Emu(n * 100), Emu(1000), Emu(100))
        box.text_frame.text = f"label {n}"
    prs.save(tmp_path / "drawing.pptx")
    result = Engine(Workspace([str(tmp_path)])).read(parse_request({"path": "drawing.pptx", "limit": 5}))
    text = result.text()
    assert f"has {MAX_SHAPES_PER_SLIDE + 50:,} shapes: the first {MAX_SHAPES_PER_SLIDE:,}" in text
    full = Engine(Workspace([str(tmp_path)])).read(parse_request({"path": "drawing.pptx", "offset": 2000}))
    assert f"label {MAX_SHAPES_PER_SLIDE - 1}" in full.text() and f"label {MAX_SHAPES_PER_SLIDE}\n" not in full.text()
