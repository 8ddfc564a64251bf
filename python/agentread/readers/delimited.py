"""CSV and TSV files: numbered text like any text file (a line is a row, as in the editor, and a
huge file is streamed), with the header row kept in view when a window starts below it, so the model
can tell the columns of row 90,000 apart without reading line 1 again.

These formats have no magic bytes: a file is taken as delimited by its name and by its first line
holding the delimiter; anything else is plain text.
"""

from __future__ import annotations

import os
from typing import BinaryIO

from agentread.readers import Source
from agentread.readers.text import LINE_END, WIDE_ENCODINGS
from agentread.readers.text import read as read_text_source
from agentread.request import ReadRequest
from agentread.result import ReadResult, TextPart

DELIMITERS = {".csv": ",", ".tsv": "\t", ".tab": "\t"}

# The header row shown is cut at this many characters: enough to name a few dozen columns, and small
# beside the window's output budget, which it comes on top of.
MAX_HEADER_CHARS = 500

# Bytes read to find the header line: the cut header in any encoding, with room to find where
# the line ends.
HEADER_BYTES = MAX_HEADER_CHARS * 4


def is_delimited(path: str) -> bool:
    """Whether a text file is read as delimited rows: by its name (the first line
    decides the rest)."""
    return os.path.splitext(path)[1].lower() in DELIMITERS


def read(source: Source, request: ReadRequest) -> ReadResult:
    """The reader seam's delimited reader: a text window, the header row in view."""
    return add_header(read_text_source(source, request), source.stream, source.path, source.encoding or "utf-8",
                      source.bom)


def add_header(result: ReadResult, source: BinaryIO, path: str, encoding: str, bom: int) -> ReadResult:
    """Puts the header row before a window that does not start at line 1 of a CSV/TSV file."""
    delimiter = DELIMITERS.get(os.path.splitext(path)[1].lower())
    if (delimiter is None or result.is_error or not result.start_line or result.start_line == 1
            or encoding.startswith(WIDE_ENCODINGS)):
        return result
    source.seek(bom)
    head = source.read(HEADER_BYTES)
    line = LINE_END.split(head, 1)[0].decode(encoding, errors="replace")
    if delimiter not in line:
        return result
    if len(line) > MAX_HEADER_CHARS or (len(head) == HEADER_BYTES and not LINE_END.search(head)):
        line = line[:MAX_HEADER_CHARS] + " […]"
    result.content.insert(0, TextPart(f"[Header row (line 1): {line}]"))
    result.shown = {**(result.shown or {}), "headerLine": 1}
    return result
