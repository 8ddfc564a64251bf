"""`maxBytes`: a reply cut to the host's limit on a tool result's text, for every kind, through the
real server over stdio. Each reply holds at most that many bytes of text, and following `next` from
the first reply shows everything once: a cut made to fit is a cut like any other."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from builders import build_pdf, code, notebook, png_b64, result, stream
from rpc import REPO, ServerProcess, text_of

# The chat agent's default limit (VS Code's `largeToolResultsToDisk.thresholdBytes`), and a much
# smaller one.
HOST_LIMIT = 8192
SMALL_LIMIT = 2500

# More replies than any chain below needs: a chain that does not end by then is not moving on.
MAX_CHAIN = 400

EXAMPLES = REPO / "examples"


def text_bytes(result: dict) -> int:
    return sum(len(p["text"].encode("utf-8")) for p in result["content"] if p["type"] == "text")


def chain(server: ServerProcess, limit: int, **params) -> list[dict]:
    """Every reply from `params` on, following `next`, each checked to hold at most `limit`
    bytes of text."""
    replies = []
    while True:
        reply = server.read(**params, maxBytes=limit)
        assert not reply["isError"], text_of(reply)
        assert text_bytes(reply) <= limit, (params, text_bytes(reply))
        replies.append(reply)
        if "next" not in reply:
            return replies
        assert reply["truncated"] and len(replies) < MAX_CHAIN, params
        params = {"path": params["path"], **reply["next"]}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "big.txt").write_text("".join(f"line {n} of the big file, with some words after it\n"
                                              for n in range(1, 5001)))
    return tmp_path


def test_a_default_read_of_a_large_file_is_cut_to_the_limit_and_reads_on_to_its_end(server, ws):
    replies = chain(server, HOST_LIMIT, path="big.txt")
    first = replies[0]
    assert first["startLine"] == 1 and first["next"] == {"offset": first["endLine"] + 1}
    assert f"offset={first['endLine'] + 1}" in text_of(first).splitlines()[-2]  # the last: its version
    shown = [n for r in replies for n in range(r["shown"]["lines"][0], r["shown"]["lines"][1] + 1)]
    assert shown == list(range(1, 5001))  # every line once, in order
    assert "  5000\tline 5000 of the big file" in text_of(replies[-1])


def test_a_window_that_fits_is_not_cut(server, ws):
    reply = server.read(path="big.txt", offset=10, limit=20, maxBytes=HOST_LIMIT)
    assert reply["shown"]["lines"] == [10, 29] and "(limit of 20 lines)" in text_of(reply).splitlines()[-2]


def test_a_reply_from_the_end_fits_too(server, ws):
    reply = server.read(path="big.txt", offset=-2000, maxBytes=SMALL_LIMIT)
    assert text_bytes(reply) <= SMALL_LIMIT and reply["startLine"] == 3001 and reply["next"]["offset"] > 3001


def test_a_pdf_of_300_pages_reads_on_page_after_page(server, tmp_path):
    (tmp_path / "manual.pdf").write_bytes(build_pdf([f"page {n} " + "text of the manual " * 8 for n in range(1, 301)]))
    replies = chain(server, SMALL_LIMIT, path="manual.pdf")
    pages = [p for r in replies for p in r["shown"]["pages"]]
    assert pages == list(range(1, 301))


def test_a_pdf_page_over_the_limit_becomes_a_line_read_that_reads_on(server):
    if not (EXAMPLES / "pdflatex-4-pages.pdf").exists():
        pytest.skip("examples/pdflatex-4-pages.pdf is absent")
    proc = ServerProcess(workspace=EXAMPLES)
    try:
        replies = chain(proc, SMALL_LIMIT, path="pdflatex-4-pages.pdf")
    finally:
        proc.close()
    lines = [n for r in replies for n in range(r["shown"]["lines"][0], r["shown"]["lines"][1] + 1)]
    assert lines == list(range(1, lines[-1] + 1)) and len(replies) > 3
    assert {p for r in replies for p in r["shown"]["pages"]} == {1, 2, 3, 4}


def test_a_notebook_with_50_plots_reads_on_cell_after_cell(server, tmp_path):
    cells = [code(f"plot({n})\n" + "\n".join(f"x{i} = {i}" for i in range(30)),
                  stream("\n".join(f"epoch {i}: loss {i / 7:.4f}" for i in range(40)) + "\n"),
                  result({"image/png": png_b64(), "text/plain": "<Figure>"})) for n in range(1, 51)]
    (tmp_path / "plots.ipynb").write_bytes(notebook(*cells))
    replies = chain(server, HOST_LIMIT, path="plots.ipynb")
    shown = {c for r in replies for c in r["shown"]["cells"]}
    assert shown == set(range(1, 51))
    assert all(any(p["type"] == "image" for p in r["content"]) for r in replies[:-1])


def test_a_directory_of_long_names_pages_within_the_limit(server, tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    names = sorted(f"{n:03d}-" + "a-rather-long-file-name-" * 3 + ".txt" for n in range(300))
    for name in names:
        (folder / name).write_text("x")
    replies = chain(server, SMALL_LIMIT, path="d")
    entries = [e for r in replies for e in range(r["shown"]["entries"][0], r["shown"]["entries"][1] + 1)]
    assert entries == list(range(1, 301))


@pytest.mark.parametrize("name", ["deaths.xlsx", "docx-comments.docx", "pptx-test-slides.pptx",
                                  "candide-windows-1252.txt", "notebook4_jpeg.ipynb"])
def test_every_example_reads_within_the_smallest_limit(name):
    if not (EXAMPLES / name).exists():
        pytest.skip(f"examples/{name} is absent")
    proc = ServerProcess(workspace=EXAMPLES)
    try:
        replies = chain(proc, 2000, path=name)
    finally:
        proc.close()
    assert replies[-1].get("next") is None


def test_read_many_shares_the_limit_and_reads_every_line_once(server, tmp_path):
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / name).write_text("".join(f"{name} line {n}\n" for n in range(1, 301)))
    paths: list = ["a.txt", "b.txt", "c.txt"]
    seen: dict[str, list[int]] = {"a.txt": [], "b.txt": [], "c.txt": []}
    for _ in range(MAX_CHAIN):
        answer = server.request("agentread/readMany", {"paths": paths, "maxBytes": SMALL_LIMIT})["result"]
        assert text_bytes(answer) <= SMALL_LIMIT
        for f in answer["files"]:
            if "shown" in f:
                seen[f["path"]] += list(range(f["shown"]["lines"][0], f["shown"]["lines"][1] + 1))
        if "next" not in answer:
            break
        paths = answer["next"]["paths"]
    assert seen == {name: list(range(1, 301)) for name in seen}


def test_a_reply_that_cannot_be_cut_small_enough_says_so(server, tmp_path):
    (tmp_path / "wide.txt").write_text("漢" * 1900 + "\nshort\n")  # one line of 5,700 bytes, shown whole or not at all
    reply = server.read(path="wide.txt", maxBytes=2000)
    assert reply["isError"] and reply["error"]["code"] == "reply_too_large"
    assert "2,000-byte limit" in text_of(reply) and "smaller part" in text_of(reply)


def test_a_limit_under_the_smallest_reply_is_raised_to_it(server, ws):
    reply = server.read(path="big.txt", maxBytes=10)
    assert 1000 < text_bytes(reply) <= 2000 and reply["next"]


@pytest.mark.parametrize("value", [0, -5, "8k", True])
def test_a_malformed_limit_is_invalid_params(server, ws, value):
    answer = server.request("agentread/read", {"path": "big.txt", "maxBytes": value})
    assert answer["error"]["code"] == -32602 and "maxBytes" in answer["error"]["message"]


def test_the_cli_cuts_to_max_bytes(ws):
    out = subprocess.run([sys.executable, "-m", "agentread", "read", "big.txt", "--max-bytes", "3000", "--json"],
                         cwd=ws, capture_output=True, text=True, env={"PYTHONPATH": str(REPO / "python")},
                         check=True).stdout
    reply = json.loads(out)
    assert text_bytes(reply) <= 3000 and reply["next"] == {"offset": reply["endLine"] + 1}


def test_the_mcp_server_does_not_take_the_limit_from_the_model(tmp_path):
    pytest.importorskip("mcp", reason="the MCP SDK (the mcp extra) is not installed")
    from mcp_client import run, texts

    (tmp_path / "a.txt").write_text("a\n")

    async def calls(client):
        return await client.call_tool("read", {"path": "a.txt", "maxBytes": 3000})

    answer = run({}, "--root", str(tmp_path), calls=calls)
    assert answer.is_error and "maxBytes" in texts(answer)
