"""`find` against `re`: every hit where `re.finditer` puts it (line and column; a PDF's page and its
line), following `next` to the end, in one file and across a glob of hundreds of files."""

from __future__ import annotations

import re

import pypdf
import pytest
from harness import SIZES, THIRDPARTY, chain, editor_lines, follow, need, same_in_every_front_end
from test_oracle_pdf import R_MANUALS, page_texts

from rpc import ServerProcess

DOCUTILS_SDIST = ("docutils-0.22.4", "docutils-0.22.4")
NODES = (*DOCUTILS_SDIST, "docutils", "nodes.py")

SEARCHES = [  # (find, regex)
    ("node", False),
    ("self.", False),
    (r"\bdef \w+\(self", True),
    (r"'[^']*'", True),
]


def hits_in_lines(lines: list[str], find: str, regex: bool) -> list[tuple[int, int]]:
    pattern = re.compile(find if regex else re.escape(find))
    return [(number, match.start() + 1) for number, line in enumerate(lines, 1) for match in pattern.finditer(line)]


def found(read, params: dict) -> list[tuple]:
    """Every hit a search lists, following `next`: (line, column), or (page, line, column)."""
    hits = []
    for result in follow(read, params):
        for hit in result["shown"]["hits"]:
            hits.append(tuple(hit[k] for k in ("page", "line", "column") if k in hit))
    return hits


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("find, regex", SEARCHES)
def test_every_hit_in_a_file_where_re_finds_it(rpc, find, regex, size):
    path = need(*NODES)
    params = {"path": str(path), "find": find, "regex": regex or None, "maxBytes": size}
    expected = hits_in_lines(editor_lines(path.read_text(encoding="utf-8")), find, regex)
    assert found(rpc, {k: v for k, v in params.items() if v is not None}) == expected


@pytest.mark.parametrize("size", SIZES)
def test_every_hit_in_a_manual_on_its_page_and_line(rpc, size):
    """A page's line 1 is its `--- Page N ---` line: its text's lines are 2 on."""
    path = need(*R_MANUALS, "R-data.pdf")
    expected = [(page, line + 1, column) for page, text in page_texts(path).items()
                for line, column in hits_in_lines(text.split("\n"), "data", False)]
    assert found(rpc, {"path": str(path), "find": "data"} | ({"maxBytes": size} if size else {})) == expected


def test_a_hit_names_its_page_label_where_the_document_prints_another(rpc):
    path = need(*R_MANUALS, "R-data.pdf")
    labels = pypdf.PdfReader(str(path)).page_labels
    hits = [h for r in follow(rpc, {"path": str(path), "find": "data"}) for h in r["shown"]["hits"]]
    assert hits and any("label" in h for h in hits)
    for hit in hits:
        printed = labels[hit["page"] - 1]
        assert hit.get("label") == (printed if printed != str(hit["page"]) else None), hit


def test_a_search_is_the_same_in_every_front_end(rpc):
    path = need(*NODES)
    same_in_every_front_end(rpc, chain(rpc, {"path": str(path), "find": "node"})[:4], cli_reads=2)


def found_many(server: ServerProcess, params: dict) -> tuple[dict[str, list[tuple[int, int]]], str]:
    """Each file's hits, following a read of many files' `next` to its end; and the text of its
    replies."""
    hits: dict[str, list[tuple[int, int]]] = {}
    text = ""
    for _ in range(1000):
        answer = server.request("agentread/readMany", params)
        assert "result" in answer, answer
        reply = answer["result"]
        text += "".join(p["text"] for p in reply["content"] if p["type"] == "text")
        for entry in reply["files"]:
            if entry["state"] in ("whole", "cut"):
                hits.setdefault(entry["path"], []).extend((h["line"], h["column"]) for h in entry["shown"]["hits"])
        if not reply.get("next"):
            return hits, text
        params = {**{k: v for k, v in params.items() if k == "maxBytes"}, **reply["next"]}
    raise AssertionError("read_many still has a next after 1,000 replies")


GLOB_SIZES = SIZES

# Globs of more files than a reply shows (100): 129 of docutils' modules, 160 of its tests.
GLOBS = ["docutils/**/*.py", "test/test_*/**/*.py"]


def oracle(pattern: str) -> dict[str, list[tuple[int, int]]]:
    root = THIRDPARTY.joinpath(*DOCUTILS_SDIST)
    if not root.is_dir():
        need(*DOCUTILS_SDIST)
    expected = {}
    for path in sorted(root.glob(pattern)):
        if not any(part.startswith(".") for part in path.relative_to(root).parts):  # hidden: not in a glob
            lines = editor_lines(path.read_text(encoding="utf-8"))
            expected[str(path.relative_to(THIRDPARTY))] = hits_in_lines(lines, "import re", False)
    return expected


@pytest.mark.parametrize("glob", GLOBS)
@pytest.mark.parametrize("size", GLOB_SIZES)
def test_every_hit_across_a_glob_of_over_a_hundred_files(glob, size):
    expected = oracle(glob)
    assert 100 < len(expected) <= 200
    server = ServerProcess(workspace=THIRDPARTY)
    try:
        params = {"paths": [f"{DOCUTILS_SDIST[0]}/{DOCUTILS_SDIST[1]}/{glob}"], "find": "import re"}
        got, _ = found_many(server, params | ({"maxBytes": size} if size else {}))
    finally:
        server.close()
    assert got == expected


def test_a_glob_of_hundreds_of_files_is_searched_to_its_end():
    """Following `next` through every file of the sdist: each file's hits, none lost, none twice."""
    expected = oracle("**/*.py")
    assert len(expected) > 300
    server = ServerProcess(workspace=THIRDPARTY)
    try:
        got, _ = found_many(server, {"paths": [f"{DOCUTILS_SDIST[0]}/{DOCUTILS_SDIST[1]}/**/*.py"],
                                     "find": "import re", "maxBytes": 8192})
    finally:
        server.close()
    assert got == expected
