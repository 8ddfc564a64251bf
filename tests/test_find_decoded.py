"""A search of decoded text in a UTF-8 file (a regular expression; a string ignoring case that is
not ASCII) decodes the lines that are ASCII apart from the others: over lines mixing ASCII, other
characters, bytes that are not UTF-8 and every line end, its hits are exactly those of the pattern
run on each line of the file decoded whole, as the editor shows it, whatever the sizes of the pieces
read and of the parts decoded, with the compiled search for bytes that are not ASCII or without."""

from __future__ import annotations

import io
import re

import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentread.find import REGEX_TIMEOUT_SECONDS, Matcher
from agentread.readers import Source
from agentread.readers import text as text_reader
from agentread.request import parse_request
from agentread.result import ReadError

# Pieces of lines: ASCII that patterns aim at, letters whose case folds to ASCII (Kelvin sign, long
# s, dotted I) or to several letters (sharp s, the fi ligature), other scripts, and bytes that are
# not UTF-8 (a lone continuation, a cut sequence, an encoded surrogate, 0xFF).
PIECES = [b"a", b"b", b"x", b"k", b"K", b"s", b"ss", b"STRASSE", b" ", b"\t", b"1", b"22", b"_", b"-", b".",
          "\u212a".encode(), "\u017f".encode(), "\ufb01".encode(), "\u0130".encode(), "é".encode(), "ß".encode(),
          "中文".encode(), "😀".encode(),
          b"\x80", b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc3(", b"a" * 70]
ENDS = [b"\n", b"\r\n", b"\r"]

# (find, regex, ignoreCase): classes and `.` that match characters that are not ASCII, case folding
# that maps them to ASCII, anchors, and repeats across a whole line.
SEARCHES = [
    (r"a.b", True, False), (r"\w+", True, False), (r"\W+", True, False), (r"[^a-z ]+", True, False),
    (r"^.{3}$", True, False), (r"k", True, True), (r"\bK\b", True, True), (r"strasse", True, True),
    (r"é+", True, False), (r"\ufffd", True, False), (r"[\x80-\U0010ffff]", True, False), (r"\d{2,}", True, False),
    (r"x$", True, False), (r"^\S", True, False), (r"\s\S", True, False), (r".", True, False), (r"\X", True, False),
    (r"a{70}", True, False), (r"(?i)SS", True, False), (r"^$", True, False), (r"^\s*$", True, False),
    (r"(?=a)", True, False), (r"\b", True, False), (r"x*", True, False), (r"|a", True, False),
    ("Straße", False, True), ("中", False, True),
    ("strasse", False, True), ("K", False, True), ("FI", False, True), ("i", False, True), ("ab", False, True),
]


def searched(data: bytes, encoding: str, request) -> list[tuple[int, int, str]]:
    source = Source(path="f.txt", name="f.txt", stream=io.BytesIO(data), kind="text", description="text/plain",
                    encoding=encoding, bom=0, size=len(data), cache_key=("f.txt", 0), from_editor=True, limit=0)
    _, hits = text_reader.search(source, request, Matcher(request))
    return [(hit.where["line"], hit.where["column"], hit.context) for hit in hits]


def reference(data: bytes, encoding: str, find: str, is_regex: bool, ignore_case: bool) -> list[tuple[int, int, str]]:
    """(line, column, matched text) of each match of the pattern in each line of the whole text, an
    empty one included unless a match at the same place follows it (one hit a place)."""
    flags = (regex.IGNORECASE | regex.FULLCASE) if ignore_case else 0
    pattern = regex.compile(find if is_regex else regex.escape(find), regex.MULTILINE | flags)
    lines = re.split(r"\r\n|\r|\n", data.decode(encoding, errors="replace"))
    if lines[-1] == "":
        lines.pop()
    found = []
    for number, line in enumerate(lines, 1):
        matches = list(pattern.finditer(line, timeout=REGEX_TIMEOUT_SECONDS))
        found += [(number, match.start() + 1, match.group()) for match, after in zip(matches, matches[1:] + [None])
                  if match.group() or after is None or after.start() > match.start()]
    return found


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.tuples(st.lists(st.sampled_from(PIECES), max_size=12), st.sampled_from(ENDS)), max_size=40),
       last_end=st.booleans(), search=st.sampled_from(SEARCHES), encoding=st.sampled_from(["utf-8", "ascii"]),
       chunk=st.sampled_from([64, 200, 1 << 20]), run=st.sampled_from([1, 8, 40, 4096]),
       compiled=st.booleans())
def test_hits_are_the_patterns_matches_in_each_line_of_the_whole_decoded_text(lines, last_end, search, encoding,
                                                                              chunk, run, compiled):
    data = b"".join(b"".join(pieces) + end for pieces, end in lines)
    if lines and not last_end:
        data = data[:-len(lines[-1][1])]
    find, is_regex, ignore_case = search
    request = parse_request({"path": "f.txt", "find": find, "regex": is_regex, "ignoreCase": ignore_case})
    kept = text_reader.FIND_CHUNK, text_reader.FIND_ASCII_RUN, text_reader.ascii_end
    text_reader.FIND_CHUNK, text_reader.FIND_ASCII_RUN = chunk, run
    text_reader.ascii_end = text_reader.ascii_end if compiled else text_reader._ascii_end_in_python
    try:
        found = searched(data, encoding, request)
    finally:
        text_reader.FIND_CHUNK, text_reader.FIND_ASCII_RUN, text_reader.ascii_end = kept
    want = reference(data, encoding, find, is_regex, ignore_case)
    assert [(line, column) for line, column, _ in found] == [(line, column) for line, column, _ in want]
    for (_, _, context), (_, _, match) in zip(found, want):
        assert match.replace("\t", " ") in context


def test_a_pattern_that_backtracks_without_end_after_text_that_is_not_utf8_is_stopped_by_its_bound():
    data = "é\n".encode() + b"\xff\n" + b"a" * 100 + b"b\n"
    request = parse_request({"path": "f.txt", "find": r"(a|aa)+\d", "regex": True})  # \d: not on RE2
    try:
        searched(data, "utf-8", request)
    except ReadError as error:
        assert error.code == "regex_timeout"
    else:
        raise AssertionError("the search was not stopped")


def test_every_ascii_string_a_character_beyond_ascii_matches_ignoring_case_holds_a_letter_the_byte_search_leaves():
    """The caseless search of a string's bytes folds ASCII only: a string that a character beyond
    ASCII matches must go to the decoded text. Such a string is a single letter or a character's
    whole folding (a ligature, sharp s), and each holds one of FOLDED_FROM_BEYOND_ASCII."""
    flags = regex.IGNORECASE | regex.FULLCASE
    cased = [c for c in map(chr, range(0x80, 0x110000)) if c.lower() != c or c.upper() != c or c.casefold() != c]
    matched = {word for c in cased
               for word in (*"abcdefghijklmnopqrstuvwxyz", c.casefold())
               if word.isascii() and regex.fullmatch(regex.escape(word), c, flags)}
    assert matched >= {"k", "s", "i", "ss", "fi"}
    assert all(set(word) & text_reader.FOLDED_FROM_BEYOND_ASCII for word in matched)

