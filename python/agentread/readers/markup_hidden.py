"""Passages of HTML and Markdown that a rendered page never shows: comments that hold a word, and
elements that the file's own style sheets (its `<style>` elements), their own `style` or the
`hidden` attribute hide: display:none, visibility:hidden, a zero font size, no opacity, a box of
no size or 1px with overflow hidden, clipped away, placed or indented far off-screen, text in its
own background colour. A closed `<details>` shows its summary and is not one.

The stdlib's HTML tokenizer finds them; tinycss2 reads styles and cssselect2 matches a sheet's
selectors against the elements, the cascade decided as CSS does (importance, the style attribute,
specificity, order). A descendant can show itself again where the hiding is inherited
(visibility, font size, colour): the passage leaves it out. In Markdown, only its raw HTML is
HTML: code blocks and code spans (found by tree-sitter's Markdown grammars) are blanked before the
tokenizer sees the text, so a comment shown as code is not a hidden passage.

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
from functools import cached_property, lru_cache
from html.parser import HTMLParser
from typing import Iterator

from agentread.find import Hit, around
from agentread.hidden import SAME_COLOUR, hidden_in, note, passage
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

# What any hidden passage's HTML holds: a comment, the attribute, or a style that hides.
_MAY_HIDE = re.compile(r"<!--|hidden|display|font-size|width|height|opacity|clip|indent|left|top|color|background",
                       re.IGNORECASE)

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
    # Markdown's code is blanked only where its HTML holds a passage, or an element whose text the
    # tokenizer takes whole (`<style>` shown as code would swallow what follows): most hold
    # neither, and its parse costs more than the tokenizer's.
    if kind == "markdown" and (found or _RAW_TEXT.search(text)):
        return _found(_without_code(text))
    return found


def _found(text: str) -> list[Span]:
    if "<" not in text:
        return []
    finder = _Finder(text)
    finder.feed(text)
    finder.close()
    finder.finish()
    return finder.found


@dataclass(slots=True)
class _Element:
    """An element as the tokenizer opened it: its tag, attributes and parent (an index, -1 for
    none); in a file, `start`, where its start tag opens, and `end`, where the end tag that closes
    it opens (each a tokenizer position, line and column; None: left open)."""

    tag: str
    attrs: dict[str, str | None]
    parent: int
    start: tuple[int, int] = (1, 0)
    end: tuple[int, int] | None = None


@dataclass(frozen=True)
class _Passage:
    """A hidden element (an index) that starts a hidden run, why, and the elements within it that
    show again (a child's `visibility:visible`, its own font size or colour), in order."""

    element: int
    why: str
    gaps: tuple[int, ...]


# The kinds of hiding a descendant can undo by declaring its own value; the others hide all within.
_VISIBILITY, _FONT_SIZE, _COLOUR = "visibility", "font-size", "colour"

# The properties read from styles: those that can hide text, and those that show it again.
_READ = frozenset("display visibility font-size width height max-width max-height overflow overflow-x overflow-y "
                  "opacity clip clip-path position left top text-indent color background background-color".split())
# A sheet that declares none of them (a table's alignments) hides nothing and shows nothing again:
# it is not parsed. A backslash may spell a property's name in escapes, which only parsing reads.
_DECLARES_READ = re.compile(r"\\|(?<![-\w])(?:" + "|".join(sorted(_READ, key=len, reverse=True)) + r")\s*:",
                            re.IGNORECASE)

# CSS lengths in CSS pixels (em, ex and viewport units at a browser's defaults: a 16px font, a
# 1920x1080 screen); a percentage's base is unknown.
_PX = {"px": 1, "": 1, "pt": 4 / 3, "pc": 16, "in": 96, "cm": 96 / 2.54, "mm": 96 / 25.4, "q": 96 / 101.6,
       "em": 16, "rem": 16, "ex": 8, "ch": 8, "vw": 19.2, "vh": 10.8, "vmin": 10.8, "vmax": 19.2}
_LENGTH = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))([a-z]*|%)")

# How far left or up a positioned element or an indent must be moved to be off-screen: the
# usual off-screen patterns move by 999px, 9999px or more; a layout's own offsets are smaller.
OFF_SCREEN_PX = 999

# At most this size (width or height) with overflow hidden or clipped shows no text: the
# "visually hidden" pattern's 1px box.
UNSEEN_BOX_PX = 1

