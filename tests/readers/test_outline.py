"""Outlines (`outline: true`) of every kind, checked against the files themselves: a symbol's line
range holds its name and ends where its block ends, a bookmark's page holds its title, a heading's
range starts at the heading."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentread.engine import Engine
from agentread.request import parse_request
from agentread.workspace import Workspace
from builders import code, markdown, notebook

REPO = Path(__file__).resolve().parents[2]
CODE = REPO / "tests" / "data" / "code"
OFFICE = REPO / "tests" / "data" / "office"
R_MANUAL = Path("/usr/share/R/doc/manual/fullrefman.pdf")

# An entry line: indentation, title, (where), then → and the arguments that read it.
ENTRY = re.compile(r"^(?P<indent> *)(?P<title>.*?)  \((?P<where>[^()]*)\)(?:  → (?P<args>.*))?$")
ARG = re.compile(r'(\w+)=("[^"]*"|\d+)')


def outline(engine: Engine, path, **params) -> dict:
    result = engine.read(parse_request({"path": str(path), "outline": True, **params})).to_json()
    assert not result["isError"], result
    return result


def entries(result: dict) -> list[dict]:
    """The entry lines of an outline reply, parsed."""
    out = []
    for line in result["content"][0]["text"].splitlines():
        match = ENTRY.match(line)
        if match and not line.startswith("["):
            args = {key: json.loads(value) for key, value in ARG.findall(match["args"] or "")}
            out.append({"level": len(match["indent"]) // 2, "title": match["title"], "where": match["where"],
                        "read": args})
    return out


@pytest.fixture
def engine() -> Engine:
    return Engine(Workspace([str(REPO)]))


# (file, names that must be among its symbols): the twelve languages, each a real file.
CODE_FILES = [
    ("python/agentread/engine.py", ["class Plan", "class Engine", "def plan", "def run"]),
    ("extension/scripts/bundle-python.mjs", ["function bundle", "function walk"]),
    ("extension/src/reads.ts", ["interface ReadEntry", "class ReadLog", "method record"]),
    ("tests/data/code/generics.go", ["type Int", "func Abs", "func PtrOf"]),
    ("tests/data/code/eval.rs", ["enum Val", "impl Val", "struct Eval", "fn as_u16"]),
    ("tests/data/code/test.java", ["class PlatformManagerImpl", "method getSingleton",
                                   "constructor PlatformManagerImpl"]),
    ("python/agentread/_scan.c", ["function count_line_ends", "function number_window"]),
    ("tests/data/code/namespace.cpp", ["namespace std::exprimental::inner", "class QualifiedName",
                                       "function local_name"]),
    ("tests/data/code/test.cs", ["namespace Diva.Core", "class OpenerTask", "struct ObjectInfo",
                                 "method ToString"]),
    ("tests/data/code/example.rb", ["module CodeRay", "class Set", "def initialize", "def self.[]"]),
    ("tests/data/code/test.php", ["class Zip", "function load_file", "class MagicClass"]),
    ("tests/data/code/ltmain.sh", ["function func_mktempdir", "function func_extract_archives"]),
    # functions bound to members, keys and fields; Go methods by their receivers
    ("tests/data/code/router.js", ["function Router.prototype.route", "function exports.createServer",
                                   "object module.exports.defaults", "function onError"]),
    ("tests/data/code/store.ts", ["class Store", "function onChange", "object handlers", "class (default)"]),
    ("tests/data/code/shapes.go", ["method (Circle) Area", "method (*Rect) Area", "method (*List[T]) Push"]),
]


def _block_ends(language_file: str, lines: list[str], first: int, last: int) -> bool:
    """Whether lines first..last (1-based) close a block as the language closes one."""
    end = lines[last - 1].rstrip()
    if language_file.endswith(".rb"):
        return end.endswith("end") or end.endswith("}")
    if language_file.endswith(".py"):
        indent = len(lines[first - 1]) - len(lines[first - 1].lstrip())
        after = next((line for line in lines[last:] if line.strip()), None)
        return bool(end) and (after is None or len(after) - len(after.lstrip()) <= indent)
    if first == last and language_file.endswith((".js", ".ts")):  # `exports.f = (a) => a * 2;`
        return end.endswith(("}", ";"))
    if language_file.endswith((".c", ".cpp", ".h")):  # a declaration ends at `;`, a macro where its line does
        return end.endswith(("}", "};", ";")) or (lines[first - 1].lstrip().startswith("#")
                                                   and not end.endswith("\\"))
    return end.endswith(("}", "};", "})", "});", "}\\", "},"))


@pytest.mark.parametrize("path,names", CODE_FILES, ids=[Path(p).name for p, _ in CODE_FILES])
def test_code_symbols_span_their_own_lines(engine: Engine, path: str, names: list[str]):
    result = outline(engine, REPO / path)
    found = entries(result)
    titles = [entry["title"] for entry in found]
    assert set(names) <= set(titles), titles
    lines = (REPO / path).read_text(encoding="utf-8", errors="replace").splitlines()
    assert result["totalLines"] == len(lines)
    parents: list[dict] = []
    for entry in found:
        first, limit = entry["read"]["offset"], entry["read"]["limit"]
        last = first + limit - 1
        assert entry["where"] in (f"lines {first}-{last}", f"line {first}")
        title = unbranched(entry["title"])
        name = re.split(r"::|\.| ", title.split(" ", 1)[1])[-1] or title.split(" ")[-1]
        name = name.strip("()")  # `class (default)`: the line says `export default`
        head = "\n".join(lines[first - 1:first - 1 + min(limit, 12)])
        assert name.split("<")[0] in head, (entry, head)
        assert _block_ends(path, lines, first, last), (entry, lines[last - 1])
        parents = [p for p in parents if p["level"] < entry["level"]]
        if parents:  # nested inside the symbol around it
            outer = parents[-1]["read"]
            assert outer["offset"] <= first and last <= outer["offset"] + outer["limit"] - 1, (entry, parents[-1])
        parents.append(entry)


def test_javascript_functions_bound_to_members_keys_and_fields_are_listed(engine: Engine, tmp_path: Path):
    found = [(e["level"], e["title"]) for e in entries(outline(engine, CODE / "router.js"))]
    assert found == [
        (0, "function Router"), (0, "function Router.prototype.use"), (0, "function Router.prototype.route"),
        (0, "function Router.prototype[method]"), (0, "function Router.prototype.handle"), (1, "function next"),
        (0, "function exports.createServer"), (0, "function module.exports.isRoute"),
        (0, "object module.exports.defaults"), (1, "function onError"), (1, "method notFound")]
    found = [(e["level"], e["title"]) for e in entries(outline(engine, CODE / "store.ts"))]
    assert found == [
        (0, "interface Item"), (0, "type Listener"), (0, "class Store"), (1, "function onChange"), (1, "method add"),
        (1, "function empty"), (0, "object handlers"), (1, "function log"), (1, "method ignore"),
        (0, "class (default)"), (1, "method run")]
    # a test framework's callbacks are bound to no name, nor the keys of an object passed to a call
    (tmp_path / "app.test.js").write_text(
        "describe('app', () => {\n  it('adds', () => {\n    expect(add(1, 2)).toBe(3);\n  });\n});\n"
        "module.exports = { add: function (a, b) {\n  return a + b;\n}, limit: 3 };\n"
        "export default function () {\n  return 1;\n}\n"
        "request({ onDone: function () {\n  done();\n} });\n")
    found = entries(outline(Engine(Workspace([str(tmp_path)])), tmp_path / "app.test.js"))
    assert [(e["level"], e["title"], e["where"]) for e in found] == [
        (0, "object module.exports", "lines 6-8"), (1, "function add", "lines 6-8"),
        (0, "function (default)", "lines 9-11")]


def test_async_definitions_are_named_async_as_written(tmp_path: Path, server):
    """CPython's own asyncio/tasks.py, then each language's async (and generator) markers."""
    import asyncio
    import shutil

    from rpc import text_of

    def titles(name: str) -> list[str]:
        return [entry["title"].strip() for entry in entries({"content": [{"text": text_of(
            server.read(path=name, outline=True))}]})]

    shutil.copy(Path(asyncio.__file__).parent / "tasks.py", tmp_path / "tasks.py")
    found = titles("tasks.py")
    assert {"async def wait", "async def wait_for", "async def sleep", "def ensure_future"} <= set(found)
    assert "def wait" not in found
    (tmp_path / "a.js").write_text(
        "async function f() {}\nasync function* g() {}\nclass A {\n  async m() {}\n  *gen() {}\n"
        "  static async *ag() {}\n}\nconst h = async () => 1;\nconst k = async function () {};\n")
    assert titles("a.js") == ["async function f", "async function* g", "class A", "async method m", "method* gen",
                              "async method* ag", "async function h", "async function k"]
    (tmp_path / "a.ts").write_text("class A { private async p(): Promise<void> {} }\n"
                                   "export async function f(): Promise<void> {}\n")
    assert titles("a.ts") == ["class A", "async method p", "async function f"]
    (tmp_path / "a.rs").write_text("async fn a() {}\npub async unsafe fn b() {}\nfn c() {}\n")
    assert titles("a.rs") == ["async fn a", "async unsafe fn b", "fn c"]
    (tmp_path / "a.cs").write_text("class A {\n  public async Task M() {}\n  static void N() {}\n}\n")
    assert titles("a.cs") == ["class A", "async method M", "method N"]


def test_a_one_line_file_is_counted_as_one_line(tmp_path: Path, server):
    from rpc import text_of

    (tmp_path / "one.py").write_text("def f(): pass\n")
    assert text_of(server.read(path="one.py", outline=True)).startswith(
        "[Outline of one.py: 1 symbol in 1 line (python).")
    (tmp_path / "none.py").write_text("x = 1\n")
    assert text_of(server.read(path="none.py", outline=True)).startswith("[none.py (python, 1 line) has no symbols")
    (tmp_path / "plain.txt").write_text("just one\n")
    assert "It has 1 line: read it" in text_of(server.read(path="plain.txt", outline=True))


def test_objects_nested_deep_are_outlined_each_once(tmp_path: Path):
    depth = 20_000  # far past Python's recursion limit
    (tmp_path / "deep.js").write_text("module.exports = " + "{ a: " * depth + "function () {}" + " }" * depth + ";\n")
    found = entries(outline(Engine(Workspace([str(tmp_path)])), tmp_path / "deep.js"))
    assert [(e["level"], e["title"]) for e in found] == [(0, "object a"), (1, "function a")]


def test_go_methods_are_named_with_their_receivers(engine: Engine):
    found = [e["title"] for e in entries(outline(engine, CODE / "shapes.go"))]
    assert found == [
        "type Shape", "type Circle", "type Rect", "method (Circle) Area", "method (Circle) String",
        "method (*Rect) Area", "method (*Rect) String", "method (*Rect) Scale", "type List", "method (*List[T]) Push",
        "method (List[T]) Kind", "func Total"]


def test_an_entry_reads_exactly_its_symbol(engine: Engine):
    found = {e["title"]: e for e in entries(outline(engine, CODE / "eval.rs"))}
    read = engine.read(parse_request({"path": str(CODE / "eval.rs"), **found["struct Eval"]["read"]})).text()
    shown = [line.split("\t", 1)[1] for line in read.splitlines() if "\t" in line]
    assert len(shown) == found["struct Eval"]["read"]["limit"]
    assert shown[0].lstrip().startswith(("pub struct Eval", "struct Eval")) and shown[-1] == "}"


# Files of several languages, written again with other line ends: the read ends a line at CRLF, LF
# and a lone CR alike, and so must the outline's numbers.
LINE_END_FILES = ["python/agentread/engine.py", "extension/src/reads.ts", "tests/data/code/eval.rs",
                  "tests/data/code/generics.go", "tests/data/code/router.js", "tests/data/code/shapes.go",
                  "python/agentread/_scan.c", "tests/data/code/namespace.cpp",
                  "docs/CONTRACT.md", "tests/data/code/lexerdevelopment.rst",
                  "tests/data/code/asciidoctor-README.adoc"]
LINE_ENDS = {"cr": ["\r"], "crlf": ["\r\n"], "mixed": ["\n", "\r", "\r\n", "\n", "\n"]}


@pytest.mark.parametrize("ends", LINE_ENDS, ids=list(LINE_ENDS))
@pytest.mark.parametrize("path", LINE_END_FILES, ids=[Path(p).name for p in LINE_END_FILES])
def test_outline_numbers_lines_as_the_read_does_whatever_ends_them(tmp_path: Path, path: str, ends: str):
    if path.endswith(".adoc") and not _has_asciidoctor():
        pytest.skip("Asciidoctor is not installed (apt install asciidoctor)")
    lines = re.split(r"\r\n|\r|\n", (REPO / path).read_text(encoding="utf-8"))[:-1]
    cycle = LINE_ENDS[ends]
    name = "file" + Path(path).suffix
    (tmp_path / "lf").mkdir()
    (tmp_path / "lf" / name).write_text("\n".join(lines) + "\n", encoding="utf-8", newline="")
    (tmp_path / name).write_text("".join(line + cycle[n % len(cycle)] for n, line in enumerate(lines)),
                                 encoding="utf-8", newline="")
    engine = Engine(Workspace([str(tmp_path)]))
    found = entries(outline(engine, tmp_path / name, limit=2000))
    assert len(found) >= 4 and found == entries(outline(engine, tmp_path / "lf" / name, limit=2000))
    for entry in found:
        read = engine.read(parse_request({"path": name, **entry["read"]})).to_json()
        assert read["startLine"] == entry["read"]["offset"]
        shown = [line.split("\t", 1)[1] for line in read["content"][0]["text"].splitlines() if "\t" in line]
        assert len(shown) == entry["read"]["limit"] or read["truncated"], entry  # a long section: the reply's cap
        if path.endswith((".md", ".rst", ".adoc")):  # a heading: its own line
            assert entry["title"] in shown[:2], (entry, shown[:2])
        else:
            symbol = re.split(r"::|\.| ", unbranched(entry["title"]).split(" ", 1)[1])[-1].split("<")[0]
            assert symbol in "\n".join(shown[:12]), (entry, shown[:12])


def unbranched(title: str) -> str:
    """A C or C++ symbol's title without the preprocessor branches it stands in."""
    return re.sub(r" \[(?:…|#).*\]$", "", title)


