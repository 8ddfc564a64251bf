"""The differential suite's front ends, and the one place that says what of a reply is
presentation.

A read is made through the CLI (a subprocess with --json), the JSON-RPC server (tests/rpc.py) or
the MCP server (tests/mcp_client.py). Following `next` collects the replies of one read to its
end; `lines_of` puts numbered replies back together into the file's lines, taking off only what
the contract calls presentation: the `%6d\\t` gutter, the marker of a line cut at 2,000
characters (its rest is read on with `column`), the closing lines in brackets and the version
line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rpc import ServerProcess, text_of

REPO = Path(__file__).resolve().parents[2]
THIRDPARTY = REPO / ".thirdparty"

# The reply sizes every check runs at: the server's own (about 50 KB), VS Code's chat agent's
# default threshold, and one under the least the contract takes (2,000), which it takes as 2,000.
SIZES = [None, 8192, 1400]

# How many replies one read may take before the suite calls it a loop: far more than the largest
# file here needs at the smallest reply size.
MAX_REPLIES = 2000

GUTTER = re.compile(r" *(\d+)\t(.*)", re.S)
CUT = re.compile(r"(.*) \[… line cut at character [\d,]+ of [^;\]]*; [^\]]*column=(\d+) reads on\]", re.S)


def need(*parts: str) -> Path:
    """A third-party file by its path under .thirdparty/, or a skip naming what fetches it."""
    path = THIRDPARTY.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: run ./scripts/fetch-thirdparty (scripts/test does) to fetch the "
                    "differential suite's files")
    return path


# The line an image stands on in a reply's text, as the CLI prints one line per image: the text
# before an image ends a line and the text after it starts one (docs/CONTRACT.md, "Text parts as
# sent").
IMAGE_LINE = "\x00image"


VERSION_TAG = re.compile(r"\[version ([0-9a-f]{16})\]")


def without_version(text: str, version: str | None = None) -> str:
    """`text` without its version tag (`version`'s, when given): the last line that is the tag
    alone, or starts with it (the closing line of a truncated read)."""
    lines = text.split("\n")
    for i in range(len(lines) - 1, -1, -1):
        tag = VERSION_TAG.match(lines[i])
        if tag and (version is None or tag[1] == version):
            rest = lines[i][tag.end():]
            if not rest:
                return "\n".join(lines[:i] + lines[i + 1:])
            if rest.startswith(" ["):
                return "\n".join([*lines[:i], rest[1:], *lines[i + 1:]])
    raise AssertionError(f"no version tag in {text[-300:]!r}")


def arguments_named(line: str, next_args: dict) -> bool:
    """Whether `line` names every argument of `next` with its value, as closing lines spell
    them."""
    for key, value in next_args.items():
        shown = "true" if value is True else json.dumps(value) if isinstance(value, str) else str(value)
        if not re.search(rf"\b{key}={re.escape(shown)}", line):
            return False
    return True


def body(result: dict) -> str:
    """The reply's text but the version line a file's result holds; each image on a line of its
    own (IMAGE_LINE)."""
    text = "".join(p["text"] if p["type"] == "text" else IMAGE_LINE for p in result["content"])
    if result.get("version") and not result.get("unchanged"):
        text = without_version(text, result["version"])
    return text


def cli(params: dict) -> dict:
    """A read through `agentread read --json`, its arguments spelled as the CLI takes them."""
    params = dict(params)
    command = [sys.executable, "-m", "agentread", "read", params.pop("path"), "--root", str(THIRDPARTY), "--json"]
    flags = {"maxBytes": "--max-bytes", "ignoreCase": "--ignore-case"}
    for key, value in params.items():
        flag = flags.get(key, f"--{key}")
        if value is True:
            command.append(flag)
        elif value is not None and value is not False:
            command += [flag, str(value)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def rpc_server() -> ServerProcess:
    return ServerProcess(workspace=THIRDPARTY)


def follow(read, params: dict) -> list[dict]:
    """Every reply of a read, following `next` to its end (`read(params) -> result`), each knowing
    the request that made it (`_request`: a line read on from its `column`, lines_of)."""
    replies = []
    while True:
        result = read(params)
        result["_request"] = params
        assert not result["isError"], text_of(result)
        replies.append(result)
        if not result.get("next"):
            assert not result["truncated"] or result["kind"] == "directory", result
            return replies
        assert len(replies) < MAX_REPLIES, f"{params} still has a next after {MAX_REPLIES} replies"
        keep = {k: params[k] for k in ("path", "maxBytes") if params.get(k) is not None}
        params = {**keep, **result["next"]}


def chain(read, params: dict) -> list[dict]:
    """The requests that following `next` makes, the first one included."""
    keep = {k: params[k] for k in ("path", "maxBytes") if params.get(k) is not None}
    return [params] + [{**keep, **r["next"]} for r in follow(read, params)[:-1]]


def same_in_every_front_end(read, requests: list[dict], cli_reads: int = 3) -> None:
    """Each request gives the same text over JSON-RPC and MCP (MCP's version line left out: its own
    session's), and the first `cli_reads` of them in the CLI (a process each)."""
    expected = [body(read(p)) for p in requests]
    assert [without_version(t) for t in mcp_reads(requests)] == expected
    assert [body(cli(p)) for p in requests[:cli_reads]] == expected[:cli_reads]


def numbered(result: dict) -> list[tuple[int, str]]:
    """The numbered lines a reply shows, in order, each as (number, text as shown); the lines of
    `shown.lines`, one after another, and nothing else."""
    if "lines" not in result.get("shown", {}):
        assert result.get("totalLines") == 0, result
        return []
    first, last = result["shown"]["lines"]
    lines = [line for line in body(result).split("\n") if line != IMAGE_LINE]
    for start, line in enumerate(lines):
        match = GUTTER.fullmatch(line)
        if match and int(match[1]) == first:
            break
    else:
        raise AssertionError(f"no line {first} in {body(result)[:300]!r}")
    out = []
    for number, line in zip(range(first, last + 1), lines[start:]):
        match = GUTTER.fullmatch(line)
        assert match and int(match[1]) == number, f"line {number} expected, got {line[:120]!r}"
        out.append((number, match[2]))
    assert len(out) == last - first + 1, (first, last, len(out))
    return out


def numbered_run(replies: list[dict]) -> dict[int, str]:
    """The lines numbered replies of one run (one numbering) show, put back together, by number: a
    line cut at its marker is joined to the read that goes on at its column. A line shown again
    must be shown the same, and a piece must start where the line stopped: nothing lost, nothing
    twice."""
    lines: dict[int, str] = {}
    open_at: dict[int, int] = {}  # a cut line -> the column its rest starts at
    for result in replies:
        column = (result.get("_request") or {}).get("column") or 1
        for i, (number, text) in enumerate(numbered(result)):
            cut = CUT.fullmatch(text)
            piece, goes_on = (cut[1], int(cut[2])) if cut else (text, None)
            if i == 0 and column > 1:
                assert open_at.get(number) == column, f"line {number} goes on at {column}, not {open_at}"
                assert len(lines[number]) == column - 1
                lines[number] += piece
                del open_at[number]
            elif number in lines:  # shown again (after a line read on): shown the same
                assert lines[number] == piece, f"line {number} shown twice, differently"
                continue
            else:
                lines[number] = piece
            if goes_on:
                assert len(lines[number]) == goes_on - 1, (number, len(lines[number]), goes_on)
                open_at[number] = goes_on
    assert not open_at, f"lines never read on: {open_at}"
    numbers = sorted(lines)
    assert numbers == list(range(numbers[0], numbers[-1] + 1)) if numbers else True, "lines lost"
    return lines


def lines_of(replies: list[dict]) -> list[str]:
    """The file's lines as the numbered replies of one read show them, from line 1."""
    lines = numbered_run(replies)
    assert min(lines, default=1) == 1, "the first lines lost"
    return [lines[n] for n in sorted(lines)]


PAGE = re.compile(r"--- Page (\d+) ---")
# What a PDF reply adds to a page's text (docs/CONTRACT.md, Rendering): the note of its figures, and
# the line standing for a page without text.
PDF_NOTES = re.compile(r"\[Page \d+ has \d+ figures? .*view=\"image\"\.\]|\[Page \d+ has no extractable text: .*\]")


def pdf_pages(replies: list[dict]) -> dict[int, str]:
    """The text of each page as the replies of one PDF read show them: whole pages under their
    `--- Page N ---` lines, and runs of numbered lines (a page over the reply), put back together;
    the notes a reply adds to a page taken off. A page shown twice fails."""
    stream: list[str] = []
    run: list[dict] = []

    def end_run():
        if run:
            stream.extend(line for _, line in sorted(numbered_run(run).items()))
            run.clear()
    for result in replies:
        request = result["_request"]
        if "lines" in result["shown"]:
            if run and run[-1]["_request"].get("pages") != request.get("pages"):
                end_run()
            run.append(result)
            continue
        end_run()
        lines = body(result).split("\n")
        if result["truncated"]:
            assert lines.pop().startswith("["), lines[-1]
        stream.extend(lines)
    end_run()
    pages: dict[int, list[str]] = {}
    current = None
    for line in stream:
        if match := PAGE.fullmatch(line):
            current = int(match[1])
            assert current not in pages, f"page {current} shown twice"
            pages[current] = []
        elif not PDF_NOTES.fullmatch(line):
            assert current is not None, f"text before any page: {line!r}"
            pages[current].append(line)
    return {n: "\n".join(lines).strip("\n") for n, lines in pages.items()}


def follow_lines(read, params: dict) -> list[str]:
    """follow, then lines_of."""
    return lines_of(follow(read, params))


def editor_lines(text: str) -> list[str]:
    """A text's lines as the editor counts them (the contract's rule): LF, CRLF and a lone CR end a
    line, a final one starts no other; form feed, U+2028 and NEL do not."""
    lines = re.split(r"\r\n|\r|\n", text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def mcp_reads(requests: list[dict]) -> list[str]:
    """The text of each read, in order, through one connection to the MCP server (its roots:
    .thirdparty/), its parts joined as a host joins them."""
    from mcp_client import run

    async def calls(client):
        answers = []
        for params in requests:
            answer = await client.call_tool("read", params)
            answers.append("".join(c.text if c.type == "text" else IMAGE_LINE for c in answer.content))
        return answers
    return run({}, "--root", str(THIRDPARTY), calls=calls)


def outline_lines(read, path, size, entry: re.Pattern) -> list[re.Match]:
    """Each entry line of a file's outline, following `next`, matched by `entry` (its bracketed
    lines and blank lines passed over)."""
    params = {"path": str(path), "outline": True} | ({"maxBytes": size} if size else {})
    matches = []
    for result in follow(read, params):
        for line in body(result).split("\n"):
            if line.startswith("[") or not line.strip():
                continue
            match = entry.fullmatch(line)
            assert match, line
            matches.append(match)
    return matches
