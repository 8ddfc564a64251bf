"""read_many on real files: one reply within one read's budget, every file answered in its place,
and `next` reaching every line exactly once."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest

import agentread.many.glob as many_glob
from agentread import many
from agentread.engine import Engine
from agentread.limits import MAX_LINES, MAX_OUTPUT_BYTES, MAX_REPLY_IMAGES
from agentread.many import parse_many_request, read_many
from agentread.request import InvalidParams
from agentread.result import ImagePart
from agentread.workspace import Workspace
from builders import build_pdf, code, notebook, png_b64, result, stream

NUMBERED = re.compile(r"^ *(\d+)\t(.*)$")

# How long a glob's walk may take before it counts as endless: only a walk that never ends
# takes this long.
WALK_STUCK_AFTER = 60


def call(engine: Engine, paths: list) -> many.ManyResult:
    return read_many(engine, parse_many_request({"paths": paths}))


def within_budget(reply: many.ManyResult) -> None:
    text = reply.text()
    assert len(text.encode()) <= MAX_OUTPUT_BYTES and text.count("\n") + 1 <= MAX_LINES
    assert sum(isinstance(p, ImagePart) for p in reply.content) <= MAX_REPLY_IMAGES


def numbered(text: str) -> list[tuple[int, str]]:
    return [(int(m[1]), m[2]) for m in map(NUMBERED.match, text.splitlines()) if m]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def make_mixed(ws: Path) -> tuple[list, dict[str, list[str]]]:
    """50 entries of every kind; the text files' lines by name."""
    texts: dict[str, list[str]] = {}
    paths: list = []
    for i in range(30):
        size = [3, 40, 400, 3000, 9000][i % 5]  # some whole, some far over any share
        lines = [f"file {i} line {n} " + "x" * (n % 50) for n in range(1, size + 1)]
        (ws / f"t{i:02}.txt").write_text("\n".join(lines) + "\n")
        texts[f"t{i:02}.txt"] = lines
        paths.append(f"t{i:02}.txt")
    for i in range(3):
        (ws / f"d{i}.pdf").write_bytes(build_pdf([f"pdf {i} page {p}" for p in range(1, 31)]))
        (ws / f"n{i}.ipynb").write_bytes(notebook(
            code("x = 1", stream("out\n" * 50)), code("plot()", result({"image/png": png_b64()}))))
        (ws / f"i{i}.png").write_bytes(__import__("base64").b64decode(png_b64(300, 200)))
        (ws / f"b{i}.bin").write_bytes(bytes(range(256)) * 40)
        (ws.parent / f"o{i}.txt").write_text("outside\n")
        paths += [f"d{i}.pdf", f"n{i}.ipynb", f"i{i}.png", f"b{i}.bin", f"m{i}.txt", str(ws.parent / f"o{i}.txt")]
    paths += ["t00.txt", "t01.txt"]  # named twice: read once
    return paths, texts


def test_fifty_mixed_files_in_one_reply_and_next_reaches_every_line_once(ws: Path):
    paths, texts = make_mixed(ws)
    engine = Engine(Workspace([str(ws)]))
    reply = call(engine, paths)
    within_budget(reply)
    assert len(reply.files) == 48  # two duplicates dropped
    text = reply.text()
    for f in reply.files:
        assert f"==> {f.request.path} <==" in text  # every file answered in its place
    states = {f.request.path: f.state for f in reply.files}
    for i in range(3):
        assert states[f"b{i}.bin"] == states[f"m{i}.txt"] == states[str(ws.parent / f"o{i}.txt")] == "error"
    assert states["t00.txt"] == "whole" and states["t03.txt"] == "cut"
    assert reply.next is not None and text.splitlines()[-1].startswith("[To continue, call read_many again")

    seen: dict[str, list[int]] = {name: [] for name in texts}
    pdf_pages: set[str] = set()
    rounds = 0
    while True:
        for f in reply.files:
            if f.result is None or f.result.is_error:
                continue
            if f.request.path in texts:
                for number, line in numbered(f.result.text()):
                    assert texts[f.request.path][number - 1] == line
                    seen[f.request.path].append(number)
            pdf_pages.update(re.findall(r"pdf \d page \d+", f.result.text()))
        if reply.next is None:
            break
        rounds += 1
        assert rounds < 200
        reply = read_many(engine, parse_many_request(reply.next))
        within_budget(reply)
    for name, lines in texts.items():
        assert seen[name] == list(range(1, len(lines) + 1)), name  # each line once, in order
    assert len(pdf_pages) == 90


