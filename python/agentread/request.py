"""The read request, validated by hand from plain JSON params (a malformed one is a
JSON-RPC -32602)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agentread.limits import MAX_LINE_CHARS, MAX_LINES, MAX_OUTPUT_BYTES, MIN_REPLY_BYTES, REPLY_FRAME_BYTES
from agentread.workspace import CONSENT_REASONS


class InvalidParams(ValueError):
    """The request itself is malformed: the caller broke the contract, not the file."""


@dataclass(frozen=True)
class ReadRequest:
    path: str
    offset: int | None = None  # 1-based first line; negative counts from the end (-1: the last line)
    limit: int | None = None  # number of lines, capped at MAX_LINES
    pages: str | None = None  # PDF page range, "3" or "10-20"
    cells: str | None = None  # notebook cells, "4", "2-7", "1,4-6", a cell id, or "outline"
    consent: frozenset = frozenset()  # what the user approved the read despite (workspace.CONSENT_REASONS)
    raw: bool = False  # read a notebook (or any text-based format) as its plain numbered source text
    max_bytes: int | None = None  # the reply's text in UTF-8 bytes at most, as the host passes it on; None: no limit
    column: int | None = None  # 1-based character of the first line where a cut line is read on
    outline: bool = False  # the document's structure (headings, symbols, bookmarks, sheets) instead of its text
    find: str | None = None  # search the file (or many files) for this text; hits instead of a window
    regex: bool = False  # `find` is a regular expression
    ignore_case: bool = False  # `find` matches regardless of case
    since: str | None = None  # a `version` of an earlier read: answer what changed since it
    view: str | None = None  # "image": PDF pages rendered as pictures, each with its text; "text": no pictures
    char: int | None = None  # an XLSX cell read (`column`): the 1-based character of its first cell to start from
    range: str | None = None  # XLSX: an A1 range of one sheet ("Data!B2:F40", "B2:F40" of the first sheet)

    @property
    def output_bytes(self) -> int:
        """The text budget of a reader's window: MAX_OUTPUT_BYTES, or what the caller's reply limit
        leaves once the lines that frame a window have their room."""
        if self.max_bytes is None:
            return MAX_OUTPUT_BYTES
        return max(1, min(self.max_bytes, MAX_OUTPUT_BYTES) - REPLY_FRAME_BYTES)

    @property
    def line_limit(self) -> int:
        return MAX_LINES if self.limit is None else min(self.limit, MAX_LINES)

    @property
    def from_end(self) -> bool:
        return self.offset is not None and self.offset < 0

    @property
    def first_line(self) -> int:
        """The first line asked for by number (a reader that allows counting from the end
        uses line_from)."""
        return self.offset or 1

    def line_from(self, total: int) -> int:
        """The first line in a text of `total` lines: a negative offset counts back from its end,
        and one reaching back past line 1 starts there (as `tail -n` does on a short file)."""
        return max(1, total + 1 + self.offset) if self.from_end else self.first_line


# The longest `find`: a hit is within one line, of which a read shows at most this much at once; a
# longer text is more than any search needs, and what a search compiles grows with it.
MAX_FIND_CHARS = MAX_LINE_CHARS

# The longest `pages`, `cells`, `since`, `view` or `range`: a list of ranges, a sheet name (at most
# 31 characters), a cell id (at most 64) or a version (16) fits many times over; each is quoted
# back in the errors that refuse it, and a sheet name is looked for in every sheet's.
MAX_ARGUMENT_CHARS = 1000

# A page (or slide, sheet) range as `pages` spells it: "3", "10-20" or "10-" (to the end).
PAGE_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d*)\s*)?$")

# Of a value refused, what its error quotes: enough to see what was sent.
MAX_QUOTED_VALUE_CHARS = 80

_FIELDS = {"path", "offset", "limit", "pages", "cells", "consent", "raw", "maxBytes", "column", "outline", "find",
           "regex", "ignoreCase", "since", "view", "char", "range"}
VIEWS = ("text", "image")


def _integer(params: dict[str, Any], name: str, what: str) -> int | None:
    value = params.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise InvalidParams(f"'{name}' must be {what}, got {quoted(value)}")
    return value


def quoted(value: Any) -> str:
    """A value as an error quotes it: its repr, cut to MAX_QUOTED_VALUE_CHARS."""
    text = repr(value)
    return text if len(text) <= MAX_QUOTED_VALUE_CHARS else f"{text[:MAX_QUOTED_VALUE_CHARS]}…"


def _offset(params: dict[str, Any]) -> int | None:
    value = _integer(params, "offset", "a line number")
    if value == 0:
        raise InvalidParams("'offset' must be a 1-based line number, or negative to count from the end "
                            "(-1 is the last line), got 0")
    return value


def _positive_int(params: dict[str, Any], name: str) -> int | None:
    value = _integer(params, name, "a positive integer")
    if value is not None and value < 1:
        raise InvalidParams(f"'{name}' must be a positive integer (1-based), got {value}")
    return value


def _optional_str(params: dict[str, Any], name: str) -> str | None:
    value = params.get(name)
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # models often send pages: 3
    if not isinstance(value, str):
        raise InvalidParams(f"'{name}' must be a string like \"3\" or \"2-7\", got {quoted(value)}")
    value = value.strip()
    if len(value) > MAX_ARGUMENT_CHARS:
        raise InvalidParams(f"'{name}' is {len(value):,} characters long; at most {MAX_ARGUMENT_CHARS:,} are "
                            "taken. Send a shorter value: ranges such as \"2-7\" for pages or cells, the version a "
                            "read gave for since.")
    return value or None


def parse_request(params: Any) -> ReadRequest:
    """Build a ReadRequest from JSON params or raise InvalidParams saying what is wrong."""
    if not isinstance(params, dict):
        raise InvalidParams("params must be an object like {\"path\": \"src/main.py\"}")
    unknown = set(params) - _FIELDS
    if unknown:
        raise InvalidParams(f"unknown parameter(s): {', '.join(sorted(unknown))}; "
                            f"known: {', '.join(sorted(_FIELDS))}")
    path = params.get("path")
    if not isinstance(path, str) or not path:
        raise InvalidParams("'path' is required and must be a non-empty string")
    return ReadRequest(path=path, offset=_offset(params), limit=_positive_int(params, "limit"),
                       pages=_optional_str(params, "pages"), cells=_optional_str(params, "cells"),
                       consent=CONSENT_REASONS if _flag(params, "consent") else frozenset(), raw=_flag(params, "raw"),
                       max_bytes=max_bytes(params), column=_positive_int(params, "column"),
                       outline=_flag(params, "outline"), find=_find(params), regex=_flag(params, "regex"),
                       ignore_case=_flag(params, "ignoreCase"), since=_optional_str(params, "since"),
                       view=_view(params), char=_positive_int(params, "char"), range=_optional_str(params, "range"))


def _find(params: dict[str, Any]) -> str | None:
    value = params.get("find")
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise InvalidParams(f"'find' must be a non-empty string to search for, got {quoted(value)}")
    if len(value) > MAX_FIND_CHARS:
        raise InvalidParams(f"'find' is {len(value):,} characters long; at most {MAX_FIND_CHARS:,} are taken. Search "
                            f"for a distinctive part of it, such as find={value[:MAX_QUOTED_VALUE_CHARS]!r}.")
    if not params.get("regex") and ("\n" in value or "\r" in value):  # a hit is within one line
        longest = max(value.splitlines(), key=len)
        raise InvalidParams(f"find matches within one line, and {quoted(value)} holds a line break. Search for "
                            f"one line of it, such as find={longest!r}.")
    return value


def _view(params: dict[str, Any]) -> str | None:
    value = _optional_str(params, "view")
    if value is not None and value not in VIEWS:
        raise InvalidParams(f"'view' must be one of {', '.join(VIEWS)}, got {quoted(value)}")
    return value


def max_bytes(params: dict[str, Any]) -> int | None:
    """`maxBytes`, the reply limit of the caller's host, raised to MIN_REPLY_BYTES."""
    value = _positive_int(params, "maxBytes")
    return None if value is None else max(value, MIN_REPLY_BYTES)


def _flag(params: dict[str, Any], name: str) -> bool:
    value = params.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InvalidParams(f"'{name}' must be true or false, got {quoted(value)}")
    return value
