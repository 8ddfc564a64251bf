"""Worker processes for the readers that call native code or can run away on a hostile file.

The server reads PDFs, images, Office files and notebooks with attachments in these (the readers'
table says which), and any large file a read parses whole (Row.parse_bytes), so that a crash in a
native library (PDFium, libjpeg, libpng, libwebp, lxml, cairo), a page PDFium spends a minute on,
or a reader whose memory the file decides costs one worker process, never the server or the other
reads in flight.

Each worker is a multiprocessing process, forked from a process that has imported the readers
(multiprocessing's forkserver), so that a fresh worker is ready in milliseconds. The server sends it
one request at a time over a socket pair, and takes the answer off it on its event loop as it
arrives, never waiting for more than is there, so that a worker stalled mid-reply cannot hold up
the server (nor does a thread wait for each answer: that hand-off was a large share of a small
read). A file is read by the same worker (a hash of its real path) so that what a worker keeps
warm, the open PDF documents, serves the next read of it, unless that worker is busy: then by an
idle one. One more worker, started with the others, is held back for small reads (small_read): no
other read runs in it, and a small read waiting for a worker is handed the next one freed before
any other read, so that a small read never waits behind slow ones. When every worker a read may use
has been busy with one read for SPARE_AFTER_SECONDS, the pool starts a spare (at most
MAX_SPARE_WORKERS, each ended once its read is done and nobody waits); when every one, spares too,
has been for half the deadline (BUSY_AFTER_DEADLINE_SHARE), a read is answered that the readers are
busy (ReadersBusy). So slow files never delay a quick one for long, and ordinary reads still queue.
The OS holds each worker to its address space (AGENTREAD_WORKER_MEMORY_MB) and each read to its
CPU time (AGENTREAD_WORKER_CPU_SECONDS); the server kills a worker, the one for small reads too, at
a read's deadline or when the read is cancelled, and starts a fresh one, on which the reads waiting
for it then run. A worker ends with the server, however the server ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import hashlib
import logging
import multiprocessing
import os
import pickle
import select
import signal
import socket
import struct
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any

from agentread.engine import Plan, answer, run
from agentread.readers import READERS
from agentread.request import PAGE_RANGE, InvalidParams
from agentread.result import ReadResult

log = logging.getLogger("agentread")

# Worker processes. A read of PDF, image or Office content takes one core while it runs: two fit a
# 2-core laptop, and a slow read holds up only the files routed to its worker. 0 reads everything
# in the server.
DEFAULT_WORKERS = 2

# Address space of a worker. The largest image the readers accept (MAX_IMAGE_PIXELS, 400 MB decoded)
# and a 512 MB Office or PDF file read whole fit; a reader asked for more fails its read
# (MemoryError, or a crash in native code), not the machine.
DEFAULT_MEMORY_MB = 3072

# CPU time one read may use, enforced by the OS (SIGXCPU ends the worker). The deadline usually
# stops a read first; this stops one whose threads burn several cores, or a worker the server
# failed to stop.
DEFAULT_CPU_SECONDS = 120

# A read waiting for a worker starts a spare once every worker has been this long on its read: a
# PDF page or an image is read well within it, so spares start only beside slow reads.
SPARE_AFTER_SECONDS = 1.0
# With every spare started, a read waiting is answered that the readers are busy once every worker
# has been on its read for this share of the read deadline: files that slow are likely to run to it,
# while a machine merely loaded with ordinary reads never gets there.
BUSY_AFTER_DEADLINE_SHARE = 0.5

# A spare started beside the others when all a read may use are busy with slow reads: small reads
# have a worker of their own, so one is enough, and with it the pool has at most four processes, as
# many as before there was one for small reads, each held to the memory limit; past it, a read is
# answered that the readers are busy rather than queued behind files that may take a minute each.
MAX_SPARE_WORKERS = 1

# What a small read is (small_read), which the worker held back for them reads. Its files' size
# bounds its work: PDFium extracts at most MAX_PDF_PAGES pages of a PDF and the image reader decodes
# at most MAX_IMAGE_PIXELS, so a file this size is read well within SPARE_AFTER_SECONDS unless it is
# hostile (a page PDFium spends seconds on); then it holds that worker, and the small reads after it
# use the others as every read does.
SMALL_READ_BYTES = 1 << 20
# The kinds read in workers whose work the file's size bounds: an Office file or an archive unpacks
# members up to a thousand times its size.
SMALL_READ_KINDS = frozenset({"pdf", "image", "notebook", "live_notebook"})
# A read of this many pages of a PDF of any size is small too: PDFium reads from the file only what
# those pages need (a 2,000-page manual's page is read in milliseconds).
SMALL_READ_PAGES = 1

# Workers run at this niceness: a read that keeps a worker's core busy (a hostile PDF page) yields
# the CPU to the server's own quick reads (text, notebooks) on a machine with few cores.
WORKER_NICENESS = 10

# Imported once by the process that workers are forked from, so that a fresh worker does not
# import them: every module a worker's read, find or outline calls (a notebook with images, and a
# large notebook or text file parsed whole, are read in one too), and the libraries they import on
# first use. pypdfium2 initialises PDFium when imported; PDFium starts no thread of its own, so a
# worker forked after it reads PDFs as one that imported it itself.
PRELOAD = ["agentread.engine", "agentread.find",
           *sorted({name.split(":")[0] for row in READERS.values() if row.isolated or row.parse_bytes
                    for name in (row.reader, row.search, row.outliner) if name}),
           "PIL.Image", "lxml.etree", "pypdfium2"]

# Tests show that a crash in native code costs only its worker: with this set, a worker crashes as a
# fault in a native library would when asked to read a file of that name.
CRASH_FOR_TESTS = "AGENTREAD_TEST_CRASH_FILE"

# Of a reader's exception message, what a worker sends back: the server quotes less; this
# bounds the pipe.
MAX_SENT_MESSAGE_CHARS = 1000

# How a message is framed on the socket between the server and a worker: its length, then its
# pickle.
_LENGTH = struct.Struct("!Q")
# The most of a reply taken off the socket in one call on the event loop: about what a socket pair
# holds at once (Linux's default buffer), so that a call allocates little more than it takes; a
# large reply (a page's picture) comes in several calls, with other messages handled between them.
RECEIVE_CHUNK_BYTES = 256 << 10

# How long a worker that was told to end (or has ended) is waited for before it is killed; then it
# is waited for until it is gone, so that its process and pipe are always released.
EXIT_WAIT_SECONDS = 5


@dataclass(frozen=True)
class Limits:
    workers: int = DEFAULT_WORKERS
    memory_mb: int = DEFAULT_MEMORY_MB
    cpu_seconds: int = DEFAULT_CPU_SECONDS

    @classmethod
    def from_environment(cls, env=os.environ) -> Limits:
        """AGENTREAD_WORKERS, AGENTREAD_WORKER_MEMORY_MB, AGENTREAD_WORKER_CPU_SECONDS; a value that
        is not a whole number (at least 1; 0 workers allowed) keeps the default, with a warning."""
        values = {}
        for field, name, least in (("workers", "AGENTREAD_WORKERS", 0), ("memory_mb", "AGENTREAD_WORKER_MEMORY_MB", 1),
                                   ("cpu_seconds", "AGENTREAD_WORKER_CPU_SECONDS", 1)):
            raw = env.get(name)
            if raw is None:
                continue
            if raw.strip().isdigit() and int(raw) >= least:
                values[field] = int(raw)
            else:
                log.warning("%s=%r is not a whole number of at least %d; the default is used", name, raw, least)
        return cls(**values)


class WorkerDied(Exception):
    """The worker process ended during the read: a crash in native code, or one of its limits.
    `how`: by which signal or with which exit status."""

    def __init__(self, how: str):
        super().__init__(how)
        self.how = how


class ReadersBusy(Exception):
    """Every worker, spares included, is busy with another read: `reading` is how many."""

    def __init__(self, reading: int):
        super().__init__(reading)
        self.reading = reading


class ReaderFailed(Exception):
    """The reader raised in the worker: `name` is the exception's type, `trace` its
    traceback there."""

    def __init__(self, name: str, message: str, trace: str):
        super().__init__(message)
        self.name, self.trace = name, trace


def supported() -> bool:
    """Whether worker processes can run here: they are forked from a preloaded server process and
    held to limits by setrlimit, which POSIX systems have (Linux, macOS) and Windows does not."""
    return "forkserver" in multiprocessing.get_all_start_methods()


class WorkerPool:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.context = multiprocessing.get_context("forkserver")
        self.context.set_forkserver_preload(PRELOAD)
        self._workers = [_Worker(self) for _ in range(limits.workers)]
        self._small = _Worker(self)  # held back for small reads
        self._spares: list[_Worker] = []
        # Reads waiting for a worker, each with whether it is small: small ones first, then first
        # come first served.
        self._waiting: list[tuple[asyncio.Future, bool]] = []
        self.server = os.getpid()  # what workers end with

    async def read(self, plan: Plan, deadline: float) -> ReadResult:
        """The planned read's result, from the worker for its file (or another, when that one is
        busy), within `deadline` seconds of its start there (TimeoutError; the worker is killed).
        ReadersBusy if every worker stays busy; WorkerDied if the worker ended during it;
        InvalidParams or ReaderFailed if the reader raised."""
        worker = await self._worker_for(route(plan.resolved.path, len(self._workers)), small_read(plan),
                                        BUSY_AFTER_DEADLINE_SHARE * deadline)
        try:
            return await worker.read((plan, self.limits.cpu_seconds), deadline)
        finally:
            self._release(worker)

    async def _worker_for(self, preferred: int, small: bool, busy_after: float) -> _Worker:
        """A worker for a read, now busy: the preferred one, an idle one (the one held back for
        small reads only for a small one), the first to come free, or a spare; ReadersBusy when
        every one stays on a slow read."""
        loop = asyncio.get_running_loop()
        while True:
            worker = self._take(preferred, small)
            if worker is not None:
                return worker
            busy = self._workers + self._spares + ([self._small] if small else [])
            youngest = min(loop.time() - w.since for w in busy)  # the read that started last
            if len(self._spares) < MAX_SPARE_WORKERS:
                if youngest >= SPARE_AFTER_SECONDS:
                    worker = _Worker(self)
                    self._spares.append(worker)
                    return worker.claim()
                wait = SPARE_AFTER_SECONDS - youngest
            elif youngest >= busy_after:
                raise ReadersBusy(len(busy))
            else:
                wait = busy_after - youngest
            worker = await self._freed(wait, small)
            if worker is not None:
                return worker

    def _take(self, preferred: int, small: bool) -> _Worker | None:
        """The worker for a file if it is idle, else (for a small read) the one held back for
        small reads, else any idle one, now busy; None if all are busy."""
        for worker in [self._workers[preferred], *([self._small] if small else []), *self._workers, *self._spares]:
            if not worker.busy:
                return worker.claim()
        return None

    async def _freed(self, seconds: float, small: bool) -> _Worker | None:
        """The first worker to come free within `seconds`, handed over busy; None if none does."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append((waiter, small))
        try:
            await asyncio.wait([waiter], timeout=seconds)
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # handed a worker as the read was cancelled
                self._release(waiter.result())
            raise
        finally:
            if (waiter, small) in self._waiting:
                self._waiting.remove((waiter, small))
            waiter.cancel()
        return waiter.result() if waiter.done() and not waiter.cancelled() else None

    def _release(self, worker: _Worker) -> None:
        """A read is done with `worker`: it goes to the first small read waiting, else (unless it is
        held back for small reads) to the first read waiting, else it is idle (a spare ends)."""
        for small in (True, False):
            if not small and worker is self._small:
                break
            for entry in self._waiting:
                waiter, is_small = entry
                if is_small == small and not waiter.done():
                    self._waiting.remove(entry)
                    waiter.set_result(worker.claim())
                    return
        worker.busy = False
        if worker in self._spares:
            self._spares.remove(worker)
            worker.kill()

    def start(self) -> None:
        """Starts the workers in the background (on the event loop), so that they are ready by the
        first read that needs one: the first starts the process they are forked from, which imports
        the readers (the slow part of starting)."""
        for worker in [*self._workers, self._small]:
            worker.begin()

    def close(self) -> None:
        """Ends every worker at once, whatever it is reading (the server is ending)."""
        for worker in [*self._workers, self._small, *self._spares]:
            worker.kill()
        self._workers, self._spares = [], []