def test_small_files_whole_and_the_large_one_takes_what_they_leave(ws: Path):
    (ws / "big.log").write_text("".join(f"entry {n}\n" for n in range(1, 100_001)))
    for name in "abc":
        (ws / f"{name}.cfg").write_text(f"{name} = 1\n" * 5)
    reply = call(Engine(Workspace([str(ws)])), ["a.cfg", "big.log", "b.cfg", "c.cfg"])
    within_budget(reply)
    states = {f.request.path: f.state for f in reply.files}
    assert states == {"a.cfg": "whole", "big.log": "cut", "b.cfg": "whole", "c.cfg": "whole"}
    big = next(f for f in reply.files if f.request.path == "big.log").result
    assert big.end_line > MAX_LINES * 0.9  # nearly all the lines the small files left
    assert reply.next == {"paths": [{"path": "big.log", "offset": big.end_line + 1}]}
    assert reply.text().endswith('with {"paths": [{"path": "big.log", "offset": %d}]}]' % (big.end_line + 1))


def test_a_window_is_kept_and_its_limit_carried_into_next(ws: Path):
    (ws / "a.txt").write_text("".join(f"a{n}\n" for n in range(1, 5001)))
    (ws / "b.txt").write_text("".join(f"b{n}\n" for n in range(1, 5001)))
    reply = call(Engine(Workspace([str(ws)])), [{"path": "a.txt", "offset": 100, "limit": 1500}, "b.txt"])
    a = reply.files[0].result
    assert a.start_line == 100 and a.end_line < 1599
    assert reply.next["paths"][0] == {"path": "a.txt", "offset": a.end_line + 1, "limit": 1599 - a.end_line}


def test_globs_sorted_inside_the_root_hidden_left_out_and_capped(ws: Path, tmp_path: Path, monkeypatch):
    (ws / "src" / "pkg").mkdir(parents=True)
    for name in ("src/b.py", "src/a.py", "src/pkg/c.py", "src/.hidden.py", "src/notes.md"):
        (ws / name).write_text("pass\n")
    (tmp_path / "elsewhere.py").write_text("pass\n")
    os.symlink(tmp_path / "elsewhere.py", ws / "src" / "link.py")
    engine = Engine(Workspace([str(ws)]))
    reply = call(engine, ["src/**/*.py", "src/*.md", "nothing/*.rs"])
    assert [f.request.path for f in reply.files] == ["src/a.py", "src/b.py", "src/pkg/c.py", "src/notes.md"]
    text = reply.text()
    assert "`src/**/*.py`: 1 of the paths it reaches lead outside the workspace" in text
    assert "`nothing/*.rs` matched no file" in text
    assert not reply.truncated and reply.next is None  # what the listing left out is said, and is no cut
    monkeypatch.setattr(many, "MAX_MANY_FILES", 2)
    reply = call(engine, ["src/**/*.py", "src/*.md"])
    assert [f.request.path for f in reply.files] == ["src/a.py", "src/b.py"]
    # The rest is resumed past the last file read, not listed: any number of files is reached.
    assert reply.next == {"paths": [{"path": "src/**/*.py", "after": "src/b.py"}, "src/*.md"]}
    assert "2 more files listed are not in this reply, from src/pkg/c.py on" in reply.text()
    (ws / "src" / "z.py").write_text("pass\n")
    reply = call(engine, [{"path": "src/a.py", "limit": 1}, "src/**/*.py"])
    assert reply.next == {"paths": [{"path": "src/**/*.py", "after": "src/a.py"}]}  # a.py whole, then on
    reply = read_many(engine, parse_many_request(reply.next))
    assert [f.request.path for f in reply.files] == ["src/b.py", "src/pkg/c.py"]
    reply = read_many(engine, parse_many_request(reply.next))
    assert [f.request.path for f in reply.files] == ["src/z.py"] and reply.next is None


