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
and VmRSS polled every PEAK_POLL_SECONDS), the p99 of the quick reads alone and meanwhile, the load
average.
"""

from __future__ import annotations

import time
from pathlib import Path

from common import arguments, load_average, serving, show, temp_folder
from load import make_workspace, quick_beside

# common.py has put tests/ and python/ on the path.
# isort: split
from builders import write_empty_cells  # noqa: E402
from rpc import ServerProcess  # noqa: E402

CELLS = 6_000_000
AT_ONCE = 2
# Quick reads timed alone, before the big reads.
QUICK_READS = 1_000


def run(cells: int, at_once: int) -> dict:
    with temp_folder("agentread-big-notebook-") as folder:
        make_workspace(folder)
        big = folder / "big.ipynb"
        write_empty_cells(big, cells)
        with serving(folder) as server:
            return beside_big_reads(server, big, cells, at_once)


def beside_big_reads(server: ServerProcess, big: Path, cells: int, at_once: int) -> dict:
    answers: dict[int, tuple[float, str]] = {}

    def start():
        started = time.perf_counter()
        reads = [server.send("agentread/read", {"path": "big.ipynb"}) for _ in range(at_once)]

        def answered() -> bool:
            for msg_id in reads:
                if msg_id not in answers and not server._queue(msg_id).empty():
                    result = server.wait(msg_id)["result"]
                    answers[msg_id] = (time.perf_counter() - started,
                                       result["error"]["code"] if result["isError"] else "read")
            return len(answers) == len(reads)
        return answered

    figures = quick_beside(server, QUICK_READS, start)
    return {"cells": cells, "notebook_mb": round(big.stat().st_size / 2**20), "at_once": at_once,
            "big_reads": [{"answer": code, "seconds": round(s, 1)} for s, code in answers.values()],
            **figures, "load_average_at_end": load_average()}


def main() -> None:
    args = arguments(__doc__, cells=CELLS, at_once=AT_ONCE)
    show(run(args.cells, args.at_once))


if __name__ == "__main__":
    main()
