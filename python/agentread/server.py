"""The JSON-RPC server on stdio (pygls): protocol handlers only, every read is the engine's.

Reads run in worker threads, which answer them, so the event loop keeps reading messages (`$/cancelRequest`
included); a cancelled read is told through its stop event and stops at its next checkpoint. Repeat reads of a
small text file that read quickly before run on the event loop itself (QUICK_READ_BYTES).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import stat
import sys
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any
from urllib.parse import unquote

import orjson
from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams, JsonRpcRequestCancelled
from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer
from pygls.protocol import (JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage,
                            LanguageServerProtocol, _dict_to_object, default_converter)
from pygls.uris import to_fs_path

from agentread import __version__
from agentread.cancel import Cancelled, run_cancellable
from agentread.engine import Engine, FileChanged
from agentread.live import LiveCell, LiveNotebook
from agentread.request import InvalidParams, parse_request
from agentread.result import ReadError, error_result
from agentread.workspace import Workspace, path_version

READ_METHOD = "agentread/read"
# Sent by the extension with the outputs of an open notebook's cells, which LSP notebook sync leaves out.
OUTPUTS_METHOD = "agentread/notebookOutputs"

# Reads in flight at once. Readers are mostly CPU-bound Python, so more threads would not read faster; four
# keep one slow PDF from holding up the quick reads queued behind it.
READ_WORKERS = 4

# A read still running after this long is answered with an error and told to stop: the chat must not hang on
# a hostile file. Generous, because paging a big PDF cold can take seconds on a slow machine.
READ_DEADLINE_SECONDS = float(os.environ.get("AGENTREAD_READ_DEADLINE", "60"))

# A repeat read of a text file this small, unchanged since a read of it took under QUICK_READ_SECONDS, is done on
# the event loop: handing it to a worker and its clean-up back costs about 0.2 ms of a 1 ms round trip, and
# halves the reads answered a second when many are in flight. Any window of such a file reads in about a
# millisecond (one whole count of its lines at most), and it is answered even while every worker is busy. The
# time only keeps out files on storage slow enough to hold up the event loop.
QUICK_READ_BYTES = 1 << 20
QUICK_READ_SECONDS = 0.01
# A read on the event loop slower than this sends the file back to the workers: ten times what made it quick,
# so that a pause of a loaded machine (a collection, another process) during one read does not.
QUICK_READ_SLOW_SECONDS = 10 * QUICK_READ_SECONDS
QUICK_FILES = 256  # files remembered as quick, the least recently read dropped first

# A header line longer than this ends the connection: LSP headers are a few dozen bytes.
MAX_HEADER_LINE_BYTES = 64 << 10

log = logging.getLogger("agentread")


def _converter():
    """pygls turns custom params into namedtuples, renaming keys that are not identifiers ("image/png").
    Our methods take plain JSON, validated by hand."""
    converter = default_converter()

    def structure(obj: dict, cls):
        if "params" in obj and obj.get("method") not in (READ_METHOD, OUTPUTS_METHOD):
            obj["params"] = _dict_to_object(obj["params"])
        return cls(**obj)

    converter.register_structure_hook(JsonRPCRequestMessage, structure)
    converter.register_structure_hook(JsonRPCNotification, structure)
    return converter


class _Protocol(LanguageServerProtocol):
    """Messages encoded by orjson, which writes a 2,000-line read's 50 KB answer in a fraction of json's time
    (about 0.8 ms of a 4 ms round trip). What orjson refuses (a lone surrogate from an editor buffer) goes
    through pygls's own encoder. A read's request and answer skip two of pygls's general steps (see below).
    These overrides, and _start_io_async below, use pygls's private names; pyproject.toml holds pygls below 3."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Workers answer their reads from their own threads while the event loop sends the rest: one message is
        # written whole before the next starts. (The extension starts the server unbuffered, and one write(2)
        # to a full pipe lets another writer's bytes in midway.)
        self._writing = threading.Lock()

    def handle_message(self, message: Any) -> None:
        # pygls tells requests from notifications by isinstance against runtime-checkable Protocols, about 0.1 ms
        # a message on Python 3.11; a read request is known by its class and handed to the server's start_read.
        if type(message) is JsonRPCRequestMessage and message.method == READ_METHOD \
                and message.jsonrpc == self.VERSION and not self._shutdown:
            self._server.start_read(message.id, message.params)
        else:
            super().handle_message(message)

    def _handle_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        # Reads in flight sit among pygls's futures under the client's own ids; a response bearing one of them
        # answers no request of ours, and must not take the read out of reach of $/cancelRequest.
        if isinstance(self._request_futures.get(msg_id), _Read):
            log.warning("a response with the id of a read in flight (%r) answers no request; ignored", msg_id)
            return
        super()._handle_response(msg_id, result, error)

    def _send_data(self, data: Any) -> None:
        with self._writing:
            self._send_whole(data)

    def _send_whole(self, data: Any) -> None:
        if not data or self.writer is None:
            return super()._send_data(data)
        if type(data) is JsonRPCResponseMessage and type(data.result) is dict:
            data = {"jsonrpc": data.jsonrpc, "id": data.id, "result": data.result}  # plain JSON: no converter walk
        try:
            body = orjson.dumps(data, default=self._serialize_message)
        except (TypeError, orjson.JSONEncodeError):
            return super()._send_data(data)
        header = (f"Content-Length: {len(body)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
                  if self._include_headers else "")
        try:
            written = self.writer.write(header.encode("ascii") + body)
            if inspect.isawaitable(written):
                asyncio.ensure_future(written)
        except BrokenPipeError:
            log.exception("the client's pipe is closed")
            raise
        except Exception:  # noqa: BLE001 - as pygls: a failed write is logged, the server goes on
            log.exception("sending an answer failed")


