"""A minimal JSON-RPC client over the server's stdio, as the extension talks to it (LSP framing)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

REPO = Path(__file__).resolve().parents[1]

# How long a test waits for any one answer, or for a server to reach a state, before it counts
# as a hang: only a server that is stuck takes this long, so no test passes or fails on how fast
# the machine is.
ANSWER_TIMEOUT = 60.0

# How often a test looks whether a server has reached the state it waits for.
POLL_SECONDS = 0.01

# The read deadline of a server whose test waits out a read that never ends and then reads small
# files: far above what a read of a small file takes anywhere, and short enough that each such test
# waits it out only briefly.
STOPPED_AFTER = 10.0

# The least size of a file whose first line never ends (write_unending_line): a scan of less could
# end during a test's wait on some machine. Every file system the tests run on allows far larger
# files (ext4 16 TiB).
MIN_UNENDING_BYTES = 1 << 40

# A PDF reader that never returns for a file of this name and reaches no checkpoint, as PDFium stuck
# in C code would: injected into a server (ServerProcess's `inject`, or injected()), it spins in the
# worker reading the file.
STUCK_PDF = "stuck.pdf"
STUCK_READER = f"""
import agentread.readers.pdf as pdf
_real = pdf.read_pdf
def read_pdf(stream, request, path, *args, **kwargs):
    if path.endswith({STUCK_PDF!r}):
        while True:
            pass
    return _real(stream, request, path, *args, **kwargs)
pdf.read_pdf = read_pdf
"""

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
                 env: dict[str, str] | None = None, inject: str | None = None):
        """`inject`: Python source the server (and each process it starts) runs first;
        see injected()."""
        self._injected = tempfile.TemporaryDirectory(prefix="agentread-inject-") if inject else None
        env = {**os.environ, **SERVER_ENV,
               "PYTHONPATH": str(REPO / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""), **(env or {}),
               **(injected(Path(self._injected.name), inject) if inject else {})}
        self.proc = subprocess.Popen([sys.executable, "-m", "agentread", "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self._next_id = 0
        self._shut_down = False
        self._answers: dict[Any, queue.Queue] = {}
        self._lock = threading.Lock()
        self.notifications: list[dict] = []
        self.answered: list = []  # the ids of the answers, in the order they arrived
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
                self.answered.append(message["id"])
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
        self._shut_down |= method == "shutdown"
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
            if not self._shut_down:  # a server answers one shutdown only
                self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=ANSWER_TIMEOUT)
        except Exception:  # noqa: BLE001 - a test may have left it wedged; make sure it goes
            self.proc.kill()
            self.proc.wait()
        if self._injected:
            self._injected.cleanup()


def text_of(result: dict) -> str:
    """The text the model reads: the parts as a host joins them, with nothing between them."""
    return "".join(p["text"] for p in result["content"] if p["type"] == "text")


def body_of(result: dict) -> str:
    """The text the model reads but the version a file's result names (versions.py): a line of its
    own at the end, or, in a truncated read, the start of its closing line."""
    text = text_of(result)
    if result.get("version") and not result.get("unchanged"):
        tag = f"[version {result['version']}]"
        head, end, line = text.rpartition("\n")
        assert line.startswith(tag), line
        text = head if line == tag else head + end + line[len(tag) + 1:]
    return text


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


def injected(folder: Path, source: str) -> dict[str, str]:
    """The environment of a server that runs `source` first: it is written to `folder` as
    sitecustomize.py, which every Python process started with this environment imports (the
    server, and the process its workers are forked from). For faults and stuck readers no real
    input makes."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(source)
    return {"PYTHONPATH": os.pathsep.join([str(folder), str(REPO / "python"), os.environ.get("PYTHONPATH", "")])}


def write_unending_line(path: Path) -> Path:
    """A sparse file as large as its file system allows (never on disk), whose first line never
    ends: text for as far as the sniffer looks, then zeros. Finding its second line means scanning
    all of it, which no read here gets through: such a read ends only when it is stopped."""
    with open(path, "wb") as f:
        f.write(b"x" * (1 << 20))
        size = 1 << 62
        while True:
            try:
                f.truncate(size)
                return path
            except OSError:  # past the largest file the file system allows
                size //= 2
                if size < MIN_UNENDING_BYTES:
                    raise


def holders(pid: int, path: Path) -> dict[int, int]:
    """The processes of a server's tree (it and its descendants) that hold `path` open: pid -> how
    many times. A read of the file under way holds it open."""
    target = os.path.realpath(path)
    found = {}
    table = processes()
    for p in descendants(pid, table) | {pid}:
        try:
            fds = os.listdir(f"/proc/{p}/fd")
        except OSError:  # it ended meanwhile
            continue
        count = 0
        for fd in fds:
            try:
                count += os.readlink(f"/proc/{p}/fd/{fd}") == target
            except OSError:  # closed meanwhile
                continue
        if count:
            found[p] = count
    return found


def workers_reading(server: ServerProcess, path: Path) -> set[int]:
    """The server's worker processes that hold `path` open: reading it (the server itself holds it
    only while it looks at what the file is)."""
    return holders(server.proc.pid, path).keys() - {server.proc.pid}


def wait_until(condition: Callable[[], Any], what: str, timeout: float = ANSWER_TIMEOUT) -> Any:
    """Polls `condition` until it returns something true, and returns that; fails, naming `what`, if
    it is still false after `timeout` seconds (a hang)."""
    end = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < end, f"still not so after {timeout:g} s: {what}"
        time.sleep(POLL_SECONDS)
    return value


def serving(workspace: Path) -> Iterator[ServerProcess]:
    """A server on `workspace` for a fixture to yield from, stopped when the fixture ends."""
    proc = ServerProcess(workspace=workspace)
    yield proc
    proc.close()
