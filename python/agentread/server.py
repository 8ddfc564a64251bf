"""The JSON-RPC server on stdio (pygls): protocol handlers only, every read is the engine's.

Reads run in worker threads so the event loop keeps answering (`$/cancelRequest` included); a cancelled read
is told through its cancel event and stops at its next checkpoint.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from agentread import __version__
from agentread.cancel import Cancelled, run_cancellable
from agentread.engine import Engine
from agentread.request import InvalidParams, parse_request
from agentread.result import error_result
from agentread.workspace import Workspace

READ_METHOD = "agentread/read"

# Reads in flight at once. Readers are mostly CPU-bound Python, so more threads would not read faster; four
# keep one slow PDF from holding up the quick reads queued behind it.
READ_WORKERS = 4

log = logging.getLogger("agentread")


class AgentReadServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("agentread", __version__)
        self.engine = Engine(Workspace())
        self.executor = ThreadPoolExecutor(max_workers=READ_WORKERS, thread_name_prefix="read")

    def sync_roots(self) -> None:
        folders = [to_fs_path(f.uri) for f in self.workspace.folders.values()]
        if not folders and self.workspace.root_path:
            folders = [self.workspace.root_path]
        self.engine.workspace.set_roots([f for f in folders if f])

    def live_buffers(self) -> dict[str, str]:
        """Open editor documents by real path. Taken on the event loop, where pygls mutates them."""
        buffers = {}
        for uri, doc in list(self.workspace.text_documents.items()):
            if uri.startswith("file:"):
                path = to_fs_path(uri)
                if path:
                    buffers[os.path.realpath(path)] = doc.source
        return buffers


server = AgentReadServer()


def _plain(value: Any) -> Any:
    """pygls hands custom-method params over as namedtuples; the contract is plain JSON."""
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


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


@server.feature(READ_METHOD)
async def on_read(ls: AgentReadServer, params: Any) -> dict[str, Any]:
    try:
        request = parse_request(_plain(params))
    except InvalidParams as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    if not ls.engine.workspace.roots:
        ls.sync_roots()
    buffers = ls.live_buffers()
    cancel = threading.Event()
    loop = asyncio.get_running_loop()
    try:
        result = await loop.run_in_executor(ls.executor, run_cancellable, cancel, _read, ls.engine, request,
                                            buffers)
    except asyncio.CancelledError:
        cancel.set()  # the worker stops at its next checkpoint; pygls answers -32800
        raise
    return result


def _read(engine: Engine, request, buffers: dict[str, str]) -> dict[str, Any]:
    try:
        return engine.read(request, buffers.get).to_json()
    except InvalidParams as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    except Cancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - one reader's bug must not take the server down
        log.exception("unexpected failure reading %s", request.path)
        return error_result(request.path, "internal", f"reading {request.path} failed unexpectedly "
                            f"({type(exc).__name__}: {str(exc)[:200]}). Try a smaller range, or read "
                            "another file.").to_json()


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
