"""`find`: the hits of a string (or a regular expression) in one file of any readable kind, each
with its citation and the read arguments that show it, within one reply's budget.

Readers give their text as citable units (`Unit`: a line, a page's line, a sheet's cell, a notebook
cell's source or output line), and `hits_in` searches them; the text reader searches its bytes
itself, streamed (readers/text.py `search`). Both yield `Hit`s, and `answer` makes the reply: the
same words and the same `next` for every kind. A hit's `resume` is the scope a search sends to
start at it (the `next` of a reply that stopped before it).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Generator, Iterable, Iterator

from agentread.cancel import read_deadline
from agentread.hidden import hidden_in, hit_why, note, searchable
from agentread.limits import MAX_LINE_CHARS
from agentread.numbering import counted
from agentread.request import ReadRequest
from agentread.result import ReadError, ReadResult, TextPart

# Characters shown on each side of a hit: a clause or two, enough to tell one hit from another
# without reading the line, and short enough that a reply holds a hundred hits.
FIND_CONTEXT_CHARS = 80

# Hits one reply lists at most, whatever the budget left: past this a model needs a narrower search.
MAX_FIND_HITS = 100

# A regular expression gets this long to find each match (the `regex` package's `timeout`): far
# more than any sane pattern needs on one line, and it stops catastrophic backtracking.
REGEX_TIMEOUT_SECONDS = 1.0

# A regular expression is measured before it is compiled, since the `regex` package writes a counted
# repeat out as many times as its count and recurses on each group as it compiles: a short pattern
# could otherwise take gigabytes of memory, or overflow the stack and end the process. The most one
# count may say, as RE2 allows (the package compiles an empty group repeated in time that grows
# faster than its count); past it, `+` or `*` say "many". Figures: bench/README.md.
MAX_REPEAT = 1000
# The most groups within groups: far past what a search needs, far under the nesting at which the
# package's parser, which recurses on each group, runs out of stack.
MAX_NESTING = 100
# The most characters a pattern makes with its counted repeats written out (a repeat within a
# repeat written out the product of their counts times; see _measure): compiles within about a
# second and a small share of a worker's memory, well under what overflows the stack of a thread.
MAX_WRITTEN_OUT = 100_000

# A search stops itself once this share of the read's deadline (cancel.read_deadline) has passed,
# and answers the hits it found with a `next` from where it got to: at the deadline the read would
# be answered `timeout`, with no hits. Half leaves the rest for the piece under way and the reply.
FIND_TIME_SHARE = 0.5

# Bytes of lines RE2 searches from a line holding the text every match of its pattern holds, before
# skipping to the next such line: one call's cost spreads over many lines where the text is
# common, and where it is rare the lines between are passed over. Figures: bench/README.md.
LINEAR_SKIP_BYTES = 64 * 1024
# The longest text every match holds that `re` finds rather than bytes.find: CPython's bytes.find
# skips at most a needle's length at a time, and `re` is faster on a needle this short but slower
# on a longer one whose first byte is common. Figures: bench/README.md.
SHORT_HELD_BYTES = 3

# ASCII letters that a character beyond ASCII matches regardless of case, alone or in a ligature
# (K matches the Kelvin sign, "ss" matches ß, "fi" the ligature ﬁ, i matches İ): a caseless search
# holding one must look at the decoded text, and with the backtracking engine, which folds them so.
FOLDED_FROM_BEYOND_ASCII = frozenset("fiks")


@dataclass(frozen=True)
class Unit:
    """A piece of a file's text as its reader shows it, with where it is."""

    text: str
    where: dict[str, Any]  # its citation: {"line": 12}, {"page": 3, "line": 7}, {"sheet": "Data", "cell": "B17"}
    read: dict[str, Any]  # the read arguments that show it
    resume: dict[str, Any]  # the find arguments that search from it on
    # The read argument that starts its text further in: `column` for a line (read on from one past
    # MAX_LINE_CHARS), `char` for a spreadsheet cell (its `column` is the sheet's); None: none.
    reads_on: str | None = "column"


@dataclass(frozen=True)
class Hit:
    where: dict[str, Any]  # as Unit.where, with the hit's 1-based `column` in its text
    context: str  # the hit and the text around it, on one line
    read: dict[str, Any]
    resume: dict[str, Any]
    # What hides the matched text (hidden.hidden_in): a passage's `why`, a kind of character.
    hidden: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reached:
    """Where a search that stopped for time got to (FIND_TIME_SHARE), given in place of a hit."""

    where: dict[str, Any]  # as Hit.where: {"line": 120000}
    resume: dict[str, Any]  # the find arguments that search on from there


