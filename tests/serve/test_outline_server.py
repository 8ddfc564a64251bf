"""`outline: true` through the real servers: the JSON-RPC server over stdio (a PDF read in a worker
process, a code file here) and the MCP server through the SDK's client."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rpc import ServerProcess, text_of

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def ws(tmp_path: Path, corpus: Path) -> Path:
    shutil.copy(corpus / "pdf" / "GeoTopo-komprimiert.pdf", tmp_path / "lecture.pdf")
    shutil.copy(REPO / "tests" / "data" / "code" / "eval.rs", tmp_path / "eval.rs")
    return tmp_path


def test_outline_then_read_what_it_points_at_over_stdio(ws: Path):
    server = ServerProcess(workspace=ws)
    try:
        pdf = server.read(path="lecture.pdf", outline=True, maxBytes=2000)
        assert pdf["kind"] == "pdf" and pdf["totalPages"] == 117 and not pdf["isError"]
        text = text_of(pdf)
        assert len(text.encode("utf-8")) <= 2000 and pdf["truncated"] and pdf["next"]["outline"] is True
        line = next(line for line in text.splitlines() if line.lstrip().startswith("1.2 Metrische Räume"))
        pages = line.split('pages="')[1].rstrip('"')
        page = server.read(path="lecture.pdf", pages=pages.split("-")[0])
        assert "Metrische Räume" in text_of(page)
        rest = server.read(path="lecture.pdf", **pdf["next"])
        assert rest["shown"]["outline"][0] == pdf["shown"]["outline"][1] + 1

        code = server.read(path="eval.rs", outline=True)
        assert code["kind"] == "text" and "impl Val  (lines 40-75)  → offset=40 limit=36" in text_of(code)
        window = server.read(path="eval.rs", offset=40, limit=36)
        assert text_of(window).splitlines()[0].endswith("impl Val {") and window["endLine"] == 75

        bad = server.request("agentread/read", {"path": "eval.rs", "outline": "yes"})
        assert bad["error"]["code"] == -32602
    finally:
        server.close()


def test_outline_through_the_mcp_server(ws: Path):
    pytest.importorskip("mcp", reason="the MCP SDK (the mcp extra) is not installed")
    from mcp_client import run, texts

    async def calls(client):
        return [await client.call_tool("read", {"path": "eval.rs", "outline": True}),
                await client.call_tool("read", {"path": "lecture.pdf", "outline": True})]

    code, pdf = run({}, "--root", str(ws), calls=calls)
    assert not code.is_error and "struct Eval" in texts(code) and "→ offset=" in texts(code)
    assert not pdf.is_error and "1 Topologische Grundbegriffe  (pages 6-28" in texts(pdf)


def test_asciidoc_outline_over_stdio(tmp_path: Path):
    if shutil.which("asciidoctor") is None:
        pytest.skip("Asciidoctor is not installed (apt install asciidoctor)")
    shutil.copy(REPO / "tests" / "data" / "code" / "asciidoctor-README.adoc", tmp_path / "README.adoc")
    server = ServerProcess(workspace=tmp_path)
    try:
        found = server.read(path="README.adoc", outline=True)
        assert found["kind"] == "text" and not found["isError"]
        line = next(line for line in text_of(found).splitlines() if line.strip().startswith("=== Ruby API"))
        offset, limit = (int(part.split("=")[1]) for part in line.split("→ ")[1].split())
        window = server.read(path="README.adoc", offset=offset, limit=limit)
        assert text_of(window).splitlines()[0].endswith("=== Ruby API") and window["endLine"] == offset + limit - 1
    finally:
        server.close()
