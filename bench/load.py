"""Load and faults against a real server over stdio, as the extension drives it.

Usage:
    python bench/load.py                          # 10,000 requests, 16 in flight
    python bench/load.py --requests 1000 --in-flight 16

What it does and checks, in order, printing the figures:
 1. N mixed reads with K in flight (text windows at random offsets, a PDF page, a small notebook by
    cells, a missing file, a binary file, a malformed request) and, one in every 100, a hostile
    file: the PDF page and the PPTX fuzzing found (tests/data/hostile) and a PNG whose read crashes
    its worker process (a test-only variable of the server). The server runs with a read deadline of
    LOAD_DEADLINE seconds, far above any good read. No answer lost (each arrives within LOST_AFTER)
    and none mismatched (each answer to a good file is checked against its own request: the path it
    names and the content that offset, page or cell must show); each hostile read answered with a
    result (what was read, `internal` for the PNG, or `timeout`).
 2. Memory: the server's RSS after a warm-up (the first 10% of requests) against the end:
    growth <= 10%.
 3. Cancellation: as many slow reads as the server has read threads (offset 2 of a sparse file as
    large as the file system allows, whose first line never ends: none of them ends unless stopped),
    each cancelled once all of them are under way: each answers -32800; then 4 quick reads of files
    never read before (so that each needs a read thread) all answer with their content, and the slow
    reads let go of their file. The quick reads can only be answered once cancelling has freed the
    threads: the deadline is longer than the wait. The time each step took is printed, not checked.
 4. Quick reads beside slow ones: QUICK_READS quick reads (text windows, small notebook cells),
    QUICK_IN_FLIGHT at a time, first alone, then with two reads in flight that never end (the PDF
    reader injected to spin on SPINNING_PDFS, as PDFium stuck in C code would, each holding a worker
    until it is cancelled). The p99 of each and their ratio are printed; the goal is <= 1.5x.
 5. A reader that raises unexpectedly: the server process is started with a `sitecustomize` that
    makes the PDF reader raise RuntimeError for one file name (no known real input does that any
    more; the injected fault exercises the real server's handling). The answer is an error result
    with code `internal`, and the next request still answers.
Exit status 0 when every check holds, 1 otherwise.
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
import zlib
from pathlib import Path

from common import (
    LOST_AFTER,
    QUICK_IN_FLIGHT,
    REPO,
    WorkerPeaks,
    arguments,
    ms,
    p50,
    p99,
    serving,
    show,
    status_kb,
    temp_folder,
    timed_reads,
)

# common.py has put tests/ and python/ on the path.
# isort: split
from builders import build_pdf  # noqa: E402
from rpc import (  # noqa: E402
    POLL_SECONDS,
    STUCK_PDF,
    STUCK_READER,
    ServerProcess,
    holders,
    text_of,
    workers_reading,
    write_unending_line,
)

TEXT_FILES = 8
TEXT_LINES = 5_000
PDF_PAGES = 3
NOTEBOOK_CELLS = 6

# Memory growth allowed between the warm-up and the end of the run.
MAX_GROWTH = 0.10

# The read deadline of the server under load: far above any good read, so that none is answered
# `timeout` on a slow or busy machine; the hostile files are answered with whatever they give.
# Longer than LOST_AFTER, so that in the cancellation phase only a cancel can free a read thread
# within the wait for the quick reads.
LOAD_DEADLINE = 2 * LOST_AFTER

# Text files read only after cancelling: never read before, each needs a read thread (a small file
# read before may be read on the event loop, which no busy thread holds up).
FRESH_FILES = 4

# Quick reads timed alone and beside two reads that never end, this many at a time; the goal for
# the ratio of their p99s.
QUICK_READS = 2_000
QUICK_ROUNDS = 4
QUICK_P99_GOAL = 1.5
SPINNING_PDFS = [f"{n}-{STUCK_PDF}" for n in range(2)]

# One read in this many is of a hostile file.
HOSTILE_EVERY = 100

HOSTILE = REPO / "tests" / "data" / "hostile"
CRASH_FILE = "crash.png"  # a read of it crashes its worker (AGENTREAD_TEST_CRASH_FILE)
HOSTILE_NAMES = (*sorted(p.name for p in HOSTILE.glob("*.p*")), CRASH_FILE)


def make_workspace(folder: Path) -> None:
    for i in range(TEXT_FILES):
        (folder / f"text{i}.txt").write_text("".join(f"file {i} line {n}\n" for n in range(1, TEXT_LINES + 1)))
    (folder / "doc.pdf").write_bytes(build_pdf([f"page {p} of the load document" for p in range(1, PDF_PAGES + 1)]))
    cells = [{"cell_type": "code", "id": f"cell{c}", "metadata": {}, "source": f"value_{c} = {c}",
              "execution_count": c, "outputs": [{"output_type": "stream", "name": "stdout", "text": f"out {c}\n"}]}
             for c in range(1, NOTEBOOK_CELLS + 1)]
    (folder / "small.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "cells": cells,
                                                    "metadata": {"kernelspec": {"language": "python"}}}))
    for i in range(FRESH_FILES):
        (folder / f"fresh{i}.txt").write_text("".join(f"fresh {i} line {n}\n" for n in range(1, 11)))
    (folder / "blob.bin").write_bytes(zlib.compress(os.urandom(1 << 14)) + bytes(1 << 12))
    write_unending_line(folder / "huge.log")  # offset 2 would scan all of it
    (folder / "raises.pdf").write_bytes(b"%PDF-1.4\n")  # the injected fault fires before it is parsed
    for hostile in HOSTILE.glob("*.p*"):
        (folder / hostile.name).write_bytes(hostile.read_bytes())
    (folder / CRASH_FILE).write_bytes(PNG)
    for name in SPINNING_PDFS:
        (folder / name).write_bytes(build_pdf(["never read"]))


# A 1x1 grey PNG.
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108000000003a7e9b55"
                    "0000000a49444154789c636800000082008177cd72b60000000049454e44ae426082")


# Injected into the server process: the PDF reader raises for one file, as a reader bug would.
FAULT_INJECTION = """
import agentread.readers.pdf as pdf
_real = pdf.read_pdf
def read_pdf(stream, request, path, *args, **kwargs):
    if path.endswith("raises.pdf"):
        raise RuntimeError("injected fault")
    return _real(stream, request, path, *args, **kwargs)
