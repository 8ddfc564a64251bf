"""The real server process over stdio: handshake, reads, malformed requests, cancellation,
concurrency, special files, live editor buffers, and logs that never touch the protocol channel."""

from __future__ import annotations

import fcntl
import json
import mmap
import os
import queue
import socket
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from rpc import (
    ANSWER_TIMEOUT,
    REPO,
    SERVER_ENV,
    STOPPED_AFTER,
    ServerProcess,
    body_of,
    frame,
    holders,
    read_message,
    text_of,
    wait_until,
    write_unending_line,
)

# Where every read thread is taken, a read waiting for one is not answered within this long:
# it would be at once if it did not wait. Only how sure the check is depends on it, not
# whether it passes.
SEEN_WAITING = 1.0

# Injected into a server: any read of a small text file counts as quick. What makes a read quick by
# its time is tested on its own (test_mechanisms); here a first read slowed by a busy machine must
# not leave the file to the read threads.
ANY_READ_IS_QUICK = """
import agentread.serve.service as service
service.QUICK_READ_SECONDS = service.QUICK_READ_SLOW_SECONDS = float("inf")
"""


def write_lines(path: Path, n: int) -> Path:
    path.write_text("".join(f"line {i}\n" for i in range(1, n + 1)))
    return path


def test_handshake_reports_name_and_version(tmp_path):
    proc = ServerProcess(workspace=tmp_path)
    try:
        assert proc.proc.poll() is None
        wait_until(lambda: any(str(tmp_path.resolve()) in n["params"]["message"] for n in proc.notifications
                               if n.get("method") == "window/logMessage"), "the log names the workspace")
    finally:
        proc.close()
    assert proc.proc.returncode == 0


def test_read_relative_path_against_workspace_folder(server, tmp_path):
    write_lines(tmp_path / "a.txt", 3)
    result = server.read(path="a.txt")
    assert result["kind"] == "text" and result["isError"] is False
    assert body_of(result) == "     1\tline 1\n     2\tline 2\n     3\tline 3"
    assert (result["totalLines"], result["startLine"], result["endLine"]) == (3, 1, 3)
    assert result["path"] == str((tmp_path / "a.txt").resolve())


def test_non_ascii_answers_are_framed_by_their_bytes(server, tmp_path):
    # Answers are UTF-8: Content-Length counts bytes, so an answer that miscounted would cut
    # the next one.
    lines = ["naïve café ✓", "日本語のテキスト", "emoji 🙂 and Ω"]
    (tmp_path / "u.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for _ in range(3):
        assert body_of(server.read(path="u.txt")) == "\n".join(f"{n:6d}\t{line}" for n, line in enumerate(lines, 1))
    uri = (tmp_path / "open.txt").as_uri()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "plaintext", "version": 1,
                                                            "text": "a lone surrogate \ud800 in a buffer\n"}})
    (tmp_path / "open.txt").write_text("on disk\n")
    answer = server.read(path="open.txt")  # whatever the buffer holds, the answer arrives whole
    assert answer["isError"] is False and "lone surrogate" in text_of(answer)


def test_window_and_next_continue_exactly(server, tmp_path):
    write_lines(tmp_path / "big.txt", 4500)
    seen, params = [], {"path": "big.txt"}
    while True:
        result = server.read(**params)
        seen += [line.split("\t", 1)[1] for line in text_of(result).split("\n") if "\t" in line]
        if not result["truncated"]:
            break
        assert "offset=" in body_of(result).splitlines()[-1]
        params = {"path": "big.txt", **result["next"]}
    assert seen == [f"line {i}" for i in range(1, 4501)]


def test_negative_offset_reads_the_last_lines(server, tmp_path):
    write_lines(tmp_path / "big.txt", 4500)
    result = server.read(path="big.txt", offset=-3)
    assert body_of(result).split("\n") == ["  4498\tline 4498", "  4499\tline 4499", "  4500\tline 4500"]
    assert (result["startLine"], result["endLine"], result["totalLines"]) == (4498, 4500, 4500)


