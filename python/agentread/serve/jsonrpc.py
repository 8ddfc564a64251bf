"""The JSON-RPC server on stdio (pygls): the protocol only; every read is the read service's
(service.py).

A read is an async handler, so the event loop goes on reading messages while it runs, and pygls's
own `$/cancelRequest` handling cancels the handler's task (pygls answers -32800), which stops the
read. Besides LSP's document and notebook sync (the editor's unsaved state is what is read), the
methods are `agentread/read`, `agentread/readMany` and `agentread/check` (docs/CONTRACT.md).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import threading
import time
from typing import Any, Awaitable, Callable
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, default_converter
from pygls.uris import to_fs_path

from agentread import __version__
from agentread.limits import MESSAGE_SKIP_BYTES
from agentread.linkfree import find_as_is
from agentread.live import LiveCell, LiveNotebook
from agentread.many import parse_many_request
from agentread.request import InvalidParams, parse_request
from agentread.serve.service import ReadService
from agentread.serve.session import ReadSession
from agentread.workspace import CONSENT_REASONS, Workspace

READ_METHOD = "agentread/read"
READ_MANY_METHOD = "agentread/readMany"
CHECK_METHOD = "agentread/check"
# Sent by the extension with the outputs of an open notebook's cells, which LSP notebook
# sync leaves out.
OUTPUTS_METHOD = "agentread/notebookOutputs"

# A header line longer than this ends the connection: LSP headers are a few dozen bytes.
MAX_HEADER_LINE_BYTES = 64 << 10

# The largest message the server takes. The biggest an editor sends is a document synced whole, and
# VS Code syncs to extensions documents of up to 50 MB, which JSON may grow by escaping; a frame
# declaring more is skipped as it arrives, never held, and answered with an error (its id unknown).
MAX_FRAME_BYTES = 256 << 20
# What the server reads in place of a frame too large: a notification of this method, whose handler
# answers the frame with an error.
TOO_LARGE_METHOD = "agentread/messageTooLarge"

# Paths one `agentread/check` looks at: what one call of a tool names at most (many.MAX_MANY_FILES).
MAX_CHECK_PATHS = 100

log = logging.getLogger("agentread")


def _converter():
    """pygls turns the params of methods it has no type for into namedtuples, renaming keys that are
    not identifiers ("image/png"). Ours take plain JSON, validated by hand; the LSP methods keep
    their types."""
    converter = default_converter()

    def plain(obj: dict, cls):
        return cls(**obj)

    converter.register_structure_hook(JsonRPCRequestMessage, plain)
    converter.register_structure_hook(JsonRPCNotification, plain)
    return converter


class AgentReadServer(LanguageServer):
    def __init__(self) -> None:
        notebooks = types.NotebookDocumentSyncOptions(notebook_selector=[types.NotebookDocumentFilterWithNotebook(
            notebook="*", cells=[types.NotebookCellLanguage(language="*")])])
        super().__init__("agentread", __version__, notebook_document_sync=notebooks, converter_factory=_converter)
        self.service = ReadService(Workspace())
        # Keyed by real path (URIs of one file can be spelt many ways):
        self.notebook_changed: dict[str, float] = {}  # time of the last edit seen
        self.notebook_outputs: dict[str, list] = {}  # per-cell outputs from the extension
        self._live_notebooks: dict[str, LiveNotebook] = {}  # built once per edit, not once per read

    def notebook_edited(self, path: str, outputs: list | None = None) -> None:
        """An open notebook changed (its cells, or the outputs the extension sent): its live copy
        is built again at the next read."""
        self.notebook_changed[path] = time.time()
        if outputs is not None:
            self.notebook_outputs[path] = outputs
        self._live_notebooks.pop(path, None)

    def notebook_closed(self, path: str) -> None:
        self.notebook_changed.pop(path, None)
        self.notebook_outputs.pop(path, None)
        self._live_notebooks.pop(path, None)

    async def read(self, params: Any) -> dict | None:
        """One agentread/read, answered with its result (or a JSON-RPC error for
        malformed params)."""
        try:
            request = parse_request(params)
            self._roots_known()
            return _json(await self.service.read(request, self.live_buffers().get))
        except InvalidParams as exc:  # malformed, or a reader's own check of the params
            raise JsonRpcInvalidParams(str(exc)) from None

    async def read_many(self, params: Any) -> dict | None:
        """One agentread/readMany: {paths, consent?: [path...], maxBytes?}, `consent` the listed
        paths the user approved."""
        params = dict(params) if isinstance(params, dict) else params
        consented = params.pop("consent", []) if isinstance(params, dict) else []
        try:
            if not isinstance(consented, list) or not all(isinstance(c, str) for c in consented):
                raise InvalidParams("'consent' must be a list of the paths, as given in 'paths', the user approved")
            request = parse_many_request(params)
            self._roots_known()
            # A glob's matches are never approved: only paths listed as they are.
            approved = frozenset(consented)
            reply = await self.service.read_many(
                request, lambda path: CONSENT_REASONS if path in approved else frozenset(), self.live_buffers().get)
            return _json(reply)
        except InvalidParams as exc:
            raise JsonRpcInvalidParams(str(exc)) from None

    async def check(self, params: Any) -> dict:
        """One agentread/check: {paths: [...]} → {checks: [...]}, what would refuse reading each
        without the user's approval, for the client to ask the user first (docs/CONTRACT.md)."""
        paths = params.get("paths") if isinstance(params, dict) else None
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths) \
                or not 0 < len(paths) <= MAX_CHECK_PATHS:
            raise JsonRpcInvalidParams(f"params must be {{\"paths\": [path, ...]}}, 1 to {MAX_CHECK_PATHS} paths")
        self._roots_known()
        refusals = await self.service.check(paths)
        return {"checks": [{"path": path, "reasons": sorted(r.reasons) if r else [], "real": r.real if r else None,
                            "pattern": r.pattern if r else None} for path, r in zip(paths, refusals)]}

    def _roots_known(self) -> None:
        if not self.service.workspace.roots:
            self.sync_roots()

    def sync_roots(self) -> None:
        folders = [to_fs_path(f.uri) for f in self.workspace.folders.values()]
        if not folders and self.workspace.root_path:
            folders = [self.workspace.root_path]
        self.service.workspace.set_roots([f for f in folders if f])

    def live_buffers(self) -> dict[str, str | LiveNotebook]:
        """Open editor documents and notebooks by real path. Taken on the event loop, where pygls
        mutates them."""
        buffers: dict[str, str | LiveNotebook] = {}
        for uri, doc in list(self.workspace.text_documents.items()):
            path = _file_path(uri)
            if path:
                buffers[path] = doc.source
        for uri, notebook in list(self.workspace.notebook_documents.items()):
            path = _file_path(uri)
            if path:
                live = self._live_notebooks.get(path)
                if live is None:
                    live = self._live_notebooks[path] = self._live_notebook(path, notebook)
                buffers[path] = live
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


