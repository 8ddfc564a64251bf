"""A message larger than a server takes costs one error, never the server: the JSON-RPC server
answers a frame declaring too many bytes at once and skips them as they arrive; the MCP server
skips a line too long without holding it, answers the request it was, and reads on."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agentread.serve.jsonrpc import MAX_FRAME_BYTES
from rpc import ANSWER_TIMEOUT, REPO, ServerProcess, frame, read_message, text_of

# Of the bytes of a frame or a line too large, what a test writes at a time.
CHUNK = 1 << 20

# A server that held a message of a gigabyte whole would use more than this at its peak; one that
# skips it, reading a piece at a time, uses a small part of it.
SKIPPED_PEAK_BYTES = 512 << 20


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("first\nsecond\n")
    return tmp_path


def _write(server: ServerProcess, data: bytes) -> None:
    server.proc.stdin.write(data)
    server.proc.stdin.flush()


def _peak(pid: int) -> int:
    """The most memory the process has used, in bytes (Linux's VmHWM)."""
    return int(re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())[1]) * 1024


def test_a_frame_declaring_a_petabyte_is_answered_with_an_error_not_the_end_of_the_server(ws: Path):
    server = ServerProcess(ws)
    try:
        _write(server, b"Content-Length: 1000000000000000\r\n\r\n")
        refused = server.wait(None)
        assert refused["error"]["code"] == -32600 and f"{MAX_FRAME_BYTES:,} bytes" in refused["error"]["message"]
        assert server.proc.poll() is None  # still serving: skipping what the frame declared
        server.proc.stdin.close()  # the client goes: the server ends as it does at the end of its input
        assert server.proc.wait(ANSWER_TIMEOUT) == 0
    finally:
        server.close()


def test_a_frame_over_the_limit_is_skipped_as_it_arrives_and_the_next_is_answered(ws: Path):
    server = ServerProcess(ws)
    try:
        size = MAX_FRAME_BYTES + 1
        _write(server, b"Content-Length: %d\r\n\r\n" % size)
        assert server.wait(None)["error"]["code"] == -32600  # answered before its bytes arrive
        for start in range(0, size, CHUNK):
            _write(server, b" " * min(CHUNK, size - start))
        assert "second" in text_of(server.read(path="a.txt"))
        assert _peak(server.proc.pid) < MAX_FRAME_BYTES
    finally:
        server.close()


def test_the_mcp_server_answers_a_call_too_long_with_an_error_and_reads_on(ws: Path):
    from mcp.shared.exceptions import MCPError

    from agentread.serve.mcp import MAX_MESSAGE_BYTES
    from mcp_client import run, texts

    async def calls(client):
        with pytest.raises(MCPError) as refused:
            await client.call_tool("read", {"path": "a.txt", "find": "x" * MAX_MESSAGE_BYTES})
        return refused.value, await client.call_tool("read", {"path": "a.txt"})

    refused, after = run({}, "--root", str(ws), calls=calls)
    assert f"{MAX_MESSAGE_BYTES:,} bytes" in str(refused)
    assert not after.is_error and "second" in texts(after)


def _mcp_line(message: dict) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_the_mcp_server_skips_a_line_of_a_gigabyte_without_holding_it(ws: Path):
    env = {**os.environ, "PYTHONPATH": str(REPO / "python") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-m", "agentread", "mcp", "--root", str(ws)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        proc.stdin.write(_mcp_line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}))
        proc.stdin.write(_mcp_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read", '
                         b'"arguments": {"path": "a.txt", "find": "')
        for _ in range(1 << 10):
            proc.stdin.write(b"x" * CHUNK)
        proc.stdin.write(b'"}}}\n')
        proc.stdin.write(_mcp_line({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                    "params": {"name": "read", "arguments": {"path": "a.txt"}}}))
        proc.stdin.flush()
        answers = {}
        while 3 not in answers:
            line = proc.stdout.readline()
            assert line, "the MCP server ended"
            message = json.loads(line)
            answers[message.get("id")] = message
        assert answers[2]["error"]["code"] == -32600
        assert "second" in answers[3]["result"]["content"][0]["text"]
        assert _peak(proc.pid) < SKIPPED_PEAK_BYTES
    finally:
        proc.stdin.close()
        proc.wait(timeout=ANSWER_TIMEOUT)


def test_the_jsonrpc_server_reads_its_messages_from_a_file_as_from_a_pipe(ws: Path, tmp_path_factory):
    """A client starts the server on a pipe or a socket, read on the event loop; any other input (a
    file of messages) is read all the same, a frame too large in it skipped, to its end."""
    messages = tmp_path_factory.mktemp("input") / "messages"
    messages.write_bytes(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                "params": {"capabilities": {}, "rootUri": ws.as_uri()}})
                         + b"Content-Length: %d\r\n\r\n" % (MAX_FRAME_BYTES + 1))
    with open(messages, "rb") as stdin:
        done = subprocess.run([sys.executable, "-m", "agentread", "serve"], stdin=stdin, capture_output=True,
                              timeout=ANSWER_TIMEOUT, env={**os.environ, "AGENTREAD_WORKERS": "0"}, check=False)
    replies = []
    stream = io.BytesIO(done.stdout)
    while (message := read_message(stream)) is not None:
        replies.append(message)
    assert replies[0]["id"] == 1 and replies[0]["result"]["serverInfo"]["name"] == "agentread", replies
    assert replies[1]["error"]["code"] == -32600, replies
