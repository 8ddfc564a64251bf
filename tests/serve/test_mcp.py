"""The MCP server through real clients: the SDK's stdio client starting
`python -m agentread mcp`, and the MCP Inspector's CLI. Every call crosses the process boundary
as a client in use would make it."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

mcp = pytest.importorskip("mcp", reason="the MCP SDK (the mcp extra) is not installed")

import anyio  # noqa: E402  (installed with the SDK)
from mcp import types  # noqa: E402

from agentread.serve.mcp import tool_specs  # noqa: E402
from builders import build_pdf, code, notebook, png_b64, result  # noqa: E402
from mcp_client import run, texts  # noqa: E402
from rpc import ANSWER_TIMEOUT, POLL_SECONDS, STOPPED_AFTER, STUCK_PDF, STUCK_READER, injected  # noqa: E402
from trees import GLOB, HIT_FILES, NEEDLE, TREE_FILES, make_tree, re_hits, text_hits  # noqa: E402

# Roots are deprecated in the protocol's next version; every client in use speaks the current one.
pytestmark = pytest.mark.filterwarnings("ignore:The roots capability is deprecated")

REPO = Path(__file__).resolve().parents[2]
INSPECTOR = REPO / "node_modules" / ".bin" / "mcp-inspector"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("".join(f"line {i}\n" for i in range(1, 31)))
    (root / "doc.pdf").write_bytes(build_pdf(["first page", "second page", "third page"]))
    plot = code("plot()", result({"image/png": png_b64(), "text/plain": "<Figure>"}))
    (root / "plot.ipynb").write_bytes(notebook(plot))
    (root / "blob.bin").write_bytes(bytes(range(256)) * 20)
    (root / ".env").write_text("TOKEN=secret\n")
    (tmp_path / "outside.txt").write_text("not yours\n")
    return root


def test_tools_are_listed_with_the_shared_descriptions_and_read_only_annotations(ws: Path):
    async def calls(client):
        return (await client.list_tools()).tools

    tools = {t.name: t for t in run({}, "--root", str(ws), calls=calls)}
    specs = tool_specs()
    assert set(tools) == {"read", "read_many"}
    for name, tool in tools.items():
        assert tool.description == specs[name]["description"]
        assert tool.input_schema == specs[name]["inputSchema"]
        assert tool.annotations.read_only_hint and tool.annotations.idempotent_hint
        assert tool.annotations.destructive_hint is False


def test_tools_json_is_what_package_json_gives_vs_code():
    tools = {t["name"]: t for t in json.loads((REPO / "package.json").read_text())["contributes"]["languageModelTools"]}
    specs = tool_specs()
    for vscode_name, name in (("agentread_read", "read"), ("agentread_read_many", "read_many")):
        if vscode_name not in tools:
            assert vscode_name != "agentread_read", "package.json lost its read tool"
            continue
        assert tools[vscode_name]["modelDescription"] == specs[name]["description"]
        assert tools[vscode_name]["inputSchema"] == specs[name]["inputSchema"]


def test_text_pdf_notebook_image_and_error(ws: Path):
    async def calls(client):
        return [await client.call_tool("read", args) for args in (
            {"path": "notes.txt", "offset": 5, "limit": 3}, {"path": "doc.pdf", "pages": "2"},
            {"path": "plot.ipynb"}, {"path": "blob.bin"}, {"path": "missing.txt"}, {"path": "notes.txt", "limit": "x"})]

    text, pdf, nb, binary, missing, invalid = run({}, "--root", str(ws), calls=calls)
    assert not text.is_error and texts(text).startswith("     5\tline 5\n     6\tline 6\n     7\tline 7\n[")
    # A cut read ends with how to continue, its version first on that line.
    assert re.fullmatch(r"\[version [0-9a-f]{16}\] \[Showing lines 5-7 .*offset=8 to continue\.\]",
                        texts(text).splitlines()[-1])
    assert "--- Page 2 ---" in texts(pdf) and "second page" in texts(pdf) and "third page" not in texts(pdf)
    images = [c for c in nb.content if c.type == "image"]
    assert len(images) == 1 and images[0].mime_type == "image/png" and "plot()" in texts(nb)
    for answer in (binary, missing, invalid):
        assert answer.is_error and texts(answer).startswith("Error:")
    assert "binary" in texts(binary) and "does not exist" in texts(missing) and "limit" in texts(invalid)


def test_outside_the_root_and_secrets_are_refused_without_a_flag(ws: Path):
    async def calls(client):
        return [await client.call_tool("read", {"path": p}) for p in (str(ws.parent / "outside.txt"), ".env")] + \
            [await client.call_tool("read", {"path": "notes.txt", "consent": True})]

    outside, secret, smuggled = run({}, "--root", str(ws), calls=calls)
    assert outside.is_error and "outside the workspace" in texts(outside)
    assert secret.is_error and "secrets" in texts(secret)
    assert smuggled.is_error and "consent" in texts(smuggled)


def test_allow_flags_lift_each_refusal_and_only_that_one(ws: Path):
    (ws.parent / ".env").write_text("OUTSIDE=secret\n")

    async def calls(client):
        return [await client.call_tool("read", {"path": p}) for p in
                (str(ws.parent / "outside.txt"), str(ws.parent / ".env"), ".env")]

    outside, outside_secret, secret = run({}, "--root", str(ws), "--allow-outside-roots", calls=calls)
    assert not outside.is_error and "not yours" in texts(outside)
    assert outside_secret.is_error and "secrets" in texts(outside_secret)
    assert secret.is_error and "secrets" in texts(secret)
    outside, outside_secret, secret = run({}, "--root", str(ws), "--allow-outside-roots", "--allow-sensitive",
                                          calls=calls)
    assert "not yours" in texts(outside) and "OUTSIDE=secret" in texts(outside_secret) and "TOKEN" in texts(secret)


def test_sixteen_calls_in_flight_at_once(ws: Path):
    for i in range(16):
        (ws / f"f{i}.txt").write_text(f"file {i}\n" * (i + 1))

    async def calls(client):
        answers: dict[int, types.CallToolResult] = {}

        async def one(i: int) -> None:
            answers[i] = await client.call_tool("read", {"path": f"f{i}.txt"})

        async with anyio.create_task_group() as tg:
            for i in range(16):
                tg.start_soon(one, i)
        return answers

    answers = run({}, "--root", str(ws), calls=calls)
    for i in range(16):
        assert not answers[i].is_error and texts(answers[i]).count(f"file {i}") == i + 1


def test_a_client_offering_roots_confines_reads_to_them(ws: Path, tmp_path: Path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "mine.txt").write_text("from the client's root\n")

    async def roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=other.as_uri(), name="other")])

    async def calls(client):
        return [await client.call_tool("read", {"path": p}) for p in ("mine.txt", str(ws / "notes.txt"))]

    mine, flagged_root = run({"list_roots_callback": roots}, "--root", str(ws), calls=calls)
    assert "from the client's root" in texts(mine)
    assert flagged_root.is_error and "outside the workspace" in texts(flagged_root)


def test_roots_are_asked_again_when_the_client_says_they_changed(ws: Path, tmp_path: Path):
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        folder.mkdir()
        (folder / "here.txt").write_text(f"in {folder.name}\n")
    offered = [first]

    async def roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=f.as_uri()) for f in offered])

    async def calls(client):
        before = await client.call_tool("read", {"path": "here.txt"})
        offered[:] = [second]
        await client.send_roots_list_changed()
        # A notification has no answer to wait for: read until the new root shows (a hang if it
        # never does).
        with anyio.fail_after(ANSWER_TIMEOUT):
            while "in second" not in texts(after := await client.call_tool("read", {"path": "here.txt"})):
                await anyio.sleep(POLL_SECONDS)
        return before, after, await client.call_tool("read", {"path": str(first / "here.txt")})

    before, after, old_root = run({"list_roots_callback": roots}, "--root", str(ws), calls=calls)
    assert "in first" in texts(before) and "in second" in texts(after)
    assert old_root.is_error and "outside the workspace" in texts(old_root)


def test_calls_in_flight_before_the_roots_arrive_are_confined_to_them(ws: Path, tmp_path: Path):
    other = tmp_path / "other"
    other.mkdir()

    async def roots(context):
        await anyio.sleep(0.5)  # a slow client: every call below is sent before this answers
        return types.ListRootsResult(roots=[types.Root(uri=other.as_uri())])

    async def calls(client):
        answers = []

        async def one() -> None:
            answers.append(await client.call_tool("read", {"path": str(ws / "notes.txt")}))

        async with anyio.create_task_group() as tg:
            for _ in range(8):
                tg.start_soon(one)
        return answers

    answers = run({"list_roots_callback": roots}, "--root", str(ws), calls=calls)
    assert len(answers) == 8 and all(a.is_error and "outside the workspace" in texts(a) for a in answers)


@pytest.mark.parametrize("action", ["accept", "decline"])
def test_the_user_is_asked_where_the_client_can_ask(ws: Path, action: str):
    asked = []

    async def elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action=action, content={} if action == "accept" else None)

    async def calls(client):
        return [await client.call_tool("read", {"path": str(ws.parent / "outside.txt")}),
                await client.call_tool("read_many", {"paths": ["notes.txt", ".env"]})]

    single, many = run({"elicitation_callback": elicit}, "--root", str(ws), calls=calls)
    assert len(asked) == 2 and "outside.txt" in asked[0] and ".env" in asked[1] and "secrets" in asked[1]
    if action == "accept":
        assert not single.is_error and "not yours" in texts(single)
        assert "TOKEN=secret" in texts(many)
    else:
        assert single.is_error and "outside the workspace" in texts(single)
        assert "TOKEN" not in texts(many) and "secrets" in texts(many) and "line 30" in texts(many)


def test_read_many_through_the_client(ws: Path):
    async def calls(client):
        return await client.call_tool("read_many", {"paths": ["*.txt", "doc.pdf", "plot.ipynb", "missing.md"]})

    answer = run({}, "--root", str(ws), calls=calls)
    body = texts(answer)
    assert not answer.is_error
    assert body.index("==> notes.txt <==") < body.index("==> doc.pdf <==") < body.index("==> plot.ipynb <==")
    assert "line 30" in body and "third page" in body and "missing.md does not exist" in body
    assert [c.type for c in answer.content].count("image") == 1


CONTINUE = "[To continue, call read_many again with "


def test_a_search_of_many_files_followed_as_the_model_reads_it_reaches_every_hit(tmp_path: Path):
    """The model sees only the text: it passes the arguments the last line gives back, until a
    reply has none. The hits are in the last files walked, past the 100 a call shows."""
    make_tree(tmp_path)

    async def calls(client):
        replies = [texts(await client.call_tool("read_many", {"paths": [GLOB], "find": NEEDLE}))]
        while CONTINUE in replies[-1]:
            assert len(replies) <= HIT_FILES, "next does not move on"
            last = replies[-1].splitlines()[-1]
            assert last.startswith(CONTINUE) and last.endswith("]")
            replies.append(texts(await client.call_tool("read_many", json.loads(last[len(CONTINUE):-1]))))
        return replies

    replies = run({}, "--root", str(tmp_path), calls=calls)
    assert [hit for reply in replies for hit in text_hits(reply)] == re_hits(tmp_path, GLOB, NEEDLE)
    assert all("No hit" not in reply for reply in replies)
    counts = [re.match(r"\[(\d+) files: ", line) for reply in replies for line in reply.splitlines()]
    assert sum(int(m[1]) for m in counts if m) == TREE_FILES  # each file answered once


def test_a_pdf_read_past_its_deadline_is_answered_timeout_and_the_server_goes_on(ws: Path, tmp_path: Path,
                                                                                 monkeypatch):
    """A PDF reader stuck where no checkpoint reaches (injected: rpc.STUCK_READER; as PDFium on a
    hostile page, in C): the read runs in a worker process, killed at the deadline, and the next
    call is answered."""
    (ws / STUCK_PDF).write_bytes(build_pdf(["never read"]))
    monkeypatch.setenv("AGENTREAD_READ_DEADLINE", str(STOPPED_AFTER))
    for name, value in injected(tmp_path / "inject", STUCK_READER).items():
        monkeypatch.setenv(name, value)

    async def calls(client):
        return [await client.call_tool("read", {"path": STUCK_PDF}),
                await client.call_tool("read", {"path": "notes.txt", "limit": 2})]

    slow, after = run({}, "--root", str(ws), calls=calls)
    assert slow.is_error and "took longer than" in texts(slow) and "smaller part" in texts(slow)
    assert not after.is_error and "line 2" in texts(after)


def test_a_reader_that_crashes_costs_that_read_only(ws: Path, monkeypatch):
    """A read of `crash.png` makes its worker read address 0, as a bug in a native decoder would
    (a test-only variable): that call is an error, and the MCP server answers the calls after it,
    PDFs included."""
    from agentread.serve.workers import CRASH_FOR_TESTS

    (ws / "crash.png").write_bytes(base64.b64decode(png_b64()))
    monkeypatch.setenv(CRASH_FOR_TESTS, "crash.png")

    async def calls(client):
        return [await client.call_tool("read", {"path": "crash.png"}),
                await client.call_tool("read", {"path": "doc.pdf", "pages": "2"}),
                await client.call_tool("read", {"path": "notes.txt", "limit": 1})]

    crashed, pdf, text = run({}, "--root", str(ws), calls=calls)
    assert crashed.is_error and "SIGSEGV" in texts(crashed) and "Nothing else was affected" in texts(crashed)
    assert not pdf.is_error and "second page" in texts(pdf)
    assert not text.is_error and "line 1" in texts(text)


@pytest.mark.parametrize("value", ["abc", "0", "-1", "nan", "inf"])
def test_a_bad_deadline_keeps_the_default(ws: Path, monkeypatch, value: str):
    monkeypatch.setenv("AGENTREAD_READ_DEADLINE", value)

    async def calls(client):
        return await client.call_tool("read", {"path": "notes.txt", "offset": 30})

    answer = run({}, "--root", str(ws), calls=calls)
    assert not answer.is_error and "line 30" in texts(answer)


def test_read_many_is_not_remembered_for_the_unchanged_stub(ws: Path):
    """read_many shows the start of each of three long files; a read of one of them then is not
    "unchanged": the model was never shown the rest."""
    for name in ("a.txt", "b.txt", "c.txt"):
        (ws / name).write_text("".join(f"{name} line {i}\n" for i in range(1, 1501)))

    async def calls(client):
        many = await client.call_tool("read_many", {"paths": ["a.txt", "b.txt", "c.txt"]})
        first = await client.call_tool("read", {"path": "a.txt"})
        return many, first, await client.call_tool("read", {"path": "a.txt"})

    many, first, again = run({}, "--root", str(ws), "--unchanged-stub", calls=calls)
    assert "a.txt line 1\n" in texts(many) and "a.txt line 1500" not in texts(many)
    assert "a.txt line 1500" in texts(first) and "Unchanged" not in texts(first)
    assert "Unchanged" in texts(again)  # a read shown whole is remembered


def test_the_prompt_names_where_a_link_leads(ws: Path):
    """A link in the workspace to a secret is shown to the user as the file it leads to."""
    secret = ws.parent / "credentials"
    secret.write_text("KEY=1\n")
    (ws / "notes.md").symlink_to(secret)
    asked = []

    async def elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="decline")

    async def calls(client):
        return await client.call_tool("read", {"path": "notes.md"})

    answer = run({"elicitation_callback": elicit}, "--root", str(ws), calls=calls)
    assert answer.is_error and len(asked) == 1 and str(secret) in asked[0] and "secrets" in asked[0]


def test_one_approval_covers_at_most_its_cap(ws: Path):
    from agentread.serve.mcp import MAX_APPROVAL_PATHS

    names = [f"s{n}.env" for n in range(MAX_APPROVAL_PATHS + 2)]
    for name in names:
        (ws / name).write_text(f"{name}=1\n")
    asked = []

    async def elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={})

    async def calls(client):
        return await client.call_tool("read_many", {"paths": names})

    body = texts(run({"elicitation_callback": elicit}, "--root", str(ws), calls=calls))
    assert len(asked) == 1 and "2 more files" in asked[0]
    assert all(str(ws / n) in asked[0] for n in names[:MAX_APPROVAL_PATHS])
    assert f"{names[0]}=1" in body and f"{names[-1]}=1" not in body


def test_without_the_sdk_the_command_says_how_to_install_it(tmp_path: Path):
    # A copy of the package's import path in which `mcp` cannot be imported.
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "mcp.py").write_text("raise ImportError('no mcp here', name='mcp')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(blocker), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "agentread", "mcp"], env=env, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "pip install 'agentread[mcp]'" in done.stderr


@pytest.mark.skipif(not INSPECTOR.exists(), reason="node_modules is absent: run `npm ci` for the MCP Inspector")
def test_the_mcp_inspector_lists_the_tools_and_reads(ws: Path):
    command = [str(INSPECTOR), "--cli", sys.executable, "-m", "agentread", "mcp", "--root", str(ws)]
    listed = subprocess.run(command + ["--method", "tools/list"], capture_output=True, text=True, timeout=120)
    assert [t["name"] for t in json.loads(listed.stdout)["tools"]] == ["read", "read_many"]
    called = subprocess.run(command + ["--method", "tools/call", "--tool-name", "read", "--tool-arg", "path=notes.txt",
                                       "--tool-arg", "offset=29"], capture_output=True, text=True, timeout=120)
    answer = json.loads(called.stdout)
    assert answer["isError"] is False
    [part] = answer["content"]
    assert part["text"].startswith("    29\tline 29\n    30\tline 30\n[version ")


def test_a_word_files_picture_comes_with_its_text(ws: Path):
    import shutil

    shutil.copy(REPO / "tests" / "data" / "office" / "markitdown-test.docx", ws / "paper.docx")

    async def calls(client):
        return await client.call_tool("read", {"path": "paper.docx"})

    answer = run({}, "--root", str(ws), calls=calls)
    assert not answer.is_error and [c.type for c in answer.content][:2] == ["text", "image"]
    assert answer.content[-1].text.splitlines()[-1].startswith("[version ")
    assert answer.content[0].text.endswith('[image 1: word/media/image1.png "图形用户界面, 文本, 应用程序, '
                                           '信件 AI 生成的内容可能不正确。", image/png 1274x870, attached]\n')
    assert answer.content[1].mime_type == "image/png"
    assert base64.b64decode(answer.content[1].data).startswith(b"\x89PNG")


def test_find_and_a_cut_lines_column_reach_the_model(ws: Path):
    (ws / "wide.txt").write_text("x" * 2500 + " needle\n")

    async def calls(client):
        return [await client.call_tool("read", {"path": "notes.txt", "find": "LINE 3", "ignoreCase": True}),
                await client.call_tool("read", {"path": "wide.txt"}),
                await client.call_tool("read", {"path": "wide.txt", "column": 2001}),
                await client.call_tool("read_many", {"paths": ["*.txt"], "find": r"ne+dle$", "regex": True})]

    found, cut, rest, many = run({}, "--root", str(ws), calls=calls)
    assert texts(found).splitlines()[1:-1] == [f"line {n}: line {n}  [read: offset={n}, limit=1]" for n in (3, 30)]
    assert "offset=1, column=2001 reads on" in texts(cut) and texts(rest).startswith("     1\t" + "x" * 500 + " needle")
    assert "==> wide.txt <==" in texts(many) and "line 1, column 2,502:" in texts(many)
