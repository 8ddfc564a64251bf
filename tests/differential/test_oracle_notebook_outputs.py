"""Rich outputs of third-party notebooks, read over JSON-RPC and held to what nbformat reads in the
file: HTML by any of its media types laid out as text (scripts left out and said), each figure's
summary (title, traces, their points) and the raw read it names, which shows that figure's whole
JSON, and widgets named with the state the notebook saved for them."""

from __future__ import annotations

import base64
import json
import re

import nbformat
import numpy
import pytest
from harness import THIRDPARTY, body, follow

JUPYTEXT = "jupytext-1.19.6/jupytext-1.19.6"
WORLD = f"{JUPYTEXT}/demo/World population.ipynb"
PLOTLY_GRAPHS = f"{JUPYTEXT}/tests/data/notebooks/inputs/ipynb_py/plotly_graphs.ipynb"
NBCLIENT = "nbclient-0.10.2/nbclient-0.10.2/tests/files"
PLOTLY = "application/vnd.plotly.v1+json"
WIDGET = "application/vnd.jupyter.widget-view+json"

RAW_CALL = re.compile(r"raw=true, offset=(\d+), limit=(\d+) shows its whole JSON\]")
GUTTER = re.compile(r" *\d+\t(.*)")


def notebook(name):
    path = THIRDPARTY / name
    if not path.is_file():
        pytest.skip(f"{path} is absent: run ./scripts/fetch-thirdparty")
    return nbformat.read(str(path), as_version=4)


def outputs_with(nb, mime):
    """(cell number, output number, output) of each output whose bundle holds `mime`."""
    return [(index, number, output) for index, cell in enumerate(nb.cells, 1)
            for number, output in enumerate(cell.get("outputs", []), 1) if mime in output.get("data", {})]


def output_text(rpc, name, cell, number):
    """The lines a read of one cell shows for its output `number`."""
    text = body(rpc({"path": name, "cells": str(cell)}))
    after = text.split(f"--- output {number}: ", 1)[1].split("\n", 1)[1]
    return re.split(r"\n--- output \d+: |\n\n", after, maxsplit=1)[0]


def test_html_of_a_libraries_own_media_type_is_laid_out_and_its_script_left_out(rpc):
    """World population's cell 19: plotly.js (2.9 MB, one `text/vnd.plotly.v1+html` beside the same
    `text/html`) is HTML holding scripts only: one line saying so, not the script as text."""
    nb = notebook(WORLD)
    [(cell, number, output)] = [found for found in outputs_with(nb, "text/vnd.plotly.v1+html")
                                if PLOTLY not in found[2]["data"]]
    shown = output_text(rpc, WORLD, cell, number)
    size = len(output["data"]["text/html"])
    assert size > 2_000_000
    assert shown == f"[text/html {size / 1e6:.1f} MB: no visible text; its 3 scripts (2.9 MB) left out, raw=true " \
                    "shows them]"
    # Following `next` from the start reads the notebook in a few replies, not a line of script
    # 2,000 characters a reply.
    assert len(follow(rpc, {"path": WORLD})) <= 3


@pytest.mark.parametrize("name", [PLOTLY_GRAPHS, WORLD, f"{JUPYTEXT}/demo/vscode/notebook.ipynb"])
def test_a_plotly_figure_is_summarised_and_its_raw_read_shows_its_whole_json(rpc, name):
    nb = notebook(name)
    figures = outputs_with(nb, PLOTLY)
    assert figures
    for cell, number, output in figures:
        spec = output["data"][PLOTLY]
        shown = output_text(rpc, name, cell, number)
        title = spec["layout"].get("title")
        title = title.get("text") if isinstance(title, dict) else title
        head = shown.split("\n")[0]
        assert head.startswith(f"[Plotly figure ({PLOTLY})" + (f' "{title}"' if title else "")), head
        for axis in ("xaxis", "yaxis"):
            title = spec["layout"].get(axis, {}).get("title")
            title = title.get("text") if isinstance(title, dict) else title
            assert not title or f"{axis[0]} axis: {title}" in shown.split("\n")[1]
        for trace_number, trace in enumerate(spec["data"], 1):
            arrays = {axis: values(trace[axis]) for axis in ("x", "y") if axis in trace}
            points = max(map(len, arrays.values()))
            name_part = f' "{trace["name"]}"' if "name" in trace else ""
            line = f"trace {trace_number}: {trace.get('type', 'scatter')}{name_part}, {points} points; "
            first = ", ".join(json.dumps(v) if not isinstance(v, str) else v for v in arrays["y"][:3])
            assert f"{line}" in shown and f"y: {first}" in shown
        offset, limit = map(int, RAW_CALL.search(head).groups())
        assert json.loads("{" + "\n".join(raw_lines(rpc, name, offset, limit)).rstrip(",") + "}") == {PLOTLY: spec}


def values(array):
    """A trace's array as plotly.py writes it: a list, or a typed array ({dtype, bdata}) that
    numpy, which plotly.py writes it with, decodes."""
    if isinstance(array, dict):
        return numpy.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"]).tolist()
    return array


def raw_lines(rpc, name, offset, limit):
    """The lines a raw read of `offset` and `limit` shows, read on while the reply's size cuts
    it."""
    lines: list[str] = []
    while len(lines) < limit:
        result = rpc({"path": name, "raw": True, "offset": offset + len(lines), "limit": limit - len(lines)})
        lines += [m[1] for line in body(result).split("\n") if (m := GUTTER.fullmatch(line))]
    return lines


def test_the_bar_plot_names_its_data_and_title_where_the_read_said_only_scripts(rpc):
    shown = output_text(rpc, PLOTLY_GRAPHS, 5, 1)
    assert shown.startswith(f'[Plotly figure ({PLOTLY}) "bar plot", 1 bar trace; raw=true, offset=')
    assert shown.endswith("\ntrace 1: bar, 3 points; y: 2, 3, 1")


def test_the_outline_names_each_figure_as_the_read_does(rpc):
    outline = body(rpc({"path": PLOTLY_GRAPHS, "outline": True}))
    named = re.findall(rf'{re.escape(PLOTLY)} [\d.]+ KB \(Plotly figure "bar plot", 1 bar trace\)', outline)
    assert len(named) == 2, outline


@pytest.mark.parametrize("name", ["JupyterWidgets.ipynb", "Output.ipynb"])
def test_a_widget_is_named_with_its_saved_state(rpc, name):
    nb = notebook(f"{NBCLIENT}/{name}")
    states = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    widgets = outputs_with(nb, WIDGET)
    assert widgets
    for cell, number, output in widgets:
        model = output["data"][WIDGET]["model_id"]
        shown = output_text(rpc, f"{NBCLIENT}/{name}", cell, number)
        head = f"[interactive widget ({WIDGET}), not shown: "
        if model not in states:
            assert shown.startswith(f"{head}model {model}, its state not saved in the notebook; "), shown
            continue
        state = states[model]["state"]
        assert shown.startswith(f"{head}{states[model]['model_name']}, model {model}"), shown
        if "value" in state:
            assert f"value {json.dumps(state['value'])}" in shown
        if "outputs" in state:
            assert f"{len(state['outputs'])} output" in shown
