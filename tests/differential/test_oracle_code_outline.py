"""Python outlines against `ast`: every class and function, nested as written, spanning its
decorators to its last line, and the read each names shows exactly those lines."""

from __future__ import annotations

import ast
import re

import pytest
from harness import SIZES, THIRDPARTY, body, editor_lines, need, outline_lines

DOCUTILS = ("docutils-0.22.4", "docutils-0.22.4", "docutils")
NBCLIENT = ("nbclient-0.10.2", "nbclient-0.10.2", "nbclient", "client.py")

ENTRY = re.compile(r"( *)(.*?)  \(lines? (\d+)(?:-(\d+))?\)  → offset=(\d+) limit=(\d+)")


def symbols(source: str) -> list[tuple[int, str, int, int]]:
    """(depth, "class C" / "def f" / "async def f", first line, last line) of each class and
    function, in order; the first line is its first decorator's, the last its last statement's or
    that of comments after it indented into its body (which `ast` leaves out: they are the body's
    by their indentation)."""
    lines = editor_lines(source)
    out = []

    def last_line(node) -> int:
        indent = len(lines[node.lineno - 1]) - len(lines[node.lineno - 1].lstrip())
        last, number = node.end_lineno, node.end_lineno + 1
        while number <= len(lines):
            text = lines[number - 1]
            if text.strip() and not (text.lstrip().startswith("#") and len(text) - len(text.lstrip()) > indent):
                break
            if text.strip():
                last = number
            number += 1
        return last

    def visit(node, depth):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                word = {ast.ClassDef: "class", ast.FunctionDef: "def", ast.AsyncFunctionDef: "async def"}
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                out.append((depth, f"{word[type(child)]} {child.name}", first, last_line(child)))
                visit(child, depth + 1)
            else:
                visit(child, depth)
    visit(ast.parse(source), 0)
    return out


def outline(read, path, size=None) -> list[tuple[int, str, int, int]]:
    entries = []
    for match in outline_lines(read, path, size, ENTRY):
        first, last = int(match[3]), int(match[4] or match[3])
        assert (int(match[5]), int(match[6])) == (first, last - first + 1), match[0]
        entries.append((len(match[1]) // 2, match[2], first, last))
    return entries


def modules() -> list[str]:
    root = THIRDPARTY.joinpath(*DOCUTILS)
    found = sorted(str(p.relative_to(root)) for p in root.rglob("*.py"))
    return found or ["(absent)"]


@pytest.mark.parametrize("module", modules())
def test_every_symbol_ast_finds_is_listed_with_its_lines(rpc, module):
    path = need(*DOCUTILS, module)
    assert outline(rpc, path) == symbols(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("size", SIZES[1:])
def test_a_paged_outline_lists_every_symbol_once(rpc, size):
    path = need(*DOCUTILS, "nodes.py")
    assert outline(rpc, path, size) == symbols(path.read_text(encoding="utf-8"))


def test_async_functions_are_named_as_written(rpc):
    path = need(*NBCLIENT)
    assert outline(rpc, path) == symbols(path.read_text(encoding="utf-8"))


def test_each_entry_reads_its_symbol(rpc):
    """The arguments after "→" show the symbol's lines, from its first decorator to its end."""
    path = need(*DOCUTILS, "parsers", "rst", "states.py")
    lines = editor_lines(path.read_text(encoding="utf-8"))
    for _, name, first, last in outline(rpc, path)[::10]:
        result = rpc({"path": str(path), "offset": first, "limit": last - first + 1})
        shown = [re.sub(r"^ *\d+\t", "", line) for line in body(result).split("\n")[: last - first + 1]]
        assert shown == lines[first - 1:last], name
