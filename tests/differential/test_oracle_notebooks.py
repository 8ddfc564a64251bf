"""Notebooks (jupytext's, nbformat's, nbclient's and papermill's test notebooks) read to their end
by following `next`: every cell once, in order, under its header, its source as nbformat reads
it."""

from __future__ import annotations

import re

import nbformat
import pytest
from harness import CUT, IMAGE_LINE, SIZES, THIRDPARTY, body, chain, editor_lines, follow, same_in_every_front_end

SDISTS = ["jupytext-1.19.6", "nbformat-5.10.4", "nbclient-0.10.2", "papermill-2.7.0"]
NOTEBOOKS = sorted(str(p.relative_to(THIRDPARTY)) for s in SDISTS for p in (THIRDPARTY / s).rglob("*.ipynb")) \
    or ["(absent)"]
# At the smaller reply sizes, every fifth notebook in path order: a fixed sample, so that the suite
# runs in a few minutes on two cores; and the largest, jupytext's demo "World population" (6 MB, of
# which 2.9 MB is plotly.js in an HTML output, and a Plotly figure).
SAMPLE_EVERY = 5
WORLD_POPULATION = "jupytext-1.19.6/jupytext-1.19.6/demo/World population.ipynb"
SAMPLE = sorted(set(NOTEBOOKS[::SAMPLE_EVERY]) | ({WORLD_POPULATION} if WORLD_POPULATION in NOTEBOOKS else set()))

HEADER = re.compile(r"### Cell (\d+) \[id=[^\]]*\] .*")


def notebook(name):
    path = THIRDPARTY / name
    if not path.is_file():
        pytest.skip(f"{path} is absent: run ./scripts/fetch-thirdparty")
    try:
        nb = nbformat.read(str(path), as_version=4)
    except Exception as exc:  # noqa: BLE001 - a notebook nbformat cannot read has no oracle here
        pytest.skip(f"nbformat cannot read {name}: {exc}")
    return path, nb


CONTINUING = re.compile(r"\[… continuing cell \d+\]")
# The markers around a comment of a markdown cell (docs/CONTRACT.md, "Hidden content"), which the
# source as nbformat reads it has not.
PASSAGE_MARKERS = re.compile("\u27e6(?:hidden: in HTML comments|hidden: styled not to show[^\u27e7]*|/hidden)\u27e7")


def rendered(replies: list[dict]) -> list[str]:
    """The lines of the notebook's rendering as the replies show them, one after another: each
    reply's first line (the notebook's, after any that counts hidden passages), the warning of a
    notebook off nbformat's schema, its line saying it continues a cell, and its closing line left
    out, the markers of hidden passages taken off; a line cut at its marker joined to the read
    that goes on at its column. A read by lines shows a cell's lines without a gutter
    (`shown.cellLines` numbers them)."""
    stream: list[str] = []
    for result in replies:
        lines = [PASSAGE_MARKERS.sub("", line) for line in body(result).split("\n") if line != IMAGE_LINE]
        if result.get("hidden"):
            assert lines.pop(0).startswith("[Hidden from a person reading the file: ")
        if lines and lines[0].startswith("Notebook: "):
            lines.pop(0)
        if lines and lines[0].startswith("Warning: the notebook does not follow the nbformat schema"):
            lines.pop(0)
        if lines and CONTINUING.fullmatch(lines[0]):
            lines.pop(0)
        if result["truncated"] or result.get("shown", {}).get("outputs"):
            assert lines.pop().startswith("["), lines[-1]
        if (result["_request"].get("column") or 1) > 1:  # goes on with the line the last reply cut
            cut = CUT.fullmatch(stream.pop())
            assert cut and int(cut[2]) == result["_request"]["column"], "a line read on where it was not cut"
            lines[0] = cut[1] + lines[0]
        stream.extend(lines)
    return [CUT.fullmatch(line)[1] if CUT.fullmatch(line) else line for line in stream]


def check(lines: list[str], nb) -> None:
    """Each cell's header once, in order, its source's lines right after it."""
    headers = [(i, int(m[1])) for i, line in enumerate(lines) if (m := HEADER.fullmatch(line))]
    assert [n for _, n in headers] == list(range(1, len(nb.cells) + 1)), "cells lost or shown twice"
    for (at, number), cell in zip(headers, nb.cells):
        source = editor_lines(cell.get("source", ""))
        assert lines[at + 1:at + 1 + len(source)] == source, f"cell {number}'s source"


def read_all(read, params):
    return rendered(follow(read, params))


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_cell_once_with_its_source(rpc, name):
    path, nb = notebook(name)
    check(read_all(rpc, {"path": str(path)}), nb)


@pytest.mark.parametrize("size", SIZES[1:])
@pytest.mark.parametrize("name", SAMPLE)
def test_every_cell_once_at_a_smaller_reply_size(rpc, name, size):
    path, nb = notebook(name)
    check(read_all(rpc, {"path": str(path), "maxBytes": size}), nb)


def test_a_notebook_is_the_same_in_every_front_end(rpc):
    path, _ = notebook("jupytext-1.19.6/jupytext-1.19.6/tests/data/notebooks/inputs/ipynb_py/"
                       "Notebook_with_R_magic.ipynb")
    same_in_every_front_end(rpc, chain(rpc, {"path": str(path)}), cli_reads=1)


NBFORMAT_TESTS = sorted(str(p.relative_to(THIRDPARTY)) for p in
                        (THIRDPARTY / "nbformat-5.10.4" / "nbformat-5.10.4" / "tests").glob("*.ipynb")) or ["(absent)"]


@pytest.mark.parametrize("name", NBFORMAT_TESTS)
def test_a_small_reply_holds_a_cell_at_least(rpc, name):
    """At the smallest reply, following `next` shows at least a whole cell of these small cells a
    reply, in a notebook off the schema (its warning line kept to its room) too; every cell once."""
    path = THIRDPARTY / name
    if not path.is_file():
        pytest.skip(f"{path} is absent: run ./scripts/fetch-thirdparty")
    replies = follow(rpc, {"path": name, "maxBytes": SIZES[-1]})
    cells = replies[0]["totalCells"]
    assert len(replies) <= max(cells, 1), [r["shown"] for r in replies]
    headers = [int(m[1]) for r in replies for m in HEADER.finditer(body(r))]
    assert headers == list(range(1, cells + 1))