class Budget:
    """The time a search may take; spent only after its first piece of text, so that every call
    searches on."""

    def __init__(self) -> None:
        self.ends = time.monotonic() + FIND_TIME_SHARE * read_deadline()
        self.begun = False

    def spent(self) -> bool:
        begun, self.begun = self.begun, True
        return begun and time.monotonic() >= self.ends


class OutOfTime(Exception):
    """A search's time (Budget) ran out before the line that starts at `at` of the text searched."""

    def __init__(self, at: int):
        super().__init__(at)
        self.at = at


class Matcher:
    """The request's `find`, `regex` and `ignoreCase`, ready to search text."""

    def __init__(self, request: ReadRequest):
        import regex  # the `regex` package: its matches time out; imported by the first search only

        self.text, self.ignore_case, self.plain = request.find, request.ignore_case, not request.regex
        self.literal = None if request.regex or request.ignore_case else request.find
        flags = regex.MULTILINE | ((regex.IGNORECASE | regex.FULLCASE) if request.ignore_case else 0)
        source = request.find if request.regex else regex.escape(request.find)
        # Anchors to the text's ends (\A, \Z, \z, \G), lookarounds and inline flags (`(?-m)`) can
        # match in a line alone and not where the lines around it show: a pattern with any of them
        # (any group but `(?:`) is not screened by the whole text.
        self.screens = not request.regex or regex.search(r"\\[AZzG]|\(\?(?!:)", request.find) is None
        if request.regex:
            bound_pattern(request.find)
        try:
            self.pattern = regex.compile(source, flags)
        except (regex.error, ValueError, OverflowError, RecursionError) as exc:
            raise ReadError("invalid_regex", f"find={request.find!r} is not a valid regular expression ({exc}). "
                            "Correct it, or call without regex=true to search for the text as it is.") from None
        # The same pattern for RE2, which reads each character once, where it means the same there
        # (linear_pattern); None: the backtracking engine alone searches.
        self.linear, self.held = (_linear(request.find, request.ignore_case, self.pattern) if request.regex
                                  else (None, b""))
        # Whether it may hold ^ or $ (beside the sets linear_pattern keeps from line ends), which
        # RE2 finds at LFs alone (see ascii_spans); an escaped one counts too.
        unkept = self.linear.pattern.replace(_KEPT_FROM_ENDS, "") if self.linear is not None else ""
        self.anchored = "^" in unkept or "$" in unkept
        # A short held text is found by `re`, whose search skips ahead where bytes.find steps a byte
        # or two at a time past a common first byte; a longer one by bytes.find (bench/README.md).
        self.short_held = (re.compile(re.escape(self.held)).search if 0 < len(self.held) <= SHORT_HELD_BYTES
                           else None)
        # An ASCII string ignoring case, as a pattern over bytes, which folds ASCII letters alone:
        # exact in ASCII text, and in any text for a string FOLDED_FROM_BEYOND_ASCII leaves.
        self.caseless = (regex.compile(regex.escape(request.find.encode("ascii")), regex.IGNORECASE)
                         if self.plain and self.ignore_case and request.find.isascii() else None)

    def spans(self, text: str, start: int = 0) -> Iterator[tuple[int, int]]:
        """(start, end) of each match in `text` from `start`, in order."""
        if self.literal is not None:
            at = text.find(self.literal, start)
            while at >= 0:
                yield at, at + len(self.literal)
                at = text.find(self.literal, at + max(1, len(self.literal)))
            return
        try:
            # An empty match is a hit (`^$` finds an empty line), but one place is one hit: an empty
            # match that a match starting at the same place follows (`|a` before `a`) is left out,
            # so that hits' places differ and a `next` at one never lists another again.
            empty = None
            for match in self.pattern.finditer(text, start, timeout=REGEX_TIMEOUT_SECONDS):
                if empty is not None and empty[0] < match.start():
                    yield empty
                empty = None
                if match.end() > match.start():
                    yield match.span()
                else:
                    empty = match.span()
            if empty is not None:
                yield empty
        except TimeoutError:
            raise self._timeout() from None

    def _timeout(self) -> ReadError:
        return ReadError("regex_timeout", f"the regular expression {self.text!r} took more than "
                         f"{REGEX_TIMEOUT_SECONDS:g} s to match one piece of text (it backtracks without end, as "
                         "nested repeats like (a|aa)+ do). Search for a plain string, or a simpler pattern.")


    def line_spans(self, text: str, budget: Budget | None = None) -> Iterator[tuple[int, int]]:
        """`spans`, a regular expression matched in each line of `text` alone: its ^ and $ are the
        line's ends (LF, CRLF or CR), and no match runs on into the next line, as in grep. With a
        `budget`, OutOfTime before a line but the first once it is spent: a pattern may take up to
        REGEX_TIMEOUT_SECONDS on each line of a text a plain string passes through in an instant."""
        if self.plain:
            yield from self.spans(text)
            return
        if self.linear is not None:
            # Every line end made a LF, so that ^ and $ keep to the lines; the rest of the pattern
            # matches no line end (linear_pattern), so a match is one in a line alone.
            for match in self.linear.finditer(text.replace("\r", "\n") if "\r" in text else text):
                yield match.span()
            return
        if self.screens and not self._anywhere(text):
            return
        for number, line in enumerate(_LINE.finditer(text)):
            if number and budget is not None and budget.spent():
                raise OutOfTime(line.start())
            for start, end in self.spans(line.group(1) if line.group(1) is not None else line.group(2)):
                yield line.start() + start, line.start() + end

    @property
    def in_place(self) -> bool:
        """Whether runs of ASCII lines are searched where they lie in the bytes (ascii_spans)."""
        return self.linear is not None or self.caseless is not None

    def ascii_spans(self, data: bytearray, start: int, end: int) -> Iterator[tuple[int, int]]:
        """`line_spans` of data[start:end], whole lines of ASCII bytes (each byte a character), in
        place (`in_place`): offsets in `data`. A string ignoring case by its caseless bytes pattern;
        a regular expression on RE2 (`linear`), and where every match holds a text (`held`), only
        the lines from one holding it on, LINEAR_SKIP_BYTES at a time."""
        if self.linear is None:
            for match in self.caseless.finditer(data, start, end):
                yield match.span()
            return
        if not self.held:
            yield from self._linear_spans(data, start, end)
            return
        at = start
        while (found := self._held_at(data, at, end)) >= 0:
            begin = max(data.rfind(b"\n", at, found), data.rfind(b"\r", at, found), at - 1) + 1  # its line
            at = line_start(data, min(found + LINEAR_SKIP_BYTES, end), end)
            yield from self._linear_spans(data, begin, at)

    def _held_at(self, data: bytearray, start: int, end: int) -> int:
        """Where the held text is next in data[start:end], or -1."""
        if self.short_held is None:
            return data.find(self.held, start, end)
        found = self.short_held(data, start, end)
        return -1 if found is None else found.start()

    def _linear_spans(self, data: bytearray, start: int, end: int) -> Iterator[tuple[int, int]]:
        """ascii_spans on RE2 of whole lines data[start:end], each searched."""
        # RE2 finds ^ and $ by the bytes around them, past `start` and `end` too: where those or a
        # line end between are not LFs, the part is searched in a copy with its line ends made LFs.
        if self.anchored and (start and data[start - 1] != 10 or end < len(data) and data[end] != 10
                              or data.find(b"\r", start, end) >= 0):
            moved = bytes(data[start:end]).replace(b"\r", b"\n")
            for match in self.linear.finditer(moved):
                yield start + match.start(), start + match.end()
            return
        for match in self.linear.finditer(data, start, end):
            yield match.span()

    def _anywhere(self, text: str) -> bool:
        """Whether the pattern matches the text whole, every line end made a LF: it does wherever it
        matches a line alone, so text it does not match is passed over in one compiled search."""
        if "\r" in text:
            text = text.replace("\r", "\n")
        # Without the last line's end: past it no line starts (an empty match there is in no line).
        end = len(text) - text.endswith("\n")
        try:
            return self.pattern.search(text, 0, end, timeout=REGEX_TIMEOUT_SECONDS) is not None
        except TimeoutError:
            raise self._timeout() from None