class _QuickReads:
    """Text files whose last read was quick (QUICK_READ_BYTES), by the absolute path a request named and whether
    it asked for raw text (a notebook read raw is text; read by cells, it may attach images). Only where a read
    runs is decided here; what it reads is resolved again by the engine. A path is looked up without touching
    the file system, so that only a file read quickly before is looked at on the event loop (a hung mount there
    would stop every message)."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self._files: OrderedDict[tuple, tuple] = OrderedDict()  # (absolute path, raw) -> real path, version
        self._lock = threading.Lock()  # noted by workers, looked up on the event loop

    def look(self, request) -> tuple | None:
        """Before a read: (key, version) of what the request's path leads to now; None if it names no file. A
        change from here on makes another version, so a file changed while it is read is not taken as quick."""
        key = self._key(request)
        return (key, path_version(key[0])) if key else None

    def note(self, seen: tuple | None, result, seconds: float, on_loop: bool) -> None:
        """After a read: a small text file read in under QUICK_READ_SECONDS is quick; anything else is not. A
        slower read on a worker, which may have waited for the interpreter lock behind other reads, changes
        nothing; on the event loop, one over QUICK_READ_SLOW_SECONDS sends the file back to the workers."""
        slow = seconds >= (QUICK_READ_SLOW_SECONDS if on_loop else QUICK_READ_SECONDS)
        if seen is None or (result.kind == "text" and slow and not on_loop):
            return
        key, version = seen
        quick = result.kind == "text" and not slow and version and version[3] <= QUICK_READ_BYTES
        with self._lock:
            self._files.pop(key, None)
            if quick:
                self._files[key] = (result.path, version)
                if len(self._files) > QUICK_FILES:
                    self._files.popitem(last=False)

    def known(self, request, buffers: dict) -> tuple | None:
        """As look(), if the request's path leads, as before, to a file remembered as quick, unchanged since;
        else None."""
        key = self._key(request)
        with self._lock:
            entry = self._files.get(key) if key else None
        if entry is None or entry[0] in buffers:
            return None
        # The path is followed again: a link since pointed at another file finds another inode.
        version = path_version(key[0])
        return (key, version) if version == entry[1] else None

    def _key(self, request) -> tuple | None:
        try:
            return self._workspace.absolute(request.path), request.raw
        except ReadError:
            return None


class AgentReadServer(LanguageServer):
    def __init__(self) -> None:
        notebooks = types.NotebookDocumentSyncOptions(notebook_selector=[types.NotebookDocumentFilterWithNotebook(
            notebook="*", cells=[types.NotebookCellLanguage(language="*")])])
        super().__init__("agentread", __version__, notebook_document_sync=notebooks, converter_factory=_converter,
                         protocol_cls=_Protocol)
        self.engine = Engine(Workspace())
        self.executor = ThreadPoolExecutor(max_workers=READ_WORKERS, thread_name_prefix="read")
        # Keyed by real path (URIs of one file can be spelt many ways):
        self.notebook_changed: dict[str, float] = {}  # time of the last edit seen
        self.notebook_outputs: dict[str, list] = {}  # per-cell outputs from the extension
        self.quick_reads = _QuickReads(self.engine.workspace)

    def _start_io_async(self, stdin=None, stdout=None) -> None:
        """As pygls's, except that stdin is read by the event loop itself when it is a pipe or socket of its
        own: pygls reads each header line and body in a worker thread, three thread hand-offs a message, which
        cost small reads a third of their round trip."""
        stdin, stdout = stdin or sys.stdin.buffer, stdout or sys.stdout.buffer
        if not _own_pipe(stdin, stdout):
            return super()._start_io_async(stdin, stdout)
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout))
        try:
            asyncio.run(self._serve_pipe(stdin))
        except BrokenPipeError:
            log.error("the client's pipe is closed; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    async def _serve_pipe(self, stdin) -> None:
        reader = asyncio.StreamReader(limit=MAX_HEADER_LINE_BYTES)
        await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        await run_async(self._stop_event, _PipeReader(reader), self.protocol, log, self.report_server_error)

    def start_read(self, msg_id: Any, params: Any) -> None:
        """On the event loop: hand the read to a worker, which answers it (see _Read)."""
        try:
            request = parse_request(params)
            if not self.engine.workspace.roots:
                self.sync_roots()
            read = _Read(self.protocol, msg_id, request, self.quick_reads)
            buffers = self.live_buffers()
            seen = self.quick_reads.known(request, buffers)
            # A quick read is answered here, before the next message is read: nothing to cancel, no deadline. If
            # its file changed in the meantime (another file put in its place), a worker reads it instead.
            if seen and read.run(self.engine, buffers, quick=seen):
                return
            read.work = self.executor.submit(read.run, self.engine, buffers)
        except BrokenPipeError:
            return  # logged as it was raised; the end of the input ends the server, as after a worker's answer
        except InvalidParams as exc:
            self.protocol._send_response(msg_id, error=JsonRpcInvalidParams(str(exc)).to_response_error())
            return
        except Exception:  # noqa: BLE001 - as pygls answers a handler's failure
            log.exception("a read could not be started")
            self.protocol._send_response(msg_id, error=JsonRpcInternalError.of(sys.exc_info()).to_response_error())
            return
        # Registered once it is sure to run; the worker's clean-up comes through this loop, so after this.
        self.protocol._request_futures[msg_id] = read  # where pygls looks for it on $/cancelRequest
        read.deadline = asyncio.get_running_loop().call_later(READ_DEADLINE_SECONDS, read.expire)

    def shutdown(self) -> None:
        """Reads still running when the input ends are told to stop and answered as cancelled."""
        for read in [r for r in self.protocol._request_futures.values() if isinstance(r, _Read)]:
            read.cancel()
        super().shutdown()

    def sync_roots(self) -> None:
        folders = [to_fs_path(f.uri) for f in self.workspace.folders.values()]
        if not folders and self.workspace.root_path:
            folders = [self.workspace.root_path]
        self.engine.workspace.set_roots([f for f in folders if f])

    def live_buffers(self) -> dict[str, str | LiveNotebook]:
        """Open editor documents and notebooks by real path. Taken on the event loop, where pygls mutates them."""
        buffers: dict[str, str | LiveNotebook] = {}
        for uri, doc in list(self.workspace.text_documents.items()):
            path = _file_path(uri)
            if path:
                buffers[path] = doc.source
        for uri, notebook in list(self.workspace.notebook_documents.items()):
            path = _file_path(uri)
            if path:
                buffers[path] = self._live_notebook(path, notebook)
        return buffers

    def _live_notebook(self, path: str, notebook: types.NotebookDocument) -> LiveNotebook:
        outputs = self.notebook_outputs.get(path)
        if outputs is not None and len(outputs) != len(notebook.cells):
            outputs = None  # sent for another shape of the notebook: a newer message will follow
        cells = []
        for index, cell in enumerate(notebook.cells):
            doc = self.workspace.text_documents.get(unquote(cell.document))  # pygls keys them unquoted
            sent = outputs[index] if outputs else {}
            summary = cell.execution_summary
            cells.append(LiveCell(
                kind="code" if cell.kind == types.NotebookCellKind.Code else "markdown",
                source=doc.source if doc else "",
                language=doc.language_id if doc else None,
                execution_count=sent.get("executionCount", summary.execution_order if summary else None),
                metadata=dict(cell.metadata or {}),
                outputs=sent.get("outputs") if isinstance(sent.get("outputs"), list) else None))
        return LiveNotebook(tuple(cells), self.notebook_changed.get(path, 0.0), outputs is not None)


class _PipeReader:
    """An asyncio stream as pygls's reader: at the end of input it answers b"" as pygls expects."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    async def readline(self) -> bytes:
        try:
            return await self.reader.readline()
        except ValueError:  # a line over the limit: not a client speaking LSP
            log.error("a header line over %d bytes; closing", MAX_HEADER_LINE_BYTES)
            return b""

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self.reader.readexactly(n)
        except asyncio.IncompleteReadError:
            return b""


