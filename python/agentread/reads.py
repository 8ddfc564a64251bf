"""Where both servers' reads run, and how they are held to a deadline.

PDF, image and Office files, and notebooks with images (engine.runs_isolated) are read in worker processes
(workers.py): a read past its deadline kills its worker, and a crash in native code costs that read only. The
rest is read on a pool of threads, told to stop through an event (cancel.py) when cancelled or out of time. A
read that ends either way is answered with an error result the model can act on: `timeout` or `internal`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from agentread.cancel import Cancelled
from agentread.engine import Engine, ReadElsewhere
from agentread.request import ReadRequest
from agentread.result import ReadResult, error_result, result_from_json
from agentread.workers import Limits, ReaderFailed, WorkerDied, WorkerPool, supported as workers_supported
from agentread.workspace import Workspace

log = logging.getLogger("agentread")

# Reads in flight at once on threads. Readers are mostly CPU-bound Python, so more threads would not read faster;
# four keep one slow read (a huge text file scanned to its end) from holding up the quick reads queued behind it.
READ_WORKERS = 4

# A read still running after this long is answered with a `timeout` error and told to stop (in a worker process:
# the worker is killed): an agent must not hang on a hostile file. Generous, because paging a big PDF cold can
# take seconds on a slow machine. A read in a worker is timed from its start there, not while it waits its turn.
# AGENTREAD_READ_DEADLINE sets another (tests use short ones).
DEFAULT_READ_DEADLINE_SECONDS = 60.0
DEADLINE_VARIABLE = "AGENTREAD_READ_DEADLINE"

# How often a thread waiting on a worker process for a read looks whether it was told to stop.
STOP_POLL_SECONDS = 0.05

# Of an unexpected exception's message, what an `internal` error quotes: enough to tell what failed, short
# enough not to flood the model with a reader's dump.
MAX_QUOTED_CHARS = 200


def read_deadline(env=os.environ) -> float:
    """AGENTREAD_READ_DEADLINE in seconds; a value that is not a positive finite number keeps the default, with
    a warning."""
    raw = env.get(DEADLINE_VARIABLE)
    if raw is None:
        return DEFAULT_READ_DEADLINE_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if 0 < seconds < math.inf:
        return seconds
    log.warning("%s=%r is not a positive number of seconds; the default is used", DEADLINE_VARIABLE, raw)
    return DEFAULT_READ_DEADLINE_SECONDS


def timeout_result(name: str, deadline: float) -> ReadResult:
    log.warning("read of %s stopped after %g s", name, deadline)
    return error_result(name, "timeout", f"reading {name} took longer than {deadline:g} s and was stopped. Read "
                        "a smaller part of it (offset/limit, pages or cells), or fewer files.")


def internal_result(name: str, kind: str, message: str) -> ReadResult:
    return error_result(name, "internal", f"reading {name} failed unexpectedly ({kind}: "
                        f"{message[:MAX_QUOTED_CHARS]}). Try a smaller range, or read another file.")


class Reads:
    """A server's engine (isolating where there are workers), its worker processes and its read threads."""

    def __init__(self, workspace: Workspace) -> None:
        limits = Limits.from_environment()
        # Without workers (AGENTREAD_WORKERS=0, or Windows), every read is made in this process.
        self.pool = WorkerPool(limits) if limits.workers and workers_supported() else None
        self.engine = Engine(workspace, isolate=self.pool is not None)
        # A thread is held until its read really ends, so a read stopped at its deadline still counts here.
        self.executor = ThreadPoolExecutor(max_workers=READ_WORKERS, thread_name_prefix="read")
        self.deadline = read_deadline()

    def engine_for(self, workspace: Workspace) -> Engine:
        """An engine on another workspace that reads where this one does."""
        return Engine(workspace, isolate=self.engine.isolate)

    async def on_thread(self, name: str, fn: Callable, *args) -> Any:
        """fn(*args, stop) on a read thread, within the deadline (else a `timeout` result); `stop` is set when the
        call is cancelled or out of time, and the reader stops at its next checkpoint."""
        stop = threading.Event()
        work = asyncio.get_running_loop().run_in_executor(self.executor, fn, *args, stop)
        try:
            # A read cancelled or out of time before a thread takes it leaves the queue (the future is cancelled).
            return await asyncio.wait_for(work, self.deadline)
        except asyncio.TimeoutError:
            stop.set()
            return timeout_result(name, self.deadline)
        except asyncio.CancelledError:
            stop.set()
            raise

    async def in_worker(self, request: ReadRequest, real_path: str, buffer: Any, workspace: Workspace) -> dict:
        """The read in the worker process for `real_path`, as JSON: its result, or an error result when it ran
        out of time, its reader failed or its worker ended. InvalidParams if the reader refused the params."""
        try:
            return await self.pool.read(request, real_path, buffer, workspace, self.deadline)
        except asyncio.TimeoutError:
            return timeout_result(request.path, self.deadline).to_json()
        except ReaderFailed as exc:
            log.error("unexpected failure reading %s (in a worker process):\n%s", request.path, exc.trace)
            return internal_result(request.path, exc.name, str(exc)).to_json()
        except WorkerDied as exc:
            limits = self.pool.limits
            log.error("the worker process reading %s ended (%s)", request.path, exc.how)
            return error_result(request.path, "internal", f"reading {request.path} ended the worker process "
                                f"reading it ({exc.how}): a crash in a native library, or past its limits "
                                f"({limits.memory_mb:,} MB of memory, {limits.cpu_seconds} s of CPU). Nothing else "
                                "was affected. Read a smaller part of it (pages, offset/limit), or another "
                                "file.").to_json()

    def read_anywhere(self, engine: Engine, request: ReadRequest, live: Callable | None,
                      loop: asyncio.AbstractEventLoop, stop: threading.Event) -> ReadResult:
        """On a read thread, a read whose whole result is needed there: in a worker process where `engine` says,
        waited for until `stop` is set (then the worker is killed and Cancelled raised)."""
        try:
            return engine.read(request, live)
        except ReadElsewhere as elsewhere:
            buffer = live(elsewhere.path) if live else None
            work = asyncio.run_coroutine_threadsafe(
                self.in_worker(request, elsewhere.path, buffer, engine.workspace), loop)
            while True:
                try:
                    return result_from_json(work.result(STOP_POLL_SECONDS))
                except concurrent.futures.TimeoutError:
                    if stop.is_set():
                        work.cancel()  # the worker is killed, as for a cancelled read
                        raise Cancelled() from None

    def start(self) -> None:
        """Starts the worker processes in the background (on the running event loop)."""
        if self.pool:
            self.pool.start()

    def close(self) -> None:
        if self.pool:
            self.pool.close()
