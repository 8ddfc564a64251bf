"""A request field the file's kind does not take is the error `not_for_this_kind`, naming the
field, the file and what reads it; every field a kind takes still reads. Through the real server
over stdio (files of every kind built here, an archive's members, a folder, the editor's open
buffers), read_many in process, and the CLI."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from agentread import request as request_module
from agentread.engine import Engine
from agentread.many import parse_many_request, read_many
from agentread.readers.fields import KINDS, USES
from agentread.workspace import Workspace
from builders import build_pdf, code, deck, document, markdown, notebook, png_b64, stream, workbook
from rpc import REPO, serving, text_of

NOTES = "first line\nsecond line\nthird line\n"


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ws")
    (root / "notes.txt").write_text(NOTES)
    (root / "script.py").write_text("def main():\n    return 1\n")
    (root / "report.pdf").write_bytes(build_pdf(["alpha page text", "beta page text", "gamma page text"]))
    (root / "nb.ipynb").write_bytes(notebook(markdown("# Title"), code("print('hi')", stream("hi\n"))))
    (root / "doc.docx").write_bytes(document("Opening paragraph", "Closing paragraph"))
    (root / "deck.pptx").write_bytes(deck("Slide one text", "Slide two text"))
    (root / "book.xlsx").write_bytes(workbook({"A1": "name", "B1": "value", "A2": "rent", "B2": 1200}))
    (root / "plot.png").write_bytes(base64.b64decode(png_b64(64, 48)))
    (root / "folder").mkdir()
    (root / "folder" / "inner.txt").write_text("inner\n")
    with zipfile.ZipFile(root / "bundle.zip", "w") as z:
        z.writestr("readme.md", "# Bundle\nline two\n")
        z.writestr("docs/report.pdf", build_pdf(["member page one", "member page two"]))
    return root


@pytest.fixture(scope="module")
def server(ws: Path):
    yield from serving(ws)


def _refused(result: dict, field: str, name: str) -> str:
    assert result["isError"] is True and result["kind"] == "error", result
    assert result["error"]["code"] == "not_for_this_kind", result["error"]
    message = result["error"]["message"]
    assert message.startswith(field) and name in message and f"Call again without {field}" in message, message
    return message


REFUSED = [
    ("notes.txt", {"pages": "3"}, "pages", "a text file: read it by lines with offset and limit"),
    ("notes.txt", {"cells": "2"}, "cells", "a text file"),
    ("notes.txt", {"char": 5}, "char", "a text file"),
    ("notes.txt", {"view": "image"}, "view", "a text file"),
    ("notes.txt", {"regex": True}, "regex", "no find"),
    ("script.py", {"cells": "2"}, "cells", "a text file"),
    ("report.pdf", {"cells": "2"}, "cells", 'a PDF: read it by pages (pages="3")'),
    ("report.pdf", {"raw": True}, "raw", "a PDF"),
    ("report.pdf", {"char": 3, "column": 1}, "char", "a PDF"),
    ("nb.ipynb", {"pages": "2"}, "pages", 'a notebook: read it by cells (cells="2-7")'),
    ("nb.ipynb", {"view": "image"}, "view", "a notebook"),
    ("nb.ipynb", {"char": 2, "cells": "2"}, "char", "a notebook"),
    ("doc.docx", {"pages": "2"}, "pages", "a Word document (DOCX): read it by lines"),
    ("doc.docx", {"cells": "1"}, "cells", "a Word document"),
    ("deck.pptx", {"cells": "1"}, "cells", 'a PowerPoint deck (PPTX): read it by slides (pages="2")'),
    ("deck.pptx", {"char": 4, "column": 1}, "char", "a PowerPoint deck"),
    ("book.xlsx", {"cells": "1"}, "cells", "an Excel workbook (XLSX or XLS): read it by sheets"),
    ("book.xlsx", {"view": "image"}, "view", "an Excel workbook"),
    ("report.pdf", {"range": "A1:B2"}, "range", "a PDF"),
    ("bundle.zip/readme.md", {"range": "A1"}, "range", "a text file"),
    ("book.xlsx", {"outline": True, "range": "A1"}, "range", "an outline of it takes offset and limit"),
    ("book.xlsx", {"find": "rent", "range": "A1:B9"}, "range", "a find of it takes"),
    ("plot.png", {"offset": 2}, "offset", "an image: read it whole"),
    ("plot.png", {"pages": "1"}, "pages", "an image"),
    ("plot.png", {"raw": True}, "raw", "an image"),
    ("folder", {"pages": "2"}, "pages", "a folder: list it with offset and limit"),
    ("folder", {"raw": True}, "raw", "a folder"),
    ("bundle.zip", {"pages": "1"}, "pages", "an archive: list its members with offset and limit"),
    ("bundle.zip/docs", {"cells": "1"}, "cells", "an archive"),  # a folder inside the archive: its listing
    ("bundle.zip/readme.md", {"pages": "2"}, "pages", "a text file"),  # a member: by its own kind
    ("bundle.zip/docs/report.pdf", {"cells": "1"}, "cells", "a PDF"),
    # Outlines page their entries; a find takes what scopes it.
    ("report.pdf", {"outline": True, "pages": "2"}, "pages", "an outline of it takes offset and limit"),
    ("notes.txt", {"outline": True, "column": 3}, "column", "an outline of it takes offset, limit and raw"),
    ("nb.ipynb", {"outline": True, "column": 3}, "column", "an outline of it takes offset, limit and cells"),
    ("notes.txt", {"find": "line", "pages": "2"}, "pages", "a find of it takes offset, limit, column and raw"),
    ("book.xlsx", {"find": "rent", "pages": "1", "column": 1, "char": 2}, "char", "a find of it takes"),
    ("report.pdf", {"find": "page", "outline": True}, "outline", "a find of it takes"),
]


@pytest.mark.parametrize("path, params, field, says", REFUSED, ids=[f"{p}-{f}" for p, _, f, _ in REFUSED])
def test_a_field_the_kind_does_not_take_is_refused(server, path, params, field, says):
    message = _refused(server.read(path=path, **params), field, path)
    assert says in message, message


ACCEPTED = [
    ("notes.txt", {"offset": 2, "limit": 1}, "     2\tsecond line"),
    ("notes.txt", {"offset": 2, "column": 8}, "     2\tline"),
    ("notes.txt", {"raw": True, "view": "text"}, "     1\tfirst line"),
    ("notes.txt", {"outline": True, "limit": 5}, "notes.txt"),
    ("notes.txt", {"find": "third", "ignoreCase": True, "offset": 2, "column": 1, "limit": 1}, "line 3"),
    ("script.py", {"outline": True, "offset": 1, "limit": 1}, "main"),
    ("nb.ipynb", {"raw": True, "offset": 1, "limit": 3}, '     1\t{'),  # its JSON source, numbered
    ("nb.ipynb", {"raw": True, "find": "cell_type", "limit": 1}, "line "),  # ... searched as text
    ("report.pdf", {"pages": "2"}, "beta page text"),
    ("report.pdf", {"pages": "1-3", "offset": 2, "limit": 1, "column": 1}, "alpha page text"),
    ("report.pdf", {"pages": "3", "view": "image"}, "as a picture"),
    ("report.pdf", {"find": "gamma", "pages": "2-3", "limit": 5}, "page 3"),
    ("nb.ipynb", {"cells": "2"}, "print('hi')"),
    ("nb.ipynb", {"cells": "1-2", "offset": 2, "limit": 1, "column": 3}, "Title"),
    ("nb.ipynb", {"outline": True, "cells": "outline", "limit": 1}, "Cell 1"),
    ("nb.ipynb", {"find": "hi", "cells": "2", "regex": True}, "cell 2"),
    ("doc.docx", {"offset": 2, "limit": 1, "column": 2}, "losing paragraph"),
    ("doc.docx", {"outline": True, "offset": 1}, "doc.docx"),
    ("deck.pptx", {"pages": "2", "offset": 1, "limit": 5}, "Slide two text"),
    ("deck.pptx", {"find": "two", "pages": "2"}, "slide 2"),
    ("book.xlsx", {"pages": "1", "offset": 2, "limit": 1}, "rent"),
    ("book.xlsx", {"pages": "1", "offset": 2, "column": 1, "char": 2}, "ent"),
    ("book.xlsx", {"find": "1200", "pages": "1", "offset": 1, "column": 1}, "B2"),
    ("book.xlsx", {"range": "A2:B2", "limit": 1}, "rent"),
    ("book.xlsx", {"range": "A2:B3", "column": 1, "char": 2}, "ent"),
    ("plot.png", {"view": "image"}, "image/png"),
    ("plot.png", {"view": "text"}, "picture"),
    ("folder", {"offset": 1, "limit": 1}, "inner.txt"),
    ("folder", {"outline": True, "limit": 1}, "inner.txt"),
    ("bundle.zip", {"offset": 2, "limit": 1, "view": "text"}, "docs/report.pdf"),
    ("bundle.zip/readme.md", {"offset": 2, "raw": True}, "line two"),
    ("bundle.zip/docs/report.pdf", {"pages": "2"}, "member page two"),
]


@pytest.mark.parametrize("path, params, shows", ACCEPTED, ids=[f"{p}-{'-'.join(a)}" for p, a, _ in ACCEPTED])
def test_each_field_a_kind_takes_still_reads(server, path, params, shows):
    result = server.read(path=path, since="0" * 16, maxBytes=40_000, **params)  # since and maxBytes: any kind
    assert result["isError"] is False, result
    assert shows in text_of(result) or any(p.get("mimeType") == shows for p in result["content"]), text_of(result)


def test_the_editors_buffers_are_checked_as_their_kind(server, ws: Path):
    text_uri = (ws / "open.txt").resolve().as_uri()
    (ws / "open.txt").write_text("on disk\n")
    server.notify("textDocument/didOpen", {"textDocument": {"uri": text_uri, "languageId": "plaintext",
                                                            "version": 1, "text": "in the editor\n"}})
    nb = ws / "live.ipynb"
    nb.write_bytes(notebook(code("1 + 1")))
    cell = f"vscode-notebook-cell://{nb.resolve()}#W0"
    server.notify("notebookDocument/didOpen", {
        "notebookDocument": {"uri": nb.resolve().as_uri(), "notebookType": "jupyter-notebook", "version": 1,
                             "cells": [{"kind": 2, "document": cell, "metadata": {}}]},
        "cellTextDocuments": [{"uri": cell, "languageId": "python", "version": 1, "text": "2 + 2"}]})
    assert "in the editor" in text_of(server.read(path="open.txt"))  # the buffer is what is read
    _refused(server.read(path="open.txt", pages="1"), "pages", "open.txt")
    assert "2 + 2" in text_of(server.read(path="live.ipynb", cells="1"))
    _refused(server.read(path="live.ipynb", pages="1"), "pages", "live.ipynb")
    # raw reads the file on disk as text, by lines: cells then is not taken.
    assert "read with raw=true" in _refused(server.read(path="live.ipynb", raw=True, cells="1"), "cells", "live.ipynb")


def _many(ws: Path, params: dict):
    return read_many(Engine(Workspace([str(ws)])), parse_many_request(params))


def test_read_many_refuses_an_entrys_field_in_that_entry_alone(ws: Path):
    reply = _many(ws, {"paths": [{"path": "notes.txt", "pages": "2"}, {"path": "report.pdf", "pages": "2"},
                                 {"path": "nb.ipynb", "cells": "2"}]})
    assert [f.state == "error" for f in reply.files] == [True, False, False]
    assert reply.files[0].result.error.code == "not_for_this_kind"
    assert "beta page text" in reply.text() and "print('hi')" in reply.text()


def test_read_many_outline_and_find_for_every_file_keep_a_mixed_list_readable(ws: Path):
    """Beside `paths`, outline and find go to every file as its own would: each kind answers as a
    single read does, and an entry's own window that fits its kind stays."""
    outlines = _many(ws, {"paths": ["notes.txt", "report.pdf", "doc.docx", "book.xlsx", "folder",
                                    {"path": "script.py", "limit": 1}], "outline": True})
    assert all(f.result.error is None for f in outlines.files), outlines.text()
    found = _many(ws, {"paths": ["notes.txt", {"path": "report.pdf", "pages": "2-3"},
                                 {"path": "nb.ipynb", "cells": "2"}, "deck.pptx"], "find": "t", "ignoreCase": True})
    assert all(f.result.error is None for f in found.files), found.text()
    assert "page 2" in found.text() and "page 1," not in found.text()


