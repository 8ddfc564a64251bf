"""Reads in worker processes (python/agentread/serve/workers.py), through the real server over
stdio: a read that never ends, a crash in native code or a reader past its worker's memory limit
costs that worker only; the read is answered with a clear error, the core is free again, and every
other read answers. The hostile files fuzzing found are read."""

from __future__ import annotations

import shutil
import struct
import zlib
from pathlib import Path

import pytest

from builders import build_pdf
from rpc import (
    ANSWER_TIMEOUT,
    STOPPED_AFTER,
    STUCK_PDF,
    STUCK_READER,
    ServerProcess,
    body_of,
    descendants,
    processes,
    serving,
    text_of,
    wait_until,
    workers_reading,
)

HOSTILE = Path(__file__).resolve().parents[1] / "data" / "hostile"


def killed(pids: set[int]) -> bool:
    """Whether every one of `pids` has ended (a killed worker no longer uses its core)."""
    return not pids & processes().keys()


def png(width: int, height: int) -> bytes:
    """A plain grey PNG."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def worker_of(folder: Path, name: str) -> int:
    from agentread.serve.workers import DEFAULT_WORKERS, route

    return route(str((folder / name).resolve()), DEFAULT_WORKERS)


def name_on(folder: Path, stem: str, suffix: str, worker: int, same: bool = True) -> str:
    """A file name `stem-N.suffix` in `folder` that the pool routes to `worker` (or, not `same`,
    to another)."""
    return next(f"{stem}-{n}{suffix}" for n in range(1000)
                if (worker_of(folder, f"{stem}-{n}{suffix}") == worker) == same)


@pytest.fixture
def stuck(tmp_path: Path):
    """A server whose reads have STOPPED_AFTER seconds, in which a read of STUCK_PDF never ends in
    its worker (a reader stuck where no checkpoint reaches, injected: rpc.STUCK_READER); on a
    workspace holding it and good files."""
    (tmp_path / STUCK_PDF).write_bytes(build_pdf(["never read"]))
    (tmp_path / "good.pdf").write_bytes(build_pdf(["a good page"]))
    (tmp_path / "a.txt").write_text("line 1\nline 2\n")
    proc = ServerProcess(workspace=tmp_path, env={"AGENTREAD_READ_DEADLINE": str(STOPPED_AFTER)}, inject=STUCK_READER)
    yield proc
    proc.close()


def test_a_read_in_a_worker_past_its_deadline_is_answered_timeout_and_its_worker_is_killed(stuck, tmp_path):
    """A reader in a worker that never reaches a checkpoint (as PDFium's text layout of a hostile
    page, in C) is answered `timeout` at its deadline, the worker reading it is killed (its core is
    free at once), and a fresh one reads next."""
    msg_id = stuck.send("agentread/read", {"path": STUCK_PDF})
    reading = wait_until(lambda: workers_reading(stuck, tmp_path / STUCK_PDF), "the read under way in a worker")
    result = stuck.wait(msg_id, timeout=STOPPED_AFTER + ANSWER_TIMEOUT)["result"]
    assert result["error"]["code"] == "timeout" and "smaller part" in text_of(result)
    wait_until(lambda: killed(reading), "the worker that read it killed")
    assert "a good page" in text_of(stuck.read(path="good.pdf"))
    assert stuck.read(path="a.txt")["endLine"] == 2


@pytest.mark.parametrize("name, kind", [("pdfium-slow-page.pdf", "pdf"), ("pptx-long-table.pptx", "presentation")])
def test_a_hostile_file_found_by_fuzzing_is_read_and_its_worker_reads_on(tmp_path, name, kind):
    """PDFium's text layout of the PDF's page is C code no checkpoint reaches, and the PPTX's table
    ran long before its reader walked tables once: each is read, within the default deadline (an
    answer past it would be `timeout`), and its worker reads the next file routed to it."""
    shutil.copy(HOSTILE / name, tmp_path / name)
    after = name_on(tmp_path, "after", ".pdf", worker_of(tmp_path, name))
    (tmp_path / after).write_bytes(build_pdf(["read after"]))
    server = ServerProcess(workspace=tmp_path)
    try:
        result = server.read(path=name)
        assert not result["isError"] and result["kind"] == kind, text_of(result)[:300]
        assert "read after" in text_of(server.read(path=after))
    finally:
        server.close()


def test_reads_waiting_for_a_killed_worker_run_on_the_fresh_one(stuck, tmp_path):
    """Good files routed to the worker a read that never ends holds wait their turn; once
    it is killed at the deadline, they are read by the fresh worker, each answered with
    its own content."""
    names = []
    for n in range(3):
        name = name_on(tmp_path, f"queued{n}", ".pdf", worker_of(tmp_path, STUCK_PDF))
        (tmp_path / name).write_bytes(build_pdf([f"queued page {n}"]))
        names.append(name)
    stuck_read = stuck.send("agentread/read", {"path": STUCK_PDF})
    wait_until(lambda: workers_reading(stuck, tmp_path / STUCK_PDF), "the read under way in a worker")
    waiting = [stuck.send("agentread/read", {"path": name}) for name in names]
    assert stuck.wait(stuck_read, timeout=STOPPED_AFTER + ANSWER_TIMEOUT)["result"]["error"]["code"] == "timeout"
    for n, msg_id in enumerate(waiting):
        assert f"queued page {n}" in text_of(stuck.wait(msg_id)["result"])


def test_cancelling_a_read_in_a_worker_kills_it_and_frees_the_core(tmp_path):
    (tmp_path / STUCK_PDF).write_bytes(build_pdf(["never read"]))
    (tmp_path / "good.pdf").write_bytes(build_pdf(["after the cancel"]))
    server = ServerProcess(workspace=tmp_path, inject=STUCK_READER)  # the default deadline: only the cancel stops it
    try:
        msg_id = server.send("agentread/read", {"path": STUCK_PDF})
        reading = wait_until(lambda: workers_reading(server, tmp_path / STUCK_PDF), "the read under way in a worker")
        server.notify("$/cancelRequest", {"id": msg_id})
        answer = server.wait(msg_id)
        assert answer.get("error", {}).get("code") == -32800, answer
        wait_until(lambda: killed(reading), "the worker that read it killed")
        assert "after the cancel" in text_of(server.read(path="good.pdf"))
    finally:
        server.close()


def test_a_reader_that_crashes_is_answered_internal_and_nothing_else_is_lost(tmp_path):
    """A read of `crash.png` makes its worker read address 0, as a bug in a native decoder would
    (enabled by a test-only variable). That read is answered `internal`; a slow read in flight on
    the other worker, and the reads after it, answer."""
    from agentread.serve.workers import CRASH_FOR_TESTS

    (tmp_path / "crash.png").write_bytes(png(4, 4))
    slow = name_on(tmp_path, "slow", ".pdf", worker_of(tmp_path, "crash.png"), same=False)
    shutil.copy(HOSTILE / "pdfium-slow-page.pdf", tmp_path / slow)
    (tmp_path / "good.pdf").write_bytes(build_pdf(["still reading"]))
    server = ServerProcess(workspace=tmp_path, env={CRASH_FOR_TESTS: "crash.png"})
    try:
        in_flight = server.send("agentread/read", {"path": slow})
        crashed = server.read(path="crash.png", timeout=ANSWER_TIMEOUT)
        assert crashed["error"]["code"] == "internal" and "SIGSEGV" in crashed["error"]["message"]
        assert server.wait(in_flight, timeout=ANSWER_TIMEOUT)["result"]["kind"] == "pdf"
        assert "still reading" in text_of(server.read(path="good.pdf"))
        assert server.read(path="crash.png", timeout=ANSWER_TIMEOUT)["error"]["code"] == "internal"
        assert server.proc.poll() is None
    finally:
        server.close()


def test_a_worker_past_its_memory_limit_fails_that_read_only(tmp_path):
    """A 9000 x 9000 TIFF decodes to 243 MB: past a 300 MB worker (the worker itself takes some),
    read whole under the default limit."""
    from PIL import Image

    Image.new("RGB", (9000, 9000), (10, 200, 30)).save(tmp_path / "big.tif", compression="tiff_deflate")
    (tmp_path / "good.pdf").write_bytes(build_pdf(["read after"]))
    small = ServerProcess(workspace=tmp_path, env={"AGENTREAD_WORKER_MEMORY_MB": "300"})
    try:
        refused = small.read(path="big.tif", timeout=ANSWER_TIMEOUT)
        assert refused["isError"] and refused["error"]["code"] in ("too_complex", "internal")
        assert "read after" in text_of(small.read(path="good.pdf"))
        assert small.proc.poll() is None
    finally:
        small.close()
    default = ServerProcess(workspace=tmp_path)
    try:
        assert not default.read(path="big.tif", timeout=ANSWER_TIMEOUT)["isError"]
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
    from agentread.serve.workers import Limits

    assert Limits.from_environment({}) == Limits()
    assert Limits.from_environment({"AGENTREAD_WORKERS": "3", "AGENTREAD_WORKER_MEMORY_MB": "512",
                                    "AGENTREAD_WORKER_CPU_SECONDS": "9"}) == Limits(3, 512, 9)
    assert Limits.from_environment({"AGENTREAD_WORKERS": "0"}).workers == 0
    assert Limits.from_environment({"AGENTREAD_WORKERS": "-1", "AGENTREAD_WORKER_MEMORY_MB": "0",
                                    "AGENTREAD_WORKER_CPU_SECONDS": "lots"}) == Limits()


def stuck_names(count: int) -> list[str]:
    """Names the injected reader never ends reading (they end in STUCK_PDF)."""
    return [f"{n}-{STUCK_PDF}" for n in range(count)]


def big_stuck_pdfs(folder: Path, count: int) -> list[str]:
    """`count` PDFs the injected reader never ends reading, each over SMALL_READ_BYTES, so that no
    read of one is small (a comment pads it past the end of the file's last section)."""
    from agentread.serve.workers import SMALL_READ_BYTES

    names = stuck_names(count)
    for name in names:
        (folder / name).write_bytes(build_pdf(["never read"]) + b"%" + b" " * SMALL_READ_BYTES + b"\n")
    return names


def test_two_reads_that_never_end_delay_no_quick_read(tmp_path):
    """Two reads that never end, of PDFs too large for their reads to be small, hold both workers; a
    small PDF read meanwhile is read by the worker held back for small reads, a text file and a
    notebook on threads, all while the two still run (the default deadline)."""
    from agentread.serve.workers import DEFAULT_WORKERS
    from builders import code, notebook

    (tmp_path / "good.pdf").write_bytes(build_pdf(["a good page"]))
    (tmp_path / "a.txt").write_text("line 1\nline 2\n")
    (tmp_path / "nb.ipynb").write_bytes(notebook(code("print(1)")))
    names = big_stuck_pdfs(tmp_path, DEFAULT_WORKERS)
    server = ServerProcess(workspace=tmp_path, inject=STUCK_READER)
    try:
        slow = [server.send("agentread/read", {"path": name}) for name in names]
        for name in names:
            wait_until(lambda name=name: workers_reading(server, tmp_path / name), f"{name} under way")
        assert "a good page" in text_of(server.read(path="good.pdf"))
        assert server.read(path="a.txt")["endLine"] == 2
        assert "print(1)" in text_of(server.read(path="nb.ipynb"))
        assert all(server._queue(msg_id).empty() for msg_id in slow)  # still reading
    finally:
        server.close()


def test_with_every_worker_on_a_read_that_never_ends_a_read_is_told_the_readers_are_busy(tmp_path):
    """Small reads that never end hold every worker, the one for small reads and the spare too."""
    from agentread.serve.workers import DEFAULT_WORKERS, MAX_SPARE_WORKERS

    (tmp_path / "good.pdf").write_bytes(build_pdf(["a good page"]))
    names = stuck_names(DEFAULT_WORKERS + 1 + MAX_SPARE_WORKERS)
    for name in names:
        (tmp_path / name).write_bytes(build_pdf(["never read"]))
    server = ServerProcess(workspace=tmp_path, inject=STUCK_READER)
    try:
        for name in names:
            server.send("agentread/read", {"path": name})
            wait_until(lambda name=name: workers_reading(server, tmp_path / name), f"{name} under way")
        busy = server.read(path="good.pdf")
        assert busy["error"]["code"] == "busy", busy
        assert "busy with slow files" in text_of(busy) and "again in a minute" in text_of(busy)
    finally:
        server.close()


def test_reads_of_many_files_waiting_on_workers_hold_no_read_thread(tmp_path):
    """As many reads of many files as there are read threads, each waiting on a worker that never
    ends its read: a text file never read before (it needs a read thread) is still read."""
    from agentread.serve.service import READ_THREADS
    from agentread.serve.workers import DEFAULT_WORKERS, MAX_SPARE_WORKERS

    names = stuck_names(min(READ_THREADS, DEFAULT_WORKERS + MAX_SPARE_WORKERS))
    for name in names:
        (tmp_path / name).write_bytes(build_pdf(["never read"]))
    (tmp_path / "fresh.txt").write_text("fresh\n")
    server = ServerProcess(workspace=tmp_path, inject=STUCK_READER)
    try:
        for name in names:
            server.send("agentread/readMany", {"paths": [name]})
        wait_until(lambda: workers_reading(server, tmp_path / names[0]), "a read of many under way")
        assert body_of(server.read(path="fresh.txt")) == "     1\tfresh"
    finally:
        server.close()


def test_a_reads_deadline_runs_from_its_start_not_its_wait_for_a_thread(tmp_path):
    """Every read thread holds a read that never ends; a quick read sent then waits for a thread
    until they are stopped at their deadline, and is then read, not answered `timeout`."""
    from agentread.serve.service import READ_THREADS
    from rpc import holders, write_unending_line

    huge = write_unending_line(tmp_path / "huge.log")
    (tmp_path / "quick.txt").write_text("quick\n")
    server = ServerProcess(workspace=tmp_path, env={"AGENTREAD_READ_DEADLINE": str(STOPPED_AFTER)})
    try:
        slow = [server.send("agentread/read", {"path": "huge.log", "offset": 2}) for _ in range(READ_THREADS)]
        wait_until(lambda: holders(server.proc.pid, huge).get(server.proc.pid, 0) >= READ_THREADS,
                   "every read thread on the huge file")
        quick = server.send("agentread/read", {"path": "quick.txt"})
        for msg_id in slow:
            assert server.wait(msg_id, STOPPED_AFTER + ANSWER_TIMEOUT)["result"]["error"]["code"] == "timeout"
        assert body_of(server.wait(quick)["result"]) == "     1\tquick"
    finally:
        server.close()


def test_a_small_read_is_answered_before_six_slow_reads_sent_ahead_of_it(tmp_path):
    """Six reads that never end, of PDFs too large for their reads to be small, hold every worker
    they may use (a spare too) or wait for one; a page of a small PDF read then runs in the worker
    held back for small reads, and is answered, with its page, before any of the six (answered
    `busy` or `timeout`)."""
    from agentread.serve.workers import DEFAULT_WORKERS

    names = big_stuck_pdfs(tmp_path, 6)
    (tmp_path / "small.pdf").write_bytes(build_pdf(["a small page", "another"]))
    server = ServerProcess(workspace=tmp_path, env={"AGENTREAD_READ_DEADLINE": str(STOPPED_AFTER)},
                           inject=STUCK_READER)
    try:
        slow = [server.send("agentread/read", {"path": name}) for name in names]
        wait_until(lambda: sum(bool(workers_reading(server, tmp_path / name)) for name in names) >= DEFAULT_WORKERS,
                   "every worker on a read that never ends")
        small = server.send("agentread/read", {"path": "small.pdf", "pages": "1"})
        assert "a small page" in text_of(server.wait(small)["result"])
        for msg_id in slow:
            assert server.wait(msg_id, STOPPED_AFTER + ANSWER_TIMEOUT)["result"]["error"]["code"] in ("busy", "timeout")
        assert server.answered.index(small) < min(server.answered.index(msg_id) for msg_id in slow)
    finally:
        server.close()


def test_the_worker_for_small_reads_is_started_afresh_after_a_crash(tmp_path):
    """With every other worker on a read that never ends, a small image whose read crashes runs in
    the worker held back for small reads: answered `internal`, and the next small read runs in a
    fresh one while the other reads go on."""
    from agentread.serve.workers import CRASH_FOR_TESTS, DEFAULT_WORKERS

    names = big_stuck_pdfs(tmp_path, DEFAULT_WORKERS)
    (tmp_path / "crash.png").write_bytes(png(4, 4))
    (tmp_path / "small.pdf").write_bytes(build_pdf(["a small page"]))
    server = ServerProcess(workspace=tmp_path, env={CRASH_FOR_TESTS: "crash.png"}, inject=STUCK_READER)
    try:
        slow = [server.send("agentread/read", {"path": name}) for name in names]
        for name in names:
            wait_until(lambda name=name: workers_reading(server, tmp_path / name), f"{name} under way")
        crashed = server.read(path="crash.png")
        assert crashed["error"]["code"] == "internal" and "SIGSEGV" in crashed["error"]["message"]
        assert "a small page" in text_of(server.read(path="small.pdf", pages="1"))
        assert all(server._queue(msg_id).empty() for msg_id in slow)  # still reading
    finally:
        server.close()


def test_the_worker_for_small_reads_is_killed_with_its_read_and_started_afresh(tmp_path):
    """With every other worker on a read that never ends, a small PDF's read that never ends runs
    in the worker held back for small reads; cancelled, that worker is killed (as at a deadline),
    and the next small read runs in a fresh one while the other reads go on."""
    from agentread.serve.workers import DEFAULT_WORKERS

    names = big_stuck_pdfs(tmp_path, DEFAULT_WORKERS)
    (tmp_path / STUCK_PDF).write_bytes(build_pdf(["never read"]))
    (tmp_path / "small.pdf").write_bytes(build_pdf(["a small page"]))
    server = ServerProcess(workspace=tmp_path, inject=STUCK_READER)
    try:
        slow = [server.send("agentread/read", {"path": name}) for name in names]
        for name in names:
            wait_until(lambda name=name: workers_reading(server, tmp_path / name), f"{name} under way")
        small_stuck = server.send("agentread/read", {"path": STUCK_PDF})
        reading = wait_until(lambda: workers_reading(server, tmp_path / STUCK_PDF), "the small read under way")
        server.notify("$/cancelRequest", {"id": small_stuck})
        assert server.wait(small_stuck).get("error", {}).get("code") == -32800
        wait_until(lambda: killed(reading), "the worker that read it killed")
        assert "a small page" in text_of(server.read(path="small.pdf", pages="1"))
        assert all(server._queue(msg_id).empty() for msg_id in slow)  # still reading
    finally:
        server.close()


def test_a_page_range_the_reader_refuses_is_refused_before_a_worker_is_chosen(tmp_path):
    """The rule for small reads reads `pages` as the PDF reader does: a range it refuses (a
    superscript digit, which str.isdigit takes and int does not) is an invalid request, not a
    crash of the choice of worker."""
    from agentread.serve.workers import SMALL_READ_BYTES

    (tmp_path / "big.pdf").write_bytes(build_pdf(["one", "two", "three"]) + b"%" + b" " * SMALL_READ_BYTES + b"\n")
    for server in serving(tmp_path):
        answer = server.request("agentread/read", {"path": "big.pdf", "pages": "\u00b2-3"})
        assert answer["error"]["code"] == -32602 and "'pages' must look like" in answer["error"]["message"], answer
        assert not server.read(path="big.pdf", pages="2")["isError"]
