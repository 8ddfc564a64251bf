"""agentread's benchmark suite: every read path against its peers and its floor, in one run on
one machine.

    python bench/run.py [--runs 3] [--full-pdf] [--data DIR]
        [--only text,pdf,server,image,find,waits,notebook,load,big-notebook,hostile,races]

Generates its inputs deterministically under DIR (default /tmp/agentread-bench, ~1 GB; nothing is
committed), runs each peer and agentread alternately, round after round, and prints a Markdown table
of medians with the ratio to the floor (the least any tool must do) and to the best peer, and the
peak memory of each process. agentread's cold figures come from a fresh process per round (imports
excluded: the cold start of the server is its own row). Not part of the test run.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import data  # noqa: E402

PY = sys.executable
ENV = dict(os.environ, PYTHONPATH=str(REPO / "python"))
WINDOW = 2000  # lines an agent asks for in one call (the contract's default and cap)


@dataclass
class Row:
    workload: str
    tool: str
    ms: list[float] = field(default_factory=list)
    rss_mb: float = 0.0
    floor: bool = False
    ours: bool = False
    reference: bool = False  # shown for what it tells (a library alone), not a peer a user would pick
    note: str = ""

    def add(self, ms: float, rss_mb: float = 0.0) -> None:
        self.ms.append(ms)
        self.rss_mb = max(self.rss_mb, rss_mb)

    @property
    def median(self) -> float:
        return statistics.median(self.ms) if self.ms else float("nan")


class Table:
    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], Row] = {}

    def row(self, workload: str, tool: str, **kw) -> Row:
        key = (workload, tool)
        if key not in self.rows:
            self.rows[key] = Row(workload, tool, **kw)
        return self.rows[key]

    def markdown(self) -> str:
        out = ["| workload | tool | median | × floor | × best peer | peak RSS |", "|---|---|---:|---:|---:|---:|"]
        workloads = list(dict.fromkeys(r.workload for r in self.rows.values()))
        for w in workloads:
            rows = [r for r in self.rows.values() if r.workload == w]
            floor = next((r.median for r in rows if r.floor), None)
            peers = [r.median for r in rows if not (r.ours or r.floor or r.reference) and r.ms]
            best = min(peers) if peers else None
            for r in rows:
                if not r.ms:
                    continue
                f = f"{r.median / floor:.2f}" if floor else ""
                b = f"{r.median / best:.2f}" if best and r.ours else ""
                name = f"**{r.tool}**" if r.ours else r.tool
                rss = f"{r.rss_mb:.0f} MB" if r.rss_mb else ""
                out.append(f"| {w} | {name}{' ' + r.note if r.note else ''} | {_fmt(r.median)} | {f} | {b} | {rss} |")
        return "\n".join(out)


def _fmt(ms: float) -> str:
    return f"{ms:.2f} ms" if ms < 10 else f"{ms:.0f} ms"


def shell(cmd: str) -> tuple[float, float]:
    """Wall ms and peak RSS (MB) of a shell pipeline, measured by GNU time around it."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        start = time.perf_counter()
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name, "sh", "-c", cmd], check=True,
                       stdout=subprocess.DEVNULL)
        ms = (time.perf_counter() - start) * 1000
        return ms, int(out.read().split()[-1]) / 1024


