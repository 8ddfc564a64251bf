"""The MCP server through the SDK's own client: started as `python -m agentread mcp`, spoken to as
the agents in use speak to it. Shared by the tests that call it."""

from __future__ import annotations

import os
import sys

import pytest

pytest.importorskip("mcp", reason="the MCP SDK (the mcp extra) is not installed")

import anyio  # noqa: E402  (installed with the SDK)
from mcp import Client, StdioServerParameters, types  # noqa: E402


def server_params(*args: str) -> StdioServerParameters:
    # The SDK starts servers with a bare environment; this one needs PYTHONPATH to find the
    # package under test.
    return StdioServerParameters(command=sys.executable, args=["-m", "agentread", "mcp", *args], env=dict(os.environ))


def run(client_args: dict, *server_args: str, calls):
    """Start the server, connect as a client speaking today's protocol (as Claude Code, Cursor and
    VS Code do), and run `calls(client)`; its answer."""
    async def main():
        async with Client(server_params(*server_args), mode="legacy", **client_args) as client:
            return await calls(client)
    return anyio.run(main)


def texts(answer: types.CallToolResult) -> str:
    return "\n".join(c.text for c in answer.content if c.type == "text")