def _has_asciidoctor() -> bool:
    import shutil
    import subprocess

    return shutil.which("ruby") is not None and subprocess.run(
        ["ruby", "-e", "require 'asciidoctor'"], capture_output=True).returncode == 0


# A C header as glibc and zlib write theirs: its declarations wrapped in macros the parser does not
# expand (the real headers are the differential suite's, against ctags).
MACRO_HEADER = """\
#ifndef _DEMO_H
#define _DEMO_H 1
#define __need_size_t
#include <stddef.h>
#define DEMO_MAX 64
#define demo_min(a, b) ((a) < (b) ? (a) : (b))
__BEGIN_DECLS
typedef struct demo_s {
  int n;
  int (*callback)(int);
} demo_t;
extern int demo_count;
extern int demo_open (const char *__restrict __path, int __flags)
     __THROW __nonnull ((1)) __wur;
ZEXTERN int ZEXPORT demo_read OF((demo_t *d, void *buf, unsigned len));
ZEXTERN const char * ZEXPORT demo_version OF((void));
extern void demo_close (demo_t *__d) __THROW;
static inline int demo_twice (int x) {
  extern int demo_hidden (void);
  if (x) DEMO_LOG (x);
  return 2 * x;
}
__END_DECLS
#endif
"""

# A C++ header as libstdc++ writes its: namespaces opened and closed by macros, methods marked by
# them before and after.
MACRO_CPP_HEADER = """\
namespace std _GLIBCXX_VISIBILITY(default)
{
_GLIBCXX_BEGIN_NAMESPACE_VERSION
_GLIBCXX_BEGIN_NAMESPACE_CONTAINER
  template<typename _Tp>
    struct _Base
    {
      typedef _Tp value_type;
      _GLIBCXX20_CONSTEXPR
      _Base() _GLIBCXX_NOEXCEPT { }
      _GLIBCXX_NODISCARD bool
      empty() const _GLIBCXX_NOEXCEPT
      { return true; }
      void swap(_Base& __x) _GLIBCXX_NOEXCEPT;
      __glibcxx_class_requires(_Tp, _SGIAssignableConcept)
      _GLIBCXX_ABI_TAG_CXX11
      iterator
      erase(iterator __position);
    };
_GLIBCXX_END_NAMESPACE_CONTAINER
_GLIBCXX_END_NAMESPACE_VERSION
}
namespace __gnu_cxx _GLIBCXX_VISIBILITY(default)
{
  template<typename _Tp>
    class _GLIBCXX_VISIBILITY(default) __pool_base
    { };
}
"""