pdf.read_pdf = read_pdf
"""


def make_request(rng: random.Random):
    """→ (params, check) where check(answer) returns None when the answer is the one asked for, else
    why not; a hostile file's check answers "hostile <outcome>" for any result."""
    if rng.randrange(HOSTILE_EVERY) == 0:
        name = rng.choice(HOSTILE_NAMES)

        def check(answer):
            r = answer.get("result")
            if not r or not r.get("path", "").endswith(name):
                return f"hostile unanswered {answer}"
            return f"hostile {(r.get('error') or {}).get('code') or r.get('kind')}"
        return {"path": name}, check
    roll = rng.random()
    if roll < 0.60:
        i, offset, limit = rng.randrange(TEXT_FILES), rng.randint(1, TEXT_LINES), rng.randint(1, 50)
        name = f"text{i}.txt"

        def check(answer):
            r = answer.get("result") or {}
            want = (f"{offset:6d}\tfile {i} line {offset}\n" if offset < TEXT_LINES
                    else f"{offset:6d}\tfile {i} line {offset}")
            if not r.get("path", "").endswith("/" + name) or r.get("startLine") != offset:
                return f"path/startLine {r.get('path')} {r.get('startLine')}"
            text = text_of(r)
            if not (text + "\n").startswith(want) or r.get("endLine") != min(offset + limit - 1, TEXT_LINES):
                return f"content {text[:60]!r}"
            return None
        return {"path": name, "offset": offset, "limit": limit}, check
    if roll < 0.72:
        page = rng.randint(1, PDF_PAGES)

        def check(answer):
            r = answer.get("result") or {}
            text = text_of(r) if r else ""
            ok = r.get("path", "").endswith("/doc.pdf") and f"--- Page {page} ---" in text \
                and f"page {page} of the load document" in text and r.get("totalPages") == PDF_PAGES
            return None if ok else f"pdf {text[:80]!r}"
        return {"path": "doc.pdf", "pages": str(page)}, check
    if roll < 0.84:
        cell = rng.randint(1, NOTEBOOK_CELLS)

        def check(answer):
            r = answer.get("result") or {}
            text = text_of(r) if r else ""
            ok = r.get("path", "").endswith("/small.ipynb") and f"value_{cell} = {cell}" in text \
                and f"out {cell}" in text and r.get("totalCells") == NOTEBOOK_CELLS
            others = [c for c in range(1, NOTEBOOK_CELLS + 1) if c != cell and f"value_{c} =" in text]
            return None if ok and not others else f"notebook {text[:80]!r}"
        return {"path": "small.ipynb", "cells": str(cell)}, check
    if roll < 0.90:
        missing = f"missing-{rng.randrange(10**6)}.txt"

        def check(answer):
            r = answer.get("result") or {}
            ok = r.get("isError") and r.get("error", {}).get("code") == "not_found" and missing in r["error"]["message"]
            return None if ok else f"not_found {r}"
        return {"path": missing}, check
    if roll < 0.95:
        def check(answer):
            r = answer.get("result") or {}
            return None if r.get("error", {}).get("code") == "binary" and r["path"] == "blob.bin" else f"binary {r}"
        return {"path": "blob.bin"}, check
    bad = rng.randint(-5, 0)

    def check(answer):
        error = answer.get("error") or {}
        return None if error.get("code") == -32602 and str(bad) in error.get("message", "") else f"-32602 {answer}"
    return {"path": "text0.txt", "limit": bad}, check


