"""Characters a person does not see, marked where they stand in what the model reads: Unicode tag
characters (which carry ASCII no editor draws), zero-width and other invisible format characters,
bidirectional overrides and isolates (text that reads one way and runs another), and runs of
variation selectors (which can carry bytes). A file can use them to put words before a model that
no person reading it sees; the reply shows each one as a marker, ⟦…⟧, and says in its first line
how many there are. Nothing is dropped: the model is told, not shielded.

Marked where no script needs them: zero-width spaces alone on a line (where it may break), a
zero-width joiner between the letters of a script that joins
(Arabic, Persian, the Indic scripts) or inside an emoji, a zero-width non-joiner between such
letters, one variation selector after a character (an emoji's or an ideograph's form) and the tag
characters of a flag emoji (England's) are ordinary text, and left as they are. The one place this
is decided; docs/CONTRACT.md ("Hidden content") states the rules and what is not detected.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from agentread.result import ReadResult, TextPart

OPEN, CLOSE = "\u27e6", "\u27e7"  # ⟦ ⟧: brackets no source text uses for its own

# Unicode tag characters: a tag letter is its ASCII letter plus TAG_BASE.
TAG_BASE = 0xE0000
CANCEL_TAG = "\U000e007f"
WAVING_BLACK_FLAG = "\U0001f3f4"  # the base of flag emoji spelled with tags
ZWJ, ZWNJ, ZWSP = "\u200d", "\u200c", "\u200b"

# Format characters that draw nothing, beside the joiners: zero-width space, word joiner, invisible
# math operators, the deprecated format controls, the byte order mark inside a text, the
# Mongolian vowel separator, the combining grapheme joiner, Hangul fillers, Khmer's inherent vowels.
_INVISIBLE = ("\u200b\u200c\u200d\u2060-\u2064\u206a-\u206f\ufeff\u180e\u034f\u115f\u1160\u3164\uffa0"
              "\u17b4\u17b5")
# Embeddings, overrides and isolates (not the marks LRM and RLM, which right-to-left text uses).
_BIDI = "\u202a-\u202e\u2066-\u2069"
_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
# Invisible characters beside the zero-width space, which decide whether a line's zero-width spaces
# are marked (see _marker).
_OTHER_INVISIBLE = re.compile(f"[{_INVISIBLE.replace(ZWSP, '')}]")
# Any character of the kinds above: one compiled set, checked first, which most text passes in a
# fraction of the time the search by kinds takes.
_ANY = re.compile(f"[\U000e0000-\U000e007f{_BIDI}{_INVISIBLE}{_SELECTORS}]")
_FOUND = re.compile(f"(?P<tags>[\U000e0000-\U000e007f]+)|(?P<bidi>[{_BIDI}])|(?P<invisible>[{_INVISIBLE}]+)"
                    f"|(?P<selectors>[{_SELECTORS}]+)")

# Two colours whose red, green and blue each differ by at most this much (of 255) look the same:
# text in the colour under it (office/document.py, readers/markup_hidden.py,
# readers/pdf/concealed.py).
SAME_COLOUR = 8

# How each kind is named in the reply's first line: (one, many).
KINDS = {"tags": ("run of tag characters", "runs of tag characters"),
         "bidi": ("bidirectional control", "bidirectional controls"),
         "invisible": ("run of invisible characters", "runs of invisible characters"),
         "selectors": ("run of variation selectors", "runs of variation selectors")}


@dataclass
class Marked:
    text: str
    counts: dict[str, int]


def mark(text: str) -> Marked:
    """`text` with each hidden passage replaced by its marker, and how many of each kind."""
    counts: dict[str, int] = {}
    if text.isascii() or not _ANY.search(text):
        return Marked(text, counts)
    out: list[str] = []
    at = 0
    for found in _FOUND.finditer(text):
        kind = found.lastgroup
        start, end = found.span()
        marker = _marker(kind, text, start, end)
        if marker is None:
            continue
        out += [text[at:start], marker]
        at = end
        counts[kind] = counts.get(kind, 0) + 1
    if not counts:
        return Marked(text, counts)
    out.append(text[at:])
    return Marked("".join(out), counts)


def _marker(kind: str, text: str, start: int, end: int) -> str | None:
    """The marker of text[start:end], a passage of `kind`; None where it is ordinary text."""
    run = text[start:end]
    before, after = text[start - 1:start], text[end:end + 1]
    if kind == "tags":
        if before == WAVING_BLACK_FLAG and run.endswith(CANCEL_TAG) and len(run) > 1:
            return None  # a flag emoji: 🏴 and tag letters naming a region, then the cancel tag
        return f'{OPEN}hidden: tag characters "{"".join(map(_tag_letter, run))}"{CLOSE}'
    if kind == "bidi":
        return f"{OPEN}U+{ord(run):04X} {unicodedata.name(run, 'BIDIRECTIONAL CONTROL')}{CLOSE}"
    if kind == "selectors":
        if len(run) == 1 and before and not before.isspace():
            return None  # one selector choosing a character's form
        data = bytes(_selector_byte(c) for c in run)
        shown = data.decode("utf-8", "replace")
        carried = f'"{shown}"' if shown.isprintable() else data.hex(" ")
        return f"{OPEN}hidden: {len(run)} variation selectors carrying {carried}{CLOSE}"
    if len(run) == 1 and run in (ZWJ, ZWNJ) and _joins(before, after, run == ZWJ):
        return None
    if not run.strip(ZWSP) and not _mixed(_line(text, start)):
        # Zero-width spaces alone are where a line may break (a long address, a word); mixed with
        # other invisible characters they can carry bits, and are marked with them.
        return None
    return "".join(_invisible(group) for group in re.findall(r"((.)\2*)", run))


def _mixed(line: str) -> bool:
    """Whether a line holds a marked invisible character other than the zero-width space."""
    for found in _OTHER_INVISIBLE.finditer(line):
        char, at = found.group(), found.start()
        if char not in (ZWJ, ZWNJ) or not _joins(line[at - 1:at], line[at + 1:at + 2], char == ZWJ):
            return True
    return False


def _line(text: str, at: int) -> str:
    return text[text.rfind("\n", 0, at) + 1:text.find("\n", at) % (len(text) + 1)]


def _invisible(group: tuple[str, str]) -> str:
    run, char = group
    times = f" \u00d7{len(run)}" if len(run) > 1 else ""
    return f"{OPEN}U+{ord(char):04X} {unicodedata.name(char, 'FORMAT CHARACTER')}{times}{CLOSE}"


def _joins(before: str, after: str, emoji: bool) -> bool:
    """Whether a joiner between `before` and `after` does a script's or an emoji's work: both are
    letters or marks of a script beyond Latin, Greek and Cyrillic, or (a zero-width joiner) both
    are pictographs, an emoji's form selector or a skin tone."""
    if not before or not after:
        return False
    if all(ord(c) >= 0x0590 and unicodedata.category(c)[0] in "LM" for c in (before, after)):
        return True
    return emoji and all(unicodedata.category(c) in ("So", "Sk") or c == "\ufe0f" for c in (before, after))