def test_a_headers_declarations_wrapped_in_macros_are_each_listed(tmp_path: Path, server):
    """Prototypes, typedefs, `extern` variables and macros with a value or parameters, each on its
    own lines whatever macros wrap it; not an empty flag, an include guard, a function pointer
    field, a declaration in a function's body, nor the use of a macro."""
    from rpc import text_of

    def listed(name: str) -> list[tuple[int, str, str]]:
        text = text_of(server.read(path=name, outline=True))
        return [(e["level"], e["title"], e["where"]) for e in entries({"content": [{"text": text}]})]

    (tmp_path / "demo.h").write_text(MACRO_HEADER)
    assert listed("demo.h") == [
        (0, "#define DEMO_MAX", "line 5"), (0, "#define demo_min", "line 6"), (0, "typedef demo_t", "lines 8-11"),
        (0, "struct demo_s", "lines 8-11"), (0, "extern demo_count", "line 12"),
        (0, "function demo_open", "lines 13-14"), (0, "function demo_read", "line 15"),
        (0, "function demo_version", "line 16"), (0, "function demo_close", "line 17"),
        (0, "function demo_twice", "lines 18-22")]
    (tmp_path / "demo.hpp").write_text(MACRO_CPP_HEADER)
    assert listed("demo.hpp") == [
        (0, "namespace std", "lines 1-22"), (1, "struct _Base", "lines 5-19"), (2, "typedef value_type", "line 8"),
        (2, "function _Base", "line 10"), (2, "function empty", "lines 11-13"), (2, "function swap", "line 14"),
        (2, "function erase", "lines 17-18"), (0, "namespace __gnu_cxx", "lines 23-28"),
        (1, "class __pool_base", "lines 25-27")]


