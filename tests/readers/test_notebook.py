"""The notebook reader on notebooks generated here: addressing, budgets, cleaning,
images, odd files."""

from __future__ import annotations

import base64
import io
import json
import random
import re
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from PIL import Image

from agentread.limits import MAX_OUTPUT_BYTES, MAX_REPLY_IMAGES
from agentread.readers.notebook import notebook_outline, read_notebook
from agentread.readers.notebook.render import svg_rasteriser
from agentread.request import ReadRequest
from agentread.result import ImagePart, ReadError
from builders import code, markdown, notebook, png_b64, result, stream

HEADER = re.compile(r"^### Cell (\d+) \[id=([^\]]*)\] ", re.MULTILINE)


def read(data: bytes, **params):
    return read_notebook(data, ReadRequest(path="nb.ipynb", **params), "nb.ipynb")


def test_header_carries_index_id_type_language_and_count():
    text = read(notebook(markdown("# Title"), code("x = 1", count=7), language="R")).text()
    assert "### Cell 1 [id=c1] markdown\n# Title" in text
    assert "### Cell 2 [id=c2] code (R) exec=7\nx = 1" in text


def test_progress_frames_collapse_to_the_last_one():
    frames = "".join(f"\r{p:3d}%|{'#' * (p // 10):10}|" for p in range(0, 101, 10))
    text = read(notebook(code("train()", stream(frames + "\nepoch 1\rEpoch 1 done\n")))).text()
    assert "100%|##########|" in text and "Epoch 1 done" in text
    assert " 50%" not in text and "epoch 1" not in text and "\r" not in text


def test_ansi_escapes_are_removed_everywhere():
    error = {"output_type": "error", "ename": "NameError", "evalue": "x",
             "traceback": ["\x1b[0;31m---------\x1b[0m", "\x1b[0;31mNameError\x1b[0m: name 'x' is not defined"]}
    colored = stream("\x1b[1m\x1b[32mok\x1b[0m \x1b]8;;http://a.b\x07link\x1b]8;;\x07 \x1b(B\x1b[K!\n"
                     "_\bU_\bs_\ba_\bg_\be:\n")
    text = read(notebook(code("x", colored, error))).text()
    assert "\x1b" not in text and "\x08" not in text and "Usage:" in text
    assert "ok link !" in text and "NameError: name 'x' is not defined" in text
    assert "--- output 2: error NameError ---" in text


def test_consecutive_streams_of_one_name_are_merged_in_order():
    cell = code("run()", stream("a\n"), stream("a2\n"), stream("warn\n", "stderr"), stream("b\n"),
                result({"text/plain": "1"}), stream("c\n"))
    text = read(notebook(cell)).text()
    assert "--- output 1: stdout ---\na\na2\n--- output 2: stderr ---\nwarn\n--- output 3: stdout ---\nb\n" \
           "--- output 4: result ---\n1\n--- output 5: stdout ---\nc" in text


def test_a_huge_output_keeps_head_and_tail_and_says_how_to_read_the_rest():
    log = "".join(f"line {i}\n" for i in range(10_000))
    data = notebook(code("log()", stream(log)), markdown("after"))
    text = read(data).text()
    assert "line 0\n" in text and "line 9999" in text and "line 5000\n" not in text
    marker = re.search(r'\[… ([\d,]+) lines .* cut here; read them with cells="1", offset=(\d+)\]', text)
    assert marker
    offset = int(marker.group(2))
    window = read(data, cells="1", offset=offset, limit=3)
    first_cut = text.split(marker.group(0))[0].rstrip("\n").rsplit("\n", 1)[-1]  # the last head line
    assert window.text().count("line ") == 3
    assert f"line {int(first_cut.split()[1]) + 1}" in window.text()
    assert window.next == {"offset": offset + 3, "cells": "1"}


def test_reading_one_cell_alone_allows_bigger_outputs():
    log = "".join(f"line {i}\n" for i in range(400))
    data = notebook(code("log()", stream(log)), markdown("after"))
    assert "cut here" in read(data).text()
    assert "cut here" not in read(data, cells="1").text()


def test_budget_sends_whole_cells_and_next_names_the_rest():
    cells = [code(f"print({i})", stream(("x" * 70 + "\n") * 50)) for i in range(40)]
    data = notebook(*cells)
    first = read(data)
    shown = [int(i) for i, _ in HEADER.findall(first.text())]
    assert shown == list(range(1, len(shown) + 1)) and len(shown) < 40
    assert len(first.text().encode()) <= MAX_OUTPUT_BYTES
    assert first.truncated and first.next == {"cells": f"{len(shown) + 1}-40"}
    assert f'Continue with cells="{len(shown) + 1}-40"' in first.text()
    following = read(data, cells=first.next["cells"])
    assert int(HEADER.findall(following.text())[0][0]) == len(shown) + 1


def test_a_first_cell_over_the_budget_is_still_sent_cut():
    data = notebook(code("\n".join(f"value_{i} = {i}" for i in range(20_000))), markdown("next one"))
    for cells, following in ((None, "1-2"), ("1", "1")):
        first = read(data, cells=cells)
        assert "### Cell 1 [id=c1]" in first.text() and "value_0 = 0" in first.text()
        assert len(first.text().encode()) <= MAX_OUTPUT_BYTES
        last_sent = first.text().split("\n")[-2]
        offset = int(last_sent.split()[-1]) + 3  # line 1 is the header, line 2 value_0
        assert first.truncated and first.next == {"cells": following, "offset": offset}
        assert f'[Shown: cell 1 (part), its lines 1-{offset - 1} of 20002' in first.text()
        assert f'Continue with cells="{following}", offset={offset}: the rest of cell 1' in first.text()
        rest = read(data, **first.next)
        assert rest.text().split("\n")[1:3] == ["[… continuing cell 1]", f"value_{offset - 2} = {offset - 2}"]


def _walk(data: bytes, **params) -> list:
    """Read as an agent does: the first call, then whatever `next` says, to the end."""
    results = [read(data, **params)]
    while results[-1].next is not None:
        assert results[-1].truncated and len(results) < 100
        results.append(read(data, **results[-1].next))
    return results


