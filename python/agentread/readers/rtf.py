"""RTF documents, read as numbered lines of their text (striprtf: paragraphs, tables' cells,
the document's code page and \\u escapes; pictures and fonts left out).

RTF is text, so `raw: true` reads its markup as written.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterator

from agentread.find import Hit, Matcher, Reached
from agentread.readers import Source
from agentread.readers.office.document import Rendered, search_lines, show
from agentread.request import ReadRequest
from agentread.result import ReadError, ReadResult

# An escaped backslash (`\\`), handed to striprtf as the byte it stands for (`\'5c`): striprtf looks
# for `\pict` and `\bin` as strings before it reads the markup, and where both occur drops what
# follows each `\pict` up to a `}`, so that a document speaking of them (`\\pict`, as the RTF
# specification does) lost its text from there. Backslashes pair from the left, as RTF reads them.
ESCAPED_BACKSLASH = re.compile(r"\\\\")


def read(source: Source, request: ReadRequest) -> ReadResult:
    return show(_render(source), request, source.name, "rtf")


def search(source: Source, request: ReadRequest, matcher: Matcher) -> tuple[str, Iterator[Hit | Reached]]:
    return search_lines("rtf", _render(source).lines, request, matcher)


def _render(source: Source) -> Rendered:
    # RTF is 7-bit: other bytes are the code page's, which the document names and striprtf decodes.
    markup = source.whole()[source.bom:].decode(source.encoding or "latin-1", errors="replace")
    doc = Rendered()
    doc.add(_text(markup, source.name))
    return doc


@lru_cache(maxsize=1)  # the document read last: paging through a long one takes its text out once
def _text(markup: str, name: str) -> str:
    from striprtf.striprtf import rtf_to_text

    try:
        text = rtf_to_text(ESCAPED_BACKSLASH.sub(r"\\'5c", markup), errors="replace")
    except (MemoryError, RecursionError):
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged document fails striprtf in many ways
        raise ReadError("damaged_document", f"{name} is an RTF document whose text could not be taken "
                        f"out ({type(exc).__name__}: {str(exc)[:200]}). Read its markup with raw=true.") from None
    return text.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")
