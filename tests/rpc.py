"""A minimal JSON-RPC client over the server's stdio, as the extension talks to it (LSP framing)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

# How long a test waits for any one answer before it counts as a hang.
ANSWER_TIMEOUT = 30.0

# As the extension starts the server (extension/src/launch.ts, serverEnv): stdout unbuffered.
SERVER_ENV = {"PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8"}


def frame(message: dict) -> bytes:
    """One message as it goes over the wire: LSP's Content-Length header, then the JSON body."""
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_message(stream) -> dict | None:
    """The next framed message on a byte stream; None when the stream ends."""
    headers = {}
    while True:
        line = stream.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        key, _, value = line.decode("ascii").partition(":")
        headers[key.strip().lower()] = value.strip()
    return json.loads(stream.read(int(headers["content-length"])))


class ServerProcess:
    def __init__(self, workspace: Path | None, init_options: dict | None = None, roots: list[Path] | None = None,
                 env: dict[str, str] | None = None):
        env = {**os.environ, **SERVER_ENV,
               "PYTHONPATH": str(REPO / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""), **(env or {})}
        self.proc = subprocess.Popen([sys.executable, "-m", "agentread", "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self._next_id = 0
        self._answers: dict[Any, queue.Queue] = {}
        self._lock = threading.Lock()
        self.notifications: list[dict] = []
        self.stderr: list[bytes] = []
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()
        folders = [workspace] if workspace else []
        folders += roots or []
        init = self.request("initialize", {
            "processId": os.getpid(), "rootUri": None, "capabilities": {},
            "workspaceFolders": [{"uri": Path(f).resolve().as_uri(), "name": Path(f).name} for f in folders],
            "initializationOptions": init_options or {},
        })
        assert "result" in init, init
        self.notify("initialized", {})

    def _pump(self) -> None:
        while (message := read_message(self.proc.stdout)) is not None:
            if "id" in message and "method" not in message:
                self._queue(message["id"]).put(message)
            else:
                self.notifications.append(message)

    def _queue(self, msg_id) -> queue.Queue:
        with self._lock:
            return self._answers.setdefault(msg_id, queue.Queue())

    def _write(self, message: dict) -> None:
        with self._lock:
            self.proc.stdin.write(frame(message))
            self.proc.stdin.flush()

    def send(self, method: str, params: Any) -> int:
        with self._lock:
            self._next_id += 1
            msg_id = self._next_id
        self._write({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id

    def wait(self, msg_id: int, timeout: float = ANSWER_TIMEOUT) -> dict:
        return self._queue(msg_id).get(timeout=timeout)

    def request(self, method: str, params: Any, timeout: float = ANSWER_TIMEOUT) -> dict:
        return self.wait(self.send(method, params), timeout)

    def notify(self, method: str, params: Any) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def read(self, timeout: float = ANSWER_TIMEOUT, **params) -> dict:
        """agentread/read → the result object (asserting it is not a JSON-RPC error)."""
        answer = self.request("agentread/read", params, timeout)
        assert "result" in answer, answer
        return answer["result"]

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=5)
            self.notify("exit", None)
            self.proc.wait(timeout=5)
        except Exception:  # noqa: BLE001 - a test may have left it wedged; make sure it goes
            self.proc.kill()
            self.proc.wait()


def text_of(result: dict) -> str:
    return "\n".join(p["text"] for p in result["content"] if p["type"] == "text")


def processes() -> dict[int, tuple[int, float]]:
    """Every live process: pid -> (parent pid, CPU seconds used, user and system), from /proc."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # it ended meanwhile
                continue
            if fields[0] != "Z":  # a zombie has ended; its parent has yet to collect it
                table[int(entry.name)] = (int(fields[1]),
                                          (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))
    return table


def descendants(pid: int, table: dict) -> set[int]:
    family, grew = {pid}, True
    while grew:
        more = {child for child, (parent, _) in table.items() if parent in family} - family
        family |= more
        grew = bool(more)
    return family - {pid}


def tree_cpu_seconds(pid: int) -> float:
    """CPU time used so far by a process and all its live descendants (a server and its worker processes)."""
    table = processes()
    return sum(table[p][1] for p in descendants(pid, table) | {pid} if p in table)