@pytest.mark.parametrize("params, fragment", [
    ({}, "'path' is required"),
    ({"path": 7}, "'path'"),
    ({"path": "a.txt", "offset": 0}, "'offset'"),
    ({"path": "a.txt", "offset": "-3"}, "'offset'"),
    ({"path": "a.txt", "limit": -3}, "'limit'"),
    ({"path": "a.txt", "limit": "ten"}, "'limit'"),
    ({"path": "a.txt", "pages": ["1"]}, "'pages'"),
    ({"path": "a.txt", "consent": "yes"}, "'consent'"),
    ({"path": "a.txt", "bogus": 1}, "unknown parameter"),
])
def test_malformed_request_is_invalid_params(server, params, fragment):
    answer = server.request("agentread/read", params)
    assert answer["error"]["code"] == -32602, answer
    assert fragment in answer["error"]["message"]
    assert server.read(path=".")["kind"] == "directory"  # still serving
    failures = [n["params"]["message"] for n in server.notifications
                if n.get("method") == "window/logMessage" and n["params"]["type"] == 1]  # errors logged
    assert not failures, failures


def test_params_that_are_not_an_object(server):
    answer = server.request("agentread/read", ["a.txt"])
    assert answer["error"]["code"] in (-32602, -32600), answer


def test_error_results_are_results_not_rpc_errors(server):
    result = server.read(path="missing.txt")
    assert result["isError"] is True and result["kind"] == "error"
    assert result["error"]["code"] == "not_found"
    assert text_of(result).startswith("Error: ")


def test_eight_concurrent_requests_each_get_their_own_answer(server, tmp_path):
    for i in range(8):
        (tmp_path / f"f{i}.txt").write_text(f"file {i}\n" * (i + 1))
    ids = {server.send("agentread/read", {"path": f"f{i}.txt"}): i for i in range(8)}
    for msg_id, i in ids.items():
        result = server.wait(msg_id)["result"]
        assert result["totalLines"] == i + 1
        assert f"file {i}" in text_of(result)


def _read_that_never_ends(server, folder: Path) -> int:
    """A read under way of a sparse file whose second line never starts (rpc.write_unending_line):
    it ends only when it is stopped. Its id."""
    return _reads_that_never_end(server, folder, 1)[0]


def _reads_that_never_end(server, folder: Path, count: int) -> list[int]:
    """`count` such reads, each under way on a read thread (holding the file open) when
    this returns."""
    huge = write_unending_line(folder / "huge.log")
    ids = [server.send("agentread/read", {"path": "huge.log", "offset": 2}) for _ in range(count)]
    wait_until(lambda: sum(holders(server.proc.pid, huge).values()) == count, f"{count} reads of huge.log under way")
    return ids


def _stopped(server, folder: Path) -> None:
    """Waits until no read of huge.log is under way any more: each has stopped and
    closed the file."""
    wait_until(lambda: not holders(server.proc.pid, folder / "huge.log"), "the reads of huge.log stopped")


def test_cancel_answers_request_cancelled_and_stops_the_work(server, tmp_path):
    msg_id = _read_that_never_ends(server, tmp_path)
    server.notify("$/cancelRequest", {"id": msg_id})
    answer = server.wait(msg_id)
    assert answer.get("error", {}).get("code") == -32800, answer
    _stopped(server, tmp_path)  # the read, which would never end, stopped: its thread is free
    assert server.read(path="huge.log", limit=1)["endLine"] == 1


