"""The preprocessor conditionals of C, C++ and C# (`#if`, `#ifdef`, `#elif`, `#else`), for an
outline.

tree-sitter parses every branch of a conditional, one after the other, as if all were compiled.
Where each branch holds whole declarations the parse is sound and lists both: the same member
twice (`map() : _M_t() { }` under `#if __cplusplus < 201103L`, `map() = default;` under its
`#else`), so each entry says the branches it stands in. Where a branch holds part of a declaration
(`iterator`, then `insert(const_iterator ...)` under `#if` and `insert(iterator ...)` under `#else`,
then one body), the branches together are no C++ and the parse's error recovery loses what holds
them (the class around); such a file is parsed again once for each choice of branches (a
configuration: the first branch of every conditional, then the second, ...), the other branches
and the directives blanked, and the outlines merged.

The conditionals are found by the same grammar, parsing the file's directive lines alone (the
rest blanked). A header's include guard (`#ifndef X` opening with `#define X`, no `#else`) is no
branch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, Iterator

from agentread.cancel import checkpoint
from agentread.outline import Entry
from agentread.readers.cmacros import DIRECTIVE_LINES

# A branch's condition is shown up to this many characters: a condition can run over many
# continued lines, and the entry's title is for telling branches apart.
MAX_CONDITION_CHARS = 60
# An entry names at most this many of the branches it stands in (the innermost); the outer ones
# are elided: a file can nest conditionals hundreds deep.
MAX_BRANCHES_SHOWN = 3
# A file whose parse has errors is parsed again in at most this many configurations (the first
# branch of each conditional, the second, ...): a branch past the last of them (a chain of more
# `#elif`s) keeps the entries the first parse gave it, as a line no configuration keeps does.
MAX_CONFIGURATIONS = 4

# Every byte but a line end made a space: a text blanked, its lines in their places.
BLANKED = bytes(byte if byte == 0x0A else 0x20 for byte in range(256))
CONDITIONALS = ("preproc_if", "preproc_ifdef")


@dataclass(frozen=True)
class Branch:
    label: str  # "#if __cplusplus < 201103L", "#else of #ifdef X"
    first: int  # its rows, from 0: its directive's first to the row before the next directive's
    last: int
    body: int  # the row its code begins on (after a directive continued over several lines)
    index: int  # 0 for the `#if`, 1 for the next `#elif` or `#else`, ...
    count: int  # its conditional's branches
    endif: int  # the row of its conditional's `#endif`


def branches(parse: Callable[[bytes], object], data: bytes) -> list[Branch]:
    """Every branch of every conditional of `data` (LF-ended), outer before inner, in the order
    they begin; none of an include guard. `parse` is the grammar's."""
    directives = bytearray(data.translate(BLANKED))
    for match in DIRECTIVE_LINES.finditer(data):
        directives[match.start():match.end()] = match[0]
    text = bytes(directives)
    root = parse(text).root_node
    found: list[Branch] = []
    stack = [(node, True) for node in reversed(root.named_children)]  # (node, whether at the top level)
    while stack:
        node, top = stack.pop()
        if node.type in CONDITIONALS and not (top and _guard(node, text)):
            found.extend(_branches_of(node, text))
        stack.extend((child, False) for child in reversed(node.named_children))
    found.sort(key=lambda branch: branch.first)
    return found


def _branches_of(node, text: bytes) -> list[Branch]:
    """The branches of one conditional: its own and its alternatives'."""
    parts = [node]
    while parts[-1].child_by_field_name("alternative") is not None:
        parts.append(parts[-1].child_by_field_name("alternative"))
    endif = next((child.start_point.row for child in reversed(node.children) if child.type == "#endif"),
                 node.end_point.row)
    opening = _directive(node, text)
    found = []
    for index, part in enumerate(parts):
        directive = _directive(part, text)
        label = f"{directive} of {opening}" if part.type == "preproc_else" else directive
        last = parts[index + 1].start_point.row - 1 if index + 1 < len(parts) else endif - 1
        said = part.child_by_field_name("condition") or part.child_by_field_name("name") or part.children[0]
        found.append(Branch(label, part.start_point.row, max(last, part.start_point.row), said.end_point.row + 1,
                            index, len(parts), endif))
    return found


def _directive(node, text: bytes) -> str:
    """A branch's directive as written, on one line, its condition cut at MAX_CONDITION_CHARS."""
    keyword = "#" + _written(node.children[0], text).lstrip("#").strip()  # `# else`
    said = node.child_by_field_name("condition") or node.child_by_field_name("name")
    if said is None:
        return keyword
    condition = " ".join(_written(said, text).replace("\\\n", " ").split())
    if len(condition) > MAX_CONDITION_CHARS:
        condition = condition[:MAX_CONDITION_CHARS] + "…"
    return f"{keyword} {condition}"


