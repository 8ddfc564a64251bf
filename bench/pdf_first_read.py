"""A fresh process's first PDF read, timed inside the process: the engine built (as a started
server's is), then page 1 read, which imports the PDF reader and PDFium's binding and opens the
document. With two source trees, the second the baseline, they alternate process by process and the
ratio is taken pair by pair.

    python bench/pdf_first_read.py [--runs 15] [--pdf examples/pdflatex-4-pages.pdf]
        [TREE [BASELINE]]

TREE and BASELINE are folders holding the `agentread` package (this checkout's `python/` by
default), e.g. a `git worktree` of an older commit's `python/`. Not part of the test run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# What the child process runs: everything a started server has imported comes before the
# clock starts.
CHILD = """
import sys, time
from agentread.engine import Engine
from agentread.request import parse_request
from agentread.workspace import Workspace
path = sys.argv[1]
engine = Engine(Workspace([path.rsplit("/", 1)[0]]))
request = parse_request({"path": path, "pages": "1"})
start = time.perf_counter()
result = engine.read(request)
took = (time.perf_counter() - start) * 1000
assert not result.is_error and "--- Page 1 ---" in result.text(), result.text()[:300]
print(took)
"""


def first_read_ms(tree: Path, pdf: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(pdf)], env=env, capture_output=True, text=True,
                          check=True)
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--pdf", type=Path, default=HERE.parent / "examples" / "pdflatex-4-pages.pdf")
    parser.add_argument("trees", type=Path, nargs="*", default=[HERE.parent / "python"])
    args = parser.parse_args()
    pdf = args.pdf.resolve()
    trees = [tree.resolve() for tree in args.trees[:2]]
    for tree in trees:  # a first run each, not counted: bytecode compiled, files in the page cache
        first_read_ms(tree, pdf)
    times: list[list[float]] = [[] for _ in trees]
    for _ in range(args.runs):
        for tree, column in zip(trees, times):
            column.append(first_read_ms(tree, pdf))
    for tree, column in zip(trees, times):
        print(f"{tree}: first read median {statistics.median(column):.1f} ms "
              f"(min {min(column):.1f}, max {max(column):.1f}, {len(column)} runs)")
    if len(trees) == 2:
        ratios = [a / b for a, b in zip(*times)]
        print(f"ratio {trees[0].name} / {trees[1].name}, pair by pair: median {statistics.median(ratios):.2f} "
              f"(min {min(ratios):.2f}, max {max(ratios):.2f})")


if __name__ == "__main__":
    main()
