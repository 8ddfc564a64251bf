"""Versions: every file result names one; `since` answers unchanged, a diff of the window, or the
fresh read said to have changed; a server session says when a file changed since its last read; the
texts a session holds are bounded."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from agentread import versions
from agentread.engine import Engine, run
from agentread.request import parse_request
from agentread.versions import HELD_TEXTS_BYTES, VERSION_HASH_BYTES, FolderStore, Versions, issued
from agentread.workspace import Workspace
from rpc import ServerProcess, text_of

LINES = "".join(f"line {n}\n" for n in range(1, 101))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text(LINES)
    return tmp_path


def edit(ws: Path) -> None:
    """Line 50 changed and a line inserted after line 10: lines from 11 on are one further down."""
    text = LINES.replace("line 50\n", "LINE FIFTY\n").replace("line 10\n", "line 10\ninserted\n")
    (ws / "a.txt").write_text(text)


def test_a_small_files_version_is_its_bytes_and_a_huge_ones_is_sampled(tmp_path: Path):
    engine = Engine(Workspace([str(tmp_path)]))
    small = tmp_path / "small.txt"
    small.write_text("same\n")
    first = engine.read(parse_request({"path": "small.txt"}))
    os.utime(small, (1, 1))  # a touch
    assert engine.read(parse_request({"path": "small.txt"})).version == first.version
    assert first.size == 5 and first.mtime.endswith("Z") and len(first.version) == 16
    big = tmp_path / "big.log"
    with open(big, "wb") as f:  # sparse: larger than is hashed whole, never on disk
        f.write(b"a log line\n" * 10_000)
        f.truncate(4 * VERSION_HASH_BYTES)
    before = engine.read(parse_request({"path": "big.log", "limit": 1}))
    st = os.stat(big)
    with open(big, "r+b") as f:
        f.seek(4 * VERSION_HASH_BYTES - 6)
        f.write(b"\nend!\n")
    os.utime(big, ns=(st.st_atime_ns, st.st_mtime_ns))  # the same size and mtime: the last sample tells
    after = engine.read(parse_request({"path": "big.log", "limit": 1}))
    assert before.version and after.version != before.version and after.size == 4 * VERSION_HASH_BYTES
    st = os.stat(big)
    with open(big, "r+b") as f:  # between the samples, the same size and mtime: the change time tells
        f.seek(VERSION_HASH_BYTES)
        f.write(b"edited")
    os.utime(big, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert engine.read(parse_request({"path": "big.log", "limit": 1})).version != after.version


def cli(ws: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`agentread read a.txt ARGS` in a fresh process, in the test's session folder (conftest)."""
    return subprocess.run([sys.executable, "-m", "agentread", "read", "a.txt", "--root", str(ws), *args],
                          capture_output=True, text=True, timeout=60, env={**os.environ, **(env or {})})


def last_version(text: str) -> str:
    """The version a read's text names: at the start of its last line (versions.with_version)."""
    return re.match(r"\[version ([0-9a-f]{16})\]", text.splitlines()[-1]).group(1)


def test_the_command_lines_session_in_a_folder_answers_unchanged_and_diffs_a_change(ws: Path, session_dir: Path):
    first = cli(ws, "--limit", "5")
    version = last_version(first.stdout)
    same = cli(ws, "--since", version, "--offset", "5", "--limit", "2")
    assert same.returncode == 0 and same.stdout.count("\n") == 1 and same.stdout.startswith("[Unchanged: ")
    edit(ws)
    diff = cli(ws, "--since", version, "--offset", "45", "--limit", "10").stdout
    head = diff.splitlines()[0]
    assert head.startswith("[Changed: ") and "2 lines differ" in head and "lines 45-54" in head, diff
    assert "@@ -47,7 +48,7 @@" in diff and "-line 50\n+LINE FIFTY" in diff and "inserted" not in diff
    # Without `since`: a file changed since the session last read it says so first, as on a server.
    (ws / "a.txt").write_text((ws / "a.txt").read_text().replace("line 90\n", ""))
    plain = cli(ws, "--limit", "3").stdout.splitlines()
    assert plain[0].startswith("[Changed since this session last read ") and "1 line differ" in plain[0]
    assert plain[1] == "     1\tline 1"
    assert stat.S_IMODE(session_dir.stat().st_mode) == 0o700
    assert {stat.S_IMODE(f.stat().st_mode) for f in session_dir.iterdir()} == {0o600}