def test_images_past_the_reply_budget_are_named_or_left_for_next(ws: Path):
    image = __import__("base64").b64decode(png_b64(40, 30))
    for i in range(MAX_REPLY_IMAGES + 2):
        (ws / f"p{i:02}.png").write_bytes(image)
    reply = call(Engine(Workspace([str(ws)])), ["*.png"])
    assert sum(isinstance(p, ImagePart) for p in reply.content) == MAX_REPLY_IMAGES
    assert reply.next == {"paths": [{"path": "*.png", "after": f"p{MAX_REPLY_IMAGES - 1:02}.png"}]}
    assert [f.request.path for f in reply.files][-1] == f"p{MAX_REPLY_IMAGES - 1:02}.png"


@pytest.mark.parametrize("params", [{}, {"paths": []}, {"paths": "a.txt"}, {"paths": [1]},
                                    {"paths": [{"path": "a", "consent": True}]}, {"paths": ["a"], "x": 1},
                                    {"paths": ["a"] * 101}, {"paths": [{"path": "*.py", "after": 3}]},
                                    {"paths": [{"path": "*.py", "after": ""}]}])
def test_malformed_requests_are_invalid_params(params):
    with pytest.raises(InvalidParams):
        parse_many_request(params)


def test_json_form_lists_each_file_state(ws: Path):
    (ws / "a.txt").write_text("a\n")
    out = call(Engine(Workspace([str(ws)])), ["a.txt", "gone.txt"]).to_json()
    assert out["kind"] == "many" and out["isError"] is False and "next" not in out
    assert [(f["path"], f["state"]) for f in out["files"]] == [("a.txt", "whole"), ("gone.txt", "error")]
    assert out["files"][1]["error"]["code"] == "not_found"


def test_a_notebook_past_the_image_budget_is_left_for_next_whole(ws: Path):
    image = __import__("base64").b64decode(png_b64(40, 30))
    for i in range(MAX_REPLY_IMAGES):
        (ws / f"p{i:02}.png").write_bytes(image)
    (ws / "z.ipynb").write_bytes(notebook(code("plot()", result({"image/png": png_b64()}))))
    engine = Engine(Workspace([str(ws)]))
    reply = call(engine, ["*.png", "z.ipynb"])
    assert reply.files[-1].request.path == "p09.png" and "plot()" not in reply.text()
    assert reply.truncated and reply.next == {"paths": ["z.ipynb"]}
    reply = read_many(engine, parse_many_request(reply.next))
    assert reply.files[0].state == "whole" and "plot()" in reply.text() and reply.next is None
    assert sum(isinstance(p, ImagePart) for p in reply.content) == 1


def test_a_glob_over_looping_links_answers_and_says_what_it_passed_by(ws: Path, monkeypatch):
    (ws / "x.txt").write_text("x\n")
    (ws / "deep" / "er").mkdir(parents=True)
    (ws / "deep" / "er" / "y.txt").write_text("y\n")
    os.symlink(".", ws / "a")
    os.symlink(".", ws / "b")
    engine = Engine(Workspace([str(ws)]))
    replies: list = []
    # A thread joined with a timeout: a walk that follows the links never ends, and must not
    # hang the suite.
    worker = threading.Thread(target=lambda: replies.append(call(engine, ["**/*.nomatch", "**/*.txt"])),
                              daemon=True)
    worker.start()
    worker.join(WALK_STUCK_AFTER)
    assert not worker.is_alive(), "the glob walk did not end"
    reply = replies[0]
    assert [f.request.path for f in reply.files] == ["deep/er/y.txt", "x.txt"]
    assert "`**/*.nomatch`: `**` passed by 2 links to folders without entering them" in reply.text()
    assert "`**/*.nomatch` matched no file" in reply.text()
    assert [f.request.path for f in call(engine, ["a/*.txt"]).files] == ["a/x.txt"]  # named, a link is followed

    monkeypatch.setattr(many_glob, "MAX_GLOB_DIRS", 2)
    reply = call(engine, ["**/*.txt"])
    assert "`**/*.txt`: the walk stopped after 2 folders (it opens at most 2" in reply.text()
    assert [f.request.path for f in reply.files] == ["x.txt"]


