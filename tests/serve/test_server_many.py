"""The JSON-RPC server's read of many files (agentread/readMany) and its unchanged-read
stub, over stdio."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from builders import code, notebook, png_b64, result
from rpc import ServerProcess, serving, text_of
from trees import GLOB, HEADER, HIT_FILES, NEEDLE, TREE_FILES, make_tree, re_hits, text_hits

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


@pytest.fixture
def tree_root(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    make_tree(root)
    return root


@pytest.fixture
def tree(tree_root: Path):
    yield from serving(tree_root)


def follow(server: ServerProcess, params: dict, max_bytes: int) -> list[dict]:
    """Every reply from `params` on, passing each `next` back as the arguments, until it is
    absent; at most a reply per file, so that a `next` that does not move on fails."""
    replies = [server.request("agentread/readMany", {**params, "maxBytes": max_bytes})["result"]]
    while "next" in replies[-1]:
        assert len(replies) <= TREE_FILES, "next does not move on"
        replies.append(server.request("agentread/readMany", {**replies[-1]["next"], "maxBytes": max_bytes})["result"])
    return replies


def searched(replies: list[dict]) -> tuple[list[tuple[str, int]], Counter]:
    """The hits the replies name, in their files' shown hits and in their text alike; and how
    often each file was answered to its end (a file cut goes on in a later reply)."""
    hits = [(f["path"], hit["line"]) for r in replies for f in r["files"] for hit in f.get("shown", {}).get("hits", [])]
    assert [hit for r in replies for hit in text_hits(text_of(r))] == hits
    return hits, Counter(f["path"] for r in replies for f in r["files"] if f["state"] != "cut")


@pytest.mark.parametrize("max_bytes", [8192, 1400])
def test_a_search_of_many_files_reaches_every_hit_once(tree_root: Path, tree: ServerProcess, max_bytes: int):
    """The hits are in the last files a search walks, past the 100 a call shows: following `next`
    gives exactly the hits `re` finds, each file answered once, in few calls."""
    replies = follow(tree, {"paths": [GLOB], "find": NEEDLE}, max_bytes)
    hits, answered = searched(replies)
    assert hits == re_hits(tree_root, GLOB, NEEDLE) and len(hits) == 2 * HIT_FILES
    assert len(answered) == TREE_FILES and set(answered.values()) == {1}
    assert len(replies) <= HIT_FILES + 1
    for reply in replies:
        assert len(text_of(reply).encode()) <= max(max_bytes, 2000)  # MIN_REPLY_BYTES
        assert "No hit" not in text_of(reply)  # a file without a hit costs a count, not a block
    misses = sum(int(n) for r in replies for n in re.findall(r", (\d+) without a hit\.\]", text_of(r)))
    assert misses == TREE_FILES - HIT_FILES


def test_a_read_of_many_files_shows_every_line_once_past_the_first_hundreds(tree_root: Path, tree: ServerProcess):
    replies = follow(tree, {"paths": [GLOB]}, 8192)
    shown: dict[str, list[int]] = {}
    for reply in replies:
        path = None
        for line in text_of(reply).splitlines():
            header = HEADER.match(line)
            number = re.match(r"^ *(\d+)\t", line)
            if header:
                path = header[1]
            elif number and path:
                shown.setdefault(path, []).append(int(number[1]))
    assert len(shown) == TREE_FILES
    for path, numbers in shown.items():
        assert numbers == list(range(1, len((tree_root / path).read_text().splitlines()) + 1)), path


STDLIB = Path(os.path.dirname(os.path.dirname(asyncio.__file__)))


@pytest.mark.skipif(not (STDLIB / "email").is_dir(), reason="the Python standard library's sources are not here")
def test_a_search_of_the_standard_library_finds_what_re_finds():
    """A real tree of hundreds of files, searched at VS Code's reply size."""
    server = ServerProcess(STDLIB)
    try:
        replies = follow(server, {"paths": ["*/*.py"], "find": "def __reduce__"}, 8192)
    finally:
        server.close()
    hits, answered = searched(replies)
    # A file cut at the reply's size goes on after the files the same reply searched whole.
    assert sorted(hits) == re_hits(STDLIB, "*/*.py", "def __reduce__") and len(set(hits)) == len(hits) > 0
    assert set(answered.values()) == {1}
