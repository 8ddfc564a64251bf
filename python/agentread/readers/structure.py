"""The outline of a text file: the symbols of source code and the headings of Markdown and
reStructuredText, with their line ranges, from tree-sitter's parsers; the headings of AsciiDoc
from Asciidoctor (asciidoc.py).

Each language's grammar is its own maintained wheel (tree-sitter-python, tree-sitter-rust, ...),
compiled in, so nothing is downloaded when a file is read. The file's name says its language; a
text file of no language known here is said to have no outline, with its line count.

Lines are the read's and the editor's: CRLF, LF and a lone CR each end one. The parsers end lines at
LF alone, so each lone CR is handed to them as an LF (CRLF numbers the same). A symbol spans its
whole node, decorators and doc comments that the grammar puts inside it included; a heading spans
to the line before the next heading of its level or higher. C and C++ list their declarations too,
read past the macros wrapped around them (cmacros.py); C, C++ and C# entries say the preprocessor
branches they stand in (cconditions.py).
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Iterator

from agentread.cancel import checkpoint, stopped
from agentread.limits import REPLY_FRAME_BYTES
from agentread.numbering import amount, counted
from agentread.outline import Entry, Heading, entry_lines, heading_entries, lines_entry, outline_result
from agentread.readers import Source
from agentread.request import ReadRequest
from agentread.result import ReadError, ReadResult, TextPart

# A text file is parsed whole for its outline: past this size it is refused (a parse costs about a
# second for every few MB, and memory several times the file).
MAX_OUTLINE_FILE_BYTES = 16 << 20

# A file larger than this is parsed so that a cancelled read stops the parse (a callback every few
# dozen bytes, which makes the parse about half as slow again); a smaller one parses in well under a
# second, whole.
CANCELLABLE_PARSE_BYTES = 1 << 20
PARSE_BLOCK_BYTES = 1 << 16

# A first read of a code or Markdown file too long for one reply ends with the outline of the
# rest, in at most this share of the reply (the window gives up that much)...
TAIL_OUTLINE_SHARE = 0.25
# ... for files up to this size, parsed on that read (a few tens of ms a MB): a larger one's first
# read stays a window alone, and `outline: true` lists it.
TAIL_OUTLINE_FILE_BYTES = 4 << 20
# Kept of that share for the line saying how to list the entries that did not fit.
MORE_LINE_BYTES = 100

# Outlines kept between calls (keyed by the file's path and version), so that paging through one
# parses its file once; one of more entries than this is parsed again for each page (it would hold
# some 100 MB).
OUTLINE_CACHE_FILES = 8
MAX_CACHED_ENTRIES = 200_000

# A C or C++ file whose parse has errors is parsed again with its macros blanked (cmacros.py), and
# then (C# too) once for each configuration of its preprocessor branches (cconditions.py), up to
# this size: the blanking is Python's work on every token, slower than the parse itself, and the
# parse of a hostile file's errors is slow too, so a larger file (generated, seldom a header) keeps
# its first parse.
MAX_UNMACRO_BYTES = 1 << 20

# A CR that ends a line alone (not that of a CRLF).
LONE_CR = re.compile(rb"\r(?!\n)")

# The first line of a script, looked at for its interpreter.
SHEBANG_BYTES = 200

# Nodes entered while looking for symbols: a generated file of millions of nodes stops here, the
# symbols found so far kept and the outline saying it was cut.
MAX_OUTLINE_NODES = 5_000_000


@dataclass(frozen=True)
class Grammar:
    module: str  # the wheel's module
    function: str  # its function giving the language
    symbols: dict[str, str]  # node type → the word shown before its name ("class", "def", ...)
    # node type → its name and value fields: a binding that is a symbol where its value is a
    # function, a class or an object holding functions (BINDING_VALUES), named by what it binds.
    bindings: dict[str, tuple[str | None, str]] = dataclasses.field(default_factory=dict)
    # node types that are symbols where `_declared` gives them a word (C and C++ declarations).
    declarations: frozenset[str] = frozenset()
    # whether it has preprocessor conditionals (`#if`): an entry names its branches (cconditions.py)
    conditionals: bool = False


# The node types that are symbols, by language: definitions a reader looks for (classes and their
# kin, functions, methods), not every declaration.
_C_FAMILY = {"struct_specifier": "struct", "union_specifier": "union", "enum_specifier": "enum"}
# A header is mostly declarations: prototypes (`function`, a C++ class's methods among them),
# variables declared `extern`, typedefs (C++'s `using` aliases) and the macros it defines with a
# value or parameters (`#define`; not a flag defined empty, nor the guard of the `#ifndef` around
# it). Declarations in a function's body are not listed, nor a function defined in one (C and C++
# define none there: it is a macro's use taken for one, `__catch (...) { }`).
_C_DECLARATIONS = frozenset({"function_definition", "declaration", "field_declaration", "type_definition",
                             "alias_declaration", "preproc_def", "preproc_function_def"})
_JS = {"class_declaration": "class", "function_declaration": "function", "generator_function_declaration":
       "function*", "method_definition": "method"}
# JavaScript and TypeScript define much by binding a value: a variable, an assignment to a member
# (`Router.prototype.route = function`, `exports.f = () => ...`), an object's key, a class field, a
# default export (named `(default)`). A function passed to a call (`describe('x', () => ...)`) is
# bound to no name and is left out, and so are the keys of an object passed to one (a bundler's
# `__export(ns, {f: () => f})`): an object's keys are listed where the object is itself bound.
_JS_BINDINGS = {"variable_declarator": ("name", "value"), "assignment_expression": ("left", "right"),
                "pair": ("key", "value"), "field_definition": ("property", "value"),
                "public_field_definition": ("name", "value"), "export_statement": (None, "value")}
# The word shown for a binding, by its value's node type (an object: where it holds a function).
BINDING_VALUES = {"arrow_function": "function", "function_expression": "function", "function": "function",
                  "generator_function": "function*", "class": "class"}
_TS = {**_JS, "abstract_class_declaration": "abstract class", "interface_declaration": "interface",
       "type_alias_declaration": "type", "enum_declaration": "enum", "internal_module": "namespace",
       "abstract_method_signature": "abstract method"}

GRAMMARS: dict[str, Grammar] = {
    "python": Grammar("tree_sitter_python", "language", {"class_definition": "class", "function_definition": "def"}),
    "javascript": Grammar("tree_sitter_javascript", "language", _JS, _JS_BINDINGS),
    "typescript": Grammar("tree_sitter_typescript", "language_typescript", _TS, _JS_BINDINGS),
    "tsx": Grammar("tree_sitter_typescript", "language_tsx", _TS, _JS_BINDINGS),
    "go": Grammar("tree_sitter_go", "language", {"function_declaration": "func", "method_declaration": "method",
                                                 "type_spec": "type"}),
    "rust": Grammar("tree_sitter_rust", "language", {
        "function_item": "fn", "function_signature_item": "fn", "struct_item": "struct", "enum_item": "enum",
        "union_item": "union", "trait_item": "trait", "impl_item": "impl", "mod_item": "mod",
        "macro_definition": "macro_rules!"}),
    "java": Grammar("tree_sitter_java", "language", {
        "class_declaration": "class", "interface_declaration": "interface", "enum_declaration": "enum",
        "record_declaration": "record", "annotation_type_declaration": "@interface",
        "method_declaration": "method", "constructor_declaration": "constructor"}),
    "c": Grammar("tree_sitter_c", "language", _C_FAMILY, declarations=_C_DECLARATIONS, conditionals=True),
    "cpp": Grammar("tree_sitter_cpp", "language", {**_C_FAMILY, "class_specifier": "class",
                                                   "namespace_definition": "namespace"},
                   declarations=_C_DECLARATIONS, conditionals=True),
    "csharp": Grammar("tree_sitter_c_sharp", "language", {
        "namespace_declaration": "namespace", "file_scoped_namespace_declaration": "namespace",
        "class_declaration": "class", "interface_declaration": "interface", "struct_declaration": "struct",
        "enum_declaration": "enum", "record_declaration": "record", "method_declaration": "method",
        "constructor_declaration": "constructor", "property_declaration": "property"}, conditionals=True),
    "ruby": Grammar("tree_sitter_ruby", "language", {"class": "class", "module": "module", "method": "def",
                                                     "singleton_method": "def self."}),
    "php": Grammar("tree_sitter_php", "language_php", {
        "namespace_definition": "namespace", "class_declaration": "class", "interface_declaration": "interface",
        "trait_declaration": "trait", "enum_declaration": "enum", "function_definition": "function",
        "method_declaration": "function"}),
    "bash": Grammar("tree_sitter_bash", "language", {"function_definition": "function"}),
    "markdown": Grammar("tree_sitter_markdown", "language", {}),
    "rst": Grammar("tree_sitter_rst", "language", {}),
}

# A file's language by its extension (lower case).
EXTENSIONS = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".java": "java",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
    ".cs": "csharp", ".rb": "ruby", ".rake": "ruby", ".php": "php",
    ".sh": "bash", ".bash": "bash", ".zsh": "bash",
    ".md": "markdown", ".markdown": "markdown", ".mdown": "markdown", ".mkd": "markdown",
    ".rst": "rst", ".rest": "rst",
    # Not .asc, which is as often a PGP signature or key.
    ".adoc": "asciidoc", ".asciidoc": "asciidoc",
}


# A `.h` header is C's and C++'s alike: it is read as C++ where a line opens with what only C++
# writes (a class, a namespace, a template, an access label), for the C grammar makes of a class
# a function and loses its methods, while the C++ grammar parses C as well.
CPP_HEADER = re.compile(rb"^[ \t]*(?:(?:class|namespace|template)\b|(?:public|protected|private)[ \t]*:)", re.M)

# A script without an extension, by the interpreter its first line names (#!/usr/bin/env bash).
INTERPRETERS = {"bash": "bash", "sh": "bash", "zsh": "bash", "dash": "bash", "python": "python",
                "python3": "python", "node": "javascript", "ruby": "ruby", "php": "php"}


def language_of(path: str, data: bytes = b"") -> str | None:
    """The language of a file (`data`, its text or its start), by its extension, else by the
    interpreter its `#!` line names; a header named `.h` is C++ where it uses C++ (CPP_HEADER)."""
    extension = os.path.splitext(path)[1].lower()
    language = EXTENSIONS.get(extension)
    if extension == ".h" and CPP_HEADER.search(data):
        language = "cpp"
    if language is None and data.startswith(b"#!"):
        words = data[:SHEBANG_BYTES].split(b"\n", 1)[0][2:].decode("ascii", errors="replace").split()
        program = os.path.basename(words[1] if len(words) > 1 and words[0].endswith("/env") else words[0]) \
            if words else ""
        language = INTERPRETERS.get(program)
    return language


def outline(source: Source, request: ReadRequest) -> ReadResult:
    """The reader seam's outline of a text file."""
    if source.size > MAX_OUTLINE_FILE_BYTES:
        raise ReadError("file_too_large", f"{source.name} is {source.size:,} bytes, over the "
                        f"{MAX_OUTLINE_FILE_BYTES:,}-byte limit of a file outlined here. Read it by windows: "
                        "offset and limit.")
    language, entries, cut, total = structure(source)
    if language is None:
        header = (f"[{source.name} has no outline: it is text in no language outlined here (code in 12 "
                  f"languages, Markdown, reStructuredText, AsciiDoc). It has {amount(total, 'line')}: read it with "
                  "offset and limit.]")
        return outline_result([], request, source.path, "text", header, total_lines=total)
    noun = _noun(language)
    if entries:
        header = (f"[Outline of {source.name}: {amount(len(entries), noun)} in {amount(total, 'line')} ({language}). "
                  "Read one with the arguments after \"→\".]")
    else:
        header = f"[{source.name} ({language}, {amount(total, 'line')}) has no {noun}s: read it with offset and limit.]"
    if cut:
        header += (f"\n[The file has more than {MAX_OUTLINE_NODES:,} syntax nodes: the symbols of its start "
                   "are listed.]")
    return outline_result(entries, request, source.path, "text", header, total_lines=total)


