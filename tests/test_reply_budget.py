"""`maxBytes`: a reply cut to the host's limit on a tool result's text, for every kind, through the
real server over stdio. Each reply holds at most that many bytes of text, and following `next` from
the first reply shows everything once: a cut made to fit is a cut like any other."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from builders import build_pdf, code, deck, document, notebook, png_b64, result, stream, workbook
from lines import numbered_rows, take
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
    assert text_of(first).splitlines()[-1].endswith(f"offset={first['endLine'] + 1} to continue.]")
    shown = [n for r in replies for n in range(r["shown"]["lines"][0], r["shown"]["lines"][1] + 1)]
    assert shown == list(range(1, 5001))  # every line once, in order
    assert "  5000\tline 5000 of the big file" in text_of(replies[-1])


def test_a_window_that_fits_is_not_cut(server, ws):
    reply = server.read(path="big.txt", offset=10, limit=20, maxBytes=HOST_LIMIT)
    assert reply["shown"]["lines"] == [10, 29] and "(limit of 20 lines)" in text_of(reply).splitlines()[-1]


def test_a_window_continued_from_a_column_names_its_own_limits(server, ws):
    """The lines after one read on from `column` fill what is left of the window: where they stop,
    the closing line names the window's limit, not that remainder."""
    wide = "".join("漢字テスト😀한국어"[n % 9] for n in range(9000))
    (ws / "wide.txt").write_text(f"first\n{wide}\n{'after the wide line ' * 20}\nlast\n", encoding="utf-8")
    reason = re.compile(r"\((output limit of [^)]*|limit of [^)]*)\)")
    plain = server.read(path="big.txt", maxBytes=2000)
    on = server.read(path="wide.txt", offset=2, column=2001, maxBytes=2000)
    assert on["truncated"] and text_bytes(on) <= 2000
    assert reason.search(text_of(on).splitlines()[-1])[1] == reason.search(text_of(plain).splitlines()[-1])[1]
    by_lines = server.read(path="wide.txt", offset=2, column=8995, limit=2, maxBytes=HOST_LIMIT)
    assert by_lines["shown"]["lines"] == [2, 3] and by_lines["next"] == {"offset": 4}
    assert reason.search(text_of(by_lines).splitlines()[-1])[1] == "limit of 2 lines"


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


# 60,000 characters of three bytes each, no two neighbours alike: a piece read twice or lost shows.
WIDE_TEXT = "".join(chr(0x4E00 + (i * 7) % 20_000) for i in range(60_000))
SMALLEST = 2000  # the smallest reply a caller may ask for (limits.MIN_REPLY_BYTES)


def joined_lines(server: ServerProcess, path: str) -> tuple[dict[int, str], int]:
    """The numbered lines of `path` read in the smallest replies by following `next`, each cut line
    joined from its pieces → (lines, replies)."""
    seen: dict[int, str] = {}
    asked: dict = {}
    replies = chain(server, SMALLEST, path=path)
    for reply in replies:
        take(seen, asked, numbered_rows(text_of(reply)))
        asked = reply.get("next", {})
    return seen, len(replies)


def test_a_line_wider_than_the_reply_reads_on_to_its_last_character(server, tmp_path):
    (tmp_path / "wide.txt").write_text(WIDE_TEXT + "\nshort\n")  # 180,000 bytes on one line
    seen, replies = joined_lines(server, "wide.txt")
    assert seen == {1: WIDE_TEXT, 2: "short"} and replies > 60


def test_two_wide_lines_in_a_row_read_on_to_their_last_characters(server, tmp_path):
    first, second = WIDE_TEXT[:5_000], WIDE_TEXT[5_000:10_000]  # the second follows a line read on by column
    (tmp_path / "two.txt").write_text(f"{first}\n{second}\nshort\n")
    seen, _ = joined_lines(server, "two.txt")
    assert seen == {1: first, 2: second, 3: "short"}
    (tmp_path / "two.docx").write_bytes(document("Before", first, second, "After"))
    seen, _ = joined_lines(server, "two.docx")
    assert list(seen.values()) == ["Before", first, second, "After"]


def test_a_word_paragraph_and_a_slide_wider_than_the_reply_read_on_to_their_last_character(server, tmp_path):
    (tmp_path / "long.docx").write_bytes(document("Before", WIDE_TEXT, "After"))
    seen, _ = joined_lines(server, "long.docx")
    assert list(seen.values()) == ["Before", WIDE_TEXT, "After"]
    (tmp_path / "long.pptx").write_bytes(deck(WIDE_TEXT, "Second slide"))
    seen, _ = joined_lines(server, "long.pptx")
    assert WIDE_TEXT in seen.values() and "Second slide" in seen.values()