def test_following_next_visits_every_line_of_every_cell_once():
    def lines(cell: int, count: int) -> str:
        return "\n".join(f"c{cell}_l{j} = {j}  # " + "x" * 30 for j in range(count))

    cells = [code(lines(i, 40), stream(f"c{i}_out\n")) for i in range(1, 6)]
    cells.append(code(lines(6, 6000), stream("c6_out\n")))  # over the per-call budget by itself
    cells += [markdown(lines(i, 40)) for i in range(7, 12)]
    data = notebook(*cells)
    for params, wanted in (({}, range(1, 12)), ({"cells": "6"}, [6]), ({"cells": "3-8"}, range(3, 9))):
        results = _walk(data, **params)
        text = "\n".join(r.text() for r in results)
        expected = [f"c{i}_l{j}" for i in wanted for j in range(6000 if i == 6 else 40)]
        assert re.findall(r"^(c\d+_l\d+) = ", text, re.MULTILINE) == expected  # every line, in order, once
        assert re.findall(r"^(c\d+)_out$", text, re.MULTILINE) == [f"c{i}" for i in wanted if i <= 6]
        assert [int(i) for r in results for i, _ in HEADER.findall(r.text())] == list(wanted)
        assert len(results) > 2 and all(len(r.text().encode()) <= MAX_OUTPUT_BYTES for r in results)


def test_a_read_cut_only_inside_one_long_output_is_truncated_and_says_where_to_go_on():
    log = "".join(f"line {i}\n" for i in range(10_000))
    data = notebook(code("log()", stream(log)), markdown("after"))
    for cells in (None, "1-2"):
        out = read(data, cells=cells)
        mark = re.search(r'\[… [\d,]+ lines .* cut here; read them with cells="1", offset=(\d+)\]', out.text())
        assert mark and out.truncated and out.next == {"cells": "1", "offset": int(mark.group(1))}
        assert out.text().endswith(f'(the first: cells="1", offset={mark.group(1)}).]')
        head = out.text().split(mark.group(0))[0].count("\nline ")
        tail = out.text().split(mark.group(0))[1].count("line ")
        assert out.shown == {"cells": [1, 2], "outputs": [
            {"cell": 1, "output": 1, "shown": [[1, head], [10_001 - tail, 10_000]], "totalLines": 10_000}]}
        rest = read(data, **out.next)
        assert rest.text().split("\n")[1:3] == ["[… continuing cell 1]", f"line {head}"]
    assert not read(notebook(code("log()", stream("short\n")), markdown("after"))).truncated


def test_next_goes_on_at_the_first_of_several_cut_outputs():
    log = "".join(f"line {i}\n" for i in range(1_000))
    data = notebook(markdown("intro"), code("a()", stream("ok\n"), stream(log, "stderr")), code("b()", stream(log)))
    out = read(data)
    marks = re.findall(r'read them with cells="(\d+)", offset=(\d+)\]', out.text())
    assert [cell for cell, _ in marks] == ["2", "3"]
    assert out.next == {"cells": "2", "offset": int(marks[0][1])}
    assert [(o["cell"], o["output"]) for o in out.shown["outputs"]] == [(2, 2), (3, 1)]


def test_shown_lists_the_real_cells_even_when_a_source_quotes_a_header():
    quoting = code("print('### Cell 7 [id=x] code (python) exec=1')\n### Cell 8 [id=y] markdown",
                   stream("### Cell 9 [id=z] code (python) exec=2\n"))
    data = notebook(markdown("a"), quoting, markdown("c"))
    out = read(data)
    assert "\n### Cell 8 [id=y] markdown\n" in out.text() and "\n### Cell 9 [id=z] code" in out.text()
    assert out.shown == {"cells": [1, 2, 3]} and not out.truncated and out.next is None
    assert read(data, cells="2").shown == {"cells": [2]}
    assert read(data, cells="outline").shown == {"cells": [1, 2, 3], "lines": [1, 3]}
    assert read(data, cells="outline", offset=2, limit=1).shown == {"cells": [2], "lines": [2, 2]}
    assert read(data, offset=4, limit=6).shown == {"cells": [2], "lines": [4, 9]}  # cell 2, header to blank line


def test_shown_of_a_window_names_the_cells_begun_or_ended_inside():
    data = notebook(*[code("\n".join(f"a{i}_{j}" for j in range(10))) for i in range(1, 4)])  # 12 lines a cell
    assert read(data, offset=5, limit=10).shown == {
        "cells": [1, 2], "lines": [5, 14], "cellLines": [{"cell": 1, "lines": [5, 12]}, {"cell": 2, "lines": [1, 2]}]}
    assert read(data, offset=13, limit=12).shown == {"cells": [2], "lines": [13, 24]}
    assert read(data, cells="2-3", offset=3, limit=2).shown == {
        "cells": [2], "lines": [3, 4], "cellLines": [{"cell": 2, "lines": [3, 4]}]}
    assert read(notebook(), offset=1).shown == {"cells": []}


def test_shown_of_a_cell_over_the_budget_says_which_of_its_lines_were_sent():
    data = notebook(code("\n".join(f"value_{i} = {i}" for i in range(20_000))), markdown("next one"))
    first = read(data)
    resume = first.next["offset"]
    assert first.shown == {"cells": [1], "cellLines": [{"cell": 1, "lines": [1, resume - 1]}]}
    assert f"value_{resume - 3} = " in first.text() and f"value_{resume - 2} = " not in first.text()
    rest = read(data, **first.next)
    assert rest.shown["cellLines"][0] == {"cell": 1, "lines": [resume, rest.shown["lines"][1]]}


def test_cell_lists_ranges_and_ids():
    data = notebook(*[markdown(f"cell {i}") for i in range(1, 11)])

    def shown(cells):
        return [int(i) for i, _ in HEADER.findall(read(data, cells=cells).text())]

    assert shown("4") == [4]
    assert shown("2-4") == [2, 3, 4]
    assert shown("9-") == [9, 10]
    assert shown("1,4-6") == [1, 4, 5, 6]
    assert shown("c7, 2, c3") == [2, 3, 7]
    assert shown("5-99") == [5, 6, 7, 8, 9, 10]
    with pytest.raises(ReadError) as missing:
        read(data, cells="11")
    assert missing.value.code == "cell_not_found" and "10 cells" in missing.value.message
    with pytest.raises(ReadError) as bad:
        read(data, cells="4-2")
    assert bad.value.code == "invalid_cells"
    with pytest.raises(ReadError) as unknown:
        read(data, cells="nosuchid")
    assert unknown.value.code == "cell_not_found" and "outline" in unknown.value.message


