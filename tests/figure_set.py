"""The labelled set of PDF pages the figure rule is measured on (tests/data/figures/labels.json):
each page read through the engine, as a model reads it, and whether its reply announces a figure
held against the label. Shared by the test that requires the rule's precision and recall and by
bench/figures.py, which prints them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from shared_corpus import CORPUS, REPO

LABELS = REPO / "tests" / "data" / "figures" / "labels.json"
ROOTS = {"thirdparty": REPO / ".thirdparty", "corpus": CORPUS}

# The line that ends the text of a page holding figures (readers/pdf FIGURES_NOTE).
NOTE = re.compile(r"^\[Page (\d+) has \d+ figures? \(images or drawings\)", re.MULTILINE)


@dataclass
class Score:
    pages: int  # labelled pages read
    hits: int  # pages with a figure, announced
    misses: list[tuple[str, int]]  # pages with a figure, not announced
    false: list[tuple[str, int]]  # pages without one, announced

    @property
    def precision(self) -> float:
        return self.hits / max(1, self.hits + len(self.false))

    @property
    def recall(self) -> float:
        return self.hits / max(1, self.hits + len(self.misses))


Document = tuple  # (path, first page, last page, pages with a figure, held out)


def documents() -> list[Document]:
    """Each labelled document present."""
    out = []
    for entry in json.loads(LABELS.read_text())["documents"]:
        path = ROOTS[entry["root"]] / entry["path"]
        first, _, last = entry["pages"].partition("-")
        if path.is_file():
            out.append((path, int(first), int(last or first), set(entry["figures"]), entry.get("held_out", False)))
    return out


def announced(engine, path: Path, first: int, last: int) -> set[int]:
    """The pages first..last whose read announces a figure or shows the page as its picture (a
    page that is one image), each page read on its own."""
    from agentread.request import parse_request
    from agentread.result import ImagePart

    pages = set()
    for number in range(first, last + 1):
        result = engine.read(parse_request({"path": str(path), "pages": str(number)}))
        text = "\n".join(part.text for part in result.content if not isinstance(part, ImagePart))
        pages |= {int(found) for found in NOTE.findall(text)}
        if any(isinstance(part, ImagePart) for part in result.content):
            pages.add(number)
    return pages


def score(engine, present: list[Document]) -> Score:
    result = Score(0, 0, [], [])
    for path, first, last, figures, _ in present:
        found = announced(engine, path, first, last)
        result.pages += last - first + 1
        result.hits += len(figures & found)
        result.misses += [(path.name, page) for page in sorted(figures - found)]
        result.false += [(path.name, page) for page in sorted(found - figures)]
    return result
