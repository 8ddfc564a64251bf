"""The one read service both servers call: where a read runs, its deadline, cancellation, the
unchanged-read stub, the session's versions (versions.py), consent for the files of a many-files
read, and the answer to a reader that failed unexpectedly. The JSON-RPC and MCP servers keep only
their protocol: parsing, envelopes, asking the user.

A read is planned on a read thread (Engine.plan: the path resolved, the file sniffed). A plan whose
reader isolates (the readers' table) is read in a worker process (workers.py), awaited on the event
loop, which kills the worker at the deadline or when the read is cancelled; any other is read on
that same thread, told to stop through its event (cancel.py). Either way a read past its deadline is
answered `timeout`, and a reader's unexpected failure `internal`, with words the model can act on.

A front end without an event loop (the command line, which reads once and has no workers) calls the
same reads through `read_now` and `read_many_now`: on a thread of their own, with the same deadline
and answers. Nothing of asyncio or concurrent.futures is imported for them: those modules, like the
worker processes', cost a short-lived command more of its start than its read.
"""

from __future__ import annotations

import dataclasses
import importlib
import threading
import time
from collections import OrderedDict
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from agentread.cancel import Cancelled, read_deadline, run_cancellable
from agentread.engine import PROBLEMS, Engine, LiveLookup, Plan, answer, problem_result, run
from agentread.logs import logger
from agentread.request import InvalidParams, ReadRequest
from agentread.result import ReadError, ReadResult, error_result
from agentread.versions import ManyCall, Versions
from agentread.workspace import Refusal, Workspace, file_version

if TYPE_CHECKING:
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from agentread.many import ManyRequest, ManyResult
    from agentread.serve.session import Mark
    from agentread.serve.workers import WorkerPool


# Reads in flight at once on threads. Readers are mostly CPU-bound Python, so more threads would not
# read faster; four keep one slow read (a huge text file scanned to its end) from holding up the
# quick reads queued behind it.
READ_THREADS = 4

# A repeat read of a window of a small text file (no search, no outline) that read in under
# QUICK_READ_SECONDS before, unchanged since, is read on the event loop: it is answered even while
# every read thread is busy. Any window of such a file reads well within that time; the time only
# keeps out files on storage slow enough to hold up the loop. So is a repeat read of a file read in
# a worker process planned there, when its plan took under that time, unchanged since: it goes to
# its worker without a read thread's round trip.
QUICK_READ_BYTES = 1 << 20
QUICK_READ_SECONDS = 0.01
# A read on the event loop slower than this sends the file back to the threads: ten times what made
# it quick, so that a pause of a loaded machine during one read does not.
QUICK_READ_SLOW_SECONDS = 10 * QUICK_READ_SECONDS
QUICK_FILES = 256  # files remembered as quick, the least recently read dropped first

# Reads of many files run on threads of their own: one waits there for each file read in a worker,
# and must not hold a thread the single reads need. As many as there are read threads, which they
# shared before.
MANY_THREADS = READ_THREADS

# A read waits for a thread at most this many deadlines, then is answered `busy`: every read on a
# thread stops by its deadline, so only threads stuck in the system (a hung mount) make it wait so
# long.
THREAD_WAIT_DEADLINES = 3

# How often a thread waiting on a worker process for a read of many files looks whether it was
# told to stop.
STOP_POLL_SECONDS = 0.05

# The readers a server reads with on its own threads most, imported as it starts rather than on its
# first read of a text file or a folder (the command line imports the one it reads with).
THREAD_READERS = ("agentread.readers.text", "agentread.readers.delimited", "agentread.readers.directory")

# Of an unexpected exception's message, what an `internal` error quotes: enough to tell what failed,
# short enough not to flood the model with a reader's dump.
MAX_QUOTED_CHARS = 200

# What a client grants a file it names: the reasons (workspace.CONSENT_REASONS) its user approved
# reading it despite.
Grants = Callable[[str], frozenset]


def timeout_result(name: str, deadline: float, find: bool = False) -> ReadResult:
    logger().warning("read of %s stopped after %g s", name, deadline)
    if find:  # `limit` counts hits, not what is searched
        return error_result(name, "timeout", f"searching {name} took longer than {deadline:g} s and was stopped. "
                            "Search for a narrower pattern (plain text, or a regular expression holding a plain "
                            "word), or a part of it (offset to start further in, pages or cells).")
    return error_result(name, "timeout", f"reading {name} took longer than {deadline:g} s and was stopped. Read "
                        "a smaller part of it (offset/limit, pages or cells), or fewer files.")


