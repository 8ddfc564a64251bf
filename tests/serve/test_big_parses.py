"""A read that parses a whole file, whose memory the file decides (a notebook of millions of empty
cells, the syntax tree of a code file of one-character tokens), runs in a worker process: held to
the workers' memory limit, killed at its deadline, while the server's own memory stays flat and its
other reads are answered. Through the real server over stdio."""

from __future__ import annotations

from pathlib import Path

import pytest

from builders import markdown, notebook, write_empty_cells
from rpc import STOPPED_AFTER, ServerProcess, processes, text_of, wait_until, workers_reading

# Empty cells of the big notebook (about 47 MB): parsed in the server, it would take many times
# that (a few hundred bytes a cell), far past what the server's own memory varies by; parsed in a
# worker, it takes seconds, against milliseconds for the small reads made meanwhile.
EMPTY_CELLS = 1_000_000

# One-character tokens of the big code file (2 MB): its syntax tree takes hundreds of bytes a token.
CODE_TOKENS = 1_000_000


def peak_kb(pid: int) -> int:
    """The process's peak resident memory so far (VmHWM), in kB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1])


def big_notebook(folder: Path) -> tuple[str, dict]:
    write_empty_cells(folder / "big.ipynb", EMPTY_CELLS)
    return "big.ipynb", {}


def big_code(folder: Path) -> tuple[str, dict]:
    (folder / "big.py").write_bytes(b"x = [" + b"1," * CODE_TOKENS + b"]\n")
    return "big.py", {"outline": True}


@pytest.mark.parametrize("build", [big_notebook, big_code])
def test_a_huge_parse_runs_in_a_worker_the_server_stays_small_and_answers_meanwhile(tmp_path, build):
    name, params = build(tmp_path)
    size = (tmp_path / name).stat().st_size
    (tmp_path / "small.ipynb").write_bytes(notebook(markdown("a small notebook")))
    (tmp_path / "a.txt").write_text("line 1\nline 2\n")
    server = ServerProcess(workspace=tmp_path, env={"AGENTREAD_READ_DEADLINE": str(STOPPED_AFTER)})
    try:
        pid = server.proc.pid
        # Its readers imported and its memory settled by a read of each kind first.
        assert "a small notebook" in text_of(server.read(path="small.ipynb"))
        assert server.read(path="a.txt", outline=True)
        before = peak_kb(pid)
        big = server.send("agentread/read", {"path": name, **params})
        reading = wait_until(lambda: workers_reading(server, tmp_path / name), f"{name} read in a worker")
        assert server.read(path="a.txt")["endLine"] == 2
        assert "a small notebook" in text_of(server.read(path="small.ipynb"))
        assert server._queue(big).empty()  # answered while the big read still runs
        answer = server.wait(big)["result"]
        assert not answer["isError"] or answer["error"]["code"] in ("timeout", "too_complex"), answer
        if answer["isError"] and answer["error"]["code"] == "timeout":  # its worker, and the memory it held, gone
            wait_until(lambda: not reading & processes().keys(), "the worker past its deadline killed")
        assert (peak_kb(pid) - before) * 1024 < size, "the server's own memory grew by the file's size"
        assert server.read(path="a.txt")["endLine"] == 2
    finally:
        server.close()


def test_an_open_notebook_whose_saved_file_is_huge_is_merged_in_a_worker(tmp_path):
    """The editor's cells are read over the saved file's outputs: that file is parsed whole."""
    size = write_empty_cells(tmp_path / "big.ipynb", EMPTY_CELLS)
    (tmp_path / "small.ipynb").write_bytes(notebook(markdown("a small notebook")))
    server = ServerProcess(workspace=tmp_path, env={"AGENTREAD_READ_DEADLINE": str(STOPPED_AFTER)})
    try:
        pid = server.proc.pid
        assert "a small notebook" in text_of(server.read(path="small.ipynb"))
        cell = f"vscode-notebook-cell:{(tmp_path / 'big.ipynb').resolve()}#W0"
        server.notify("notebookDocument/didOpen", {
            "notebookDocument": {"uri": (tmp_path / "big.ipynb").resolve().as_uri(),
                                 "notebookType": "jupyter-notebook", "version": 1,
                                 "cells": [{"kind": 1, "document": cell, "metadata": {}}]},
            "cellTextDocuments": [{"uri": cell, "languageId": "markdown", "version": 1, "text": "# in the editor"}]})
        before = peak_kb(pid)
        answer = server.read(path="big.ipynb")
        if not answer["isError"]:
            assert answer["totalCells"] == 1 and "in the editor" in text_of(answer)
        else:
            assert answer["error"]["code"] in ("timeout", "too_complex"), answer
        assert (peak_kb(pid) - before) * 1024 < size, "the server's own memory grew by the file's size"
    finally:
        server.close()