def parses_whole(size: int, request: ReadRequest) -> bool:
    """Whether a read of a text file of `size` bytes parses all of it: its outline, or a first
    read's outline of the rest (with_outline_of_rest)."""
    if request.find is not None:
        return False
    return request.outline or (request.offset is None and request.limit is None and size <= TAIL_OUTLINE_FILE_BYTES)


def with_outline_of_rest(source: Source, request: ReadRequest, result: ReadResult,
                         window: Callable[[ReadRequest], ReadResult]) -> ReadResult:
    """`result`, a first window cut short, read again by `window` with room left at its end for the
    outline of the lines it does not show; `result` itself for a file with no outline to give."""
    # AsciiDoc is left out: its outline is a Ruby program's run, which would slow a plain read
    # (and wait its timeout on a hostile file); `outline: true` lists it.
    if source.size > TAIL_OUTLINE_FILE_BYTES or language_of(source.path) == "asciidoc":
        return result
    language, entries, _, _ = structure(source)
    if language is None:
        return result
    room = int(request.output_bytes * TAIL_OUTLINE_SHARE)
    shorter = window(dataclasses.replace(request, max_bytes=request.output_bytes - room + REPLY_FRAME_BYTES))
    end = shorter.end_line or 0
    first = next((i for i, entry in enumerate(entries) if entry.read["offset"] > end), None)
    if first is None or not shorter.truncated:
        return result
    rest = entries[first:]
    noun = _noun(language)
    lines = counted("line", end + 1, shorter.total_lines) if shorter.total_lines else f"lines {end + 1:,}-…"
    header = (f"[Outline of the rest of {source.name} ({lines}): {amount(len(rest), noun)}. Read one with the "
              "arguments after \"→\".]")
    lines, shown = entry_lines(rest, room - len(header.encode("utf-8")) - MORE_LINE_BYTES)
    if shown < len(rest):
        lines.append(f"[… and {len(rest) - shown:,} more: outline=true offset={first + shown + 1} lists them.]")
    # The closing line that says how to continue stays last, below the outline.
    head, _, closing = shorter.content[-1].text.rpartition("\n")
    shorter.content[-1:] = [TextPart(head), TextPart("\n".join([header, *lines, closing]))]
    return shorter


