"""A workspace folder flipped between a folder and a link to a folder outside, while the real server
reads, searches, lists and globs in it.

Usage:
    python bench/races.py                      # 60 s each: paths opened by openat2, then by a walk
    python bench/races.py --seconds 300

The workspace and the process that flips ws/raced by renames, four renames a cycle, as fast as it
can, are tests/test_races.py's: the folder holds secret.md, the outside folder a secret.md whose
text, and a file whose name, no reply may hold. For `--seconds`, IN_FLIGHT clients each send the
test's requests in turn (a read, a find, an outline, a listing of the folder, a glob in it through
readMany), each waiting for its answer. Run twice: with the server as it is (openat2 where the
system has it), and with the walk of one folder at a time it falls back on (the test's injection).
Printed as JSON for each: requests, requests a second, p50 and p99 of an answer, leaks (replies
holding the outside's text or names; must be 0), answers by kind and outcome (`ok` or the error's
code), whether the server answers at the end, flips made, the load average.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from pathlib import Path

from common import LOST_AFTER, arguments, load_average, ms, p50, p99, serving, show, temp_folder

# common.py has put tests/ and python/ on the path.
# isort: split
from rpc import ServerProcess, text_of  # noqa: E402
from test_races import OUTSIDE_NAME, REQUESTS, SECRET, WITHOUT_OPENAT2, flipping  # noqa: E402

SECONDS = 60.0
# Clients sending at once, each waiting for its answer: more than the server's four read threads.
IN_FLIGHT = 8
# How often the flipped folder is looked at, to count that it flips.
SAMPLE_SECONDS = 0.001


def outcome(answer: dict) -> str:
    if "error" in answer:
        return str(answer["error"]["code"])
    result = answer["result"]
    return result["error"]["code"] if result.get("isError") else "ok"


def flips(ws: Path, seconds: float) -> int:
    """How many times ws/raced was seen to change between looks SAMPLE_SECONDS apart, for
    `seconds`: a lower bound of the flips."""
    seen, changes, end = None, 0, time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            now = os.lstat(ws / "raced").st_ino
        except OSError:  # between two renames
            continue
        changes += seen is not None and now != seen
        seen = now
        time.sleep(SAMPLE_SECONDS)
    return changes


def run_mode(mode: str, seconds: float) -> dict:
    with temp_folder("agentread-races-") as folder, flipping(folder) as ws, \
            serving(ws, inject=WITHOUT_OPENAT2 if mode == "walk" else None) as server:
        return {"mode": mode, **hammer(server, ws, seconds)}


def hammer(server: ServerProcess, ws: Path, seconds: float) -> dict:
    times: list[float] = []
    outcomes: Counter = Counter()
    leaks: Counter = Counter()
    lock = threading.Lock()
    end = time.monotonic() + seconds
    kinds = list(REQUESTS)

    def client(n: int) -> None:
        while time.monotonic() < end:
            kind = kinds[n % len(kinds)]
            n += 1
            started = time.perf_counter()
            answer = server.request(*REQUESTS[kind], timeout=LOST_AFTER)
            took = time.perf_counter() - started
            text = text_of(answer["result"]) if "result" in answer else json.dumps(answer)
            with lock:
                times.append(took)
                outcomes[f"{kind} {outcome(answer)}"] += 1
                leaks[kind] += SECRET in text or OUTSIDE_NAME in text

    started = time.perf_counter()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(IN_FLIGHT)]
    for t in threads:
        t.start()
    flipped = flips(ws, seconds / 10)
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    after = server.request("agentread/read", {"path": "."}, timeout=LOST_AFTER)
    return {"requests": len(times), "requests_per_second": round(len(times) / elapsed),
            "p50_ms": ms(p50(times)), "p99_ms": ms(p99(times)),
            "leaks": sum(leaks.values()), "leaks_by_kind": {k: v for k, v in leaks.items() if v},
            "answers": dict(sorted(outcomes.items())), "server_alive": server.proc.poll() is None,
            "server_answers_after": "result" in after, f"flips_in_first_{seconds / 10:g}_s": flipped,
            "load_average_at_end": load_average()}


def main() -> None:
    args = arguments(__doc__, {"mode": ["openat2", "walk", "both"]}, seconds=SECONDS, mode="both")
    modes = ["openat2", "walk"] if args.mode == "both" else [args.mode]
    show([run_mode(mode, args.seconds) for mode in modes])


if __name__ == "__main__":
    main()
