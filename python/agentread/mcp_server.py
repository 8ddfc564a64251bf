"""`agentread mcp`: the engine as a Model Context Protocol server on stdio, for any MCP client.

Two tools, `read` and `read_many`, described once in tools.json (package.json's VS Code tool carries the same
text). Reads run in worker threads with a deadline, confined as in the editor: to the client's MCP roots when it
offers them, else to `--root` folders, else the current directory. A read outside them or of a sensitive file is
refused with the engine's words, unless a flag allows it or, where the client can ask its user (elicitation),
the user agrees.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import threading
import warnings
from importlib import resources
from typing import Any

import anyio
from mcp import MCPDeprecationWarning, types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from agentread import __version__
from agentread.cancel import Cancelled, run_cancellable
from agentread.engine import Engine
from agentread.many import ManyResult, expand, parse_many_request, read_many
from agentread.request import InvalidParams, ReadRequest, parse_request
from agentread.result import ImagePart, ReadError, ReadResult, error_result
from agentread.session import ReadSession
from agentread.workspace import Workspace

# Roots (and the logging this server does not use) are deprecated in the protocol's next version, but every
# client in use today speaks the current one, where roots are how it says which folders the agent may read.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

log = logging.getLogger("agentread.mcp")

# Reads at once. The readers are mostly CPU-bound Python: more threads would not read faster, and four keep one
# slow PDF from holding up quick reads behind it (as the JSON-RPC server does).
READ_WORKERS = 4

# A read still running after this long is answered with a `timeout` error and told to stop (as the JSON-RPC
# server's deadline): an agent must not hang on a hostile file.
READ_DEADLINE_SECONDS = float(os.environ.get("AGENTREAD_READ_DEADLINE", "60"))

# Error codes a user's approval (or a flag) can lift.
CONSENT_CODES = ("outside_workspace", "sensitive_file")

_READ_ONLY = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                   open_world_hint=False)


def tool_specs() -> dict[str, dict[str, Any]]:
    """The tools' titles, descriptions and input schemas (tools.json, shipped with the package)."""
    return json.loads(resources.files("agentread").joinpath("tools.json").read_text(encoding="utf-8"))


