"""The JSON-RPC server on stdio (pygls): protocol handlers only, every read is the engine's.

A read is an async handler, so the event loop goes on reading messages while it runs, and pygls's own
`$/cancelRequest` handling cancels the handler's task (pygls answers -32800). Where a read runs:
- a repeat read of a small text file that read quickly before: on the event loop (QUICK_READ_BYTES);
- PDF, image and Office files, and notebooks with images (engine.runs_isolated): in a worker process
  (workers.py), which is killed at the read's deadline or when it is cancelled; a crash there costs that
  read only. A file read in a worker before, unchanged, goes there directly;
- the rest (text, directories, notebooks without images): on a pool of threads, told to stop through its stop
  event when cancelled or out of time. The engine tells which reads go to a worker.
A read still running at its deadline is answered with a `timeout` error result (reads.py, shared with the MCP
server).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import sys
import threading
import time
from collections import OrderedDict
from typing import Any, BinaryIO, NamedTuple
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, default_converter
from pygls.uris import to_fs_path

from agentread import __version__
from agentread.cancel import Cancelled, run_cancellable
from agentread.engine import FileChanged, ReadElsewhere
from agentread.live import LiveCell, LiveNotebook
from agentread.many import parse_many_request, read_many
from agentread.request import InvalidParams, ReadRequest, parse_request
from agentread.reads import Reads, internal_result
from agentread.result import ReadError, ReadResult
from agentread.session import ReadSession
from agentread.workspace import Workspace, path_version

READ_METHOD = "agentread/read"
READ_MANY_METHOD = "agentread/readMany"
# Sent by the extension with the outputs of an open notebook's cells, which LSP notebook sync leaves out.
OUTPUTS_METHOD = "agentread/notebookOutputs"

# A repeat read of a text file this small, unchanged since a read of it took under QUICK_READ_SECONDS, is done on
# the event loop: it is answered even while every thread is busy, and skips the hand-off to a thread and back.
# Any window of such a file reads in about a millisecond (one whole count of its lines at most). The time only
# keeps out files on storage slow enough to hold up the event loop.
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
    """pygls turns the params of methods it has no type for into namedtuples, renaming keys that are not
    identifiers ("image/png"). Ours take plain JSON, validated by hand; the LSP methods keep their types."""
    converter = default_converter()

    def plain(obj: dict, cls):
        return cls(**obj)

    converter.register_structure_hook(JsonRPCRequestMessage, plain)
    converter.register_structure_hook(JsonRPCNotification, plain)
    return converter


class _Places:
    """Where the last read of a file ran, by the absolute path a request named and whether it asked for raw text
    (a notebook read raw is text; read by cells, it may attach images): on the event loop ("loop": a small text
    file that read in under QUICK_READ_SECONDS), or in a worker process ("worker", with the real path, which
    picks the worker); with the file's version then. Only where a read runs is decided here; what it reads is
    resolved again by the engine. A path is looked up without touching the file system, so that only a file
    read before is looked at on the event loop (a hung mount there would stop every message)."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self._files: OrderedDict[tuple, tuple] = OrderedDict()  # (absolute path, raw) -> place, real path, version
        self._lock = threading.Lock()  # noted by threads, looked up on the event loop

    def look(self, request) -> tuple | None:
        """Before a read: (key, version) of what the request's path leads to now; None if it names no file. A
        change from here on makes another version, so a file changed while it is read is not remembered."""
        key = self._key(request)
        return (key, path_version(key[0])) if key else None

    def note(self, seen: tuple | None, kind: str, path: str, seconds: float, where: str) -> None:
        """After a read that ran `where` ("loop", "thread" or "worker"): a small text file read in under
        QUICK_READ_SECONDS runs on the loop from now on, a file read in a worker goes there directly; others
        are forgotten. A slower text read on a thread, which may have waited for the interpreter lock behind
        other reads, changes nothing; on the event loop, one over QUICK_READ_SLOW_SECONDS sends the file back
        to the threads."""
        slow = seconds >= (QUICK_READ_SLOW_SECONDS if where == "loop" else QUICK_READ_SECONDS)
        if seen is None or (kind == "text" and slow and where == "thread"):
            return
        key, version = seen[:2]
        place = None
        if where == "worker" and version:
            place = "worker"
        elif kind == "text" and not slow and version and version[3] <= QUICK_READ_BYTES:
            place = "loop"
        with self._lock:
            self._files.pop(key, None)
            if place:
                self._files[key] = (place, path, version)
                if len(self._files) > QUICK_FILES:
                    self._files.popitem(last=False)

    def known(self, request, buffers: dict) -> _Known | None:
        """Where the last read of the file the request's path leads to ran, if it leads there as before and the
        file is unchanged since; else None. Never for a file open in the editor (its buffer is what is read)."""
        key = self._key(request)
        with self._lock:
            entry = self._files.get(key) if key else None
        if entry is None or entry[1] in buffers:
            return None
        # The path is followed again: a link since pointed at another file finds another inode.
        version = path_version(key[0])
        return _Known(entry[0], (key, version), entry[1]) if version == entry[2] else None

    def _key(self, request) -> tuple | None:
        try:
            return self._workspace.absolute(request.path), request.raw
        except ReadError:
            return None


