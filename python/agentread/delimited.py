"""CSV and TSV files: numbered text like any text file (a line is a row, as in the editor, and a huge file is
streamed), with the header row kept in view when a window starts below it, so the model can tell the columns
of row 90,000 apart without reading line 1 again.

These formats have no magic bytes: a file is taken as delimited by its name and by its first line holding the
delimiter; anything else is plain text.
"""

from __future__ import annotations

import os
from typing import BinaryIO

from agentread.limits import MAX_LINE_CHARS
from agentread.result import ReadResult, TextPart

DELIMITERS = {".csv": ",", ".tsv": "\t", ".tab": "\t"}

# Encodings whose line ends are not single bytes: their header is not looked for.
WIDE_ENCODINGS = ("utf-16", "utf-32")

# Bytes read to find the header line: a header longer than a cut line would not be shown whole anyway.
HEADER_BYTES = MAX_LINE_CHARS * 4


def add_header(result: ReadResult, source: BinaryIO, path: str, encoding: str, bom: int) -> ReadResult:
    """Puts the header row before a window that does not start at line 1 of a CSV/TSV file."""
    delimiter = DELIMITERS.get(os.path.splitext(path)[1].lower())
    if (delimiter is None or result.is_error or not result.start_line or result.start_line == 1
            or encoding.startswith(WIDE_ENCODINGS)):
        return result
    source.seek(bom)
    head = source.read(HEADER_BYTES)
    line = head.split(b"\n", 1)[0].split(b"\r", 1)[0].decode(encoding, errors="replace")
    if delimiter not in line:
        return result
    if len(line) > MAX_LINE_CHARS or (len(head) == HEADER_BYTES and b"\n" not in head and b"\r" not in head):
        line = line[:MAX_LINE_CHARS] + " […]"
    result.content.insert(0, TextPart(f"[Header row (line 1): {line}]"))
    return result
