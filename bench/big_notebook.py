"""A notebook of millions of empty cells read through the real server, beside quick reads.

Usage:
    python bench/big_notebook.py                     # 6,000,000 cells, two reads of it at once
    python bench/big_notebook.py --cells 1000000 --at-once 1

The notebook (empty raw cells, about 47 bytes each) is written a block at a time into a fresh
workspace, removed at the end. The server runs with its defaults (two workers, each held to its
memory limit, the 60 s read deadline). First QUICK_READS quick reads (load.py's: text windows,
cells of a small notebook), QUICK_IN_FLIGHT at a time, are timed alone; then the big notebook is
read `--at-once` times at once while the same quick reads go on until every big read is answered.
Printed as JSON: how each big read was answered and when, the peak memory of the server process
(its VmHWM) before and after, the highest peak of any worker and of the workers together (VmHWM
and VmRSS polled every POLL_SECONDS), the p99 of the quick reads alone and meanwhile, the load
average.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))  # load.py

from builders import write_empty_cells  # noqa: E402
from load import LOST_AFTER, QUICK_IN_FLIGHT, make_workspace, p99, quick_request  # noqa: E402
from rpc import ServerProcess, descendants, processes  # noqa: E402

CELLS = 6_000_000
AT_ONCE = 2
# Quick reads timed alone, before the big reads.
QUICK_READS = 1_000
# How often the memory of the server's processes is looked at.
POLL_SECONDS = 0.1


def status_kb(pid: int, field: str) -> int:
    """A memory field of /proc/<pid>/status (VmHWM, VmRSS) in kB; 0 once the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class WorkerPeaks:
    """The peaks of the server's worker processes, polled on a thread until stopped."""

    def __init__(self, server: int) -> None:
        self.server, self.each_kb, self.together_kb = server, 0, 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _poll(self) -> None:
        while not self.stop.wait(POLL_SECONDS):
            workers = descendants(self.server, processes())
            self.each_kb = max([self.each_kb, *(status_kb(pid, "VmHWM") for pid in workers)])
            self.together_kb = max(self.together_kb, sum(status_kb(pid, "VmRSS") for pid in workers))

    def done(self) -> dict:
        self.stop.set()
        self.thread.join()
        return {"worker_peak_mb": round(self.each_kb / 1024),
                "workers_together_peak_mb": round(self.together_kb / 1024)}


def quick_reads(server: ServerProcess, until, count: int | None = None) -> list[float]:
    """Quick reads, QUICK_IN_FLIGHT at a time, `count` of them or until `until()`: each one's
    seconds."""
    times: list[float] = []
    lock = threading.Lock()
    rng = random.Random(1)

    def run() -> None:
        while True:
            with lock:
                if (count is not None and len(times) >= count) or (count is None and until()):
                    return
                params = quick_request(rng)
            started = time.perf_counter()
            result = server.request("agentread/read", params, timeout=LOST_AFTER).get("result") or {}
            seconds = time.perf_counter() - started
            assert not result.get("isError", True), result
            with lock:
                times.append(seconds)

    threads = [threading.Thread(target=run) for _ in range(QUICK_IN_FLIGHT)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return times


def run(cells: int, at_once: int) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="agentread-big-notebook-"))
    make_workspace(folder)
    big = folder / "big.ipynb"
    write_empty_cells(big, cells)
    server = ServerProcess(workspace=folder)
    try:
        pid = server.proc.pid
        quick_reads(server, None, QUICK_READS // 10)  # warm-up: every file read once
        alone = quick_reads(server, None, QUICK_READS)
        before_kb = status_kb(pid, "VmHWM")
        peaks = WorkerPeaks(pid)
        started = time.perf_counter()
        reads = [server.send("agentread/read", {"path": "big.ipynb"}) for _ in range(at_once)]
        answers: dict[int, tuple[float, str]] = {}

        def answered() -> bool:
            for msg_id in reads:
                if msg_id not in answers and not server._queue(msg_id).empty():
                    result = server.wait(msg_id)["result"]
                    answers[msg_id] = (time.perf_counter() - started,
                                       result["error"]["code"] if result["isError"] else "read")
            return len(answers) == len(reads)

        meanwhile = quick_reads(server, answered)
        figures = peaks.done()
        return {"cells": cells, "notebook_mb": round(big.stat().st_size / 2**20), "at_once": at_once,
                "big_reads": [{"answer": code, "seconds": round(s, 1)} for s, code in answers.values()],
                "server_peak_mb_before": round(before_kb / 1024), "server_peak_mb_after":
                round(status_kb(pid, "VmHWM") / 1024), **figures,
                "quick_reads_alone": len(alone), "quick_p99_alone_ms": round(p99(alone) * 1000, 2),
                "quick_reads_meanwhile": len(meanwhile), "quick_p99_meanwhile_ms": round(p99(meanwhile) * 1000, 2),
                "quick_max_meanwhile_ms": round(max(meanwhile) * 1000, 1),
                "load_average_at_end": round(os.getloadavg()[0], 1)}
    finally:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cells", type=int, default=CELLS)
    parser.add_argument("--at-once", type=int, default=AT_ONCE)
    args = parser.parse_args()
    print(json.dumps(run(args.cells, args.at_once), indent=1))


if __name__ == "__main__":
    main()
