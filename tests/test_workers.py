"""Reads in worker processes (python/agentread/workers.py), through the real server over stdio: a hostile file
found by fuzzing, a crash in native code or a reader past its worker's memory limit costs that worker only; the
read is answered with a clear error, the core is free again, and every other read answers."""

from __future__ import annotations

import os
import shutil
import struct
import time
import zlib
from pathlib import Path

import pytest

from rpc import ServerProcess, descendants, processes, text_of
from test_pdf import build_pdf

HOSTILE = Path(__file__).resolve().parent / "data" / "hostile"

# The read deadline these servers run with: each hostile file takes its reader over a third of a second of CPU,
# and a good file here a few milliseconds.
DEADLINE = 0.2

# A hostile read is answered within this long of being sent: its deadline, and the start of the worker
# process on the server's first read of such a file (the process it is forked from imports the readers).
ANSWERED_WITHIN = 10.0

# Once a read is answered `timeout` or cancelled, the server and its workers use no more CPU than this from a
# quarter of a second to a second after: the core is free.
IDLE_CPU_SECONDS = 0.15


def worker_pids(server: ServerProcess) -> set[int]:
    """The server's worker processes: its grandchildren (its children are the process they are forked from and
    multiprocessing's resource tracker)."""
    table = processes()
    return {p for p in descendants(server.proc.pid, table) if table[p][0] != server.proc.pid}


def one_gone(pids: set[int], server: ServerProcess) -> bool:
    """Whether one of `pids` is no longer a live worker of the server within a quarter of a second (a killed
    process ends as soon as the kernel gets to it)."""
    deadline = time.monotonic() + 0.25
    while not pids - worker_pids(server):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def cpu_after(server: ServerProcess, answered: float) -> float:
    """The CPU the server and all its processes use from a quarter of a second to a second after `answered` (a
    monotonic time): a read still running anywhere shows."""
    time.sleep(max(0.0, answered + 0.25 - time.monotonic()))
    before = processes()
    time.sleep(0.75)
    after = processes()
    family = descendants(server.proc.pid, after) | {server.proc.pid}
    return sum(after[p][1] - before.get(p, (0, after[p][1]))[1] for p in family)


