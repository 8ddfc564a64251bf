"""Every real notebook of the shared corpus, read the way an agent would, checked against
independent facts."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from agentread.limits import MAX_REPLY_IMAGES
from agentread.readers.notebook import read_notebook
from agentread.readers.notebook.model import notebook_from_dict
from agentread.readers.notebook.reader import render_notebook
from agentread.readers.notebook.render import svg_rasteriser
from agentread.request import ReadRequest
from agentread.result import ImagePart

CORPUS = Path(os.environ.get("AGENTREAD_CORPUS") or Path(__file__).resolve().parents[3] / "shared" / "corpus")
if not (CORPUS / "expectations.json").is_file():
    pytest.skip(f"the shared corpus is not at {CORPUS} (set AGENTREAD_CORPUS)", allow_module_level=True)

FACTS = {k: v for k, v in json.loads((CORPUS / "expectations.json").read_text())["files"].items()
         if k.startswith("notebooks/")}
HEADER = re.compile(r"^### Cell (\d+) \[id=([^\]]*)\] ", re.MULTILINE)
BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{200,}")
RASTER_KEYS = ("image/png", "image/jpeg", "image/gif", "v3:png", "v3:jpeg")
MAX_CALLS = 200  # following `next` must end long before this
CUT_MARK = re.compile(r'\[… ([\d,]+) lines \([\d,]+ characters\) of this output cut here; read them with '
                      r'cells="([^"]+)", offset=(\d+)\]')


def read_all(name: str, data: bytes | None = None, parse=None) -> list:
    """Read a notebook from cell 1 and follow `next` through the cells, as an agent would; a `next`
    that reads what a cut output or a cut line left out (every selected cell was shown) is not
    followed: those lines are not cells."""
    data = (CORPUS / name).read_bytes() if data is None else data
    results, request = [], ReadRequest(path=name)
    while True:
        result = read_notebook(data, request, name) if parse is None else render_notebook(parse(), request, name)
        results.append(result)
        assert len(results) < MAX_CALLS
        assert result.truncated == (result.next is not None)
        if result.next is None:
            return results
        # Whole cells name the cells that come next; a cell cut at the budget adds the offset that
        # continues it (and the column, when that line was cut at its length).
        assert set(result.next) in ({"cells"}, {"cells", "offset"}, {"cells", "offset", "column"})
        if "offset" in result.next and request.offset is None and "cellLines" not in result.shown:
            return results  # what a cut output or line left out
        request = ReadRequest(path=name, **result.next)


@pytest.fixture(scope="module", params=sorted(FACTS))
def notebook(request):
    return request.param, FACTS[request.param], read_all(request.param)


def test_following_next_visits_every_cell_once_in_order(notebook):
    name, facts, results = notebook
    indices = [int(m.group(1)) for r in results for m in HEADER.finditer(r.text())]
    assert indices == list(range(1, facts["cell_count"] + 1))
    assert all(r.total_cells == facts["cell_count"] for r in results)


def test_real_cell_ids_are_shown(notebook):
    name, facts, results = notebook
    ids = [m.group(2) for r in results for m in HEADER.finditer(r.text())]
    for index, expected in enumerate(facts.get("cell_ids") or []):
        if expected == "...":  # the facts list only the first ids of long notebooks
            break
        if expected:  # cells without an id get a derived one
            assert ids[index] == expected
        else:
            assert ids[index].startswith("~")


def test_no_escape_codes_or_base64_in_text(notebook):
    name, facts, results = notebook
    for result in results:
        text = result.text()
        assert "\x1b" not in text
        assert not BASE64_RUN.search(text), BASE64_RUN.search(text).group(0)[:80]
        assert len(text.encode()) <= 52_000


def test_every_image_is_attached_or_accounted_for(notebook):
    name, facts, results = notebook
    mimes = facts["output_mime_counts"]
    expected = sum(mimes.get(k, 0) for k in RASTER_KEYS) + len(facts["attachment_names"])
    if svg_rasteriser() is not None:
        expected += mimes.get("image/svg+xml", 0) + mimes.get("v3:svg", 0)
    attached = sum(isinstance(p, ImagePart) for r in results for p in r.content)
    # Images past the per-call budget in one cell are named with the offset that attaches them.
    skipped = sum(r.text().count(", could not be decoded: ") + r.text().count(", not attached: ") for r in results)
    assert attached + skipped == expected
    for result in results:
        assert sum(isinstance(p, ImagePart) for p in result.content) <= MAX_REPLY_IMAGES


def test_text_matches_the_notebook(notebook):
    name, facts, results = notebook
    text = "".join(r.text() for r in results)
    first = facts.get("first_nonempty_cell")
    if first:
        # The facts join list sources without separators; compare with line breaks removed.
        assert first["first_line"].strip() in text.replace("\n", "")
    for ename in facts["error_enames"]:
        assert f"error {ename}" in text
    assert text.count("[interactive widget (application/vnd.jupyter.widget-view+json)") == facts["widget_view_outputs"]


def test_outline_has_one_line_per_cell(notebook):
    name, facts, _ = notebook
    data = (CORPUS / name).read_bytes()
    result = read_notebook(data, ReadRequest(path=name, cells="outline"), name)
    lines = [line for line in result.text().splitlines() if line.startswith("Cell ")]
    assert len(lines) == facts["cell_count"] == result.total_lines
    assert not any(isinstance(p, ImagePart) for p in result.content)


def test_tracebacks_lose_their_colours():
    name = "notebooks/nbformat/many_tracebacks.ipynb"
    assert FACTS[name]["tracebacks_with_ansi"] > 0
    text = read_all(name)[0].text()
    assert "NameError: name 'iAmNotDefined' is not defined" in text


def test_budget_cuts_the_big_notebooks():
    name = "notebooks/real/handson-ml2_09_unsupervised_learning.ipynb"
    results = read_all(name)
    assert len(results) > 3
    assert results[0].next["cells"].endswith("-366")
    assert "Continue with cells=" in results[0].text()


def test_window_paging_covers_the_rendering():
    name = "notebooks/real/handson-ml2_11_training_deep_neural_networks.ipynb"
    data = (CORPUS / name).read_bytes()
    request, seen, total = ReadRequest(path=name, offset=1, limit=700), 0, None
    while True:
        result = read_notebook(data, request, name)
        assert result.start_line == seen + 1
        seen, total = result.end_line, result.total_lines
        if result.next is None:
            break
        request = ReadRequest(path=name, offset=result.next["offset"], limit=700)
    assert seen == total


@pytest.mark.parametrize("name", sorted(FACTS))
def test_image_payloads_left_in_the_bytes_read_the_same(name, monkeypatch):
    """Reads and outlines are the same whether the parser skips long image payloads or
    parses them."""
    from agentread.readers.notebook import model

    data = (CORPUS / name).read_bytes()
    outline = ReadRequest(path=name, cells="outline")
    skipped = [r.to_json() for r in read_all(name)] + [read_notebook(data, outline, name).to_json()]
    monkeypatch.setattr(model, "PAYLOAD_MIN_CHARS", len(data) + 1)  # parse every payload
    assert skipped == [r.to_json() for r in read_all(name)] + [read_notebook(data, outline, name).to_json()]


def test_next_and_shown_say_what_the_text_says(notebook):
    """`shown.cells` are the cells whose headers the text holds; a read cut only inside
    outputs goes on where its first cut mark says, and each cut output's shown lines are those
    around its mark."""
    name, facts, results = notebook
    for result in results:
        text = result.text()
        if not text.startswith("[… continuing cell"):  # a read by lines that starts inside a cell names it too
            assert [int(m.group(1)) for m in HEADER.finditer(text)] == result.shown["cells"]
        marks = CUT_MARK.findall(text)
        assert len(marks) == len(result.shown.get("outputs", []))
        for (omitted, cells, offset), cut in zip(marks, result.shown.get("outputs", [])):
            (first, head), (tail, last) = cut["shown"]
            assert first == 1 and last == cut["totalLines"] and tail - head - 1 == int(omitted.replace(",", ""))
        if marks and "offset" in result.next and "cellLines" not in result.shown:
            assert result.next == {"cells": marks[0][1], "offset": int(marks[0][2])}


def _without_ids(results: list, ids: list[str]) -> list:
    """Each read's text but its summary and warning lines (they say how the file was read), with the
    ids named by `ids` masked, its images, `next` and `shown`."""
    out = []
    for result in results:
        lines = result.text().split("\n")
        while lines and lines[0].startswith(("Notebook: ", "Warning: ")):
            del lines[0]
        text = "\n".join(lines)
        for cell_id in ids:
            text = text.replace(f"[id={cell_id}]", "[id=…]")
        images = [(p.mime_type, p.width, p.height, p.data) for p in result.content if isinstance(p, ImagePart)]
        out.append((text, images, result.next, result.shown))
    return out


@pytest.mark.parametrize("name", sorted(FACTS))
def test_nbformat_reading_renders_the_same_cells_and_outputs(name):
    """The fast parse and nbformat's own reading (nbformat.reads, as_version=4) give the renderer
    the same cells. nbformat draws new ids at random where the file has none or repeats one, and for
    every cell it upgrades from an older version; those ids are masked, in both reads."""
    import warnings

    import nbformat

    data = (CORPUS / name).read_bytes()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nbformat warns of the ids it adds
            node = nbformat.reads(data.decode("utf-8-sig"), as_version=4)
    except Exception as exc:  # noqa: BLE001 - each failure of nbformat's is a skip, with its reason
        pytest.skip(f"nbformat cannot read it: {type(exc).__name__}: {str(exc)[:120]}")
    fast = read_all(name)
    through_nbformat = read_all(name, parse=lambda: notebook_from_dict(nbformat.from_dict(node)))
    raw = json.loads(data.decode("utf-8-sig"))
    file_ids = [c.get("id") for c in raw.get("cells", [])]
    drawn = [c.get("id") for c in node.cells]
    own = [m.group(2) for r in fast for m in HEADER.finditer(r.text())]
    masked = [i for i, (was, now) in enumerate(zip(file_ids + [None] * len(drawn), drawn)) if was != now]
    ids = [drawn[i] for i in masked] + [own[i] for i in masked if i < len(own)]
    assert _without_ids(fast, ids) == _without_ids(through_nbformat, ids)
    outline = ReadRequest(path=name, cells="outline")
    assert _without_ids([read_notebook(data, outline, name)], ids) == \
        _without_ids([render_notebook(notebook_from_dict(node), outline, name)], ids)


def test_the_layout_check_sends_every_notebook_the_schema_rejects_to_the_validator():
    """The reader's cheap check of each cell's fields (model.py) flags every corpus notebook that
    nbformat's schema rejects, so none of them goes without the validator's words (repeated ids,
    which no schema sees, are the reader's own warning)."""
    from nbformat.validator import iter_validate

    from agentread.readers.notebook.model import parse_notebook

    checked = 0
    for name in sorted(FACTS):
        doc = json.loads((CORPUS / name).read_bytes().decode("utf-8-sig"))
        if doc.get("nbformat") != 4:
            continue  # upgraded by nbformat, whose version 4 is what the check sees
        checked += 1
        assert parse_notebook((CORPUS / name).read_bytes()).odd or not list(iter_validate(doc)), name
    assert checked > 20


def _text(name: str) -> str:
    return "".join(r.text() for r in read_all(name))


def test_an_object_shown_by_html_behind_a_default_repr_reads_as_its_text():
    # rst_output: the reST form replaces "<__main__.Note at 0x...>"; test4: the HTML is laid out.
    assert ".. note::\n\n    Testing testing" in _text("notebooks/nbconvert/rst_output.ipynb")
    assert "<__main__.Note" not in _text("notebooks/nbconvert/rst_output.ipynb")
    assert "--- output 1: result ---\n[text/html output, shown as text; its 1 script (23 B) left out]\nHTML\n" in \
        _text("notebooks/nbformat/test4.ipynb")
    table = _text("notebooks/real/hf_simple_nlp_example.ipynb")
    assert re.search(r"\n   idx   label +sentence1 +sentence2\n0  1302  equivalent +John Logsdon", table)


def test_sympy_outputs_keep_their_latex_and_picture():
    text = _text("notebooks/nbconvert/notebook1.ipynb")
    assert "--- output 1: result ---\n$$2 x$$\n[image 2: output 1, image/png 20x14, attached]" in text
