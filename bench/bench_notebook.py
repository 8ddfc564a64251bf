"""Benchmark: the notebook reader on a ~100 MB notebook and a real 3.9 MB one, against json.loads,
nbconvert and jupytext.

    python bench/bench_notebook.py [--runs 5] [--keep DIR]

Generates (deterministically) 500 cells, most with a large base64 PNG output and every tenth with an
ANSI coloured traceback, then times, each in a fresh process: `json.loads` of the file, nbformat's
own reading of it (`nbformat.reads`, as_version=4: what the reader's fast parse stands in for), the
outline (cells="outline"), the first budgeted read (no cells), and as whole processes (start-up
included) `jupyter nbconvert --to markdown`, `jupytext --to md` (each skipped when not installed)
and agentread's command line doing the first read. Each operation includes reading the file.
Reports, per operation: median wall time (imports excluded but for the whole processes), its ratio
to json.loads and the file size over it (MB/s); peak RSS, its ratio to the file size, and what the
operation added to the interpreter it ran in (peak RSS minus the RSS after the imports: the same
interpreter, with agentread and Pillow imported, for every row but the whole processes, measured
whole). One run per process, so a peak is that of one operation. Then the same for the real
handson-ml2 notebook of the shared corpus (../shared/corpus, or $AGENTREAD_CORPUS; skipped when
absent). Not part of the test run.
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import io
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CELLS = 500
DISTINCT_IMAGES = 8  # encoded once and reused: generation stays fast, the file still reaches ~100 MB
IMAGE_SIDE = 460  # random grey pixels barely compress: about 210 KB of PNG, 280 KB of base64 each
SEED = 20240611

# Rows timed as whole processes, start-up included: the peers (each converts the whole notebook to
# Markdown), and agentread's own command line doing its first read, to compare like with like.
PEERS = {"nbconvert": "nbconvert", "jupytext": "jupytext"}
WHOLE_PROCESSES = {
    "nbconvert": ["{python}", "-m", "nbconvert", "--to", "markdown", "--output-dir", "{out}", "{path}"],
    "jupytext": ["{python}", "-m", "jupytext", "--to", "md", "--output", "{out}/big.md", "{path}"],
    "agentread read (CLI)": ["{python}", "-m", "agentread", "read", "{path}", "--root", "{folder}"],
}
PYTHON_DIR = str(Path(__file__).resolve().parents[1] / "python")

# The real notebook measured after the generated one: 3.9 MB of plots and text from the
# handson-ml2 book.
REAL_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
REAL_NOTEBOOK = "notebooks/real/handson-ml2_09_unsupervised_learning.ipynb"

TRACEBACK = [
    "\x1b[0;31m---------------------------------------------------------------------------\x1b[0m",
    "\x1b[0;31mValueError\x1b[0m                                Traceback (most recent call last)",
    "\x1b[0;32m<ipython-input-3>\x1b[0m in \x1b[0;36m<module>\x1b[0;34m\x1b[0m\n\x1b[0;32m----> 1\x1b[0;31m fit()",
    "\x1b[0;31mValueError\x1b[0m: shapes (3,) and (4,) not aligned",
]


def generate(path: Path) -> None:
    from PIL import Image

    rng = random.Random(SEED)
    images = []
    for _ in range(DISTINCT_IMAGES):
        out = io.BytesIO()
        Image.frombytes("L", (IMAGE_SIDE, IMAGE_SIDE), rng.randbytes(IMAGE_SIDE * IMAGE_SIDE)).save(out, "PNG")
        images.append(base64.b64encode(out.getvalue()).decode())
    cells = []
    for i in range(CELLS):
        if i % 5 == 0:
            cells.append({"id": f"m{i}", "cell_type": "markdown", "metadata": {}, "source": f"## Step {i}\nNotes."})
            continue
        outputs = [{"output_type": "stream", "name": "stdout",
                    "text": "".join(f"\repoch {e}/50 loss {1 / (e + 1):.4f}" for e in range(50)) + "\n"}]
        if i % 10 == 1:
            outputs.append({"output_type": "error", "ename": "ValueError", "evalue": "shapes", "traceback": TRACEBACK})
        else:
            outputs.append({"output_type": "display_data", "metadata": {},
                            "data": {"image/png": images[i % DISTINCT_IMAGES], "text/plain": "<Figure>"}})
        cells.append({"id": f"c{i}", "cell_type": "code", "metadata": {}, "execution_count": i,
                      "source": f"fig = plot(step={i})\nfig.show()", "outputs": outputs})
    doc = {"nbformat": 4, "nbformat_minor": 5, "cells": cells,
           "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}}
    path.write_text(json.dumps(doc, indent=1))


def child(operation: str, path: str, runs: int) -> None:
    """Run one operation `runs` times in this fresh process; print the times and this
    process's peak RSS."""
    from agentread.readers.notebook import read_notebook
    from agentread.request import ReadRequest

    if operation == "nbformat.reads":
        import nbformat  # only here: the reader's own reads load it only for an old or broken notebook

    times = []
    base_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(runs):
        started = time.perf_counter()
        if operation == "json.loads":
            json.loads(Path(path).read_bytes())
        elif operation == "nbformat.reads":
            nbformat.reads(Path(path).read_text(encoding="utf-8"), as_version=4)
        elif operation in WHOLE_PROCESSES:
            with tempfile.TemporaryDirectory() as out:
                command = [arg.format(python=sys.executable, out=out, path=path, folder=os.path.dirname(path))
                           for arg in WHOLE_PROCESSES[operation]]
                subprocess.run(command, check=True, capture_output=True, env={**os.environ, "PYTHONPATH": PYTHON_DIR})
        else:
            cells = "outline" if operation == "outline" else None
            read_notebook(Path(path).read_bytes(), ReadRequest(path=path, cells=cells), path)
        times.append(time.perf_counter() - started)
    who = resource.RUSAGE_CHILDREN if operation in WHOLE_PROCESSES else resource.RUSAGE_SELF
    peak_kb = resource.getrusage(who).ru_maxrss
    print(json.dumps({"times": times, "peak_kb": peak_kb,
                      "added_kb": None if operation in WHOLE_PROCESSES else peak_kb - base_kb}))