def line_start(buffer: bytearray, at: int, end: int) -> int:
    """The first line start at or after `at` (> 0) in buffer[:end], or `end`."""
    lf = buffer.find(b"\n", at - 1, end)
    cr = buffer.find(b"\r", at - 1, end if lf < 0 else lf)
    if cr < 0:
        return end if lf < 0 else lf + 1
    return cr + 2 if cr + 1 == lf else cr + 1


def _linear(pattern: str, ignore_case: bool, compiled: Any) -> tuple[Any, bytes]:
    """RE2's compiled `pattern` (linear_pattern), or None where it may not run it, and the ASCII
    text every match holds as it is (b"" where none is known, or ignoring case)."""
    import re2  # google-re2, imported by the first regular expression's search

    translated = linear_pattern(pattern, ignore_case)
    # A pattern matching the empty string matches empty in lines whose ends the LFs made (a CRLF's
    # two), and RE2 steps past an empty match otherwise than `spans` does.
    if translated is None or compiled.fullmatch("") is not None:
        return None, b""
    options = re2.Options()
    options.never_capture, options.case_sensitive = True, not ignore_case
    try:
        linear = re2.compile(translated[0], options)
    except re2.error:  # past RE2's memory for a compiled pattern, or syntax it reads otherwise
        return None, b""
    held = translated[1]
    return linear, held.encode() if held.isascii() and not ignore_case else b""


