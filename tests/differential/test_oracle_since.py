"""`since` after scripted edits of real files, against the truth: the lines the earlier read showed
are known, so whether they still hold at their numbers, and what a diff must say, are computed here.
Edits insert, delete or change a line above, inside and below the window; an archive member is
changed (and another beside it); a file is replaced by one of the same size and time."""

from __future__ import annotations

import os
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from harness import body, cli, editor_lines, need, numbered

from rpc import ServerProcess, text_of

NODES = ("docutils-0.22.4", "docutils-0.22.4", "docutils", "nodes.py")
OFFSET, LIMIT = 1000, 20  # the window read, then read again with `since`
ABOVE, INSIDE, BELOW = 10, OFFSET + 5, 2000  # 0-based indexes of the line an edit touches

MOVED = re.compile(r"is unchanged, but moved [\d,]+ lines? (?:up|down) \(lines (?:added|removed) above\): they are "
                   r"lines ([\d,]+)-([\d,]+) now\.")


def insert(lines, at):
    lines.insert(at, "# a line inserted here")


def delete(lines, at):
    del lines[at]


def change(lines, at):
    lines[at] = lines[at] + "  # changed"


EDITS = [
    pytest.param(insert, ABOVE, id="insert-above"),
    pytest.param(delete, ABOVE, id="delete-above"),
    pytest.param(change, ABOVE, id="change-above"),
    pytest.param(insert, INSIDE, id="insert-inside"),
    pytest.param(delete, INSIDE, id="delete-inside"),
    pytest.param(change, INSIDE, id="change-inside"),
    pytest.param(insert, BELOW, id="insert-below"),
    pytest.param(delete, BELOW, id="delete-below"),
    pytest.param(change, BELOW, id="change-below"),
]

HUNK = re.compile(r"@@ -(\d+),(\d+) \+(\d+),(\d+) @@")


def check_answer(result: dict, before: list[str], after: list[str]) -> None:
    """The answer to a read of the window with `since` the earlier version is the truth: unchanged
    only when the file is; that the window still holds only when its lines are the same at the same
    numbers; else a diff whose hunks are the earlier and current lines where they say, and which
    together with the lines it leaves alone makes the window as it is now."""
    text = body(result) if not result.get("unchanged") else text_of(result)
    window_before, window_after = before[OFFSET - 1:OFFSET - 1 + LIMIT], after[OFFSET - 1:OFFSET - 1 + LIMIT]
    if result.get("unchanged"):
        assert before == after, "answered unchanged, but the file changed"
        return
    assert before != after and result.get("changed"), text
    first = text.split("\n", 1)[0]
    if "Nothing changed in" in first:
        assert window_before == window_after, f"says the window still holds, but it is now {window_after[:3]}…"
        return
    moved = MOVED.search(first)
    if moved:  # the window's lines only moved: where they are now, and the window as it is now
        start, end = (int(n.replace(",", "")) for n in moved.groups())
        assert after[start - 1:end] == window_before, "says the window's lines moved there, but they are not"
        assert [line for _, line in numbered(result)] == window_after
        return
    if first.endswith("it is read again below.]"):  # the earlier text not held: the fresh read
        assert [line for _, line in numbered(result)] == window_after
        return
    assert result.get("diff"), text
    patched, taken = [], 0  # the earlier file with the diff's hunks applied
    lines = text.split("\n")[3:]
    starts = [i for i, line in enumerate(lines) if HUNK.fullmatch(line)]
    assert starts and starts[0] == 0, lines[:1]
    for start, end in zip(starts, starts[1:] + [len(lines)]):
        a, b, c, d = map(int, HUNK.fullmatch(lines[start]).groups())
        hunk = lines[start + 1:end]
        old_side = [x[1:] for x in hunk if x[:1] in " -"]
        new_side = [x[1:] for x in hunk if x[:1] in " +"]
        assert old_side == before[a - 1:a - 1 + b], "a hunk's earlier lines are not the file's earlier lines"
        assert new_side == after[c - 1:c - 1 + d], "a hunk's current lines are not the file's current lines"
        patched += before[taken:a - 1] + new_side
        taken = a - 1 + b
    patched += before[taken:]
    assert patched[OFFSET - 1:OFFSET - 1 + LIMIT] == window_after, "the diff leaves the window wrong"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    shutil.copy(need(*NODES), tmp_path / "nodes.py")
    return tmp_path


def rewrite(path: Path, edit, at) -> tuple[list[str], list[str]]:
    before = editor_lines(path.read_text(encoding="utf-8"))
    after = list(before)
    edit(after, at)
    path.write_text("\n".join(after) + "\n", encoding="utf-8")
    return before, after


@pytest.mark.parametrize("edit, at", EDITS)
def test_since_after_an_edit_over_rpc(workspace, edit, at):
    path = workspace / "nodes.py"
    server = ServerProcess(workspace=workspace)
    try:
        window = {"path": str(path), "offset": OFFSET, "limit": LIMIT}
        version = server.read(**window)["version"]
        before, after = rewrite(path, edit, at)
        check_answer(server.read(**window, since=version), before, after)
    finally:
        server.close()


HIT_LINE = re.compile(r"^line ([\d,]+)(?:, column \d+)?: ", re.M)