def test_an_id_that_looks_like_a_number_is_the_id():
    doc = json.loads(notebook(markdown("first"), markdown("second"), markdown("third")))
    doc["cells"][2]["id"] = "1"
    data = json.dumps(doc).encode()
    assert "third" in read(data, cells="1").text()
    assert "first" in read(data, cells="1-1").text()


def test_derived_ids_are_stable_and_addressable():
    data = notebook(markdown("alpha"), code("beta"), markdown("alpha"), with_ids=False)
    ids = [i for _, i in HEADER.findall(read(data).text())]
    assert all(i.startswith("~") for i in ids) and len(set(ids)) == 3
    assert ids == [i for _, i in HEADER.findall(read(data).text())]
    assert "beta" in read(data, cells=ids[1]).text() and "beta" in read(data, cells=ids[1][1:]).text()
    inserted = notebook(markdown("new"), markdown("alpha"), code("beta"), markdown("alpha"), with_ids=False)
    assert [i for _, i in HEADER.findall(read(inserted).text())][1:] == ids


def test_outline_lists_every_cell_cheaply():
    cell = code("import numpy as np\nplot()", stream("ok\n"), {"output_type": "display_data", "metadata": {},
                "data": {"image/png": png_b64(640, 480), "text/plain": "<Figure>"}})
    data = notebook(markdown("# Intro\ntext"), cell)
    out = read(data, cells="outline")
    lines = out.text().splitlines()
    assert "Cell 1 [id=c1] markdown, 2 lines: # Intro" in lines
    entry = next(line for line in lines if line.startswith("Cell 2"))
    assert "code (python) exec=1, 2 lines: import numpy as np" in entry
    assert "stdout 1 line" in entry and "image/png 640x480" in entry
    assert not any(isinstance(p, ImagePart) for p in out.content)
    assert notebook_outline(data, ReadRequest(path="nb.ipynb"), "nb.ipynb").text() == out.text()


def test_images_are_attached_where_they_occur():
    cell = code("plot()", result({"image/png": png_b64(), "text/plain": "<Figure size 64x48>"}))
    out = read(notebook(cell))
    assert [type(p).__name__ for p in out.content] == ["TextPart", "ImagePart", "TextPart"]
    assert out.content[0].text.endswith("[image 1: output 1, image/png 64x48, attached]")
    assert "<Figure" not in out.text().split("attached]")[0]


def test_image_base64_split_in_lines_is_read_and_damaged_base64_is_named():
    """Writers may wrap base64 in lines; base64 cut short is named as damaged."""
    wrapped = base64.encodebytes(base64.b64decode(png_b64())).decode()
    out = read(notebook(code("plot()", result({"image/png": wrapped})),
                        code("plot()", result({"image/png": png_b64()[:-4] + "A"}))))
    assert sum(isinstance(p, ImagePart) for p in out.content) == 1
    assert "[image 1: output 1, image/png 64x48, attached]" in out.text()
    assert "[image output 1: image/png 64x48, could not be decoded: its base64 data is damaged" in out.text()


def test_image_budget_stops_at_a_cell_and_notes_extras_within_one_cell():
    image = {"output_type": "display_data", "metadata": {}, "data": {"image/png": png_b64()}}
    data = notebook(*[code(f"plot({i})", image) for i in range(MAX_REPLY_IMAGES + 3)])
    first = read(data)
    assert sum(isinstance(p, ImagePart) for p in first.content) == MAX_REPLY_IMAGES
    assert first.next == {"cells": f"{MAX_REPLY_IMAGES + 1}-{MAX_REPLY_IMAGES + 3}"}
    crowded = read(notebook(code("plots()", *[image] * (MAX_REPLY_IMAGES + 2))))
    assert sum(isinstance(p, ImagePart) for p in crowded.content) == MAX_REPLY_IMAGES
    note = re.findall(r'not attached: at most \d+ images per call; call again with cells="1", offset=(\d+)',
                      crowded.text())
    assert len(note) == 2
    again = read(notebook(code("plots()", *[image] * (MAX_REPLY_IMAGES + 2))), cells="1", offset=int(note[0]))
    assert sum(isinstance(p, ImagePart) for p in again.content) == 2


def test_markdown_attachments_are_images():
    cell = markdown("![chart](attachment:chart.png)", attachments={"chart.png": {"image/png": png_b64()}})
    out = read(notebook(cell))
    assert "[image 1: attachment chart.png, image/png 64x48, attached]" in out.text()


def test_rich_outputs_become_text_or_placeholders():
    widget = {"application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2},
              "text/plain": "IntSlider(value=3)"}
    cells = [code("df", result({"text/html": "<table>…</table>", "text/plain": "   a\n0  1"})),
             code("w", result(widget)),
             code("HTML('<b>x</b>')", result({"text/html": "<b>x</b>"})),
             code("Markdown('**m**')", result({"text/markdown": "**m**",
                                               "text/plain": "<IPython.core.display.Markdown object>"})),
             code("pdf", result({"application/pdf": base64.b64encode(b"%PDF-1.4" * 500).decode()})),
             code("blob", stream(base64.b64encode(bytes(range(256)) * 4).decode() + "\n"))]
    text = read(notebook(*cells)).text()
    assert "   a\n0  1" in text and "<table>" not in text
    assert "[interactive widget (application/vnd.jupyter.widget-view+json), not shown: model abc, its state not " \
           "saved in the notebook; its text form: IntSlider(value=3)]" in text
    assert "--- output 1: result ---\n[text/html output, shown as text]\nx\n" in text
    assert "**m**" in text
    assert "application/pdf" in text and "%PDF" not in text
    assert not re.search(r"[A-Za-z0-9+/]{200,}", text)


def test_a_long_text_form_beside_a_widget_follows_its_placeholder_whole():
    widget = {"application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2},
              "text/plain": "VBox(children=(\n" + "".join(f"  IntSlider(value={n}),\n" for n in range(40)) + "))"}
    text = read(notebook(code("w", result(widget)))).text()
    assert "--- output 1: result ---\n[interactive widget (application/vnd.jupyter.widget-view+json), not shown: " \
           "model abc, its state not saved in the notebook; its text form follows]\nVBox(children=(\n" \
           "  IntSlider(value=0),\n" in text
    assert "  IntSlider(value=39),\n))" in text