def test_without_a_session_folder_the_command_line_tells_unchanged_from_changed(ws: Path, session_dir: Path):
    version = json.loads(cli(ws, "--json", env={"AGENTREAD_SESSION_DIR": ""}).stdout)["version"]
    same = cli(ws, "--since", version, "--offset", "5", "--limit", "2", env={"AGENTREAD_SESSION_DIR": ""})
    assert same.returncode == 0 and same.stdout.count("\n") == 1 and "Unchanged" in same.stdout
    edit(ws)
    changed = cli(ws, "--since", version, "--offset", "50", "--limit", "2",
                  env={"AGENTREAD_SESSION_DIR": ""}).stdout.splitlines()
    assert changed[0].startswith("[Changed") and version in changed[0]
    assert changed[1:3] == ["    50\tline 49", "    51\tLINE FIFTY"] and last_version("\n".join(changed)) != version
    assert not session_dir.exists()


def test_over_json_rpc_a_changed_file_is_answered_with_its_diff_numbered_as_now(ws: Path):
    server = ServerProcess(workspace=ws)
    try:
        first = server.read(path="a.txt")
        version = first["version"]
        assert first["size"] == len(LINES) and not first.get("changed")
        same = server.read(path="a.txt", offset=40, limit=20, since=version)
        assert same["unchanged"] and text_of(same).count("\n") == 0 and version in text_of(same)
        edit(ws)
        diff = server.read(path="a.txt", offset=45, limit=10, since=version)
        text = text_of(diff)
        assert diff["changed"] and diff["diff"] and diff["version"] != version, text
        assert "2 lines differ" in text.splitlines()[0] and "lines 45-54" in text.splitlines()[0]
        assert "@@ -47,7 +48,7 @@" in text and "-line 50\n+LINE FIFTY" in text
        assert "inserted" not in text  # that change is outside the window
        elsewhere = server.read(path="a.txt", offset=80, limit=5, since=version)
        head, *window = text_of(elsewhere).splitlines()
        assert "lines 80-84 is unchanged, but moved 1 line down" in head and "lines 81-85 now" in head, head
        assert window[0] == "    80\tline 79" and not elsewhere.get("diff")
        # Without `since`: the session read this file at another version, and says so first.
        edit2 = (ws / "a.txt").read_text().replace("line 90\n", "")
        (ws / "a.txt").write_text(edit2)
        plain = server.read(path="a.txt", offset=1, limit=3)
        head, *rest = text_of(plain).splitlines()
        assert head.startswith("[Changed since this session last read") and "1 line differ" in head
        assert rest[0] == "     1\tline 1" and plain["changed"]
        assert not server.read(path="a.txt", offset=1, limit=3).get("changed")  # now at the version last read
    finally:
        server.close()


def window_reads(ws: Path, front: str):
    """read(**params) → the result as JSON, through the command line (one process a call, sharing
    the test's session folder) or one JSON-RPC server; and what closes it."""
    if front == "cli":
        def read(**params):
            args = [f"--{key}={value}" for key, value in params.items() if key != "path"]
            return json.loads(cli(ws, "--json", *args).stdout)
        return read, lambda: None
    server = ServerProcess(workspace=ws)
    return (lambda **params: server.read(path="a.txt", **params)), server.close