class _Known(NamedTuple):
    """Where the last read of a file ran ("loop" or "worker"), the file as looked up now (key, version), and its
    real path."""
    place: str
    seen: tuple
    path: str


class _Elsewhere(NamedTuple):
    """A read the engine sent to a worker process: what it knew of the file, and its real path."""
    seen: tuple | None
    path: str


class AgentReadServer(LanguageServer):
    def __init__(self) -> None:
        notebooks = types.NotebookDocumentSyncOptions(notebook_selector=[types.NotebookDocumentFilterWithNotebook(
            notebook="*", cells=[types.NotebookCellLanguage(language="*")])])
        super().__init__("agentread", __version__, notebook_document_sync=notebooks, converter_factory=_converter)
        # Reads on threads of their own (pygls reads stdin on its threads, which a slow read must not hold up),
        # and in worker processes.
        self.reads = Reads(Workspace())
        self.engine = self.reads.engine
        # Keyed by real path (URIs of one file can be spelt many ways):
        self.notebook_changed: dict[str, float] = {}  # time of the last edit seen
        self.notebook_outputs: dict[str, list] = {}  # per-cell outputs from the extension
        self.places = _Places(self.engine.workspace)
        # The unchanged-read stub (session.py), when initializationOptions.unchangedStub asks for it.
        self.session: ReadSession | None = None

    async def read(self, params: Any) -> dict:
        """One agentread/read, answered with its result (or a JSON-RPC error for malformed params)."""
        try:
            request = parse_request(params)
        except InvalidParams as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        if not self.engine.workspace.roots:
            self.sync_roots()
        buffers = self.live_buffers()
        try:
            if self.session:  # every read is compared with what this session was shown: no quick path
                return await self._on_thread(request.path, self._read_in_session, request, buffers,
                                             asyncio.get_running_loop())
            known = self.places.known(request, buffers)
            if known and known.place == "loop":
                answer = self._read_on_loop(request, buffers, known.seen)
                if answer is not None:
                    return answer
            if known and known.place == "worker":
                place = _Elsewhere(known.seen, known.path)  # straight to its worker
            else:
                place = await self._read_on_thread(request, buffers)  # the result, or where the engine sends it
            return place if isinstance(place, dict) else await self._read_in_worker(request, place, buffers)
        except InvalidParams as exc:  # a reader's own check of the params
            raise JsonRpcInvalidParams(str(exc)) from None
        except (asyncio.CancelledError, JsonRpcInvalidParams):
            raise
        except Exception as exc:  # noqa: BLE001 - one reader's bug must not take the server down
            log.exception("unexpected failure reading %s", request.path)
            return internal_result(request.path, type(exc).__name__, str(exc)).to_json()

    def _read_on_loop(self, request: ReadRequest, buffers: dict, seen: tuple) -> dict | None:
        """A quick read (see _Places), answered before the next message is read: nothing to cancel, no
        deadline. None if the file changed since it was looked up (a thread then reads it)."""
        started = time.perf_counter()
        try:
            result = self.engine.read(request, buffers.get, seen[1])
        except FileChanged:
            return None
        self.places.note(seen, result.kind, result.path, time.perf_counter() - started, "loop")
        return result.to_json()

    async def _read_on_thread(self, request: ReadRequest, buffers: dict) -> dict | _Elsewhere:
        return await self._on_thread(request.path, self._read_here, request, buffers)

    async def _on_thread(self, name: str, fn, *args) -> Any:
        """fn(*args, stop) on a read thread, within the deadline (reads.py); a timeout as JSON."""
        answer = await self.reads.on_thread(name, fn, *args)
        return answer.to_json() if isinstance(answer, ReadResult) else answer

    async def read_many(self, params: Any) -> dict:
        """One agentread/readMany: {paths, consent?: [path...]}, the listed paths the user approved."""
        params = dict(params) if isinstance(params, dict) else params
        consented = params.pop("consent", []) if isinstance(params, dict) else []
        try:
            if not isinstance(consented, list) or not all(isinstance(c, str) for c in consented):
                raise InvalidParams("'consent' must be a list of the paths, as given in 'paths', the user approved")
            request = parse_many_request(params)
        except InvalidParams as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        if not self.engine.workspace.roots:
            self.sync_roots()
        return await self._on_thread("the files listed", self._read_many_here, request, frozenset(consented),
                                     self.live_buffers(), asyncio.get_running_loop())

    def _read_many_here(self, request, consented: frozenset, buffers: dict, loop,
                        stop: threading.Event) -> dict | None:
        def read(one: ReadRequest) -> ReadResult:
            if one.path in consented:  # a glob's matches are never approved: only paths listed as they are
                one = dataclasses.replace(one, consent=True)
            return self.reads.read_anywhere(self.engine, one, buffers.get, loop, stop)

        try:
            return run_cancellable(stop, read_many, self.engine, request, read).to_json()
        except Cancelled:
            return None

    def _read_in_session(self, request: ReadRequest, buffers: dict, loop, stop: threading.Event) -> dict | None:
        try:
            return run_cancellable(stop, self.session.read, self.engine, request, buffers.get,
                                   lambda one: self.reads.read_anywhere(self.engine, one, buffers.get, loop,
                                                                        stop)).to_json()
        except Cancelled:
            return None

    def _read_here(self, request: ReadRequest, buffers: dict, stop: threading.Event) -> dict | _Elsewhere | None:
        """On a thread. None when stopped: nobody waits for the answer any more."""
        seen = self.places.look(request)
        started = time.perf_counter()
        try:
            result = run_cancellable(stop, self.engine.read, request, buffers.get)
        except ReadElsewhere as elsewhere:
            return _Elsewhere(seen, elsewhere.path)
        except Cancelled:
            return None
        self.places.note(seen, result.kind, result.path, time.perf_counter() - started, "thread")
        return result.to_json()

    async def _read_in_worker(self, request: ReadRequest, place: _Elsewhere, buffers: dict) -> dict:
        answer = await self.reads.in_worker(request, place.path, buffers.get(place.path), self.engine.workspace)
        if "error" not in answer:
            self.places.note(place.seen, answer["kind"], answer["path"], 0.0, "worker")
        return answer

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
    if isinstance(options, dict) and options.get("unchangedStub") is True:
        ls.session = ReadSession()