def test_a_header_of_unpaired_parentheses_after_its_macros_is_outlined(tmp_path: Path, server):
    """Macros are looked for in a file whose parentheses never close: the declaration before them
    is listed."""
    from rpc import text_of

    (tmp_path / "open.h").write_bytes(b"extern int f (void) __THROW;\n" + b"FOO (" * 20_000 + b"\n")
    text = text_of(server.read(path="open.h", outline=True))
    assert [e["title"] for e in entries({"content": [{"text": text}]})][:1] == ["function f"], text[:300]


def test_a_header_named_h_is_outlined_as_cpp_where_it_holds_cpp_and_as_c_otherwise(tmp_path: Path):
    """`.h` is C's extension and C++'s: the same bytes named `.h` outline as they do named `.cpp`
    or `.c`, by what the header holds."""
    sources = {"namespace": CODE / "namespace.cpp", "functions": CODE / "functions.cpp",
               "scan": REPO / "python" / "agentread" / "_scan.c"}
    (tmp_path / "w.h").write_text("class W {\npublic:\n  int f() { return 1; }\n};\nnamespace n { void g() {} }\n")
    for stem, source in sources.items():
        (tmp_path / f"{stem}.h").write_bytes(source.read_bytes())
        (tmp_path / f"{stem}{source.suffix}").write_bytes(source.read_bytes())
    engine = Engine(Workspace([str(tmp_path)]))
    for stem, source in sources.items():
        as_h, as_named = outline(engine, tmp_path / f"{stem}.h"), outline(engine, tmp_path / f"{stem}{source.suffix}")
        assert entries(as_h) == entries(as_named) and entries(as_h)
        language = "(cpp)" if source.suffix == ".cpp" else "(c)"
        assert language in as_h["content"][0]["text"].splitlines()[0]
    found = entries(outline(engine, tmp_path / "w.h"))
    assert [(e["level"], e["title"], e["read"]["offset"]) for e in found] == [
        (0, "class W", 1), (1, "function f", 3), (0, "namespace n", 5), (1, "function g", 5)]


def test_markdown_headings_span_to_the_next_of_their_level(engine: Engine):
    path = REPO / "docs" / "CONTRACT.md"
    lines = path.read_text(encoding="utf-8").splitlines()
    found = entries(outline(engine, path))
    headings = [n for n, line in enumerate(lines, 1) if re.match(r"#{1,6} ", line)]
    assert [e["read"]["offset"] for e in found] == headings
    for entry, following in zip(found, found[1:] + [None]):
        first, last = entry["read"]["offset"], entry["read"]["offset"] + entry["read"]["limit"] - 1
        assert lines[first - 1] == entry["title"]
        if following is not None and following["level"] <= entry["level"]:
            assert last == following["read"]["offset"] - 1


def test_restructuredtext_sections_by_their_adornments(engine: Engine):
    path = CODE / "lexerdevelopment.rst"
    lines = path.read_text(encoding="utf-8").splitlines()
    found = entries(outline(engine, path))
    assert found[0]["level"] == 0 and all(e["level"] == 1 for e in found[1:])
    for entry in found:  # an overlined title starts at its overline
        first = entry["read"]["offset"]
        title_line = first if lines[first - 1].strip() == entry["title"] else first + 1
        assert lines[title_line - 1].strip() == entry["title"]
        assert set(lines[title_line].strip()) == {lines[title_line].strip()[0]}  # its underline
    assert "RegexLexer" in [e["title"] for e in found]


def test_plain_text_says_it_has_no_outline_and_counts_its_lines(engine: Engine, tmp_path: Path):
    (tmp_path / "notes.txt").write_text("a\nb\nc\n")
    result = Engine(Workspace([str(tmp_path)])).read(parse_request({"path": "notes.txt", "outline": True}))
    assert not result.is_error and "has no outline" in result.text() and "3 lines" in result.text()
    assert result.total_lines == 3 and not result.truncated


def test_forty_thousand_symbols_page_with_next(tmp_path: Path):
    (tmp_path / "big.py").write_text("".join(f"def f{n}():\n    return {n}\n\n" for n in range(40_000)))
    engine = Engine(Workspace([str(tmp_path)]))
    seen: list[str] = []
    params: dict = {"path": "big.py", "outline": True, "maxBytes": 8000}
    while True:
        result = engine.read(parse_request(params)).to_json()
        assert result["truncated"] == ("next" in result)
        assert sum(len(p["text"].encode()) for p in result["content"]) <= 8000
        seen += [e["title"] for e in entries(result)]
        if "next" not in result:
            break
        params = {"path": "big.py", "maxBytes": 8000, **result["next"]}
    assert seen == [f"def f{n}" for n in range(40_000)]