@pytest.mark.parametrize("front", ["cli", "jsonrpc"])
def test_since_calls_a_window_unchanged_only_when_its_lines_are_still_at_their_numbers(ws: Path, front: str,
                                                                                     session_dir: Path):
    read, close = window_reads(ws, front)
    try:
        version = read(offset=60, limit=20)["version"]
        (ws / "a.txt").write_text(LINES.replace("line 50\n", ""))  # sed -i 50d: every line of 60-79 moves up
        moved = read(offset=60, limit=20, since=version)
        head, *window = text_of(moved).splitlines()
        assert head.startswith(f"[Changed: {ws / 'a.txt'} is no longer at version {version} (now "), head
        assert "1 line differs). What that read showed as lines 60-79 is unchanged, but moved 1 line up (lines " \
            "removed above): they are lines 59-78 now. Lines 60-79 as they are now follow.]" in head, head
        assert window[0] == "    60\tline 61" and window[19] == "    79\tline 80" and len(window) == 21
        assert window[-1] == f"[version {moved['version']}] [Showing lines 60-79 of 99 (limit of 20 lines). Call " \
            "again with offset=80 to continue.]"
        assert moved["changed"] and not moved.get("diff") and moved["next"] == {"offset": 80}
        (ws / "a.txt").write_text(LINES)
        version = read(offset=60, limit=20)["version"]
        (ws / "a.txt").write_text(LINES.replace("line 50\n", "line fifty\n").replace("line 61\n", "line 61\r\n"))
        ends = read(offset=60, limit=20, since=version)  # a line end is a change, and the diff names it
        assert ends["diff"] and "@@ -58,7 +58,7 @@" in text_of(ends), text_of(ends)
        assert "-line 61  [line end: LF]\n+line 61  [line end: CRLF]\n" in text_of(ends)
        # A line changed above the window, none added or removed: its lines are where they were.
        version = ends["version"]
        (ws / "a.txt").write_text(LINES.replace("line 50\n", "line 5O\n").replace("line 61\n", "line 61\r\n"))
        same = read(offset=60, limit=20, since=version)
        assert text_of(same) == f"[Changed: {ws / 'a.txt'} is no longer at version {version} (now " \
            f"{same['version']}; 1 line differs). Nothing changed in lines 60-79: what that read showed of them " \
            f"still holds, at the same numbers.]\n[version {same['version']}]"
    finally:
        close()


def test_a_version_the_session_no_longer_holds_reads_the_file_again(ws: Path):
    earlier = ServerProcess(workspace=ws)
    try:
        version = earlier.read(path="a.txt")["version"]
    finally:
        earlier.close()
    edit(ws)
    server = ServerProcess(workspace=ws)  # another session: it never held the text at that version
    try:
        again = server.read(path="a.txt", offset=50, limit=2, since=version)
        assert text_of(again).splitlines()[0].startswith(f"[Changed: {ws / 'a.txt'} is no longer at version {version}")
        assert again["changed"] and not again.get("diff") and "LINE FIFTY" in text_of(again)
    finally:
        server.close()


def never_issued(path: Path) -> str:
    """A version no read of `path` can give: of two that differ in their check digits alone, one."""
    return next(v for v in ("deadbeefdeadbeef", "deadbeefdeadbeee") if not issued(v, os.path.realpath(path)))


def test_a_version_no_read_of_the_file_gave_is_unknown_not_changed(ws: Path):
    (ws / "b.txt").write_text("b\n")
    server = ServerProcess(workspace=ws)
    try:
        other = server.read(path="b.txt")["version"]  # a real version, of another file
        # Check digits are 16 bits: a made-up version is taken whose digits are not a.txt's.
        made_ups = [never_issued(ws / "a.txt"), "not a version"]
        if not issued(other, os.path.realpath(ws / "a.txt")):
            made_ups.append(other)
        for made_up in made_ups:
            answer = server.read(path="a.txt", offset=50, limit=2, since=made_up)
            head, *window = text_of(answer).splitlines()
            assert head.startswith(f"[Unknown version: no read of {ws / 'a.txt'} gave version {made_up},"), head
            assert f"at version {answer['version']}" in head and "Pass `since` the version a read" in head
            assert not answer.get("changed") and not answer.get("unchanged")
            assert window[:2] == ["    50\tline 50", "    51\tline 51"]
    finally:
        server.close()
    done = cli(ws, "--since", never_issued(ws / "a.txt"), "--limit", "1")
    assert done.returncode == 0 and done.stdout.startswith("[Unknown version: no read of ")