def worker(*args: str, checkout: Path = REPO) -> dict:
    """Timings from bench/worker.py (of another checkout of agentread, if given); its peak RSS
    measured by GNU time, a small parent (a child forked from this process would inherit this
    process's high-water mark)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        command = ["/usr/bin/time", "-f", "%M", "-o", out.name, PY, str(checkout / "bench" / "worker.py"), *args]
        done = subprocess.run(command, check=True, capture_output=True, text=True, env=ENV)
        result = json.loads(done.stdout.strip().splitlines()[-1])
        result["rss_mb"] = int(out.read().split()[-1]) / 1024
    return result


# --- 1. text windows
# --------------------------------------------------------------------------------------

NAIVE_READLINES = "import sys; f=open(sys.argv[1],'rb'); a=int(sys.argv[2]); sys.stdout.buffer.writelines(" \
                  "f.readlines()[a-1:a-1+%d])" % WINDOW


def bench_text(table: Table, runs: int, root: Path) -> None:
    log = data.log_file(root)
    total = data.LOG_LINES
    offsets = {"1": 1, "1M": 1_000_000, "9M": 9_000_000, "last": total - WINDOW + 1}
    q = shlex_quote(str(log))
    for _ in range(runs):
        ms, rss = shell(f"wc -l {q}")
        table.row("text: count (floor)", "wc -l", floor=True).add(ms, rss)
        for name, a in offsets.items():
            w = f"text window @{name}"
            b = a + WINDOW - 1
            table.row(w, "wc -l (floor)", floor=True).add(ms, rss)
            table.row(w, "sed -n").add(*shell(f"sed -n '{a},{b}p;{b}q' {q}"))
            table.row(w, "tail -n +A, head").add(*shell(f"tail -n +{a} {q} | head -n {WINDOW}"))
            if name in ("9M",):  # reads the whole file into memory whatever the offset: once is enough
                if len(table.row(w, "python readlines()").ms) < 1:
                    table.row(w, "python readlines()").add(*shell(f"{PY} -c \"{NAIVE_READLINES}\" {q} {a}"))
            cold = worker("text", str(log), str(a), str(a))
            table.row(w, "agentread cold", ours=True).add(cold["ms"][0], cold["rss_mb"])
            table.row(w, "agentread repeat", ours=True).add(cold["ms"][1], cold["rss_mb"])
        # The "last" window above is asked for by its line number, which needs the lines before it
        # counted (the cold read scans). Asked for as the last lines, the end is found reading
        # backwards, as tail does; the wc -l floor stays, to show what a scan would have cost.
        w = f"text: last {WINDOW:,} lines (offset=-{WINDOW})"
        table.row(w, "wc -l (floor)", floor=True).add(ms, rss)
        table.row(w, f"tail -n {WINDOW}").add(*shell(f"tail -n {WINDOW} {q}"))
        end = worker("text", str(log), str(-WINDOW), str(-WINDOW))
        assert end["windows"][0]["start"] == -WINDOW and end["windows"][0]["total"] is None, end["windows"]
        table.row(w, "agentread cold", ours=True).add(end["ms"][0], end["rss_mb"])
        table.row(w, "agentread repeat", ours=True).add(end["ms"][1], end["rss_mb"])


def shlex_quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


# --- 2. PDF pages
# ------------------------------------------------------------------------------------------

# The page drawn as a picture (view "image"): a page of the manual's text, as most pages are.
PICTURE_PAGE = 100


def bench_pdf(table: Table, runs: int, full: bool) -> None:
    pdf = data.r_manual()
    if pdf is None:
        print("PDF: skipped (apt-get install -y r-doc-pdf poppler-utils)", file=sys.stderr)
        return
    q = shlex_quote(str(pdf))
    span = 0 if full else 200  # paging through all 2,415 pages with pypdf takes minutes: --full-pdf does it
    for _ in range(runs):
        for pages, (a, b) in (("1", (1, 1)), ("1-20", (1, 20))):
            w = f"pdf pages {pages}"
            table.row(w, "pdftotext -f -l").add(*shell(f"pdftotext -f {a} -l {b} {q} -"))
            r = worker("pdf", str(pdf), pages, pages)
            table.row(w, "agentread cold", ours=True).add(r["ms"][0], r["rss_mb"])
            table.row(w, "agentread warm", ours=True).add(r["ms"][1], r["rss_mb"])
            r = worker("pdfium", str(pdf), pages, pages)
            table.row(w, "pypdfium2 prototype cold", reference=True).add(r["ms"][0], r["rss_mb"])
    out = tempfile.mkdtemp(prefix="pdftoppm")
    for _ in range(runs):  # one page as a picture: PDFium's drawing at the image budget beside poppler's at 100 dpi
        w = f"pdf page {PICTURE_PAGE} as a picture"
        n = PICTURE_PAGE
        table.row(w, "pdftoppm -r 100 -f N -l N").add(*shell(f"pdftoppm -r 100 -f {n} -l {n} {q} {out}/page"))
        # agentread's work: the page drawn to 2,000 px on its long side and written as PNG.
        table.row(w, "pdftoppm -png -scale-to 2000 (same picture)").add(
            *shell(f"pdftoppm -png -scale-to 2000 -f {n} -l {n} {q} {out}/page"))
        r = worker("pdf-picture", str(pdf), str(n))
        table.row(w, "agentread cold", ours=True).add(r["ms"][0], r["rss_mb"])
        table.row(w, "agentread warm", ours=True).add(r["ms"][1], r["rss_mb"])
    shutil.rmtree(out)
    label = "all pages" if full else f"pages 1-{span}"
    w = f"pdf {label} via next"
    last = 2415 if full else span
    for run in range(runs):
        table.row(w, "pdftotext (one extraction)").add(*shell(f"pdftotext -f 1 -l {last} {q} -"))
        if run == 0:  # pypdf takes seconds: once says what it costs
            r = worker("pdf-extract", str(pdf), str(last))
            table.row(w, "pypdf one extraction, no engine").add(r["ms"][0], r["rss_mb"])
        r = worker("pdf-next", str(pdf), str(0 if full else span))
        table.row(w, "agentread next, next, ...", ours=True).add(r["ms"][0], r["rss_mb"])
        r = worker("pdfium", str(pdf), f"1-{last}")
        # Paging can cost no less than extracting the pages once with the same library: the
        # target's yardstick.
        table.row(w, "pypdfium2 prototype (one extraction, floor)", floor=True).add(r["ms"][0], r["rss_mb"])


# --- 4. server round trip
# ----------------------------------------------------------------------------------

# The reads the server rows time: (name, row label, params). Text windows, a PDF page, notebooks
# read by cells (one whose outputs are text, read in the server; one holding plots, read in a
# worker process).
SERVER_READS = (("small", "10-line read", {"path": "small.txt"}),
                ("big", f"{WINDOW}-line read", {"path": "big.txt"}),
                ("pdf", "PDF page read", {"path": "doc.pdf", "pages": "3"}),
                ("nb", "notebook read", {"path": "text.ipynb", "cells": "1-20"}),
                ("plots", "notebook with plots read", {"path": "plots.ipynb", "cells": "1-20"}))


def server_workspace(ws: Path) -> None:
    """The files SERVER_READS name: a 20-page PDF of 40 lines a page; notebooks of 40 cells, with
    stream outputs, and with a small PNG plot in every other cell."""
    import base64
    import io

    from PIL import Image

    import load

    (ws / "small.txt").write_text("".join(f"line {i}\n" for i in range(10)))
    (ws / "big.txt").write_text("".join(f"row {i:06d} of the window\n" for i in range(WINDOW)))  # ~48 KB
    (ws / "doc.pdf").write_bytes(load.build_pdf([" ".join(f"page {p} word {w}" for w in range(400))
                                                 for p in range(1, 21)]))
    plot = io.BytesIO()
    Image.radial_gradient("L").resize((480, 320)).save(plot, "PNG")
    for name, with_plots in (("text.ipynb", False), ("plots.ipynb", True)):
        cells = []
        for c in range(1, 41):
            outputs = [{"output_type": "stream", "name": "stdout",
                        "text": [f"result {c} line {n}\n" for n in range(20)]}]
            if with_plots and c % 2:
                outputs.append({"output_type": "display_data", "metadata": {}, "data": {
                    "image/png": base64.b64encode(plot.getvalue()).decode(), "text/plain": ["<Figure>"]}})
            cells.append({"cell_type": "code", "id": f"c{c}", "metadata": {}, "execution_count": c,
                          "source": [f"value_{c} = compute({c})\n", "print(value_{c})"], "outputs": outputs})
        (ws / name).write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "cells": cells,
                                           "metadata": {"kernelspec": {"language": "python"}}}))


def bench_server(table: Table, runs: int) -> None:
    node_modules = REPO / "node_modules" / "vscode-jsonrpc"
    if shutil.which("node") is None or not node_modules.exists():
        print("server: skipped (needs node and vscode-jsonrpc: npm install at the repo root)", file=sys.stderr)
        return
    ws = Path(tempfile.mkdtemp(prefix="agentread-rpc-"))
    server_workspace(ws)
    servers = {"agentread serve": ([PY, "-m", "agentread", "serve"], True, False),
               "plain orjson loop (floor)": ([PY, str(HERE / "floor_server.py")], False, True),
               "bare pygls (cold start ref.)": ([PY, str(HERE / "bare_pygls.py")], False, False)}
    files = [{"name": name, "params": {**params, "path": str(ws / params["path"])}}
             for name, _, params in SERVER_READS]
    for _ in range(runs):
        for name, (command, ours, floor) in servers.items():
            cfg = {"command": command, "cwd": str(REPO), "root": str(ws), "small": str(ws / "small.txt"),
                   "runs": 300, "inflight": 8, "total": 800, "files": files}
            done = subprocess.run(["node", str(HERE / "rpc_client.mjs"), json.dumps(cfg)], check=True,
                                  capture_output=True, text=True, env=ENV, cwd=REPO)
            r = json.loads(done.stdout.strip().splitlines()[-1])
            table.row("server cold start to first answer", name, ours=ours,
                      floor=name.startswith("bare")).add(r["cold_ms"])
            if name.startswith("bare"):
                continue  # answers a canned result: a reference for cold start only
            for key, label, _ in SERVER_READS:
                table.row(f"server {label} p50", name, ours=ours, floor=floor).add(r[f"{key}_p50_ms"])
                table.row(f"server {label} p99", name, ours=ours, floor=floor).add(r[f"{key}_p99_ms"])
                # Throughput as ms per request, so that "lower is better" holds for every row.
                table.row(f"server {label}, 8 in flight (ms/req)", name, ours=ours, floor=floor).add(
                    1000 / r[f"{key}_rps"])
            for key, label, _ in SERVER_READS[2:]:  # the first read of a format: its reader's start
                table.row(f"server first {label}", name, ours=ours, floor=floor).add(r[f"{key}_first_ms"])
    shutil.rmtree(ws, ignore_errors=True)


# --- 5. images
# ---------------------------------------------------------------------------------------------

# Another checkout of agentread whose image reads are timed beside this one's, in the same rounds
# (its own bench/worker.py, on its own python/): a change is measured against what it replaced, e.g.
# `git worktree add /tmp/before REF`, its C module built there, then
# AGENTREAD_BENCH_OTHER=/tmp/before.
OTHER = os.environ.get("AGENTREAD_BENCH_OTHER")


def bench_images(table: Table, runs: int, root: Path) -> None:
    jpeg, png = data.images(root)
    labels = {path: f"image {kind} {path.stat().st_size >> 20} MB ({'×'.join(map(str, side))})"
              for path, kind, side in ((jpeg, "JPEG", data.JPEG_SIDE), (png, "PNG", data.PNG_SIDE))}
    tools = [("agentread", REPO)]
    if OTHER:
        other = Path(OTHER).resolve()
        compileall.compile_dir(other / "python" / "agentread", quiet=1)  # as data.compile_engine does here
        tools.append((f"agentread at {_commit(other)}", other))
    for _ in range(runs):
        for path, label in labels.items():
            # Each image read three times in one process: the first read is a fresh server's,
            # whose memory the process has yet to map; the later ones a running server's
            # (nothing of an image is kept between reads). The floor is Pillow alone doing the
            # same in the same way.
            r = worker("image-library", str(path), str(path), str(path))
            table.row(f"{label}, first read", "Pillow alone (floor)", floor=True).add(r["ms"][0], r["rss_mb"])
            table.row(f"{label}, later reads", "Pillow alone (floor)", floor=True).add(
                statistics.median(r["ms"][1:]), r["rss_mb"])
            for name, checkout in tools:
                r = worker("image", str(path), str(path), str(path), checkout=checkout)
                table.row(f"{label}, first read", name, ours=True).add(r["ms"][0], r["rss_mb"])
                table.row(f"{label}, later reads", name, ours=True).add(statistics.median(r["ms"][1:]), r["rss_mb"])


# --- 5. find
# -------------------------------------------------------------------------------------------------

# Searches of the bench log, each beside the grep a user would run: strings found once or a few
# times, so that both read the whole file (a search listing its first 100 hits stops early).
FIND_LOG = (("find a string", {"find": "line=7777777 "}, "grep -n -F 'line=7777777 '"),
            ("find ignoring case", {"find": "LINE=7777777 ", "ignoreCase": True}, "grep -n -i -F 'LINE=7777777 '"),
            ("find a regular expression", {"find": "worker-13 .* line=99999[0-9][0-9] ", "regex": True},
             "grep -n -E 'worker-13 .* line=99999[0-9][0-9] '"),
            # No literal to skip ahead on, and no match (no second is 60 or more): the backtracking
            # engine tries it at every digit, where grep's automaton reads each byte once.
            ("find a regular expression with no literal", {"find": "[0-9]+:[0-9]+:6[0-9]", "regex": True},
             "grep -n -E '[0-9]+:[0-9]+:6[0-9]'"),
            # A backreference, which RE2 does not take: the backtracking engine searches it.
            ("find a regular expression with a backreference", {"find": "line=(7)\\1{6} ", "regex": True},
             "grep -n -E 'line=(7)\\1{6} '"))
# A word the R manual holds a few times, so that every page is searched.
FIND_PDF_WORD = "bootstrap"


def bench_find(table: Table, runs: int, root: Path) -> None:
    log = data.log_file(root)
    q = shlex_quote(str(log))
    for _ in range(runs):
        for workload, params, grep in FIND_LOG:
            w = f"log {log.stat().st_size / 1e9:.2f} GB: {workload}"
            table.row(w, grep.split(" '")[0]).add(*shell(f"{grep} {q} || test $? = 1"))
            r = worker("find", str(log), json.dumps(params))
            table.row(w, "agentread find", ours=True).add(r["ms"][0], r["rss_mb"])
    pdf = data.r_manual()
    if pdf is None:
        print("find in a PDF: skipped (apt-get install -y r-doc-pdf poppler-utils)", file=sys.stderr)
        return
    q = shlex_quote(str(pdf))
    w = f"pdf 2,415 pages: find {FIND_PDF_WORD!r}"
    for _ in range(runs):
        table.row(w, "pdftotext | grep -n").add(*shell(f"pdftotext {q} - | grep -n -F {FIND_PDF_WORD} || true"))
        r = worker("find", str(pdf), json.dumps({"find": FIND_PDF_WORD}))
        table.row(w, "agentread find cold", ours=True).add(r["ms"][0], r["rss_mb"])


# --- 7. where an agent waits
# ----------------------------------------------------------------------------------------

# The pages of the R manual that print its contents: what a user without an outline reads.
CONTENTS_PAGES = (2, 31)
# How long a fresh server is left to start its worker processes before its first read of the manual:
# the editor starts it with the window, seconds before an agent's first call.
SETTLE_MS = 3000


def bench_waits(table: Table, runs: int) -> None:
    """The reads an agent waits on, each beside its peer: page 1 of the R manual through a fresh
    server (its first read) and a warm one, a small PDF page behind six slow reads, and the
    command line's cold page and outline."""
    pdf = data.r_manual()
    if pdf is None or shutil.which("node") is None:
        print("waits: skipped (needs r-doc-pdf, poppler-utils and node)", file=sys.stderr)
        return
    import behind_slow

    ws = Path(tempfile.mkdtemp(prefix="agentread-waits-"))
    shutil.copy(pdf, ws / "manual.pdf")
    (ws / "small.txt").write_text("a small file\n")
    manual, q = ws / "manual.pdf", shlex_quote(str(ws / "manual.pdf"))
    cli = [PY, "-m", "agentread", "read", "--root", str(ws), str(manual)]
    first, last = CONTENTS_PAGES
    for _ in range(runs):
        cfg = {"command": [PY, "-m", "agentread", "serve"], "cwd": str(REPO), "root": str(ws),
               "small": str(ws / "small.txt"), "runs": 200, "inflight": 8, "total": 400,
               "settle_ms": SETTLE_MS,
               "files": [{"name": "page", "params": {"path": str(manual), "pages": "1"}}]}
        done = subprocess.run(["node", str(HERE / "rpc_client.mjs"), json.dumps(cfg)], check=True,
                              capture_output=True, text=True, env=ENV, cwd=REPO)
        r = json.loads(done.stdout.strip().splitlines()[-1])
        page = shell(f"pdftotext -f 1 -l 1 {q} -")
        w = "R manual page 1: a fresh server's first read (its workers started)"
        table.row(w, "pdftotext -f 1 -l 1").add(*page)
        table.row(w, "agentread serve", ours=True).add(r["page_first_ms"])
        table.row("R manual page 1: a warm server (p50, goal 2 ms)", "agentread serve", ours=True).add(
            r["page_p50_ms"])
        w = "R manual page 1: a cold command line"
        table.row(w, "pdftotext -f 1 -l 1").add(*page)
        table.row(w, "agentread read --pages 1", ours=True).add(
            *shell(" ".join(map(shlex_quote, [*cli, "--pages", "1"]))))
        w = "R manual outline: a cold command line"
        table.row(w, f"pdftotext -f {first} -l {last} (its contents pages)").add(
            *shell(f"pdftotext -f {first} -l {last} {q} -"))
        table.row(w, "PDFium's outline calls alone, a Python process (floor)", floor=True).add(
            *shell(" ".join(map(shlex_quote, [PY, str(HERE / "pdfium_outline.py"), str(manual)]))))
        table.row(w, "agentread read --outline", ours=True).add(
            *shell(" ".join(map(shlex_quote, [*cli, "--outline", "--limit", "2000"]))))
    behind = behind_slow.run(max(runs, 3))
    w = "a small PDF page behind six slow PDF reads (goal 1.5× or 50 ms)"
    for alone, slow in zip(behind["alone_ms"], behind["behind_ms"]):
        table.row(w, "the same read alone").add(alone)
        table.row(w, "agentread serve", ours=True).add(slow)
    shutil.rmtree(ws, ignore_errors=True)


