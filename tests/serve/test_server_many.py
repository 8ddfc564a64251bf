"""The JSON-RPC server's read of many files (agentread/readMany) and its unchanged-read
stub, over stdio."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from builders import code, notebook, png_b64, result
from rpc import ServerProcess, text_of

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("".join(f"alpha {i}\n" for i in range(1, 11)))
    shutil.copy(EXAMPLES / "pdflatex-4-pages.pdf", root / "doc.pdf")  # read in a worker process
    shutil.copy(EXAMPLES / "duck.png", root / "pic.png")
    (tmp_path / "outside.txt").write_text("from outside\n")
    return root


def test_many_files_in_one_reply_each_in_its_place(folder: Path):
    outside = str(folder.parent / "outside.txt")
    server = ServerProcess(folder)
    try:
        paths = ["a.txt", "doc.pdf", "pic.png", "missing.txt", outside]
        reply = server.request("agentread/readMany", {"paths": paths, "consent": [outside]})["result"]
        states = {f["path"]: (f["state"], f.get("kind")) for f in reply["files"]}
        assert states["a.txt"] == ("whole", "text") and states["pic.png"] == ("whole", "image")
        assert states["doc.pdf"][1] == "pdf" and states["missing.txt"] == ("error", "error")
        assert states[outside] == ("whole", "text")
        text = text_of(reply)
        assert text.index("==> a.txt <==") < text.index("--- Page 1 ---") < text.index("from outside")
        assert any(p["type"] == "image" for p in reply["content"])
        refused = server.request("agentread/readMany", {"paths": [outside, "a.txt"]})["result"]
        assert [f["state"] for f in refused["files"]] == ["error", "whole"]
        assert refused["files"][0]["error"]["code"] == "outside_workspace"
    finally:
        server.close()


def test_a_malformed_read_of_many_is_an_invalid_params_error(folder: Path):
    server = ServerProcess(folder)
    try:
        for params in ({"paths": []}, {"paths": ["a.txt"], "consent": True}, {"paths": ["a.txt"], "other": 1}):
            answer = server.request("agentread/readMany", params)
            assert answer["error"]["code"] == -32602, params
    finally:
        server.close()


def test_the_stub_answers_an_unchanged_reread_once_asked_for(folder: Path):
    server = ServerProcess(folder, init_options={"unchangedStub": True})
    try:
        first = server.read(path="a.txt")
        assert "alpha 10" in text_of(first) and not first.get("unchanged")
        again = server.read(path="a.txt")
        assert again["unchanged"] is True and "alpha" not in text_of(again)
        assert (again["startLine"], again["endLine"]) == (first["startLine"], first["endLine"])
        assert not server.read(path="a.txt", offset=2).get("unchanged")  # another window
        (folder / "a.txt").write_text("changed\n")
        assert text_of(server.read(path="a.txt")).splitlines()[-2] == "     1\tchanged"
        pdf = server.read(path="doc.pdf", pages="1")
        assert not pdf.get("unchanged") and server.read(path="doc.pdf", pages="1")["unchanged"] is True
    finally:
        server.close()
    plain = ServerProcess(folder)
    try:
        plain.read(path="a.txt")
        assert not plain.read(path="a.txt").get("unchanged")
    finally:
        plain.close()


def hosts_view(reply: dict, image_note) -> str:
    """What a host that concatenates parts shows the model (VS Code's chat agent): text parts as
    they are, each image replaced by a note of the host's own."""
    return "".join(p["text"] if p["type"] == "text" else image_note(p) for p in reply["content"])


def test_parts_join_line_for_line_as_a_host_concatenates_them(folder: Path):
    (folder / "plot.ipynb").write_bytes(notebook(code("plot()", result({"image/png": png_b64(),
                                                                           "text/plain": "<Figure>"}))))
    server = ServerProcess(folder)
    try:
        paths = ["a.txt", "plot.ipynb", "pic.png"]
        reply = server.request("agentread/readMany", {"paths": paths})["result"]
        kinds = [p["type"] for p in reply["content"]]
        assert kinds == ["text", "image", "text", "image", "text"], kinds  # adjacent text parts as one
        # The CLI prints a line per image: a host's note in its place gives the same lines.
        cli = subprocess.run([sys.executable, "-m", "agentread", "read", *paths, "--root", str(folder)],
                             capture_output=True, text=True, check=True).stdout
        as_cli = hosts_view(reply, lambda p: f"[image: {p['mimeType']} {p['width']}x{p['height']}, attached]")
        assert as_cli.splitlines() == cli.splitlines()
        lines = hosts_view(reply, lambda _: "[Image content is not available]").split("\n")
        assert re.fullmatch(r"==> a\.txt <== \[version [0-9a-f]{16}\]", lines[0]) and lines[1] == "     1\talpha 1"
        assert lines.count("[Image content is not available]") == 2, lines
        single = server.read(path="plot.ipynb")
        assert [p["type"] for p in single["content"]][:2] == ["text", "image"]
        assert single["content"][0]["text"].endswith("attached]\n")
        assert all(p["text"].startswith("\n") for p in single["content"][2:])
    finally:
        server.close()