# What a pattern that RE2 may run is made of (linear_pattern): a counted repeat as both read it, a
# character escaped that stands for itself, a group that captures or not, a character standing for
# itself in a set (a range's end).
_LINEAR_COUNT = re.compile(r"\{\d+(?:,\d*)?\}")
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ ")
_OPEN = re.compile(r"\((?:\?:)?")
# How `.` and a negated set start for RE2: kept from line ends, as in a line alone.
_KEPT_FROM_ENDS = "[^\\n\\r"


def linear_pattern(pattern: str, ignore_case: bool) -> tuple[str, str] | None:
    """`pattern` (MULTILINE, searched a line at a time) written for RE2 (multi-line, over lines that
    each end in a LF) so that it finds the same matches, and a text every match holds ("" if none
    is known); None where RE2 could read it otherwise.
    Taken: characters, escaped punctuation, sets of those and their ranges, `.`, groups, `|`, `^`,
    `$`, and repeats (`*`, `+`, `?`, counts, lazy). Not taken, as RE2 reads them otherwise or not at
    all: class escapes (\\d, \\w, \\s, \\b: ASCII in RE2, Unicode here), other escapes, flags,
    lookarounds, backreferences, possessive repeats, nested sets and set operations; ignoring case,
    anything beyond ASCII and the letters FOLDED_FROM_BEYOND_ASCII (full case folding here, simple
    in RE2). `.` and a negated set are kept from a line end, as in a line alone."""
    out: list[str] = []
    atom = False  # whether a repeat may follow: it repeats the item before
    # The text every match holds: the longest run of characters, each once, outside groups; none
    # where `|` outside groups gives another way.
    depth, run, longest, either = 0, "", "", False
    at = 0
    while at < len(pattern):
        char = pattern[at]
        count = _LINEAR_COUNT.match(pattern, at) if char == "{" else None
        literal = None  # the character this item stands for, outside groups
        if char in "*+?" or count:
            if not atom:
                return None
            at = count.end() if count else at + 1
            lazy = pattern.startswith("?", at)
            out.append((count.group() if count else char) + ("?" if lazy else ""))
            at += lazy
            atom = False
            run = run[:-1]  # the character repeated is not once
        elif char == "(":
            opened = _OPEN.match(pattern, at)
            if pattern.startswith("?", opened.end()):  # (?=, (?i), (?P<..>: not taken
                return None
            out.append("(?:")
            at, atom, depth = opened.end(), False, depth + 1
        elif char in "|^$":
            out.append(char)
            at, atom, either = at + 1, False, either or (char == "|" and not depth)
        elif char == ")":
            out.append(char)
            at, atom, depth = at + 1, True, depth - 1
        elif char == "[":
            body = _linear_set(pattern, at + 1, ignore_case)
            if body is None:
                return None
            text, at = body
            out.append(text)
            atom = True
        elif char == ".":
            out.append(_KEPT_FROM_ENDS + "]")
            at, atom = at + 1, True
        elif char == "\\":
            escaped = pattern[at + 1:at + 2]
            if escaped not in _PUNCTUATION or not escaped:
                return None
            out.append("\\" + escaped)
            at, atom, literal = at + 2, True, escaped
        elif char in "{}]" or not _linear_char(char, ignore_case):
            return None
        else:
            out.append(char)
            at, atom, literal = at + 1, True, char
        if literal is not None and not depth:
            run += literal
        elif atom or not pattern.startswith(("*", "+", "?", "{"), at):
            longest, run = max(longest, run, key=len), ""
    return "(?m)" + "".join(out), "" if either else max(longest, run, key=len)


