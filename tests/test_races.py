"""A folder of the workspace swapped for a link to a folder outside while it is read: the real
server, real requests, and a real process flipping the folder the whole time. No reply may hold
what lies outside (its text or its names) or fail unexpectedly, and the server still answers
afterwards."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from agentread import linkfree
from agentread.engine import Engine, answer, run
from agentread.request import parse_request
from agentread.workspace import Workspace
from rpc import ANSWER_TIMEOUT, ServerProcess, text_of

# A server whose paths are opened by the walk of one folder at a time, as on a system without
# openat2 (linkfree.py), injected into it and its workers.
WITHOUT_OPENAT2 = "import agentread.linkfree as linkfree\nlinkfree._syscall = None\n"

SECRET = "the-outside-secret-77"
OUTSIDE_NAME = "only-outside-name.md"  # a file only the outside folder holds: a listing must not name it

# Requests of each kind sent while the folder flips: enough that a check and an open made in
# separate steps are caught between them many times over (such code let some through in a few
# thousand).
REQUESTS_EACH = 2_000
# Rounds (one request of each kind) in flight at once, so that several reads are planned on the
# server's threads together.
ROUNDS_IN_FLIGHT = 2

# Flips `raced` (argv[1]) between the real folder parked at argv[2] and the link parked at
# argv[3], by renames, until the file argv[4] appears; should the test be gone, it stops by itself
# after FLIP_STOP_SECONDS, far past any run of the test.
FLIP_STOP_SECONDS = 900
FLIPPER = f"""
import os, sys, time
raced, folder, link, stop = sys.argv[1:5]
end = time.monotonic() + {FLIP_STOP_SECONDS}
for n in range(1 << 62):
    if n % 256 == 0 and (os.path.exists(stop) or time.monotonic() > end):
        break
    os.rename(folder, raced)
    os.rename(raced, folder)
    os.rename(link, raced)
    os.rename(raced, link)
"""


@pytest.fixture
def raced(tmp_path: Path):
    """ws/raced, flipping between a folder of the workspace and a link to tmp/outside until the
    test ends; yields the workspace."""
    with flipping(tmp_path) as ws:
        yield ws


@contextlib.contextmanager
def flipping(tmp_path: Path):
    """ws/raced under `tmp_path`, flipping between a folder of the workspace and a link to
    tmp_path/outside until the block ends; gives the workspace."""
    ws, outside, park = tmp_path / "ws", tmp_path / "outside", tmp_path / "park"
    for folder in (ws, outside, park):
        folder.mkdir()
    (outside / "secret.md").write_text(f"# {SECRET}\n\nThe {SECRET} line.\n")
    (outside / OUTSIDE_NAME).write_text(f"{SECRET}\n")
    inside = park / "folder"
    inside.mkdir()
    (inside / "secret.md").write_text("# Inside\n\nThe inside line.\n")
    (park / "link").symlink_to(outside, target_is_directory=True)
    stop = tmp_path / "stop"
    flipper = subprocess.Popen([sys.executable, "-c", FLIPPER, str(ws / "raced"), str(inside), str(park / "link"),
                                str(stop)])
    try:
        yield ws.resolve()
    finally:
        # A flipper that stopped early would leave a steady folder, and nothing to race.
        assert flipper.poll() is None, "the flipper stopped before the requests ended"
        stop.touch()
        try:
            flipper.wait(timeout=ANSWER_TIMEOUT)
        except subprocess.TimeoutExpired:
            flipper.kill()
            flipper.wait()
        assert flipper.returncode == 0


# What is asked while the folder flips: each kind of request that opens or lists a path.
REQUESTS = {
    "read": ("agentread/read", {"path": "raced/secret.md"}),
    "find": ("agentread/read", {"path": "raced/secret.md", "find": "line"}),
    "outline": ("agentread/read", {"path": "raced/secret.md", "outline": True}),
    "listing": ("agentread/read", {"path": "raced"}),
    "glob": ("agentread/readMany", {"paths": ["raced/*.md"]}),
}


@pytest.mark.parametrize("inject", [None, WITHOUT_OPENAT2], ids=["openat2", "walk"])
def test_a_folder_swapped_for_a_link_outside_lets_nothing_through(raced: Path, inject: str | None):
    server = ServerProcess(raced, inject=inject)
    try:
        leaks: dict[str, list[str]] = {kind: [] for kind in REQUESTS}
        for _ in range(REQUESTS_EACH // ROUNDS_IN_FLIGHT):
            sent = [(kind, server.send(*request)) for _ in range(ROUNDS_IN_FLIGHT)
                    for kind, request in REQUESTS.items()]
            for kind, msg_id in sent:
                answer = server.wait(msg_id)
                assert "result" in answer, answer
                text = text_of(answer["result"])
                if SECRET in text or OUTSIDE_NAME in text:
                    leaks[kind].append(text)
                # A path changed as it is looked at: an answer (not found, changed), not a failure.
                assert (answer["result"].get("error") or {}).get("code") != "internal", (kind, text)
        held = {kind: texts for kind, texts in leaks.items() if texts}
        assert not held, (f"replies that held what lies outside, of {REQUESTS_EACH} of each kind: "
                          + ", ".join(f"{kind} {len(texts)}" for kind, texts in held.items())
                          + "; e.g.:\n" + next(iter(held.values()))[0])
        assert "result" in server.request("agentread/read", {"path": "."})  # still answering
    finally:
        server.close()


# --- one swap, at a known moment: between the plan (the check) and the read (the open), as when a
# read is planned on the server and run in a worker process


@pytest.fixture
def swapped(tmp_path: Path):
    """ws/sub (a folder holding secret.md and bundle.zip), and a function that swaps it for a link
    to tmp/outside (holding the same names, and OUTSIDE_NAME) in its place; yields (workspace,
    swap)."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "sub").mkdir(parents=True)
    outside.mkdir()
    (ws / "sub" / "secret.md").write_text("# Inside\n")
    (outside / "secret.md").write_text(f"# {SECRET}\n")
    (outside / OUTSIDE_NAME).write_text(f"{SECRET}\n")
    for folder, text in ((ws / "sub", "# Inside\n"), (outside, f"# {SECRET}\n")):
        with zipfile.ZipFile(folder / "bundle.zip", "w") as bundle:
            bundle.writestr("docs/x.md", text)

    def swap() -> None:
        os.rename(ws / "sub", tmp_path / "was-sub")
        (ws / "sub").symlink_to(outside, target_is_directory=True)

    return ws.resolve(), swap


@pytest.mark.parametrize("params", [{"path": "sub"}, {"path": "sub/secret.md"}, {"path": "sub/bundle.zip/docs/x.md"}],
                         ids=["listing", "read", "member"])
@pytest.mark.parametrize("openat2", [True, False], ids=["openat2", "walk"])
def test_a_folder_swapped_after_the_plan_is_not_read_through(swapped, params: dict, openat2: bool, monkeypatch):
    ws, swap = swapped
    if not openat2:
        monkeypatch.setattr(linkfree, "_syscall", None)
    engine = Engine(Workspace([str(ws)]))
    request = parse_request(params)
    plan = engine.plan(request)
    swap()
    result = answer(request, lambda: run(plan))
    assert SECRET not in result.text() and OUTSIDE_NAME not in result.text(), result.text()
    assert result.is_error and result.error.code == "file_changed", result.text()
    assert "Call again" in result.text()
    again = engine.read(request)  # called again: the link leads outside, and is refused for that
    assert again.is_error and again.error.code == "outside_workspace", again.text()
