"""A tree of many files for searches of many files: what `re` finds in it, and the hits a reply
names, so that a search followed through `next` can be checked against `re`."""

from __future__ import annotations

import re
from pathlib import Path

# More files than `paths` may name (100) and than `next` once held (100 more), so that a
# search that lists files one by one never reaches the last ones.
TREE_FILES = 230
# The files that hold hits: the last ones the sorted walk reaches.
HIT_FILES = 8
NEEDLE = "def visit_title"
GLOB = "pkg/**/*.py"

# A hit as the reply's text names it: `line 1,643, column 5: ...` (find.py's cite).
HIT_LINE = re.compile(r"^line ([\d,]+)(?:, column [\d,]+)?: ")
HEADER = re.compile(r"^==> (.+?)(?: \(.*\))? <==(?: \[version [0-9a-f]{16}\])?$")
# A line break as the reader counts lines: CRLF, LF, a lone CR.
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def make_tree(root: Path) -> None:
    """TREE_FILES modules under pkg/ in three folders; NEEDLE only in the last HIT_FILES walked,
    twice in each (once as the start of a longer name)."""
    for i in range(TREE_FILES):
        folder = root / "pkg" / ["alpha", "beta", "gamma"][i * 3 // TREE_FILES]
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f'"""Module {i}."""', "", f"class Node{i}:"]
        lines += [f"    def visit_{n}(self, node):\n        return {n}" for n in range(20)]
        if i >= TREE_FILES - HIT_FILES:
            lines += [f"    {NEEDLE}(self, node):\n        pass", f"    {NEEDLE}_reference(self, node):\n        pass"]
        (folder / f"mod{i:03}.py").write_text("\n".join(lines) + "\n")


def re_hits(root: Path, glob: str, needle: str) -> list[tuple[str, int]]:
    """(path from root, line) of every line holding `needle`, in the walk's sorted order."""
    hits = []
    for path in sorted(str(p.relative_to(root)) for p in root.glob(glob) if p.is_file()):
        text = (root / path).read_bytes().decode("utf-8", "replace")
        lines = LINE_BREAK.split(text)
        hits += [(path, n) for n, line in enumerate(lines, 1) if re.search(re.escape(needle), line)]
    return hits


def text_hits(text: str) -> list[tuple[str, int]]:
    """(path, line) of each hit a reply's text names, under its file's header."""
    hits, path = [], None
    for line in text.splitlines():
        header = HEADER.match(line)
        if header:
            path = header[1]
        elif path is not None and HIT_LINE.match(line):
            hits.append((path, int(HIT_LINE.match(line)[1].replace(",", ""))))
    return hits
