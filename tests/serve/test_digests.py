"""A file's digest is kept by what the file system says of it (versions.DIGESTS): a file read again
unchanged is not hashed again, a touch costs one hash and keeps the version, and a change the status
shows (its change time, when the size and mtime were kept) is read as a change, in the server and in
its workers alike."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agentread import versions
from agentread.engine import Engine
from agentread.request import parse_request
from agentread.versions import RACY_SECONDS, Digests
from agentread.workspace import Workspace
from builders import build_pdf
from rpc import ServerProcess, text_of

TEXT = "".join(f"line {n}\n" for n in range(1, 41))
SAME_SIZE = TEXT.replace("line 20\n", "LINE 20\n")


def settle(*paths: Path) -> None:
    """Waits until no file's status changed within RACY_SECONDS, so that the next read keeps its
    digest (a file changed more recently may be written again unseen: it is hashed at each read)."""
    newest = max(max(st.st_mtime_ns, st.st_ctime_ns) for st in map(os.stat, paths))
    wait = RACY_SECONDS - (time.time_ns() - newest) / 1e9
    if wait > 0:
        time.sleep(wait + 0.05)


def rewrite_keeping_size_and_mtime(path: Path, text: str) -> None:
    """`text` written over the file in place, of its size, its mtime set back: its change time alone
    says it changed."""
    st = os.stat(path)
    assert len(text.encode()) == st.st_size
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_mtime_ns == st.st_mtime_ns


@pytest.fixture
def hashes(monkeypatch) -> list[int]:
    """The sizes of the files hashed from now on, in this process, by a fresh DIGESTS."""
    counted: list[int] = []
    real = versions.hash_digits
    monkeypatch.setattr(versions, "DIGESTS", Digests())
    monkeypatch.setattr(versions, "hash_digits",
                        lambda f, size, identity: counted.append(size) or real(f, size, identity))
    return counted


def test_a_file_is_hashed_once_per_change_of_its_status_and_a_touch_keeps_its_version(tmp_path: Path,
                                                                                       hashes: list[int]):
    engine = Engine(Workspace([str(tmp_path)]))
    path = tmp_path / "a.txt"
    path.write_text(TEXT)
    settle(path)

    def version() -> str:
        return engine.read(parse_request({"path": "a.txt", "offset": 5, "limit": 3})).version

    first = version()
    assert [version() for _ in range(3)] == [first] * 3 and len(hashes) == 1
    os.utime(path, (1_000_000, 1_000_000))  # a touch: a new mtime and change time, the same bytes
    settle(path)
    assert [version() for _ in range(3)] == [first] * 3 and len(hashes) == 2
    rewrite_keeping_size_and_mtime(path, SAME_SIZE)
    settle(path)
    changed = version()
    assert changed != first and len(hashes) == 3
    assert version() == changed and len(hashes) == 3


def test_a_file_changed_within_the_racy_window_is_hashed_at_every_read(tmp_path: Path, hashes: list[int]):
    """A status no older than RACY_SECONDS (here, an mtime an hour ahead) keeps no digest: a write
    within the same tick of the file system's clock would not change it."""
    engine = Engine(Workspace([str(tmp_path)]))
    path = tmp_path / "a.txt"
    path.write_text(TEXT)
    ahead = time.time() + 3600
    os.utime(path, (ahead, ahead))
    versions_read = {engine.read(parse_request({"path": "a.txt"})).version for _ in range(3)}
    assert len(versions_read) == 1 and len(hashes) == 3


def test_the_digests_kept_are_bounded_the_least_recently_read_dropped(tmp_path: Path, hashes: list[int],
                                                                      monkeypatch):
    monkeypatch.setattr(versions, "DIGESTS_KEPT", 3)
    engine = Engine(Workspace([str(tmp_path)]))
    names = [f"f{n}.txt" for n in range(5)]
    for name in names:
        (tmp_path / name).write_text(name)
    settle(*(tmp_path / name for name in names))
    for name in names:
        engine.read(parse_request({"path": name}))
    assert len(versions.DIGESTS) == 3 and len(hashes) == 5
    engine.read(parse_request({"path": names[-1]}))  # kept
    assert len(hashes) == 5
    engine.read(parse_request({"path": names[0]}))  # dropped: hashed again
    assert len(hashes) == 6


def test_a_large_files_sampled_version_is_kept_too_and_its_change_time_still_tells(tmp_path: Path,
                                                                                    hashes: list[int]):
    engine = Engine(Workspace([str(tmp_path)]))
    big = tmp_path / "big.log"
    with open(big, "wb") as f:  # sparse: larger than is hashed whole
        f.write(b"a log line\n" * 10_000)
        f.truncate(2 * versions.VERSION_HASH_BYTES)
    settle(big)
    first = engine.read(parse_request({"path": "big.log", "limit": 1})).version
    assert first and engine.read(parse_request({"path": "big.log", "limit": 1})).version == first and len(hashes) == 1
    st = os.stat(big)
    with open(big, "r+b") as f:  # between the samples, the same size and mtime
        f.seek(versions.VERSION_HASH_BYTES)
        f.write(b"edited")
    os.utime(big, ns=(st.st_atime_ns, st.st_mtime_ns))
    settle(big)
    assert engine.read(parse_request({"path": "big.log", "limit": 1})).version != first and len(hashes) == 2


@pytest.mark.parametrize("name", ["a.txt", "doc.pdf"])  # read in the server, and in a worker process
def test_over_json_rpc_a_touch_keeps_the_version_and_a_change_the_status_shows_is_read(tmp_path: Path, name: str):
    path = tmp_path / name
    if name.endswith(".pdf"):
        before, after = build_pdf(["alpha words here"]), build_pdf(["bravo words here"])
        assert len(before) == len(after)
        path.write_bytes(before)
        shown_after = "bravo words here"
    else:
        path.write_text(TEXT)
        shown_after = "LINE 20"
    settle(path)
    server = ServerProcess(workspace=tmp_path)
    try:
        first = server.read(path=name)
        assert server.read(path=name)["version"] == first["version"]
        os.utime(path, (1_000_000, 1_000_000))
        settle(path)
        touched = server.read(path=name, since=first["version"])
        assert touched.get("unchanged") and touched["version"] == first["version"], text_of(touched)
        if name.endswith(".pdf"):
            st = os.stat(path)
            path.write_bytes(after)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        else:
            rewrite_keeping_size_and_mtime(path, SAME_SIZE)
        settle(path)
        changed = server.read(path=name, since=first["version"])
        assert changed.get("changed") and changed["version"] != first["version"], text_of(changed)
        assert shown_after in text_of(changed)
        assert server.read(path=name, since=changed["version"])["unchanged"]
    finally:
        server.close()
