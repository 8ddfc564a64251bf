"""A regular expression runs on RE2 (linear in the text) where RE2 reads it as the backtracking
engine does, and on the backtracking engine otherwise: the hits (line, column, length) are the same
either way, over generated patterns and texts and over hand-picked ones where the two engines' rules
differ (Unicode classes, case folding beyond ASCII, anchors, empty matches, CRLF and lone CR)."""

from __future__ import annotations

import io

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from agentread import find as find_module
from agentread.find import Matcher
from agentread.readers import Source
from agentread.readers import text as text_reader
from agentread.request import parse_request

# Pieces of lines: ASCII the patterns aim at, letters whose case folds to or from ASCII beyond it
# (Kelvin sign, long s, sharp s, dotted and dotless i, the fi ligature), digits of other scripts,
# spaces beyond ASCII, and bytes that are not UTF-8.
PIECES = ["a", "b", "ab", "k", "K", "s", "S", "ss", "i", "I", "f", "fi", "1", "22", ":", "6", " ", "\t", "-", ".",
          "\u212a", "\u017f", "ß", "ẞ", "\ufb01", "\u0130", "\u0131", "é", "É", "٣", "\u00a0", "\u2028", "中",
          "😀", "\ufffd"]
ENDS = ["\n", "\r\n", "\r"]
BAD_BYTES = [b"\xff", b"\x80", b"\xc3"]


def _text(lines: list[tuple[list[str], str]], last_end: bool, bad: list[bytes]) -> bytes:
    data = "".join("".join(pieces) + end for pieces, end in lines).encode()
    if lines and not last_end:
        data = data[:-len(lines[-1][1].encode())]
    return b"".join(bad) + data


def hits(data: bytes, find: str, ignore_case: bool, linear: bool) -> list[tuple[int, int, int]]:
    """(line, column, length) of each hit of the text reader's search, on RE2 where it may run the
    pattern (`linear`) or on the backtracking engine alone."""
    request = parse_request({"path": "f.txt", "find": find, "regex": True, "ignoreCase": ignore_case,
                             "limit": 100})
    matcher = Matcher(request)
    if not linear:
        matcher.linear = None
    source = Source(path="f.txt", name="f.txt", stream=io.BytesIO(data), kind="text", description="text/plain",
                    encoding="utf-8", bom=0, size=len(data), cache_key=None, from_editor=True, limit=0)
    _, found = text_reader.search(source, request, matcher)
    text = data.decode("utf-8", errors="replace")
    spans = list(matcher.line_spans(text))  # the same search of the text whole, for the hits' lengths
    found = [(hit.where["line"], hit.where["column"]) for hit in found]
    assert len(found) == len(spans)
    return [(line, column, end - start) for (line, column), (start, end) in zip(found, spans)]


def same_hits(data: bytes, find: str, ignore_case: bool = False) -> bool:
    """Whether the hits are the same on both engines (asserted), and whether RE2 ran the pattern."""
    assert hits(data, find, ignore_case, linear=True) == hits(data, find, ignore_case, linear=False)
    return runs_on_re2(find, ignore_case)


def runs_on_re2(find: str, ignore_case: bool = False) -> bool:
    request = parse_request({"path": "f.txt", "find": find, "regex": True, "ignoreCase": ignore_case})
    return Matcher(request).linear is not None


# Parts of generated patterns: what RE2 takes, and what it reads otherwise or not at all.
ATOMS = ["a", "b", "k", "K", "s", "i", "f", "1", "6", ":", " ", "-", "é", "ß", "\u212a", ".", r"\.", r"\-",
         "[0-9]", "[a-c]", "[^a]", "[^ ]", "[A-Z]", "[a-z]", "[ks]", "[-a]", "[ß]", "[^\u212a]", r"\d", r"\w",
         r"\s", r"\W", r"\b", "^", "$", r"\A", r"\Z"]
REPEATS = ["", "", "*", "+", "?", "{2}", "{1,3}", "{2,}", "*?", "+?", "??", "{,2}", "*+"]


def _pattern() -> st.SearchStrategy[str]:
    atom = st.sampled_from(ATOMS)
    return st.recursive(
        atom,
        lambda inner: st.one_of(
            st.tuples(inner, st.sampled_from(REPEATS)).map("".join),
            st.lists(inner, min_size=2, max_size=4).map("".join),
            st.tuples(inner, inner).map("|".join),
            st.tuples(st.sampled_from(["(", "(?:"]), inner).map(lambda parts: parts[0] + parts[1] + ")"),
        ),
        max_leaves=6,
    )