def _own_pipe(stdin, stdout) -> bool:
    """Whether stdin is a pipe or socket not shared with stdout: the event loop makes it non-blocking, which on
    a terminal (or one socket for both ways) would make stdout's blocking writes fail."""
    try:
        into, out = os.fstat(stdin.fileno()), os.fstat(stdout.fileno())
    except (AttributeError, OSError, ValueError):
        return False
    return (stat.S_ISFIFO(into.st_mode) or stat.S_ISSOCK(into.st_mode)) and \
        (into.st_dev, into.st_ino) != (out.st_dev, out.st_ino)


server = AgentReadServer()


def _file_path(uri: str) -> str | None:
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    try:
        return os.path.realpath(path) if path else None
    except ValueError:  # a NUL in the URI: no file has that name
        return None


@server.feature(types.INITIALIZE)
def on_initialize(ls: AgentReadServer, params: types.InitializeParams) -> None:
    options = params.initialization_options or {}
    patterns = options.get("sensitivePatterns") if isinstance(options, dict) else None
    if isinstance(patterns, list) and all(isinstance(p, str) for p in patterns):
        ls.engine.workspace.sensitive_patterns = tuple(patterns)


@server.feature(types.INITIALIZED)
def on_initialized(ls: AgentReadServer, params: types.InitializedParams) -> None:
    ls.sync_roots()
    handler = _ClientLogHandler(ls, asyncio.get_running_loop())
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.info("agentread %s ready; workspace roots: %s", __version__, ls.engine.workspace.roots)