def test_the_cli_says_so_and_exits_1(ws: Path):
    env = {**os.environ, "PYTHONPATH": str(REPO / "python"), "AGENTREAD_SESSION_DIR": ""}
    run = subprocess.run([sys.executable, "-m", "agentread", "read", "notes.txt", "--pages", "3", "--root", str(ws)],
                         capture_output=True, text=True, cwd=ws, env=env)
    assert run.returncode == 1
    assert run.stdout.startswith("Error: pages reads PDF pages") and "notes.txt is a text file" in run.stdout
    as_json = subprocess.run([sys.executable, "-m", "agentread", "read", "nb.ipynb", "--char", "2", "--json"],
                             capture_output=True, text=True, cwd=ws, env=env)
    assert json.loads(as_json.stdout)["error"]["code"] == "not_for_this_kind"


def test_the_mcp_tool_answers_the_same_error(ws: Path):
    pytest.importorskip("mcp", reason="the MCP SDK (the mcp extra) is not installed")
    from mcp_client import run, texts

    async def calls(client):
        return [await client.call_tool("read", args) for args in (
            {"path": "notes.txt", "pages": "3"}, {"path": "deck.pptx", "pages": "2"})]

    refused, slide = run({}, "--root", str(ws), calls=calls)
    assert refused.is_error and texts(refused).startswith("Error: pages reads PDF pages")
    assert "notes.txt is a text file" in texts(refused)
    assert not slide.is_error and "Slide two text" in texts(slide)


def test_every_request_field_is_decided():
    """A field the contract adds is taken by every kind, or named in the table with its use."""
    everywhere = {"path", "consent", "maxBytes", "since", "find"}
    assert set(USES) | everywhere == request_module._FIELDS
    for takes in KINDS.values():
        for fields in (takes.read, takes.outline, takes.find):
            assert fields is None or fields <= set(USES)
