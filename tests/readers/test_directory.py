"""Directory listings: sorted, folders first, capped with a count of what was left out."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentread.engine import Engine
from agentread.limits import MAX_DIR_ENTRIES
from agentread.request import parse_request
from agentread.workspace import Workspace
from rpc import text_of


def listing(result) -> list[str]:
    """The entry lines: everything between the header line and any closing note."""
    lines = result.text().split("\n")[1:]
    return [line for line in lines if not line.startswith("[")]


def entry_name(line: str) -> str:
    return line.split("  (")[0].split(" -> ")[0].rstrip("/")


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return Engine(Workspace([str(tmp_path)]))


def read(engine: Engine, **params):
    return engine.read(parse_request(params))


def test_sorted_folders_first(tmp_path: Path, engine: Engine):
    root = tmp_path / "d"
    root.mkdir()
    for name in ("zeta.txt", "Alpha.md", "beta.py", "_under.txt"):
        (root / name).write_text("x" * 10)
    for name in ("src", "Docs", "a_dir"):
        (root / name).mkdir()
    (root / "link").symlink_to("zeta.txt")
    result = read(engine, path="d")
    assert result.kind == "directory" and not result.is_error and not result.truncated
    rows = listing(result)
    folders = [r for r in rows if r.endswith("/")]
    files = [r for r in rows if not r.endswith("/")]
    assert rows[: len(folders)] == folders  # every folder before every file
    assert [entry_name(r) for r in folders] == sorted(["src", "Docs", "a_dir"], key=str.lower)
    names = [entry_name(r) for r in files]
    assert names == sorted(["zeta.txt", "Alpha.md", "beta.py", "_under.txt", "link"], key=str.lower)
    assert "link -> zeta.txt" in rows
    assert "zeta.txt  (10 B)" in rows
    assert "8 entries" in result.text().split("\n")[0]


def test_listing_is_capped_with_a_count_of_the_rest(tmp_path: Path, engine: Engine):
    root = tmp_path / "many"
    root.mkdir()
    for i in range(600):
        (root / f"file{i:04d}.txt").write_bytes(b"")
    for i in range(5):
        (root / f"sub{i}").mkdir()
    result = read(engine, path="many")
    rows = listing(result)
    assert len(rows) == MAX_DIR_ENTRIES
    assert rows[:5] == [f"sub{i}/" for i in range(5)]
    assert [entry_name(r) for r in rows[5:]] == [f"file{i:04d}.txt" for i in range(MAX_DIR_ENTRIES - 5)]
    assert result.truncated
    left = 605 - MAX_DIR_ENTRIES
    assert f"{left} more entries not listed" in result.text()
    assert "605 entries" in result.text().split("\n")[0]
    assert result.next == {"offset": MAX_DIR_ENTRIES + 1}


def test_next_pages_through_the_listing_showing_each_entry_once(tmp_path: Path, engine: Engine):
    root = tmp_path / "many"
    root.mkdir()
    names = {f"file{i:04d}.txt" for i in range(1203)}
    for name in names:
        (root / name).write_bytes(b"")
    seen, params, calls = [], {"path": "many"}, 0
    while True:
        result = read(engine, **params)
        calls += 1
        seen += [entry_name(row) for row in listing(result)]
        assert result.shown["entries"] == [params.get("offset", 1), len(seen)]
        if not result.truncated:
            assert result.next is None
            break
        params = {"path": "many", **result.next}
    assert calls == 3 and seen == sorted(names)
    last = read(engine, path="many", offset=-3)
    assert [entry_name(row) for row in listing(last)] == sorted(names)[-3:]
    past = read(engine, path="many", offset=1204)
    assert past.is_error and past.error.code == "offset_past_end" and "1,203 entries" in past.error.message


def test_empty_directory_says_so(tmp_path: Path, engine: Engine):
    (tmp_path / "nothing").mkdir()
    result = read(engine, path="nothing")
    assert result.kind == "directory" and listing(result) == [] and "empty" in result.text().lower()


def test_workspace_root_and_trailing_slash(tmp_path: Path, engine: Engine):
    (tmp_path / "only.txt").write_text("hi")
    for path in (".", "./", str(tmp_path), str(tmp_path) + "/"):
        result = read(engine, path=path)
        assert result.kind == "directory", path
        assert [entry_name(r) for r in listing(result)] == ["only.txt"]


def test_directory_through_the_server(tmp_path: Path, server):
    (tmp_path / "folder").mkdir()
    (tmp_path / "file.txt").write_text("abc")
    result = server.read(path=".")
    assert result["kind"] == "directory" and not result["isError"]
    rows = text_of(result).split("\n")[1:]
    assert rows == ["folder/", "file.txt  (3 B)"]


def test_listing_does_not_follow_symlinks_out(tmp_path: Path):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "private-name.txt").write_text("x")
    (ws / "escape").symlink_to(outside, target_is_directory=True)
    engine = Engine(Workspace([str(ws)]))
    top = engine.read(parse_request({"path": "."}))
    assert "private-name" not in top.text()
    inner = engine.read(parse_request({"path": "escape"}))
    assert inner.is_error and inner.error.code == "outside_workspace"


def test_shown_names_the_entries_listed(tmp_path: Path, engine: Engine):
    root = tmp_path / "some"
    root.mkdir()
    for i in range(MAX_DIR_ENTRIES + 3):
        (root / f"f{i:04d}").write_bytes(b"")
    assert read(engine, path="some").shown == {"entries": [1, MAX_DIR_ENTRIES]}
    (tmp_path / "empty").mkdir()
    assert read(engine, path="empty").shown is None