def test_over_mcp_the_model_sees_the_version_and_the_diff(ws: Path):
    pytest.importorskip("mcp", reason="the MCP SDK (the mcp extra) is not installed")
    from mcp_client import run, texts

    async def calls(client):
        first = texts(await client.call_tool("read", {"path": "a.txt", "limit": 5}))
        version = last_version(first)
        same = texts(await client.call_tool("read", {"path": "a.txt", "since": version}))
        edit(ws)
        changed = texts(await client.call_tool("read", {"path": "a.txt", "offset": 45, "limit": 10,
                                                        "since": version}))
        return first, version, same, changed

    first, version, same, changed = run({}, "--root", str(ws), calls=calls)
    assert first.splitlines()[-1] == f"[version {version}] [Showing lines 1-5 of 100 (limit of 5 lines). Call " \
        "again with offset=6 to continue.]"
    assert same.startswith("[Unchanged") and same.count("\n") == 0
    assert "-line 50\n+LINE FIFTY" in changed and "@@ -47,7 +48,7 @@" in changed


def test_a_session_holds_a_bounded_text_of_ten_thousand_files(tmp_path: Path):
    """10,000 files of 8 KB read in one session: what it holds stays within HELD_TEXTS_BYTES, the
    latest are diffed, the earliest read again."""
    engine = Engine(Workspace([str(tmp_path)]))
    memory = Versions()
    body = "".join(f"{n:07d} " * 8 + "\n" for n in range(128))  # 8 KB
    count = 10_000
    assert count * len(body) > 2 * HELD_TEXTS_BYTES
    first_versions = {}
    for n in range(count):
        name = f"f{n}.txt"
        (tmp_path / name).write_text(body)
        plan = engine.plan(parse_request({"path": name}))
        first_versions[name] = memory.answer(plan, run(plan)).version
        assert memory.held_bytes <= HELD_TEXTS_BYTES
    assert len(memory) * len(body) <= HELD_TEXTS_BYTES + len(body)
    for name, diffed in ((f"f{count - 1}.txt", True), ("f0.txt", False)):
        (tmp_path / name).write_text(body.replace("0000000", "changed", 1))
        plan = engine.plan(parse_request({"path": name, "limit": 3, "since": first_versions[name]}))
        result = memory.answer(plan, run(plan))
        assert result.changed and result.diff is diffed, result.text()


def test_an_editor_buffers_version_is_of_its_text_and_its_edits_are_diffed(ws: Path):
    server = ServerProcess(workspace=ws)
    try:
        uri = (ws / "a.txt").resolve().as_uri()
        server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "plaintext", "version": 1,
                                                                "text": LINES}})
        opened = server.read(path="a.txt", limit=3)
        assert opened["encoding"].endswith("(editor buffer)")
        on_disk = Engine(Workspace([str(ws)])).read(parse_request({"path": "a.txt"}))
        assert opened["version"] == on_disk.version  # the same text, in the editor or on disk
        server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
            {"text": LINES.replace("line 3\n", "line three\n")}]})
        diff = server.read(path="a.txt", limit=5, since=opened["version"])
        assert diff["diff"] and "-line 3\n+line three" in text_of(diff)
        assert not (ws / "a.txt").read_text().count("three")  # the file on disk is as it was
    finally:
        server.close()


def sections(text: str) -> dict[str, list[str]]:
    """A read of many files' text: each file's lines under its header, by path."""
    found = re.findall(r"^==> (\S+) <==.*?\n(.*?)\n(?=^==> |^\[\d+ files:)", text, re.M | re.S)
    return {path: body.splitlines() for path, body in found}


def headers(text: str) -> dict[str, str]:
    """A read of many files' text: the version each file's header names, by path."""
    return dict(re.findall(r"^==> (\S+) <==(?: \[version ([0-9a-f]{16})\])?$", text, re.M))