def test_reads_cancelled_at_any_moment_are_answered_exactly_once(server, tmp_path):
    """Reads cancelled right away, a little later or after their answer has gone, through the real
    process: each is answered once (the orders themselves are played one by one in
    test_mechanisms)."""
    (tmp_path / "small.txt").write_text("".join(f"line {i}\n" for i in range(1, 3001)))
    ids = []
    for i in range(150):
        ids.append(server.send("agentread/read", {"path": "small.txt", "offset": 1 + i % 2000, "limit": 1 + i * 13}))
        if i % 3:
            time.sleep(0.0005 * (i % 5))
            server.notify("$/cancelRequest", {"id": ids[-1]})
    answers = [server.wait(msg_id) for msg_id in ids]
    assert all("result" in a or a["error"]["code"] == -32800 for a in answers), answers
    later = server.read(path="small.txt", limit=1)  # answered after all of them: any second answer came first
    assert later["endLine"] == 1
    assert all(server._queue(msg_id).empty() for msg_id in ids), "a read was answered twice"


@pytest.fixture
def quick_server(tmp_path):
    """A server on an empty temp folder in which any read of a small text file counts as quick."""
    proc = ServerProcess(workspace=tmp_path, inject=ANY_READ_IS_QUICK)
    yield proc
    proc.close()


def test_repeat_reads_of_a_small_text_file_are_answered_while_every_worker_is_busy(quick_server, tmp_path):
    """A small text file read quickly before, unchanged, is read on the event loop
    (service.QUICK_READ_BYTES), and a file read in a worker process planned quickly before is
    planned there; a window of a file past that size, a file changed since, open in the editor
    (whose buffer may be any size), read raw before (a notebook, now read by cells) or now behind a
    link that led to a small one waits for a read thread like any other read."""
    from agentread.serve.service import QUICK_READ_BYTES, READ_THREADS

    server = quick_server
    write_lines(tmp_path / "small.txt", 3000)
    write_lines(tmp_path / "open.txt", 3)
    (tmp_path / "large.txt").write_text("y" * QUICK_READ_BYTES + "\n")
    first = server.read(path="small.txt", offset=10, limit=5)
    assert server.read(path="large.txt")["endLine"] == 1
    assert server.read(path="open.txt")["endLine"] == 3
    (tmp_path / "nb.ipynb").write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    assert server.read(path="nb.ipynb", raw=True)["kind"] == "text"
    (tmp_path / "link.txt").symlink_to(write_lines(tmp_path / "other.txt", 4))
    assert server.read(path="link.txt")["endLine"] == 4
    (tmp_path / "link.txt").unlink()
    (tmp_path / "link.txt").symlink_to(tmp_path / "large.txt")
    server.notify("textDocument/didOpen", {"textDocument": {"uri": (tmp_path / "open.txt").as_uri(), "version": 1,
                                                            "languageId": "plaintext", "text": "a\n" * 5000}})
    busy = _reads_that_never_end(server, tmp_path, READ_THREADS)
    waiting = []
    try:
        assert server.read(path="small.txt", offset=10, limit=5) == first
        assert server.read(path="small.txt", offset=2990)["endLine"] == 3000  # any window of it
        assert server.read(path="large.txt")["endLine"] == 1  # read whole in a worker, as before
        waiting.append(server.send("agentread/read", {"path": "large.txt", "offset": 1}))
        with open(tmp_path / "small.txt", "a") as f:
            f.write("line 3001\n")
        waiting.append(server.send("agentread/read", {"path": "small.txt", "offset": 3001}))
        waiting.append(server.send("agentread/read", {"path": "open.txt", "offset": 5000}))
        waiting.append(server.send("agentread/read", {"path": "nb.ipynb"}))
        waiting.append(server.send("agentread/read", {"path": "link.txt"}))
        for msg_id in waiting:
            with pytest.raises(queue.Empty):
                server.wait(msg_id, timeout=SEEN_WAITING)
    finally:
        for msg_id in busy:
            server.notify("$/cancelRequest", {"id": msg_id})
    answers = [server.wait(msg_id)["result"] for msg_id in waiting]
    assert [answer.get("endLine") for answer in answers] == [1, 3001, 5000, None, 1]
    assert answers[3]["kind"] == "notebook"
    assert [server.wait(msg_id)["error"]["code"] for msg_id in busy] == [-32800] * READ_THREADS