@pytest.mark.parametrize("edit, at", [pytest.param(insert, ABOVE, id="insert-above"),
                                      pytest.param(delete, ABOVE, id="delete-above")])
def test_since_of_a_find_shows_the_hits_where_they_are_now(workspace, edit, at):
    """A find read again with `since` after lines moved: the hits its reply lists are the hits of
    the file now, each at its line now, as `shown.hits` says."""
    path = workspace / "nodes.py"
    server = ServerProcess(workspace=workspace)
    try:
        search = {"path": str(path), "find": "def __init__", "maxBytes": 8192}
        version = server.read(**search)["version"]
        _, after = rewrite(path, edit, at)
        result = server.read(**search, since=version)
    finally:
        server.close()
    truth = [n for n, line in enumerate(after, 1) if "def __init__" in line]
    listed = [int(n.replace(",", "")) for n in HIT_LINE.findall(body(result))]
    assert result["changed"] and listed == [hit["line"] for hit in result["shown"]["hits"]]
    assert listed == truth[:len(listed)] and listed


@pytest.mark.parametrize("edit, at", [pytest.param(change, INSIDE, id="change-inside"),
                                      pytest.param(insert, ABOVE, id="insert-above")])
def test_since_after_an_edit_in_the_cli(workspace, edit, at):
    path = workspace / "nodes.py"
    window = {"path": str(path), "offset": OFFSET, "limit": LIMIT, "root": str(workspace)}
    version = cli(window)["version"]
    before, after = rewrite(path, edit, at)
    check_answer(cli({**window, "since": version}), before, after)


def test_since_after_an_edit_over_mcp_is_the_rpc_answer(workspace):
    """Both sessions read the window, the file is changed, both read it again with `since`: the
    same text."""
    from mcp_client import run
    path = workspace / "nodes.py"
    window = {"path": str(path), "offset": OFFSET, "limit": LIMIT}
    server = ServerProcess(workspace=workspace)
    try:
        version = server.read(**window)["version"]

        async def calls(client):
            await client.call_tool("read", window)
            rewrite(path, change, INSIDE)
            answer = await client.call_tool("read", {**window, "since": version})
            return "".join(c.text for c in answer.content if c.type == "text")
        over_mcp = run({}, "--root", str(workspace), calls=calls)
        over_rpc = server.read(**window, since=version)
    finally:
        server.close()
    assert over_rpc.get("diff")
    assert over_mcp == text_of(over_rpc)


def test_a_file_replaced_with_the_same_size_and_time_is_changed(workspace):
    path = workspace / "nodes.py"
    server = ServerProcess(workspace=workspace)
    try:
        window = {"path": str(path), "offset": OFFSET, "limit": LIMIT}
        version = server.read(**window)["version"]
        stat = path.stat()
        before = editor_lines(path.read_text(encoding="utf-8"))
        after = list(before)
        after[INSIDE] = after[INSIDE].swapcase()
        assert after != before
        replacement = workspace / "replacement"
        replacement.write_text("\n".join(after) + "\n", encoding="utf-8")
        os.utime(replacement, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        os.replace(replacement, path)
        assert (path.stat().st_size, path.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
        check_answer(server.read(**window, since=version), before, after)
        check_answer(server.read(**window, since=server.read(**window)["version"]), after, after)
    finally:
        server.close()


def bundle(path: Path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)


@pytest.fixture
def archive(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    members = {"docutils/nodes.py": need(*NODES).read_bytes(),
               "docutils/__init__.py": need(*NODES[:-1], "__init__.py").read_bytes()}
    bundle(tmp_path / "bundle.zip", members)
    return tmp_path / "bundle.zip", members


def member_since(archive, rewrite) -> tuple[dict, list[str], list[str]]:
    """A window of the archive's nodes.py read with `since` after `rewrite(members)` is bundled
    again; with that member's lines before and after."""
    path, members = archive
    server = ServerProcess(workspace=path.parent)
    try:
        window = {"path": f"{path}/docutils/nodes.py", "offset": OFFSET, "limit": LIMIT}
        version = server.read(**window)["version"]
        rewritten = rewrite(members)
        bundle(path, rewritten)
        result = server.read(**window, since=version)
    finally:
        server.close()
    return result, *(editor_lines(m["docutils/nodes.py"].decode("utf-8")) for m in (members, rewritten))


def changed_inside(members: dict) -> dict:
    lines = editor_lines(members["docutils/nodes.py"].decode("utf-8"))
    change(lines, INSIDE)
    return {**members, "docutils/nodes.py": ("\n".join(lines) + "\n").encode("utf-8")}


def test_since_after_an_archive_member_changed(archive):
    check_answer(*member_since(archive, changed_inside))


def test_since_after_another_member_changed_is_unchanged(archive):
    more = "docutils/__init__.py"
    check_answer(*member_since(archive, lambda m: {**m, more: m[more] + b"# more\n"}))


def test_a_member_reports_its_own_size(archive):
    path, members = archive
    server = ServerProcess(workspace=path.parent)
    try:
        result = server.read(path=f"{path}/docutils/nodes.py", limit=1)
    finally:
        server.close()
    assert result["size"] == len(members["docutils/nodes.py"])
