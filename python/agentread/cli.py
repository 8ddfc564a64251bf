"""`agentread read PATH ...` prints what the model would see; `agentread serve` runs the JSON-RPC
server; `agentread mcp` the Model Context Protocol server."""

from __future__ import annotations

import argparse
import gc
import os
import sys

from agentread.request import InvalidParams, parse_request


def _read(args: argparse.Namespace) -> int:
    from agentread.result import ReadResult
    from agentread.serve.service import ReadService
    from agentread.versions import command_line_versions
    from agentread.workspace import Workspace

    window = {"offset": args.offset, "limit": args.limit, "pages": args.pages, "cells": args.cells, "raw": args.raw}
    window["view"] = args.view
    window["since"] = args.since
    window["column"] = args.column
    window["char"] = args.char
    window["range"] = args.range
    window = {k: v for k, v in window.items() if v is not None}
    size = {"maxBytes": args.max_bytes} if args.max_bytes is not None else {}
    size.update({k: v for k, v in (("find", args.find), ("regex", args.regex), ("ignoreCase", args.ignore_case))
                 if v is not None})  # a search applies to every path, as in read_many
    if args.outline:
        size["outline"] = True  # so does an outline
    # The one read service the servers use, without worker processes (they would cost the
    # command's start more than they save), and with the session it keeps in a folder; called
    # without an event loop, whose modules would too.
    service = ReadService(Workspace([args.root or os.getcwd()]), workers=False, versions=command_line_versions())
    try:
        # One reply, its budget shared; agentread.many is imported only for it.
        if len(args.paths) > 1 or service.workspace.is_glob(args.paths[0]):
            from agentread.many import parse_many_request

            if window or args.consent:
                raise InvalidParams("--offset, --limit, --pages, --cells, --raw, --view, --since, --column, --char, "
                                    "--range and --consent apply to one path; read the files one at a time for them")
            result = service.read_many_now(parse_many_request({"paths": args.paths, **size}), lambda path: frozenset())
        else:
            result = service.read_now(parse_request({"path": args.paths[0], **window, **size,
                                                     **({"consent": True} if args.consent else {})}))
        failed = isinstance(result, ReadResult) and result.is_error  # not a file's error among many
    except InvalidParams as exc:
        return _emit(sys.stderr, f"agentread: invalid request: {exc}\n", 2)
    finally:
        service.close()  # its session written once, whatever the call read
    if args.json:
        import json

        text = json.dumps(result.to_json(), ensure_ascii=False, indent=1)
    else:
        text = result.text()
    return _emit(sys.stdout, text + "\n", 1 if failed else 0)


def _emit(stream, text: str, code: int) -> int:
    """Write and flush `text`, and give `code`; a reader that has gone
    (`agentread read big.log | head`) has what it wanted."""
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        pass
    return code


def _mcp(args: argparse.Namespace) -> int:
    """The MCP server, whose SDK is an optional extra: without it, one line saying how
    to install it."""
    try:
        from agentread.serve import mcp as mcp_server
    except ImportError as exc:
        if exc.name is None or not exc.name.startswith(("mcp", "anyio", "pydantic")):
            raise
        return _emit(sys.stderr, "agentread: the MCP server needs the MCP SDK: pip install 'agentread[mcp]' "
                     "(or pip install mcp)\n", 1)
    mcp_server.serve(args)
    return 0


def main(argv: list[str] | None = None) -> int:
    """The command line; its exit status. Run as the `agentread` command (no `argv`), a read ends
    the process itself once its output is flushed, without the interpreter's teardown: freeing a
    large notebook's objects one by one is a noticeable share of the read."""
    parser = argparse.ArgumentParser(prog="agentread", description="Read files the way an AI agent needs them.")
    sub = parser.add_subparsers(dest="command", required=True)
    read = sub.add_parser("read", help="print what the model would see for PATH (several: one reply, as read_many)")
    read.add_argument("paths", metavar="PATH", nargs="+", help="a file or directory; several, or globs, in one reply")
    read.add_argument("--offset", type=int,
                      help="first line, 1-based; negative counts back from the end (-1: the last)")
    read.add_argument("--limit", type=int, help="number of lines (at most 2000)")
    read.add_argument("--pages", help='PDF pages, e.g. "3" or "10-20"')
    read.add_argument("--cells", help='notebook cells, e.g. "4", "2-7", "1,4-6", a cell id, or "outline"')
    read.add_argument("--outline", action="store_true", default=None,
                      help="the document's structure (bookmarks, headings, symbols, slides, sheets), each entry "
                           "with the arguments that read it (every path's)")
    read.add_argument("--root", help="workspace root (default: the current directory)")
    read.add_argument("--consent", action="store_true", default=None,
                      help="read even outside the root or a sensitive file (as if the user approved)")
    read.add_argument("--raw", action="store_true", default=None,
                      help="show a notebook's JSON source as numbered text lines")
    read.add_argument("--max-bytes", type=int,
                      help="the reply's text in bytes at most, as a host that passes on no more would need")
    read.add_argument("--view", choices=("text", "image"),
                      help="image: PDF pages as pictures, each with its text; text: no pictures at all")
    read.add_argument("--since", help="a version an earlier read gave: one line if the file is unchanged, else the "
                      "diff since then (the session folder, AGENTREAD_SESSION_DIR or ~/.cache/agentread/session, "
                      "holds earlier texts; set empty, none is kept)")
    read.add_argument("--column", type=int, help="1-based character where the first line continues (a cut line)")
    read.add_argument("--range", help="a spreadsheet's A1 range of one sheet: Data!B2:F40, or B2:F40 of the first")
    read.add_argument("--char", type=int, help="with --column in a spreadsheet: the character where a cut cell "
                      "continues")
    read.add_argument("--find", help="list the hits of this text instead of a window (every path's)")
    read.add_argument("--regex", action="store_true", default=None, help="--find is a regular expression")
    read.add_argument("--ignore-case", action="store_true", default=None, help="--find ignores case")
    read.add_argument("--json", action="store_true", help="print the whole result object")
    sub.add_parser("serve", help="run the JSON-RPC server on stdio")
    mcp = sub.add_parser("mcp", help="run the Model Context Protocol server on stdio (needs agentread[mcp])")
    mcp.add_argument("--root", action="append", default=[],
                     help="a folder the agent may read (repeatable); the client's MCP roots replace these when it "
                          "offers them (default: the current directory)")
    mcp.add_argument("--allow-outside-roots", action="store_true", help="read outside the roots without asking")
    mcp.add_argument("--allow-sensitive", action="store_true",
                     help="read sensitive files (.env, keys, credentials) without asking")
    mcp.add_argument("--unchanged-stub", action="store_true",
                     help="answer a repeated read of an unchanged file in this connection with one line saying so")
    args = parser.parse_args(argv)
    if args.command == "mcp":
        return _mcp(args)
    if args.command == "serve":
        # The protocol's libraries make some 50,000 objects at import that live as long as the
        # server. The collector walking them slowed start-up, and then every read that set off a
        # full collection: they are imported with it off, then left out of every collection
        # (gc.freeze).
        gc.disable()
        from agentread.serve.jsonrpc import serve

        gc.freeze()
        gc.enable()
        serve()
        return 0
    code = _read(args)  # its output written and flushed
    if argv is None:
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