def small_read(plan: Plan) -> bool:
    """Whether a read is small, and may run in the worker held back for small reads: no search
    (it reads every page or cell), of a PDF, image or notebook of at most SMALL_READ_BYTES, or of
    at most SMALL_READ_PAGES pages of a PDF of any size."""
    request = plan.request
    if request.find is not None or plan.kind not in SMALL_READ_KINDS:
        return False
    if plan.resolved.st.st_size <= SMALL_READ_BYTES:
        return True
    pages = _pages_asked(request.pages)
    return plan.kind == "pdf" and not request.outline and pages is not None and pages <= SMALL_READ_PAGES


def _pages_asked(spec: str | None) -> int | None:
    """How many pages `pages` names ("3": 1, "10-20": 11); None for none, an open range ("10-") or
    one the reader refuses."""
    match = PAGE_RANGE.match(spec or "")
    if not match or match[2] == "":
        return None
    return int(match[2]) - int(match[1]) + 1 if match[2] else 1


def route(real_path: str, workers: int) -> int:
    """The worker that reads a file: always the same one for a path (a stable hash, not Python's
    salted one)."""
    digest = hashlib.blake2b(real_path.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little") % workers


class _Worker:
    def __init__(self, pool: WorkerPool) -> None:
        self.pool = pool
        self.busy = False  # one read at a time: the pool hands it out
        self.since = 0.0  # when its read began (the event loop's clock)
        self.process: multiprocessing.process.BaseProcess | None = None
        self.connection: socket.socket | None = None  # the server's end of the socket pair to the process
        self.starting: asyncio.Future | None = None

    def claim(self) -> _Worker:
        self.busy, self.since = True, asyncio.get_running_loop().time()
        return self

    async def read(self, args: tuple, deadline: float) -> ReadResult:
        request = _framed(args)
        connection = await self._ready()
        try:
            connection.sendall(request)
        except OSError:  # it ended while idle (killed from outside): this read runs on a fresh one
            self.kill()
            connection = await self._ready()
            connection.sendall(request)
        loop = asyncio.get_running_loop()
        received = loop.create_future()  # the whole reply, or None: the worker ended first
        loop.add_reader(connection.fileno(), _take, connection, bytearray(), received)
        late = loop.call_later(deadline, _settle, received, asyncio.TimeoutError())
        try:
            data = await received
        except (asyncio.TimeoutError, asyncio.CancelledError):
            self.kill()  # the next read, maybe one waiting its turn, starts a fresh worker
            raise
        finally:
            late.cancel()
            if self.connection is connection:
                loop.remove_reader(connection.fileno())
        if data is None:
            raise WorkerDied(await self._ended())
        reply = pickle.loads(data)
        if reply[0] == "raised":
            name, message, trace = reply[1:]
            raise InvalidParams(message) if name == "InvalidParams" else ReaderFailed(name, message, trace)
        return reply[1]

    async def _ended(self) -> str:
        """How the worker ended ("signal SIGSEGV", "exit status 1"), once it has; it is
        then forgotten."""
        process, connection, self.process, self.connection = self.process, self.connection, None, None
        connection.close()
        code = await asyncio.get_running_loop().run_in_executor(None, _exit_code, process)
        if code is None:
            return "an unknown way"
        if code >= 0:
            return f"exit status {code}"
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"

    def begin(self) -> None:
        """Starts the worker in the background, unless it is started or starting."""
        if self.process is None and self.starting is None:
            self.starting = asyncio.get_running_loop().run_in_executor(None, self._start)

    async def _ready(self):
        if self.process is None:
            self.begin()
            try:
                # Shielded: a read cancelled while the worker starts leaves it starting for
                # the next read.
                self.process, self.connection = await asyncio.shield(self.starting)
            except asyncio.CancelledError:
                raise
            except BaseException:
                self.starting = None
                raise
            self.starting = None
        return self.connection

    def _start(self) -> tuple:
        """On a thread: starting the first worker starts the forkserver, which imports PRELOAD
        (the slow part)."""
        ours, theirs = socket.socketpair()
        process = self.pool.context.Process(target=_serve, name="agentread-worker", daemon=True,
                                            args=(theirs, self.pool.limits.memory_mb << 20, self.pool.server))
        process.start()
        theirs.close()
        return process, ours

    def kill(self) -> None:
        """Ends the worker now, whatever it is doing; the next read starts a fresh one."""
        process, connection, self.process, self.connection = self.process, self.connection, None, None
        if process is not None:
            if process.exitcode is None:  # its group: a program it runs (Tesseract) ends with it
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
            process.kill()  # in case it had yet to make its group
            with contextlib.suppress(RuntimeError, ValueError):  # no loop (the server is ending), or not watched
                asyncio.get_running_loop().remove_reader(connection.fileno())
            connection.close()
            # Collected on a thread: the process is gone at once, its exit status follows.
            threading.Thread(target=_exit_code, args=(process,), daemon=True).start()


def _settle(future: asyncio.Future, error: BaseException | None) -> None:
    if not future.done():
        future.set_exception(error) if error else future.set_result(None)


def _framed(message: Any) -> bytes:
    """`message` as it goes over the socket pair: its length, then its pickle."""
    data = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(data)) + data


