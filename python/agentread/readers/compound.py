"""Compound files (OLE2, Microsoft's structured storage): told apart by the streams they hold
(office_detect.ole2_contents, by olefile) and read by the reader of what they are: an Excel 97-2003
workbook (office/xls.py) and an Outlook message (mail.py). A Word or PowerPoint 97-2003 file and an
encrypted OOXML file are refused, saying what reads them (office.refuse_legacy).

The request's fields are checked here, once the kind is known, as an archive checks its own: a
message's attachment is checked by its own kind's row.
"""

from __future__ import annotations

import struct
from typing import Iterator

from agentread.find import Hit, Matcher, Reached
from agentread.readers import Source
from agentread.readers.fields import check_fields
from agentread.readers.office_detect import ole2_contents
from agentread.request import ReadRequest
from agentread.result import ReadError, ReadResult

# What olefile raises on a compound file whose header or directory cannot be read.
DAMAGED = (OSError, ValueError, IndexError, KeyError, struct.error, EOFError)

# What each kind read here is, for the fields it takes (readers/fields.py).
FIELDS = {"xls": "spreadsheet", "msg": "mail"}


def read(source: Source, request: ReadRequest) -> ReadResult:
    """The reader seam's compound file reader: a read, or with `outline: true` an outline."""
    what, data = _contents(source, request)
    if what == "xls":
        from agentread.readers.office.xls import outline_xls, read_xls

        return (outline_xls if request.outline else read_xls)(data, request, source.name)
    from agentread.readers.mail import read_msg

    return read_msg(source, request, data)


def search(source: Source, request: ReadRequest, matcher: Matcher) -> tuple[str, Iterator[Hit | Reached]]:
    """The reader seam's search of a compound file: an Excel 97-2003 workbook's cells, an Outlook
    message's lines."""
    what, data = _contents(source, request)
    if what == "xls":
        from agentread.readers.office.xls import search_xls

        return search_xls(data, request, matcher)
    from agentread.readers.mail import search_msg

    return search_msg(source, request, matcher, data)


def _contents(source: Source, request: ReadRequest) -> tuple[str, bytes]:
    """"xls" or "msg", the request's fields checked for it, and the file's bytes; a ReadError for
    any other compound file."""
    from agentread.readers.office import refuse_legacy

    data = source.whole()
    try:
        what = ole2_contents(data)
    except DAMAGED as exc:
        raise ReadError("damaged_office", f"{source.name} begins as an OLE2 compound file (an Office 97-2003 file "
                        f"or an Outlook message) but its directory cannot be read ({type(exc).__name__}: "
                        f"{str(exc)[:200]}). It may be damaged or cut short; try another copy of the file.") from None
    if what not in FIELDS:
        raise refuse_legacy(what, source.name, source.size)
    if source.member is None:
        check_fields(FIELDS[what], source.name, request)
    elif what != "msg":
        raise ReadError("not_found", f"{request.path} does not exist: {source.path} is an Excel 97-2003 workbook, "
                        f"not a folder, an archive or a mail. Read {source.path} itself.")
    return what, data