def test_over_json_rpc_each_file_of_many_has_its_version_since_and_change_note(ws: Path):
    (ws / "b.txt").write_text("b\n")
    server = ServerProcess(workspace=ws)
    try:
        first = server.request("agentread/readMany", {"paths": ["a.txt", "b.txt"]})["result"]
        va, vb = (f["version"] for f in first["files"])
        assert first["files"][1]["size"] == 2 and first["files"][1]["mtime"].endswith("Z")
        shown = sections(text_of(first))
        assert headers(text_of(first)) == {"a.txt": va, "b.txt": vb}  # on the header: no line of its own
        assert shown["a.txt"][-1] == "   100\tline 100" and shown["b.txt"] == ["     1\tb"]
        edit(ws)
        again = server.request("agentread/readMany", {"paths": [{"path": "a.txt", "since": va},
                                                                {"path": "b.txt", "since": vb}]})["result"]
        a, b = again["files"]
        assert a["changed"] and a["diff"] and a["version"] != va and not b.get("changed")
        assert b["unchanged"] and b["version"] == vb
        shown = sections(text_of(again))
        assert len(shown["b.txt"]) == 1 and f"b.txt is still at version {vb};" in shown["b.txt"][0]
        diff = "\n".join(shown["a.txt"])
        assert "@@ -47,7 +48,7 @@" in diff and "-line 50\n+LINE FIFTY" in diff and "+inserted" in diff
        assert headers(text_of(again)) == {"a.txt": a["version"], "b.txt": ""}  # unchanged: its line says it
        # Without `since`: a file changed since this session last read it says so first.
        (ws / "a.txt").write_text((ws / "a.txt").read_text().replace("line 90\n", ""))
        plain = server.request("agentread/readMany", {"paths": ["a.txt", "b.txt"]})["result"]
        shown = sections(text_of(plain))
        assert shown["a.txt"][0].startswith("[Changed since this session last read ") and \
            "1 line differ" in shown["a.txt"][0] and shown["a.txt"][1] == "     1\tline 1"
        assert plain["files"][0]["changed"] and not plain["files"][1].get("changed")
        assert shown["b.txt"][0] == "     1\tb"
    finally:
        server.close()


def test_a_file_many_read_but_did_not_show_is_still_noted_as_changed(ws: Path):
    """A file a read of many files left out for lack of room was not seen: a later read still says
    it changed since the session last read it."""
    names = [f"c{n}.txt" for n in range(7)]
    for name in names:
        (ws / name).write_text(LINES)
    (ws / "b.txt").write_text("b\n")
    server = ServerProcess(workspace=ws)
    try:
        before = server.read(path="b.txt")["version"]
        (ws / "b.txt").write_text("b changed\n")
        reply = server.request("agentread/readMany", {"paths": [*names, "b.txt"], "maxBytes": 2000})["result"]
        assert all(f["state"] == "not_shown" for f in reply["files"] if f["path"] == "b.txt")
        assert "b.txt" in reply["next"]["paths"]  # as it was asked, without since
        again = server.read(path="b.txt")
        assert again["changed"] and text_of(again).startswith("[Changed since this session last read ") \
            and f"b.txt (version {before}" in text_of(again).splitlines()[0]
    finally:
        server.close()


