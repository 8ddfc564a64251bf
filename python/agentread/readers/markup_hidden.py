"""Passages of HTML and Markdown that a rendered page never shows: comments, and elements styled not
to show (display:none, visibility:hidden, a zero font size, zero width or height with overflow
hidden, the `hidden` attribute). A closed `<details>` shows its summary and is not one.

The stdlib's HTML tokenizer finds them; tinycss2 reads an element's style. In Markdown, only its
raw HTML is HTML: code blocks and code spans (found by tree-sitter's Markdown grammars) are blanked
before the tokenizer sees the text, so a comment shown as code is not a hidden passage.

A passage runs from (line, column) to (line, column) of the text as its reader splits it into
lines; `mark_window` marks those a window of numbered lines shows (hidden.passage), each within
the lines it covers. The one place these rules are decided; docs/CONTRACT.md ("Hidden content")
states them.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass, replace
from html.parser import HTMLParser
from typing import Iterator

from agentread.find import Hit, around
from agentread.hidden import hidden_in, note, passage
from agentread.readers import TEXT_PARSE_BYTES, Source
from agentread.readers.text import markup_kind
from agentread.result import ReadResult, TextPart

COMMENT = "in HTML comments"
_STYLED = "styled not to show"

# Elements that never hold content, so no end tag closes them.
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())

LINE_ENDS = re.compile(r"\r\n|\r|\n")  # as the text reader ends lines

# A window's numbered line: its number, then a tab (numbering.numbered).
_NUMBERED = re.compile(r"^ *(\d+)\t", re.MULTILINE)

_ZERO = re.compile(r"0+(\.0*)?")

# What any hidden passage's HTML holds: a comment, the attribute, or a style that hides.
_MAY_HIDE = re.compile(r"<!--|hidden|display|font-size|width|height", re.IGNORECASE)

# Files whose passages are kept between reads (keyed by Source.cache_key): paging through a file
# parses it once.
SPAN_CACHE_FILES = 8
_CACHE: OrderedDict[tuple, list[Span]] = OrderedDict()
_CACHE_LOCK = threading.Lock()


@dataclass(frozen=True)
class Span:
    """A hidden passage: from `start` to `end` (exclusive), each (line from 1, character column
    from 0) of the text's lines; `why` as hidden.passage takes it."""

    start: tuple[int, int]
    end: tuple[int, int]
    why: str


def marked(source: Source, result: ReadResult, column: int = 1) -> ReadResult:
    """`result`, a window of numbered lines of an HTML or Markdown file, with the hidden passages it
    shows marked and counted. A file up to TEXT_PARSE_BYTES is parsed whole (once, then kept), so a
    passage is marked in every window that shows part of it; a larger one only within the window
    (a comment opened above it is not seen), so that a window costs what it shows."""
    kind = markup_kind(source.path)
    if kind is None or result.is_error or not result.start_line or len(result.content) != 1:
        return result
    first, last, text = result.start_line, result.end_line or result.start_line, result.content[0].text
    whole = source.size <= TEXT_PARSE_BYTES
    if whole:
        found = _whole_spans(source, kind)
        file_lines = _file_lines(source) if found else []
    else:  # the lines shown are all there is: each as the window shows it, from its first character
        bodies = [m.group(2) for m in re.finditer(r"^ *(\d+)\t(.*)$", text, re.MULTILINE)
                  if first <= int(m.group(1)) <= last]
        found = [Span((s.start[0] + first - 1, s.start[1]), (s.end[0] + first - 1, s.end[1]), s.why)
                 for s in spans(lines_of("\n".join(bodies)), kind)]
        column = 1

    def file_line(number: int) -> str | None:
        return file_lines[number - 1] if whole and number <= len(file_lines) else None

    shown, counts = mark_window(text, first, last, found, file_line, column)
    if counts:
        result.content[0] = TextPart(shown)
        for why, n in counts.items():
            note(result, why, n)
    return result


def marked_hits(source: Source, hits: Iterator, matcher) -> Iterator:
    """`hits` (find.Hit, or where a search stopped) in a text file; in an HTML or Markdown file, one
    on a line holding hidden passages shows their markers (hidden.passage), and is hidden
    (`Hit.hidden`, hidden.hidden_in) where its match is in one. Only a file up to TEXT_PARSE_BYTES
    is parsed for them: a search of a larger one stays a stream."""
    kind = markup_kind(source.path)
    if kind is None or source.size > TEXT_PARSE_BYTES:
        yield from hits
        return
    found: list[Span] | None = None
    file_lines: list[str] = []
    for hit in hits:
        if not isinstance(hit, Hit):
            yield hit
            continue
        if found is None:
            found = _whole_spans(source, kind)
            file_lines = _file_lines(source) if found else []
        line = hit.where["line"]
        on = [s for s in found if s.start[0] <= line <= s.end[0]]
        if not on or line > len(file_lines):
            yield hit
            continue
        yield _hit_marked(hit, file_lines[line - 1], on, matcher)