# Selectors of a file's style sheets applied, in order: a page's own sheet has tens to hundreds;
# each is compiled, and tested on every element its rule may hide.
STYLE_SELECTORS = 1_000

# Elements a file's style sheets are matched against, in order (those past it are judged by their
# own style): matching costs a Python call an element; a file up to TEXT_PARSE_BYTES has fewer.
STYLE_ELEMENTS = 20_000

# A letter or a digit: what a passage holds to be one (a comment of dashes or a blank is not).
_WORD = re.compile(r"[^\W_]")

# Elements whose content the tokenizer reads as text up to their end tag.
_RAW_TEXT = re.compile(r"<(?:style|script|textarea|title|xmp|iframe|noembed|noframes|noscript|plaintext)\b",
                       re.IGNORECASE)

# Where an element may hide by its own attributes: without it or a style sheet, none does.
_STYLED_ELEMENT = re.compile(r"\s(?:style|hidden)\b", re.IGNORECASE)

# A tag, a comment or a character reference: markup, not text a person reads.
_MARKUP = re.compile(r"<[^>]*>|&#?\w+;")


def has_words(html: str) -> bool:
    """Whether `html`'s text (tags and character references aside) holds a letter or a digit."""
    return bool(_WORD.search(_MARKUP.sub("", html)))


def _declarations(tokens) -> list[tuple[str, str, bool]]:
    """The declarations of a rule's or a style attribute's content that matter here: (name, value
    in lower case, !important)."""
    import tinycss2

    found = []
    for item in tinycss2.parse_blocks_contents(tokens, skip_comments=True, skip_whitespace=True):
        if item.type == "declaration" and item.lower_name in _READ:
            found.append((item.lower_name, tinycss2.serialize(item.value).strip().lower(), item.important))
    return found


def _px(value: str | None) -> float | None:
    """A CSS length in CSS pixels, None when it is not one (or a percentage)."""
    found = _LENGTH.fullmatch(value or "")
    if not found or found[2] not in _PX:
        return None
    return float(found[1]) * _PX[found[2]]


def _is_zero(value: str | None) -> bool:
    """Whether a CSS length (or number) is zero in any unit."""
    found = _LENGTH.fullmatch(value or "")
    return bool(found) and float(found[1]) == 0


@lru_cache(maxsize=256)  # a page sets a few colours, on many elements
def _colour(value: str | None):
    """An opaque colour's (red, green, blue), 0-255, that `value` (a colour, or a background
    without an image) sets; None for none, a transparent one or an image."""
    import tinycss2
    from tinycss2.color3 import parse_color

    if not value or "url(" in value or "gradient" in value:
        return None
    for token in tinycss2.parse_component_value_list(value, skip_comments=True):
        colour = parse_color(token)
        if colour is not None and colour != "currentColor" and hasattr(colour, "alpha"):
            return tuple(round(c * 255) for c in colour[:3]) if colour.alpha >= 1 else None
    return None


def _clipped(values: dict[str, str]) -> bool:
    """Whether `clip` (on a positioned element) or `clip-path: inset()` leaves nothing to show."""
    clip = values.get("clip", "")
    if clip.startswith("rect(") and values.get("position") in ("absolute", "fixed"):
        sides = [_px(side) for side in re.split(r"[\s,]+", clip[5:].rstrip(")").strip())]
        if len(sides) == 4:
            top, right, bottom, left = sides
            if (top is not None and bottom is not None and bottom <= top) or \
                    (left is not None and right is not None and right <= left):
                return True
    path = values.get("clip-path", "")
    if path.startswith("inset(") and path.endswith(")"):
        sides = path[6:-1].split(" round ")[0].split()
        percents = [float(side[:-1]) if re.fullmatch(r"\d+\.?\d*%", side) else None for side in sides]
        if 1 <= len(percents) <= 4 and None not in percents:  # as `margin` gives its four sides
            top, right = percents[0], percents[1 % len(percents)]
            bottom = percents[2] if len(percents) > 2 else top
            left = percents[3] if len(percents) > 3 else right
            return top + bottom >= 100 or left + right >= 100
    return False


def _far(value: str | None) -> bool:
    """Whether an offset moves farther left or up than OFF_SCREEN_PX."""
    px = _px(value)
    return px is not None and px <= -OFF_SCREEN_PX