def _written(node, text: bytes) -> str:
    """A node's text (sliced from `text`: faster than the node's own)."""
    return text[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def _guard(node, text: bytes) -> bool:
    """Whether a conditional of the file's top level is its include guard: `#ifndef X` opening
    with `#define X`, without an `#else`."""
    if node.type != "preproc_ifdef" or node.children[0].type != "#ifndef":
        return False
    if node.child_by_field_name("alternative") is not None:
        return False
    first = next((child for child in node.named_children if child.type != "identifier"), None)
    name = node.child_by_field_name("name")
    defined = first.child_by_field_name("name") if first is not None and first.type == "preproc_def" else None
    return name is not None and defined is not None and _written(name, text) == _written(defined, text)


def configurations(data: bytes, found: list[Branch]) -> Iterator[bytes]:
    """`data` once for each choice of branches (the first of every conditional, then the second,
    up to MAX_CONFIGURATIONS; a conditional of fewer keeps its last), the others and every
    conditional's directives blanked, each line in its place."""
    starts = [0, *(match.end() for match in re.finditer(rb"\n", data))]

    def blank(out: bytearray, first: int, last: int) -> None:
        if first > last or first >= len(starts):
            return
        end = starts[last + 1] if last + 1 < len(starts) else len(data)
        out[starts[first]:end] = out[starts[first]:end].translate(BLANKED)

    for choice in range(min(max((branch.count for branch in found), default=0), MAX_CONFIGURATIONS)):
        checkpoint()
        out = bytearray(data)
        blanked = -1  # the last row of the branch last blanked: those within it are blank already
        for branch in found:
            if branch.first <= blanked:
                continue
            blank(out, branch.first, branch.body - 1)  # its directive
            if branch.index == branch.count - 1:
                blank(out, branch.endif, branch.endif)
            if branch.index != min(choice, branch.count - 1):
                blank(out, branch.body, branch.last)
                blanked = branch.last
        yield bytes(out)


def reparsed(data: bytes, found: list[Branch], first: list[Entry],
             outline: Callable[[bytes], tuple[list[Entry], bool]]) -> tuple[list[Entry], bool]:
    """The entries of `data` outlined (by `outline`) in each of its configurations and merged, and
    cut short or not; an entry of its first parse (`first`) on a line no configuration keeps (a
    branch of a branch other than the first, as `#ifdef` in an `#else`) as that parse found it,
    nested in the entries around it (_placed)."""
    starts = [0, *(match.end() for match in re.finditer(rb"\n", data)), len(data)]
    outlines, configured, cut = [], [], False
    for configuration in configurations(data, found):
        entries, stopped = outline(configuration)
        outlines.append(entries)
        configured.append(configuration)
        cut = cut or stopped

    def kept(entry: Entry) -> bool:
        row = min(entry.read["offset"] - 1, len(starts) - 2)
        line = slice(starts[row], starts[row + 1])
        return any(configuration[line] == data[line] for configuration in configured)

    return _placed(merged(outlines), [entry for entry in first if not kept(entry)]), cut


def _placed(entries: list[Entry], more: list[Entry]) -> list[Entry]:
    """`entries` (in the order of their lines) with `more` among them, each of `more` a level
    deeper than the innermost entry whose lines hold its first (the first parse, whose errors
    these configurations are for, nests them wrongly), in the order of their lines."""
    out: list[Entry] = []
    around: list[Entry] = []  # the entries holding the line reached, outermost first
    for entry, placed in sorted([(entry, False) for entry in entries] + [(entry, True) for entry in more],
                                key=lambda pair: pair[0].read["offset"]):
        first = entry.read["offset"]
        while around and around[-1].read["offset"] + around[-1].read["limit"] <= first:
            around.pop()
        if placed:
            entry = replace(entry, level=around[-1].level + 1 if around else 0)
        out.append(entry)
        around.append(entry)
    return out


def merged(outlines: list[list[Entry]]) -> list[Entry]:
    """The entries of several configurations' outlines, each once (by its level, title and first
    line), in the order of their lines, an entry before those it holds."""
    seen: set[tuple[int, str, int]] = set()
    out: list[Entry] = []
    for entries in outlines:
        for entry in entries:
            key = (entry.level, entry.title, entry.read["offset"])
            if key not in seen:
                seen.add(key)
                out.append(entry)
    out.sort(key=lambda entry: (entry.read["offset"], entry.level))
    return out


def labelled(entries: list[Entry], found: list[Branch]) -> list[Entry]:
    """Each entry that begins in a branch titled with the branches it stands in, innermost last
    (`function map [#if __cplusplus < 201103L]`)."""
    out = list(entries)
    open_: list[Branch] = []
    following = 0
    for at in sorted(range(len(entries)), key=lambda i: entries[i].read["offset"]):
        entry = entries[at]
        row = entry.read["offset"] - 1
        while following < len(found) and found[following].first <= row:
            while open_ and open_[-1].last < found[following].first:
                open_.pop()
            open_.append(found[following])
            following += 1
        while open_ and open_[-1].last < row:
            open_.pop()
        if open_:
            shown = [branch.label for branch in open_[-MAX_BRANCHES_SHOWN:]]
            if len(open_) > MAX_BRANCHES_SHOWN:
                shown.insert(0, "…")
            out[at] = replace(entry, title=f"{entry.title} [{', '.join(shown)}]")
    return out