def test_what_a_notebook_read_does_not_show_is_shown_by_the_raw_read_it_names(tmp_path: Path):
    from agentread.engine import Engine
    from agentread.request import parse_request
    from agentread.workspace import Workspace

    payload = base64.b64encode(bytes(range(256)) * 4).decode()
    (tmp_path / "nb.ipynb").write_bytes(notebook(code("blob", stream(payload + "\n"))))
    engine = Engine(Workspace([str(tmp_path)]))
    assert "base64 not shown; raw=true shows them]" in engine.read(parse_request({"path": "nb.ipynb"})).text()
    raw = engine.read(parse_request({"path": "nb.ipynb", "raw": True, "find": payload[-40:]}))
    assert raw.shown["hits"], raw.text()


def test_svg_is_rasterised_or_shown_as_text():
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20"/></svg>'
    out = read(notebook(code("svg()", result({"image/svg+xml": svg}))))
    if svg_rasteriser() is None:
        assert "<rect" in out.text()
    else:
        assert any(isinstance(p, ImagePart) for p in out.content)
        assert "rasterised from SVG" in out.text()


def _svg_with_inlined_png() -> str:
    # As matplotlib's SVG backend writes a raster inside a figure: a data: URI wrapped
    # at 76 columns.
    wrapped = base64.encodebytes(base64.b64decode(png_b64(120, 90)) + bytes(range(256)) * 8).decode()
    return ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" '
            'height="20">\n<image width="40" height="20" xlink:href="data:image/png;base64,\n' + wrapped
            + '"/>\n<rect width="4" height="2"/>\n</svg>\n')


def _no_base64(text: str) -> None:
    assert not re.search(r"[A-Za-z0-9+/]{60,}", text), re.search(r"[A-Za-z0-9+/]{60,}", text).group(0)


@pytest.fixture(params=["rasteriser unavailable", "rasteriser available", "svg too large to rasterise"])
def svg_mode(request, monkeypatch):
    from agentread.readers.notebook import render

    if request.param == "rasteriser unavailable":
        monkeypatch.setattr(render, "_rasteriser", False)  # look for it again, and find the import failing
        monkeypatch.setitem(sys.modules, "cairosvg", None)
        assert svg_rasteriser() is None
    elif svg_rasteriser() is None:
        pytest.skip("cairosvg (or the cairo library) is not installed")
    if request.param == "svg too large to rasterise":
        monkeypatch.setattr(render, "MAX_SVG_CHARS", 100)
    return request.param


def test_svg_shown_as_text_carries_no_base64(svg_mode):
    out = read(notebook(code("fig", result({"image/svg+xml": _svg_with_inlined_png()}))))
    text = out.text()
    _no_base64(text)
    if svg_mode == "rasteriser available":
        assert any(isinstance(p, ImagePart) for p in out.content) and "rasterised from SVG" in text
        return
    assert not any(isinstance(p, ImagePart) for p in out.content)
    why = "no SVG rasteriser available" if svg_mode == "rasteriser unavailable" else "too large to rasterise"
    assert f"[image/svg+xml shown as text: {why}]" in text
    assert re.search(r'xlink:href="data:image/png;base64,\[… [\d,]+ characters of base64 not shown; raw=true '
                     r'shows them\]\n"/>', text)
    assert '<rect width="4" height="2"/>' in text


def test_svg_the_rasteriser_would_recurse_on_is_shown_as_text():
    if svg_rasteriser() is None:
        pytest.skip("cairosvg (or the cairo library) is not installed")
    svg = _svg_with_inlined_png().replace("</svg>", '<use xlink:href="#nowhere"/>\n</svg>')
    cell = code("fig", result({"image/svg+xml": svg}), count=1)
    note = markdown("![fig](attachment:fig.svg)", attachments={"fig.svg": {"image/svg+xml": svg}})
    out = read(notebook(cell, note))
    text = out.text()
    _no_base64(text)
    assert not any(isinstance(p, ImagePart) for p in out.content) and "could not be decoded" not in text
    why = "not rasterised because its <use> references point nowhere, loop, or chain too deep"
    assert f"--- output 1: result ---\n[image/svg+xml shown as text: {why}]\n<svg " in text
    assert '<use xlink:href="#nowhere"/>' in text
    assert re.search(rf"\[attachment fig\.svg: image/svg\+xml [\d.]+ KB, not shown: {why}\]", text)


def test_no_path_puts_base64_into_text():
    blob = bytes(range(256)) * 12
    uri = "data:image/png;base64," + base64.b64encode(blob).decode()
    cells = [markdown(f"Logo: ![logo]({uri})\nsecond line"),
             code(f"ICON = '{base64.b64encode(blob).decode()}'\nshow(ICON)",
                  stream(base64.encodebytes(blob).decode()),  # printed wrapped at 76 columns
                  stream("key:\n" + base64.encodebytes(blob).decode().replace("\n", "\r\n") + "done\n", "stderr"),
                  result({"text/markdown": f"![plot]({uri})", "text/plain": "<IPython.core.display.Markdown>"}),
                  {"output_type": "display_data", "metadata": {}, "data": {"application/json": {"icon": uri}}},
                  {"output_type": "error", "ename": "ValueError", "evalue": "bad",
                   "traceback": [f"ValueError: bad payload {base64.b64encode(blob).decode()}"]})]
    out = read(notebook(*cells))
    text = out.text()
    _no_base64(text)
    hidden = "[… 4,096 characters of base64 not shown; raw=true shows them]"
    assert f"Logo: ![logo](data:image/png;base64,{hidden})\nsecond line" in text
    assert f"ICON = '{hidden}'\nshow(ICON)" in text
    assert f"--- output 1: stdout ---\n{hidden}\n--- output 2: stderr" in text
    assert f"key:\n{hidden}\ndone" in text
    # The source keeps its lines one for one: line 3 of the cell's rendering is line
    # 2 of its source.
    assert read(notebook(*cells), cells="1", offset=3, limit=1).text().splitlines()[-2].endswith("second line")


def test_a_long_line_that_is_not_base64_is_scanned_in_linear_time():
    # After a wrapped base64 block, a 64 KB hex dump line cut with " (truncated)" is neither a
    # wrapped line nor the block's last line. A pattern that backtracks over it quadratically takes
    # minutes here (in C, where no deadline stops it); a linear one, milliseconds.
    from agentread.readers.notebook.clean import hide_base64

    block = base64.encodebytes(bytes(range(256)) * 3).decode()
    hex_dump = (bytes(range(256)).hex() * 128)[:65_536] + " (truncated)"
    text = hide_base64(block + hex_dump + "\nafter")
    assert text == "[… 1,024 characters of base64 not shown; raw=true shows them]\n" + hex_dump + "\nafter"
    assert hide_base64(block[:77] + hex_dump) == block[:77] + hex_dump  # one wrapped line: too short to hide