def test_over_mcp_each_file_of_many_has_its_version_since_and_change_note(ws: Path):
    pytest.importorskip("mcp", reason="the MCP SDK (the mcp extra) is not installed")
    from mcp_client import run, texts

    (ws / "b.txt").write_text("b\n")

    async def calls(client):
        first = texts(await client.call_tool("read_many", {"paths": ["a.txt", "b.txt"]}))
        va, vb = headers(first).values()
        edit(ws)
        since = texts(await client.call_tool("read_many", {"paths": [{"path": "a.txt", "since": va},
                                                                    {"path": "b.txt", "since": vb}]}))
        (ws / "b.txt").write_text("b again\n")
        plain = texts(await client.call_tool("read_many", {"paths": ["a.txt", "b.txt"]}))
        return vb, sections(since), sections(plain)

    vb, since, plain = run({}, "--root", str(ws), calls=calls)
    assert len(since["b.txt"]) == 1 and f"b.txt is still at version {vb};" in since["b.txt"][0]
    diff = "\n".join(since["a.txt"])
    assert "-line 50\n+LINE FIFTY" in diff and "@@ -47,7 +48,7 @@" in diff
    assert plain["b.txt"][0].startswith("[Changed since this session last read ") and f"b.txt (version {vb}" in \
        plain["b.txt"][0]
    assert plain["b.txt"][1:] == ["     1\tb again"]
    assert plain["a.txt"][0] == "     1\tline 1"  # read at this version by the call before


def test_a_diff_over_its_share_of_many_is_the_file_read_again_cut_under_its_change_note(tmp_path: Path):
    (tmp_path / "long.txt").write_text("".join(f"line {n} of a long file\n" for n in range(1, 601)))
    server = ServerProcess(workspace=tmp_path)
    try:
        version = server.read(path="long.txt")["version"]
        (tmp_path / "long.txt").write_text("".join(f"line {n} of a long file{' changed' * (n % 20 == 0)}\n"
                                                   for n in range(1, 601)))
        reply = server.request("agentread/readMany", {"paths": [{"path": "long.txt", "since": version}],
                                                      "maxBytes": 2000})["result"]
        whole = server.read(path="long.txt", since=version)
        assert whole["diff"] and len(text_of(whole).encode()) > 2000  # alone, the diff is given
        (f,) = reply["files"]
        text = sections(text_of(reply))["long.txt"]
        assert f["state"] == "cut" and f["changed"] and not f.get("diff"), text
        assert text[0].startswith("[Changed since this session last read ")
        assert text[1] == "     1\tline 1 of a long file"
        assert reply["next"]["paths"][0]["offset"] > 1
    finally:
        server.close()


def test_the_cli_json_rpc_and_mcp_show_the_same_text_and_version_line(ws: Path):
    pytest.importorskip("mcp", reason="the MCP SDK (the mcp extra) is not installed")
    from mcp_client import run, texts

    from_cli = cli(ws, "--offset", "3", "--limit", "4").stdout.rstrip("\n")
    server = ServerProcess(workspace=ws)
    try:
        from_jsonrpc = text_of(server.read(path="a.txt", offset=3, limit=4))
    finally:
        server.close()

    async def calls(client):
        return texts(await client.call_tool("read", {"path": "a.txt", "offset": 3, "limit": 4}))

    from_mcp = run({}, "--root", str(ws), calls=calls)
    assert from_cli == from_jsonrpc == from_mcp
    assert from_cli.splitlines()[-1] == f"[version {json.loads(cli(ws, '--json').stdout)['version']}] [Showing " \
        "lines 3-6 of 100 (limit of 4 lines). Call again with offset=7 to continue.]"


def held_on_disk(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.glob("*.txt"))