def test_first_read_of_a_long_file_shows_the_outline_of_the_rest_above_how_to_continue(tmp_path: Path):
    (tmp_path / "long.py").write_text("".join(f"def f{n}():\n    return {n}\n\n" for n in range(3000)))
    engine = Engine(Workspace([str(tmp_path)]))
    result = engine.read(parse_request({"path": "long.py", "maxBytes": 8000}))
    text = result.text()
    assert result.truncated and result.next == {"offset": result.end_line + 1}
    assert result.text_bytes() <= 8000
    rest = [e for e in entries({"content": [{"text": result.content[-1].text}]})]
    assert rest and rest[0]["read"]["offset"] > result.end_line
    assert f"def f{(rest[0]['read']['offset'] - 1) // 3}" == rest[0]["title"]
    *_, more, closing = text.splitlines()
    assert "outline=true offset=" in more
    assert closing.startswith("[Showing lines ") and closing.endswith(f"offset={result.end_line + 1} to continue.]")
    # a read with a window is the window alone
    assert "Outline of the rest" not in engine.read(parse_request({"path": "long.py", "limit": 50})).text()


def test_word_headings_with_the_lines_that_read_them(tmp_path: Path):
    import docx

    document = docx.Document()
    document.add_heading("Report", level=1)
    document.add_paragraph("Opening words.")
    document.add_heading("Method", level=2)
    document.add_paragraph("How it was done.")
    document.add_heading("Results", level=1)
    document.add_paragraph("What came out.")
    document.save(tmp_path / "report.docx")
    engine = Engine(Workspace([str(tmp_path)]))
    found = entries(outline(engine, "report.docx"))
    assert [(e["level"], e["title"]) for e in found] == [(0, "# Report"), (1, "## Method"), (0, "# Results")]
    for entry in found:
        shown = engine.read(parse_request({"path": "report.docx", **entry["read"]})).text().splitlines()
        assert shown[0].split("\t", 1)[1] == entry["title"]
    whole = engine.read(parse_request({"path": "report.docx"})).total_lines
    assert found[-1]["read"]["offset"] + found[-1]["read"]["limit"] - 1 == whole


def test_word_headings_by_outline_level_own_or_inherited_through_based_on(tmp_path: Path):
    """Word's navigation pane goes by outline level: the paragraph's own, else its style's, else
    the style's it is based on; Heading N and Title name their level where they state none."""
    import docx
    from docx.enum.style import WD_STYLE_TYPE
    from lxml import etree

    w = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"

    def outline_level(element, value: int) -> None:
        properties = element.find(w + "pPr")
        if properties is None:
            properties = etree.SubElement(element, w + "pPr")
        etree.SubElement(properties, w + "outlineLvl").set(w + "val", str(value))

    document = docx.Document()
    styles = document.styles
    chapter = styles.add_style("MyChapter", WD_STYLE_TYPE.PARAGRAPH)
    chapter.base_style = styles["Heading 1"]
    part = styles.add_style("MyPart", WD_STYLE_TYPE.PARAGRAPH)
    part.base_style = chapter  # two steps from Heading 1
    corporate = styles.add_style("Corp Title", WD_STYLE_TYPE.PARAGRAPH)
    outline_level(corporate.element, 0)
    loop_a, loop_b = (styles.add_style(name, WD_STYLE_TYPE.PARAGRAPH) for name in ("Loop A", "Loop B"))
    loop_a.base_style, loop_b.base_style = loop_b, loop_a
    body = document.element.body

    document.add_paragraph("Brief", style="Title")
    document.add_paragraph("Chapter by style", style="MyChapter")
    document.add_paragraph("Plain words.")
    document.add_paragraph("Direct level two")
    outline_level(body.findall(w + "p")[-1], 1)
    document.add_paragraph("Corporate heading", style="Corp Title")
    document.add_paragraph("A part", style="MyPart")
    document.add_paragraph("Body text in a heading style", style="Heading 1")
    outline_level(body.findall(w + "p")[-1], 9)
    document.add_paragraph("Real Heading 2", style="Heading 2")
    document.add_paragraph("In a loop of styles", style="Loop A")
    document.save(tmp_path / "styles.docx")
    engine = Engine(Workspace([str(tmp_path)]))
    found = entries(outline(engine, "styles.docx"))
    assert [(e["level"], e["title"]) for e in found] == [
        (0, "# Brief"), (0, "# Chapter by style"), (1, "## Direct level two"), (0, "# Corporate heading"),
        (0, "# A part"), (1, "## Real Heading 2")]
    for entry in found:
        shown = engine.read(parse_request({"path": "styles.docx", **entry["read"]})).text().splitlines()
        assert shown[0].split("\t", 1)[1] == entry["title"]
    whole = engine.read(parse_request({"path": "styles.docx"})).text().splitlines()
    marked = [line.split("\t", 1)[1] for line in whole if "\t" in line and line.split("\t", 1)[1].startswith("#")]
    assert marked == [e["title"] for e in found]  # the read marks exactly the outline's headings


def test_powerpoint_slide_titles(tmp_path: Path):
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    for title in ("Plan", "Budget"):
        deck.slides.add_slide(deck.slide_layouts[1]).shapes.title.text = title
    untitled = deck.slides.add_slide(deck.slide_layouts[6])
    untitled.shapes.add_textbox(Inches(1), Inches(1), Inches(3), Inches(1)).text_frame.text = "Questions?"
    deck.save(tmp_path / "deck.pptx")
    engine = Engine(Workspace([str(tmp_path)]))
    found = entries(outline(engine, "deck.pptx"))
    assert [(e["title"], e["read"]) for e in found] == [
        ("Plan", {"pages": "1"}), ("Budget", {"pages": "2"}), ("(no title) Questions?", {"pages": "3"})]
    assert "# Budget" in engine.read(parse_request({"path": "deck.pptx", **found[1]["read"]})).text()