def _hides_all(values: dict[str, str], attrs: dict[str, str | None]) -> str | None:
    """Why an element with the cascaded `values` and `attrs` shows nothing of what it holds (a
    descendant cannot show itself again), None when it shows."""
    display = values.get("display")
    if display == "none":
        return f"{_STYLED} (display:none)"
    if "hidden" in attrs and display is None:
        return f"{_STYLED} (the hidden attribute)"
    if _is_zero(values.get("opacity")):
        return f"{_STYLED} (opacity:0)"
    if _clipped(values):
        return f"{_STYLED} (clipped away)"
    if values.get("position") in ("absolute", "fixed") and (_far(values.get("left")) or _far(values.get("top"))):
        return f"{_STYLED} (off-screen)"
    if _far(values.get("text-indent")):
        return f"{_STYLED} (indented off-screen)"
    overflow = values.get("overflow", values.get("overflow-x", values.get("overflow-y")))
    if overflow in ("hidden", "clip"):
        sizes = [values.get(name) for name in ("width", "height", "max-width", "max-height")]
        if any(_is_zero(size) for size in sizes):
            return f"{_STYLED} (zero size, overflow hidden)"
        if any((px := _px(size)) is not None and px <= UNSEEN_BOX_PX for size in sizes):
            return f"{_STYLED} (a 1px box, overflow hidden)"
    return None


def _inherited(values: dict[str, str], pair: bool) -> dict[str, str | None]:
    """What an element's `values` say of the kinds a descendant may undo: kind -> why it hides
    (None: it shows again). `pair`: its colour and background colour are set together (by one
    rule or its style attribute), so they are compared."""
    kinds: dict[str, str | None] = {}
    visibility = values.get("visibility")
    if visibility in ("hidden", "collapse"):
        kinds[_VISIBILITY] = f"{_STYLED} (visibility:hidden)"
    elif visibility == "visible":
        kinds[_VISIBILITY] = None
    size = values.get("font-size")
    if _is_zero(size):
        kinds[_FONT_SIZE] = f"{_STYLED} (font-size:0)"
    elif size and not re.search(r"(em|ex|ch|%)$|^(smaller|larger|inherit|unset|revert)", size):
        kinds[_FONT_SIZE] = None  # its own size, not its parent's scaled
    if "color" in values or "background" in values or "background-color" in values:
        kinds[_COLOUR] = None
        text = _colour(values.get("color"))
        under = _colour(values.get("background-color", values.get("background")))
        if pair and text and under and all(abs(a - b) <= SAME_COLOUR for a, b in zip(text, under)):
            kinds[_COLOUR] = f"{_STYLED} (text in its background colour)"
    return kinds


class _Sheets:
    """The rules of a file's style sheets (the text of each `<style>` element), matched by
    cssselect2 against a copy of its elements: what they and an element's own style declare."""

    def __init__(self, css: list[str], elements: list[_Element]):
        import tinycss2
        from cssselect2 import Matcher, SelectorError, compile_selector_list

        self.may_hide, self.plain, self.media = Matcher(), Matcher(), Matcher()
        self.conditional = False
        added = 0
        rules = (each for sheet in css for each in _rules(
            tinycss2.parse_stylesheet(sheet, skip_comments=True, skip_whitespace=True)))
        for number, (rule, conditional) in enumerate(rules):
            if added >= STYLE_SELECTORS:
                break
            declared = _declarations(rule.content)
            if not declared:
                continue
            try:
                selectors = [s for s in compile_selector_list(rule.prelude) if s.pseudo_element is None]
            except SelectorError:
                continue  # a selector cssselect2 cannot read (of a later CSS) applies nowhere here
            block = (number, declared)  # the number tells one rule's declarations from another's
            for selector in selectors[:STYLE_SELECTORS - added]:
                added += 1
                self.media.add_selector(selector, block)
                if conditional:
                    self.conditional = True
                    continue
                self.plain.add_selector(selector, block)
                if _may_hide(declared):
                    self.may_hide.add_selector(selector, block)
        self.selectors, self.hiding = added, bool(self.may_hide.order)
        self.elements = elements

    @cached_property
    def wrappers(self) -> list:
        """The elements, up to STYLE_ELEMENTS, as cssselect2 matches them (built when first asked:
        a sheet whose rules hide nothing is matched against an element only when its own style or
        an ancestor's asks)."""
        from xml.etree.ElementTree import Element, SubElement

        from cssselect2 import ElementWrapper

        elements = self.elements[:STYLE_ELEMENTS]
        root = Element("html") if sum(e.parent < 0 for e in elements) != 1 else None  # a tree has one root
        mirrored: list[Element] = []
        for element in elements:
            attrs = {k: v or "" for k, v in element.attrs.items()}
            if element.parent >= 0:
                mirrored.append(SubElement(mirrored[element.parent], element.tag, attrs))
            else:
                mirrored.append(Element(element.tag, attrs) if root is None else SubElement(root, element.tag, attrs))
        top = ElementWrapper.from_html_root(root if root is not None else mirrored[0]) if mirrored else None
        walked = list(top.iter_subtree()) if top is not None else []
        return walked[1:] if root is not None else walked  # in the elements' order

    def candidate(self, index: int) -> bool:
        """Whether a rule that may hide matches the element."""
        return self.hiding and index < len(self.wrappers) and bool(self.may_hide.match(self.wrappers[index]))

    def blocks(self, index: int, media: bool) -> list:
        """The declaration blocks of the rules matching the element, lowest in the cascade first;
        `media`: with the rules inside @media and the like."""
        if index >= len(self.wrappers):
            return []
        matched = (self.media if media else self.plain).match(self.wrappers[index])
        return [(specificity, order, block) for specificity, order, _, block in matched]


