"""Decks (python-pptx's test files) read to their end by following `next`: every slide once, in
order, with every paragraph and table row python-pptx finds on it; the outline's slide titles."""

from __future__ import annotations

import re

import pptx
import pytest
from harness import SIZES, THIRDPARTY, body, chain, follow, follow_lines, same_in_every_front_end

SDIST = THIRDPARTY / "python_pptx-1.0.2" / "python_pptx-1.0.2"
DECKS = sorted(str(p.relative_to(SDIST)) for p in SDIST.rglob("*.pptx")) or ["(absent)"]
# At the smaller reply sizes, every fourth deck in path order: a fixed sample, so that the suite
# runs in a few minutes on two cores.
SAMPLE_EVERY = 4

SLIDE = re.compile(r"--- Slide (\d+) ---(?: \(hidden\))?")


def deck(name):
    path = SDIST / name
    if not path.is_file():
        pytest.skip(f"{path} is absent: run ./scripts/fetch-thirdparty")
    return path


def shape_texts(shapes) -> list[str]:
    out = []
    for shape in shapes:
        if shape.shape_type == pptx.enum.shapes.MSO_SHAPE_TYPE.GROUP:
            out += shape_texts(shape.shapes)
        elif shape.has_text_frame:
            out += [p.text.replace("\v", "\n") for p in shape.text_frame.paragraphs]
        elif getattr(shape, "has_table", False) and shape.has_table:
            for row in shape.table.rows:
                out.append("| " + " | ".join(c.text.replace("\n", "<br>").replace("\v", "<br>") for c in row.cells)
                           + " |")
    return [line for text in out for line in text.split("\n") if line.strip()]


def slides_read(lines: list[str]) -> dict[int, list[str]]:
    slides: dict[int, list[str]] = {}
    current = None
    for line in lines:
        if match := SLIDE.fullmatch(line):
            current = int(match[1])
            assert current not in slides, f"slide {current} shown twice"
            slides[current] = []
        elif current is not None:
            slides[current].append(re.sub(r"^#+ ", "", line).strip())
    return slides


def check(path, lines):
    presentation = pptx.Presentation(str(path))
    slides = slides_read(lines)
    assert sorted(slides) == list(range(1, len(presentation.slides) + 1)), "slides lost or out of order"
    for number, slide in enumerate(presentation.slides, 1):
        missing = [t for t in shape_texts(slide.shapes) if t.strip() not in slides[number]]
        assert missing == [], f"slide {number}"


@pytest.mark.parametrize("name", DECKS)
def test_every_slide_with_its_text(rpc, name):
    path = deck(name)
    check(path, follow_lines(rpc, {"path": str(path)}))


@pytest.mark.parametrize("size", SIZES[1:])
@pytest.mark.parametrize("name", DECKS[::SAMPLE_EVERY])
def test_every_slide_at_a_smaller_reply_size(rpc, name, size):
    path = deck(name)
    check(path, follow_lines(rpc, {"path": str(path), "maxBytes": size}))


ENTRY = re.compile(r"( *)(.*?)  \(slides? (\d+)\)  → pages=\"(\d+)\"")


@pytest.mark.parametrize("name", DECKS)
def test_the_outline_names_each_slide_by_its_title(rpc, name):
    path = deck(name)
    presentation = pptx.Presentation(str(path))
    numbers = []
    for result in follow(rpc, {"path": str(path), "outline": True}):
        for line in body(result).split("\n"):
            if match := ENTRY.fullmatch(line):
                numbers.append(int(match[3]))
                title = presentation.slides[int(match[3]) - 1].shapes.title
                if title is not None and title.text.strip():
                    assert match[2].startswith(" ".join(title.text.split())[:50]), line
    assert numbers == list(range(1, len(presentation.slides) + 1))


def test_a_deck_is_the_same_in_every_front_end(rpc):
    path = deck("features/steps/test_files/cht-chart-type.pptx")
    same_in_every_front_end(rpc, chain(rpc, {"path": str(path)})[:3], cli_reads=2)


def test_a_line_break_in_a_paragraph_ends_a_line(tmp_path):
    """A break inside a paragraph (`<a:br>`, python-pptx's vertical tab) ends the line: the words
    either side are not run together (python-pptx's own deck txt-text.pptx showed "a", "b", "c"
    as "abc")."""
    from pptx.util import Inches

    from rpc import ServerProcess
    deck = pptx.Presentation()
    box = deck.slides.add_slide(deck.slide_layouts[6]).shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(2))
    paragraph = box.text_frame.paragraphs[0]
    paragraph.add_run().text = "Inherited Line"
    paragraph.add_line_break()
    paragraph.add_run().text = "dash style"
    deck.save(tmp_path / "breaks.pptx")
    server = ServerProcess(workspace=tmp_path)
    try:
        text = body(server.read(path="breaks.pptx"))
    finally:
        server.close()
    assert text.split("\n")[1:3] == ["     2\tInherited Line", "     3\tdash style"]
