"""RTF documents, read as numbered lines of their text (striprtf: paragraphs, tables' cells,
the document's code page and \\u escapes; pictures and fonts left out), headings marked `#` by
level as in DOCX, and listed by `outline`.

striprtf gives text alone, no styles (of the RTF parsers on PyPI that would, rtfparse gives nothing
of the RTF specification and rtf_tokenize is GPL), so the headings are found here, by the control
words that state them, on the tokens of the markup (no text is decoded here: striprtf decodes each
heading's markup, and its text is found among the read's lines):

- a paragraph's style (`\\sN` after `\\pard`) whose stylesheet entry states an outline level
  (`\\outlinelevelN`, 0 the top) or is named "heading N", itself or the style it is based on
  (`\\sbasedonN`);
- a paragraph's own `\\outlinelevelN`, which wins over its style's (9 is body text).

RTF is text, so `raw: true` reads its markup as written.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Iterator

from agentread.find import Hit, Matcher, Reached
from agentread.readers import Source
from agentread.readers.office.document import Rendered, headings_outline, search_lines, show
from agentread.request import ReadRequest
from agentread.result import ReadError, ReadResult

# A token of RTF markup: a control word and its number (with the one space that may end it), an
# escaped byte, a control symbol, a brace, or a run of text.
TOKEN = re.compile(r"\\([a-zA-Z]{1,32})(-?\d{1,10})? ?|\\'[0-9a-fA-F]{2}|\\[^a-zA-Z]|[{}]|[^\\{}]+", re.S)
# What ends a paragraph: a paragraph mark, a table's cell or row, a section.
PARAGRAPH_ENDS = frozenset(("par", "cell", "row", "nestcell", "nestrow", "sect"))
# An escaped backslash (`\\`), handed to striprtf as the byte it stands for (`\'5c`): striprtf looks
# for `\pict` and `\bin` as strings before it reads the markup, and where both occur drops what
# follows each `\pict` up to a `}`, so that a document speaking of them (`\\pict`, as the RTF
# specification does) lost its text from there. Backslashes pair from the left, as RTF reads them.
ESCAPED_BACKSLASH = re.compile(r"\\\\")
HEADING_NAME = re.compile(r"heading\s*([1-9])", re.I)
# Outline levels Word states: 0-8 are headings 1-9, 9 is body text.
BODY_TEXT_LEVEL = 9
# Styles based on one another are followed this far for a level: further is a loop.
MAX_BASED_ON = 16
# Groups nested deeper than this are passed over (a hostile file nests millions deep); no heading
# lives so deep.
MAX_GROUP_DEPTH = 200
# Each heading's markup is handed to striprtf with the document's font table (for the code pages of
# its fonts), one up to this long: a longer one, repeated for thousands of headings, would cost more
# than the document.
MAX_FONT_TABLE_CHARS = 64 << 10
# Destinations whose text is not the body's, besides those a `\*` opens: their paragraphs are not
# headings (the text striprtf shows leaves them out too).
ASIDE = frozenset("fonttbl colortbl info header headerl headerr headerf footer footerl footerr footerf footnote "
                  "pict object annotation field fldinst listtable listoverridetable stylesheet pntext".split())


def read(source: Source, request: ReadRequest) -> ReadResult:
    return show(_render(source), request, source.name, "rtf")


def search(source: Source, request: ReadRequest, matcher: Matcher) -> tuple[str, Iterator[Hit | Reached]]:
    return search_lines("rtf", _render(source).lines, request, matcher)


def outline(source: Source, request: ReadRequest) -> ReadResult:
    """The headings, each spanning its lines to the next at its level or higher."""
    return headings_outline(_render(source), request, source.name,
                            " (no paragraph of a heading style or with an outline level)")


def _render(source: Source) -> Rendered:
    # RTF is 7-bit: other bytes are the code page's, which the document names and striprtf decodes.
    markup = source.whole()[source.bom:].decode(source.encoding or "latin-1", errors="replace")
    doc = Rendered()
    doc.add(_text(markup, source.name).replace("\r\n", "\n").replace("\r", "\n").rstrip("\n"))
    _mark_headings(doc, markup, source.name)
    return doc


def _text(markup: str, name: str) -> str:
    from striprtf.striprtf import rtf_to_text

    try:
        return rtf_to_text(ESCAPED_BACKSLASH.sub(r"\\'5c", markup), errors="replace")
    except (MemoryError, RecursionError):
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged document fails striprtf in many ways
        raise ReadError("damaged_document", f"{name} is an RTF document whose text could not be taken "
                        f"out ({type(exc).__name__}: {str(exc)[:200]}). Read its markup with raw=true.") from None


def _mark_headings(doc: Rendered, markup: str, name: str) -> None:
    """Each heading's line marked `#` by level and listed in `doc.headings`: the heading's markup,
    its text by striprtf, found among the lines from the last heading's on (one not found, in a
    part the text leaves out, is not listed)."""
    found = _headings(markup)
    if not found.paragraphs:
        return
    where: dict[str, list[int]] = {}  # each line's text, white space squeezed → its indexes, in order
    for i, line in enumerate(doc.lines):
        where.setdefault(" ".join(line.split()), []).append(i)
    at = 0
    for level, start, end, opened, closed in found.paragraphs:
        text = markup[start:end]
        header = found.code_page + (found.fonts if "\\'" in text else "")  # fonts name the code page of bytes
        piece = "{" * (closed + 1) + "\\rtf1" + header + " " + text + "}" * (opened + 1)
        title = next((line for line in (" ".join(text.split()) for text in _text(piece, name).splitlines())
                      if line), "")
        lines = where.get(title, []) if title else []
        after = bisect.bisect_left(lines, at)
        if after == len(lines):
            continue
        line = lines[after]
        doc.lines[line] = f"{'#' * level} {doc.lines[line].strip()}"
        doc.headings.append((level, doc.lines[line], line + 1))
        at = line + 1


@dataclass
class Style:
    name: str = ""
    outline: int | None = None
    based_on: int | None = None


@dataclass
class Found:
    # Heading paragraphs as (level from 1, start, end of their markup, groups the markup opens and
    # does not close, groups it closes that it did not open).
    paragraphs: list[tuple[int, int, int, int, int]] = field(default_factory=list)
    # The document's code page (`\ansicpgN`) and font table, which striprtf decodes a heading's
    # markup by.
    code_page: str = ""
    fonts: str = ""


@dataclass(frozen=True)
class State:
    aside: bool = False  # in a destination that is not the body's text
    style: int = 0  # the paragraph's style (`\sN`)
    outline: int | None = None  # the paragraph's own outline level


def _headings(markup: str) -> Found:
    """The heading paragraphs of the body, by a walk over the markup's tokens."""
    found = Found()
    styles: dict[int, Style] = {}
    stack: list[State] = []
    state = State()
    entry: Style | None = None  # the stylesheet entry being read
    entry_depth = sheet_depth = -1
    number = None  # the entry's style number: paragraph styles only
    start = 0  # where the paragraph began
    low = depth = 0  # the least depth since it began, and the depth now
    began = 0  # the depth it began at
    first = False  # the token after a `{`
    for match in TOKEN.finditer(markup):
        token = match[0]
        if token == "{":
            stack.append(state)
            depth += 1
            first = True
            if depth > MAX_GROUP_DEPTH:
                break
            if sheet_depth >= 0 and depth == sheet_depth + 1:
                entry, entry_depth, number = Style(), depth, 0
            continue
        if token == "}":
            if entry is not None and depth == entry_depth:
                if number is not None:
                    styles[number] = entry
                entry = None
            if depth == sheet_depth:
                sheet_depth = -1
            state = stack.pop() if stack else State()
            depth -= 1
            low = min(low, depth)
            continue
        word, value = match[1], match[2]
        opens = first
        first = False
        if entry is not None:
            if word in ("cs", "ds", "ts") or token == "\\*":
                number = None  # a character, section or table style
            elif word == "s":
                number = int(value or 0)
            elif word == "outlinelevel":
                entry.outline = int(value or 0)
            elif word == "sbasedon":
                entry.based_on = int(value or 0)
            elif word is None and depth == entry_depth and not token.startswith("\\"):
                entry.name += token
            continue
        if word == "stylesheet":
            sheet_depth = depth
            continue
        if word == "fonttbl" and not found.fonts:
            close = _group_end(markup, match.start())
            if close - match.start() <= MAX_FONT_TABLE_CHARS:
                found.fonts = "{" + markup[match.start():close]
        if token == "\\*" and opens or word in ASIDE:
            state = State(aside=True)
        if state.aside:
            continue
        if word == "ansicpg":
            found.code_page = token.rstrip()
        elif word == "pard":
            state = State()
        elif word == "s":
            state = State(style=int(value or 0), outline=state.outline)
        elif word == "outlinelevel":
            state = State(style=state.style, outline=int(value or 0))
        elif word in PARAGRAPH_ENDS:
            level = _level(state, styles)
            if level is not None:
                found.paragraphs.append((level, start, match.start(), depth - low, began - low))
            start, began, low = match.end(), depth, depth
    return found


def _group_end(markup: str, at: int) -> int:
    """The end of the group whose first token is at `at` (past its `}`), by its braces."""
    depth = 1
    for match in TOKEN.finditer(markup, at):
        depth += {"{": 1, "}": -1}.get(match[0], 0)
        if depth == 0:
            return match.end()
    return len(markup)


def _level(state: State, styles: dict[int, Style]) -> int | None:
    """A paragraph's heading level from 1, or None where it is no heading: its own outline level,
    else its style's, else the level a style named "heading N" says, through the styles it is
    based on."""
    if state.outline is not None:
        return state.outline + 1 if 0 <= state.outline < BODY_TEXT_LEVEL else None
    number: int | None = state.style
    for _ in range(MAX_BASED_ON):
        style = styles.get(number) if number is not None else None
        if style is None:
            return None
        if style.outline is not None:
            return style.outline + 1 if 0 <= style.outline < BODY_TEXT_LEVEL else None
        named = HEADING_NAME.fullmatch(style.name.strip().rstrip(";").strip())
        if named:
            return int(named[1])
        number = style.based_on
    return None
