"""Archives beside the tools a user reaches for: `unzip` and `tar`. The archives are built here,
deterministically, in a temporary folder: the repository's tracked files with a 95 MB log-like
member at the end, as a zip and as a tar.gz, and 20,000 small files as a zip and as a tar.gz.

Each agentread read is timed twice: the command line, one cold process as an agent runs it, and in
one process that has imported what a started server's worker has (serve/workers.py PRELOAD), as the
server reads. Each peer is one cold shell pipeline. Best of --runs each; every answer is checked
against the peer's before it is timed (the same lines, the same members, the same hit lines).

    python bench/archive.py [--runs 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import io
import json
import os
import random
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO / "python")}

DATE = (2024, 5, 1, 12, 30, 0)
MTIME = 1714566600  # DATE in UTC, for the tars
SEED = 20261126
BIG = "logs/big.log"
BIG_BYTES = 95_000_000  # under the reader's 100 MiB limit for a member (MAX_MEMBER_BYTES)
NEEDLE = "NEEDLE-7f3a"
NEEDLE_EVERY = 50_021  # lines: about 20 hits in the big member, every one shown in the first reply
MANY = 20_000  # small members of the many-files archives
DOC = "tree/docs/CONTRACT.md"  # a real text member of the tree archives


def big_log() -> bytes:
    """About BIG_BYTES of log lines, with NEEDLE on every NEEDLE_EVERY-th line."""
    rng = random.Random(SEED)
    levels = ["INFO"] * 8 + ["WARN", "ERROR"]
    words = ["users", "orders", "items", "search", "login", "cart", "report", "export"]
    lines, size, n = [], 0, 0
    while size < BIG_BYTES:
        n += 1
        line = (f"2024-05-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.{n % 1000:03d}Z "
                f"{rng.choice(levels):5} [worker-{rng.randrange(16):02d}] GET /api/v1/{rng.choice(words)}/"
                f"{rng.randrange(10**6)} took {rng.randrange(2000)} ms id={rng.getrandbits(64):016x}")
        if n % NEEDLE_EVERY == 0:
            line += f" {NEEDLE}"
        lines.append(line)
        size += len(line) + 1
    return ("\n".join(lines) + "\n").encode()


def tracked_files() -> list[tuple[str, bytes]]:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True).stdout
    files = []
    for name in sorted(names.decode().split("\0")):
        path = REPO / name
        if name and path.is_file() and not path.is_symlink():
            files.append((f"tree/{name}", path.read_bytes()))
    return files


def many_files() -> list[tuple[str, bytes]]:
    return [(f"many/d{i // 100:03d}/f{i:05d}.txt",
             f"file {i}\n".encode() + b"".join(f"line {k} of file {i}\n".encode() for k in range(i % 7)))
            for i in range(MANY)]


def write_zip(path: Path, files: list[tuple[str, bytes]]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            z.writestr(zipfile.ZipInfo(name, DATE), data, zipfile.ZIP_DEFLATED)


def write_tgz(path: Path, files: list[tuple[str, bytes]]) -> None:
    # no name or date in the gzip header: the same bytes every time
    with (open(path, "wb") as raw, gzip.GzipFile("", "wb", 6, raw, mtime=0) as packed,
          tarfile.open(fileobj=packed, mode="w", format=tarfile.PAX_FORMAT) as t):
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), MTIME, 0o644
            t.addfile(info, io.BytesIO(data))


def build(folder: Path) -> None:
    if (folder / "done").exists():
        return
    tree = tracked_files() + [(BIG, big_log())]
    many = many_files()
    write_zip(folder / "tree.zip", tree)
    write_tgz(folder / "tree.tgz", tree)
    write_zip(folder / "many.zip", many)
    write_tgz(folder / "many.tgz", many)
    (folder / "done").write_text("")


# --- agentread in one process, as a started server's worker

def engine_worker(folder: str, params: dict, pages: bool) -> None:
    """Times the read (a fresh process's first, then the same read again) and prints
    {"ms": ..., "again": ..., "texts": [...]}; with `pages`, the read is followed with its `next` to
    the end, timed as one, and not repeated."""
    import agentread.serve.jsonrpc  # noqa: F401 - what a started server has imported
    from agentread.serve.workers import PRELOAD

    for name in PRELOAD:
        importlib.import_module(name)
    from agentread.engine import Engine
    from agentread.request import parse_request
    from agentread.workspace import Workspace

    engine = Engine(Workspace([folder]))

    def one(params: dict) -> list[str]:
        texts: list[str] = []
        while True:
            result = engine.read(parse_request(params))
            assert not result.is_error, result.content[0].text
            texts.append("".join(part.text for part in result.content if hasattr(part, "text")))
            if not (pages and result.next):
                return texts
            params = {**params, **result.next}

    out: dict = {"again": 0.0}
    for key in ("ms",) if pages else ("ms", "again"):
        start = time.perf_counter()
        out["texts"] = one(params)
        out[key] = (time.perf_counter() - start) * 1000
    print(json.dumps(out))


def in_process(folder: Path, params: dict, runs: int, pages: bool = False) -> tuple[float, float, list[str]]:
    """Best of `runs` fresh processes: the read's first ms, its repeat's ms, and its texts (one a
    reply)."""
    got = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, __file__, "--engine-worker", str(folder), json.dumps(params),
                              str(int(pages))], check=True, capture_output=True, text=True, env=ENV)
        got.append(json.loads(out.stdout))
    return min(g["ms"] for g in got), min(g["again"] for g in got), got[-1]["texts"]


# --- cold processes

def cold(command: list[str] | str, runs: int) -> tuple[float, str]:
    """Best of `runs` cold processes (a string: a bash pipeline), in ms, with the output."""
    argv = ["bash", "-c", command] if isinstance(command, str) else command
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        out = subprocess.run(argv, capture_output=True, env=ENV)
        times.append((time.perf_counter() - start) * 1000)
        if out.returncode != 0 and isinstance(command, list):
            raise SystemExit(f"{command} failed: {out.stderr.decode()[:500]}")
    return min(times), out.stdout.decode("utf-8", "replace")


def agentread(folder: Path, path: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "agentread", "read", str(folder / path), "--root", str(folder), *args]


# --- what the answers must be

NUMBERED = re.compile(r"^ *(\d+)\t(.*)$")


def numbered(text: str) -> list[tuple[int, str]]:
    return [(int(m[1]), m[2]) for m in map(NUMBERED.match, text.splitlines()) if m]


def check_window(ours: str, peer: str, first: int) -> tuple[int, int]:
    """The window's first and last line numbers, once its lines are the peer's, numbered from
    `first`."""
    lines = numbered(ours)
    assert lines and lines[0][0] == first, ours[:300]
    assert [n for n, _ in lines] == list(range(first, first + len(lines)))
    assert [t for _, t in lines] == peer.splitlines()[:len(lines)], "agentread's lines differ from the peer's"
    return first, lines[-1][0]


def listed_names(pages: list[str]) -> list[str]:
    names = []
    for text in pages:
        for line in text.splitlines()[1:]:
            if not line.startswith("["):
                names.append(line.split("  (")[0].rstrip("/"))
    return names


def hit_lines(text: str) -> list[int]:
    return [int(n.replace(",", "")) for n in re.findall(r"^line ([\d,]+), column", text, re.M)]


def grep_lines(text: str) -> list[int]:
    return [int(line.split(":")[0]) for line in text.splitlines()]


# --- the bench

def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="build the archives in DIR (kept, and reused when there)")
    parser.add_argument("--engine-worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.engine_worker:
        folder, params, pages = args.engine_worker
        engine_worker(folder, json.loads(params), pages == "1")
        return
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        run(args.keep, args.runs)
    else:
        with tempfile.TemporaryDirectory(prefix="agentread-archive-") as folder:
            run(Path(folder), args.runs)


def run(folder: Path, runs: int) -> None:
    start = time.perf_counter()
    build(folder)
    sizes = {p.name: p.stat().st_size for p in sorted(folder.glob("*.*"))}
    print(f"archives built in {time.perf_counter() - start:.0f} s: "
          + ", ".join(f"{name} {size / 1e6:.1f} MB" for name, size in sizes.items()))
    rows: list[tuple[str, float, float | None, str, float]] = []  # what, agentread ms, again, peer, peer ms

    def row(what: str, ours: float, peer: str, theirs: float, again: float | None = None) -> None:
        rows.append((what, ours, again, peer, theirs))
        print(f"{what}: {ours:,.0f} ms; {peer}: {theirs:,.0f} ms; ratio {ours / theirs:.2f}", flush=True)

    z, t = folder / "tree.zip", folder / "tree.tgz"
    m_zip, m_tgz = folder / "many.zip", folder / "many.tgz"
    python_start, _ = cold([sys.executable, "-c", "pass"], runs)

    # Listings of 20,000 members: one reply (500 members) and the whole listing paged with `next`.
    for archive, peer, names_cmd in ((m_zip, f"unzip -l {m_zip}", f"unzip -Z1 {m_zip}"),
                                     (m_tgz, f"tar -tvzf {m_tgz}", f"tar -tzf {m_tgz}")):
        expected = [n.rstrip("/") for n in cold(names_cmd, 1)[1].splitlines()]
        first, _, pages = in_process(folder, {"path": archive.name}, 1, pages=True)  # 40 reads: once
        assert listed_names(pages) == expected, "the listing differs from the peer's"
        peer_ms, peer_out = cold(peer, runs)
        assert len(peer_out.splitlines()) >= MANY
        cli_ms, cli_out = cold(agentread(folder, archive.name), runs)
        assert listed_names([cli_out]) == expected[:len(listed_names([cli_out]))] and "offset=501" in cli_out
        row(f"{archive.name}: listing, first reply (500 of {MANY:,}), CLI", cli_ms, peer, peer_ms)
        row(f"{archive.name}: whole listing, {len(pages)} replies with next, in process", first, peer, peer_ms)

    # The big member: first window, a window near its end, find; a document: first read, outline.
    # --occurrence: GNU tar stops at the member, as agentread does, instead of reading on to the end
    for archive, unpack in ((z, f"unzip -p {z} {BIG}"), (t, f"tar --occurrence -xzOf {t} {BIG}")):
        member = f"{archive.name}/{BIG}"
        total = int(cold(f"{unpack} | wc -l", 1)[1])
        head = cold(f"{unpack} | head -n 2000", 1)[1]
        cli_ms, cli_out = cold(agentread(folder, member), runs)
        last = check_window(cli_out, head, 1)[1]
        first, again, texts = in_process(folder, {"path": member}, runs)
        check_window(texts[0], head, 1)
        peer = f"{unpack} | head -n {last}"
        peer_ms, _ = cold(peer, runs)
        row(f"{member}: first window (lines 1-{last}), CLI", cli_ms, peer, peer_ms)
        row(f"{member}: first window, in process", first, peer, peer_ms, again)

        deep = total - 1999
        tail = cold(f"{unpack} | tail -n 2000", 1)[1]
        cli_ms, cli_out = cold(agentread(folder, member, "--offset", str(deep)), runs)
        end = check_window(cli_out, tail, deep)[1]
        first, again, texts = in_process(folder, {"path": member, "offset": deep}, runs)
        check_window(texts[0], tail, deep)
        sed = f"{unpack} | sed -n '{deep},{end}p;{end}q'"
        sed_ms, _ = cold(sed, runs)
        tail_ms, _ = cold(f"{unpack} | tail -n 2000", runs)
        row(f"{member}: window at line {deep:,} of {total:,}, CLI", cli_ms, sed, sed_ms)
        row(f"{member}: window at line {deep:,}, CLI", cli_ms, f"{unpack} | tail -n 2000", tail_ms)
        row(f"{member}: window at line {deep:,}, in process", first, sed, sed_ms, again)

        grep = f"{unpack} | grep -n {NEEDLE}"
        grep_ms, grep_out = cold(grep, runs)
        cli_ms, cli_out = cold(agentread(folder, member, "--find", NEEDLE), runs)
        first, again, texts = in_process(folder, {"path": member, "find": NEEDLE}, runs)
        assert hit_lines(cli_out) == grep_lines(grep_out) == hit_lines(texts[0]), "the hits differ from grep's"
        assert len(grep_lines(grep_out)) >= 10
        row(f"{member}: find ({len(grep_lines(grep_out))} hits), CLI", cli_ms, grep, grep_ms)
        row(f"{member}: find, in process", first, grep, grep_ms, again)

        doc = f"{archive.name}/{DOC}"
        doc_unpack = unpack.replace(BIG, DOC)
        cli_ms, cli_out = cold(agentread(folder, doc), runs)
        doc_last = check_window(cli_out, cold(f"{doc_unpack} | head -n 2000", 1)[1], 1)[1]
        head_ms, _ = cold(f"{doc_unpack} | head -n {doc_last}", runs)
        first, again, _ = in_process(folder, {"path": doc}, runs)
        row(f"{doc}: first read ({doc_last} lines), CLI", cli_ms, f"{doc_unpack} | head -n {doc_last}", head_ms)
        row(f"{doc}: first read, in process", first, f"{doc_unpack} | head -n {doc_last}", head_ms, again)
        headings = f"{doc_unpack} | grep -n '^#'"
        grep_ms, grep_out = cold(headings, runs)
        cli_ms, cli_out = cold(agentread(folder, doc, "--outline"), runs)
        ours = re.findall(r"^ *#+ (.*?)  \(lines (\d+)-", cli_out, re.M)
        theirs = {(line.split(":", 1)[1].lstrip("#").strip(), line.split(":")[0]) for line in grep_out.splitlines()}
        assert ours and set(ours) <= theirs, "the outline's headings differ from grep's"
        first, again, _ = in_process(folder, {"path": doc, "outline": True}, runs)
        row(f"{doc}: outline ({len(ours)} headings), CLI", cli_ms, headings, grep_ms)
        row(f"{doc}: outline, in process", first, headings, grep_ms, again)

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip()
    print(f"\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} at {commit}, best of {runs}, "
          f"load average {os.getloadavg()[0]:.1f}; Python's own start (python -c pass) {python_start:.0f} ms\n")
    print("| workload | agentread | again, same process | peer | peer ms | ratio |\n|---|---:|---:|---|---:|---:|")
    for what, ours, again, peer, theirs in rows:
        repeat = "" if again is None else f"{again:,.0f} ms"
        print(f"| {what} | {ours:,.0f} ms | {repeat} | `{peer.replace(str(folder) + '/', '')}` | {theirs:,.0f} ms | "
              f"{ours / theirs:.2f} |")


if __name__ == "__main__":
    main()