def test_a_window_a_reader_refuses_is_that_files_error_only(ws: Path):
    (ws / "a.pdf").write_bytes(build_pdf(["page one", "page two"]))
    (ws / "b.txt").write_text("b\n")
    reply = call(Engine(Workspace([str(ws)])), [{"path": "a.pdf", "pages": "Budget"}, "b.txt"])
    assert [f.state for f in reply.files] == ["error", "whole"]
    error = reply.files[0].result.error
    assert error.code == "invalid_params" and "'pages' must look like" in error.message
    assert "Budget" in reply.text() and "     1\tb" in reply.text()


def follow(engine: Engine, paths: list) -> list[many.ManyResult]:
    """Every reply from `paths` on, following `next` until it is absent; each within budget,
    truncated only with a `next`, and moving on."""
    replies = [call(engine, paths)]
    while replies[-1].next is not None:
        reply = replies[-1]
        assert reply.truncated and reply.next != {"paths": paths}
        assert len(replies) < 100, "next does not move on"
        paths = reply.next["paths"]
        replies.append(read_many(engine, parse_many_request(reply.next)))
    for reply in replies:
        within_budget(reply)
        assert reply.truncated == (reply.next is not None)
    return replies


def shown_lines(replies: list[many.ManyResult]) -> dict[str, list[int]]:
    seen: dict[str, list[int]] = {}
    for reply in replies:
        for f in reply.files:
            if f.result is not None and not f.result.is_error:
                seen.setdefault(f.request.path, []).extend(n for n, _ in numbered(f.result.text()))
    return seen


def test_a_limit_used_up_is_whole_and_not_continued(ws: Path):
    (ws / "small.txt").write_text("one\ntwo\nthree\n")
    reply = call(Engine(Workspace([str(ws)])), [{"path": "small.txt", "limit": 2}])
    assert reply.files[0].state == "whole" and reply.next is None and not reply.truncated
    assert numbered(reply.text()) == [(1, "one"), (2, "two")]
    assert "[1 files: 1 shown whole, 0 cut" in reply.text()


def test_directories_are_cut_by_entries_and_next_lists_each_once(ws: Path):
    for d in range(5):
        (ws / f"dir{d}").mkdir()
        for n in range(500):
            (ws / f"dir{d}" / f"e{n:03}.txt").write_text("x")
    replies = follow(Engine(Workspace([str(ws)])), [f"dir{d}" for d in range(5)])
    assert any(f.state == "cut" for f in replies[0].files)
    entries: dict[str, list[str]] = {}
    for reply in replies:
        for f in reply.files:
            if f.result is not None:
                entries.setdefault(f.request.path, []).extend(
                    line.split()[0] for line in f.result.text().splitlines() if line.startswith("e"))
    assert entries == {f"dir{d}": [f"e{n:03}.txt" for n in range(500)] for d in range(5)}


def test_long_paths_still_fit_and_move_on(ws: Path):
    folder = ws / ("d" * 200) / ("e" * 173)
    folder.mkdir(parents=True)
    paths = []
    for i in range(60):
        (folder / f"{i:02}.txt").write_text(f"file {i}\n")
        paths.append(str((folder / f"{i:02}.txt").relative_to(ws)))
    assert len(paths[0]) == 381
    replies = follow(Engine(Workspace([str(ws)])), paths)
    assert shown_lines(replies) == {path: [1] for path in paths}