def _linear_char(char: str, ignore_case: bool) -> bool:
    """Whether RE2 matches the character of a pattern as the backtracking engine does."""
    if not char.isprintable():
        return False
    return not ignore_case or (char.isascii() and char.lower() not in FOLDED_FROM_BEYOND_ASCII)


def _linear_set(pattern: str, at: int, ignore_case: bool) -> tuple[str, int] | None:
    """The set whose characters start at `at` written for RE2, and where it ends; None where it
    holds anything but characters, escaped punctuation and ranges between two (linear_pattern)."""
    negated = pattern.startswith("^", at)
    at += negated
    items: list[tuple[str, str, str]] = []  # (as written, lowest, highest character)
    while at < len(pattern) and pattern[at] != "]":
        item = _set_item(pattern, at)
        if item is None:
            return None
        written, char, at = item
        if char == "-" and written == "-" and items and not pattern.startswith("]", at):
            end = _set_item(pattern, at)  # a range: only between two characters, as both read it
            if end is None or len(items[-1][0]) > 2 or items[-1][1] != items[-1][2] or items[-1][1] > end[1]:
                return None
            items[-1] = (f"{items[-1][0]}-{end[0]}", items[-1][1], end[1])
            at = end[2]
            continue
        items.append((written, char, char))
    if at >= len(pattern) or not items:
        return None
    if ignore_case and any(not high.isascii() or any(low <= letter <= high or low <= letter.upper() <= high
                                                     for letter in FOLDED_FROM_BEYOND_ASCII)
                           for _, low, high in items):
        return None
    return (_KEPT_FROM_ENDS if negated else "[") + "".join(written for written, _, _ in items) + "]", at + 1


def _set_item(pattern: str, at: int) -> tuple[str, str, int] | None:
    """A set's character at `at`: (as written, the character, where the next starts); None where
    it is not one that stands for itself in both engines."""
    char = pattern[at]
    if char == "\\":
        escaped = pattern[at + 1:at + 2]
        return ("\\" + escaped, escaped, at + 2) if escaped and escaped in _PUNCTUATION else None
    if char in "[]" or not char.isprintable() or pattern.startswith(("--", "&&", "||", "~~"), at):
        return None
    return char, char, at + 1


def bound_pattern(pattern: str) -> None:
    """Refuses (ReadError `regex_too_large`) a regular expression past a bound on what compiling it
    takes: MAX_REPEAT, MAX_NESTING, MAX_WRITTEN_OUT."""
    shown = pattern if len(pattern) <= 2 * FIND_CONTEXT_CHARS else f"{pattern[:FIND_CONTEXT_CHARS]}…"
    if _RECURSION.search(pattern):
        raise ReadError("regex_too_large", f"find={shown!r} calls a group or the whole pattern recursively, which "
                        "find does not take: matching it can take memory no bound here measures. Write the "
                        "group out, or search for each form in turn.")
    if _VERBOSE.search(pattern):
        raise ReadError("regex_too_large", f"find={shown!r} sets verbose mode ((?x)), which find does not take: "
                        "its comments hide what the pattern asks. Write it without (?x), its spaces and comments.")
    # The package reads a set as nested ([[a-z]--[aeiou]], V1) or not (V0) by a flag a set itself
    # may seem to hold: measured both ways, the larger.
    written, depth, count = (max(both) for both in zip(_measure(pattern, False), _measure(pattern, True)))
    if count > MAX_REPEAT:
        raise ReadError("regex_too_large", f"find={shown!r} repeats {count:,} times in one count; a count of at "
                        f"most {MAX_REPEAT:,} is taken. Write a smaller count, or + or * for any number of times.")
    if depth > MAX_NESTING:
        raise ReadError("regex_too_large", f"find={shown!r} nests groups {depth:,} deep; at most {MAX_NESTING} are "
                        "taken. Search for a simpler pattern, or for a plain string without regex=true.")
    if written > MAX_WRITTEN_OUT:
        raise ReadError("regex_too_large", f"find={shown!r} is {written:,} characters long with its counted "
                        f"repeats written out; at most {MAX_WRITTEN_OUT:,} are taken. Use smaller counts, fewer "
                        "counted repeats within counted repeats, or + and * for any number of times.")