def _json(reply) -> dict | None:
    """A reply as the result JSON; None for a read stopped with nobody waiting for it."""
    return None if reply is None else reply.to_json()


def _file_path(uri: str) -> str | None:
    """The real path of a document's URI. Every open document is looked up at every read: one
    with no link on its path is told so in one call (linkfree.find_as_is), a third of realpath's
    time, which resolves the others."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    try:
        return (path if find_as_is(path) is not None else os.path.realpath(path)) if path else None
    except ValueError:  # a NUL in the URI: no file has that name
        return None


@server.feature(types.INITIALIZE)
def on_initialize(ls: AgentReadServer, params: types.InitializeParams) -> None:
    options = params.initialization_options or {}
    patterns = options.get("sensitivePatterns") if isinstance(options, dict) else None
    if isinstance(patterns, list) and all(isinstance(p, str) for p in patterns):
        ls.service.workspace.sensitive_patterns = tuple(patterns)
    if isinstance(options, dict) and options.get("unchangedStub") is True:
        ls.service.session = ReadSession()


@server.feature(types.INITIALIZED)
def on_initialized(ls: AgentReadServer, params: types.InitializedParams) -> None:
    ls.sync_roots()
    handler = _ClientLogHandler(ls, asyncio.get_running_loop())
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.info("agentread %s ready; workspace roots: %s", __version__, ls.service.workspace.roots)
    ls.service.start()


@server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
def on_folders_changed(ls: AgentReadServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    ls.sync_roots()


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def on_notebook_changed(ls: AgentReadServer, params) -> None:
    path = _file_path(params.notebook_document.uri)
    if path:
        ls.notebook_edited(path)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def on_notebook_closed(ls: AgentReadServer, params: types.DidCloseNotebookDocumentParams) -> None:
    path = _file_path(params.notebook_document.uri)
    if path:
        ls.notebook_closed(path)


@server.feature(READ_METHOD)
async def on_read(ls: AgentReadServer, params: Any) -> dict:
    return await ls.read(params)


@server.feature(READ_MANY_METHOD)
async def on_read_many(ls: AgentReadServer, params: Any) -> dict:
    return await ls.read_many(params)


@server.feature(CHECK_METHOD)
async def on_check(ls: AgentReadServer, params: Any) -> dict:
    return await ls.check(params)


@server.feature(OUTPUTS_METHOD)
def on_notebook_outputs(ls: AgentReadServer, params: Any) -> None:
    """{uri, cells: [{outputs: [nbformat output...] | null, executionCount}]}, one entry per
    cell in order."""
    if not isinstance(params, dict) or not isinstance(params.get("uri"), str) \
            or not isinstance(params.get("cells"), list):
        log.warning("ignored %s: expected {uri, cells: [...]}", OUTPUTS_METHOD)
        return
    path = _file_path(params["uri"])
    if path:
        ls.notebook_edited(path, [c if isinstance(c, dict) else {} for c in params["cells"]])


class _ClientLogHandler(logging.Handler):
    """Log records go to the client's output (window/logMessage), never to stdout, the
    protocol channel."""

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
    """stdin as pygls's message loop reads it, with header lines held to MAX_HEADER_LINE_BYTES: a
    client that is not speaking LSP ends the connection instead of filling memory with one line; and
    messages to MAX_FRAME_BYTES: one declaring more is read as a TOO_LARGE_METHOD notification, and
    its bytes are skipped before the next header. `line` gives the next line (None for one over
    MAX_HEADER_LINE_BYTES), `read` up to that many bytes, fewer only at the end of the input."""

    def __init__(self, line: Callable[[], Awaitable[bytes | None]], read: Callable[[int], Awaitable[bytes]]) -> None:
        self._line, self._read = line, read
        self.skipping = 0  # bytes of a frame too large still to skip

    async def readline(self) -> bytes:
        while self.skipping:
            skipped = len(await self._read(min(self.skipping, MESSAGE_SKIP_BYTES)))
            self.skipping = skipped and self.skipping - skipped  # none at the end of the stream
        line = await self._line()
        if line is None:
            log.error("a header line over %d bytes; closing", MAX_HEADER_LINE_BYTES)
            return b""
        return line

    async def readexactly(self, size: int) -> bytes:
        if size <= MAX_FRAME_BYTES:
            return await self._read(size)
        self.skipping = size
        return json.dumps({"jsonrpc": "2.0", "method": TOO_LARGE_METHOD, "params": {"bytes": size}}).encode("utf-8")


async def _stdin() -> _Input:
    """stdin, read on the event loop as it arrives (a pipe or a socket, as a client starts the
    server), so that no message waits for a thread's round trip; any other input (a file) is read
    on a thread."""
    if os.name != "posix":  # Windows' event loop reads only pipes opened for overlapped reads, which stdin is not
        return _Input(*_blocking(sys.stdin.buffer))
    loop = asyncio.get_running_loop()
    stream = asyncio.StreamReader(limit=MAX_HEADER_LINE_BYTES, loop=loop)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream, loop=loop), sys.stdin.buffer)
    except (ValueError, OSError, NotImplementedError):  # no pipe, socket or terminal; or a loop without pipes
        return _Input(*_blocking(sys.stdin.buffer))

    async def line() -> bytes | None:
        try:
            return await stream.readuntil(b"\n")
        except asyncio.IncompleteReadError as end:  # the input ended mid-line
            return end.partial
        except asyncio.LimitOverrunError:
            return None

    async def read(size: int) -> bytes:
        try:
            return await stream.readexactly(size)
        except asyncio.IncompleteReadError as end:
            return end.partial

    return _Input(line, read)


def _blocking(stream) -> tuple[Callable, Callable]:
    """`_Input`'s line and read of a blocking stream, each on a thread."""
    async def line() -> bytes | None:
        read = await asyncio.get_running_loop().run_in_executor(None, stream.readline, MAX_HEADER_LINE_BYTES + 1)
        return None if len(read) > MAX_HEADER_LINE_BYTES else read

    async def read(size: int) -> bytes:
        return await asyncio.get_running_loop().run_in_executor(None, stream.read, size)

    return line, read


