"""Rich notebook outputs read through the server: HTML by any media type, figure specifications
(Plotly, Vega, Vega-Lite, Bokeh) summarised with the raw read of their JSON, widgets named with
their saved state; the outline and find name them as the read does."""

from __future__ import annotations

import base64
import json
import re
import struct
from pathlib import Path

from builders import code, notebook, result
from rpc import text_of

PLOTLY = "application/vnd.plotly.v1+json"
VEGALITE = "application/vnd.vegalite.v5+json"
VEGA = "application/vnd.vega.v5+json"
WIDGET = "application/vnd.jupyter.widget-view+json"
RAW_CALL = re.compile(r"raw=true, offset=(\d+), limit=(\d+) shows")
GUTTER = re.compile(r" *\d+\t(.*)")


def write(folder: Path, *cells: dict, metadata: dict | None = None, newline: str = "\n") -> str:
    """A notebook written as Jupyter writes it (one space an indent level), so a figure's JSON spans
    many lines; its name."""
    doc = json.loads(notebook(*cells))
    doc["metadata"].update(metadata or {})
    (folder / "n.ipynb").write_bytes(json.dumps(doc, indent=1).replace("\n", newline).encode())
    return "n.ipynb"


def output_of(server, path: str) -> str:
    text = text_of(server.read(path=path, cells="1"))
    return text.split("--- output 1: ", 1)[1].split("\n", 1)[1].split("\n\n", 1)[0]


def raw_json(server, path: str, head: str):
    """The JSON the raw read named in `head` shows: the lines of one key and its value."""
    offset, limit = map(int, RAW_CALL.search(head).groups())
    text = text_of(server.read(path=path, raw=True, offset=offset, limit=limit))
    lines = [m[1] for line in text.split("\n") if (m := GUTTER.fullmatch(line))]
    assert len(lines) == limit
    return json.loads("{" + "\n".join(lines).rstrip(",") + "}")


def test_a_plotly_figure_with_typed_arrays_is_summarised_and_its_json_located_in_a_crlf_file(tmp_path, server):
    spec = {"data": [{"type": "bar", "name": "sales", "x": ["north", "south", "east", "west"],
                      "y": {"dtype": "f8", "bdata": base64.b64encode(struct.pack("<4d", 1.5, 2.5, 3.5, 4.5)).decode()}},
                     {"type": "scatter", "y": {"dtype": "i1", "bdata": base64.b64encode(bytes([7, 8])).decode()}}],
            "layout": {"title": {"text": "Quarterly"}, "xaxis": {"title": {"text": "region"}},
                       "yaxis": {"title": "units"}}}
    # The same figure again, in a later cell's metadata too: only the output's own place is named.
    path = write(tmp_path, code("fig", result({PLOTLY: spec, "text/html": "<div></div><script>draw()</script>"})),
                 code("again", result({PLOTLY: spec}), metadata={"note": {PLOTLY: spec}}), newline="\r\n")
    shown = output_of(server, path)
    assert shown.split("\n")[1:] == [
        "x axis: region; y axis: units",
        'trace 1: bar "sales", 4 points; x: north, south, east, …; y: 1.5, 2.5, 3.5, …',
        "trace 2: scatter, 2 points; y: 7, 8"]
    head = shown.split("\n")[0]
    assert head.startswith(f'[Plotly figure ({PLOTLY}) "Quarterly", 2 bar/scatter traces; raw=true, offset=')
    assert raw_json(server, path, head) == {PLOTLY: spec}