Structure = tuple["str | None", list[Entry], bool, int]  # (language, entries, cut short, lines)
_STRUCTURES: OrderedDict[tuple, Structure] = OrderedDict()
_STRUCTURES_LOCK = threading.Lock()


def structure(source: Source) -> Structure:
    """The file's language, outline entries (cut short or not) and line count, kept for the
    OUTLINE_CACHE_FILES files outlined last: paging through a long outline parses the file once."""
    with _STRUCTURES_LOCK:
        found = _STRUCTURES.pop(source.cache_key, None)
        if found is not None:
            _STRUCTURES[source.cache_key] = found
            return found
    data = utf8_text(source)
    language = language_of(source.path, data)
    total = _line_count(data)
    entries, cut = entries_of(data, language, source.name, total) if language else ([], False)
    found = (language, entries, cut, total)
    if len(entries) <= MAX_CACHED_ENTRIES:
        with _STRUCTURES_LOCK:
            _STRUCTURES[source.cache_key] = found
            while len(_STRUCTURES) > OUTLINE_CACHE_FILES:
                _STRUCTURES.popitem(last=False)
    return found


def utf8_text(source: Source) -> bytes:
    """The file's text as UTF-8 bytes, past any byte order mark (tree-sitter parses UTF-8)."""
    data = source.whole()[source.bom:]
    encoding = source.encoding or "utf-8"
    if encoding.replace("_", "-").lower() in ("utf-8", "ascii"):
        return data
    return data.decode(encoding, errors="replace").encode("utf-8")