def test_excel_sheets_with_used_ranges_and_header_rows(engine: Engine):
    import openpyxl
    from openpyxl.utils import get_column_letter

    path = OFFICE / "datasets.xlsx"
    book = openpyxl.load_workbook(path, read_only=True)  # the library's own reckoning of each sheet's cells
    found = entries(outline(engine, path))
    assert len(found) == len(book.worksheets)
    for number, (entry, sheet) in enumerate(zip(found, book.worksheets), 1):
        sheet.reset_dimensions()  # the declared extent is wrong in this file (A1): every row is read
        rows = [(n, row) for n, row in enumerate(sheet.iter_rows(values_only=True), 1)
                if any(v is not None for v in row)]
        right = max(max(i for i, v in enumerate(row, 1) if v is not None) for _, row in rows)
        assert entry["title"] == f'Sheet {number} "{sheet.title}"' and entry["read"] == {"pages": str(number)}
        assert entry["where"].startswith(f"used range A{rows[0][0]}:{get_column_letter(right)}{rows[-1][0]};")
        header = rows[0][1]
        assert f"header row {rows[0][0]}: A={header[0]}, B={header[1]}" in entry["where"]


def test_notebook_outline_true_is_cells_outline(tmp_path: Path):
    (tmp_path / "n.ipynb").write_bytes(notebook(markdown("# Title"), code("x = 1"), code("print(x)")))
    engine = Engine(Workspace([str(tmp_path)]))
    by_flag = engine.read(parse_request({"path": "n.ipynb", "outline": True}))
    by_cells = engine.read(parse_request({"path": "n.ipynb", "cells": "outline"}))
    assert by_flag.text() == by_cells.text() and by_flag.total_cells == 3


def test_directory_outline_is_its_listing(engine: Engine):
    assert engine.read(parse_request({"path": "tests/data/code", "outline": True})).text() == \
        engine.read(parse_request({"path": "tests/data/code"})).text()


def test_an_image_has_no_outline(tmp_path: Path):
    from PIL import Image

    Image.new("RGB", (8, 8)).save(tmp_path / "a.png")
    result = Engine(Workspace([str(tmp_path)])).read(parse_request({"path": "a.png", "outline": True}))
    assert result.is_error and result.error.code == "no_outline" and "without outline=true" in result.text()


# PDFs: each bookmark's page is checked by reading it and finding the bookmark's title there.

