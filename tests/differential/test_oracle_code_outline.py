"""Code outlines against independent parsers: Python's against `ast` (every class and function,
nested as written, spanning its decorators to its last line, and the read each names shows exactly
those lines); C and C++ headers' against Universal Ctags (every declaration, nested as written)."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess

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


# Headers whose declarations are wrapped in macros the outline's parser does not expand: glibc's
# (`__BEGIN_DECLS`, `__THROW`, `__wur`, `__nonnull ((1))`), zlib's (`ZEXTERN int ZEXPORT f
# OF((...))`) and libstdc++'s (`_GLIBCXX_BEGIN_NAMESPACE_VERSION`, `_GLIBCXX20_CONSTEXPR`,
# `_GLIBCXX_NOEXCEPT`). Ctags is given, as `-D`, the definitions from the headers they include
# that it would otherwise take for declarations of their own: zconf.h's `OF` (the parameters it
# wraps), concept_check.h's class requirements (nothing, without _GLIBCXX_CONCEPT_CHECKS).
HEADERS = [("libc6-dev", "usr/include/stdio.h", []),
           ("zlib1g-dev", "usr/include/zlib.h", ["OF(args)=args"]),
           ("libstdc++-12-dev", "usr/include/c++/12/bits/stl_vector.h",
            ["__glibcxx_class_requires(_a,_b)=", "__glibcxx_class_requires2(_a,_b,_c)="])]

# Ctags' kinds as the outline words them; its others (members, enumerators, variables defined,
# included headers) the outline does not list.
CTAGS_WORDS = {"function": "function", "prototype": "function", "externvar": "extern", "typedef": "typedef",
               "struct": "struct", "union": "union", "enum": "enum", "class": "class", "namespace": "namespace",
               "macro": "#define"}
# What a macro is defined to, from the line ctags names: the outline lists one defined to something.
DEFINE = re.compile(r"\s*#\s*define\s+\w+(?P<params>\([^)]*\))?(?P<value>.*)")


def ctags_symbols(path, defines: list[str]) -> list[tuple[str, str, str, int, int | None]]:
    """(scope, word, name, line of the name, last line or None) of each declaration Universal
    Ctags finds, prototypes and `extern` variables included; not those in a function's body, nor
    anonymous ones, nor a macro defined empty or the guard of the `#ifndef` just before it. Ctags
    takes `extern FILE *__REDIRECT (fopen, (...), fopen64)` for a variable: a declaration whose
    name is followed by a parameter list is a function's, as C reads it."""
    if shutil.which("ctags") is None:
        pytest.skip("ctags is absent: install Universal Ctags (Debian's universal-ctags; scripts/test does)")
    # (ctags reads a `.h` as C++, which parses C's declarations as well)
    done = subprocess.run(["ctags", "--output-format=json", "--sort=no", "--fields=+neZ", "--kinds-C++=+px",
                           *(f"-D{define}" for define in defines), "-o", "-", str(path)],
                          capture_output=True, text=True, timeout=120, check=True)
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for tag in map(json.loads, done.stdout.splitlines()):
        word = CTAGS_WORDS.get(tag["kind"])
        if word is None or tag.get("scopeKind") == "function" or tag["name"].startswith("__anon"):
            continue
        if word == "#define":
            line = lines[tag["line"] - 1]
            define = DEFINE.match(line)
            before = lines[tag["line"] - 2].split() if tag["line"] > 1 else []
            if define is None or not (define["params"] or define["value"].strip().strip("\\")
                                      or line.endswith("\\")) or before == ["#ifndef", tag["name"]]:
                continue
        if word == "extern" and re.search(rf"\b{re.escape(tag['name'])}\s*\(", tag["pattern"]):
            word = "function"
        found.append(("" if word == "#define" else tag.get("scope", ""), word, tag["name"].replace(" ", ""),
                      tag["line"], tag.get("end")))
    return found


C_ENTRY = re.compile(r"( *)(\S+) (.*?)(?: \[(#.*|….*)\])?  \(lines? (\d+)(?:-(\d+))?\)  → offset=\d+ limit=\d+")


def c_outline(read, path, size=None) -> list[tuple[str, str, str, int, int, str]]:
    """(scope, word, name, first line, last line, the preprocessor branches it says it stands in)
    of each entry of the outline, as ctags words them: the scope the names of the entries it is
    nested in joined by `::` (a macro's none, as the preprocessor knows no scopes), a template's
    arguments left out, a namespace `a::b` as `b` in `a`."""
    found, scopes = [], []  # scopes[level]: the scope an entry at that level opens
    for match in outline_lines(read, path, size, C_ENTRY):
        level, word, name, branches = len(match[1]) // 2, match[2], match[3], match[4] or ""
        if not name.startswith("operator"):
            name = re.sub(r"<.*>$", "", name)
        first, last = int(match[5]), int(match[6] or match[5])
        scopes = scopes[:level]
        scope = scopes[-1] if scopes else ""
        *outer, name = name.split("::") if word == "namespace" else [name]
        for part in outer:
            found.append((scope, word, part, first, last, branches))
            scope = f"{scope}::{part}" if scope else part
        found.append(("" if word == "#define" else scope, word, name, first, last, branches))
        scopes.append(f"{scope}::{name}" if scope else name)
    return found


def else_lines(lines: list[str]) -> set[int]:
    """The lines in an `#else` or `#elif` branch: ctags reads the first branch of a conditional,
    and the others where it finds braces balanced."""
    found, branches = set(), []
    for number, line in enumerate(lines, 1):
        directive = line.split()[:1] if line.lstrip().startswith("#") else []
        word = directive[0].lstrip("#") or (line.split()[1] if len(line.split()) > 1 else "") if directive else ""
        if word in ("if", "ifdef", "ifndef"):
            branches.append(False)
        elif word in ("else", "elif") and branches:
            branches[-1] = True
        elif word == "endif" and branches:
            branches.pop()
        elif any(branches):
            found.add(number)
    return found