def test_vega_lite_and_vega_charts_are_summarised(tmp_path, server):
    rows = [{"region": r, "sales": s} for r, s in (("north", 12), ("south", 7), ("east", 3), ("west", 9))]
    altair = {"$schema": "https://vega.github.io/schema/vega-lite/v5.json", "title": "Sales by region",
              "datasets": {"data-1a2b": rows}, "data": {"name": "data-1a2b"},
              "layer": [{"mark": {"type": "bar"}, "encoding": {"x": {"field": "region", "type": "nominal"},
                                                               "y": {"field": "sales", "type": "quantitative",
                                                                     "title": "units sold"}}},
                        {"mark": "rule", "encoding": {"y": {"aggregate": "mean", "field": "sales"}}}]}
    vega = {"title": {"text": "Bars"}, "data": [{"name": "table", "values": [{"x": 1, "y": 28}, {"x": 2, "y": 55}]}],
            "marks": [{"type": "rect", "from": {"data": "table"}}],
            "axes": [{"orient": "bottom", "scale": "xscale"}, {"orient": "left", "scale": "yscale", "title": "y"}]}
    path = write(tmp_path, code("chart", result({VEGALITE: altair, "text/plain": "alt.LayerChart(...)"})))
    shown = output_of(server, path).split("\n")
    assert shown[0].startswith(f'[Vega-Lite chart ({VEGALITE}) "Sales by region", bar, rule chart; raw=true, offset=')
    assert shown[1:] == ["mark bar: x = region (nominal), y = units sold (quantitative)",
                         "mark rule: y = sales",
                         'data set "data-1a2b": 4 rows (region, sales); first: {"region": "north", "sales": 12}, '
                         '{"region": "south", "sales": 7}, {"region": "east", "sales": 3}, …']
    assert raw_json(server, path, shown[0]) == {VEGALITE: altair}
    path = write(tmp_path, code("chart", result({VEGA: vega})))
    assert output_of(server, path).split("\n")[1:] == [
        "marks: rect (from table)", "axes: bottom (xscale), left (yscale, y)",
        'data "table": 2 rows (x, y); first: {"x": 1, "y": 28}, {"x": 2, "y": 55}']


def test_bokeh_outputs_name_the_script_that_holds_the_figure(tmp_path, server):
    script = "(function(root) {\n  const docs_json = {\"roots\": []};\n})(window);\n"
    exec_ = {"output_type": "display_data", "metadata": {"application/vnd.bokehjs_exec.v0+json": {"id": "1002"}},
             "data": {"application/javascript": script, "application/vnd.bokehjs_exec.v0+json": "",
                      "text/html": '<div class="bk-root" id="a1"></div>'}}
    load = {"output_type": "display_data", "metadata": {},
            "data": {"application/javascript": "load()", "application/vnd.bokehjs_load.v0+json": "load()"}}
    path = write(tmp_path, code("show(p)", exec_, load))
    text = text_of(server.read(path=path, cells="1"))
    head = ("[Bokeh figure (application/vnd.bokehjs_exec.v0+json), root model 1002: drawn by its script "
            f"(application/javascript {len(script)} B), which holds its data, not shown; raw=true, offset=")
    assert head in text
    line = next(line for line in text.split("\n") if line.startswith(head))
    assert raw_json(server, path, line) == {"application/javascript": script}
    assert ("--- output 2: display ---\n[BokehJS loader (application/vnd.bokehjs_load.v0+json): the script that "
            "loads Bokeh into the page, not shown]") in text


def test_a_bokeh_2_document_is_read_as_its_list_of_models(tmp_path, server):
    """Bokeh 2 lists its models, each {type, id, attributes}, referring to each other by {id}; its
    arrays are {__ndarray__: base64, dtype, shape}, not compressed."""
    models = [{"type": "Plot", "id": "1", "attributes": {"title": {"id": "2"}, "below": [{"id": "3"}],
                                                           "left": [{"id": "4"}], "renderers": [{"id": "5"}]}},
              {"type": "Title", "id": "2", "attributes": {"text": "Rainfall"}},
              {"type": "LinearAxis", "id": "3", "attributes": {"axis_label": "month"}},
              {"type": "LinearAxis", "id": "4", "attributes": {"axis_label": "mm"}},
              {"type": "GlyphRenderer", "id": "5", "attributes": {"glyph": {"id": "6"}, "data_source": {"id": "7"}}},
              {"type": "VBar", "id": "6", "attributes": {}},
              {"type": "ColumnDataSource", "id": "7", "attributes": {"data": {
                  "top": {"__ndarray__": base64.b64encode(struct.pack("<5i", 31, 28, 40, 12, 9)).decode(),
                          "dtype": "int32", "order": "little", "shape": [5]}}}}]
    docs = {"a1": {"roots": {"references": models, "root_ids": ["1"]}, "title": "Bokeh Application"}}
    script = f"(function(root) {{\n  var docs_json = {json.dumps(docs)};\n}})(window);\n"
    exec_ = {"output_type": "display_data", "metadata": {}, "data": {"application/javascript": script,
                                                                     "application/vnd.bokehjs_exec.v0+json": ""}}
    path = write(tmp_path, code("show(p)", exec_))
    shown = output_of(server, path).split("\n")
    assert shown[0].startswith('[Bokeh figure (application/vnd.bokehjs_exec.v0+json) "Rainfall": drawn by its script')
    assert shown[1:] == ["x axis: month; y axis: mm", "glyph 1: VBar, 5 points; top: 31, 28, 40, …"]