def test_a_client_response_with_the_id_of_a_read_does_not_leave_it_unanswered(tmp_path):
    """A response from the client bearing the id of a read in flight answers no request of the
    server's. The read is still answered (at its deadline, here) and the server goes on."""
    proc = ServerProcess(workspace=tmp_path, env={"AGENTREAD_READ_DEADLINE": str(STOPPED_AFTER)})
    try:
        msg_id = _read_that_never_ends(proc, tmp_path)
        proc._write({"jsonrpc": "2.0", "id": msg_id, "result": {"not": "a request of the server's"}})
        proc.notify("$/cancelRequest", {"id": msg_id})
        answer = proc.wait(msg_id, timeout=STOPPED_AFTER + ANSWER_TIMEOUT)
        assert answer.get("error", {}).get("code") == -32800 or answer["result"]["error"]["code"] == "timeout"
        assert proc.read(path="huge.log", limit=1)["endLine"] == 1
    finally:
        proc.close()


def test_shutdown_with_a_read_in_flight_cancels_it_and_answers_both(server, tmp_path):
    msg_id = _read_that_never_ends(server, tmp_path)
    assert server.request("shutdown", None) == {"jsonrpc": "2.0", "id": msg_id + 1, "result": None}
    assert server.wait(msg_id)["error"]["code"] == -32800


def test_answers_written_at_once_into_a_full_pipe_never_mix(tmp_path):
    """Workers answer from their own threads. With stdout unbuffered, as the extension starts the
    server, a write(2) into a full pipe lets another writer in midway unless one message is written
    whole at a time: 40 answers of about 50 KB wait in the pipe while the client is not reading,
    then each must parse."""
    (tmp_path / "big.txt").write_text("".join(f"line {i} " + "x" * 60 + "\n" for i in range(3000)))
    env = {**os.environ, **SERVER_ENV, "PYTHONPATH": str(REPO / "python")}
    proc = subprocess.Popen([sys.executable, "-m", "agentread", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        messages = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
                     "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}},
                    {"jsonrpc": "2.0", "method": "initialized", "params": {}}]
        messages += [{"jsonrpc": "2.0", "id": i, "method": "agentread/read", "params": {"path": "big.txt"}}
                     for i in range(1, 41)]
        proc.stdin.write(b"".join(frame(m) for m in messages))
        proc.stdin.flush()
        # The pipe fills and workers wait in write(2): it holds all but part of one of its pages
        # (the first answer's page is not filled).
        full = fcntl.fcntl(proc.stdout.fileno(), fcntl.F_GETPIPE_SZ) - mmap.PAGESIZE
        wait_until(lambda: _unread_bytes(proc.stdout) >= full, "the server's output pipe full")
        answered = set()
        while len(answered) < 41:
            message = read_message(proc.stdout)  # raises on a broken frame or body
            if "id" in message:
                answered.add(message["id"])
                assert message["id"] == 0 or "result" in message, message
        assert answered == set(range(41))
    finally:
        proc.kill()
        proc.wait()


def _unread_bytes(stream) -> int:
    """How many bytes wait in a pipe for its reader."""
    return struct.unpack("i", fcntl.ioctl(stream.fileno(), termios.FIONREAD, b"\0" * 4))[0]


def test_a_document_whose_uri_names_no_file_does_not_break_reads(server, tmp_path):
    (tmp_path / "a.txt").write_text("hi\n")
    server.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///tmp/a%00b", "languageId": "plaintext",
                                                            "version": 1, "text": "x"}})
    assert server.read(path="a.txt")["endLine"] == 1