def busy_result(name: str, what: str) -> ReadResult:
    logger().warning("read of %s refused: %s", name, what)
    return error_result(name, "busy", f"{name} was not read: {what}. Read other files (text, code) meanwhile, "
                        f"and read {name} again in a minute; or read a smaller part of the slow files.")


def internal_result(name: str, kind: str, message: str) -> ReadResult:
    return error_result(name, "internal", f"reading {name} failed unexpectedly ({kind}: "
                        f"{message[:MAX_QUOTED_CHARS]}). Try a smaller range, or read another file.")


def _worker_pool() -> WorkerPool | None:
    """The worker processes the environment asks for (workers.py); None for none."""
    from agentread.serve.workers import Limits, WorkerPool, supported

    limits = Limits.from_environment()
    return WorkerPool(limits) if limits.workers and supported() else None


def _settle(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)


def _until_stopped(stop: threading.Event, fn: Callable, args: tuple) -> Any:
    """fn(*args, stop), told to stop through `stop`; None when it was (nobody waits for the
    answer any more)."""
    try:
        return run_cancellable(stop, fn, *args, stop)
    except Cancelled:
        return None


def _failed(name: str, exc: Exception) -> ReadResult:
    """The answer to a read that raised `exc`: InvalidParams, a reader's own check of the params,
    propagates; anything else is a reader's bug, answered `internal`."""
    if isinstance(exc, InvalidParams):
        raise exc
    logger().error("unexpected failure reading %s", name, exc_info=exc)
    return internal_result(name, type(exc).__name__, str(exc))


class _QuickFiles:
    """The small text files whose last read was quick, and the files read in workers whose last plan
    was, by the absolute path a request named and whether it asked for raw text, with the file's
    version then. Looked up without touching the file system, so that only a file read before is
    looked at on the event loop (a hung mount there would stop every message)."""

    def __init__(self) -> None:
        self._files: OrderedDict[tuple, tuple] = OrderedDict()
        self._lock = threading.Lock()  # noted by threads, looked up on the event loop

    def version(self, workspace: Workspace, request: ReadRequest) -> tuple | None:
        """The version the file had when a read of it was last quick; None if it was not."""
        with self._lock:
            return self._files.get(_key(workspace, request))

    @staticmethod
    def still(plan: Plan, version: tuple) -> bool:
        """Whether the planned read is of the same small text file (or file read in a worker),
        unchanged, and not an editor's buffer."""
        return _quickable(plan) and file_version(plan.resolved.st) == version

    def note(self, workspace: Workspace, plan: Plan, seconds: float, on_loop: bool) -> None:
        """After a read of a small text file (or the plan of a read in a worker): one in under
        QUICK_READ_SECONDS is quick from now on. A slower one on a thread, which may have waited for
        the interpreter lock behind other reads, changes nothing; on the event loop, one over
        QUICK_READ_SLOW_SECONDS sends the file back to the threads."""
        key = _key(workspace, plan.request)
        if key is None:
            return
        quickable = _quickable(plan)
        with self._lock:
            if quickable and seconds < QUICK_READ_SECONDS:
                self._files.pop(key, None)
                self._files[key] = file_version(plan.resolved.st)
                if len(self._files) > QUICK_FILES:
                    self._files.popitem(last=False)
            elif not quickable or (on_loop and seconds >= QUICK_READ_SLOW_SECONDS):
                self._files.pop(key, None)


def _quickable(plan: Plan) -> bool:
    """A small text file, or a file on disk read in a worker process (whose plan alone is made
    where it runs)."""
    return _small_text(plan) or (plan.isolated and plan.buffer is None)


def _small_text(plan: Plan) -> bool:
    """A text file on disk (not an editor's buffer) of at most QUICK_READ_BYTES, read by a window
    (not parsed whole: that read is a worker's)."""
    return (plan.kind in ("text", "delimited") and plan.buffer is None and not plan.isolated
            and plan.resolved.st.st_size <= QUICK_READ_BYTES)


def _key(workspace: Workspace, request: ReadRequest) -> tuple | None:
    """What a quick file is known by; None for a read that is no window of lines (a search, an
    outline), whose time a window's does not foretell: it is never read on the event loop."""
    if request.find is not None or request.outline:
        return None
    try:
        return workspace.absolute(request.path), request.raw
    except ReadError:
        return None