def test_html_of_any_media_type_is_laid_out_and_its_scripts_said(tmp_path, server):
    big = "<script>" + "var x = 1;" * 1_100_000 + "</script><p>after the script</p>"  # past libxml2's 10 MB text
    path = write(tmp_path, code("show()", result({"text/vnd.example.v1+html": "<p>hello</p><script>go()</script>"}),
                                result({"text/html": big})))
    text = text_of(server.read(path=path))
    assert ("--- output 1: result ---\n[text/vnd.example.v1+html output, shown as text; its 1 script (4 B) left out]\n"
            "hello\n--- output 2: result ---\n[text/html output, shown as text; its 1 script (11.0 MB) left out]\n"
            "after the script\n") in text


def test_html_that_writes_markup_out_shows_it_as_a_browser_does(tmp_path, server):
    path = write(tmp_path, code("doc()", result({"text/html": "<p>Type &amp;lt;b&amp;gt; for &amp;amp; <b>bold</b></p>"
                                                              "<pre>x &amp;lt; y &lt; z</pre>"})))
    text = text_of(server.read(path=path))
    assert "[text/html output, shown as text]\nType &lt;b&gt; for &amp; bold\n\nx &lt; y < z\n" in text, text


def test_a_widget_is_named_with_the_state_the_notebook_saved(tmp_path, server):
    state = {"s1": {"model_name": "IntSliderModel", "model_module": "@jupyter-widgets/controls",
                    "state": {"description": "Speed:", "value": 7, "layout": "IPY_MODEL_l1"}},
             "d1": {"model_name": "DropdownModel", "state": {"_options_labels": ["a", "b"], "index": 0}},
             "b1": {"model_name": "VBoxModel", "state": {"children": ["IPY_MODEL_s1", "IPY_MODEL_d1"]}}}
    metadata = {"widgets": {"application/vnd.jupyter.widget-state+json": {"state": state, "version_major": 2}}}
    views = [result({WIDGET: {"model_id": model, "version_major": 2}, "text/plain": text})
             for model, text in (("s1", "IntSlider(value=7)"), ("d1", "Dropdown(options=('a', 'b'))"),
                                 ("b1", "VBox()"), ("gone", "Label()"))]
    path = write(tmp_path, code("w", *views), metadata=metadata)
    text = text_of(server.read(path=path))
    note = f"[interactive widget ({WIDGET}), not shown: "
    assert f'{note}IntSliderModel, model s1: description "Speed:", value 7; its text form: IntSlider(value=7)]' in text
    assert f'{note}DropdownModel, model d1: options ["a", "b"]; its text form: ' in text
    assert (f'{note}VBoxModel, model b1: 2 child widgets (IntSliderModel description "Speed:", value 7; '
            'DropdownModel options ["a", "b"]); its text form: VBox()]') in text
    assert f"{note}model gone, its state not saved in the notebook; its text form: Label()]" in text
    outline = text_of(server.read(path=path, outline=True))
    assert re.search(rf'{re.escape(WIDGET)} \d+ B \(IntSliderModel, model s1: description "Speed:", value 7\)', outline)
    # Colab saves the models directly under the mime type, without "state" around them.
    colab = {"widgets": {"application/vnd.jupyter.widget-state+json": state}}
    path = write(tmp_path, code("w", views[0]), metadata=colab)
    assert f'{note}IntSliderModel, model s1: description "Speed:", value 7;' in text_of(server.read(path=path))


def test_find_searches_a_figure_as_the_read_shows_it(tmp_path, server):
    spec = {"data": [{"type": "bar", "name": "sales", "y": [2, 3, 1]}], "layout": {"title": "bar plot"}}
    path = write(tmp_path, code("fig", result({PLOTLY: spec})))
    found = server.read(path=path, find="bar plot")
    assert [(hit["cell"], hit["in"]) for hit in found["shown"]["hits"]] == [(1, "output 1")]


