"""Where a value of an output lies in the notebook file, as the lines a raw read (raw=true) numbers:
so a summary of a figure can name the call that shows its whole JSON.

A value is found by its key and checked by its content: each place the file writes the key as a key
is decoded (by json, from there) and compared with the value the reader parsed, so a key quoted in a
string, in an output's metadata or in another output never passes for it.
"""

from __future__ import annotations

import bisect
import json
import re
from typing import Any

# A key's value is decoded from a window of the file this long at first, doubled until it holds
# the whole value: a figure's JSON is a few KB to a few MB, the file up to hundreds of MB, so the
# bytes decoded stay within twice the value's.
_FIRST_WINDOW_BYTES = 4096

_DECODER = json.JSONDecoder()


class FileJson:
    """The bytes of a notebook as a raw read shows them, searched for values on demand."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._found: dict[str, list[tuple[int, int, Any]]] = {}  # key → (start, end, value) per place
        self._counted: list[tuple[int, int]] = [(0, 1)]  # (byte offset, its line number), sorted

    def lines_of(self, key: str, value: Any) -> tuple[int, int] | None:
        """The first and last line (1-based, counted as a raw read counts them) of the first place
        the file holds `value` under `key`, or None when it holds it nowhere (an output the editor
        has not saved yet, a notebook upgraded from an older version)."""
        for start, end, found in self._places(key):
            try:
                same = found == value
            except RecursionError:  # values nested past Python's limit are compared no further
                return None
            if same:
                return self._line_at(start), self._line_at(end - 1)
        return None

    def _places(self, key: str) -> list[tuple[int, int, Any]]:
        if key not in self._found:
            # Not after a backslash: there the quote is escaped, in a string. The quote after the
            # key cannot be escaped (it would follow a backslash, not the key's last character).
            pattern = re.compile(rb'(?<!\\)"' + re.escape(json.dumps(key).encode()[1:-1]) + rb'"[ \t\r\n]*:[ \t\r\n]*')
            self._found[key] = [place for match in pattern.finditer(self._data)
                                if (place := self._decode(match.end())) is not None]
        return self._found[key]

    def _decode(self, start: int) -> tuple[int, int, Any] | None:
        window = _FIRST_WINDOW_BYTES
        while True:
            piece = self._data[start:start + window]
            text = piece.decode("utf-8", "surrogateescape")
            whole = start + window >= len(self._data)
            try:
                value, end = _DECODER.raw_decode(text)
            except (ValueError, RecursionError):
                if whole:
                    return None  # not a JSON value even to the file's end
                window *= 2
                continue
            if end == len(text) and not whole:  # a number may go on past the window
                window *= 2
                continue
            return start, start + len(text[:end].encode("utf-8", "surrogateescape")), value

    def _line_at(self, offset: int) -> int:
        """The number of the line that holds byte `offset`: LF, CRLF and a lone CR each end a line.
        Counted on from the nearest offset counted before, so the file is scanned about once."""
        at = bisect.bisect_right(self._counted, (offset, float("inf"))) - 1
        since, line = self._counted[at]
        data = self._data
        line += data.count(b"\n", since, offset) + data.count(b"\r", since, offset) - data.count(b"\r\n", since, offset)
        bisect.insort(self._counted, (offset, line))
        return line