def _hit_marked(hit: Hit, text: str, on: list[Span], matcher) -> Hit:
    """`hit`, on line `text`, its context rebuilt with the markers of the passages `on` the line."""
    line, begin = hit.where["line"], hit.where["column"] - 1
    end = next((e for b, e in matcher.line_spans(text) if b == begin), None)
    if end is None:
        return hit
    marks, holding = [], []  # holding: the markers of the passages the hit is in
    for order, span in enumerate(on):
        head, _, tail = passage("\0", span.why).partition("\0")
        opens = span.start[1] if span.start[0] == line else 0
        closes = span.end[1] if span.end[0] == line else len(text)
        marks += [(opens, 2 * order + 1, head), (closes, 2 * order, tail)]
        if opens <= begin and end <= closes:
            holding.append((head, tail))
    before = _with_marks(text[:begin], [m for m in marks if m[0] <= begin], 0, None)
    match = _with_marks(text[begin:end], [(m[0] - begin, *m[1:]) for m in marks if begin < m[0] < end], 0, None)
    after = _with_marks(text[end:], [(m[0] - end, *m[1:]) for m in marks if m[0] >= end], 0, None)
    context = around(before, match, after)
    for head, tail in holding:  # a marker cut off with the text around the hit is kept at its edge
        context = context if head in context else head + context
        context = context if tail in context else context + tail
    line_marked = before + match + after
    return replace(hit, context=context, hidden=hidden_in(line_marked, len(before), len(before) + len(match)))


def _file_text(source: Source) -> str:
    return source.whole()[source.bom:].decode(source.encoding or "utf-8", errors="replace")


def _file_lines(source: Source) -> list[str]:
    """The file's lines as the text reader splits them."""
    return LINE_ENDS.split(_file_text(source))


def _whole_spans(source: Source, kind: str) -> list[Span]:
    key = None if source.from_editor else source.cache_key
    with _CACHE_LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    found = spans(lines_of(_file_text(source)), kind)
    if key is not None:
        with _CACHE_LOCK:
            _CACHE[key] = found
            while len(_CACHE) > SPAN_CACHE_FILES:
                _CACHE.popitem(last=False)
    return found


def lines_of(text: str) -> str:
    """`text` with every line end one "\\n" and every character where it was: a CRLF's CR becomes a
    space past its line's end, a lone CR a line feed (lines end where the text reader ends them)."""
    return text.replace("\r\n", " \n").replace("\r", "\n")


def spans(text: str, kind: str) -> list[Span]:
    """The hidden passages of `text` (its line ends one "\\n" each: lines_of), HTML or Markdown."""
    found = _found(text)
    # Markdown's code is blanked only where its HTML holds a passage: most hold none, and its parse
    # costs more than the tokenizer's.
    return _found(_without_code(text)) if found and kind == "markdown" else found


def _found(text: str) -> list[Span]:
    if "<" not in text:
        return []
    finder = _Finder(text)
    finder.feed(text)
    finder.close()
    finder.finish()
    return finder.found


def _why_hidden(attrs: list[tuple[str, str | None]]) -> str | None:
    """Why an element with `attrs` is not shown, None when it is."""
    named = dict(attrs)
    if "hidden" in named:
        return f"{_STYLED} (the hidden attribute)"
    style = named.get("style")
    if not style:
        return None
    import tinycss2

    values: dict[str, str] = {}
    for item in tinycss2.parse_blocks_contents(style, skip_comments=True, skip_whitespace=True):
        if item.type == "declaration":
            values[item.lower_name] = tinycss2.serialize(item.value).strip().lower()
    if values.get("display") == "none":
        return f"{_STYLED} (display:none)"
    if values.get("visibility") in ("hidden", "collapse"):
        return f"{_STYLED} (visibility:hidden)"
    if _is_zero(values.get("font-size")):
        return f"{_STYLED} (font-size:0)"
    if values.get("overflow", values.get("overflow-x", values.get("overflow-y"))) in ("hidden", "clip") and (
            _is_zero(values.get("width")) or _is_zero(values.get("height"))
            or _is_zero(values.get("max-width")) or _is_zero(values.get("max-height"))):
        return f"{_STYLED} (zero size, overflow hidden)"
    return None


def _is_zero(value: str | None) -> bool:
    """Whether a CSS length is zero in any unit."""
    if not value:
        return False
    return bool(_ZERO.fullmatch(value.rstrip("abcdefghijklmnopqrstuvwxyz%").strip()))


