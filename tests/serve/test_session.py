"""The opt-in unchanged-read stub: only for the same window of the same, unchanged file in the
same session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentread.engine import PROBLEMS, Engine, problem_result, run
from agentread.request import parse_request
from agentread.result import ReadResult
from agentread.serve.session import ReadSession
from agentread.workspace import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 101)))
    return tmp_path


@pytest.fixture
def engine(ws: Path) -> Engine:
    return Engine(Workspace([str(ws)]))


def read(session: ReadSession, engine: Engine, live=None, **params):
    """A read through the session as the read service makes it: planned, looked up, read, kept."""
    request = parse_request(params)
    try:
        plan = engine.plan(request, live)
    except PROBLEMS as exc:
        return problem_result(request, exc)
    seen = session.lookup(plan)
    if isinstance(seen, ReadResult):
        return seen
    result = run(plan)
    session.keep(plan, seen, result)
    return result


def test_an_unchanged_reread_is_one_line_of_the_same_kind_and_fields(engine: Engine):
    session = ReadSession()
    full = read(session, engine, path="a.txt", offset=10, limit=5)
    stub = read(session, engine, path="a.txt", offset=10, limit=5)
    assert not full.unchanged and "line 12" in full.text()
    assert stub.unchanged and stub.to_json()["unchanged"] is True
    assert stub.text().count("\n") == 0 and "Unchanged" in stub.text() and "lines 10-14" in stub.text()
    assert "line 12" not in stub.text()
    whole, short = full.to_json(), stub.to_json()
    for key in ("kind", "path", "totalLines", "startLine", "endLine", "truncated", "next", "shown", "encoding"):
        assert short.get(key) == whole.get(key), key


def test_a_changed_file_is_read_again_even_at_the_same_size_and_mtime(ws: Path, engine: Engine):
    session = ReadSession()
    read(session, engine, path="a.txt")
    st = os.stat(ws / "a.txt")
    (ws / "a.txt").write_text((ws / "a.txt").read_text().replace("line 50", "LINE 50"))
    os.utime(ws / "a.txt", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(ws / "a.txt").st_size == st.st_size
    again = read(session, engine, path="a.txt")
    assert not again.unchanged and "LINE 50" in again.text()
    (ws / "a.txt").write_text("new\n")
    assert read(session, engine, path="a.txt").text() == "     1\tnew"


def test_another_window_another_session_and_by_default_read_in_full(ws: Path, engine: Engine):
    session = ReadSession()
    read(session, engine, path="a.txt", offset=1, limit=10)
    assert not read(session, engine, path="a.txt", offset=1, limit=11).unchanged
    assert not read(ReadSession(), engine, path="a.txt", offset=1, limit=10).unchanged
    assert read(session, engine, path="a.txt", offset=1, limit=10).unchanged
    assert not engine.read(parse_request({"path": "a.txt", "offset": 1, "limit": 10})).unchanged
    cli = [sys.executable, "-m", "agentread", "read", "a.txt", "--root", str(ws), "--json"]
    for _ in range(2):  # the command line has no session: each read is whole
        out = subprocess.run(cli, capture_output=True, text=True, timeout=60).stdout
        assert '"unchanged"' not in out and "line 100" in out


def test_the_same_pages_as_pictures_are_another_window(ws: Path, engine: Engine):
    from builders import build_pdf

    (ws / "doc.pdf").write_bytes(build_pdf(["words"]))
    session = ReadSession()
    read(session, engine, path="doc.pdf")
    pictured = read(session, engine, path="doc.pdf", view="image")
    assert not pictured.unchanged and any(not hasattr(part, "text") for part in pictured.content)
    assert read(session, engine, path="doc.pdf", view="image").unchanged


def test_a_read_refused_now_is_refused_though_it_was_read_with_consent(ws: Path, engine: Engine):
    (ws / ".env").write_text("KEY=1\n")
    session = ReadSession()
    assert "KEY=1" in read(session, engine, path=".env", consent=True).text()
    again = read(session, engine, path=".env")
    assert again.is_error and again.error.code == "sensitive_file"


def test_an_editor_buffer_is_told_by_its_text(ws: Path, engine: Engine):
    session = ReadSession()
    buffers = {str(ws / "a.txt"): "edited\n"}
    first = read(session, engine, buffers.get, path="a.txt")
    assert first.text() == "     1\tedited"
    assert read(session, engine, buffers.get, path="a.txt").unchanged
    buffers[str(ws / "a.txt")] = "edited again\n"
    assert "edited again" in read(session, engine, buffers.get, path="a.txt").text()


def test_the_mcp_server_stubs_only_with_its_flag(ws: Path):
    pytest.importorskip("mcp", reason="the MCP SDK (the mcp extra) is not installed")
    from mcp_client import run, texts

    async def calls(client):
        return [await client.call_tool("read", {"path": "a.txt", "limit": 3}) for _ in range(2)]

    first, second = run({}, "--root", str(ws), "--unchanged-stub", calls=calls)
    assert "line 3" in texts(first) and "Unchanged" in texts(second) and "line 3" not in texts(second)
    first, second = run({}, "--root", str(ws), calls=calls)
    assert texts(first) == texts(second)


def test_asking_the_user_during_read_many_does_not_count_as_a_read(ws: Path):
    pytest.importorskip("mcp", reason="the MCP SDK (the mcp extra) is not installed")
    from mcp import types

    from mcp_client import run, texts

    (ws / ".env").write_text("KEY=1\n")

    async def elicit(context, params):
        return types.ElicitResult(action="accept", content={})

    async def calls(client):
        return [await client.call_tool("read_many", {"paths": ["a.txt", ".env"]}) for _ in range(2)]

    first, second = run({"elicitation_callback": elicit}, "--root", str(ws), "--unchanged-stub", calls=calls)
    assert "line 100" in texts(first) and "KEY=1" in texts(first) and "Unchanged" not in texts(first)
    assert "line 100" not in texts(second) and texts(second).count("Unchanged") == 2


@pytest.mark.parametrize("workers", ["0", "2"])
def test_with_the_stub_a_readers_refusal_of_the_params_is_invalid_params(ws: Path, workers: str):
    """A PDF's pages the reader cannot parse are the caller's mistake (-32602), read in the server
    or in a worker, and the server goes on."""
    from builders import build_pdf
    from rpc import ServerProcess

    (ws / "doc.pdf").write_bytes(build_pdf(["first page"]))
    server = ServerProcess(workspace=ws, init_options={"unchangedStub": True}, env={"AGENTREAD_WORKERS": workers})
    try:
        answer = server.request("agentread/read", {"path": "doc.pdf", "pages": "Budget"})
        assert answer["error"]["code"] == -32602 and "Budget" in answer["error"]["message"], answer
        assert server.read(path="a.txt", limit=1)["endLine"] == 1
    finally:
        server.close()


def test_both_servers_give_the_same_answers_with_the_stub_single_and_many(ws: Path):
    """One read service behind both protocols: with the stub on, a file shown whole by a read of
    many files, then read alone, then read again, is answered alike by the JSON-RPC and MCP
    servers."""
    pytest.importorskip("mcp", reason="the MCP SDK (the mcp extra) is not installed")
    from builders import build_pdf
    from mcp_client import run, texts
    from rpc import ServerProcess, text_of

    (ws / "b.txt").write_text("bee\n")
    (ws / "doc.pdf").write_bytes(build_pdf(["first page", "second page"]))
    calls = [("read_many", {"paths": ["a.txt", "b.txt"]}), ("read", {"path": "a.txt"}),
             ("read", {"path": "doc.pdf", "pages": "2"}), ("read", {"path": "doc.pdf", "pages": "2"}),
             ("read_many", {"paths": ["b.txt", "doc.pdf"]}), ("read", {"path": "b.txt"})]

    async def over_mcp(client):
        return [texts(await client.call_tool(name, args)) for name, args in calls]

    from_mcp = run({}, "--root", str(ws), "--unchanged-stub", calls=over_mcp)
    server = ServerProcess(workspace=ws, init_options={"unchangedStub": True})
    try:
        methods = {"read": "agentread/read", "read_many": "agentread/readMany"}
        from_jsonrpc = [text_of(server.request(methods[name], args)["result"]) for name, args in calls]
    finally:
        server.close()
    assert from_jsonrpc == from_mcp
    assert "Unchanged" not in from_mcp[0] and "Unchanged" in from_mcp[1]  # shown whole by the read of many
    assert "second page" in from_mcp[2] and "Unchanged" in from_mcp[3]
    assert from_mcp[5].startswith("[Unchanged")


def test_with_the_stub_a_read_finds_its_files_version_once(ws: Path, monkeypatch):
    """The session's lookup and the read need the same version: the service finds it once and the
    read gives that one (hashing a file of megabytes twice would double a read's cost)."""
    import asyncio

    import agentread.engine
    from agentread.serve.service import ReadService

    hashed = []
    real = agentread.engine.file_version_of
    monkeypatch.setattr(agentread.engine, "file_version_of", lambda *args: hashed.append(1) or real(*args))

    async def reads() -> list[ReadResult]:
        service = ReadService(Workspace([str(ws)]), stub=True, workers=False)
        try:
            return [await service.read(parse_request({"path": "a.txt", "limit": 5})) for _ in range(2)]
        finally:
            service.close()

    first, second = asyncio.run(reads())
    assert not first.unchanged and second.unchanged and first.version == second.version
    assert len(hashed) == 2  # once a read: the first read's, then the stub's lookup