def test_a_figure_read_from_the_editor_names_its_lines_in_the_file_on_disk(tmp_path, server):
    """A notebook open in the editor is read from what the editor holds; the raw read a figure names
    shows the file on disk, so its lines are looked for there."""
    spec = {"data": [{"type": "bar", "y": [2, 3, 1]}], "layout": {"title": "bar plot"}}
    path = write(tmp_path, code("intro = 1", count=None), code("fig", result({PLOTLY: spec})))
    file = (tmp_path / path).resolve()
    cells = [("code", "intro = 2  # edited, not saved"), ("code", "fig")]
    server.notify("notebookDocument/didOpen", {
        "notebookDocument": {"uri": file.as_uri(), "notebookType": "jupyter-notebook", "version": 1,
                             "cells": [{"kind": 2, "document": f"{file.as_uri()}#cell{i}", "metadata": {}}
                                       for i in range(len(cells))]},
        "cellTextDocuments": [{"uri": f"{file.as_uri()}#cell{i}", "languageId": "python", "version": 1, "text": text}
                              for i, (_, text) in enumerate(cells)]})
    text = text_of(server.read(path=path, cells="2"))
    assert "Read from the notebook open in the editor" in text
    head = next(line for line in text.split("\n") if line.startswith("[Plotly figure"))
    assert raw_json(server, path, head) == {PLOTLY: spec}


def test_odd_figure_specifications_read_as_far_as_they_go(tmp_path, server):
    """Specs of the wrong shape, damaged typed arrays and values nested deep are summarised as far
    as they make sense, never a failed read."""
    deep: list | int = 1
    for _ in range(400):
        deep = [deep]
    views: dict = {"mark": "bar"}
    for _ in range(200):
        views = {"layer": [views]}
    odd = [{PLOTLY: {"data": [{"type": "bar", "y": [deep]}], "layout": {"title": deep}}},
           {PLOTLY: {"data": [{"y": {"dtype": "f8", "bdata": "!!!"}}, {"type": ["a"], "name": None}]}},
           {PLOTLY: "not a figure"},
           {VEGALITE: views},
           {VEGA: {"marks": "x", "axes": [1, {"orient": "left"}], "data": [{"values": [deep]}]}},
           {WIDGET: "not a view"},
           {PLOTLY: {"data": [{"type": f"kind{n}"} for n in range(7)]}}]
    path = write(tmp_path, code("odd", *map(result, odd)))
    outputs = re.split(r"\n--- output \d+: result ---\n", text_of(server.read(path=path)).split("\n\n")[0])[1:]
    assert outputs[6].startswith(f"[Plotly figure ({PLOTLY}), 7 kind0/kind1/kind2/kind3/kind4/… traces; raw=true")
    assert [output.split("\n")[1:] for output in outputs[:6]] == [
        ["trace 1: bar, 1 point; y: " + "[" * 80 + "…"], ["trace 1: scatter, 0 points", "trace 2: unknown, 0 points"],
        [], [], ["axes: left (?)", 'data "?": 1 row; first: ' + "[" * 80 + "…"], []]
    assert outputs[0].startswith(f"[Plotly figure ({PLOTLY}), 1 bar trace; raw=true, offset=")
    assert outputs[5] == f"[interactive widget ({WIDGET}), not shown: no model id]"


def test_a_bokeh_figure_is_summarised_from_the_document_its_script_holds(tmp_path, server):
    """data/notebook/bokeh_figure.ipynb: the outputs Bokeh 3.9.2 publishes for `output_notebook()`
    (its loader's script abridged) and `show(p)` (the figure's div, then its script: made by
    bokeh.embed.notebook.notebook_content), a line of NumPy arrays (sent gzipped) and a scatter of
    lists, written by nbformat."""
    (tmp_path / "b.ipynb").write_bytes((Path(__file__).parent.parent / "data/notebook/bokeh_figure.ipynb").read_bytes())
    text = text_of(server.read(path="b.ipynb", cells="2"))
    figure = text.split("--- output 2: display ---\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert figure[0].startswith('[Bokeh figure (application/vnd.bokehjs_exec.v0+json), root model p1006 "Sales by '
                                'region": drawn by its script (application/javascript 6.7 KB), which holds its data, '
                                "not shown; raw=true, offset=")
    assert figure[1:] == ["x axis: quarter; y axis: units",
                          'glyph 1: Line "north", 4 points; x: 1.0, 2.0, 3.0, …; y: 4.5, 6.5, 5.5, …',
                          'glyph 2: Scatter "south", 3 points; x: 1, 2, 3; y: 3, 2, 7']
    # The lines named hold the script (one of its lines is longer than a raw read shows uncut).
    file = (tmp_path / "b.ipynb").read_text()
    offset, limit = map(int, RAW_CALL.search(figure[0]).groups())
    named = "\n".join(file.split("\n")[offset - 1:offset - 1 + limit]).rstrip(",")
    script = json.loads(file)["cells"][1]["outputs"][1]["data"]["application/javascript"]
    assert json.loads("{" + named + "}") == {"application/javascript": script}