def _rules(rules, conditional: bool = False) -> Iterator:
    """The style rules of a sheet's `rules`, in order, each with whether it applies only where an
    at-rule (@media, @supports) says."""
    import tinycss2

    for rule in rules:
        if rule.type == "qualified-rule":
            yield rule, conditional
        elif rule.type == "at-rule" and rule.content is not None:
            yield from _rules(tinycss2.parse_rule_list(rule.content, skip_comments=True, skip_whitespace=True), True)


def _may_hide(declared: list[tuple[str, str, bool]]) -> bool:
    """Whether a rule's declarations take part in hiding an element (alone or with others)."""
    values = {name: value for name, value, _ in declared}
    if values.get("display") == "none" or values.get("visibility") in ("hidden", "collapse"):
        return True
    if _is_zero(values.get("font-size")) or _is_zero(values.get("opacity")):
        return True
    if values.get("overflow", values.get("overflow-x", values.get("overflow-y"))) in ("hidden", "clip"):
        return True
    if any(name in values for name in ("clip", "clip-path", "text-indent")):
        return True
    if values.get("position") in ("absolute", "fixed") or _far(values.get("left")) or _far(values.get("top")):
        return True
    return "color" in values and ("background" in values or "background-color" in values)


def _cascaded(blocks: list, inline: list[tuple[str, str, bool]]) -> tuple[dict[str, str], bool]:
    """The values the matching rules' `blocks` and the style attribute's `inline` declarations
    give an element (a later or more specific rule wins; the style attribute wins over rules;
    !important over both), and whether its colour and background colour come from one block."""
    won: dict[str, tuple] = {}
    entries = [(specificity, order, block_id, declared) for specificity, order, (block_id, declared) in blocks]
    entries.append(((1 << 30, 0, 0), 0, "style", inline))
    for specificity, order, block_id, declared in entries:
        for name, value, important in declared:
            rank = (important, specificity, order)
            if name not in won or rank >= won[name][0]:
                won[name] = (rank, value, block_id)
    values = {name: value for name, (_, value, _) in won.items()}
    background = won.get("background-color", won.get("background"))
    pair = "color" in won and background is not None and won["color"][2] == background[2]
    return values, pair