def _noun(language: str) -> str:
    return "symbol" if language in GRAMMARS and GRAMMARS[language].symbols else "heading"


def _line_count(data: bytes) -> int:
    """Lines as cat -n counts them: a final terminator ends the last line."""
    return len(data.splitlines())


def entries_of(data: bytes, language: str, name: str = "the file", total: int | None = None
               ) -> tuple[list[Entry], bool]:
    """The outline entries of `data` (UTF-8, `total` lines when counted) in `language` → (entries,
    cut short)."""
    if total is None:
        total = _line_count(data)
    data = _lf_ended(data)
    if language == "asciidoc":
        from agentread.readers.asciidoc import headings

        return heading_entries(headings(data, name), total), False
    grammar = GRAMMARS[language]
    from tree_sitter import Language, Parser

    module = importlib.import_module(grammar.module)
    parser = Parser(Language(getattr(module, grammar.function)()))
    tree = _parse(parser, data)
    if language == "markdown":
        return heading_entries(list(_markdown_headings(tree.root_node)), total), False
    if language == "rst":
        return heading_entries(list(_rst_headings(tree.root_node)), total), False
    if grammar.declarations and tree.root_node.has_error and len(data) <= MAX_UNMACRO_BYTES:
        data, tree = _without_macros(parser, data, tree)
    entries: list[Entry] = []
    cut = _symbols(tree.root_node, grammar, entries)
    if grammar.conditionals:
        entries, cut = _branched(parser, data, tree, grammar, entries, cut)
    return entries, cut