def test_a_read_past_the_deadline_is_stopped_with_an_error(tmp_path):
    huge = write_unending_line(tmp_path / "huge.log")
    proc = ServerProcess(workspace=tmp_path, env={"AGENTREAD_READ_DEADLINE": str(STOPPED_AFTER)})
    try:
        result = proc.read(path=huge.name, offset=2, timeout=STOPPED_AFTER + ANSWER_TIMEOUT)
        assert result["error"]["code"] == "timeout" and "offset/limit" in text_of(result)
        _stopped(proc, tmp_path)  # the thread reading it stopped too
        assert proc.read(path="huge.log", limit=1)["endLine"] == 1
    finally:
        proc.close()


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/random", "/dev/null"])
def test_devices_are_refused_quickly(server, device):
    # From stat alone: a reader that opened the device would answer something else (what it read, or
    # `timeout` at the deadline for one that never ends), however long it took.
    result = server.read(path=device, consent=True)
    assert result["error"]["code"] == "special_file"
    assert server.read(path=".")["isError"] is False


def test_a_search_past_the_deadline_is_told_how_to_search_less_not_to_read_less(tmp_path):
    """A search stops itself at a line's start before the deadline; in a line that never ends it
    cannot, and its timeout says what narrows a search (`limit` counts hits: it would not)."""
    huge = write_unending_line(tmp_path / "huge.log")
    proc = ServerProcess(workspace=tmp_path, env={"AGENTREAD_READ_DEADLINE": str(STOPPED_AFTER)})
    try:
        result = proc.read(path=huge.name, find="needle", timeout=STOPPED_AFTER + ANSWER_TIMEOUT)
        assert result["error"]["code"] == "timeout" and "narrower pattern" in text_of(result)
        assert "limit" not in text_of(result)
    finally:
        proc.close()