def _passages(elements: list[_Element], css: list[str]) -> tuple[list[_Passage], list[bool]]:
    """The hidden runs of `elements` (in document order, parents first) under their style sheets
    `css` and their own styles, and whether each element is within one."""
    sheets = _Sheets(css, elements) if any(_DECLARES_READ.search(sheet) for sheet in css) else None
    sheets = sheets if sheets is not None and sheets.selectors else None
    whole: list[str | None] = [None] * len(elements)  # why all it holds is hidden
    kinds: list[dict[str, str]] = [{}] * len(elements)  # the undoable kinds hiding it, and why
    owner = [-1] * len(elements)  # the element starting the run it is in
    gaps: dict[int, list[int]] = {}
    whys: dict[int, str] = {}
    for i, element in enumerate(elements):
        parent = element.parent
        if sheets is None and (parent < 0 or owner[parent] < 0) and not (
                "style" in element.attrs or "hidden" in element.attrs):
            continue  # shown, as its parent is: nothing of its own may hide it
        if parent >= 0 and whole[parent] is not None:
            whole[i], owner[i] = whole[parent], owner[parent]
            continue
        above = kinds[parent] if parent >= 0 else {}
        own_all, own = _judged(i, element, sheets, bool(above))
        now = {kind: why for kind, why in above.items() if own.get(kind, why) is not None}
        for kind, why in own.items():
            if why is not None and kind not in now:
                now[kind] = why
        whole[i], kinds[i] = own_all, now
        hidden, parent_hidden = bool(own_all or now), parent >= 0 and owner[parent] >= 0
        if hidden and not parent_hidden:
            owner[i], whys[i] = i, own_all or next(iter(now.values()))
        elif hidden:
            owner[i] = owner[parent]
        elif parent_hidden:
            gaps.setdefault(owner[parent], []).append(i)
    found = [_Passage(i, why, tuple(gaps.get(i, ()))) for i, why in whys.items()]
    return found, [o >= 0 for o in owner]


def _judged(index: int, element: _Element, sheets: _Sheets | None, within: bool
            ) -> tuple[str | None, dict[str, str | None]]:
    """Why the element hides all it holds (or None), and what it says of the undoable kinds;
    `within`: inside a run such a kind hides, where a declaration of its own may show it again."""
    style = element.attrs.get("style") or ""
    if not (style or "hidden" in element.attrs or within or (sheets is not None and sheets.candidate(index))):
        return None, {}
    inline = _declarations(style) if style else []
    blocks = sheets.blocks(index, False) if sheets is not None else []
    values, pair = _cascaded(blocks, inline)
    own_all, own = _hides_all(values, element.attrs), _inherited(values, pair)
    if (own_all or any(own.values())) and sheets is not None and sheets.conditional:
        # hidden only where no rule inside @media or @supports shows it again
        values, pair = _cascaded(sheets.blocks(index, True), inline)
        if not (_hides_all(values, element.attrs) or any(_inherited(values, pair).values())):
            return None, {kind: why for kind, why in own.items() if why is None}
    return own_all, own


class _Finder(HTMLParser):
    """Drives the tokenizer, keeping the elements it opens (where each starts and ends, its parent)
    and the comments and style sheets it meets."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.elements: list[_Element] = []
        self.open: list[int] = []  # the open elements, by index
        self.opened: dict[str, int] = {}  # how many of each tag are open: a stray end tag costs nothing
        self.comments: list[tuple[int, int]] = []
        self.css: list[str] = []  # the text of each style element
        self.found: list[Span] = []

    def _at(self, position: tuple[int, int] | None = None) -> int:
        line, column = position or self.getpos()
        return self.starts[line - 1] + column

    def _point(self, at: int) -> tuple[int, int]:
        line = bisect_right(self.starts, at)
        return line, at - self.starts[line - 1]

    def _add(self, start: int, end: int, why: str) -> None:
        self.found.append(Span(self._point(start), self._point(end), why))

    def _end(self, element: _Element) -> int:
        """Where an element ends: past its end tag's ">", or where the text does if left open."""
        if element.end is None:
            return len(self.text.rstrip())
        end = self.text.find(">", self._at(element.end))
        return len(self.text) if end < 0 else end + 1

    def handle_comment(self, data: str) -> None:
        start = self._at()
        # `<!-- data -->`, or a bogus comment (`<!x>`, `</ x>`), which ends at its first ">"
        whole = self.text.startswith("<!--", start)
        end = self.text.find(">", start + 4 + len(data) if whole else start)
        if _WORD.search(data):  # a comment of no word (`<!---->`, a rule of dashes) hides nothing
            self.comments.append((start, len(self.text) if end < 0 else end + 1))

    def handle_data(self, data: str) -> None:
        if self.open and self.elements[self.open[-1]].tag == "style":
            self.css[-1] += data

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            return
        if tag == "style":
            self.css.append("")
        self.elements.append(_Element(tag, dict(attrs), self.open[-1] if self.open else -1,
                                      (self.lineno, self.offset)))
        self.open.append(len(self.elements) - 1)
        self.opened[tag] = self.opened.get(tag, 0) + 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pass  # `<x/>` holds nothing

    def handle_endtag(self, tag: str) -> None:
        if not self.opened.get(tag):
            return  # a stray end tag closes nothing
        at = (self.lineno, self.offset)
        while True:  # it closes the elements opened after its own
            top = self.elements[self.open.pop()]
            self.opened[top.tag] -= 1
            top.end = at
            if top.tag == tag:
                break

    def finish(self) -> None:
        """The passages: an element left open hides the rest of the text, and so does a comment
        never closed (which the tokenizer gives as text): one opened after the last "-->"."""
        closed = self.text.rfind("-->")
        opened = self.text.find("<!--", closed + 3 if closed >= 0 else 0)
        if opened >= 0 and not any(s <= opened < e for s, e in self.comments) and _WORD.search(self.text[opened:]):
            self.comments.append((opened, len(self.text.rstrip())))
        styled = any(self.css) or _STYLED_ELEMENT.search(self.text)
        passages = _passages(self.elements, self.css)[0] if styled else []
        runs: list[tuple[int, int]] = []  # the hidden runs that hold a word
        for found in passages:
            element = self.elements[found.element]
            at, pieces = self._at(element.start), []
            for gap in found.gaps:
                pieces.append((at, self._at(self.elements[gap].start)))
                at = max(at, self._end(self.elements[gap]))
            pieces.append((at, self._end(element)))
            for start, stop in pieces:
                if has_words(self.text[start:stop]):
                    runs.append((start, stop))
                    self._add(start, stop, found.why)
        for start, stop in self.comments:
            if not any(s <= start < e for s, e in runs):
                self._add(start, stop, COMMENT)
        self.found.sort(key=lambda span: span.start)


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