# A recursive call, (?R), (?1), (?-1), (?&name) or (?P>name), not escaped: what it costs to match
# grows with the text, not with what the pattern writes out.
_RECURSION = re.compile(r"(?<!\\)(?:\\\\)*\(\?(?:R|[-+]?\d+|&\w+|P>\w+)\)")
# A flags group turning verbose mode on or off, as (?x), (?ix) or (?-x:...).
_VERBOSE = re.compile(r"\(\?[-^a-zA-Z0-9]*x[-a-zA-Z0-9]*[:)]")
# A counted repeat: {3}, {2,5}, {,5}, {2,} (spaces allowed, which only a verbose pattern has).
_COUNT = re.compile(r"\{\s*(\d*)\s*(?:,\s*(\d*)\s*)?\}")
# What the package reads as no item at all, so that a count after it repeats the item before: a
# comment, (?#...), to its first ")"; flags set from there on, (?i) or (?-m); a lazy or possessive
# count's mark.
_BETWEEN = re.compile(r"\(\?#[^)]*\)?|\(\?(?:[-abefiLmprsuwx]|V[01])*\)|(?<=\})[?+]")
# A POSIX class inside a set, [:alpha:], whose "]" does not end the set.
_POSIX = re.compile(r"\[:\^?\w+:\]")


def _measure(pattern: str, nested_sets: bool) -> tuple[int, int, int]:
    """(characters written out, deepest nesting of groups, largest count) of a regular expression,
    its sets read as nested or not. Only what sizes the compiled pattern is told apart: groups,
    counted repeats, and the escapes, sets and comments that may hold their characters. A group
    counts twice each group within it too: the package compiles an empty group repeated in time that
    grows with the square of how deep groups nest in it."""
    # For each group open, the outermost first: its characters and groups written out, and those of
    # its last item.
    frames = [_Frame()]
    deepest = largest = 0
    at = 0
    while at < len(pattern):
        count = _COUNT.match(pattern, at)
        if count and (count[1] or count[2]):  # repeats the last item, whatever comes between
            times = max(int(count[1] or 0), int(count[2] or 0), 1)
            largest = max(largest, times)
            frames[-1].repeat(times)
            at = count.end()
            continue
        if (between := _BETWEEN.match(pattern, at)) is not None:  # no item: a count after it repeats the one before
            at = between.end()
            continue
        char, groups = pattern[at], 0
        if char == "(":
            frames.append(_Frame())
            deepest = max(deepest, len(frames) - 1)
            at += 1
            continue
        if char == ")" and len(frames) > 1:
            group = frames.pop()
            size, groups, at = group.chars + 2 + 2 * group.groups, group.groups + 1, at + 1
        elif char == "\\":
            size, at = 2, at + 2
        elif char == "[":
            end = _set_end(pattern, at, nested_sets)
            size, at = end - at, end
        else:
            size, at = 1, at + 1
        frames[-1].add(size, groups)
    return sum(frame.chars for frame in frames), deepest, largest


class _Frame:
    """A group being measured (_measure): its characters and groups written out so far, and those
    of its last item, which a count repeats."""

    def __init__(self) -> None:
        self.chars = self.groups = self.last_chars = self.last_groups = 0

    def add(self, chars: int, groups: int) -> None:
        self.chars, self.groups = self.chars + chars, self.groups + groups
        self.last_chars, self.last_groups = chars, groups

    def repeat(self, times: int) -> None:
        self.chars += self.last_chars * (times - 1)
        self.groups += self.last_groups * (times - 1)
        self.last_chars, self.last_groups = self.last_chars * times, self.last_groups * times


def _set_end(pattern: str, start: int, nested: bool) -> int:
    """Where the set that opens at `start` ends (one past its "]"); a "[" that no "]" closes is
    one character."""
    depth, at = 1, _set_body(pattern, start)
    while at < len(pattern):
        char = pattern[at]
        if char == "\\":
            at += 2
        elif (posix := _POSIX.match(pattern, at)) is not None:
            at = posix.end()
        elif char == "[" and nested:
            depth, at = depth + 1, _set_body(pattern, at)
        elif char == "]":
            depth, at = depth - 1, at + 1
            if not depth:
                return at
        else:
            at += 1
    return start + 1


def _set_body(pattern: str, start: int) -> int:
    """Where the characters of the set opening at `start` begin: past its "^", as a "]" first is
    one of them."""
    at = start + 1 + pattern.startswith("^", start + 1)
    return at + pattern.startswith("]", at)


# A line of a text: its characters before its end (LF, CRLF or CR), or a last line with no end;
# an empty line is a line.
_LINE = re.compile(r"([^\r\n]*)(?:\r\n|\r|\n)|([^\r\n]+)")


def context(text: str, start: int, end: int) -> str:
    """The hit text[start:end] with FIND_CONTEXT_CHARS either side, on one line."""
    return around(text[:start], text[start:end], text[end:])