@server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
def on_folders_changed(ls: AgentReadServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    ls.sync_roots()


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def on_notebook_changed(ls: AgentReadServer, params) -> None:
    path = _file_path(params.notebook_document.uri)
    if path:
        ls.notebook_changed[path] = time.time()


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def on_notebook_closed(ls: AgentReadServer, params: types.DidCloseNotebookDocumentParams) -> None:
    path = _file_path(params.notebook_document.uri)
    ls.notebook_changed.pop(path, None)
    ls.notebook_outputs.pop(path, None)


@server.feature(OUTPUTS_METHOD)
def on_notebook_outputs(ls: AgentReadServer, params: Any) -> None:
    """{uri, cells: [{outputs: [nbformat output...] | null, executionCount}]}, one entry per cell in order."""
    if not isinstance(params, dict) or not isinstance(params.get("uri"), str) \
            or not isinstance(params.get("cells"), list):
        log.warning("ignored %s: expected {uri, cells: [...]}", OUTPUTS_METHOD)
        return
    path = _file_path(params["uri"])
    if path:
        ls.notebook_outputs[path] = [c if isinstance(c, dict) else {} for c in params["cells"]]
        ls.notebook_changed[path] = time.time()


class _Read:
    """A read in flight, answered once by whichever comes first: its worker, $/cancelRequest (-32800, as pygls
    answers a cancelled request), its deadline, or the end of the server. The worker answers from its own
    thread, a whole message in one blocking write as pygls writes: the answer does not wait for the event loop
    to wake, about a fifth of a small read's round trip."""

    def __init__(self, protocol: _Protocol, msg_id: Any, request, quick_reads: _QuickReads) -> None:
        self.protocol, self.msg_id, self.request, self.quick_reads = protocol, msg_id, request, quick_reads
        self.stop = threading.Event()  # the reader stops at its next checkpoint once it is set
        self.work: Future | None = None  # the worker's task, dropped from the queue if stopped before it starts
        self.deadline: asyncio.TimerHandle | None = None
        self._unanswered = threading.Lock()  # taken by whoever answers
        self._loop = asyncio.get_running_loop()

    def run(self, engine: Engine, buffers: dict[str, str | LiveNotebook], quick: tuple | None = None) -> bool:
        """On a worker thread, or on the event loop for a quick read of what _QuickReads.known found (`quick`):
        then False, unanswered, if the file is no longer at that version (a worker must read it)."""
        answer = result = None  # when stopped, it was answered by whoever stopped it
        try:
            if not self.stop.is_set():
                seen = quick or self.quick_reads.look(self.request)
                started = time.perf_counter()
                result = run_cancellable(self.stop, engine.read, self.request, buffers.get, quick and quick[1])
                seconds = time.perf_counter() - started
                answer = {"result": result.to_json()}
        except FileChanged:
            return False
        except Cancelled:
            pass
        except InvalidParams as exc:
            answer = {"error": JsonRpcInvalidParams(str(exc)).to_response_error()}
        except Exception as exc:  # noqa: BLE001 - one reader's bug must not take the server down
            log.exception("unexpected failure reading %s", self.request.path)
            answer = {"result": error_result(self.request.path, "internal", f"reading {self.request.path} failed "
                                             f"unexpectedly ({type(exc).__name__}: {str(exc)[:200]}). Try a smaller "
                                             "range, or read another file.").to_json()}
        try:
            if answer:
                self._answer(**answer)
        finally:
            if result is not None:  # after the answer: what it costs is not the client's wait
                self.quick_reads.note(seen, result, seconds, on_loop=quick is not None)
            try:
                self._loop.call_soon_threadsafe(self._forget)
            except RuntimeError:  # the loop has closed: the server is ending
                pass
        return True

    def done(self) -> bool:
        return self._unanswered.locked()

    def cancel(self) -> bool:
        """On the event loop, from $/cancelRequest or the client's shutdown (pygls calls a request's cancel(),
        the latter while it walks the requests in flight: they are forgotten after) or the server's end."""
        self._stop(error=JsonRpcRequestCancelled(f'Request with id "{self.msg_id}" is canceled').to_response_error())
        try:
            self._loop.call_soon(self._forget)
        except RuntimeError:  # the loop has closed: the server is ending
            pass
        return True

    def expire(self) -> None:
        """On the event loop, READ_DEADLINE_SECONDS after the read began."""
        if self._stop(result=error_result(self.request.path, "timeout", f"reading {self.request.path} took longer "
                                          f"than {READ_DEADLINE_SECONDS:.0f} s and was stopped. Read a smaller part "
                                          "of it (offset/limit, pages or cells).").to_json()):
            log.warning("read of %s stopped after %.0f s", self.request.path, READ_DEADLINE_SECONDS)
        self._forget()

    def _stop(self, **answer) -> bool:
        """Tell the reader to stop (or drop it from the queue) and answer for it, unless it has answered."""
        self.stop.set()
        if self.work:
            self.work.cancel()
        return self._answer(**answer)

    def _answer(self, **answer) -> bool:
        if not self._unanswered.acquire(blocking=False):  # someone else has answered
            return False
        self.protocol._send_response(self.msg_id, **answer)
        return True

    def _forget(self) -> None:
        if self.deadline:
            self.deadline.cancel()
        if self.protocol._request_futures.get(self.msg_id) is self:
            del self.protocol._request_futures[self.msg_id]


class _ClientLogHandler(logging.Handler):
    """Log records go to the client's output (window/logMessage), never to stdout, the protocol channel."""

    LEVELS = {logging.ERROR: types.MessageType.Error, logging.WARNING: types.MessageType.Warning,
              logging.INFO: types.MessageType.Info}

    def __init__(self, ls: AgentReadServer, loop: asyncio.AbstractEventLoop):
        super().__init__(logging.INFO)
        self.ls, self.loop = ls, loop

    def emit(self, record: logging.LogRecord) -> None:
        kind = self.LEVELS.get(record.levelno, types.MessageType.Log)
        message = types.LogMessageParams(type=kind, message=self.format(record))
        try:
            self.loop.call_soon_threadsafe(self.ls.window_log_message, message)
        except RuntimeError:  # the loop has closed: we are shutting down
            pass


def serve() -> None:
    # Until the client is connected, problems go to stderr (the extension shows it in its log).
    logging.basicConfig(level=logging.WARNING, format="agentread %(levelname)s %(name)s: %(message)s")
    server.start_io()