def mark_tree(root, css: list[str]) -> dict[str, int]:
    """Marks the hidden passages of an lxml.html tree in place, as text its layout shows: each run
    of hidden text made visible between markers, each comment's text put where it stands between
    markers; `css`, the text of each of its style sheets; answers how many of each `why`."""
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
    nodes = [node for node in root.iter() if isinstance(node.tag, str)]
    index = {node: i for i, node in enumerate(nodes)}
    elements = [_Element(node.tag.lower(), {str(k).lower(): v for k, v in node.attrib.items()},
                         index.get(node.getparent(), -1)) for node in nodes]
    passages, within = _passages(elements, css)
    why = {found.element: found.why for found in passages}
    owner = [-1] * len(nodes)
    for i, element in enumerate(elements):
        owner[i] = (i if i in why else owner[element.parent] if element.parent >= 0 else -1) if within[i] else -1
    # The text in document order, each piece with the run it is in (an element's text is in its
    # own state, its tail in its parent's); consecutive pieces of one run are one passage.
    pieces: list[tuple[object, str, int]] = []
    stack: list[tuple[object, bool]] = [(root, False)]
    while stack:
        node, tail = stack.pop()
        if tail:
            parent = node.getparent()
            pieces.append((node, "tail", owner[index[parent]] if parent in index else -1))
            continue
        if isinstance(node.tag, str):
            pieces.append((node, "text", owner[index[node]]))
            stack.extend((child, flag) for child in reversed(node) for flag in (True, False))
    runs: list[tuple[int, list[tuple[object, str]]]] = []  # each run's element, its pieces
    last = -1
    for node, attr, run in pieces:
        if getattr(node, attr):
            if run >= 0 and run == last:
                runs[-1][1].append((node, attr))
            elif run >= 0:
                runs.append((run, [(node, attr)]))
            last = run
    for run, held in runs:
        if not has_words("".join(getattr(node, attr) for node, attr in held)):
            continue
        head, _, tail = passage("\0", why[run]).partition("\0")
        (first, at_first), (end, at_end) = held[0], held[-1]
        setattr(first, at_first, head + getattr(first, at_first))
        setattr(end, at_end, getattr(end, at_end) + tail)
        counts[why[run]] = counts.get(why[run], 0) + 1
    for node, inside in zip(nodes, within):
        if inside:  # so that the layout shows it and what it holds
            for name in ("hidden", "style"):
                node.attrib.pop(name, None)
    for comment in list(root.iter(etree.Comment)):
        parent = comment.getparent()
        if parent is None or within[index[parent]] or not _WORD.search(comment.text or ""):
            continue  # inside a hidden run's passage, or of no word
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