def _without_macros(parser, data: bytes, tree) -> tuple[bytes, object]:
    """C or C++ `data` whose first parse, `tree`, has errors, and its parse, made again with the
    macros its declarations are wrapped in blanked (cmacros.py); the same where it names none."""
    from agentread.readers.cmacros import masked

    again = masked(data, tree, _keywords(parser.language))
    return (data, tree) if again is None else (again, _parse(parser, again))


def _branched(parser, data: bytes, tree, grammar: Grammar, entries: list[Entry], cut: bool
              ) -> tuple[list[Entry], bool]:
    """`entries`, the outline of `data` parsed as `tree`, each titled with the preprocessor
    branches it stands in (cconditions.py); where the parse has errors (of a file up to
    MAX_UNMACRO_BYTES), the outlines of each configuration of the branches, merged."""
    from agentread.readers import cconditions

    found = cconditions.branches(lambda text: _parse(parser, text), data)
    if tree.root_node.has_error and len(data) <= MAX_UNMACRO_BYTES and found and not cut:
        def outline(configuration: bytes) -> tuple[list[Entry], bool]:
            listed: list[Entry] = []
            return listed, _symbols(_parse(parser, configuration).root_node, grammar, listed)

        entries, cut = cconditions.reparsed(data, found, entries, outline)
    return cconditions.labelled(entries, found), cut


_KEYWORDS: dict[object, frozenset[str]] = {}


def _keywords(language) -> frozenset[str]:
    """The words a grammar knows as tokens of their own (`extern`, `__attribute__`, `noexcept`)."""
    if language not in _KEYWORDS:
        kinds = (language.node_kind_for_id(i) for i in range(language.node_kind_count)
                 if not language.node_kind_is_named(i) and language.node_kind_is_visible(i))
        _KEYWORDS[language] = frozenset(kind for kind in kinds if kind and re.fullmatch(r"[A-Za-z_]\w*", kind))
    return _KEYWORDS[language]


def _lf_ended(data: bytes) -> bytes:
    """`data` with each lone CR made an LF, the same length: the parsers end lines at LF alone and
    the read at a lone CR too, so their rows are then the read's lines."""
    return LONE_CR.sub(b"\n", data) if b"\r" in data else data


def _parse(parser, data: bytes):
    """The syntax tree of `data`. A large file is handed to the parser a block at a time with a
    progress callback, so that a cancelled read stops its parse (tree-sitter's C code cannot be
    interrupted otherwise); a small one whole, which parses faster."""
    if len(data) <= CANCELLABLE_PARSE_BYTES:
        return parser.parse(data)
    try:
        return parser.parse(lambda byte, _: data[byte:byte + PARSE_BLOCK_BYTES], progress_callback=lambda *_: stopped())
    except ValueError:  # "Parsing failed": stopped by the callback
        checkpoint()
        raise


def _symbols(root, grammar: Grammar, entries: list[Entry]) -> bool:
    """The symbols under `root` in document order, nested by the symbols around them; True when
    the walk stopped at MAX_OUTLINE_NODES."""
    stack: list[tuple[object, int]] = [(root, 0)]
    seen = 0
    while stack:
        node, level = stack.pop()
        seen += 1
        if seen % 10_000 == 0:
            checkpoint()
            if seen > MAX_OUTLINE_NODES:
                return True
        word = _declared(node) if node.type in grammar.declarations else grammar.symbols.get(node.type)
        name = _name(node) if word else None
        if name is not None:
            word = _marked(node, word)
        if node.type in grammar.bindings:
            word, name = _binding(node, *grammar.bindings[node.type])
        inner = level
        if name is not None:
            span = _with_wrappers(node)
            title = f"{word}{name}" if word.endswith(".") else f"{word} {name}"
            entries.append(lines_entry(level, title, span.start_point.row + 1, _last_row(span) + 1))
            # A typedef's struct (`typedef struct s {...} t;`) is listed beside it, not in it.
            inner = level if node.type == "type_definition" else level + 1
        stack.extend((child, inner) for child in reversed(node.named_children))
    return False


