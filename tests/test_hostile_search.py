"""Hostile `find` arguments cost one answer, never the server: a regular expression whose compiling
would take gigabytes or overflow the stack is refused before it is compiled, through every front end
(the JSON-RPC server, the MCP server, the command line); and a regular expression slow on every line
of a small file runs on a read thread, not the event loop, and stops itself at half the deadline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentread.find import MAX_NESTING, MAX_REPEAT, MAX_WRITTEN_OUT
from agentread.request import MAX_ARGUMENT_CHARS, MAX_FIND_CHARS
from rpc import STOPPED_AFTER, ServerProcess, text_of

# Patterns the `regex` package cannot compile in the memory, stack or time of a read: the first
# overflows the stack (SIGSEGV), the next three ask for gigabytes (the third through a comment,
# which a count passes over), the next takes seconds (empty groups nested and repeated), the last
# nests past its parser.
HOSTILE = {
    "(?:ab|cd){500000}": f"at most {MAX_REPEAT:,}",
    "a{20000000}": f"at most {MAX_REPEAT:,}",
    "((a{100}){100}){100}": f"at most {MAX_WRITTEN_OUT:,}",
    "((a{100}){100})(?#x){1000}": f"at most {MAX_WRITTEN_OUT:,}",
    "(" * 10 + ")" * 10 + "{1000}": f"at most {MAX_WRITTEN_OUT:,}",
    "(" * 2 * MAX_NESTING + "a" + ")" * 2 * MAX_NESTING: f"at most {MAX_NESTING}",
    "(?R)": "recursively",
    "(a|(?1))": "recursively",
    "(?P<x>a(?&x)?)": "recursively",
}

# A pattern that takes a moment on each short line (its nested optional repeats backtrack through
# every way to split the line before \Z\b\B fails): far within the time a match may take, and
# thousands of lines take far longer than half of any deadline.
SLOW = r"(?i)(.?){40}(.?){40}\Z\b\B"
SLOW_LINES = 20_000


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("abcd\n" * 10)
    return tmp_path


@pytest.mark.parametrize("pattern", HOSTILE, ids=["stack", "memory", "written-out", "after-a-comment", "empty-groups",
                                               "nesting", "recursion", "group-call", "named-call"])
def test_a_pattern_past_a_bound_is_refused_and_the_server_reads_on(ws: Path, server, pattern: str):
    result = server.read(path="a.txt", find=pattern, regex=True)
    assert result["isError"] and result["error"]["code"] == "regex_too_large", text_of(result)
    assert HOSTILE[pattern] in text_of(result)
    assert not server.read(path="a.txt", limit=1)["isError"]  # the server still answers


def test_a_pattern_within_the_bounds_is_searched(ws: Path, server):
    result = server.read(path="a.txt", find=r"(?:ab|cd){2}", regex=True, limit=3)
    assert [hit["line"] for hit in result["shown"]["hits"]] == [1, 2, 3]


def test_the_mcp_server_refuses_the_pattern_and_reads_on(ws: Path):
    from mcp_client import run, texts

    async def calls(client):
        refused = await client.call_tool("read", {"path": "a.txt", "find": "(?:ab|cd){500000}", "regex": True})
        after = await client.call_tool("read", {"path": "a.txt", "limit": 1})
        return refused, after

    refused, after = run({}, "--root", str(ws), calls=calls)
    assert refused.is_error and f"at most {MAX_REPEAT:,}" in texts(refused)
    assert not after.is_error and "abcd" in texts(after)


def test_the_command_line_refuses_the_pattern_with_an_error_not_a_crash(ws: Path):
    done = subprocess.run([sys.executable, "-m", "agentread", "read", "a.txt", "--find", "(?:ab|cd){500000}",
                           "--regex"], cwd=ws, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert f"at most {MAX_REPEAT:,}" in done.stdout


@pytest.mark.parametrize(("params", "bound"), [
    ({"find": "x" * (MAX_FIND_CHARS + 1)}, f"at most {MAX_FIND_CHARS:,}"),
    ({"pages": "1," * MAX_ARGUMENT_CHARS}, f"at most {MAX_ARGUMENT_CHARS:,}"),
    ({"since": "v" * (MAX_ARGUMENT_CHARS + 1)}, f"at most {MAX_ARGUMENT_CHARS:,}"),
])
def test_an_argument_too_long_is_refused_without_quoting_it_whole(ws: Path, server, params: dict, bound: str):
    answer = server.request("agentread/read", {"path": "a.txt", **params})
    message = answer["error"]["message"]
    assert answer["error"]["code"] == -32602 and bound in message and len(message) < 400


def test_a_slow_search_of_a_small_file_holds_up_no_other_read_and_stops_at_half_the_deadline(tmp_path: Path):
    (tmp_path / "short.txt").write_text("xxxxxx\n" * SLOW_LINES)
    (tmp_path / "other.txt").write_text("other\n")
    server = ServerProcess(tmp_path, env={"AGENTREAD_READ_DEADLINE": str(STOPPED_AFTER)})
    try:
        assert not server.read(path="short.txt", limit=10)["isError"]  # read quickly once: a quick file
        find = server.send("agentread/read", {"path": "short.txt", "find": SLOW, "regex": True})
        other = server.send("agentread/read", {"path": "other.txt"})
        assert "other" in text_of(server.wait(other)["result"])
        found = server.wait(find)["result"]
        assert server.answered.index(other) < server.answered.index(find)
        assert found["truncated"] and not found["isError"], text_of(found)
        assert found["next"]["find"] == SLOW and 1 < found["next"]["offset"] <= SLOW_LINES
        assert "the search stopped there for time" in text_of(found)
    finally:
        server.close()