class _Finder(HTMLParser):
    """Drives the tokenizer, keeping the open elements to find where a hidden one ends."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.open: list[str] = []
        self.opened: dict[str, int] = {}  # how many of each tag are open: a stray end tag costs nothing
        self.hiding: tuple[int, int, str] | None = None  # the hidden element's depth, start and why
        self.found: list[Span] = []

    def _at(self) -> int:
        line, column = self.getpos()
        return self.starts[line - 1] + column

    def _point(self, at: int) -> tuple[int, int]:
        line = bisect_right(self.starts, at)
        return line, at - self.starts[line - 1]

    def _add(self, start: int, end: int, why: str) -> None:
        self.found.append(Span(self._point(start), self._point(end), why))

    def handle_comment(self, data: str) -> None:
        if self.hiding is None:
            start = self._at()
            # `<!-- data -->`, or a bogus comment (`<!x>`, `</ x>`), which ends at its first ">"
            whole = self.text.startswith("<!--", start)
            end = self.text.find(">", start + 4 + len(data) if whole else start)
            self._add(start, len(self.text) if end < 0 else end + 1, COMMENT)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            return
        if self.hiding is None:
            why = _why_hidden(attrs)
            if why is not None:
                self.hiding = (len(self.open), self._at(), why)
        self.open.append(tag)
        self.opened[tag] = self.opened.get(tag, 0) + 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pass  # `<x/>` holds nothing

    def handle_endtag(self, tag: str) -> None:
        if not self.opened.get(tag):
            return  # a stray end tag closes nothing
        while True:  # it closes the elements opened after its own
            top = self.open.pop()
            self.opened[top] -= 1
            if top == tag:
                break
        if self.hiding is not None and len(self.open) <= self.hiding[0]:
            _, start, why = self.hiding
            self.hiding = None
            end = self.text.find(">", self._at())
            self._add(start, len(self.text) if end < 0 else end + 1, why)

    def finish(self) -> None:
        """An element left open hides the rest of the text, and so does a comment never closed
        (which the tokenizer gives as text): one opened after the last "-->"."""
        end = len(self.text.rstrip())
        if self.hiding is not None:
            _, start, why = self.hiding
            self.hiding = None
            self._add(start, end, why)
        closed = self.text.rfind("-->")
        opened = self.text.find("<!--", closed + 3 if closed >= 0 else 0)
        if opened >= 0 and not any(s.start <= self._point(opened) < s.end for s in self.found):
            self._add(opened, end, COMMENT)


def _without_code(text: str) -> str:
    """Markdown `text` with its code blocks and code spans as spaces (line ends kept): what they
    hold is shown as written."""
    import tree_sitter as ts
    import tree_sitter_markdown as grammar

    if "<" not in text:
        return text
    data = text.encode("utf-8")
    tree = ts.Parser(ts.Language(grammar.language())).parse(data)
    code, inline = [], []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in ("code_fence_content", "indented_code_block"):
            code.append(node)
        elif node.type == "inline":
            held = data[node.start_byte:node.end_byte]
            if b"`" in held and b"<" in held:
                inline.append(node)  # a code span there may hold what looks like HTML
        else:
            stack.extend(node.children)
    parser = ts.Parser(ts.Language(grammar.inline_language()))
    blanks: list[tuple[tuple[int, int], tuple[int, int]]] = [(node.start_point, node.end_point) for node in code]
    for block in inline:  # each alone: a backtick left open in one does not run on into the next
        stack = [parser.parse(data[block.start_byte:block.end_byte]).root_node]
        while stack:
            node = stack.pop()
            if node.type == "code_span":
                origin = block.start_point
                blanks.append((_within(origin, node.start_point), _within(origin, node.end_point)))
            else:
                stack.extend(node.children)
    if not blanks:
        return text
    lines = data.split(b"\n")
    starts = [0]
    for line in text.split("\n")[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def at(point: tuple[int, int]) -> int:
        row, column = point
        return starts[row] + len(lines[row][:column].decode("utf-8", "replace"))

    chars = list(text)
    for start, end in blanks:
        for i in range(at(start), at(end)):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def _within(origin: tuple[int, int], point: tuple[int, int]) -> tuple[int, int]:
    """`point` (row, byte column) of a text parsed alone, in the text it starts at `origin` of."""
    return (origin[0] + point[0], origin[1] + point[1]) if point[0] == 0 else (origin[0] + point[0], point[1])


def mark_window(text: str, first: int, last: int, found: list[Span], file_line, column: int = 1
                ) -> tuple[str, dict[str, int]]:
    """A window's `text` (numbered lines `first` to `last`, the first from its character `column`)
    with the passages of `found` it shows marked, and how many of each `why`. `file_line(n)` is
    line n of the file, None where the window's own line is all there is; a passage opens where it
    starts or at the window's first line, and closes where it ends or at the end of its last."""
    shown = [s for s in found if s.start[0] <= last and s.end[0] >= first]
    if not shown:
        return text, {}
    lines = text.split("\n")
    where: dict[int, int] = {}  # line number -> index in lines
    for i, line in enumerate(lines):
        numbered = _NUMBERED.match(line)
        if numbered and first <= int(numbered.group(1)) <= last and int(numbered.group(1)) not in where:
            where[int(numbered.group(1))] = i
    inserts: dict[int, list[tuple[int, int, str]]] = {}  # line -> (column, order, marker)
    counts: dict[str, int] = {}
    for order, span in enumerate(shown):
        opens, closes = max(span.start, (first, 0)), min(span.end, (last, 1 << 62))
        if opens[0] not in where or closes[0] not in where:
            continue
        head, _, tail = passage("\0", span.why).partition("\0")
        inserts.setdefault(opens[0], []).append((opens[1], 2 * order + 1, head))
        inserts.setdefault(closes[0], []).append((closes[1], 2 * order, tail))
        counts[span.why] = counts.get(span.why, 0) + 1
    for number, marks in inserts.items():
        i = where[number]
        prefix, _, body = lines[i].partition("\t")
        lines[i] = f"{prefix}\t{_with_marks(body, marks, column - 1 if number == first else 0, file_line(number))}"
    return "\n".join(lines), counts