def _take(connection: socket.socket, taken: bytearray, received: asyncio.Future) -> None:
    """On the event loop, when the worker's socket is readable: what has arrived of its reply added
    to `taken`, without waiting for more; `received` set to the reply's pickle once it is whole, or
    to None when the worker ended first."""
    if received.done():
        return
    try:
        chunk = connection.recv(RECEIVE_CHUNK_BYTES, socket.MSG_DONTWAIT)
    except (BlockingIOError, InterruptedError):
        return
    except OSError:
        chunk = b""
    if not chunk:
        received.set_result(None)
        return
    taken += chunk
    if len(taken) >= _LENGTH.size:
        (size,) = _LENGTH.unpack_from(taken)
        if len(taken) >= _LENGTH.size + size:
            received.set_result(bytes(memoryview(taken)[_LENGTH.size:_LENGTH.size + size]))


def _received(connection: socket.socket) -> Any:
    """In a worker: the next message, waited for; None once the server has closed its end."""
    header = _exactly(connection, _LENGTH.size)
    data = header and _exactly(connection, _LENGTH.unpack(header)[0])
    return None if data is None else pickle.loads(data)


def _exactly(connection: socket.socket, size: int) -> bytes | None:
    """`size` bytes from the socket, waited for; None if it closes first."""
    data = bytearray()
    while len(data) < size:
        chunk = connection.recv(min(size - len(data), RECEIVE_CHUNK_BYTES))
        if not chunk:
            return None
        data += chunk
    return bytes(data)