def _declared(node) -> str | None:
    """The word shown before a C or C++ declaration's name (_C_DECLARATIONS); None for one that is
    not listed."""
    kind = node.type
    if kind == "preproc_def":
        value, around = node.child_by_field_name("value"), node.parent
        guard = around is not None and around.type == "preproc_ifdef" and around.children[0].type == "#ifndef" \
            and _text(around.child_by_field_name("name")) == _text(node.child_by_field_name("name"))
        return "#define" if value is not None and value.text.strip() and not guard else None
    if kind == "preproc_function_def":
        return "#define"
    around = node.parent
    while around is not None:  # a declaration in a function's body is the function's own
        if around.type == "compound_statement":
            return None
        around = around.parent
    if kind == "function_definition":
        return "function"
    if kind == "type_definition":
        return "typedef"
    if kind == "alias_declaration":
        return "using"
    if _declares_function(node):
        return "function"
    extern = any(child.type == "storage_class_specifier" and child.text == b"extern" for child in node.children)
    return "extern" if kind == "declaration" and extern else None


def _declares_function(node) -> bool:
    """Whether a declaration declares a function (not a pointer to one, `int (*f)(void)`); one
    whose `;` is not written is the use of a macro (`__glibcxx_class_requires(_Tp, _Concept)`)."""
    kinds = [declarator.type for declarator in _declarators(node)]
    written = node.child_count > 0 and node.children[-1].type == ";" and not node.children[-1].is_missing
    return written and "function_declarator" in kinds and "parenthesized_declarator" not in kinds


def _name(node) -> str | None:
    """A symbol's name as the source writes it; None for a node that is not one (an anonymous
    struct, the use of a type)."""
    kind = node.type
    receiver = node.child_by_field_name("receiver") if kind == "method_declaration" else None
    if receiver is not None:  # Go: `(*B) String`, for methods of two types may share a name
        of = next((p.child_by_field_name("type") for p in receiver.named_children
                   if p.type == "parameter_declaration"), None)
        name = _text(node.child_by_field_name("name"))
        return name if of is None else f"({' '.join(_text(of).split())}) {name}"
    if kind == "impl_item":
        trait, of = node.child_by_field_name("trait"), node.child_by_field_name("type")
        return f"{_text(trait)} for {_text(of)}" if trait is not None and of is not None else _text(of)
    if kind in ("struct_specifier", "union_specifier", "enum_specifier", "class_specifier"):
        if node.child_by_field_name("body") is None:
            return None  # a use of the type, not its definition
    named = node.child_by_field_name("name")
    if named is not None:
        return _text(named)
    declarators = _declarators(node)  # C and C++ declarations: the name is inside the declarator
    named = declarators[-1] if declarators else None
    return _text(named) if named is not None and named.type in DECLARED_NAMES and named.text.strip() else None


# The node that names what a C or C++ declarator declares (tree-sitter's C grammar takes `ssize_t`
# and its kin for built-in types: `typedef __ssize_t ssize_t;`).
DECLARED_NAMES = ("identifier", "field_identifier", "type_identifier", "qualified_identifier", "destructor_name",
                  "operator_name", "template_function", "primitive_type")
# Declarators nest (`*(*f)(int)`) at most this deep before the name: deeper is read as none.
MAX_DECLARATOR_DEPTH = 16


def _declarators(node) -> list:
    """A C or C++ declaration's declarators from the outermost in, ending with the name's node."""
    found = []
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and len(found) < MAX_DECLARATOR_DEPTH:
        found.append(declarator)
        if declarator.type in DECLARED_NAMES:
            break
        # A pointer declarator holds the next one as a field; a C++ reference declarator as its
        # only named child.
        declarator = declarator.child_by_field_name("declarator") or next(
            (child for child in declarator.named_children
             if child.type.endswith("declarator") or child.type in DECLARED_NAMES), None)
    return found