def test_a_notebook_line_wider_than_the_reply_reads_on_to_its_last_character(server, tmp_path):
    (tmp_path / "wide.ipynb").write_bytes(notebook(code(f's = "{WIDE_TEXT}"', stream("done\n")), code("t = 1")))
    replies = chain(server, SMALLEST, path="wide.ipynb")
    pieces = [piece for reply in replies for piece in re.findall(r"[\u4e00-\u9fff]+", text_of(reply))]
    assert "".join(pieces) == WIDE_TEXT and len(replies) > 60
    assert "done" in text_of(replies[-1]) and "t = 1" in text_of(replies[-1])


def test_an_excel_cell_wider_than_the_reply_reads_on_to_its_last_character(server, tmp_path):
    cell = WIDE_TEXT[:32_767]  # the most an Excel cell holds (openpyxl writes no more): about 98 KB here
    (tmp_path / "long.xlsx").write_bytes(workbook({"A1": "head", "B2": cell, "C2": "after", "A3": "next row"}))
    pieces, texts = [], []
    for reply in chain(server, SMALLEST, path="long.xlsx"):
        text = text_of(reply)
        texts.append(text)
        piece = re.search(r"^B2(?: from character ([\d,]+))?: (.*?)(?: \[… cell B2 cut at character [\d,]+ of "
                          r"32,767; [^\]]*, char=\d+ reads on\])?$", text, re.M)
        if piece:
            assert int((piece.group(1) or "1").replace(",", "")) == sum(map(len, pieces)) + 1
            pieces.append(piece.group(2))
    assert "".join(pieces) == cell and len(pieces) > 100
    assert any(re.search(r"^C2: after$", text, re.M) for text in texts)
    assert any("| 3 | next row |" in text for text in texts)


def test_a_sheets_rows_that_fit_are_never_cut_at_a_replys_end(server, tmp_path):
    rows = {f"{c}{r}": f"value {c}{r} " * 3 for r in range(1, 30) for c in "ABCDEFGH"}
    (tmp_path / "rows.xlsx").write_bytes(workbook(rows))
    texts = [text_of(reply) for reply in chain(server, SMALLEST + 100, path="rows.xlsx")]
    shown = [int(n) for text in texts for n in re.findall(r"^\| (\d+) \| value A", text, re.M)]
    assert shown == list(range(1, 30)) and not any("row cut" in text for text in texts)


def test_a_limit_under_the_smallest_reply_is_raised_to_it(server, ws):
    reply = server.read(path="big.txt", maxBytes=10)
    assert 1000 < text_bytes(reply) <= 2000 and reply["next"]


@pytest.mark.parametrize("value", [0, -5, "8k", True])
def test_a_malformed_limit_is_invalid_params(server, ws, value):
    answer = server.request("agentread/read", {"path": "big.txt", "maxBytes": value})
    assert answer["error"]["code"] == -32602 and "maxBytes" in answer["error"]["message"]


def test_the_cli_cuts_to_max_bytes(ws):
    out = subprocess.run([sys.executable, "-m", "agentread", "read", "big.txt", "--max-bytes", "3000", "--json"],
                         cwd=ws, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO / "python")},
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


def test_read_many_reads_a_cell_and_a_line_wider_than_the_reply_to_their_last_character(server, tmp_path):
    cell = WIDE_TEXT[:32_767]
    (tmp_path / "long.xlsx").write_bytes(workbook({"B2": cell}))
    (tmp_path / "wide.txt").write_text(WIDE_TEXT + "\n")
    paths: list = [{"path": "long.xlsx", "pages": "1", "offset": 2, "column": 2}, "wide.txt"]
    seen = {"long.xlsx": "", "wide.txt": ""}
    for _ in range(MAX_CHAIN):
        answer = server.request("agentread/readMany", {"paths": paths, "maxBytes": HOST_LIMIT})["result"]
        assert text_bytes(answer) <= HOST_LIMIT
        for section in text_of(answer).split("==> ")[1:]:
            name = section.split(" ", 1)[0]
            seen[name] += "".join(re.findall(r"[\u4e00-\u9fff]+", section))
        if "next" not in answer:
            break
        paths = answer["next"]["paths"]
    assert seen == {"long.xlsx": cell, "wide.txt": WIDE_TEXT}


def test_a_find_naming_many_pdf_pages_it_could_not_search_stays_within_the_limit(server, tmp_path: Path):
    # Pages 10,000 and on, two scans (no text) before each page of text: runs of long page numbers.
    pages = [None if n % 3 else f"zebra {n:05d} " + "words " * 40 for n in range(1, 10_301)]
    (tmp_path / "scans.pdf").write_bytes(build_pdf(pages))
    replies = chain(server, 2000, path="scans.pdf", find="zebra", pages="10000-")
    assert [h["page"] for reply in replies for h in reply["shown"]["hits"]] == list(range(10_002, 10_301, 3))
    assert all("no text layer" in text_of(reply) for reply in replies)
