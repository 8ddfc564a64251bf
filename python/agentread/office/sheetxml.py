"""A worksheet's XML looked at as bytes, where parsing it would cost the whole sheet: its declared extent, its
merged ranges (after the cells), and a stream that starts at a given row.

Parsing a sheet of 200,000 rows takes seconds before its last row can be shown; finding that row's bytes takes
a tenth of that. `open_from_row` gives the parser a well-formed document of the rows from `start` on: the
sheet's own root tag, the rows' container, the shared formulas those rows may refer back to, then the sheet's
bytes from the row found.
"""

from __future__ import annotations

import io
import re
from typing import BinaryIO, Iterator

# Bytes of sheet XML inflated and scanned at a time.
SCAN_CHUNK = 1 << 20

# Bytes kept from the end of one chunk to be scanned again with the next: more than the longest tag or cell
# a match needs (a shared formula's cell is a formula and a value, well under this).
CARRY_BYTES = 8192

# The root tag and <dimension> come first in a sheet; they are looked for this far.
HEAD_BYTES = 1 << 16

_ROOT = re.compile(rb"<(?:\w+:)?worksheet\b[^>]*>")
_DIMENSION = re.compile(rb'<(?:\w+:)?dimension\s[^>]*\bref="([A-Z]+\d+(?::[A-Z]+\d+)?)"')
_MERGE = re.compile(rb'<(?:\w+:)?mergeCell\s+ref="([A-Z]+\d+(?::[A-Z]+\d+)?)"')
_ROW = re.compile(rb"<((?:\w+:)?)row\b([^>]*)>")
_ROW_NUMBER = re.compile(rb'\sr="(\d+)"')
_SHARED_MASTER = re.compile(rb'<(?:\w+:)?f\s(?=[^>]*\bt="shared")(?=[^>]*\bref=)[^>]*\bsi="(\d+)"[^>]*>')
_CELL_START = re.compile(rb"<(?:\w+:)?c\s")
_CELL_END = re.compile(rb"</(?:\w+:)?c>")


def _blocks(xml: BinaryIO) -> Iterator[tuple[bytes, int, int]]:
    """(block, keep, base): each chunk after the carried tail of the one before; a match starting at or past
    `keep` is left for the next block (it may be cut); `base` is the block's offset in the stream."""
    tail, base = b"", 0
    while True:
        chunk = xml.read(SCAN_CHUNK)
        block = tail + chunk
        keep = len(block) - CARRY_BYTES if chunk else len(block)
        yield block, keep, base
        if not chunk:
            return
        cut = max(keep, 0)
        tail, base = block[cut:], base + cut


def declared_dimension(xml: BinaryIO) -> str | None:
    """The range a sheet declares (`A1:D120`), which some writers leave out or get wrong."""
    match = _DIMENSION.search(xml.read(HEAD_BYTES))
    return match.group(1).decode() if match else None


def merged_ranges(xml: BinaryIO) -> list[str]:
    return [m.group(1).decode() for block, keep, _ in _blocks(xml)
            for m in _MERGE.finditer(block) if m.start() < keep]


def open_from_row(xml: BinaryIO, start: int) -> BinaryIO | None:
    """The sheet from its first row numbered `start` or more, or None where that cannot be found from the bytes
    (a row without its number, an unexpected layout): the caller then parses the sheet from its start."""
    head = b""
    masters: dict[bytes, bytes] = {}  # shared formula id → its master cell, which later cells refer to
    for block, keep, base in _blocks(xml):
        if not head:
            head = block[:HEAD_BYTES]
        for match in _ROW.finditer(block):
            if match.start() >= keep:
                break  # seen whole in the next block
            number = _ROW_NUMBER.search(match.group(2))
            if number is None:
                return None
            if int(number.group(1)) >= start:
                _collect_masters(block, masters, match.start())
                return _document(head, match.group(1), masters, start, block[match.start():], xml)
        _collect_masters(block, masters, keep)
    return _document(head, b"", masters, start, b"", xml) if head else None


def _collect_masters(block: bytes, masters: dict[bytes, bytes], before: int) -> None:
    """The shared formula masters whose tag starts before `before` (a cell may end past it)."""
    if b'"shared"' not in block:
        return
    for match in _SHARED_MASTER.finditer(block):
        if match.start() >= before:
            break
        begin = block.rfind(b"<", 0, match.start())
        end = _CELL_END.search(block, match.end())
        if begin >= 0 and _CELL_START.match(block, begin) and end:
            masters[match.group(1)] = block[begin:end.end()]


def _document(head: bytes, prefix: bytes, masters: dict[bytes, bytes], start: int, rest: bytes,
              xml: BinaryIO) -> BinaryIO | None:
    root = _ROOT.search(head)
    if root is None:
        return None
    # The masters ride in a row numbered just before the window: the parser learns them, the reader skips it.
    carrier = (b'<%srow r="%d">%s</%srow>' % (prefix, start - 1, b"".join(masters.values()), prefix)
               if masters else b"")
    opening = b'<?xml version="1.0" encoding="UTF-8"?>' + root.group(0) + b"<%ssheetData>" % prefix + carrier
    if not rest:  # no row from `start` on: an empty sheet body
        xml.close()
        root_name = re.match(rb"<((?:\w+:)?worksheet)", root.group(0)).group(1)
        return io.BytesIO(opening + b"</%ssheetData></%s>" % (prefix, root_name))
    return _Joined(opening + rest, xml)


class _Joined(io.RawIOBase):
    """`first`, then the rest of `stream`: a file object a streaming parser can read."""

    def __init__(self, first: bytes, stream: BinaryIO):
        self.first = first
        self.stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self.first[:len(buffer)] if self.first else self.stream.read(len(buffer))
        self.first = self.first[len(data):]
        buffer[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self.stream.close()
        super().close()
