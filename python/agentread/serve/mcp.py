"""`agentread mcp`: the engine as a Model Context Protocol server on stdio, for any MCP client.

Two tools, `read` and `read_many`, described once in tools.json (package.json's VS Code tool carries
the same text). Reads run through the read service both servers call (service.py): PDF, image and
Office files in worker processes, the rest on threads, each with a deadline. They are confined as in
the editor: to the client's MCP roots when it offers them, else to `--root` folders, else the
current directory. A read outside them or of a sensitive file is refused with the engine's words,
unless a flag allows it or, where the client can ask its user (elicitation), the user agrees.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import warnings
from importlib import resources
from typing import Any, Awaitable, BinaryIO, Callable

import anyio
import pydantic_core
from mcp import MCPDeprecationWarning, types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from agentread import __version__
from agentread.limits import MESSAGE_SKIP_BYTES
from agentread.many import ManyRequest, ManyResult, parse_many_request
from agentread.request import InvalidParams, ReadRequest, parse_request
from agentread.result import ImagePart, ReadResult, joined
from agentread.serve.service import ReadService
from agentread.workspace import CONSENT_REASONS, OUTSIDE, SENSITIVE, Workspace

# Roots (and the logging this server does not use) are deprecated in the protocol's next version,
# but every client in use today speaks the current one, where roots are how it says which folders
# the agent may read.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

log = logging.getLogger("agentread.mcp")

# How each reason a read needs approval for is put to the user.
CONSENT_WORDS = {OUTSIDE: "outside the workspace folders",
                 SENSITIVE: "may hold secrets (credentials, keys or environment settings)"}

# Paths one approval covers: a user can weigh a list this long; a read_many asking for more is asked
# about the first ones only, and the rest are refused.
MAX_APPROVAL_PATHS = 20

# The longest message line the server takes: its tools take a path and a few short values, and a
# client's answers (its roots, an approval) are as short; a read_many of 100 long paths is under
# 1 MB. A longer line is skipped as it arrives, never held whole, and a request answered an error.
MAX_MESSAGE_BYTES = 16 << 20

_READ_ONLY = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                   open_world_hint=False)


def tool_specs() -> dict[str, dict[str, Any]]:
    """The tools' titles, descriptions and input schemas (tools.json, shipped with the package)."""
    return json.loads(resources.files("agentread.serve").joinpath("tools.json").read_text(encoding="utf-8"))


class McpReads:
    """The server's state for its one connection: its read service, what the flags allow, the
    client's roots."""

    def __init__(self, roots: list[str], allow_outside: bool, allow_sensitive: bool, unchanged_stub: bool):
        self.fallback_roots = roots
        self.service = ReadService(Workspace(roots), stub=unchanged_stub)
        self.flag_grants = frozenset(code for code, on in ((OUTSIDE, allow_outside), (SENSITIVE, allow_sensitive))
                                     if on)
        self.roots_stale = True  # the client's roots are asked for before the next read
        self.roots_lock = anyio.Lock()  # reads wait while they are asked for
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
            # The user's approval is asked for here and the reply size is the host's: neither comes
            # from the model.
            taken = {"consent", "maxBytes"} & set(arguments)
            if taken:
                raise InvalidParams(f"unknown parameter(s): {', '.join(sorted(taken))}")
            if params.name == "read":
                request = parse_request(arguments)
            elif params.name == "read_many":
                request = parse_many_request(arguments)
            else:
                raise InvalidParams(f"unknown tool {params.name!r}; the tools are: {', '.join(self.specs)}")
        except InvalidParams as exc:
            return _invalid(exc)
        async with self.roots_lock:
            if self.roots_stale:
                await self._sync_roots(ctx)
        try:
            if params.name == "read":
                return _content(await self._read_one(ctx, request))
            return _many_content(await self._read_many(ctx, request))
        except InvalidParams as exc:
            return _invalid(exc)

    # Reads.

    async def _read_one(self, ctx, request: ReadRequest) -> ReadResult:
        request = dataclasses.replace(request, consent=self.flag_grants)
        result = await self.service.read(request)
        if result.is_error and result.error.code in CONSENT_REASONS:
            pending = await self._pending([request.path])
            granted = await self._ask(ctx, pending) if pending else {}
            if request.path in granted:
                result = await self.service.read(dataclasses.replace(request, consent=self.flag_grants
                                                                     | granted[request.path]))
        return result

    async def _read_many(self, ctx, request) -> ManyResult | ReadResult:
        # The user is asked once, before anything is read, about every file listed that
        # needs approval.
        pending = await self._pending(request)
        granted = await self._ask(ctx, pending) if pending else {}
        return await self.service.read_many(request, lambda path: self.flag_grants | granted.get(path, frozenset()))

    async def _pending(self, paths: list[str] | ManyRequest) -> dict[str, tuple[frozenset, str]]:
        """The paths that need the user's approval past what the flags allow: why, and
        where each leads."""
        refusals = await self.service.check(paths)
        return {r.path: (r.reasons - self.flag_grants, r.real) for r in refusals
                if r is not None and r.reasons - self.flag_grants}

    # The client.

    async def _sync_roots(self, ctx) -> None:
        """The client's roots, where it offers them; else the --root folders (or the
        current directory)."""
        self.roots_stale = False
        caps = ctx.session.client_capabilities
        roots: list[str] = []
        if caps is not None and caps.roots is not None:
            try:
                listed = await ctx.session.list_roots()
                roots = [self.service.workspace.absolute(str(root.uri)) for root in listed.roots
                         if str(root.uri).startswith("file:")]
            except Exception:  # noqa: BLE001 - a client that cannot answer: keep to the folders we were given
                log.warning("the client offers roots but did not list them; reading inside %s",
                            self.fallback_roots, exc_info=True)
        self.service.workspace.set_roots(roots or self.fallback_roots)

    async def _ask(self, ctx, pending: dict[str, tuple[frozenset, str]]) -> dict[str, frozenset]:
        """What the user, asked through the client (elicitation), approves of the `pending` paths:
        each by where it really leads, grouped by why it needs approval; at most MAX_APPROVAL_PATHS
        of them. Nothing where the client cannot ask."""
        caps = ctx.session.client_capabilities
        if caps is None or caps.elicitation is None:
            return {}
        asked = dict(list(pending.items())[:MAX_APPROVAL_PATHS])
        lines = [f"The agent asks to read {'this file' if len(asked) == 1 else f'these {len(asked)} files'}:"]
        for code, why in CONSENT_WORDS.items():
            reals = sorted({real for reasons, real in asked.values() if code in reasons})
            if reals:
                lines.append(f"- {why}: {', '.join(reals)}")
        if len(pending) > len(asked):
            lines.append(f"{len(pending) - len(asked)} more files it asked for are not part of this approval "
                         "and will be refused.")
        lines.append("Allow this read?")
        try:
            answer = await ctx.session.elicit_form("\n".join(lines), {"type": "object", "properties": {}},
                                                   related_request_id=ctx.request_id)
        except Exception:  # noqa: BLE001 - a client that failed to ask: not an approval
            log.warning("asking the user for approval failed", exc_info=True)
            return {}
        return {path: reasons for path, (reasons, _) in asked.items()} if answer.action == "accept" else {}


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _invalid(exc: InvalidParams) -> types.CallToolResult:
    return _error(f"Error: invalid arguments: {exc}. Call again with arguments matching the tool's schema.")