def test_a_session_folder_holds_texts_within_its_bound_the_least_recently_used_out(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(versions, "HELD_TEXTS_BYTES", 40_000)
    monkeypatch.setattr(versions, "REMEMBERED_FILES", 30)
    ws, folder = tmp_path / "ws", tmp_path / "session"
    ws.mkdir()
    engine = Engine(Workspace([str(ws)]))
    session = Versions(FolderStore(str(folder)))
    body = "".join(f"{n:07d} " * 8 + "\n" for n in range(128))  # 8 KB

    def read(name: str, **params):  # as a command line's call: its session written at its end
        plan = engine.plan(parse_request({"path": name, **params}))
        result = session.answer(plan, run(plan))
        session.flush()
        return result

    folder.mkdir()
    (folder / ("0" * 32 + ".txt")).write_text("left behind by a call killed long ago\n")
    os.utime(folder / ("0" * 32 + ".txt"), (1, 1))
    (folder / ".just-begun.part").write_text("another call's, being written\n")
    first = {}
    for n in range(60):
        (ws / f"f{n}.txt").write_text(body)
        first[f"f{n}.txt"] = read(f"f{n}.txt").version
        read("f0.txt")  # in use all along: the least recently used go first, never it
        assert held_on_disk(folder) <= 40_000 and session.held_bytes <= 40_000
    index = json.loads((folder / "index.json").read_text())
    assert len(index["last"]) == 30 and index["last"][-1][0].endswith("f0.txt")
    assert len(index["texts"]) == len(list(folder.glob("*.txt"))) >= 3  # the old file left behind went too
    assert (folder / ".just-begun.part").exists()
    for name, diffed in (("f59.txt", True), ("f0.txt", True), ("f1.txt", False)):
        (ws / name).write_text(body.replace("0000000", "changed", 1))
        result = read(name, limit=3, since=first[name])
        assert result.changed and result.diff is diffed, (name, result.text())


def test_command_lines_run_at_once_share_a_session_folder_unharmed(ws: Path, session_dir: Path):
    names = [f"f{n}.txt" for n in range(24)]
    for name in names:
        (ws / name).write_text(f"{name}\n" * 50)
    command = [sys.executable, "-m", "agentread", "read", "--root", str(ws)]
    procs = [subprocess.Popen([*command, *names[n % 3::3]], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for n in range(8)]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and err == b"" and out.count(b"<== [version ") == 8
    index = json.loads((session_dir / "index.json").read_text())  # whole: one writer's, never a mix
    assert versions._rows(index["last"], (str, str)) and versions._rows(index["texts"], (str, str, int))
    assert {os.path.basename(path) for path, _ in index["last"]} <= set(names) and index["last"]
    held = {f.name for f in session_dir.glob("*.txt")}
    assert not list(session_dir.glob(".*"))  # no file left half written
    for path, version, size in index["texts"]:
        text = FolderStore(str(session_dir)).text(path, version)
        assert text == f"{os.path.basename(path)}\n" * 50 and len(text) == size, (path, held)


@pytest.mark.parametrize("spoil", ["a file in its place", "an index that is not one"])
def test_a_session_folder_that_cannot_be_used_is_no_session(ws: Path, tmp_path: Path, spoil: str):
    folder = tmp_path / "spoilt"
    if spoil == "a file in its place":
        folder.write_text("not a folder\n")
    else:
        folder.mkdir()
        (folder / "index.json").write_text('{"last": [["a.txt"]], "texts": 7')
    env = {"AGENTREAD_SESSION_DIR": str(folder)}
    version = last_version(cli(ws, env=env).stdout)
    edit(ws)
    done = cli(ws, "--since", version, "--offset", "50", "--limit", "2", env=env)
    assert done.returncode == 0 and done.stderr == "" and done.stdout.startswith("[Changed: ")
    assert "    51\tLINE FIFTY" in done.stdout or "+LINE FIFTY" in done.stdout
    if spoil == "an index that is not one":  # started afresh: the session works again
        assert "-line 50\n+LINE FIFTY" in done.stdout
        assert versions._rows(json.loads((folder / "index.json").read_text())["last"], (str, str))


def test_a_sensitive_files_text_is_never_written_to_the_session_folder(ws: Path, session_dir: Path):
    (ws / ".env").write_text("API_TOKEN=do-not-show-4242\n")
    refused = subprocess.run([sys.executable, "-m", "agentread", "read", ".env", "--root", str(ws)],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1 and "do-not-show-4242" not in refused.stdout
    shown = subprocess.run([sys.executable, "-m", "agentread", "read", ".env", "--root", str(ws), "--consent"],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and "do-not-show-4242" in shown.stdout
    cli(ws)  # a file that is not sensitive: its text is held
    on_disk = b"".join(f.read_bytes() for f in session_dir.iterdir())
    assert b"line 50" in on_disk and b"do-not-show-4242" not in on_disk