def png(width: int, height: int) -> bytes:
    """A plain grey PNG."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def worker_of(folder: Path, name: str) -> int:
    from agentread.workers import DEFAULT_WORKERS, route

    return route(str((folder / name).resolve()), DEFAULT_WORKERS)


def name_on(folder: Path, stem: str, suffix: str, worker: int, same: bool = True) -> str:
    """A file name `stem-N.suffix` in `folder` that the pool routes to `worker` (or, not `same`, to another)."""
    return next(f"{stem}-{n}{suffix}" for n in range(1000)
                if (worker_of(folder, f"{stem}-{n}{suffix}") == worker) == same)


@pytest.fixture
def short(tmp_path: Path):
    """A server whose reads have DEADLINE seconds, on a workspace holding the hostile files and good ones."""
    for hostile in HOSTILE.glob("*.p*"):
        shutil.copy(hostile, tmp_path / hostile.name)
    (tmp_path / "good.pdf").write_bytes(build_pdf(["a good page"]))
    (tmp_path / "a.txt").write_text("line 1\nline 2\n")
    proc = ServerProcess(workspace=tmp_path, env={"AGENTREAD_READ_DEADLINE": str(DEADLINE)})
    yield proc
    proc.close()


@pytest.mark.parametrize("name", ["pdfium-slow-page.pdf", "pptx-long-table.pptx"])
def test_a_hostile_file_is_answered_timeout_and_its_worker_is_stopped(short, tmp_path, name):
    """PDFium's text layout of the PDF's page is C code no checkpoint reaches; the PPTX reader has none either.
    The read is answered at its deadline, the worker reading it is killed (the core is free at once), and a
    fresh one reads next."""
    warm = name_on(tmp_path, "warm", ".pdf", worker_of(tmp_path, name))
    (tmp_path / warm).write_bytes(build_pdf(["warm"]))
    short.read(path=warm, timeout=ANSWERED_WITHIN)  # the workers are up
    before = worker_pids(short)
    sent = time.monotonic()
    result = short.read(path=name, timeout=ANSWERED_WITHIN)
    answered = time.monotonic()
    assert result["error"]["code"] == "timeout" and "smaller part" in text_of(result)
    assert answered - sent < DEADLINE + 1.0
    assert before and one_gone(before, short), "the worker that read it was killed"
    assert cpu_after(short, answered) < IDLE_CPU_SECONDS
    assert "a good page" in text_of(short.read(path="good.pdf"))
    assert short.read(path="a.txt")["endLine"] == 2


def test_reads_waiting_for_a_killed_worker_run_on_the_fresh_one(short, tmp_path):
    """Good files routed to the worker a hostile read holds wait their turn; once it is killed at the deadline,
    they are read by the fresh worker, each answered with its own content."""
    names = []
    for n in range(3):
        name = name_on(tmp_path, f"queued{n}", ".pdf", worker_of(tmp_path, "pdfium-slow-page.pdf"))
        (tmp_path / name).write_bytes(build_pdf([f"queued page {n}"]))
        names.append(name)
    hostile = short.send("agentread/read", {"path": "pdfium-slow-page.pdf"})
    waiting = [short.send("agentread/read", {"path": name}) for name in names]
    assert short.wait(hostile, timeout=ANSWERED_WITHIN)["result"]["error"]["code"] == "timeout"
    for n, msg_id in enumerate(waiting):
        assert f"queued page {n}" in text_of(short.wait(msg_id, timeout=ANSWERED_WITHIN)["result"])


def test_cancelling_a_read_in_a_worker_kills_it_and_frees_the_core(tmp_path):
    shutil.copy(HOSTILE / "pdfium-slow-page.pdf", tmp_path / "slow.pdf")
    (tmp_path / "good.pdf").write_bytes(build_pdf(["after the cancel"]))
    server = ServerProcess(workspace=tmp_path)  # the default deadline: only the cancel stops the read
    try:
        server.read(path="good.pdf", timeout=ANSWERED_WITHIN)  # the readers are imported
        msg_id = server.send("agentread/read", {"path": "slow.pdf"})
        time.sleep(0.2)  # well into the page's second of PDFium
        server.notify("$/cancelRequest", {"id": msg_id})
        answer = server.wait(msg_id, timeout=ANSWERED_WITHIN)
        answered = time.monotonic()
        assert answer.get("error", {}).get("code") == -32800, answer
        assert cpu_after(server, answered) < IDLE_CPU_SECONDS
        assert "after the cancel" in text_of(server.read(path="good.pdf"))
    finally:
        server.close()


def test_a_reader_that_crashes_is_answered_internal_and_nothing_else_is_lost(tmp_path):
    """A read of `crash.png` makes its worker read address 0, as a bug in a native decoder would (enabled by a
    test-only variable). That read is answered `internal`; a slow read in flight on the other worker, and the
    reads after it, answer."""
    from agentread.workers import CRASH_FOR_TESTS

    (tmp_path / "crash.png").write_bytes(png(4, 4))
    slow = name_on(tmp_path, "slow", ".pdf", worker_of(tmp_path, "crash.png"), same=False)
    shutil.copy(HOSTILE / "pdfium-slow-page.pdf", tmp_path / slow)
    (tmp_path / "good.pdf").write_bytes(build_pdf(["still reading"]))
    server = ServerProcess(workspace=tmp_path, env={CRASH_FOR_TESTS: "crash.png"})
    try:
        in_flight = server.send("agentread/read", {"path": slow})
        crashed = server.read(path="crash.png", timeout=ANSWERED_WITHIN)
        assert crashed["error"]["code"] == "internal" and "SIGSEGV" in crashed["error"]["message"]
        assert server.wait(in_flight, timeout=ANSWERED_WITHIN)["result"]["kind"] == "pdf"
        assert "still reading" in text_of(server.read(path="good.pdf"))
        assert server.read(path="crash.png", timeout=ANSWERED_WITHIN)["error"]["code"] == "internal"
        assert server.proc.poll() is None
    finally:
        server.close()


def test_a_worker_past_its_memory_limit_fails_that_read_only(tmp_path):
    """A 9000 x 9000 TIFF decodes to 243 MB: past a 300 MB worker (the worker itself takes some), read whole
    under the default limit."""
    from PIL import Image

    Image.new("RGB", (9000, 9000), (10, 200, 30)).save(tmp_path / "big.tif", compression="tiff_deflate")
    (tmp_path / "good.pdf").write_bytes(build_pdf(["read after"]))
    small = ServerProcess(workspace=tmp_path, env={"AGENTREAD_WORKER_MEMORY_MB": "300"})
    try:
        refused = small.read(path="big.tif", timeout=ANSWERED_WITHIN)
        assert refused["isError"] and refused["error"]["code"] in ("too_complex", "internal")
        assert "read after" in text_of(small.read(path="good.pdf"))
        assert small.proc.poll() is None
    finally:
        small.close()
    default = ServerProcess(workspace=tmp_path)
    try:
        assert not default.read(path="big.tif", timeout=ANSWERED_WITHIN)["isError"]
    finally:
        default.close()


def test_without_workers_every_read_is_made_in_the_server(tmp_path):
    (tmp_path / "good.pdf").write_bytes(build_pdf(["in the server"]))
    server = ServerProcess(workspace=tmp_path, env={"AGENTREAD_WORKERS": "0"})
    try:
        assert "in the server" in text_of(server.read(path="good.pdf"))
        assert not descendants(server.proc.pid, processes())
    finally:
        server.close()


def test_limits_come_from_the_environment_and_bad_values_keep_the_defaults():
    from agentread.workers import Limits

    assert Limits.from_environment({}) == Limits()
    assert Limits.from_environment({"AGENTREAD_WORKERS": "3", "AGENTREAD_WORKER_MEMORY_MB": "512",
                                    "AGENTREAD_WORKER_CPU_SECONDS": "9"}) == Limits(3, 512, 9)
    assert Limits.from_environment({"AGENTREAD_WORKERS": "0"}).workers == 0
    assert Limits.from_environment({"AGENTREAD_WORKERS": "-1", "AGENTREAD_WORKER_MEMORY_MB": "0",
                                    "AGENTREAD_WORKER_CPU_SECONDS": "lots"}) == Limits()