def _parts(parts) -> list:
    out = []
    for part in joined(parts):
        if isinstance(part, ImagePart):
            out.append(types.ImageContent(type="image", data=part.data, mime_type=part.mime_type))
        else:
            out.append(types.TextContent(type="text", text=part.to_json()["text"]))
    return out


def _content(result: ReadResult) -> types.CallToolResult:
    """A read as MCP content: text parts as text, images as images; an error result as an
    error (isError). A read holding hidden content says how much in its structured content too,
    so that a client can warn its user without parsing the text."""
    return types.CallToolResult(content=_parts(result.content), is_error=result.is_error,
                                structured_content=_hidden(result.hidden))


def _many_content(reply: ManyResult | ReadResult) -> types.CallToolResult:
    if isinstance(reply, ReadResult):  # the whole call failed (its deadline)
        return _content(reply)
    hidden: dict[str, int] = {}
    for f in reply.files:
        for kind, n in ((f.result.hidden or {}) if f.result is not None else {}).items():
            hidden[kind] = hidden.get(kind, 0) + n
    return types.CallToolResult(content=_parts(reply.content), is_error=False, structured_content=_hidden(hidden))


def _hidden(counts: dict[str, int] | None) -> dict | None:
    """The structured content of a reply holding passages a person would not see (hidden.py)."""
    return {"hidden": counts} if counts else None


class _Lines:
    """The client's messages, a line each, as the SDK's stdio transport reads them (readline); a
    line over MAX_MESSAGE_BYTES is skipped, answered through `send` once it is set (the transport's
    write stream), and the next line read."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.send: Callable[[SessionMessage], Awaitable[None]] | None = None

    def readline(self) -> str:
        while True:
            line = self.stream.readline(MAX_MESSAGE_BYTES + 1)
            if len(line) <= MAX_MESSAGE_BYTES or line.endswith(b"\n"):
                return line.decode("utf-8", errors="replace")
            size = len(line)
            while more := self.stream.readline(MESSAGE_SKIP_BYTES):
                size += len(more)
                if more.endswith(b"\n"):
                    break
            log.error("a message of %d bytes skipped: over %d", size, MAX_MESSAGE_BYTES)
            answer = _too_large(line, size)
            if answer is not None and self.send is not None:
                anyio.from_thread.run(self.send, SessionMessage(answer))


def _too_large(start: bytes, size: int) -> types.JSONRPCError | None:
    """The error answering a message of `size` bytes too long to take, from what its `start` says
    it is: a request's id (when its method comes first, as clients write it), or null when that
    does not show; None for a notification, which is not answered."""
    try:
        begun = pydantic_core.from_json(start, allow_partial=True)
    except ValueError:
        begun = None
    if isinstance(begun, dict) and "method" in begun and "id" not in begun:
        return None
    asked = isinstance(begun, dict) and "method" in begun and isinstance(begun.get("id"), (int, str))
    return types.JSONRPCError(jsonrpc="2.0", id=begun["id"] if asked else None, error=types.ErrorData(
        code=types.INVALID_REQUEST, message=f"a message of {size:,} bytes is over the {MAX_MESSAGE_BYTES:,} bytes "
        "this server takes, and was skipped. Send a smaller one: a tool's arguments are a path and a few short "
        "values."))


def _wire() -> BinaryIO:
    """The client's end of stdin on a descriptor of its own, descriptor 0 then reading the null
    device, as the SDK's transport does with the stdin it opens: no program the server starts reads
    the client's messages."""
    wire = os.fdopen(os.dup(0), "rb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return wire


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
        reads.service.start()
        lines = _Lines(_wire())
        try:
            async with stdio_server(stdin=anyio.wrap_file(lines)) as (read_stream, write_stream):
                lines.send = write_stream.send
                await server.run(read_stream, write_stream, server.create_initialization_options())
        finally:
            reads.service.close()

    anyio.run(run)
