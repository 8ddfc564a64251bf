"""What the benches that drive the real server share: the wait before an answer counts as lost,
reads timed a few at a time, percentiles, memory from /proc, a server on a temporary folder, and
the command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "python"))

from rpc import ServerProcess, descendants, processes  # noqa: E402

# How long any one answer (or a state of the server waited for) may take before it counts as lost:
# only a server that is stuck takes this long.
LOST_AFTER = 60.0
# Quick reads in flight at once: the server's read threads are four.
QUICK_IN_FLIGHT = 4
# How often the memory of the server's workers is looked at.
PEAK_POLL_SECONDS = 0.1


def p50(times: list[float]) -> float:
    return sorted(times)[len(times) // 2]


def p99(times: list[float]) -> float:
    return sorted(times)[min(len(times) - 1, int(len(times) * 0.99))]


def ms(seconds: float, digits: int = 2) -> float:
    return round(seconds * 1000, digits)


def load_average() -> float:
    return round(os.getloadavg()[0], 1)


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
        while not self.stop.wait(PEAK_POLL_SECONDS):
            workers = descendants(self.server, processes())
            self.each_kb = max([self.each_kb, *(status_kb(pid, "VmHWM") for pid in workers)])
            self.together_kb = max(self.together_kb, sum(status_kb(pid, "VmRSS") for pid in workers))

    def done(self) -> dict:
        self.stop.set()
        self.thread.join()
        return {"worker_peak_mb": round(self.each_kb / 1024),
                "workers_together_peak_mb": round(self.together_kb / 1024)}


def timed_reads(server: ServerProcess, next_read: Callable[[], dict | None],
                in_flight: int = QUICK_IN_FLIGHT) -> list[float]:
    """Reads `in_flight` at a time, each one's params from `next_read()` (called under a lock) until
    it gives None: each one's seconds (an error answer fails the run)."""
    times: list[float] = []
    lock = threading.Lock()

    def run() -> None:
        while True:
            with lock:
                params = next_read()
            if params is None:
                return
            started = time.perf_counter()
            result = server.request("agentread/read", params, timeout=LOST_AFTER).get("result") or {}
            seconds = time.perf_counter() - started
            assert not result.get("isError", True), result
            with lock:
                times.append(seconds)

    threads = [threading.Thread(target=run) for _ in range(in_flight)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return times


@contextmanager
def temp_folder(prefix: str) -> Iterator[Path]:
    """A fresh folder, removed with all it holds at the end."""
    with tempfile.TemporaryDirectory(prefix=prefix, ignore_cleanup_errors=True) as tmp:
        yield Path(tmp)


@contextmanager
def serving(folder: Path, **options) -> Iterator[ServerProcess]:
    """The real server on `folder` (ServerProcess's `options`), closed at the end."""
    server = ServerProcess(workspace=folder, **options)
    try:
        yield server
    finally:
        server.close()


def arguments(doc: str, choices: dict[str, list] | None = None, **defaults) -> argparse.Namespace:
    """The command line of a bench: an option a default, of its type (`--at-once` for at_once),
    and those of `choices` limited to them."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in defaults.items():
        parser.add_argument("--" + name.replace("_", "-"), type=type(default), default=default,
                            choices=(choices or {}).get(name))
    return parser.parse_args()


def show(figures, indent: int = 1) -> None:
    print(json.dumps(figures, indent=indent))