def _tag_letter(char: str) -> str:
    letter = chr(ord(char) - TAG_BASE)
    return letter if " " <= letter <= "~" and letter != '"' else f"\\u{{{ord(char):X}}}"


def _selector_byte(char: str) -> int:
    """The byte a variation selector stands for where selectors carry data: VS1-16 are 0-15,
    VS17-256 are 16-255."""
    code = ord(char)
    return code - 0xFE00 if code <= 0xFE0F else code - 0xE0100 + 16


def passage(text: str, why: str) -> str:
    """A passage a reader found hidden by how the file draws or keeps it (white on white, a run
    marked hidden, off the slide), marked where it stands: `⟦hidden: why⟧text⟦/hidden⟧`, `why` a
    phrase after "passages" ("drawn in the colour under it"). The reader counts each in its
    result's `hidden`, by `why` (`note`), since a marker in the text may be the file's own."""
    return f"{OPEN}hidden: {why}{CLOSE}{text}{OPEN}/hidden{CLOSE}"


def note(result: ReadResult, why: str, n: int = 1) -> None:
    """Counts `n` passages marked with `passage(…, why)` in `result`."""
    result.hidden = result.hidden or {}
    result.hidden[why] = result.hidden.get(why, 0) + n


# How a `find` hit whose match holds characters of each kind is said to be hidden: a phrase after
# "hits", as a passage's `why` is.
HIT_KINDS = {"tags": "in tag characters", "bidi": "across bidirectional controls",
             "invisible": "holding invisible characters", "selectors": "in variation selectors"}

# A passage's markers in a reader's line (`passage`): the opening one with its `why`, and the
# closing one.
_PASSAGE_MARKS = re.compile(f"{OPEN}hidden: ([^{CLOSE}\n]*){CLOSE}|{OPEN}/hidden{CLOSE}")
# Runs of the characters that carry text (tag characters, variation selectors), which `find`
# reads as that text.
_CARRIERS = re.compile(f"(?P<tags>[\U000e0000-\U000e007f]+)|(?P<selectors>[{_SELECTORS}]+)")


def _named(kind: str, n: int, what: str = "passage") -> str:
    if kind in KINDS and what == "passage":
        return f"{n} {KINDS[kind][n != 1]}"
    return f"{n} {what}{'' if n == 1 else 's'} {HIT_KINDS.get(kind, kind) if what == 'hit' else kind}"


def summary(counts: dict[str, int], what: str = "passage") -> str:
    """The reply's first line for a window holding hidden passages (`what` "passage"), or for a
    find's hits in hidden text ("hit", each counted by the `hit_why` of what hides it)."""
    named = ", ".join(_named(kind, n, what) for kind, n in counts.items())
    return f"[Hidden from a person reading the file: {named}; each is marked {OPEN}…{CLOSE} where it stands.]"


