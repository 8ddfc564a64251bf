"""Figures on PDF pages: said to be there in the page's text, and shown on request (view "image") as
the page's picture beside its text; view "text" leaves every picture out and says so."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pybase64
import pytest
from PIL import Image

from agentread.engine import Engine
from agentread.limits import MAX_IMAGE_BYTES, MAX_IMAGE_SIDE, MAX_REPLY_IMAGES
from agentread.readers.pdf.figures import MAX_FIGURE_OBJECTS
from agentread.request import InvalidParams, parse_request
from agentread.result import ImagePart, TextPart
from agentread.workspace import Workspace
from builders import build_pdf, code, drawn_pdf, notebook, png_b64, result, table_rules
from figure_set import LABELS, ROOTS, documents, score
from rpc import ServerProcess, serving, text_of
from shared_corpus import REPO

CURVE = "300 300 m 350 400 400 250 450 350 c S"  # a stroke bending across some 150x100 pt

R_MANUALS = REPO / ".thirdparty" / "r-doc-pdf" / "usr" / "share" / "R" / "doc" / "manual"

# What the figure rule must reach on the labelled pages (tests/data/figures/labels.json): of the
# pages it announces, how many hold a figure; of the pages holding one, how many it announces.
MIN_PRECISION = MIN_RECALL = 0.9


def read(folder: Path, **params):
    return Engine(Workspace([str(folder)])).read(parse_request(params))


def text(result) -> str:
    return "\n".join(part.text for part in result.content if isinstance(part, TextPart))


def images(result) -> list[ImagePart]:
    return [part for part in result.content if isinstance(part, ImagePart)]


@pytest.fixture
def corpus_pdfs(corpus: Path, tmp_path: Path) -> Path:
    for name in ("pdflatex-image.pdf", "GeoTopo-komprimiert.pdf", "pdflatex-4-pages.pdf", "imagemagick-images.pdf"):
        shutil.copy(corpus / "pdf" / name, tmp_path / name)
    return tmp_path


@pytest.mark.parametrize(("name", "page", "count"), [("pdflatex-image.pdf", 1, "1 figure"),
                                                     ("GeoTopo-komprimiert.pdf", 3, "5 figures")])
def test_a_corpus_page_with_a_figure_says_so_and_shows_it_as_a_picture(corpus_pdfs, name, page, count):
    said = text(read(corpus_pdfs, path=name, pages=str(page)))
    assert f'[Page {page} has {count} (images or drawings) that its text does not show. To see the page as a ' \
           f'picture, call again with pages="{page}" and view="image".]' in said

    shown = read(corpus_pdfs, path=name, pages=str(page), view="image")
    [picture] = images(shown)
    assert max(picture.width, picture.height) == MAX_IMAGE_SIDE  # a page at 300 dpi is larger: sized to the budget
    data = pybase64.b64decode(picture.data)
    assert len(data) <= MAX_IMAGE_BYTES
    pixels = Image.open(io.BytesIO(data))
    assert pixels.size == (picture.width, picture.height)
    darkest, lightest = pixels.convert("L").getextrema()
    assert lightest > 200 and darkest < 100  # paper and ink: not a blank page
    before = shown.content[shown.content.index(picture) - 1].text
    assert before.startswith(f"--- Page {page} ---\n") and before.endswith(
        f"[Page {page} as a picture, {picture.width}x{picture.height}:]")
    assert "that its text does not show" not in text(shown)  # the picture is there: nothing to announce
    assert shown.shown == {"pages": [page]}


def test_the_text_beside_each_picture_is_the_page_text_of_a_text_read(corpus_pdfs):
    plain = text(read(corpus_pdfs, path="GeoTopo-komprimiert.pdf", pages="3"))
    pictured = text(read(corpus_pdfs, path="GeoTopo-komprimiert.pdf", pages="3", view="image"))
    body = plain.split("\n[Page 3 has")[0]
    assert "Abbildung 0.1" in body and pictured.startswith(body)


def test_a_text_only_page_announces_nothing(corpus_pdfs, tmp_path):
    for page in range(1, 5):
        assert "figure" not in text(read(corpus_pdfs, path="pdflatex-4-pages.pdf", pages=str(page)))
    (tmp_path / "words.pdf").write_bytes(build_pdf(["just words here"]))
    assert text(read(tmp_path, path="words.pdf")) == "--- Page 1 ---\njust words here"


def test_rules_underlines_and_table_borders_are_not_figures_but_a_curve_or_a_slant_is(tmp_path):
    (tmp_path / "table.pdf").write_bytes(drawn_pdf(table_rules()))
    (tmp_path / "curve.pdf").write_bytes(drawn_pdf(table_rules() + "\n" + CURVE))
    (tmp_path / "chart.pdf").write_bytes(drawn_pdf("100 100 m 200 180 l 300 140 l 400 220 l S"))
    (tmp_path / "small.pdf").write_bytes(drawn_pdf("100 100 m 105 110 110 95 115 105 c S"))  # a symbol's size
    assert text(read(tmp_path, path="table.pdf")) == "--- Page 1 ---\nQuarterly figures"
    assert "has 1 figure " in text(read(tmp_path, path="curve.pdf"))
    assert "has 1 figure " in text(read(tmp_path, path="chart.pdf"))
    assert "figure " not in text(read(tmp_path, path="small.pdf"))
    # A slant plotted as hundreds of points, each step too small to slant on its own.
    points = " ".join(f"{100 + 0.4 * n:.1f} {100 + 0.2 * n:.1f} l" for n in range(1, 400))
    (tmp_path / "points.pdf").write_bytes(drawn_pdf(f"100 100 m {points} S"))
    assert "has 1 figure " in text(read(tmp_path, path="points.pdf"))


def test_objects_past_the_cap_are_not_looked_at(tmp_path):
    rules = "\n".join("72 100 m 90 100 l S" for _ in range(MAX_FIGURE_OBJECTS))
    (tmp_path / "late.pdf").write_bytes(drawn_pdf(rules + "\n" + CURVE))
    (tmp_path / "early.pdf").write_bytes(drawn_pdf(CURVE + "\n" + rules))
    assert "figure " not in text(read(tmp_path, path="late.pdf"))  # the text is an object before them
    assert "has 1 figure " in text(read(tmp_path, path="early.pdf"))


def test_pictures_stop_at_the_reply_image_budget_and_next_goes_on_as_pictures(tmp_path):
    (tmp_path / "long.pdf").write_bytes(build_pdf([f"page word {n}" for n in range(1, 13)]))
    shown = read(tmp_path, path="long.pdf", view="image")
    pictures = images(shown)
    assert len(pictures) == MAX_REPLY_IMAGES
    assert shown.next == {"pages": f"{MAX_REPLY_IMAGES + 1}-12", "view": "image"} and shown.truncated
    assert shown.shown == {"pages": list(range(1, MAX_REPLY_IMAGES + 1))}
    for number, picture in enumerate(pictures, 1):
        before = shown.content[shown.content.index(picture) - 1].text
        assert f"--- Page {number} ---\npage word {number}\n[Page {number} as a picture, " in before
    assert text(shown).endswith(f'(at most {MAX_REPLY_IMAGES} pages are shown as pictures a call). Call again with '
                                f'pages="{MAX_REPLY_IMAGES + 1}-12" and view="image" to continue.]')
    rest = read(tmp_path, path="long.pdf", **shown.next)
    assert len(images(rest)) == 2 and not rest.truncated


def test_a_page_text_over_the_reply_is_cut_beside_its_whole_picture(corpus_pdfs):
    shown = read(corpus_pdfs, path="GeoTopo-komprimiert.pdf", pages="4", view="image", maxBytes=2000)
    assert len(images(shown)) == 1 and shown.text_bytes() <= 2000
    offset = shown.next["offset"]
    assert shown.next == {"pages": "4", "offset": offset}  # one page, named alone
    assert (f'[The text of page 4 is cut here to fit the reply. Call again with pages="4" and offset={offset}, '
            "without view, to read on as text.]") in text(shown)
    rest = read(corpus_pdfs, path="GeoTopo-komprimiert.pdf", **shown.next)
    whole = text(read(corpus_pdfs, path="GeoTopo-komprimiert.pdf", pages="4", offset=1)).split("\n")
    assert text(rest).split("\n")[0] == whole[offset - 1]  # the line read goes on where the cut was made


def test_view_image_takes_whole_pages(tmp_path):
    (tmp_path / "doc.pdf").write_bytes(build_pdf(["one"]))
    with pytest.raises(InvalidParams, match="whole pages"):
        read(tmp_path, path="doc.pdf", view="image", offset=2)


def test_a_text_only_read_gets_the_text_and_one_line_for_the_pictures_left_out(corpus_pdfs, tmp_path):
    scan = read(corpus_pdfs, path="imagemagick-images.pdf", pages="1")
    assert len(images(scan)) == 1  # a page without text comes back as its picture
    only = read(corpus_pdfs, path="imagemagick-images.pdf", pages="1", view="text")
    assert images(only) == [] and only.content[-1].text == \
        '[1 picture left out: this read asked for text only (view="text"). Call again without view to see it.]'
    assert text(only).startswith(text(scan))  # the rest is the same text
    (tmp_path / "plot.ipynb").write_bytes(notebook(code("plot()", result({"image/png": png_b64()})),
                                                   code("plot()", result({"image/png": png_b64()}))))
    plots = read(tmp_path, path="plot.ipynb", view="text")
    assert images(plots) == [] and plots.content[-1].text.startswith("[2 pictures left out: ")
    words = read(tmp_path, path="plot.ipynb", view="text", cells="outline")
    assert "left out" not in text(words)  # nothing was: nothing to say


@pytest.fixture
def r_manuals():
    if not (R_MANUALS / "R-intro.pdf").is_file():
        pytest.skip(f"{R_MANUALS} is absent: run ./scripts/fetch-thirdparty (scripts/test does) to fetch it")
    yield from serving(R_MANUALS)


def announced(server: ServerProcess, page: int) -> bool:
    return f"[Page {page} has 1 figure (images or drawings)" in text_of(server.read(path="R-intro.pdf",
                                                                                  pages=str(page)))


def test_a_box_plot_drawn_with_level_and_upright_lines_is_a_figure(r_manuals):
    assert announced(r_manuals, 46)  # the box plot of section 8.3: boxes, whiskers, ticks and two circles
    assert announced(r_manuals, 84)  # already found by its slants
    # Framed code and tables of data (pages 39 and 40), and text with rules only, are not.
    assert not any(announced(r_manuals, page) for page in (39, 40, 41, 47))


STEPS = "100 400 m 150 400 l 150 380 l 200 380 l 200 350 l 260 350 l 260 330 l 320 330 l S"
AXIS = "\n".join([*(f"{x} 300 m {x} 296 l S" for x in (100, 150, 200, 250)),
                  "100 300 m 250 300 l S", "100 304 150 80 re S"])  # ticks below a frame
MOSAIC = "\n".join(f"{x} {y} {w} {h} re f" for x, y, w, h in
                   ((100, 300, 60, 40), (164, 300, 30, 40), (100, 344, 60, 20), (164, 344, 30, 20)))


FRAMED_MOSAIC = MOSAIC + "\n96 296 102 72 re S"  # a panel's frame holds the tiles, touching none


@pytest.mark.parametrize("drawing", [STEPS, AXIS, MOSAIC, FRAMED_MOSAIC],
                         ids=["step curve", "axis", "mosaic", "framed mosaic"])
def test_plots_of_level_and_upright_lines_are_figures_but_a_table_of_words_is_not(tmp_path, drawing):
    (tmp_path / "plot.pdf").write_bytes(drawn_pdf(drawing))
    assert "has 1 figure " in text(read(tmp_path, path="plot.pdf"))
    # The same drawing covered by words (a table's cells) is not a plot.
    words = "\n".join(f"BT /F1 12 Tf 100 {y} Td (cell words cell words cell words) Tj ET" for y in range(290, 410, 12))
    (tmp_path / "table.pdf").write_bytes(drawn_pdf(drawing + "\n" + words))
    assert "figure " not in text(read(tmp_path, path="table.pdf"))


def test_a_page_of_thousands_of_small_squares_is_one_figure(tmp_path):
    """Thousands of paths, a mosaic's tiles or a scatter plot's markers, each shaped from its
    segments as the compiled walk reads them: one figure, in a read through the server."""
    squares = "\n".join(f"{20 + 10 * (n % 55)} {20 + 10 * (n // 55)} 4 4 re f" for n in range(3000))
    (tmp_path / "squares.pdf").write_bytes(drawn_pdf(squares))
    for server in serving(tmp_path):
        assert "\n[Page 1 has 1 figure (images or drawings)" in text_of(server.read(path="squares.pdf"))


def test_the_rule_finds_the_figures_of_the_labelled_pages(corpus):
    present = documents()
    absent = [entry for entry in json.loads(LABELS.read_text())["documents"]
              if not (ROOTS[entry["root"]] / entry["path"]).is_file()]
    if absent:
        pytest.skip(f"{absent[0]['path']} is absent: run ./scripts/fetch-thirdparty (scripts/test does) to fetch it")
    found = score(Engine(Workspace([str(folder) for folder in ROOTS.values()])), present)
    assert found.precision >= MIN_PRECISION, f"announced without a figure: {found.false}"
    assert found.recall >= MIN_RECALL, f"missed: {found.misses}"


def test_a_stroke_from_inside_one_drawing_to_another_makes_them_one_figure(tmp_path):
    # Two curves far apart, then a third starting inside the second's box and ending near the first.
    drawing = "\n".join(["400 300 m 430 420 470 280 500 400 c S", "100 300 m 130 420 170 280 200 400 c S",
                         "150 350 m 250 380 300 320 395 350 c S"])
    (tmp_path / "joined.pdf").write_bytes(drawn_pdf(drawing))
    assert "has 1 figure " in text(read(tmp_path, path="joined.pdf"))
    (tmp_path / "apart.pdf").write_bytes(drawn_pdf("\n".join(drawing.split("\n")[:2])))
    assert "has 2 figures " in text(read(tmp_path, path="apart.pdf"))


@pytest.mark.parametrize("apart", [3, 4])
def test_a_mosaic_needs_four_tiles_touching_no_other(tmp_path, apart: int):
    # A long bar, a tile on its top at its right end (touching it), and tiles above it 6 pt
    # apart from it and 15 pt from each other: the one touching pair is not counted.
    tiles = [(100, 300, 200, 10), (290, 310, 10, 15)]
    tiles += [(110 + 30 * n, 316, 15, 14) for n in range(apart)]
    (tmp_path / "tiles.pdf").write_bytes(drawn_pdf("\n".join(f"{x} {y} {w} {h} re f" for x, y, w, h in tiles)))
    assert ("has 1 figure " in text(read(tmp_path, path="tiles.pdf"))) == (apart >= 4)