def test_fifo_and_socket_are_refused_without_opening(server, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    sock_path = tmp_path / "sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    try:
        for name in ("pipe", "sock"):
            result = server.read(path=name)
            assert result["error"]["code"] == "special_file", result
        # Nobody holds the FIFO open for reading: a non-blocking writer finds no reader.
        with pytest.raises(OSError) as info:
            os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        assert info.value.errno == 6  # ENXIO
    finally:
        sock.close()
    assert server.read(path=".")["kind"] == "directory"


def test_open_document_is_read_from_the_live_buffer(server, tmp_path):
    doc = tmp_path / "draft.py"
    doc.write_text("saved = 1\n")
    uri = doc.resolve().as_uri()
    server.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": "saved = 1\n"}})
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": "unsaved = 2\r\nmore = 3\n"}]})
    result = server.read(path="draft.py")
    assert body_of(result) == "     1\tunsaved = 2\n     2\tmore = 3"
    assert "editor buffer" in result["encoding"]
    server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    changed, saved = body_of(server.read(path="draft.py")).split("\n")  # not what this session read last
    assert changed.startswith("[Changed since this session last read") and saved == "     1\tsaved = 1"


def test_a_document_opened_through_a_link_is_read_from_its_buffer(server, tmp_path):
    """The editor may name a file by a path through a link: the buffer is the real file's."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "notes.txt").write_text("saved\n")
    (tmp_path / "via").symlink_to(tmp_path / "real", target_is_directory=True)
    server.notify("textDocument/didOpen", {"textDocument": {"uri": (tmp_path / "via" / "notes.txt").as_uri(),
                                                            "languageId": "plaintext", "version": 1,
                                                            "text": "unsaved\n"}})
    assert body_of(server.read(path="real/notes.txt")) == "     1\tunsaved"


def test_workspace_folders_change_moves_the_root(server, tmp_path_factory):
    other = tmp_path_factory.mktemp("other")
    write_lines(other / "b.txt", 2)
    assert server.read(path=str(other / "b.txt"))["error"]["code"] == "outside_workspace"
    server.notify("workspace/didChangeWorkspaceFolders", {"event": {
        "added": [{"uri": other.resolve().as_uri(), "name": "other"}], "removed": []}})
    time.sleep(0.2)
    assert server.read(path=str(other / "b.txt"))["totalLines"] == 2


def test_stdout_carries_only_protocol_messages(server, tmp_path):
    """Every byte on stdout parsed as a framed JSON-RPC message, even across failing reads."""
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.4\n garbage without xref")
    assert server.read(path="bad.pdf")["isError"] is True
    assert server.read(path="nope")["isError"] is True
    assert server.proc.poll() is None


def _answers(stream, count: int) -> list[dict]:
    answers = []
    while len(answers) < count:
        message = read_message(stream)
        assert message is not None, f"the server closed its output after {len(answers)} answers"
        if "id" in message:
            answers.append(message)
    return answers


def test_a_header_line_past_the_limit_ends_the_connection(tmp_path):
    """A client that is not speaking LSP (one endless line, no Content-Length) ends the server: it
    is not held in memory however long it grows."""
    from agentread.serve.jsonrpc import MAX_HEADER_LINE_BYTES

    proc = subprocess.Popen([sys.executable, "-m", "agentread", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(REPO / "python")})
    try:
        proc.stdin.write(b"x" * (MAX_HEADER_LINE_BYTES + 10))
        proc.stdin.flush()
        assert proc.wait(timeout=ANSWER_TIMEOUT) is not None
        assert b"header line over" in proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("stdin_kind", ["pipe", "socket", "file"])
def test_stdin_of_any_kind_is_read_whole_and_its_end_stops_the_server(tmp_path, stdin_kind):
    """A pipe (as Python spawns), a socket (as Node does), a file: messages split anywhere, or
    several in one write, are each answered once; at the end of input the server exits."""
    write_lines(tmp_path / "a.txt", 3)
    data = b"".join(frame(message) for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": tmp_path.resolve().as_uri(), "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "agentread/read", "params": {"path": "a.txt"}},
        {"jsonrpc": "2.0", "id": 3, "method": "agentread/read", "params": {"path": "a.txt", "offset": 3}}))
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    command = [sys.executable, "-m", "agentread", "serve"]
    if stdin_kind == "file":
        (tmp_path / "in.bin").write_bytes(data)
        with open(tmp_path / "in.bin", "rb") as stdin:
            proc = subprocess.Popen(command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        send = close = None
    elif stdin_kind == "socket":
        ours, theirs = socket.socketpair()
        proc = subprocess.Popen(command, stdin=theirs.fileno(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=env)
        theirs.close()
        send, close = ours.sendall, ours.close
    else:
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=env)
        send, close = (lambda b: (proc.stdin.write(b), proc.stdin.flush())), proc.stdin.close
    try:
        if send:
            cut = data.index(b"agentread/read")  # the first read split mid-header and mid-body, byte by byte
            for piece in (data[:cut - 60], *[data[i:i + 1] for i in range(cut - 60, cut + 20)], data[cut + 20:]):
                send(piece)
                time.sleep(0.001)
        answers = {a["id"]: a for a in _answers(proc.stdout, 3)}
        assert answers.keys() == {1, 2, 3} and "capabilities" in answers[1]["result"]
        if stdin_kind == "file":  # input ends at once: reads still running then are cancelled, each answered so
            assert all("result" in answers[i] or answers[i]["error"]["code"] == -32800 for i in (2, 3))
        else:
            assert body_of(answers[2]["result"]) == "     1\tline 1\n     2\tline 2\n     3\tline 3"
            assert body_of(answers[3]["result"]) == "     3\tline 3"
            close()
        assert proc.wait(timeout=ANSWER_TIMEOUT) is not None
    finally:
        proc.kill()


def test_a_word_files_picture_comes_with_its_text(server, tmp_path):
    import base64
    import shutil

    shutil.copy(REPO / "tests" / "data" / "office" / "markitdown-test.docx", tmp_path / "paper.docx")
    result = server.read(path="paper.docx")
    assert result["kind"] == "document" and [p["type"] for p in result["content"]] == ["text", "image", "text"]
    text, image, _closing = result["content"]
    assert text["text"].endswith('    22\t[image 1: word/media/image1.png "图形用户界面, 文本, 应用程序, '
                                 '信件 AI 生成的内容可能不正确。", image/png 1274x870, attached]\n')
    assert (image["mimeType"], image["width"], image["height"]) == ("image/png", 1274, 870)
    assert base64.b64decode(image["data"]).startswith(b"\x89PNG")