def _noise_png_b64(side: int, seed: int) -> str:
    out = io.BytesIO()
    Image.frombytes("L", (side, side), random.Random(seed).randbytes(side * side)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


def test_image_payloads_are_not_parsed_into_memory(monkeypatch):
    from agentread.readers.notebook import model

    image = {"output_type": "display_data", "metadata": {}, "data": {"text/plain": "<Figure>"}}
    data = notebook(*[code(f"plot({i})", {**image, "data": {**image["data"], "image/png": _noise_png_b64(160, i)}})
                      for i in range(60)])

    def peak(**params) -> tuple[int, str]:
        tracemalloc.start()
        try:
            text = read(data, **params).text()
            return tracemalloc.get_traced_memory()[1], text
        finally:
            tracemalloc.stop()

    outline_peak, outline = peak(cells="outline")
    read_peak, first = peak()
    assert outline_peak < len(data) // 5 and read_peak < len(data) // 2, (outline_peak, read_peak, len(data))
    assert "image/png 160x160 25.8 KB" in outline and "[image 10: output 1, image/png 160x160, attached]" in first
    monkeypatch.setattr(model, "PAYLOAD_MIN_CHARS", len(data) + 1)  # the parser reads every payload
    assert peak(cells="outline") [0] > len(data) and peak(cells="outline")[1] == outline and peak()[1] == first


@pytest.mark.parametrize("odd", [
    '"text/plain": "\\u0000payload:0"',  # what the mark once was, spelt as the file would
    '"text/plain": "\\u0000\\u0070ayload:\\u00b2"',  # the same with escapes, and a digit int() refuses
    '"application/json": ' + "[" * 1010 + "1" + "]" * 1010,  # deeper than Python's recursion
])
def test_payloads_set_aside_read_as_parsed_whatever_else_the_bundles_hold(monkeypatch, odd):
    from agentread.readers.notebook import model

    plots = [code(f"plot({i})", result({"image/png": _noise_png_b64(160, i)})) for i in range(3)]
    data = notebook(*plots, code("x", result({"text/plain": "PLACE"}))).replace(b'"text/plain": "PLACE"', odd.encode())

    def payload_types() -> set[type]:
        return {type(output["data"].get("image/png")) for cell in model.parse_notebook(data).cells
                for output in cell.outputs} - {type(None)}

    assert payload_types() == {model.Payload}
    reads = [read(data).to_json(), read(data, cells="4").to_json(), read(data, cells="outline").to_json()]
    monkeypatch.setattr(model, "PAYLOAD_MIN_CHARS", len(data) + 1)
    assert payload_types() == {str}
    assert reads == [read(data).to_json(), read(data, cells="4").to_json(), read(data, cells="outline").to_json()]


def test_a_payload_outside_every_bundle_is_parsed_with_the_rest(monkeypatch):
    from agentread.readers.notebook import model

    plots = [code(f"plot({i})", result({"image/png": _noise_png_b64(160, i)})) for i in range(3)]
    doc = json.loads(notebook(*plots))
    doc["cells"][0]["metadata"] = {"image/png": _noise_png_b64(160, 9)}  # an image kept where no output is
    data = json.dumps(doc).encode()
    assert len(model._set_aside(data, "\x00mark:")[1]) == 4
    cells = model.parse_notebook(data).cells
    assert {type(output["data"]["image/png"]) for cell in cells for output in cell.outputs} == {str}
    reads = [read(data).to_json(), read(data, cells="outline").to_json()]
    monkeypatch.setattr(model, "PAYLOAD_MIN_CHARS", len(data) + 1)
    assert reads == [read(data).to_json(), read(data, cells="outline").to_json()]


def test_image_payloads_with_json_escapes_read_the_same(monkeypatch):
    from agentread.readers.notebook import model

    b64 = _noise_png_b64(90, 1)
    wrapped = "\n".join(b64[i:i + 76] for i in range(0, len(b64), 76)) + "\n"  # as some writers store it
    bundles = [{"image/png": wrapped}, {"image/png": b64}, {"image/png": b64, "text/plain": "slash"},
               {"image/png": b64, "text/plain": "u-escape"}]
    text = json.dumps(json.loads(notebook(*[code(f"p{i}", result(b)) for i, b in enumerate(bundles)])))
    slash = text.index('"slash"')
    text = text[:slash].replace("/", "\\/") + text[slash:]  # every slash escaped, as PHP or Java writers do
    u_escape = text.index(b64[:40], text.index('"u-escape"') - len(b64) - 50)
    text = text[:u_escape] + "\\u0069" + text[u_escape + 1:]  # the payload's first "i" as \u0069
    data = text.encode()
    assert len(model._set_aside(data, "\x00mark:")[1]) == 4  # the \u escape too: the parser reads a payload's text
    skipped = [read(data).to_json(), read(data, cells="outline").to_json()]
    assert sum(p["type"] == "image" for p in skipped[0]["content"]) == 4
    monkeypatch.setattr(model, "PAYLOAD_MIN_CHARS", len(data) + 1)
    assert skipped == [read(data).to_json(), read(data, cells="outline").to_json()]


def test_a_payload_head_is_a_prefix_of_its_text_wherever_the_cut_falls():
    from agentread.readers.notebook import model

    quoted = b'"' + b"iVBORw0K\\u0069\\n\\/AB\\r\\n" * 40 + b'"'
    text = json.loads(quoted)
    payload = model.Payload(quoted, 1, len(quoted) - 1, len(text))
    assert len(payload) == len(text) and payload.text() == text
    for chars in range(1, 120):  # every cut position within an escape of each kind
        head = payload.head(chars)
        assert text.startswith(head) and chars // 3 <= len(head) <= chars, (chars, head)


def test_odd_image_payloads_are_left_to_the_parser(monkeypatch):
    from agentread.readers.notebook import model

    b64 = _noise_png_b64(90, 2)
    good = notebook(code("p", result({"image/png": b64}))).decode()
    odd = {  # what the parser says of each (a result or an error) must not change when payloads are set aside
        "escaped quote": good.replace(b64[-20:], b64[-20:] + '\\"x'),
        "escaped backslash": good.replace(b64[-20:], b64[-20:] + "\\\\"),
        "unterminated": good[:good.index(b64) + 5000],
        "raw newline": good.replace(b64[-20:], b64[-20:] + "\n"),
        "not base64": good.replace(b64[-20:], b64[-20:] + "%"),
        "a key inside a string": good.replace('"p"', json.dumps('"image/png": "' + b64 + '"')),
    }

    def outcome(text: str):
        try:
            return read(text.encode()).to_json()
        except ReadError as exc:
            return exc.code, exc.message

    seen = {name: outcome(text) for name, text in odd.items()}
    monkeypatch.setattr(model, "PAYLOAD_MIN_CHARS", 10**9)
    assert seen == {name: outcome(text) for name, text in odd.items()}
    assert seen["unterminated"][0] == "not_a_notebook" and isinstance(seen["escaped quote"], dict)


def test_offset_and_limit_page_the_rendered_lines():
    data = notebook(*[code("\n".join(f"a{i}_{j}" for j in range(10))) for i in range(5)])
    page = read(data, offset=5, limit=10)
    assert (page.start_line, page.end_line) == (5, 14) and page.next == {"offset": 15}
    assert page.total_lines == 5 * 12  # header, 10 source lines, a blank line per cell
    assert "[… continuing cell 1]" in page.text() and "a0_3" in page.text()
    with pytest.raises(ReadError) as past:
        read(data, offset=61)
    assert past.value.code == "offset_past_end"
    end = read(data, offset=-3)  # counted back from the end of the rendered lines
    assert (end.start_line, end.end_line, end.next) == (58, 60, None)
    assert end.text() == read(data, offset=58).text()


def test_nbformat_3_is_upgraded_by_nbformat():
    doc = {"nbformat": 3, "nbformat_minor": 0, "metadata": {"name": ""}, "worksheets": [{"cells": [
        {"cell_type": "heading", "level": 2, "source": ["Results"], "metadata": {}},
        {"cell_type": "code", "language": "python", "input": ["x = 1\n", "x"], "prompt_number": 4,
         "metadata": {}, "outputs": [{"output_type": "pyout", "prompt_number": 4, "text": ["1"]},
                                     {"output_type": "stream", "stream": "stderr", "text": ["careful\n"]}]}]}]}
    first, again = read(json.dumps(doc).encode()), read(json.dumps(doc).encode())
    text = first.text()
    assert "nbformat 3.0" in text and "Warning" not in text
    assert re.search(r"### Cell 1 \[id=~[0-9a-f]{8}\] markdown\n## Results\n", text)
    # nbformat's upgrade keeps no cell language (version 3 named it per cell, version 4 in the
    # kernelspec).
    assert "code (unknown) exec=4\nx = 1\nx\n--- output 1: result ---\n1\n--- output 2: stderr ---\ncareful" in text
    assert text == again.text()  # the ids nbformat's upgrade draws at random are not the ones shown


def test_nbformat_2_written_by_nbformat_reads_with_its_image():
    import nbformat.v2 as v2

    png = png_b64(640, 480)
    cells = [v2.new_text_cell("markdown", source="# Old times"),
             v2.new_code_cell(input="plot()", prompt_number=3, outputs=[
                 v2.new_output("pyout", output_text="<Figure>", output_png=png.encode(), prompt_number=3)])]
    data = v2.writes_json(v2.new_notebook(metadata=v2.new_metadata(name="old"),
                                          worksheets=[v2.new_worksheet(cells=cells)])).encode()
    assert json.loads(data)["nbformat"] == 2
    out = read(data)
    assert "nbformat 2.?" in out.text() and "# Old times" in out.text()  # version 2 had no minor
    assert "exec=3\nplot()\n--- output 1: result ---\n[image 1: output 1, image/png 640x480, attached]" in out.text()
    assert [(p.width, p.height) for p in out.content if isinstance(p, ImagePart)] == [(640, 480)]


def test_an_old_notebook_missing_parts_of_its_frame_is_read_and_said():
    no_metadata = {"nbformat": 3, "nbformat_minor": 0, "worksheets": [
        {"cells": [{"cell_type": "markdown", "source": "kept", "metadata": {}}]}, {"metadata": {}}]}
    text = read(json.dumps(no_metadata).encode()).text()
    assert "Warning: the notebook does not follow the nbformat schema; shown as far as it could be read: " \
           "no notebook 'metadata' object; read without; 1 worksheet(s) without a 'cells' list; read without them." \
           in text
    assert re.search(r"### Cell 1 \[id=~[0-9a-f]{8}\] markdown\nkept\n", text)


def test_an_old_notebook_nbformat_cannot_upgrade_is_a_clear_error():
    doc = {"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": [
        {"cell_type": "code", "input": "x", "outputs": [{"text": "no output_type"}]}]}]}
    with pytest.raises(ReadError) as err:
        read(json.dumps(doc).encode())
    assert err.value.code == "not_a_notebook"
    assert err.value.message.startswith("the file is an nbformat 3 notebook that nbformat cannot upgrade to version 4")
    assert "'output_type'" in err.value.message and "raw=true" in err.value.message