def holds_hidden(text: str) -> bool:
    """Whether `text` holds a character of the kinds `mark` marks (a quick look: in its place, such
    a character may be ordinary text)."""
    return not text.isascii() and _ANY.search(text) is not None


def hit_why(kind: str) -> str:
    """How a hit hidden by `kind` (a passage's `why`, or a kind of character) is said to be."""
    return HIT_KINDS.get(kind, kind)


def carried_as_text(text: str) -> str:
    """`text` with each run of tag characters or variation selectors that `mark` marks given as the
    characters it carries, one for one (a selector's byte as the character of that number), so
    that `find` finds those words where they stand; a flag emoji's tags and an emoji's form stay as
    they are."""
    if text.isascii() or not _CARRIERS.search(text):
        return text
    return _CARRIERS.sub(lambda run: run.group() if _marker(run.lastgroup, text, *run.span()) is None
                         else "".join(chr(ord(c) - TAG_BASE if run.lastgroup == "tags" else _selector_byte(c))
                                      for c in run.group()), text)


@dataclass(frozen=True)
class Searchable:
    """What `find` searches in a reader's line: the file's words, without the markers of the
    passages the reader marked (their text is the reader's, not the file's), tag characters and
    variation selectors as what they carry (carried_as_text); and the way back to places in the
    line as the reader gives it."""

    text: str
    # Each passage marker taken out: (where it stood in `text`, where in the line, its length).
    cuts: tuple[tuple[int, int, int], ...] = ()

    def in_line(self, at: int, end: bool = False) -> int:
        """The place in the line of place `at` of `text`: a start past the markers standing there,
        an `end` before them (a match that ends where a passage closes is inside it)."""
        return at + sum(length for place, _, length in self.cuts if place < at or place == at and not end)

    def from_line(self, at: int) -> int:
        """The place in `text` of place `at` of the line (one inside a marker: where it stood)."""
        taken = 0
        for place, line_at, length in self.cuts:
            if at < line_at + length:
                return place if at > line_at else at - taken
            taken += length
        return at - taken


def searchable(line: str) -> Searchable:
    """A reader's line as `find` searches it (Searchable)."""
    if line.isascii():
        return Searchable(line)
    text = carried_as_text(line)
    if OPEN not in text:
        return Searchable(text)
    out, cuts, at = [], [], 0
    for found in _PASSAGE_MARKS.finditer(text):
        out.append(text[at:found.start()])
        cuts.append((sum(map(len, out)), found.start(), found.end() - found.start()))
        at = found.end()
    out.append(text[at:])
    return Searchable("".join(out), tuple(cuts))


def hidden_in(line: str, start: int, end: int, passages: bool = True) -> tuple[str, ...]:
    """What hides the match line[start:end] of a `find` hit: the `why` of each passage marked in
    the line (`passage`; with `passages`, for a reader's line that holds its markers) whose text
    the match holds any of, and the kind of each run of characters `mark` marks that it holds
    any of. A marker elsewhere on the line does not hide the hit. The one place this is decided."""
    end = max(end, start + 1)  # an empty match stands for the character at its place
    whys: list[str] = []
    if passages and OPEN in line:
        opened: tuple[str, int] | None = None
        for found in _PASSAGE_MARKS.finditer(line):
            if found.group(1) is not None:
                opened = (found.group(1), found.end())
            elif opened is not None:
                if opened[1] < end and start < found.start():
                    whys.append(opened[0])
                opened = None
        if opened is not None and opened[1] < end:  # a passage its line does not close runs to its end
            whys.append(opened[0])
    if not line.isascii() and _ANY.search(line, start, end):
        for found in _FOUND.finditer(line):
            if found.start() < end and start < found.end() and \
                    _marker(found.lastgroup, line, *found.span()) is not None:
                whys.append(found.lastgroup)
    return tuple(dict.fromkeys(whys))


def mark_result(result: ReadResult) -> ReadResult:
    """`result` with its hidden characters marked, the count of those and of the passages its
    reader marked (`passage`) first, and `hidden` set: the one place a reply is marked."""
    if result.is_error:
        return result
    # A find's reply counts its hits in hidden text (find.answer), not the marks around them.
    hits = "hits" in (result.shown or {})
    total: dict[str, int] = dict(result.hidden or {})  # the passages its reader marked
    for i, part in enumerate(result.content):
        if isinstance(part, TextPart):
            marked = mark(part.text)
            for kind, n in ({} if hits else marked.counts).items():
                total[kind] = total.get(kind, 0) + n
            result.content[i] = TextPart(marked.text) if marked.counts else part
    if total:
        result.hidden = total
        # joined to the text after it by a line break
        result.content.insert(0, TextPart(summary(total, "hit" if hits else "passage")))
    return result
