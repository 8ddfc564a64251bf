"""The round-trip floor: a plain stdio JSON-RPC loop (LSP framing, orjson) around the same
engine read.

What a server costs when it does nothing but frame, parse, read and answer, one request at a time.
"""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from agentread.engine import Engine  # noqa: E402
from agentread.request import parse_request  # noqa: E402
from agentread.workspace import Workspace  # noqa: E402


def main() -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    engine = Engine(Workspace())
    while True:
        length = 0
        while (line := stdin.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        if not line:
            return
        message = orjson.loads(stdin.read(length))
        method = message.get("method")
        if "id" not in message:
            continue
        if method == "initialize":
            root = message["params"]["rootUri"]
            engine.workspace.set_roots([unquote(urlparse(root).path)])
            answer = {"capabilities": {}}
        elif method == "shutdown":
            answer = None
        else:
            answer = engine.read(parse_request(message["params"])).to_json()
        body = orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": answer})
        stdout.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        stdout.flush()


if __name__ == "__main__":
    main()