class McpReads:
    """The server's state for its one connection: the workspace, what the flags allow, the client's roots."""

    def __init__(self, roots: list[str], allow_outside: bool, allow_sensitive: bool, unchanged_stub: bool):
        self.fallback_roots = roots
        self.engine = Engine(Workspace(roots))
        self.flag_grants = {code for code, on in zip(CONSENT_CODES, (allow_outside, allow_sensitive)) if on}
        self.session = ReadSession() if unchanged_stub else None
        self.roots_stale = True  # the client's roots are asked for before the next read
        self.roots_lock = anyio.Lock()  # reads wait while they are asked for
        self.limiter = anyio.CapacityLimiter(READ_WORKERS)
        self.specs = tool_specs()

    # Protocol handlers.

    async def list_tools(self, ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=name, title=spec["title"], description=spec["description"],
                       input_schema=spec["inputSchema"], annotations=_READ_ONLY)
            for name, spec in self.specs.items()])

    async def roots_changed(self, ctx, params) -> None:
        self.roots_stale = True

    async def call_tool(self, ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        try:
            if params.name == "read":
                if "consent" in arguments:  # the user's approval is asked for here, never taken from the model
                    raise InvalidParams("unknown parameter(s): consent")
                request = parse_request(arguments)
            elif params.name == "read_many":
                request = parse_many_request(arguments)
            else:
                raise InvalidParams(f"unknown tool {params.name!r}; the tools are: {', '.join(self.specs)}")
        except InvalidParams as exc:
            return _error(f"Error: invalid arguments: {exc}. Call again with arguments matching the tool's schema.")
        async with self.roots_lock:
            if self.roots_stale:
                await self._sync_roots(ctx)
        if params.name == "read":
            return _content(await self._read_one(ctx, request))
        return _many_content(await self._read_many(ctx, request))

    # Reads.

    async def _read_one(self, ctx, request: ReadRequest) -> ReadResult:
        result = await self._in_thread(request.path, self._read, request, frozenset())
        if result.is_error and result.error.code in CONSENT_CODES:
            pending = await self._in_thread(request.path, self._pending, [request.path])
            if pending and not isinstance(pending, ReadResult) and await self._ask(ctx, pending):
                result = await self._in_thread(request.path, self._read, request, pending[request.path])
        return result

    async def _read_many(self, ctx, request) -> ManyResult | ReadResult:
        # The user is asked once, before anything is read, about every file listed that needs approval: a reply
        # read first and dropped would count, for the unchanged stub, as read.
        pending = await self._in_thread("the files listed", lambda: self._pending(
            [req.path for req in expand(self.engine.workspace, request.entries)[0]]))
        if isinstance(pending, ReadResult):
            return pending
        granted = pending if pending and await self._ask(ctx, pending) else {}

        def read(req: ReadRequest) -> ReadResult:
            return self._read(req, granted.get(req.path, frozenset()))

        return await self._in_thread("the files listed", read_many, self.engine, request, read)

    def _pending(self, paths: list[str]) -> dict[str, frozenset]:
        """The paths that need the user's approval (past what the flags allow), with why. In a worker: it looks
        at the file system."""
        pending = {path: frozenset(self._reasons(path) - self.flag_grants) for path in paths}
        return {path: reasons for path, reasons in pending.items() if reasons}

    def _read(self, request: ReadRequest, granted: frozenset) -> ReadResult:
        """One read, in a worker: refused outside the roots or of a sensitive file unless `granted` (by the user)
        or the flags allow each reason it was refused for."""
        engine = self.engine
        result = self._engine_read(engine, request)
        if not (result.is_error and result.error.code in CONSENT_CODES):
            return result
        reasons = self._reasons(request.path)
        allowed = granted | self.flag_grants
        if reasons <= allowed:
            request = dataclasses.replace(request, consent=True)
        elif "outside_workspace" in allowed and "outside_workspace" in reasons:
            # Outside allowed, the secret not: read as if its folder were a root, so the engine refuses it in its
            # own words as a sensitive file.
            folder = os.path.dirname(os.path.realpath(engine.workspace.absolute(request.path)))
            engine = Engine(Workspace(engine.workspace.roots + [folder], list(engine.workspace.sensitive_patterns)))
        else:
            return result
        return self._engine_read(engine, request)

    def _engine_read(self, engine: Engine, request: ReadRequest) -> ReadResult:
        return self.session.read(engine, request) if self.session is not None else engine.read(request)

    def _reasons(self, raw: str) -> set[str]:
        """Why the engine refuses `raw` without consent: outside the roots, sensitive, or both."""
        workspace = self.engine.workspace
        try:
            path = workspace.absolute(raw)
        except ReadError:  # an invalid path is refused for that, not for consent
            return set()
        real = os.path.realpath(path)
        reasons = set()
        if real not in workspace.roots and workspace.relative(real) is None:
            reasons.add("outside_workspace")
        if not os.path.isdir(real) and workspace.is_sensitive(path, real):
            reasons.add("sensitive_file")
        return reasons

    async def _in_thread(self, what: str, fn, *args):
        """fn(*args) in a worker thread, stopped at READ_DEADLINE_SECONDS with a `timeout` error result."""
        stop = threading.Event()
        try:
            with anyio.move_on_after(READ_DEADLINE_SECONDS):
                try:
                    return await anyio.to_thread.run_sync(run_cancellable, stop, fn, *args, abandon_on_cancel=True,
                                                          limiter=self.limiter)
                except Cancelled:  # stopped by the deadline just as it ended
                    pass
                except Exception as exc:  # noqa: BLE001 - one reader's bug must not take the server down
                    log.exception("unexpected failure reading %s", what)
                    return error_result(what, "internal", f"reading {what} failed unexpectedly "
                                        f"({type(exc).__name__}: {str(exc)[:200]}). Try a smaller range, or read "
                                        "another file.")
        finally:
            stop.set()  # past the deadline, or the client cancelled the call: the reader stops at its next checkpoint
        return error_result(what, "timeout", f"reading {what} took longer than {READ_DEADLINE_SECONDS:.0f} s and "
                            "was stopped. Read a smaller part of it (offset/limit, pages or cells), or fewer files.")

    # The client.

    async def _sync_roots(self, ctx) -> None:
        """The client's roots, where it offers them; else the --root folders (or the current directory)."""
        self.roots_stale = False
        caps = ctx.session.client_capabilities
        roots: list[str] = []
        if caps is not None and caps.roots is not None:
            try:
                listed = await ctx.session.list_roots()
                roots = [self.engine.workspace.absolute(str(root.uri)) for root in listed.roots
                         if str(root.uri).startswith("file:")]
            except Exception:  # noqa: BLE001 - a client that cannot answer: keep to the folders we were given
                log.warning("the client offers roots but did not list them; reading inside %s",
                            self.fallback_roots, exc_info=True)
        self.engine.workspace.set_roots(roots or self.fallback_roots)

    async def _ask(self, ctx, pending: dict[str, frozenset]) -> bool:
        """Whether the user, asked through the client (elicitation), approves reading the `pending` paths, for
        the reasons given. False where the client cannot ask."""
        caps = ctx.session.client_capabilities
        if caps is None or caps.elicitation is None:
            return False
        paths, reasons = list(pending), set().union(*pending.values())
        why = " and ".join(sorted({"outside_workspace": "outside the workspace folders",
                                   "sensitive_file": "may hold secrets (credentials, keys or environment settings)"}[r]
                                  for r in reasons))
        shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
        message = (f"The agent asks to read {shown}, which {'is' if len(paths) == 1 else 'are'} {why}. "
                   "Allow this read?")
        try:
            answer = await ctx.session.elicit_form(message, {"type": "object", "properties": {}},
                                                   related_request_id=ctx.request_id)
        except Exception:  # noqa: BLE001 - a client that failed to ask: not an approval
            log.warning("asking the user for approval failed", exc_info=True)
            return False
        return answer.action == "accept"


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _parts(parts) -> list:
    out = []
    for part in parts:
        if isinstance(part, ImagePart):
            out.append(types.ImageContent(type="image", data=part.data, mime_type=part.mime_type))
        else:
            out.append(types.TextContent(type="text", text=part.to_json()["text"]))
    return out


def _content(result: ReadResult) -> types.CallToolResult:
    """A read as MCP content: text parts as text, images as images; an error result as an error (isError)."""
    return types.CallToolResult(content=_parts(result.content), is_error=result.is_error)


def _many_content(reply: ManyResult | ReadResult) -> types.CallToolResult:
    if isinstance(reply, ReadResult):  # the whole call failed (its deadline)
        return _content(reply)
    return types.CallToolResult(content=_parts(reply.content), is_error=False)


def build_server(reads: McpReads) -> Server:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        return Server("agentread", version=__version__, on_list_tools=reads.list_tools,
                      on_call_tool=reads.call_tool, on_roots_list_changed=reads.roots_changed)


def serve(args: argparse.Namespace) -> None:
    logging.basicConfig(level=logging.WARNING, format="agentread %(levelname)s %(name)s: %(message)s")
    reads = McpReads([os.path.abspath(r) for r in args.root] or [os.getcwd()], args.allow_outside_roots,
                     args.allow_sensitive, args.unchanged_stub)
    server = build_server(reads)

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(run)
