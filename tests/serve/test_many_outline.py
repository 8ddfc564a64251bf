"""Outlines in a read of many files: `outline: true` beside `paths` (every file, globs' matches
included) or in one entry, through the JSON-RPC server over stdio, the MCP server through the SDK's
client, and the command line."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rpc import ServerProcess, text_of

DATA = Path(__file__).resolve().parents[1] / "data"
ENTRY = re.compile(r"^\s*(.+?)  \((lines? [\d-]+)\)  → (offset=\d+ limit=\d+)$")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    for name in ("eval.rs", "test.java", "generics.go"):
        shutil.copy(DATA / "code" / name, tmp_path / "src" / name)
    shutil.copy(DATA / "code" / "lexerdevelopment.rst", tmp_path / "guide.rst")
    (tmp_path / "notes.txt").write_text("a note\n")
    return tmp_path


def entries(text: str) -> list[str]:
    """The outline entry lines of a reply, in order."""
    return [line for line in text.splitlines() if ENTRY.match(line)]


def test_a_glob_outlined_in_small_replies_gives_each_files_outline_once_by_following_next(ws: Path):
    server = ServerProcess(workspace=ws)
    try:
        alone = {name: entries(text_of(server.read(path=f"src/{name}", outline=True)))
                 for name in ("eval.rs", "generics.go", "test.java")}
        assert all(len(found) > 3 for found in alone.values())
        params: dict = {"paths": ["src/*"], "outline": True, "maxBytes": 2500}
        seen: dict[str, list[str]] = {name: [] for name in alone}
        replies = 0
        while True:
            reply = server.request("agentread/readMany", params)["result"]
            replies += 1
            text = text_of(reply)
            assert len(text.encode("utf-8")) <= 2500 and replies < 30
            for section in re.split(r"^==> ", text, flags=re.M)[1:]:
                header, _, body = section.partition("\n")
                name = header.split(" ", 1)[0].removeprefix("src/")
                assert "outline=True) <==" in header, header
                seen[name] += entries(body)
            if "next" not in reply:
                break
            assert reply["next"]["outline"] is True  # once, beside the paths, not in each
            params = {**reply["next"], "maxBytes": 2500}
        assert replies > 1 and seen == alone
    finally:
        server.close()


def test_an_entrys_own_outline_beside_a_plain_read_and_a_kind_with_none(ws: Path):
    shutil.copy(Path(__file__).resolve().parents[2] / "examples" / "duck.png", ws / "duck.png")
    server = ServerProcess(workspace=ws)
    try:
        reply = server.request("agentread/readMany", {"paths": [{"path": "guide.rst", "outline": True}, "notes.txt",
                                                                {"path": "duck.png", "outline": True}]})["result"]
        text = text_of(reply)
        assert "==> guide.rst (outline=True) <==" in text and "[Outline of guide.rst: " in text
        assert f"==> notes.txt <== [version {reply['files'][1]['version']}]\n     1\ta note" in text
        states = {f["path"]: (f["state"], f.get("error", {}).get("code")) for f in reply["files"]}
        assert states == {"guide.rst": ("whole", None), "notes.txt": ("whole", None),
                          "duck.png": ("error", "no_outline")}
        assert server.request("agentread/readMany", {"paths": ["notes.txt"], "outline": "yes"})["error"]["code"] \
            == -32602
    finally:
        server.close()


def test_read_many_outline_through_the_mcp_server(ws: Path):
    pytest.importorskip("mcp", reason="the MCP SDK (the mcp extra) is not installed")
    from mcp_client import run, texts

    async def calls(client):
        return await client.call_tool("read_many", {"paths": ["src/*.rs", "guide.rst"], "outline": True})

    answer = run({}, "--root", str(ws), calls=calls)
    text = texts(answer)
    assert not answer.is_error
    assert "==> src/eval.rs (outline=True) <==" in text and "impl Val  (lines 40-75)  → offset=40 limit=36" in text
    assert "==> guide.rst (outline=True) <==" in text and "[Outline of guide.rst: " in text


def test_the_command_line_outlines_every_path_listed(ws: Path):
    done = subprocess.run([sys.executable, "-m", "agentread", "read", "src/eval.rs", "guide.rst", "--outline",
                           "--json"], cwd=ws, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    reply = json.loads(done.stdout)
    assert [(f["path"], f["state"], f["shown"]["outline"][0]) for f in reply["files"]] == [
        ("src/eval.rs", "whole", 1), ("guide.rst", "whole", 1)]
    assert "impl Val  (lines 40-75)  → offset=40 limit=36" in reply["content"][0]["text"]


def test_an_excel_cell_longer_than_a_reply_reads_on_with_char_through_the_mcp_server(tmp_path: Path):
    pytest.importorskip("mcp", reason="the MCP SDK (the mcp extra) is not installed")
    from builders import workbook
    from mcp_client import run, texts

    cell = "".join(chr(0x4E00 + (i * 7) % 20_000) for i in range(32_767))  # about 98 KB: two replies and more
    (tmp_path / "long.xlsx").write_bytes(workbook({"B2": cell}))

    async def calls(client):
        answers, args = [], {"path": "long.xlsx", "pages": "1", "offset": 2, "column": 2}
        while args is not None and len(answers) < 10:
            answers.append(await client.call_tool("read", args))
            found = re.search(r"Call again with pages=\"1\", offset=2, column=2, char=(\d+) to continue", texts(
                answers[-1]))
            args = {**args, "char": int(found.group(1))} if found else None
        return answers

    answers = run({}, "--root", str(tmp_path), calls=calls)
    assert len(answers) > 1 and not any(answer.is_error for answer in answers)
    assert "".join("".join(re.findall(r"[\u4e00-\u9fff]+", texts(answer))) for answer in answers) == cell