@server.feature(TOO_LARGE_METHOD)
def on_too_large(ls: AgentReadServer, params: Any) -> None:
    """In place of a frame over MAX_FRAME_BYTES (_Input): answers it with an Invalid Request error
    whose id is null, as JSON-RPC answers a message whose id it cannot read (pygls leaves a null id
    out of what it sends, so the frame is written here, on the event loop as pygls writes)."""
    size = params.get("bytes") if isinstance(params, dict) else None
    size = size if isinstance(size, int) else 0
    log.error("a message of %d bytes skipped: over %d", size, MAX_FRAME_BYTES)
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": JsonRpcInvalidRequest.CODE, "message": (
        f"a message of {size:,} bytes is over the {MAX_FRAME_BYTES:,} bytes this server takes, and was skipped. "
        "Send less in one message: a document that large is read from its file (agentread/read), not synced.")}})
    ls.protocol.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body.encode("utf-8")))


async def _serve_stdio() -> None:
    """pygls's message loop over stdin and stdout, as its start_io runs it, stdin read by
    `_stdin`."""
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    await run_async(stop_event=threading.Event(), reader=await _stdin(), protocol=server.protocol,
                    logger=logging.getLogger("pygls"), error_handler=server.report_server_error)


def serve() -> None:
    # Until the client is connected, problems go to stderr (the extension shows it in its log).
    logging.basicConfig(level=logging.WARNING, format="agentread %(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(_serve_stdio())
    except BrokenPipeError:
        log.error("the connection to the client is lost; ending")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
        server.service.close()