def test_next_reaches_every_file_past_the_first_hundred_images_and_directories(ws: Path):
    lines = {}
    for i in range(120):
        name = f"many/f{i:03}.txt"
        lines[name] = [f"{i} line {n}" for n in range(1, 1 + [2, 30, 700][i % 3])]
        (ws / "many").mkdir(exist_ok=True)
        (ws / name).write_text("\n".join(lines[name]) + "\n")
    for i in range(6):  # two images each: the reply's ten are spent by the sixth
        (ws / f"n{i}.ipynb").write_bytes(notebook(*(code(f"plot({i}, {k})", result({"image/png": png_b64()}))
                                                    for k in range(2))))
    (ws / "listing").mkdir()
    for n in range(700):
        (ws / "listing" / f"e{n:03}").write_text("x")
    replies = follow(Engine(Workspace([str(ws)])), ["n*.ipynb", "listing", "many/*.txt"])
    assert any(f.state == "not_shown" and f.request.path.endswith("ipynb") for f in replies[0].files)
    seen = shown_lines(replies)
    for name, text in lines.items():
        assert seen[name] == list(range(1, len(text) + 1)), name
    texts = "\n".join(r.text() for r in replies)
    for i in range(6):
        for k in range(2):
            assert texts.count(f"plot({i}, {k})") == 1
    assert sum(isinstance(p, ImagePart) for r in replies for p in r.content) == 12
    listed = [line for r in replies for f in r.files if f.request.path == "listing" and f.result is not None
              for line in f.result.text().splitlines() if line.startswith("e")]
    assert [line.split()[0] for line in listed] == [f"e{n:03}" for n in range(700)]


def test_a_glob_walk_stops_at_its_depth(ws: Path, monkeypatch):
    (ws / "deep" / "er").mkdir(parents=True)
    (ws / "deep" / "er" / "y.txt").write_text("y\n")
    (ws / "deep" / "x.txt").write_text("x\n")
    monkeypatch.setattr(many_glob, "MAX_GLOB_DEPTH", 1)
    reply = call(Engine(Workspace([str(ws)])), ["**/*.txt"])
    assert [f.request.path for f in reply.files] == ["deep/x.txt"]
    assert "the walk stopped after 2 folders (it opens at most 10,000, 1 deep)" in reply.text()


def test_a_search_counts_files_without_a_hit_and_gives_its_find_once(ws: Path):
    """The files without a hit show no block; `next` names the glob once, resumed past the last file
    answered, and the call's find beside it, not in each entry."""
    for i in range(150):
        (ws / f"m{i:03}.py").write_text(f"x = {i}\n" + ("needle = 1\n" * 60 if i in (3, 149) else ""))
    engine = Engine(Workspace([str(ws)]))
    request = parse_many_request({"paths": ["*.py"], "find": "needle", "maxBytes": 2000})
    replies = [read_many(engine, request)]
    while replies[-1].next is not None:
        assert len(replies) < 20
        nxt = replies[-1].next
        assert nxt["find"] == "needle" and all(isinstance(e, str) or "find" not in e for e in nxt["paths"])
        replies.append(read_many(engine, parse_many_request({**nxt, "maxBytes": 2000})))
    first = replies[0]
    assert first.next == {"paths": [{"path": "m003.py", "offset": first.files[3].result.next["offset"]},
                                    {"path": "*.py", "after": "m003.py"}], "find": "needle"}
    assert first.files[0].no_hit and "==> m000.py <==" not in first.text()
    assert "[Without a hit: m000.py, m001.py, m002.py.]" in first.text()
    hits = [(f.request.path, h["line"]) for r in replies for f in r.files if f.result is not None
            for h in (f.result.shown or {}).get("hits", [])]
    assert sorted(hits) == [(f"m{i:03}.py", n) for i in (3, 149) for n in range(2, 62)]  # each once
    answered = [f.request.path for r in replies for f in r.files if f.request.offset is None]
    assert answered == [f"m{i:03}.py" for i in range(150)]


def test_a_file_two_entries_name_is_answered_once_across_next(ws: Path, monkeypatch):
    """z.txt is named, then matched by the glob too: read once. When `next` resumes the glob, the
    entry answered is kept, listing nothing, so that the glob still leaves z.txt out."""
    for name in "abcdz":
        (ws / f"{name}.txt").write_text(f"{name}\n")
    monkeypatch.setattr(many, "MAX_MANY_FILES", 2)
    replies = follow(Engine(Workspace([str(ws)])), ["z.txt", "*.txt"])
    assert replies[0].next == {"paths": [{"path": "z.txt", "after": "z.txt"}, {"path": "*.txt", "after": "a.txt"}]}
    answered = [f.request.path for r in replies for f in r.files]
    assert answered == ["z.txt", "a.txt", "b.txt", "c.txt", "d.txt"]