def test_invalid_json_says_where_and_how_to_read_it_as_text():
    with pytest.raises(ReadError) as err:
        read(b'{\n  "cells": [\n    {"cell_type": "code",,}\n  ]\n}')
    assert err.value.code == "not_a_notebook"
    assert "line 3" in err.value.message and "raw=true" in err.value.message


@pytest.mark.parametrize("payload", [b"[1, 2, 3]", b'{"name": "package.json"}', b'"text"'])
def test_json_that_is_not_a_notebook(payload):
    with pytest.raises(ReadError) as err:
        read(payload)
    assert err.value.code == "not_a_notebook" and "not a Jupyter notebook" in err.value.message


def _warning(result) -> str:
    return next(line for line in result.text().splitlines() if line.startswith("Warning:"))


def _problems(result) -> list[str]:
    return _warning(result).split("shown as far as it could be read: ", 1)[1].split("; ")


def test_schema_problems_name_the_cell_and_the_field_and_the_cells_are_still_shown():
    doc = json.loads(notebook(markdown("a"), code("b", stream("fine\n"), {"name": "stdout", "text": "lost type\n"}),
                              {"cell_type": "mystery", "source": "c", "metadata": {}},
                              code("d", stream("ok\n"), {"output_type": "future", "x": 1}),
                              markdown("e", extra=1), code("f", count="7"), code("g", metadata={"collapsed": "no"})))
    doc["cells"][1]["id"] = "c1"  # a duplicate id
    doc["metadata"]["kernelspec"] = "not an object"
    out = read(json.dumps(doc).encode())
    problems = _problems(out)
    assert problems == [
        "duplicate cell id(s) c1: addressing one selects every cell that has it",
        "the notebook: metadata.kernelspec should be an object, not a string",
        "cell 2 (id=c1): outputs[1] is missing 'output_type'",
        "cell 3 (id=c3) has unknown cell_type 'mystery'",
        "cell 4 (id=c4): outputs[1] has unknown output_type 'future'",
        "and 3 more."]
    text = out.text()
    assert [int(i) for i, _ in HEADER.findall(text)] == list(range(1, 8))
    assert "--- output 1: stdout ---\nfine\nlost type\n" not in text  # an output without a type is not a stream
    assert "fine\n--- output 2: unknown (unknown output type) ---" in text
    assert "\n### Cell 3 [id=c3] mystery\nc\n" in text
    later = _problems(read(json.dumps(doc).encode(), cells="5-7"))
    assert later == ["duplicate cell id(s) c1: addressing one selects every cell that has it",
                     "the notebook: metadata.kernelspec should be an object, not a string",
                     "cell 5 (id=c5) has 'extra', which nbformat 4.5 does not define",
                     "cell 6 (id=c6): execution_count should be an integer or null, not a string",
                     "cell 7 (id=c7): metadata.collapsed should be a boolean, not a string."]


