"""The command line, as a user runs it: `python -m agentread read ...` in a fresh process."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def agentread(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentread", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "log.txt").write_text("".join(f"line {i}\n" for i in range(1, 5001)))
    return tmp_path


def test_read_prints_numbered_lines_and_how_to_go_on(folder: Path):
    done = agentread("read", "log.txt", "--offset", "10", "--limit", "3", cwd=folder)
    assert done.returncode == 0 and done.stderr == ""
    *lines, closing = done.stdout.splitlines()
    assert lines == ["    10\tline 10", "    11\tline 11", "    12\tline 12"]
    # The truncated read ends with how to continue; its version rides at the start of that line.
    assert re.fullmatch(r"\[version [0-9a-f]{16}\] \[Showing lines 10-12 of 5,000 \(limit of 3 lines\)\. Call "
                        r"again with offset=13 to continue\.\]", closing)


def test_a_negative_offset_reads_the_end(folder: Path):
    done = agentread("read", "log.txt", "--offset", "-2", cwd=folder)
    assert done.returncode == 0 and done.stdout.splitlines()[:-1] == ["  4999\tline 4999", "  5000\tline 5000"]


def test_json_prints_the_whole_result(folder: Path):
    done = agentread("read", "log.txt", "--limit", "2", "--json", cwd=folder)
    result = json.loads(done.stdout)
    assert done.returncode == 0
    assert (result["kind"], result["startLine"], result["endLine"], result["totalLines"]) == ("text", 1, 2, 5000)
    assert result["next"] == {"offset": 3}


def test_a_file_name_that_is_not_utf8_is_printed_with_a_replacement_character(folder: Path):
    with open(os.fsencode(folder) + b"/caf\xe9.txt", "wb") as f:
        f.write(b"x\n")
    done = agentread("read", ".", cwd=folder)
    assert done.returncode == 0 and "caf\ufffd.txt" in done.stdout, done.stderr


def test_exit_codes_tell_an_error_result_from_a_bad_request(folder: Path):
    missing = agentread("read", "nothing.txt", cwd=folder)
    assert missing.returncode == 1 and missing.stdout.startswith("Error: nothing.txt does not exist")
    invalid = agentread("read", "log.txt", "--offset", "0", cwd=folder)
    assert invalid.returncode == 2 and "invalid request" in invalid.stderr and invalid.stdout == ""
    outside = agentread("read", str(REPO / "README.md"), cwd=folder)
    assert outside.returncode == 1 and "outside" in outside.stdout


def test_a_reader_that_stops_early_ends_the_command_quietly(folder: Path):
    # `agentread read ... | head -1`: the pipe closes while the output (an image's 1 MB of base64
    # here, more than a pipe holds) is still being written. No traceback, no "Exception ignored" at
    # exit, status 0.
    from PIL import Image

    Image.frombytes("L", (1000, 1000), random.Random(1).randbytes(1_000_000)).save(folder / "noise.png")
    command = [sys.executable, "-m", "agentread", "read", "noise.png", "--json"]
    with subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        first = proc.stdout.readline()
        proc.stdout.close()
        stderr = proc.stderr.read()
        assert proc.wait(timeout=60) == 0
    assert first == b"{\n" and stderr == b""


@pytest.mark.parametrize("path, status", [("log.txt", 0), ("nothing.txt", 1)])
def test_output_to_a_pipe_already_closed_keeps_the_status_and_says_nothing(folder: Path, path: str, status: int):
    # `agentread read x | true`: the reader is gone before anything is written. Buffered output, as
    # in a shell (an unbuffered stdout would fail at the first write instead of at the flush).
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, "-m", "agentread", "read", path, "--limit", "1"], cwd=folder,
                              stdout=write_end, stderr=subprocess.PIPE, env=env, timeout=60)
    finally:
        os.close(write_end)
    assert done.returncode == status and done.stderr == b""


def test_several_paths_or_a_glob_read_into_one_reply(folder: Path):
    (folder / "a.md").write_text("alpha\n")
    (folder / "b.md").write_text("beta\n")
    done = agentread("read", "*.md", "missing.txt", "--json", cwd=folder)
    reply = json.loads(done.stdout)
    assert done.returncode == 0 and reply["kind"] == "many"
    assert [(f["path"], f["state"]) for f in reply["files"]] == [("a.md", "whole"), ("b.md", "whole"),
                                                                 ("missing.txt", "error")]
    text = agentread("read", "a.md", "b.md", cwd=folder).stdout
    assert text.index("==> a.md <==") < text.index("     1\talpha") < text.index("==> b.md <==")
    refused = agentread("read", "a.md", "b.md", "--offset", "2", cwd=folder)
    assert refused.returncode == 2 and "apply to one path" in refused.stderr


# What a server needs and a command that reads once does not: the protocols, the worker processes,
# the event loop and thread pools, the tools' JSON schema.
SERVER_MODULES = ("agentread.serve.jsonrpc", "agentread.serve.mcp", "agentread.serve.workers",
                  "agentread.serve.session", "pygls", "lsprotocol", "mcp", "anyio", "pydantic", "jsonschema",
                  "asyncio", "concurrent", "multiprocessing")
# The readers of one kind, as the readers' table names them (readers/__init__.py), and the modules
# of that package every read uses: the table's check of a request's fields, and sniffing's test for
# Office files.
KIND_READERS = {"text": ("agentread.readers.text", "agentread.readers.delimited"),
                "pdf": ("agentread.readers.pdf",)}
EVERY_READ = ("agentread.readers.fields", "agentread.readers.office_detect")
# What a read of one file needs not: the reads of many files, a diff (a read with `since` of a
# changed file), OpenSSL's hashes (versions are xxhash's), datetime, and filetype (text and PDF
# heads are told without it).
NOT_ONE_READ = ("agentread.many", "difflib", "hashlib", "datetime", "filetype")


def imported_by(*args: str, cwd: Path) -> set[str]:
    """The modules `agentread ARGS` imports, as `python -X importtime` lists them."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "agentread", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}