def measure(operation: str, path: Path, runs: int) -> dict | None:
    """Each run in a fresh process, so peak RSS is that of one operation (not of the
    allocator's leftovers)."""
    times, peaks, added = [], [], []
    for _ in range(runs):
        proc = subprocess.run([sys.executable, __file__, "--child", operation, str(path), "--runs", "1"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"  {operation}: skipped ({proc.stderr.strip().splitlines()[-1] if proc.stderr else 'failed'})")
            return None
        result = json.loads(proc.stdout)
        times += result["times"]
        peaks.append(result["peak_kb"])
        added.append(result["added_kb"])
    return {"times": times, "peak_kb": max(peaks), "added_kb": None if None in added else max(added)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", help="write the notebook here and keep it")
    parser.add_argument("--child", nargs=2, metavar=("OPERATION", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--generate", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child, args.runs)
        return
    if args.generate:
        generate(Path(args.generate))
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import data

    data.compile_engine()
    folder = Path(args.keep or tempfile.mkdtemp(prefix="agentread-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "big.ipynb"
    # In its own process: Linux carries a process's peak RSS over fork and exec, so a parent that
    # had held the whole notebook would lend that peak to every measured child.
    subprocess.run([sys.executable, __file__, "--generate", str(path)], check=True)
    print(f"{path}: {path.stat().st_size / 2**20:.1f} MiB, {CELLS} cells; {args.runs} runs each, medians")
    measure_all(path, args.runs)
    real = Path(os.environ.get("AGENTREAD_CORPUS", REAL_CORPUS)) / REAL_NOTEBOOK
    if real.exists():
        print(f"\n{real.name} (shared corpus): {real.stat().st_size / 2**20:.1f} MiB; {args.runs} runs each, medians")
        measure_all(real, args.runs)
    else:
        print(f"\n{real}: not found, skipped (set AGENTREAD_CORPUS to the shared corpus)")
    if not args.keep:
        shutil.rmtree(folder)


def measure_all(path: Path, runs: int) -> None:
    """Every operation on one notebook, then its table."""
    size_mb = path.stat().st_size / 2**20
    rows = {}
    for operation in ("json.loads", "nbformat.reads", "outline", "first read", *WHOLE_PROCESSES):
        if operation in PEERS and not _installed(PEERS[operation]):
            print(f"  {operation}: skipped (not installed; pip install {PEERS[operation]})")
            continue
        result = measure(operation, path, min(runs, 3) if operation in PEERS else runs)  # peers take seconds
        if result:
            added = result["added_kb"]
            rows[operation] = (statistics.median(result["times"]), result["peak_kb"] / 1024,
                               None if added is None else added / 1024)
    base = rows["json.loads"][0]
    print("\n| operation | median s | × json.loads | MiB/s | peak RSS MiB | peak ÷ file | added MiB | added ÷ file |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for operation, (seconds, peak, added) in rows.items():
        extra = "n/a | n/a" if added is None else f"{added:.0f} | {added / size_mb:.2f}"
        print(f"| {operation} | {seconds:.3f} | {seconds / base:.2f} | {size_mb / seconds:.0f} | {peak:.0f} | "
              f"{peak / size_mb:.2f} | {extra} |")
    print(f"\n(file {size_mb:.1f} MiB; peak RSS is the whole process; added = peak minus the RSS after the "
          "imports, i.e. what the operation itself held at its peak; the last rows are whole processes, start-up "
          "included, measured whole)")


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


if __name__ == "__main__":
    main()