def _exit_code(process) -> int | None:
    """How the process ended (as Process.exitcode), once it has; then it is released. One that does
    not end within EXIT_WAIT_SECONDS is killed and waited for."""
    process.join(EXIT_WAIT_SECONDS)
    code = process.exitcode
    if code is None:
        process.kill()
        process.join()
    process.close()
    return code


# --- in the worker process
# ----------------------------------------------------------------------------------


def _serve(connection, memory_bytes: int, server: int) -> None:
    """The worker's life: set up, then read each request the server sends until it closes its end
    of the socket pair."""
    os.setpgrp()  # a group of its own, which the server kills whole
    os.nice(WORKER_NICENESS)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # not the server's input
    os.dup2(2, 1)  # stdout is the server's protocol channel: what a library prints goes to stderr
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in a terminal is the server's to handle
    threading.Thread(target=_end_with, args=(server,), name="end-with-server", daemon=True).start()
    _set_limit("RLIMIT_CORE", 0)  # a crash leaves no core file behind
    _set_limit("RLIMIT_AS", memory_bytes)
    while True:
        try:
            args = _received(connection)
        except OSError:
            args = None
        if args is None:  # the server has closed its end
            return
        try:
            reply = _framed(("result", _read(*args)))
        except Exception as exc:  # noqa: BLE001 - the server answers for it; the worker goes on
            reply = _framed(("raised", type(exc).__name__, str(exc)[:MAX_SENT_MESSAGE_CHARS], traceback.format_exc()))
        try:
            connection.sendall(reply)
        except OSError:  # the server has gone, or killed this read
            return


