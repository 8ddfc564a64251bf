"""Prototype for the bench: `agentread serve` with its outgoing messages encoded by orjson instead of json.

The proposed server change, applied from outside so that it can be timed next to the real server. Falls back
to pygls's own encoder for anything orjson refuses (a lone surrogate in an editor buffer, say).
"""

from __future__ import annotations

import asyncio
import inspect
import types

import orjson

from agentread.server import serve, server


def _send_data(self, data) -> None:
    if not data or self.writer is None:
        return
    try:
        body = orjson.dumps(data, default=self._serialize_message)
    except (TypeError, orjson.JSONEncodeError):
        return type(self)._send_data(self, data)
    header = f"Content-Length: {len(body)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
    done = self.writer.write(header.encode("ascii") + body)
    if inspect.isawaitable(done):
        asyncio.ensure_future(done)


server.protocol._send_data = types.MethodType(_send_data, server.protocol)

if __name__ == "__main__":
    serve()