@pytest.mark.parametrize("kind, args", [("text", ["log.txt", "--limit", "1"]), ("pdf", ["a.pdf", "--pages", "1"]),
                                        ("pdf", ["a.pdf", "--outline"])])
def test_a_read_imports_the_read_service_and_its_kinds_reader_only(folder: Path, kind: str, args: list[str]):
    from builders import build_pdf

    (folder / "a.pdf").write_bytes(build_pdf(["first page", "second page"]))
    imported = imported_by("read", *args, cwd=folder)
    assert "agentread.serve.service" in imported and "agentread.engine" in imported  # the one read service
    assert {name for name in imported if name.startswith(KIND_READERS[kind])}  # the kind's own reader
    servers = {name for name in imported if name.startswith(SERVER_MODULES)}
    others = {name for name in imported if name.startswith("agentread.readers.")
              and not name.startswith(KIND_READERS[kind]) and name not in EVERY_READ}
    assert servers == set() and others == set()
    assert {name for name in imported if name.startswith(NOT_ONE_READ)} == set()


def test_a_read_past_its_deadline_is_answered_timeout_without_an_event_loop(tmp_path: Path):
    """The command line reads on a thread of its own (ReadService.read_now): a read that never ends
    is told to stop at the deadline, and the command answers as a server would."""
    from rpc import write_unending_line

    write_unending_line(tmp_path / "huge.log")
    env = {**os.environ, "AGENTREAD_READ_DEADLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "agentread", "read", "huge.log", "--offset", "2"], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1
    assert done.stdout.startswith("Error: reading huge.log took longer than 1 s and was stopped. Read a smaller part")


def test_a_cell_longer_than_a_reply_reads_on_with_char(tmp_path: Path):
    from builders import workbook

    cell = "".join(f"word{i} " for i in range(1200))  # about 9 KB: several 2,000-byte replies
    (tmp_path / "wide.xlsx").write_bytes(workbook({"A1": cell}))
    args, pieces = ["--pages", "1", "--offset", "1", "--column", "1"], []
    for _ in range(50):
        result = json.loads(agentread("read", "wide.xlsx", *args, "--max-bytes", "2000", "--json", cwd=tmp_path).stdout)
        text = "".join(part["text"] for part in result["content"] if part["type"] == "text")
        pieces.append(re.search(r"^A1(?: from character [\d,]+)?: (.*?)(?: \[… cell A1 cut at [^\]]*\])?$", text,
                                re.M).group(1))
        if "next" not in result:
            break
        args = [arg for key, value in result["next"].items() for arg in (f"--{key}", str(value))]
    assert len(pieces) > 3 and "".join(pieces) == cell
