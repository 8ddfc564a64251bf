"""The PDF figure rule's precision and recall on the labelled pages of
tests/data/figures/labels.json (third-party manuals fetched by scripts/fetch-thirdparty, and the
shared corpus), each page read through the engine: python bench/figures.py"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests")]

from agentread.engine import Engine  # noqa: E402
from agentread.workspace import Workspace  # noqa: E402
from figure_set import ROOTS, documents, score  # noqa: E402


def main() -> int:
    present = documents()
    engine = Engine(Workspace([str(folder) for folder in ROOTS.values()]))
    for name, chosen in (("all", present), ("held out", [d for d in present if d[4]])):
        result = score(engine, chosen)
        figures = result.hits + len(result.misses)
        print(f"{name}: {len(chosen)} documents, {result.pages} pages, {figures} with a figure: "
              f"precision {result.precision:.3f}, recall {result.recall:.3f}")
        print("  missed:", ", ".join(f"{file} p{page}" for file, page in result.misses) or "none")
        print("  announced without a figure:", ", ".join(f"{file} p{page}" for file, page in result.false) or "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