def _words(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _titles_on_their_pages(engine: Engine, path: Path, found: list[dict]) -> float:
    """The share of the bookmarks `found` whose title is printed on the page their arguments read
    first (a document may point a bookmark at the page before its heading, or title it
    otherwise)."""
    hits = 0
    for entry in found:
        first = entry["read"]["pages"].split("-")[0]
        page = engine.read(parse_request({"path": str(path), "pages": first})).text()
        hits += _words(entry["title"]) in _words(page)
    return hits / len(found)


def _pypdf_pages(path: Path) -> list[tuple[str, int]]:
    """Each bookmark's title and 1-based page as pypdf, a second PDF parser, finds them."""
    from pypdf import PdfReader

    reader = PdfReader(path)

    def walk(items):
        for item in items:
            if isinstance(item, list):
                yield from walk(item)
            else:
                yield item.title, reader.get_destination_page_number(item) + 1
    return list(walk(reader.outline))


def test_pdf_bookmarks_land_on_their_pages(corpus: Path, expectations: dict):
    engine = Engine(Workspace([str(corpus)]))
    found = entries(outline(engine, corpus / "pdf" / "GeoTopo-komprimiert.pdf"))
    assert _titles_on_their_pages(engine, corpus / "pdf" / "GeoTopo-komprimiert.pdf", found) >= 0.9
    assert [(e["title"], int(e["read"]["pages"].split("-")[0])) for e in found] == \
        _pypdf_pages(corpus / "pdf" / "GeoTopo-komprimiert.pdf")
    assert len(found) >= 30 and {e["level"] for e in found} == {0, 1, 2}
    # the labels are the document's own (pypdf reads them independently of PDFium)
    from pypdf import PdfReader

    labels = PdfReader(corpus / "pdf" / "GeoTopo-komprimiert.pdf").page_labels
    for entry in found:
        page = int(entry["read"]["pages"].split("-")[0])
        if labels[page - 1] != str(page):
            assert entry["where"].endswith(f"labelled {labels[page - 1]}")
    assert outline(engine, corpus / "pdf" / "GeoTopo-komprimiert.pdf")["totalPages"] == \
        expectations["pdf/GeoTopo-komprimiert.pdf"]["pages"]


def test_a_pdf_without_bookmarks_says_so_with_its_page_count(corpus: Path, expectations: dict):
    engine = Engine(Workspace([str(corpus)]))
    result = outline(engine, corpus / "pdf" / "pdflatex-4-pages.pdf")
    pages = expectations["pdf/pdflatex-4-pages.pdf"]["pages"]
    assert "has no bookmarks" in result["content"][0]["text"] and f"{pages} pages" in result["content"][0]["text"]
    assert result["totalPages"] == pages and not result["truncated"]


@pytest.mark.skipif(not R_MANUAL.is_file(), reason="the R reference manual (Debian's r-doc-pdf) is not installed")
def test_the_2415_page_manual_pages_its_outline_and_every_tenth_bookmark_lands(tmp_path: Path):
    engine = Engine(Workspace([str(R_MANUAL.parent)]))
    found: list[dict] = []
    params: dict = {"path": str(R_MANUAL), "outline": True}
    while True:
        result = engine.read(parse_request(params)).to_json()
        assert result["totalPages"] == 2415
        found += entries(result)
        if "next" not in result:
            break
        params = {"path": str(R_MANUAL), **result["next"]}
    assert [(e["title"], int(e["read"]["pages"].split("-")[0])) for e in found] == _pypdf_pages(R_MANUAL)
    assert _titles_on_their_pages(engine, R_MANUAL, found[::10]) >= 0.9


def test_a_cancelled_read_stops_a_large_files_parse():
    import threading

    from agentread.cancel import Cancelled, run_cancellable
    from agentread.readers.structure import CANCELLABLE_PARSE_BYTES, entries_of

    source = "".join(f"def f{n}():\n    return {n}\n\n" for n in range(CANCELLABLE_PARSE_BYTES // 20)).encode()
    going, cancelled = threading.Event(), threading.Event()
    assert len(run_cancellable(going, entries_of, source, "python")[0]) == CANCELLABLE_PARSE_BYTES // 20
    cancelled.set()
    with pytest.raises(Cancelled):
        run_cancellable(cancelled, entries_of, source, "python")


def test_a_text_file_over_the_outline_limit_is_refused_with_what_to_do(tmp_path: Path):
    from agentread.readers.structure import MAX_OUTLINE_FILE_BYTES

    (tmp_path / "huge.py").write_bytes(b"# a comment\n" * (MAX_OUTLINE_FILE_BYTES // 12 + 1))
    result = Engine(Workspace([str(tmp_path)])).read(parse_request({"path": "huge.py", "outline": True}))
    assert result.error.code == "file_too_large" and "offset and limit" in result.text()


def test_the_pypdf_fallback_lists_the_same_bookmarks_as_pdfium(corpus: Path):
    """A PDF only pypdf opens is outlined by pypdf's outline and page-label API: on a file both
    open, it gives what PDFium gives."""
    from pypdf import PdfReader

    from agentread.readers.pdf import _Document, _Pypdf
    from agentread.readers.pdf.outline import _bookmarks, _entries

    path = corpus / "pdf" / "GeoTopo-komprimiert.pdf"
    doc = _Document(_Pypdf(PdfReader(path)), path.stat().st_size)
    by_pypdf = [(e.level, e.title, e.where, e.read) for e in _entries(list(_bookmarks(doc)), doc.labels(), doc.total)]
    by_pdfium = [(e["level"], e["title"], e["where"], e["read"])
                 for e in entries(outline(Engine(Workspace([str(corpus)])), path))]
    assert by_pypdf == by_pdfium


def test_a_hostile_pdf_outline_is_listed_once_to_its_depth_limit(tmp_path: Path):
    """Bookmarks that loop back (a child that is its parent, a sibling chain back to its start)
    are listed once; nesting past MAX_OUTLINE_DEPTH is left out, and bookmarks past the count
    asked for; a title longer than the name buffer is read whole, and half a surrogate pair shows
    as U+FFFD."""
    from agentread.outline import MAX_INDENT_LEVELS
    from agentread.readers.pdf.outline import MAX_OUTLINE_DEPTH
    from agentread.readers.pdf.pdfium import LOCK, NAME_BUFFER_BYTES, Document
    from builders import pdf_of

    depth = MAX_OUTLINE_DEPTH + 4
    long_title = "x" * NAME_BUFFER_BYTES * 2
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R /Outlines 10 0 R >>",
        2: b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
        3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>",
        4: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>",
        10: b"<< /Type /Outlines /First 11 0 R /Last 12 0 R >>",
        # its own first child, and the chain of siblings runs 11 → 12 → 13 → 11
        11: b"<< /Title (Loop) /Parent 10 0 R /Dest [4 0 R /Fit] /First 11 0 R /Next 12 0 R >>",
        12: b"<< /Title <FEFFD8000041> /Parent 10 0 R /Dest [3 0 R /Fit] /First 100 0 R /Next 13 0 R >>",
        13: b"<< /Title (%s) /Parent 10 0 R /Dest [4 0 R /Fit] /Next 11 0 R >>" % long_title.encode(),
    }
    for level in range(1, depth):  # 100 is at level 1, each the only child of the one before
        child = b" /First %d 0 R" % (100 + level) if level < depth - 1 else b""
        objects[99 + level] = b"<< /Title (Level %d) /Dest [3 0 R /Fit]%s >>" % (level, child)
    (tmp_path / "hostile.pdf").write_bytes(pdf_of(objects))
    with LOCK:
        document = Document(data=pdf_of(objects))
        listed = list(document.bookmarks(MAX_OUTLINE_DEPTH, 1000, 1000))
        assert len(list(document.bookmarks(MAX_OUTLINE_DEPTH, 3, 1000))) == 3
    assert listed == [(0, "Loop", 2), (0, "\ufffdA", 1),
                      *[(level, f"Level {level}", 1) for level in range(1, MAX_OUTLINE_DEPTH)], (0, long_title, 2)]
    found = entries(outline(Engine(Workspace([str(tmp_path)])), tmp_path / "hostile.pdf", limit=100))
    assert [(e["level"], e["title"][:20]) for e in found] == [
        (min(level, MAX_INDENT_LEVELS), title[:20]) for level, title, _ in listed]


def test_a_find_hit_in_a_labelled_pdf_names_the_pages_label_as_its_outline_does(corpus: Path):
    """A page the document prints another number on is cited by both: the hit's page is the one a
    read takes, its label the one a reader of the printed book looks for."""
    from pypdf import PdfReader

    path = corpus / "pdf" / "GeoTopo-komprimiert.pdf"
    engine = Engine(Workspace([str(corpus)]))
    labels = PdfReader(path).page_labels
    result = engine.read(parse_request({"path": str(path), "find": "Kompaktheit"})).to_json()
    hits = result["shown"]["hits"]
    assert hits and all(hit["label"] == labels[hit["page"] - 1] for hit in hits)
    first = hits[0]
    assert f"page {first['page']} (labelled {first['label']}), line {first['line']}" in result["content"][0]["text"]
    unlabelled = engine.read(parse_request({"path": str(corpus / "pdf" / "pdflatex-4-pages.pdf"), "find": "e"}))
    assert unlabelled.shown["hits"] and all("label" not in hit for hit in unlabelled.shown["hits"])


def test_page_labels_longer_than_a_page_number_is_written_are_dropped(tmp_path: Path):
    """A hostile file's labels of megabytes would fill every hit's citation and the worker's memory:
    a label longer than the name buffer is none, and the page goes by its number."""
    from agentread.readers.pdf.pdfium import NAME_BUFFER_BYTES
    from builders import build_pdf

    prefix = b"L" * NAME_BUFFER_BYTES * 50
    labelled = b"/PageLabels << /Nums [0 << /S /r >> 2 << /S /D /P (" + prefix + b") >>] >>"
    (tmp_path / "long.pdf").write_bytes(build_pdf([f"needle {n}" for n in range(1, 21)], catalog=labelled))
    engine = Engine(Workspace([str(tmp_path)]))
    result = engine.read(parse_request({"path": "long.pdf", "find": "needle", "maxBytes": 4000})).to_json()
    hits = result["shown"]["hits"]
    assert [hit["page"] for hit in hits] == list(range(1, 21))
    assert [hit.get("label") for hit in hits[:3]] == ["i", "ii", None]
    assert "L" * 100 not in result["content"][0]["text"]


def test_a_run_of_page_labels_holding_hyphens_reads_apart(tmp_path: Path, server):
    """Labels such as "T-1" joined by a hyphen would read "T-1-T-4": such a run says "to"."""
    from builders import build_pdf
    from rpc import text_of

    labelled = b"/PageLabels << /Nums [0 << /S /r >> 2 << /S /D /P (T-) >>] >>"
    (tmp_path / "labels.pdf").write_bytes(build_pdf([f"page {n}" for n in range(1, 7)], catalog=labelled))
    header = text_of(server.read(path="labels.pdf", outline=True)).split("\n")[0]
    assert "Page labels (the numbers the document prints): pages 1-2 labelled i-ii; pages 3-6 labelled T-1 to T-4." \
        in header


def test_a_word_heading_level_is_inherited_down_a_long_chain_of_styles(tmp_path: Path):
    """Each style based on the one before, the first on Heading 2: every paragraph is a level-2
    heading, the level found once for the whole chain."""
    import docx
    from docx.enum.style import WD_STYLE_TYPE

    document = docx.Document()
    base = document.styles["Heading 2"]
    for n in range(300):
        style = document.styles.add_style(f"Chain {n}", WD_STYLE_TYPE.PARAGRAPH)
        style.base_style = base
        base = style
        document.add_paragraph(f"Part {n}", style=style)
    document.add_paragraph("body text")
    document.save(tmp_path / "chain.docx")
    found = entries(outline(Engine(Workspace([str(tmp_path)])), tmp_path / "chain.docx", limit=1000))
    assert [(e["level"], e["title"]) for e in found] == [(1, f"## Part {n}") for n in range(300)]


def test_a_page_label_holding_a_carriage_return_ends_no_line(tmp_path: Path, server):
    """A label's control characters are U+FFFD, in the outline's header and a find's citation: a
    lone CR there would end a line of the reply."""
    from builders import build_pdf
    from rpc import text_of

    labelled = b"/PageLabels << /Nums [0 << /S /D /P (A\\rB-) >>] >>"
    (tmp_path / "labels.pdf").write_bytes(build_pdf([f"page {n}" for n in range(1, 4)], catalog=labelled))
    header = text_of(server.read(path="labels.pdf", outline=True)).split("\n")[0]
    assert "pages 1-3 labelled A\ufffdB-1 to A\ufffdB-3" in header and "\r" not in header
    found = server.read(path="labels.pdf", find="page 2")
    assert found["shown"]["hits"][0]["label"] == "A\ufffdB-2"
    assert "page 2 (labelled A\ufffdB-2), line 2: page 2" in text_of(found) and "\r" not in text_of(found)


# A header as libstdc++ writes them: an include guard, the same member in two branches, a
# declaration split between branches (its return type before them, its body after), a branch in
# an `#else` branch.
BRANCHED_HEADER = """#ifndef BOX_H
#define BOX_H 1
namespace box {
  class Box {
  public:
#if __cplusplus < 201103L
    Box() : size_(0) { }
#else
    Box() = default;
#endif
    int
#if __cplusplus >= 201103L
    put(const int& item, int&& hint)
#else
    put(const int& item, int hint)
#endif
    { return item; }
  };
#ifndef BOX_WIDE
  int narrow(void);
#else
# ifdef BOX_REDIRECT
  int wide(void) __asm__("wide64");
# else
  int wide(void);
# endif
#endif
}
#endif
"""


def test_a_c_outline_says_the_preprocessor_branches_of_its_entries(tmp_path: Path):
    """Each entry in a branch is titled with it (innermost last), so one member declared in two
    branches reads as two branches, not two members; a declaration split between branches leaves
    the class around it whole; the include guard is no branch."""
    from rpc import serving, text_of

    (tmp_path / "box.h").write_text(BRANCHED_HEADER, encoding="utf-8")
    for server in serving(tmp_path):
        lines = text_of(server.read(path="box.h", outline=True)).split("\n")[1:-1]
    assert lines == [
        "namespace box  (lines 3-28)  → offset=3 limit=26",
        "  class Box  (lines 4-18)  → offset=4 limit=15",
        "    function Box [#if __cplusplus < 201103L]  (line 7)  → offset=7 limit=1",
        "    function Box [#else of #if __cplusplus < 201103L]  (line 9)  → offset=9 limit=1",
        "    function put  (lines 11-17)  → offset=11 limit=7",
        "  function narrow [#ifndef BOX_WIDE]  (line 20)  → offset=20 limit=1",
        "  function wide [#else of #ifndef BOX_WIDE, #ifdef BOX_REDIRECT]  (line 23)  → offset=23 limit=1",
        "  function wide [#else of #ifndef BOX_WIDE, #else of #ifdef BOX_REDIRECT]  (line 25)  → offset=25 limit=1"]


def test_a_csharp_outline_says_the_preprocessor_branches_of_its_entries(tmp_path: Path):
    from rpc import serving, text_of

    (tmp_path / "a.cs").write_text("namespace N {\n  class A {\n#if DEBUG\n    void F() { }\n#elif TRACE\n"
                                   "    void F(long x) { }\n#else\n    void F(int x) { }\n#endif\n  }\n}\n",
                                   encoding="utf-8")
    for server in serving(tmp_path):
        lines = text_of(server.read(path="a.cs", outline=True)).split("\n")[1:-1]
    assert lines[2:] == ["    method F [#if DEBUG]  (line 4)  → offset=4 limit=1",
                         "    method F [#elif TRACE]  (line 6)  → offset=6 limit=1",
                         "    method F [#else of #if DEBUG]  (line 8)  → offset=8 limit=1"]