def _marked(node, word: str) -> str:
    """`word` with what the definition says of itself before its name, as the source writes it:
    `async` (Python, JavaScript, TypeScript, C#), Rust's function modifiers (`async unsafe fn`), the
    `*` of a JavaScript generator method (`method*`, as `function*`)."""
    before = []
    for child in node.children:
        if child.type == "async" or (child.type == "modifier" and child.text == b"async"):
            before.append("async")
        elif child.type == "function_modifiers":
            before.append(" ".join(_text(child).split()))
        elif child.type == "*" and node.type == "method_definition":
            word += "*"
    return " ".join([*before, word])


def _binding(node, name_field: str | None, value_field: str) -> tuple[str | None, str | None]:
    """A JavaScript binding's word and name (`function`, `exports.createServer`); (None, None)
    where its value is no function, class or object holding one, or it is the key of an object
    that is not bound."""
    if node.type == "pair" and not _is_bound(node.parent):
        return None, None
    value = node.child_by_field_name(value_field)
    word = None if value is None else BINDING_VALUES.get(value.type)
    if value is not None and value.type == "object" and any(map(_is_function_member, value.named_children)):
        word = "object"
    if word is None:
        return None, None
    if word != "object":
        word = _marked(value, word)
    named = node.child_by_field_name(name_field) if name_field else None
    return word, "(default)" if named is None else " ".join(_text(named).split())


def _is_bound(value) -> bool:
    """Whether a node is the value of a JavaScript binding."""
    holder = value.parent
    fields = _JS_BINDINGS.get(holder.type) if holder is not None else None
    return fields is not None and holder.child_by_field_name(fields[1]) == value


def _is_function_member(member) -> bool:
    """Whether an object literal's member is a method or a key holding a function (not looked into
    further: an object nested a million deep is then looked at once a level)."""
    if member.type == "method_definition":
        return True
    value = member.child_by_field_name("value") if member.type == "pair" else None
    return value is not None and BINDING_VALUES.get(value.type, "").startswith("function")


def _text(node) -> str | None:
    return None if node is None else node.text.decode("utf-8", errors="replace")


def _with_wrappers(node):
    """The node with what the language wraps a definition in (decorators, a template clause,
    an export, the statement of an assignment)."""
    parent = node.parent
    while parent is not None and parent.type in ("decorated_definition", "template_declaration",
                                                 "export_statement", "expression_statement"):
        node, parent = parent, parent.parent
    return node


def _last_row(node) -> int:
    """The last line a node covers: one that ends at column 0 of a row ends on the row before."""
    end = node.end_point
    return end.row - 1 if end.column == 0 and end.row > node.start_point.row else end.row


def _markdown_headings(root) -> Iterator[Heading]:
    for node in _walk(root, ("atx_heading", "setext_heading")):
        marker = next((child.type for child in node.children if child.type.endswith(("_marker", "_underline"))), "")
        level = 1 if "h1" in marker else 2 if "setext" in marker else int(marker[5]) if marker[5:6].isdigit() else 1
        content = node.child_by_field_name("heading_content") or next(
            (child for child in node.named_children if child.type in ("inline", "paragraph")), None)
        title = (_text(content) or "").strip().rstrip("#").strip()
        yield level, f"{'#' * level} {title}", node.start_point.row + 1


def _rst_headings(root) -> Iterator[Heading]:
    """reStructuredText's levels are its adornment styles in the order the document first
    uses them."""
    styles: list[tuple[str, bool]] = []
    for section in _walk(root, ("section",)):
        children = section.children
        title = next((child for child in children if child.type == "title"), None)
        under = next((child for child in children if child.type == "adornment" and title is not None
                      and child.start_point.row > title.start_point.row), None)
        if title is None or under is None:
            continue
        style = (_text(under)[:1], children[0].type == "adornment" and children[0] is not under)
        if style not in styles:
            styles.append(style)
        yield styles.index(style) + 1, _text(title).strip(), title.start_point.row + 1 - style[1]


def _walk(root, types: tuple[str, ...]) -> Iterator:
    """Nodes of `types` in document order, not looked inside."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in types:
            yield node
        else:
            stack.extend(reversed(node.children))