def rss(pid: int) -> int:
    return status_kb(pid, "VmRSS") * 1024


def load_phase(server: ServerProcess, requests: int, in_flight: int, seed: int) -> dict:
    rng = random.Random(seed)
    plan = [make_request(rng) for _ in range(requests)]
    warm_up = max(1, requests // 10)
    lock = threading.Lock()
    state = {"next": 0, "done": 0, "lost": 0, "mismatched": 0, "examples": [], "rss_warm": None, "hostile": {}}

    def run() -> None:
        while True:
            with lock:
                i = state["next"]
                if i >= requests:
                    return
                state["next"] += 1
            params, check = plan[i]
            try:
                answer = server.request("agentread/read", params, timeout=LOST_AFTER)
                why = check(answer)
            except Exception as exc:  # noqa: BLE001 - queue.Empty: the answer never came
                answer, why = None, f"lost ({type(exc).__name__})"
            with lock:
                state["done"] += 1
                if why and why.startswith("hostile ") and not why.startswith("hostile unanswered"):
                    state["hostile"][why[8:]] = state["hostile"].get(why[8:], 0) + 1
                    why = None
                if answer is None:
                    state["lost"] += 1
                elif why:
                    state["mismatched"] += 1
                if why and len(state["examples"]) < 5:
                    state["examples"].append({"params": params, "why": why})
                if state["done"] == warm_up:
                    state["rss_warm"] = rss(server.proc.pid)

    start = time.monotonic()
    threads = [threading.Thread(target=run) for _ in range(in_flight)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    end_rss = rss(server.proc.pid)
    growth = (end_rss - state["rss_warm"]) / state["rss_warm"]
    return {"requests": requests, "in_flight": in_flight, "seconds": round(elapsed, 2),
            "per_second": round(requests / elapsed, 1), "lost": state["lost"], "mismatched": state["mismatched"],
            "hostile_reads": sum(params["path"] in HOSTILE_NAMES for params, _ in plan),
            "hostile_answers": state["hostile"],
            "rss_after_warm_up_mb": round(state["rss_warm"] / 2**20, 1), "rss_end_mb": round(end_rss / 2**20, 1),
            "rss_growth": round(growth, 4), "workers_rss_end_mb": workers_rss_mb(server.proc.pid),
            "examples": state["examples"]}


def workers_rss_mb(pid: int) -> list[float]:
    """RSS of the server's worker processes (its grandchildren), from /proc."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    children = {p for p, parent in parents.items() if parent == pid}
    sizes = []
    for p, parent in parents.items():
        if parent in children:
            if size := rss(p):  # none for a worker killed at its deadline, gone since it was listed
                sizes.append(round(size / 2**20, 1))
    return sorted(sizes)


def cancel_phase(server: ServerProcess, folder: Path) -> dict:
    from agentread.serve.service import READ_THREADS

    huge = folder / "huge.log"

    def held() -> int:
        return sum(holders(server.proc.pid, huge).values())

    slow = [server.send("agentread/read", {"path": "huge.log", "offset": 2}) for _ in range(READ_THREADS)]
    under_way = wait_for(lambda: held() == READ_THREADS)  # every read thread is scanning it
    cancelled_at = time.monotonic()
    for msg_id in slow:
        server.notify("$/cancelRequest", {"id": msg_id})
    codes = [server.wait(msg_id, timeout=LOST_AFTER).get("error", {}).get("code") for msg_id in slow]
    cancel_answer = time.monotonic() - cancelled_at
    sent = time.monotonic()
    quick = [server.send("agentread/read", {"path": f"fresh{i}.txt", "offset": 7, "limit": 1})
             for i in range(FRESH_FILES)]
    answers = []
    for msg_id in quick:
        try:
            answers.append(server.wait(msg_id, timeout=LOST_AFTER))
        except Exception:  # noqa: BLE001 - queue.Empty: the answer never came
            answers.append({})
    quick_seconds = time.monotonic() - sent
    quick_ok = all(f"fresh {i} line 7" in text_of(a.get("result", {"content": []})) for i, a in enumerate(answers))
    ended = wait_for(lambda: held() == 0)  # each cancelled read has stopped, its file closed
    return {"slow_reads_cancelled": len(slow), "slow_reads_under_way": under_way, "cancel_codes": codes,
            "cancel_answered_within_s": round(cancel_answer, 3),
            "quick_reads_after_cancel_s": round(quick_seconds, 3), "quick_reads_ok": quick_ok,
            "slow_reads_ended": ended}


def wait_for(condition) -> bool:
    """Whether `condition` came to hold within LOST_AFTER, polling."""
    end = time.monotonic() + LOST_AFTER
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(POLL_SECONDS)
    return True


def quick_request(rng: random.Random) -> dict:
    """A quick read: a window of a text file, or one cell of the small notebook."""
    if rng.random() < 0.75:
        return {"path": f"text{rng.randrange(TEXT_FILES)}.txt", "offset": rng.randint(1, TEXT_LINES),
                "limit": rng.randint(1, 50)}
    return {"path": "small.ipynb", "cells": str(rng.randint(1, NOTEBOOK_CELLS))}


def planned_reads(server: ServerProcess, plan: list[dict]) -> list[float]:
    """Each read of `plan`, QUICK_IN_FLIGHT at a time: its seconds."""
    todo = list(reversed(plan))
    return timed_reads(server, lambda: todo.pop() if todo else None)


def quick_reads(server: ServerProcess, count: int | None = None, until=None) -> list[float]:
    """Quick reads (the same ones for every bench), QUICK_IN_FLIGHT at a time, `count` of them or
    until `until()`: each one's seconds."""
    rng = random.Random(1)
    sent = 0

    def next_read() -> dict | None:
        nonlocal sent
        if (count is not None and sent >= count) or (count is None and until()):
            return None
        sent += 1
        return quick_request(rng)
    return timed_reads(server, next_read)


def quick_beside(server: ServerProcess, reads: int, start, medians: bool = False) -> dict:
    """Quick reads timed alone (`reads` of them, after a tenth as many to warm up), then while
    `start()` (which returns when to stop) sends the heavy work: the server's peak memory (VmHWM)
    before and after, its workers' peaks, and the quick reads' figures (with their p50s if
    `medians`)."""
    pid = server.proc.pid
    quick_reads(server, reads // 10)  # warm-up: every file read once
    alone = quick_reads(server, reads)
    before_kb = status_kb(pid, "VmHWM")
    peaks = WorkerPeaks(pid)
    meanwhile = quick_reads(server, until=start())
    figures = {"server_peak_mb_before": round(before_kb / 1024),
               "server_peak_mb_after": round(status_kb(pid, "VmHWM") / 1024), **peaks.done()}
    for when, times in (("alone", alone), ("meanwhile", meanwhile)):
        figures[f"quick_reads_{when}"] = len(times)
        if medians:
            figures[f"quick_p50_{when}_ms"] = ms(p50(times))
        figures[f"quick_p99_{when}_ms"] = ms(p99(times))
    figures["quick_max_meanwhile_ms"] = ms(max(meanwhile), 1)
    return figures


def quick_phase(server: ServerProcess, folder: Path) -> dict:
    """p99 of quick reads alone and with two reads in flight that never end, in QUICK_ROUNDS
    alternating rounds (so that a change of the machine's load meanwhile weighs on both alike); the
    reads that never end are cancelled at the end of each round."""
    plan = [quick_request(random.Random(n)) for n in range(QUICK_READS)]
    planned_reads(server, plan[:QUICK_READS // 10])  # warm-up: every file read once
    alone: list[float] = []
    beside: list[float] = []
    in_flight, codes = True, []
    share = QUICK_READS // QUICK_ROUNDS
    for r in range(QUICK_ROUNDS):
        part = plan[r * share:(r + 1) * share]
        alone += planned_reads(server, part)
        spinning = [server.send("agentread/read", {"path": name}) for name in SPINNING_PDFS]
        in_flight &= wait_for(lambda: all(workers_reading(server, folder / name) for name in SPINNING_PDFS))
        beside += planned_reads(server, part)
        in_flight &= all(server._queue(msg_id).empty() for msg_id in spinning)  # in flight all along
        for msg_id in spinning:
            server.notify("$/cancelRequest", {"id": msg_id})
        codes += [server.wait(msg_id, timeout=LOST_AFTER).get("error", {}).get("code") for msg_id in spinning]
    return {"quick_reads": len(alone), "in_flight": QUICK_IN_FLIGHT, "rounds": QUICK_ROUNDS,
            "p99_alone_ms": round(p99(alone) * 1000, 2), "p99_beside_two_hostile_ms": round(p99(beside) * 1000, 2),
            "ratio": round(p99(beside) / p99(alone), 2), "goal": QUICK_P99_GOAL,
            "hostile_in_flight_throughout": in_flight, "hostile_cancel_codes": codes}


def fault_phase(server: ServerProcess) -> dict:
    answer = server.request("agentread/read", {"path": "raises.pdf"}, timeout=LOST_AFTER)
    result = answer.get("result") or {}
    after = server.request("agentread/read", {"path": "text1.txt", "limit": 1}, timeout=LOST_AFTER)
    return {"unexpected_read_code": (result.get("error") or {}).get("code"),
            "unexpected_read_is_error_result": bool(result.get("isError")),
            "next_request_answers": "file 1 line 1" in text_of(after.get("result", {"content": []}))}


def run(requests: int = 10_000, in_flight: int = 16, seed: int = 1) -> dict:
    with temp_folder("agentread-load-") as folder:
        make_workspace(folder)
        inject = folder / "fault-injection"
        inject.mkdir()
        (inject / "spinning_reader.py").write_text(STUCK_READER)  # a module of its own: its own names
        (inject / "sitecustomize.py").write_text(FAULT_INJECTION + "import spinning_reader  # noqa\n")
        with serving(folder, env={
            "PYTHONPATH": os.pathsep.join([str(REPO / "python"), str(inject), os.environ.get("PYTHONPATH", "")]),
            "AGENTREAD_READ_DEADLINE": str(LOAD_DEADLINE), "AGENTREAD_TEST_CRASH_FILE": CRASH_FILE}) as server:
            figures = {"load": load_phase(server, requests, in_flight, seed),
                       "cancel": cancel_phase(server, folder),
                       "quick": quick_phase(server, folder),
                       "fault": fault_phase(server)}
    load, cancel, quick, fault = figures["load"], figures["cancel"], figures["quick"], figures["fault"]
    figures["checks"] = {
        "no_lost_or_mismatched": load["lost"] == 0 and load["mismatched"] == 0,
        "every_hostile_read_answered": sum(load["hostile_answers"].values()) == load["hostile_reads"],
        "memory_growth_within_10_percent": load["rss_growth"] <= MAX_GROWTH,
        "cancel_answers_request_cancelled": all(c == -32800 for c in cancel["cancel_codes"]),
        "cancelled_reads_free_their_threads": cancel["slow_reads_under_way"] and cancel["quick_reads_ok"]
        and cancel["slow_reads_ended"],
        "quick_reads_answered_beside_hostile_ones": quick["hostile_in_flight_throughout"]
        and all(c == -32800 for c in quick["hostile_cancel_codes"]),
        "server_answers_after_unexpected_failure": fault["unexpected_read_is_error_result"]
        and fault["next_request_answers"],
    }
    return figures


def main() -> None:
    args = arguments(__doc__, requests=10_000, in_flight=16, seed=1)
    figures = run(args.requests, args.in_flight, args.seed)
    show(figures, indent=2)
    sys.exit(0 if all(figures["checks"].values()) else 1)


if __name__ == "__main__":
    main()
