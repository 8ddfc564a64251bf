"""Every real notebook of the shared corpus, read the way an agent would, checked against independent facts."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from agentread.notebook import read_notebook
from agentread.notebook.reader import MAX_IMAGES_PER_CALL
from agentread.notebook.render import svg_rasteriser
from agentread.request import ReadRequest
from agentread.result import ImagePart

CORPUS = Path(os.environ.get("AGENTREAD_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus")
if not (CORPUS / "expectations.json").is_file():
    pytest.skip(f"the shared corpus is not at {CORPUS} (set AGENTREAD_CORPUS)", allow_module_level=True)

FACTS = {k: v for k, v in json.loads((CORPUS / "expectations.json").read_text())["files"].items()
         if k.startswith("notebooks/")}
HEADER = re.compile(r"^### Cell (\d+) \[id=([^\]]*)\] ", re.MULTILINE)
BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{200,}")
RASTER_KEYS = ("image/png", "image/jpeg", "image/gif", "v3:png", "v3:jpeg")
MAX_CALLS = 200  # following `next` must end long before this


def read_all(name: str) -> list:
    """Read a notebook from cell 1 and follow `next` to the end, as an agent would."""
    data = (CORPUS / name).read_bytes()
    results, request = [], ReadRequest(path=name)
    while True:
        result = read_notebook(data, request, name)
        results.append(result)
        assert len(results) < MAX_CALLS
        if result.next is None:
            return results
        # Whole cells name the cells that come next; a cell cut at the budget adds the offset that continues it.
        assert set(result.next) in ({"cells"}, {"cells", "offset"}) and result.truncated
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
        assert sum(isinstance(p, ImagePart) for p in result.content) <= MAX_IMAGES_PER_CALL


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
    """Reads and outlines are the same whether the parser skips long image payloads or parses them."""
    from agentread.notebook import model

    data = (CORPUS / name).read_bytes()
    outline = ReadRequest(path=name, cells="outline")
    skipped = [r.to_json() for r in read_all(name)] + [read_notebook(data, outline, name).to_json()]
    monkeypatch.setattr(model, "PAYLOAD_MIN_CHARS", len(data) + 1)  # parse every payload
    assert skipped == [r.to_json() for r in read_all(name)] + [read_notebook(data, outline, name).to_json()]
