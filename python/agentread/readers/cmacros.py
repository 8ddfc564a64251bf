"""The macros C and C++ headers wrap their declarations in, blanked before an outline's parse.

tree-sitter parses C without running its preprocessor, so an unexpanded macro where a keyword or
an attribute would stand (`__BEGIN_DECLS`, `ZEXTERN int ZEXPORT deflate OF((...))`, `f(void)
__THROW __nonnull ((1))`, `_GLIBCXX20_CONSTEXPR bool empty() const _GLIBCXX_NOEXCEPT`) breaks the
declaration it sits in and, in error recovery, its neighbours. Where a parse has errors, the
file's own tokens name its macros, by where only a macro can stand:

- alone on its line, followed by no name, `(` or operator, and not the last value of an enum
  (`__BEGIN_DECLS`, `_GLIBCXX_END_NAMESPACE_VERSION`);
- just before a keyword that opens a declaration or names a built-in type (`ZEXTERN int`);
- between a namespace's name and its `{`, or between `class` and the class's name, with its own
  arguments if it has some (`namespace std _GLIBCXX_VISIBILITY(default) {`);
- between a parameter list's `)` and the `;`, `{` or `:` ending the declaration, with its own
  arguments if it has some (`__THROW`, `__nonnull ((1))`, `_GLIBCXX_NOEXCEPT_IF(...)`);
- after a `*`, or between a type and a function's name, where C takes only qualifiers
  (`char * ZEXPORT zlibVersion`, `gzFile ZEXPORT gzopen (`), or before both, where a
  declaration has no second type (`_GLIBCXX_ABI_TAG_CXX11 iterator erase(`);
- between a function's name and its doubly parenthesised parameters (`deflate OF((...))`): a
  wrapper, whose parentheses go and whose parameters stay.

Only names spelled as macros are (upper case, or reserved: `__x`, `_X`), never a keyword the
grammar knows. Each name found is blanked wherever the code uses it (not in comments, strings or
directives), with spaces of the same length, so that every byte and line keeps its place and the
outline's lines are the file's.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from agentread.cancel import checkpoint

# Spelled as a macro: reserved to the implementation (`__THROW`, `_GLIBCXX_NOEXCEPT`) or in upper
# case of two characters or more (`ZEXTERN`, `OF`).
MACRO_NAME = re.compile(r"__\w+|_[A-Z]\w*|[A-Z][A-Z0-9_]+")
NAME = re.compile(r"[A-Za-z_]\w*")
# A preprocessor directive: a line that opens with `#`, with the lines a backslash continues it on.
DIRECTIVE_LINES = re.compile(rb"^[ \t]*#(?:[^\n]*\\\r?\n)*[^\n]*", re.M)

# Words that open a declaration or name a built-in type: a name just before one of them is no
# type (a declaration has one) and no declarator (one is followed by punctuation).
DECLARATION_WORDS = frozenset(
    "extern static inline typedef template namespace struct union enum class virtual explicit friend "
    "constexpr consteval constinit thread_local void char short int long float double signed unsigned bool "
    "_Bool auto register".split())
# Types C builds in, which tree-sitter parses as one token (`primitive_type`): one before a name
# makes it a declarator.
BUILT_IN_TYPES = frozenset("void char short int long float double signed unsigned bool _Bool".split())
# Tokens that end what follows a parameter list: a declaration (`;`), a body (`{`), a constructor's
# initialisers (`:`), `= 0`/`= default`, the next declarator, a trailing return or qualifier.
AFTER_PARAMETERS = frozenset(
    "; { : = , -> const volatile noexcept override final throw & && try requires".split())

# What the tokens pass over: comments, and literals (each one token), as the parser finds them.
COMMENTS = ("comment",)
LITERALS = ("string_literal", "char_literal", "raw_string_literal")  # the last C++'s alone
# A token: a name, a number, a two-character operator that tells a rule apart, or one character.
TOKEN = re.compile(rb"[A-Za-z_]\w*|\d[\w.]*|::|->|&&|[^\sA-Za-z_\d]")


class Token(NamedTuple):
    text: str
    start: int  # byte offsets in the file
    end: int
    row: int  # the line it starts on, from 0
    word: bool  # a name or keyword, not punctuation or a literal


def masked(data: bytes, tree, keywords: frozenset[str]) -> bytes | None:
    """`data` with the macros its declarations are wrapped in blanked, the same length; None when
    it names none. `tree` is its parse (with errors), `keywords` the words the grammar knows."""
    tokens = _tokens(data, tree)
    pairs = _pairs(tokens)
    words, wrappers = _macros(tokens, pairs, keywords)
    if not words and not wrappers:
        return None
    out = bytearray(data)
    i = 0
    while i < len(tokens):
        if i % 10_000 == 0:
            checkpoint()
        token, close = tokens[i], pairs[i + 1] if i + 1 < len(tokens) else None
        if token.text in wrappers and close is not None:  # `OF((a, b))` → `  (a, b) `
            for blank in (token, tokens[i + 1], tokens[close]):
                _blank(out, blank.start, blank.end)
        elif token.text in words:  # with its arguments, if it has some
            _blank(out, token.start, tokens[close].end if close is not None and close > i else token.end)
            i = close if close is not None and close > i else i
        i += 1
    return bytes(out)


def _macros(tokens: list[Token], pairs: list[int | None], keywords: frozenset[str]) -> tuple[set[str], set[str]]:
    """The names that stand where only a macro can (module doc): (words blanked with their
    arguments, wrappers blanked around theirs)."""
    words: set[str] = set()
    wrappers: set[str] = set()

    def macro(i: int) -> bool:
        return 0 <= i < len(tokens) and _macro_name(tokens[i], keywords)

    def plain(i: int) -> bool:  # a name, neither keyword nor spelled as a macro
        return 0 <= i < len(tokens) and tokens[i].word and tokens[i].text not in keywords \
            and tokens[i].text not in DECLARATION_WORDS and not _macro_name(tokens[i], keywords)

    def text(i: int) -> str:
        return tokens[i].text if 0 <= i < len(tokens) else ""

    def after_parameters(i: int) -> list[str]:
        """The macro names from tokens[i] on (each with its arguments, if any) when they run up to
        what ends the part after a parameter list; none otherwise."""
        run = []
        while macro(i):
            run.append(tokens[i].text)
            i += 1
            if text(i) == "(":
                if pairs[i] is None:
                    return []
                i = pairs[i] + 1
        return run if text(i) in AFTER_PARAMETERS else []

    for i, token in enumerate(tokens):
        if i % 10_000 == 0:
            checkpoint()
        if not macro(i):
            continue
        before, after = text(i - 1), text(i + 1)
        past = pairs[i + 1] + 1 if after == "(" and pairs[i + 1] is not None else i + 1  # past its arguments
        opened = pairs[i - 1] if before == ")" else None  # the `(` of the group just before
        alone = (i == 0 or tokens[i - 1].row < token.row) and (i + 1 == len(tokens) or tokens[i + 1].row > token.row)
        if alone and not plain(i + 1) and after not in ("(", "*", "&", "::", "<", "=", ";", ",") \
                and not (before in ("{", ",") and after == "}"):  # (the last value of an enum)
            words.add(token.text)
        elif after in DECLARATION_WORDS:
            words.add(token.text)
        elif text(i - 2) == "namespace" and plain(i - 1) and text(past) == "{":
            words.add(token.text)  # between a namespace's name and its body
        elif before in ("class", "struct", "union") and plain(past):
            words.add(token.text)  # between `class` and the class's name
        elif opened is not None and plain(opened - 1) and (run := after_parameters(i)):
            words.update(run)  # after a parameter list: a name's, not that of `if (...)`
        elif before in ("*", "&") and plain(i + 1):
            words.add(token.text)
        elif (before in BUILT_IN_TYPES or plain(i - 1)) and text(i - 2) not in ("struct", "union", "enum", "class") \
                and plain(i + 1) and (text(i + 2) == "(" or macro(i + 2) and text(i + 3) == "("):
            words.add(token.text)  # between a function's type and its name
        elif plain(i + 1) and plain(i + 2) and text(i + 3) == "(" and before not in ("struct", "union", "class"):
            words.add(token.text)  # before a function's type and name
        elif after == "(" and text(i + 2) == "(" and plain(i - 1) and i >= 2 \
                and (tokens[i - 2].word or text(i - 2) in ("*", "&")):
            wrappers.add(token.text)  # between a function's name and its parameters
    return words - wrappers, wrappers


def _pairs(tokens: list[Token]) -> list[int | None]:
    """For each `(` and `)`, the index of the parenthesis that pairs with it; None for another
    token or one unpaired."""
    pairs: list[int | None] = [None] * len(tokens)
    opened: list[int] = []
    for i, token in enumerate(tokens):
        if token.text == "(":
            opened.append(i)
        elif token.text == ")" and opened:
            j = opened.pop()
            pairs[i], pairs[j] = j, i
    return pairs


def _macro_name(token: Token, keywords: frozenset[str]) -> bool:
    return token.word and token.text not in keywords and MACRO_NAME.fullmatch(token.text) is not None


def _blank(out: bytearray, start: int, end: int) -> None:
    """Bytes start..end made spaces, line ends kept."""
    for k in range(start, end):
        if out[k] not in b"\r\n":
            out[k] = 0x20


def _tokens(data: bytes, tree) -> list[Token]:
    """The code's tokens in order: names, numbers and punctuation, a literal one token; comments and
    preprocessor directives left out. Comments and literals are the parser's; the directives are
    taken by their lines (`#` first, continued by a backslash), for in error recovery the parser may
    take a directive's words for code."""
    from tree_sitter import Query, QueryCursor

    language = tree.language
    kinds = [(kind, "comment" if kind in COMMENTS else "literal") for kind in COMMENTS + LITERALS
             if language.id_for_node_kind(kind, True) is not None]
    found = QueryCursor(Query(language, " ".join(f"({kind}) @{name}" for kind, name in kinds))).captures(tree.root_node)
    spans = sorted([(node.start_byte, node.end_byte, False) for node in found.get("comment", [])]
                   + [(node.start_byte, node.end_byte, True) for node in found.get("literal", [])]
                   + [(m.start(), m.end(), False) for m in DIRECTIVE_LINES.finditer(data)])
    tokens: list[Token] = []
    row, counted = 0, 0  # the line of byte `counted`

    def add(start: int, end: int, word: bool) -> None:
        nonlocal row, counted
        row, counted = row + data.count(b"\n", counted, start), start
        tokens.append(Token(data[start:end].decode("utf-8", errors="replace"), start, end, row, word))

    at = 0
    for start, end, literal in [*spans, (len(data), len(data), False)]:
        if end <= at:
            continue  # inside a span already passed (a literal in a directive)
        for match in TOKEN.finditer(data, at, max(at, start)):
            add(match.start(), match.end(), NAME.fullmatch(match[0].decode("ascii", errors="replace")) is not None)
        if literal and start >= at:
            add(start, end, False)
        at = max(at, end)
        checkpoint()
    return tokens
