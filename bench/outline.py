"""The outline of the 2,415-page R reference manual (its 1,426 bookmarks with their pages), beside
what a user would reach for without it: pypdf's outline API in a script, and pdftotext on the
printed contents pages (pages 2-31). Each is one process, cold, as an agent runs it; the best of
--runs is kept. agentread is timed three ways: its command line (cold), one engine in a process
that has imported what a server's worker has, and a request to a running server (as VS Code's or an
MCP client's), its worker already started by a read of another PDF.

    python bench/outline.py [--runs 5]
"""

from __future__ import annotations

import argparse
import compileall
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import data

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from builders import build_pdf  # noqa: E402
from rpc import ServerProcess  # noqa: E402

PYPDF_OUTLINE = """
import sys
from pypdf import PdfReader
reader = PdfReader(sys.argv[1])
def walk(items, level=0):
    for item in items:
        if isinstance(item, list):
            walk(item, level + 1)
        else:
            print("  " * level + item.title, reader.get_destination_page_number(item) + 1)
walk(reader.outline)
"""


def best_ms(command: list[str], runs: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
        times.append((time.perf_counter() - start) * 1000)
    return min(times)


def in_process(pdf: Path) -> tuple[float, float]:
    """The first outline reply and the next, read by one engine (its document cache warm for the
    second), in a fresh process: ms each."""
    script = f"""
import time
from agentread.serve.workers import PRELOAD
for module in PRELOAD:  # what a worker process has imported before its first read
    __import__(module)
from agentread.engine import Engine
from agentread.request import parse_request
from agentread.workspace import Workspace
engine = Engine(Workspace(["/"]))
times = []
for params in ({{"outline": True}}, {{"outline": True, "offset": 781}}):
    start = time.perf_counter()
    engine.read(parse_request({{"path": {str(pdf)!r}, **params}}))
    times.append((time.perf_counter() - start) * 1000)
print(times[0], times[1])
"""
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True, env=env)
    first, second = map(float, out.stdout.split())
    return first, second


def through_server(pdf: Path) -> float:
    """ms from sending the first outline request of `pdf` to a running server to its answer."""
    with tempfile.TemporaryDirectory() as folder:
        other = Path(folder) / "other.pdf"
        other.write_bytes(build_pdf(["a page"]))
        server = ServerProcess(None, roots=[Path(folder), pdf.parent])
        try:
            server.read(path=str(other))  # starts the worker the outline is read in
            start = time.perf_counter()
            result = server.read(path=str(pdf), outline=True)
            ms = (time.perf_counter() - start) * 1000
        finally:
            server.close()
    assert not result.get("isError"), result
    return ms


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    pdf = data.r_manual()
    if pdf is None:
        sys.exit("the R reference manual is not installed: apt-get install -y r-doc-pdf")
    # Compiled first, as an installed package is: with PYTHONDONTWRITEBYTECODE set, a module changed
    # since its last compile would be compiled again in every cold process timed.
    compileall.compile_dir(REPO / "python" / "agentread", quiet=1)
    runs = [in_process(pdf) for _ in range(args.runs)]
    warm = (min(first for first, _ in runs), min(second for _, second in runs))
    served = min(through_server(pdf) for _ in range(args.runs))
    ours = best_ms([sys.executable, "-m", "agentread", "read", str(pdf), "--outline", "--root", "/",
                    "--limit", "2000"], args.runs)
    peers = {"pypdf outline script": [sys.executable, "-c", PYPDF_OUTLINE, str(pdf)],
             "pdftotext -f 2 -l 31 (the printed contents)": ["pdftotext", "-f", "2", "-l", "31", str(pdf), "-"]}
    print(f"agentread read --outline (first 780 of 1,426 entries, one reply): {ours:.0f} ms")
    print(f"in one process, as the server's worker: first outline {warm[0]:.0f} ms, the next page of it "
          f"{warm[1]:.0f} ms (the document and its page tree kept)")
    print(f"through a running server (JSON-RPC over stdio), the first outline: {served:.0f} ms")
    print(f"of which Python's own start (python -c pass): {best_ms([sys.executable, '-c', 'pass'], args.runs):.0f} ms")
    for name, command in peers.items():
        ms = best_ms(command, args.runs)
        print(f"{name}: {ms:.0f} ms; agentread / it = {ours / ms:.2f} (command line), "
              f"{warm[0] / ms:.2f} (in one process), {served / ms:.2f} (through the server)")


if __name__ == "__main__":
    main()