@pytest.mark.parametrize("package,header,defines", HEADERS, ids=[h[1].rsplit("/", 1)[1] for h in HEADERS])
def test_every_declaration_ctags_finds_in_a_header_is_listed(rpc, package, header, defines):
    """Both ways: each declaration ctags finds is listed, spanning the line ctags names and ending
    where ctags ends it; each entry listed is one ctags finds (or stands in a branch it skips)."""
    path = need(package, header)
    listed = c_outline(rpc, path)
    expected = ctags_symbols(path, defines)
    elsewhere = else_lines(path.read_text(encoding="utf-8").splitlines())
    missing = [tag for tag in expected if not any(
        (scope, word, name) == tag[:3] and first <= tag[3] <= last and tag[4] in (None, last)
        for scope, word, name, first, last, _ in listed)]
    extra = [entry for entry in listed if entry[3] not in elsewhere and not any(
        entry[:3] == tag[:3] and entry[3] <= tag[3] <= entry[4] for tag in expected)]
    assert (missing, extra) == ([], [])


def branch_chains(lines: list[str]) -> dict[int, tuple[tuple[int, int, str], ...]]:
    """Each line's preprocessor branches, outermost first, as (which conditional, which of its
    branches from 0, the directive's word): the file's directives read line by line, continued
    lines joined; a header's include guard (`#ifndef X` then `#define X`) is none."""
    chains: dict[int, tuple[tuple[int, int, str], ...]] = {}
    stack: list[tuple[int, int, str]] = []
    opened, number = 0, 0
    while number < len(lines):
        line = lines[number]
        number += 1
        words = line.replace("#", "# ", 1).split() if line.lstrip().startswith("#") else []
        word = words[1] if len(words) > 1 else ""
        guard = (number == next(i for i, text in enumerate(lines, 1) if text.startswith("#"))
                 and word == "ifndef" and lines[number].split()[:2] == ["#define", words[2]])
        if word in ("if", "ifdef", "ifndef"):
            stack.append((-1, 0, word) if guard else (opened, 0, word))
            opened += 1
        elif word in ("elif", "else") and stack:
            stack[-1] = (stack[-1][0], stack[-1][1] + 1, word)
        elif word == "endif" and stack:
            stack.pop()
        while line.endswith("\\"):
            line = lines[number]
            number += 1
        chains[number] = tuple(branch for branch in stack if branch[0] >= 0)
    return chains


# Headers declaring the same member in two branches (`map() : _M_t() { }` under `#if __cplusplus <
# 201103L`, `map() = default;` under its `#else`), and splitting a declaration between branches
# (`iterator` then `insert(const_iterator ...)` or `insert(iterator ...)`, then one body).
BRANCHED = [("libstdc++-12-dev", "usr/include/c++/12/bits/stl_map.h"),
            ("libstdc++-12-dev", "usr/include/c++/12/bits/basic_string.h")]


@pytest.mark.parametrize("package,header", BRANCHED, ids=[h[1].rsplit("/", 1)[1] for h in BRANCHED])
def test_a_declaration_in_a_preprocessor_branch_says_the_branch(rpc, package, header):
    """Each entry on a line in a conditional's branch says the branches it stands in (the
    innermost last, by its directive's word), an entry outside any says none; so two entries of the
    same name in two branches of one conditional read apart. Each is nested in the entries holding
    it, those of branches parsed apart too."""
    path = need(package, header)
    listed = c_outline(rpc, path)
    chains = branch_chains(path.read_text(encoding="utf-8").splitlines())
    assert len(listed) > 100
    for scope, word, name, first, last, branches in listed:
        chain = chains[first]
        said = branches.split(", ")[-1] if branches else ""
        assert bool(chain) == bool(branches), (name, first, branches)
        assert not chain or said.startswith(f"#{chain[-1][2]}"), (name, first, branches, chain)
    for one in listed:
        for other in listed:
            a, b = chains[one[3]], chains[other[3]]
            apart = any(x[0] == y[0] and x[1] != y[1] for x, y in zip(a, b))
            if one[:3] == other[:3] and apart:
                assert one[5] != other[5], (one, other)
    spans = [(len(m[1]) // 2, int(m[5]), int(m[6] or m[5])) for m in outline_lines(rpc, path, None, C_ENTRY)]
    for number, (level, first, last) in enumerate(spans):  # nested deeper than each entry holding it
        # (one ending on the same line is the same declaration in another branch, its template
        # clause split between them, or a typedef beside its struct)
        assert all(outer < level for outer, start, end in spans[:number] if start <= first and last < end), \
            spans[number]
    if header.endswith("stl_map.h"):  # the class is found, and the declaration split in two branches in it
        # (in `std`: the grammar takes `decltype(..., void(), true)` further on for no C++, and its
        # recovery nests the class in a function it makes up)
        assert any(entry[0].startswith("std") and entry[1:3] == ("class", "map") for entry in listed)
        assert any(entry[0].endswith("::map") and entry[1:4] == ("function", "insert", 906) for entry in listed)


@pytest.mark.parametrize("size", SIZES[1:])
def test_a_paged_header_outline_lists_every_declaration_once(rpc, size):
    path = need("libstdc++-12-dev", "usr/include/c++/12/bits/stl_vector.h")
    assert c_outline(rpc, path, size) == c_outline(rpc, path)