def mark_lines(text: str, shown: list[str], kind: str) -> tuple[list[str], dict[str, int]]:
    """`shown`, the lines of `text` (an HTML or Markdown text) as a reader shows them whole, with
    every hidden passage marked, and how many of each `why`."""
    found = spans(lines_of(text), kind)
    if not found:
        return shown, {}
    numbered = "\n".join(f"{n}\t{line}" for n, line in enumerate(shown, 1))
    whole = lines_of(text).split("\n")
    marked, counts = mark_window(numbered, 1, len(shown), found,
                                 lambda n: whole[n - 1] if n <= len(whole) else None)
    return [line.partition("\t")[2] for line in marked.split("\n")], counts


def _with_marks(body: str, marks: list[tuple[int, int, str]], base: int, whole: str | None) -> str:
    """A shown line, `body` (its file line `whole` from character `base`; None: the same), with
    `marks` (column in the file line, order, marker) inserted, each within what it shows of the
    file's line."""
    reach = len(body) if whole is None else _common(body, whole[base:])
    out, at = [], 0
    for col, _, marker in sorted(marks):
        cut = min(max(col - base, 0), reach)
        out += [body[at:cut], marker]
        at = cut
    out.append(body[at:])
    return "".join(out)


def may_hide(html: str) -> bool:
    """Whether `html` may hold a hidden passage (a quick look, before any parse)."""
    return bool(_MAY_HIDE.search(html))


def mark_tree(root) -> dict[str, int]:
    """Marks the hidden passages of an lxml.html tree in place, as text its layout shows: each
    hidden element made visible with its text between markers, each comment's text put where it
    stands between markers; answers how many of each `why`."""
    from lxml import etree

    counts: dict[str, int] = {}
    body = root.find("body")
    body = root if body is None else body
    for at_start, outside in ((True, list(root.itersiblings(preceding=True))),
                              (False, list(root.itersiblings()))):
        for comment in outside:  # comments before or after the document, which its layout leaves out
            if at_start:
                body.insert(0, comment)
            else:
                body.append(comment)
    comments, hidden = [], []
    stack = [root]
    while stack:  # a hidden element's comments and hidden children are inside its own passage
        node = stack.pop()
        why = _why_hidden(list(node.attrib.items())) if isinstance(node.tag, str) else None
        if node.tag is etree.Comment:
            comments.append(node)
        elif why is not None:
            hidden.append((node, why))
        else:
            stack.extend(reversed(node))
    for element, why in hidden:
        for inside in element.iter(etree.Element):  # so that the layout shows it and what it holds
            if _why_hidden(list(inside.attrib.items())) is not None:
                for name in ("hidden", "style"):
                    inside.attrib.pop(name, None)
        head, _, tail = passage("\0", why).partition("\0")
        element.text = head + (element.text or "")
        if len(element):
            element[-1].tail = (element[-1].tail or "") + tail
        else:
            element.text += tail
        counts[why] = counts.get(why, 0) + 1
    for comment in comments:
        parent = comment.getparent()
        shown = passage(f"<!--{comment.text or ''}-->", COMMENT) + (comment.tail or "")
        before = comment.getprevious()
        if before is not None:
            before.tail = (before.tail or "") + shown
        else:
            parent.text = (parent.text or "") + shown
        parent.remove(comment)
        counts[COMMENT] = counts.get(COMMENT, 0) + 1
    return counts


def _common(a: str, b: str) -> int:
    """The length of the prefix `a` and `b` share."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    return next(i for i in range(n) if a[i] != b[i])