def around(before: str, hit: str, after: str, more_before: bool = False, more_after: bool = False) -> str:
    """A hit with FIND_CONTEXT_CHARS of the text `before` and `after` it, on one line; "…" where
    the line goes on."""
    if len(hit) > 2 * FIND_CONTEXT_CHARS:  # a long match (a regular expression's .*) shows its ends
        hit = f"{hit[:FIND_CONTEXT_CHARS]}…{hit[-FIND_CONTEXT_CHARS:]}"
    shown = (before[-FIND_CONTEXT_CHARS:] + hit + after[:FIND_CONTEXT_CHARS]).translate(_ONE_LINE)
    return (("…" if more_before or len(before) > FIND_CONTEXT_CHARS else "") + shown
            + ("…" if more_after or len(after) > FIND_CONTEXT_CHARS else ""))


_ONE_LINE = str.maketrans({"\t": " ", "\r": " ", "\n": " "})


def line_read(read: dict[str, Any], column: int, length: int, reads_on: str = "column") -> dict[str, Any]:
    """Read arguments that show a line (a cell) from the character its cut (MAX_LINE_CHARS a call)
    holds a match of `length` characters at `column` in, passed as `reads_on`; a match running past
    that piece is shown whole, with up to FIND_CONTEXT_CHARS before it (one longer than a piece,
    from its start). An empty match shows with the character before it: a line's end has none."""
    first = column - 1 if not length and column > 1 else column
    last = column + length - 1 if length else first
    start = first - (first - 1) % MAX_LINE_CHARS
    if last >= start + MAX_LINE_CHARS:
        start = max(1, first - max(0, min(FIND_CONTEXT_CHARS, MAX_LINE_CHARS - (last - first + 1))))
    return {**read, reads_on: start} if start > 1 else read


def hits_in(units: Iterable[Unit], matcher: Matcher, column: int = 1,
            first_only: bool = False) -> Iterator[Hit | Reached]:
    """The hits in `units`, in order; the first unit is searched from its character `column`.
    `first_only`: a unit's first match alone (a spreadsheet cell, whose `resume` is exact). Out of
    time (Budget), where it got to instead."""
    budget = Budget()
    for unit in units:
        if budget.spent():
            yield Reached(unit.where, unit.resume)
            return
        searched = searchable(unit.text)
        for found_start, found_end in matcher.spans(searched.text, searched.from_line(column - 1)):
            start, end = searched.in_line(found_start), searched.in_line(found_end, end=True)
            where = {**unit.where, "column": start + 1}
            read = unit.read
            if unit.reads_on and "offset" in unit.read:
                read = line_read(unit.read, start + 1, end - start, unit.reads_on)
            resume = unit.resume if first_only or not start else {**unit.resume, "column": start + 1}
            shown = context(unit.text, start, end)
            hidden = hidden_in(unit.text, start, end)
            yield Hit(where, shown, read, resume, hidden)
            if first_only:
                break
        column = 1


def cite(where: dict[str, Any]) -> str:
    """A hit's place in words: `line 12`, `page 3, line 7`, `page 40 (labelled 9), line 7`,
    `sheet 'Data' B17`, `cell 4 (id=ab) output 2, line 3`."""
    parts = []
    if "page" in where:
        parts.append(f"page {where['page']}" + (f" (labelled {where['label']})" if where.get("label") else ""))
    if "slide" in where:
        parts.append(f"slide {where['slide']}")
    if "chapter" in where:
        parts.append(f"chapter {where['chapter']}")
    if "sheet" in where:
        parts.append(f"sheet {where['sheet']!r} {where['cell']}")
    if "cell" in where and "sheet" not in where:
        parts.append(f"cell {where['cell']} (id={where['id']}) {where['in']}")
    if "line" in where:
        parts.append(f"line {where['line']:,}")
    column = where.get("column", 1)
    return ", ".join(parts) + (f", column {column:,}" if column > 1 else "")


def call(args: dict[str, Any]) -> str:
    """Arguments as a closing line names them: `find="x", offset=12`."""
    return ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in args.items())