def _commit(checkout: Path) -> str:
    return subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="text,pdf,server,image,find,waits")
    parser.add_argument("--full-pdf", action="store_true", help="page through all 2,415 pages (minutes)")
    parser.add_argument("--data", type=Path, default=data.DEFAULT_DIR)
    args = parser.parse_args()
    only = set(args.only.split(","))
    data.compile_engine()
    table = Table()
    started = time.strftime("%Y-%m-%d %H:%M")
    if "text" in only:
        bench_text(table, args.runs, args.data)
    if "pdf" in only:
        bench_pdf(table, args.runs, args.full_pdf)
    if "server" in only:
        bench_server(table, args.runs)
    if "image" in only:
        bench_images(table, args.runs, args.data)
    if "find" in only:
        bench_find(table, args.runs, args.data)
    if "waits" in only:
        bench_waits(table, args.runs)
    print(f"agentread bench, {started}, {platform.node()}: {os.cpu_count()} cores, "
          f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') >> 30} GB, {platform.platform()}, "
          f"Python {platform.python_version()}; load average at the end {os.getloadavg()[0]:.1f}; "
          f"medians of {args.runs} runs\n")
    print(table.markdown())
    if "notebook" in only:
        subprocess.run([PY, str(HERE / "bench_notebook.py"), "--runs", str(args.runs)], check=False, env=ENV)
    if "load" in only:  # one run: mixed reads with hostile files, reads a second
        subprocess.run([PY, str(HERE / "load.py")], check=False, env=ENV)
    if "big-notebook" in only:  # one run: its figures are memory, and the quick reads' p99 beside it
        subprocess.run([PY, str(HERE / "big_notebook.py")], check=False, env=ENV)
    if "hostile" in only:  # one run: hostile patterns as `find`, the server's memory and quick reads beside them
        subprocess.run([PY, str(HERE / "hostile_patterns.py")], check=False, env=ENV)
    if "races" in only:  # one run: a folder flipped to a link outside while it is read
        subprocess.run([PY, str(HERE / "races.py")], check=False, env=ENV)


if __name__ == "__main__":
    main()