class _Threads:
    """A pool of read threads, made on first use (a front end that reads through read_now has
    none), and how many calls handed to it have not ended or left its queue: while fewer than its
    threads, a call starts at once. A thread is held until its read really ends, so a read stopped
    at its deadline still counts here."""

    def __init__(self, size: int, name: str) -> None:
        self.size, self.name, self.handed = size, name, 0
        self._lock = threading.Lock()

    @cached_property
    def executor(self) -> ThreadPoolExecutor:
        from concurrent.futures import ThreadPoolExecutor

        return ThreadPoolExecutor(max_workers=self.size, thread_name_prefix=self.name)

    def take(self) -> bool:
        """One more call handed to the pool; whether it waits for a thread (every one is taken)."""
        with self._lock:
            self.handed += 1
            return self.handed > self.size

    def release(self, _=None) -> None:
        with self._lock:
            self.handed -= 1

    def shutdown(self) -> None:
        if "executor" in self.__dict__:  # made
            self.executor.shutdown(wait=False, cancel_futures=True)


class _Planned(NamedTuple):
    """A read planned on a thread for a worker process, and the stub session's mark of it."""
    plan: Plan
    mark: Mark | None


class ReadService:
    """A front end's reads: its engine on its workspace, its worker processes, its read threads,
    its stub session, its versions (a server's in memory; the command line passes its own)."""

    def __init__(self, workspace: Workspace, stub: bool = False, workers: bool = True,
                 versions: Versions | None = None) -> None:
        # Without workers (AGENTREAD_WORKERS=0, Windows, or the command line, which must start
        # quickly), every read is made on a read thread.
        self.pool: WorkerPool | None = _worker_pool() if workers else None
        self.engine = Engine(workspace)
        self.deadline = read_deadline()
        self.session = None
        if stub:
            from agentread.serve.session import ReadSession

            self.session = ReadSession()
        self.quick = _QuickFiles()
        self.threads = _Threads(READ_THREADS, "read")
        self.many_threads = _Threads(MANY_THREADS, "read-many")
        # This session's versions, and the texts it diffs against.
        self.versions = versions if versions is not None else Versions()

    @property
    def workspace(self) -> Workspace:
        return self.engine.workspace

    def start(self) -> None:
        """A server's start: its thread readers imported, its worker processes started in the
        background (on the running event loop)."""
        for module in THREAD_READERS:
            importlib.import_module(module)
        if self.pool:
            self.pool.start()

    def close(self) -> None:
        self.many_threads.shutdown()
        if self.pool:
            self.pool.close()
        self.versions.flush()

    # What the front ends call.

    async def read(self, request: ReadRequest, live: LiveLookup | None = None) -> ReadResult:
        """One read, answered whatever happens to it; InvalidParams if its reader
        refuses the params."""
        # Every read with the stub is compared with what the session was shown, and one with `since`
        # may be answered with a diff: neither is made on the event loop.
        version = None if self.session or request.since else self.quick.version(self.workspace, request)
        plan = None
        if version is not None:
            planning = time.perf_counter()
            try:
                plan = self.engine.plan(request, live)
            except PROBLEMS as exc:
                return problem_result(request, exc)
            if _QuickFiles.still(plan, version) and (self.pool or not plan.isolated):
                if plan.isolated:
                    self.quick.note(self.workspace, plan, time.perf_counter() - planning, on_loop=True)
                    return self.versions.answer(plan, await self._in_worker(plan))
                started = time.perf_counter()
                result = answer(request, lambda: run(plan))
                self.quick.note(self.workspace, plan, time.perf_counter() - started, on_loop=True)
                return self.versions.answer(plan, result)
        planned = await self._on_thread(request.path, self._here, request, live, None, plan,
                                        find=request.find is not None)
        if not isinstance(planned, _Planned):
            return planned
        result = self.versions.answer(planned.plan, await self._in_worker(planned.plan))
        if self.session:
            self.session.keep(planned.plan, planned.mark, result)
        return result

    async def read_many(self, request: ManyRequest, grants: Grants, live: LiveLookup | None = None
                        ) -> ManyResult | ReadResult:
        """A read of many files, each with the consent `grants` gives its path as listed. A
        ReadResult when the whole call failed (its deadline)."""
        import asyncio

        return await self._on_thread("the files listed", self._many, request, grants, live,
                                     asyncio.get_running_loop(), threads=self.many_threads)

    def read_now(self, request: ReadRequest, live: LiveLookup | None = None) -> ReadResult:
        """`read`, without an event loop, by a service without worker processes: the same answers
        (its deadline, `internal`), the read made on a thread of its own while this one waits."""
        return self._on_own_thread(request.path, self._here, request, live, None, None,
                                   find=request.find is not None)

    def read_many_now(self, request: ManyRequest, grants: Grants, live: LiveLookup | None = None
                      ) -> ManyResult | ReadResult:
        """`read_many` as `read_now` makes `read`."""
        return self._on_own_thread("the files listed", self._many, request, grants, live, None)

    async def check(self, paths: list[str] | ManyRequest) -> list[Refusal | None]:
        """The consent rule, for a client to ask its user before it reads: for each path (or each
        file a read of many lists, its globs expanded), what would refuse a read of it without
        approval (no reasons: nothing), or None for a glob (its matches are read inside the
        workspace only) or a path that names no file (refused for that). On a read thread: it looks
        at the file system."""
        from agentread.many import expand

        def refusals(stop: threading.Event) -> list[Refusal | None]:
            names = paths if isinstance(paths, list) else [r.path for r in expand(self.workspace, paths)]
            out: list[Refusal | None] = []
            for raw in names:
                try:
                    out.append(None if self.workspace.is_glob(raw) else self.workspace.refusal(raw))
                except ReadError:
                    out.append(None)
            return out

        return await self._on_thread("the paths checked", refusals)

    # Where reads run.

    def _many(self, request: ManyRequest, grants: Grants, live: LiveLookup | None,
              loop: asyncio.AbstractEventLoop | None, stop: threading.Event) -> ManyResult:
        """On a read thread, a read of many files; `loop` runs the reads made in worker
        processes (None: there are none)."""
        from agentread.many import read_many

        # For the stub, only files the reply shows whole count as read: read_many reads each file
        # whole, then cuts some or leaves them out to fit the reply.
        held: list = []
        call = ManyCall()

        def one(req: ReadRequest) -> ReadResult:
            req = dataclasses.replace(req, consent=req.consent | grants(req.path))
            return self._one_waiting(req, live, held, call, loop, stop)

        reply = read_many(self.engine, request, one)
        if self.session:
            self.session.remember(held, [f.result for f in reply.files if f.state == "whole" and not f.images_dropped])
        self.versions.settle(call, [f.result for f in reply.files if f.result is not None])
        return reply

    def _here(self, request: ReadRequest, live: LiveLookup | None, held: list | None, plan: Plan | None,
              stop: threading.Event, call: ManyCall | None = None) -> ReadResult | _Planned:
        """On a read thread: the read planned (unless it was), and made here unless a worker
        process reads it; `call` as Versions.answer takes it."""
        if plan is None:
            planning = time.perf_counter()
            try:
                plan = self.engine.plan(request, live)
            except PROBLEMS as exc:
                return problem_result(request, exc)
            if plan.isolated and self.pool:
                self.quick.note(self.workspace, plan, time.perf_counter() - planning, on_loop=False)
        mark = None
        if self.session:
            seen = self.session.lookup(plan)
            if isinstance(seen, ReadResult):
                return seen
            if seen is not None:
                mark, plan = seen, dataclasses.replace(plan, version=seen.version)  # not hashed again by run
        if plan.isolated and self.pool:
            return _Planned(plan, mark)
        started = time.perf_counter()
        result = answer(request, lambda: run(plan))
        self.quick.note(self.workspace, plan, time.perf_counter() - started, on_loop=False)
        result = self.versions.answer(plan, result, call)
        if self.session:
            self.session.keep(plan, mark, result, held)
        return result

    def _one_waiting(self, request: ReadRequest, live: LiveLookup | None, held: list, call: ManyCall,
                     loop: asyncio.AbstractEventLoop | None, stop: threading.Event) -> ReadResult:
        """On a read thread, a read whose result is needed there (one file of many): a worker's read
        is waited for until `stop` is set (then the worker is killed and Cancelled raised)."""
        planned = self._here(request, live, held, None, stop, call)
        if not isinstance(planned, _Planned):
            return planned
        import asyncio
        import concurrent.futures

        work = asyncio.run_coroutine_threadsafe(self._in_worker(planned.plan), loop)
        while True:
            try:
                result = work.result(STOP_POLL_SECONDS)
                break
            except concurrent.futures.TimeoutError:
                if stop.is_set():
                    work.cancel()  # the worker is killed, as for a cancelled read
                    raise Cancelled() from None
        result = self.versions.answer(planned.plan, result, call)
        if self.session:
            self.session.keep(planned.plan, planned.mark, result, held)
        return result

    async def _on_thread(self, name: str, fn: Callable, *args, threads: _Threads | None = None,
                         find: bool = False) -> Any:
        """fn(*args, stop) on a read thread, within the deadline from its start (else a `timeout`
        result); `stop` is set when the call is cancelled or out of time, and the reader stops at
        its next checkpoint. A reader's unexpected failure is an `internal` result; InvalidParams, a
        reader's own check of the params, propagates."""
        import asyncio

        stop = threading.Event()
        loop = asyncio.get_running_loop()
        threads = threads or self.threads
        began = loop.create_future() if threads.take() else None  # else a thread is free for it now

        def call() -> Any:
            if began is not None:
                loop.call_soon_threadsafe(_settle, began)
            return _until_stopped(stop, fn, args)

        handed = threads.executor.submit(call)
        handed.add_done_callback(threads.release)  # when the call has ended, or left the queue
        work = asyncio.wrap_future(handed, loop=loop)
        try:
            if began is not None:
                await asyncio.wait([began, work], timeout=THREAD_WAIT_DEADLINES * self.deadline,
                                   return_when=asyncio.FIRST_COMPLETED)
            if began is not None and not began.done() and not work.done():
                # Leaves the queue (the future is cancelled), or stops at its first checkpoint.
                stop.set()
                work.cancel()
                return busy_result(name, f"every read thread stayed busy for "
                                   f"{THREAD_WAIT_DEADLINES * self.deadline:g} s")
            return await asyncio.wait_for(work, self.deadline)
        except asyncio.TimeoutError:
            stop.set()
            return timeout_result(name, self.deadline, find)
        except asyncio.CancelledError:
            stop.set()
            work.cancel()  # a read cancelled before a thread takes it leaves the queue
            raise
        except Exception as exc:  # noqa: BLE001 - one reader's bug must not take the server down
            return _failed(name, exc)

    def _on_own_thread(self, name: str, fn: Callable, *args, find: bool = False) -> Any:
        """fn(*args, stop) as `_on_thread` runs it, on a thread started for it, waited for here
        without an event loop; a thread of its own waits for no other read, so never `busy`."""
        stop = threading.Event()
        outcome: list = []  # (True, what fn returned) or (False, what it raised)

        def call() -> None:
            try:
                outcome.append((True, _until_stopped(stop, fn, args)))
            except Exception as exc:  # noqa: BLE001 - answered on the waiting thread
                outcome.append((False, exc))

        thread = threading.Thread(target=call, name="read", daemon=True)
        thread.start()
        thread.join(self.deadline)
        if not outcome:  # still reading: told to stop at its next checkpoint, and not waited for
            stop.set()
            return timeout_result(name, self.deadline, find)
        done, value = outcome[0]
        return value if done else _failed(name, value)

    async def _in_worker(self, plan: Plan) -> ReadResult:
        """The planned read in the worker process for its file: its result, or an error result when
        it ran out of time, its reader failed or its worker ended. InvalidParams if the reader
        refused the params."""
        import asyncio

        from agentread.serve.workers import ReaderFailed, ReadersBusy, WorkerDied

        name = plan.request.path
        try:
            return await self.pool.read(plan, self.deadline)
        except asyncio.TimeoutError:
            return timeout_result(name, self.deadline, plan.request.find is not None)
        except ReadersBusy as exc:
            return busy_result(name, f"all {exc.reading} reader processes for PDF, image and Office files are "
                               "busy with slow files")
        except ReaderFailed as exc:
            logger().error("unexpected failure reading %s (in a worker process):\n%s", name, exc.trace)
            return internal_result(name, exc.name, str(exc))
        except WorkerDied as exc:
            limits = self.pool.limits
            logger().error("the worker process reading %s ended (%s)", name, exc.how)
            return error_result(name, "internal", f"reading {name} ended the worker process reading it "
                                f"({exc.how}): a crash in a native library, or past its limits "
                                f"({limits.memory_mb:,} MB of memory, {limits.cpu_seconds} s of CPU). Nothing else "
                                "was affected. Read a smaller part of it (pages, offset/limit), or another file.")