def _end_with(server: int) -> None:
    """Ends this worker when the server ends, however it ends: a server that is killed cannot end
    its workers, and an idle one would otherwise wait for work forever."""
    try:
        select.select([os.pidfd_open(server)], [], [])  # readable once the process has ended (Linux)
    except (AttributeError, OSError):  # no pidfd: look every second
        while _alive(server):
            time.sleep(1)
    os._exit(0)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):  # gone, or its number now another user's process
        return False
    return True


def _set_limit(name: str, value: int) -> None:
    """Sets a resource limit's soft value to `value` (never above its hard one); a limit the system
    does not let a process set is left as it is."""
    import resource

    try:
        _, hard = resource.getrlimit(getattr(resource, name))
        resource.setrlimit(getattr(resource, name), (value if hard == resource.RLIM_INFINITY else min(value, hard),
                                                     hard))
    except (ValueError, OSError):
        log.warning("the worker's %s could not be set", name)


def _read(plan: Plan, cpu_seconds: int) -> ReadResult:
    """The planned read, as the server resolved and sniffed it: the file is opened again, checked to
    be the one it resolved, and read."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    _set_limit("RLIMIT_CPU", int(usage.ru_utime + usage.ru_stime) + 1 + cpu_seconds)  # so far, and this read's
    crash = os.environ.get(CRASH_FOR_TESTS)
    if crash and os.path.basename(plan.request.path) == crash:
        ctypes.string_at(0)  # a read of address 0: SIGSEGV
    return answer(plan.request, lambda: run(plan))