def answer(path: str, kind: str, hits: Iterator[Hit | Reached], request: ReadRequest) -> ReadResult:
    """The reply to a find: the hits that fit the budget, and `next` at the first that did not."""
    # How the file was read to be searched (`raw`: a notebook's JSON, not its rendering): every
    # hit's read and the `next` name it, or their lines are another text's.
    reading = {"raw": True} if request.raw else {}
    asked = {"find": request.find, **({"regex": True} if request.regex else {}),
             **({"ignoreCase": True} if request.ignore_case else {}), **reading}
    lines: list[str] = []
    shown: list[dict[str, Any]] = []
    result = ReadResult(kind=kind, path=path)
    used, stop = 0, None
    most = min(MAX_FIND_HITS, request.limit or MAX_FIND_HITS)  # `limit` counts hits
    for hit in hits:
        if isinstance(hit, Reached):
            stop = hit
            break
        read = {**hit.read, **reading}
        hidden = f" (hidden: {'; '.join(map(hit_why, hit.hidden))})" if hit.hidden else ""
        line = f"{cite(hit.where)}{hidden}: {hit.context}  [read: {call(read)}]"
        cost = len(line.encode("utf-8")) + 1
        if len(shown) >= most or (shown and used + cost > request.output_bytes):
            stop = hit
            break
        lines.append(line)
        shown.append({**hit.where, **({"hidden": list(hit.hidden)} if hit.hidden else {}), "read": read})
        used += cost
        for why in hit.hidden:
            note(result, why)
    what = f"{'regular expression' if request.regex else 'text'} {request.find!r}" + \
        (" (ignoring case)" if request.ignore_case else "")
    # A search that starts further in (a `next`) knows no hits before it: it says where it started.
    where = _scope(request)
    what += f" in {path}" + (f" from {call(where)} on" if where else "")
    count = f"{len(shown):,} hit{'' if len(shown) == 1 else 's'}"
    result.shown = {"hits": shown}
    if stop is None:
        lines.insert(0, f"[{count} of {what}.]" if shown else f"[No hit of {what}.]")
    elif isinstance(stop, Reached):
        result.truncated = True
        result.next = {**asked, **stop.resume}
        lines.insert(0, f"[{count if shown else 'No hit'} of {what} up to {cite(stop.where)}: the search "
                        "stopped there for time.]")
        lines.append(f"[The search stopped at {cite(stop.where)} to answer in time. Call again with "
                     f"{call(result.next)} to search on from there.]")
    else:
        result.truncated = True
        result.next = {**asked, **stop.resume}
        reason = f"at most {most} a call" if len(shown) >= most else "the output limit"
        lines.insert(0, f"[{count if where else counted('Hit', 1, len(shown))} of {what}; more follow.]")
        lines.append(f"[More hits follow ({reason}). Call again with {call(result.next)} to continue.]")
    result.content = [TextPart("\n".join(lines))]
    return result


def _scope(request: ReadRequest) -> dict[str, Any]:
    """Where the search started, as the arguments that said so."""
    scope = {"pages": request.pages, "cells": request.cells, "offset": request.offset, "column": request.column}
    return {key: value for key, value in scope.items() if value is not None}


def find_in(search, source, request: ReadRequest) -> ReadResult:
    """The reply to a find in one file: `search` (its reader's, see readers.Row) gives the hits."""
    if search is None:
        raise ReadError("find_unsupported", f"{source.name} is {source.description}, which holds no text to "
                        "search. Read it without find.")
    return find_with(source.path, lambda matcher: search(source, request, matcher), request)


Search = Callable[[Matcher], tuple[str, Generator[Hit | Reached, None, None]]]


# Room a find reply under a host's limit keeps for the lines saying what its search passed over
# without searching, beside what the reply's frame leaves (readers/pdf names at most four runs of
# pages a line).
UNSEARCHED_BYTES = 400


def find_with(path: str, search: Search, request: ReadRequest) -> ReadResult:
    """The reply to a find whose hits `search` gives, as (result kind, hits), given the matcher.
    A search may give a third item, `unsearched`: called once the hits are taken, it gives the
    lines that say what the search went past without searching (a PDF's pages with no text layer)
    and the arguments that show it, which follow the reply's first line."""
    kind, hits, *unsearched = search(Matcher(request))
    if unsearched and request.max_bytes is not None:  # the hits leave room for those lines
        request = replace(request, max_bytes=max(1, request.max_bytes - UNSEARCHED_BYTES))
    try:
        result = answer(path, kind, hits, request)
    finally:
        hits.close()  # a search holding a lock or a file lets go of it now, not when collected
    said = unsearched[0]() if unsearched else []
    if said:
        first, _, rest = result.content[0].text.partition("\n")
        result.content[0] = TextPart("\n".join([first, *said, *([rest] if rest else [])]))
    return result