def test_only_the_cells_shown_are_checked_and_a_clean_notebook_not_at_all():
    data = notebook(markdown("a"), code("b", {"name": "stdout", "text": "x\n"}), markdown("c"))
    assert "Warning" not in read(data, cells="1").text() and "Warning" not in read(data, cells="3").text()
    assert "cell 2 (id=c2): outputs[0] is missing 'output_type'" in _warning(read(data, cells="2"))
    assert "cell 2 (id=c2)" in _warning(read(data, cells="outline"))
    assert "cell 2 (id=c2)" in _warning(read(data, offset=4, limit=1))  # the window's one line is cell 2's
    assert "Warning" not in read(data, offset=1, limit=3).text()
    from agentread.readers.notebook.model import parse_notebook

    assert not parse_notebook(notebook(markdown("a"), code("b", stream("x\n"), result({"text/plain": "1"})))).odd


def test_a_notebook_of_a_later_major_version_is_read_as_version_4_and_said():
    doc = json.loads(notebook(markdown("# Later")))
    doc["nbformat"] = 5
    out = read(json.dumps(doc).encode())
    assert "nbformat 5.5." in out.text() and "### Cell 1 [id=c1] markdown\n# Later" in out.text()
    assert _problems(out) == ["the notebook: nbformat: 5 is greater than the maximum of 4."]


def test_schema_words_are_cleaned_and_short():
    doc = json.loads(notebook(code("x")))
    doc["cells"][0]["cell_type"] = "\x1b[31m" + "A1b2" * 300
    warning = _warning(read(json.dumps(doc).encode()))
    assert "\x1b" not in warning
    assert "cell 1 (id=c1) has unknown cell_type '[… 1,200 characters of base64 not shown; raw=true shows them]'." \
        in warning
    assert len(warning) < 400
    doc["cells"][0]["cell_type"] = {"kind": "code"}  # where nbformat's validator fails to say more
    assert "cell 1 (id=c1): cell_type should be a string, not an object." in _warning(read(json.dumps(doc).encode()))


# Reads that grow with the notebook's size end far within this on any machine, busy or not; Python
# work that grows with the square of its cells would run far past it. The check tells the two apart
# and no more.
LINEAR_OR_NOT = 120.0


def test_a_huge_notebook_reads_within_bounds():
    cells = [{"cell_type": "code", "source": f"x = {i}", "metadata": {}, "execution_count": i,
              "outputs": [stream(f"{i}\n")]} for i in range(100_000)]
    data = json.dumps({"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": cells}).encode()
    started = time.perf_counter()
    first = read(data)
    outline = read(data, cells="outline")
    assert time.perf_counter() - started < LINEAR_OR_NOT, "the reads grow faster than the notebook"
    assert len(first.text().encode()) <= MAX_OUTPUT_BYTES and len(outline.text().encode()) <= MAX_OUTPUT_BYTES
    assert first.total_cells == 100_000 and first.next["cells"].endswith("-100000")
    assert outline.next == {"cells": "outline", "offset": outline.end_line + 1}


def test_an_integer_of_thousands_of_digits_is_not_a_notebook_error(tmp_path):
    data = b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [], "x": ' + b"9" * 5000 + b"}"
    with pytest.raises(ReadError) as err:
        read_notebook(data, ReadRequest(path="big-int.ipynb"), "big-int.ipynb")
    assert err.value.code == "not_a_notebook"


# Past orjson's writer (255 levels); past json's too (Python's recursion limit), within the
# parser's 1,024.
@pytest.mark.parametrize("depth", [300, 1010])
def test_a_deeply_nested_json_output_is_shown_or_named_never_a_crash(depth: int):
    nested = b'{"k":' * depth + b'"core"' + b"}" * depth  # written by hand: json.dumps recurses as deep
    data = notebook(code("x", stream("@nested@"), result({"application/json": "@nested@"})))
    shown = read(data.replace(b'"@nested@"', nested)).text()
    if depth == 300:
        assert shown.count('{\n  "k": {\n    "k": {') == 2 and "too deep" not in shown  # the heads of both
    else:
        assert shown.count("[a JSON value nested too deep to show; raw=true shows it]") == 2


def test_html_only_or_behind_a_default_repr_is_shown_as_text():
    from agentread.readers.notebook.htmltext import MAX_HTML_CHARS

    note = ("<style>div {color: red}</style><script>alert('x')</script><h3>Quarterly</h3>"
            "<table><tr><th>region</th><th>sales</th></tr><tr><td>north</td><td>12</td></tr></table>")
    cells = [code("Note()", result({"text/html": note, "text/plain": "<__main__.Note at 0x7f457c0250d0>"})),
             code("show()", result({"text/html": "<p>first</p><p>second</p>"})),
             code("big()", result({"text/html": "<p>" + "word " * MAX_HTML_CHARS + "</p>"}))]
    text = read(notebook(*cells)).text()
    assert "--- output 1: result ---\n[text/html output, shown as text; its 1 script and 1 style (26 B) left out]\n" \
           "Quarterly\n\nregion  sales\nnorth   12\n" in text
    assert "0x7f457c0250d0" not in text and "alert" not in text and "color" not in text
    assert "[text/html output, shown as text]\nfirst\n\nsecond\n" in text
    assert (f"[… this HTML goes on past character {MAX_HTML_CHARS:,} of {5 * MAX_HTML_CHARS + 7:,}, too long to lay "
            f"out: its last {4 * MAX_HTML_CHARS + 7:,} characters follow as its source]") in text