@server.feature(types.INITIALIZED)
def on_initialized(ls: AgentReadServer, params: types.InitializedParams) -> None:
    ls.sync_roots()
    handler = _ClientLogHandler(ls, asyncio.get_running_loop())
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.info("agentread %s ready; workspace roots: %s", __version__, ls.engine.workspace.roots)
    ls.reads.start()


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


@server.feature(READ_METHOD)
async def on_read(ls: AgentReadServer, params: Any) -> dict:
    return await ls.read(params)


@server.feature(READ_MANY_METHOD)
async def on_read_many(ls: AgentReadServer, params: Any) -> dict:
    return await ls.read_many(params)


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


class _Input:
    """stdin as pygls reads it, with header lines held to MAX_HEADER_LINE_BYTES: a client that is not speaking
    LSP ends the connection instead of filling memory with one line."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream

    def readline(self) -> bytes:
        line = self.stream.readline(MAX_HEADER_LINE_BYTES + 1)
        if len(line) > MAX_HEADER_LINE_BYTES:
            log.error("a header line over %d bytes; closing", MAX_HEADER_LINE_BYTES)
            return b""
        return line

    def read(self, size: int) -> bytes:
        return self.stream.read(size)


def serve() -> None:
    # Until the client is connected, problems go to stderr (the extension shows it in its log).
    logging.basicConfig(level=logging.WARNING, format="agentread %(levelname)s %(name)s: %(message)s")
    try:
        server.start_io(_Input(sys.stdin.buffer))
    finally:
        server.reads.close()
