"""A notebook open in the editor is read as the user sees it: cell sources from LSP notebook
sync, outputs sent by the extension for cells run since the last save, and a note on which
version was read."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import time

from PIL import Image

from rpc import text_of


def _png(width: int, height: int) -> str:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


SAVED = {
    "nbformat": 4, "nbformat_minor": 5,
    "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}},
    "cells": [
        {"id": "intro", "cell_type": "markdown", "metadata": {}, "source": ["# Saved title"]},
        {"id": "calc", "cell_type": "code", "metadata": {}, "execution_count": 1, "source": ["1 + 1"],
         "outputs": [{"output_type": "execute_result", "execution_count": 1, "metadata": {},
                      "data": {"text/plain": ["2"]}}]},
    ],
}


def _open(server, path, cells):
    uri = path.resolve().as_uri()
    cell_docs, text_docs = [], []
    for i, (kind, source, language) in enumerate(cells):
        # As code-server spells them: an authority and a percent-encoded fragment.
        cell_uri = f"vscode-notebook-cell://127.0.0.1:8080{path.resolve()}#W{i}sdnNjb2RlLXJlbW90ZQ%3D%3D"
        cell_docs.append({"kind": 2 if kind == "code" else 1, "document": cell_uri, "metadata": {}})
        text_docs.append({"uri": cell_uri, "languageId": language, "version": 1, "text": source})
    server.notify("notebookDocument/didOpen", {
        "notebookDocument": {"uri": uri, "notebookType": "jupyter-notebook", "version": 1, "cells": cell_docs},
        "cellTextDocuments": text_docs})
    return uri


def test_unsaved_cell_sources_and_saved_outputs(server, tmp_path):
    nb = tmp_path / "work.ipynb"
    nb.write_text(json.dumps(SAVED))
    _open(server, nb, [("markdown", "# Edited title, not saved", "markdown"), ("code", "1 + 1", "python")])
    result = server.read(path="work.ipynb")
    text = text_of(result)
    assert result["kind"] == "notebook" and result["totalCells"] == 2
    assert "Edited title, not saved" in text and "Saved title" not in text
    assert "outputs as last saved" in text
    assert "2" in text.split("### Cell 2", 1)[1]  # the saved output, matched to the unchanged cell
    assert "[id=calc]" in text


def _run_in_editor(server, nb, source: str, count: int, outputs: list) -> dict:
    """The saved notebook open in the editor with its code cell's source changed and run
    there; its read."""
    nb.write_text(json.dumps(SAVED))
    uri = _open(server, nb, [("markdown", "# Saved title", "markdown"), ("code", source, "python")])
    server.notify("agentread/notebookOutputs", {"uri": uri, "cells": [
        {"outputs": None}, {"executionCount": count, "outputs": outputs}]})
    time.sleep(0.2)
    return server.read(path=str(nb))


def test_outputs_supplied_by_the_extension_replace_saved_ones(server, tmp_path):
    result = _run_in_editor(server, tmp_path / "run.ipynb", "plot()", 7, [
        {"output_type": "stream", "name": "stdout", "text": "fresh run\n"},
        {"output_type": "display_data", "metadata": {}, "data": {"image/png": _png(320, 200),
                                                                "text/plain": "<Figure>"}}])
    text = text_of(result)
    assert "fresh run" in text and "exec=7" in text
    assert "outputs as shown there" in text
    images = [p for p in result["content"] if p["type"] == "image"]
    assert [(i["width"], i["height"]) for i in images] == [(320, 200)]
    assert not any(len(word) > 200 for word in text.split())  # no base64 in the text


def test_disk_newer_than_the_editor_is_said(server, tmp_path):
    nb = tmp_path / "stale.ipynb"
    nb.write_text(json.dumps(SAVED))
    _open(server, nb, [("markdown", "# Old view", "markdown")])
    # Once this is answered the server has taken the open (it handles messages in order): a later
    # time is after it.
    server.read(path="not-there.txt")
    later = time.time() + 5
    os.utime(nb, (later, later))
    text = text_of(server.read(path="stale.ipynb"))
    assert "Old view" in text and "saved after the editor's last change" in text
    raw = text_of(server.read(path="stale.ipynb", raw=True))
    assert "Saved title" in raw  # raw=true reads the file on disk


def test_each_read_sees_the_edits_made_since_the_last(server, tmp_path):
    """The server builds an open notebook's copy once per edit, not once per read: a cell typed
    into, then outputs run, after a read are each in the next read."""
    nb = tmp_path / "edited.ipynb"
    nb.write_text(json.dumps(SAVED))
    uri = _open(server, nb, [("markdown", "# First words", "markdown"), ("code", "1 + 1", "python")])
    assert "First words" in text_of(server.read(path="edited.ipynb"))
    cell_uri = f"vscode-notebook-cell://127.0.0.1:8080{nb.resolve()}#W0sdnNjb2RlLXJlbW90ZQ%3D%3D"
    server.notify("notebookDocument/didChange", {
        "notebookDocument": {"uri": uri, "version": 2},
        "change": {"cells": {"textContent": [{"document": {"uri": cell_uri, "version": 2},
                                              "changes": [{"text": "# Second words"}]}]}}})
    text = text_of(server.read(path="edited.ipynb"))
    assert "Second words" in text and "First words" not in text
    server.notify("agentread/notebookOutputs", {"uri": uri, "cells": [
        {"outputs": None}, {"executionCount": 9, "outputs": [
            {"output_type": "stream", "name": "stdout", "text": "ran again\n"}]}]})
    text = text_of(server.read(path="edited.ipynb"))
    assert "ran again" in text and "exec=9" in text and "Second words" in text


def test_closing_the_notebook_goes_back_to_disk(server, tmp_path):
    nb = tmp_path / "closed.ipynb"
    nb.write_text(json.dumps(SAVED))
    uri = _open(server, nb, [("markdown", "# Live only", "markdown")])
    assert "Live only" in text_of(server.read(path="closed.ipynb"))
    server.notify("notebookDocument/didClose", {"notebookDocument": {"uri": uri}, "cellTextDocuments": [
        {"uri": f"vscode-notebook-cell://127.0.0.1:8080{nb.resolve()}#W0sdnNjb2RlLXJlbW90ZQ%3D%3D"}]})
    text = text_of(server.read(path="closed.ipynb"))
    assert "Saved title" in text and "open in the editor" not in text


SAVED_V3 = {
    "nbformat": 3, "nbformat_minor": 0, "metadata": {"name": "old"},
    "worksheets": [{"cells": [
        {"cell_type": "heading", "level": 1, "metadata": {}, "source": ["Old title"]},
        {"cell_type": "code", "language": "python", "collapsed": False, "metadata": {}, "input": ["6 * 7"],
         "prompt_number": 3, "outputs": [{"output_type": "pyout", "prompt_number": 3, "metadata": {},
                                          "text": ["42"]}]},
    ]}],
}


def test_an_nbformat_3_file_on_disk_lends_its_outputs_to_the_open_notebook(server, tmp_path):
    nb = tmp_path / "old.ipynb"
    nb.write_text(json.dumps(SAVED_V3))
    _open(server, nb, [("markdown", "# Old title, edited", "markdown"), ("code", "6 * 7", "python")])
    first, again = server.read(path="old.ipynb"), server.read(path="old.ipynb")
    text = text_of(first)
    assert "Old title, edited" in text and "outputs as last saved" in text
    assert re.search(r"### Cell 2 \[id=~[0-9a-f]{8}\] code \(python\) exec=3\n6 \* 7\n--- output 1: result ---\n42\n",
                     text)  # the saved output, upgraded by nbformat, matched to the unchanged cell
    assert text == text_of(again)  # ids derived from the source, not drawn anew at each read
    assert first["shown"] == {"cells": [1, 2]} and "Warning" not in text


def test_outputs_off_the_schema_from_the_extension_are_read_and_named(server, tmp_path):
    result = _run_in_editor(server, tmp_path / "odd.ipynb", "run()", 2, [
        {"output_type": "stream", "name": "stdout", "text": "fine\n"}, {"name": "stdout", "text": "no type\n"}])
    text = text_of(result)
    assert "fine" in text and result["kind"] == "notebook"
    assert re.search(r"cell 2 \(id=~[0-9a-f]{8}\): outputs\[1\] is missing .output_type.", text), text