def test_latex_beside_a_formula_picture_is_kept():
    sympy = {"text/latex": "$$x^{2} + \\sin{\\left (z \\right )}$$", "image/png": png_b64(),
             "text/plain": "x**2 + sin(z)"}
    result_ = read(notebook(code("e", result(sympy))))
    assert "--- output 1: result ---\n$$x^{2} + \\sin{\\left (z \\right )}$$\n[image 1: output 1, image/png 64x48, " \
           "attached]" in result_.text()
    assert sum(isinstance(p, ImagePart) for p in result_.content) == 1


def test_an_attachment_name_with_a_line_break_stays_one_line():
    cell = markdown("![a](attachment:a.png)", attachments={"two\nlines.png": {"image/png": png_b64()}})
    out = read(notebook(cell))
    assert "[image 1: attachment two lines.png, image/png 64x48, attached]" in out.text()


def test_a_long_line_is_cut_with_the_call_that_reads_on_and_a_column_read_goes_on():
    data = notebook(markdown("intro"), code("x = '" + "q" * 4000 + "'"))
    whole = read(data)
    assert whole.truncated and whole.next == {"cells": "2", "offset": 2, "column": 2001}
    assert 'of 4,006 characters; cells="2", offset=2, column=2001 reads on]' in whole.text()
    # An offset read over every cell numbers lines across them: its marker needs no cells.
    window = read(data, offset=5)
    assert window.next == {"offset": 5, "column": 2001}
    assert "Line 5 was cut at character 2,000. Continue with offset=5, column=2001.]" in window.text()
    rest = read(data, cells="2", offset=2, column=4001)
    assert rest.text().split("\n")[1:3] == ["[… continuing cell 2]", "q" * 5 + "'"]
    assert rest.next is None and not rest.truncated
    with pytest.raises(ReadError) as error:
        read(data, cells="2", offset=2, column=4007)
    assert error.value.code == "offset_past_end" and "4,006 characters" in error.value.message


def test_a_line_continued_by_column_is_shown_in_part(tmp_path: Path, server):
    """A read from a column of a cut line holds that line from there on: `shown` says so, for a
    notebook's line as for a text file's."""
    (tmp_path / "n.ipynb").write_bytes(notebook(markdown("intro"), code("x = '" + "q" * 4000 + "'\nprint(x)")))
    rest = server.read(path="n.ipynb", cells="2", offset=2, column=4001)
    assert rest["shown"] == {"cells": [2], "lines": [2, 4], "column": 4001,
                             "cellLines": [{"cell": 2, "lines": [2, 4]}]}
    whole = server.read(path="n.ipynb", cells="2", offset=2)
    assert whole["shown"]["lines"] == [2, 4] and "column" not in whole["shown"]
    (tmp_path / "t.txt").write_text("q" * 4000 + "\nend\n")
    assert server.read(path="t.txt", offset=1, column=2001)["shown"] == {"lines": [1, 2], "column": 2001}


def test_one_cell_and_one_line_are_named_alone(tmp_path: Path, server):
    from rpc import text_of

    (tmp_path / "n.ipynb").write_bytes(notebook(code("print(1)\n" + "y = 2\n" * 400), markdown("end")))
    assert "[Shown: cell 1 of 2.]" in text_of(server.read(path="n.ipynb", cells="1"))
    cut = text_of(server.read(path="n.ipynb", maxBytes=2000))
    assert re.search(r"\[Shown: cell 1 \(part\), its lines 1-\d+ of \d+, of 2 cells\.", cut)
    (tmp_path / "head.ipynb").write_bytes(notebook(code("x = '" + "q" * 5000 + "'"), markdown("end")))
    head = text_of(server.read(path="head.ipynb", maxBytes=2000))
    assert re.search(r"\[Shown: cell 1 \(part\), its line 1 of \d+, of 2 cells\.", head)
    last = text_of(server.read(path="n.ipynb", cells="1", offset=3, limit=1))
    assert "[Shown: rendered line 3 of " in last
    missing = server.read(path="head.ipynb", cells="9")["error"]["message"]
    assert "the notebook has 2 cells (1-2)" in missing
    (tmp_path / "one.ipynb").write_bytes(notebook(markdown("alone")))
    assert "the notebook has 1 cell (1);" in server.read(path="one.ipynb", cells="3")["error"]["message"]


def test_a_raw_read_goes_on_raw_to_the_last_character_of_its_json(tmp_path: Path):
    """A notebook read with raw=true is its JSON as numbered lines: every `next`, closing line and
    cut marker carries raw, so following them pages the JSON, never the rendered cells."""
    from agentread.engine import Engine
    from agentread.request import parse_request
    from agentread.workspace import Workspace

    long_output = "x" * 5000 + "END"
    cells = [code(f"print({n})", stream(f"{n}\n")) for n in range(40)] + [code("print(1)", stream(long_output))]
    (tmp_path / "n.ipynb").write_bytes(notebook(*cells))
    data = (tmp_path / "n.ipynb").read_text()
    engine = Engine(Workspace([str(tmp_path)]))
    params: dict = {"path": "n.ipynb", "raw": True, "limit": 50}
    pieces: dict[int, str] = {}
    for _ in range(200):
        result = engine.read(parse_request(params)).to_json()
        assert not result["isError"], result
        text = result["content"][0]["text"]
        for line in text.split("\n"):
            match = re.match(r"^ *(\d+)\t(.*)$", line)
            if match:
                shown = re.sub(r" \[… line cut at character .*\]$", "", match[2])
                pieces[int(match[1])] = pieces.get(int(match[1]), "") + shown
        if "next" not in result:
            break
        assert result["next"]["raw"] is True and "raw=true and " in text.split("\n")[-1]
        params = {"path": "n.ipynb", **result["next"], "limit": 50}
    assert "\n".join(pieces[n] for n in sorted(pieces)) == data.rstrip("\n")