def _valid(find: str) -> bool:
    try:
        runs_on_re2(find)
    except Exception:  # a generated pattern neither engine takes (a repeat of an anchor)
        return False
    return True


LINES = st.lists(st.tuples(st.lists(st.sampled_from(PIECES), max_size=8), st.sampled_from(ENDS)), max_size=12)


@seed(20261127)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(find=_pattern().filter(_valid), lines=LINES, last_end=st.booleans(),
       bad=st.lists(st.sampled_from(BAD_BYTES), max_size=1), ignore_case=st.booleans(),
       skip=st.sampled_from([1, 5, find_module.LINEAR_SKIP_BYTES]))
def test_generated_patterns_find_the_same_hits_on_both_engines(find, lines, last_end, bad, ignore_case, skip):
    """`skip`: RE2 searching a few lines at a time from each line holding the text every match
    holds, as it does on a large file."""
    kept, find_module.LINEAR_SKIP_BYTES = find_module.LINEAR_SKIP_BYTES, skip
    try:
        same_hits(_text(lines, last_end, bad), find, ignore_case)
    finally:
        find_module.LINEAR_SKIP_BYTES = kept


def test_a_text_every_match_holds_is_found_outside_groups_once_and_alone():
    assert find_module.linear_pattern("[0-9]+:[0-9]+:6[0-9]", False)[1] == ":6"
    assert find_module.linear_pattern("worker-13 .* line=9[0-9] ", False)[1] == "worker-13 "
    assert find_module.linear_pattern("ab*c", False)[1] in ("a", "c")
    assert find_module.linear_pattern("x(a|b)yz", False)[1] == "yz"
    assert find_module.linear_pattern("ab|cd", False)[1] == ""


FOLDING = "k K \u212a s S \u017f ss SS ß ẞ fi FI \ufb01 i I \u0130 \u0131 st \ufb06 é É\r\n".encode()
CLASSES = "a1 ٣ é_x \u00a0 \u2028 中文 x\u0301 A\tb\r".encode()
LINE_ENDS = b"ab\r\ncd\rab\n\r\nab\rab\r\n\rcd"


def test_unicode_classes_and_word_boundaries_stay_on_the_backtracking_engine():
    for find in [r"\w+", r"\d", r"\s", r"\b\w", r"\W+", r"\S+", r"[[:alpha:]]+", r"\p{L}+", r"\X", r"[\w]"]:
        assert not same_hits(CLASSES, find), find


def test_case_folding_beyond_ascii_stays_on_the_backtracking_engine_when_ignoring_case():
    for find in ["k", "s", "ss", "fi", "i", "st", "[a-z]+", "[j-l]", "[^k]", "é", "ß", "K"]:
        assert not same_hits(FOLDING, find, ignore_case=True), find
    for find in ["[^a]", "é", "ß", "\u212a", "K", "[a-z]+"]:  # the same letters with their case
        assert same_hits(FOLDING, find), find
    for find in ["[ab]+", "[0-9]", "e|x", "[^a]"]:  # no letter that folds from beyond ASCII
        assert same_hits(FOLDING, find, ignore_case=True), find


def test_anchors_and_line_ends_find_the_same_hits_on_re2():
    for find in ["^ab", "ab$", "^cd$", "^a|d$", "b$|^c", "[^x]+", ".+", ".$", "^.", "a.*", "[^a-b]+$", "(ab|cd)+"]:
        assert same_hits(LINE_ENDS, find), find
    assert same_hits(LINE_ENDS + b"\n", "d$")
    assert same_hits(b"\r\r\nab", "^a")


def test_patterns_that_match_empty_stay_on_the_backtracking_engine():
    for find in ["^$", "x*", "|a", "^", "$", "(a|)", "a?", "(?:)", "^\\s*$"]:
        assert not same_hits(LINE_ENDS, find), find


def test_what_re2_reads_otherwise_or_not_at_all_stays_on_the_backtracking_engine():
    for find in [r"(a)\1", r"a(?=b)", r"(?<=a)b", r"(?i)ab", r"a{,2}b", r"a*+b", r"\Aab", r"ab\Z", r"[[a]b]", r"[a&&b]",
                 r"[]a]", r"a{", r"\x61", r"\n", r"(?P<x>a)"]:
        assert not same_hits(LINE_ENDS, find), find


def test_a_regular_expression_with_no_literal_runs_on_re2():
    data = b"12:34:56 a\r\n1:2:65\n9:99:61x\r"
    assert same_hits(data, "[0-9]+:[0-9]+:6[0-9]")
    assert hits(data, "[0-9]+:[0-9]+:6[0-9]", False, linear=True) == [(2, 1, 6), (3, 1, 7)]
