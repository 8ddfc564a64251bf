"""Which request fields each kind of file takes, in each mode (a read, `outline: true`, `find`),
and the error a field it does not take gets (`not_for_this_kind`). A field passed over in silence
(page 3 of a text file, cell 2 of a script) would let a model believe it saw what it asked for.

The check runs once a read knows the file's kind, before its reader: readers.Row.read for the
rows of READERS (an archive member by its own kind's row), the engine for a folder and a notebook
open in the editor, readers/archive.py for an archive's listing, readers/compound.py and
readers/mail.py once a compound file's or a mail's kind is known (an attachment by its own kind's
row). `since`, `consent`, `maxBytes` and
`view: "text"` (which drops pictures) apply to every kind and are not checked.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentread.request import ReadRequest
from agentread.result import ReadError

NOT_FOR_THIS_KIND = "not_for_this_kind"


@dataclass(frozen=True)
class Takes:
    """A kind of file: what it is called, the fields each mode of it acts on (None: that mode is
    refused by its own error, `no_outline`, `find_unsupported`, `find_in_directory`), and how it is
    read."""

    what: str  # "a text file"
    read: frozenset[str]
    outline: frozenset[str] | None
    find: frozenset[str] | None
    how: str  # the arguments that read it, for the message


def _set(*fields: str) -> frozenset[str]:
    return frozenset(fields)


# `outline: true` pages the entries of every kind's outline with offset and limit; `find` takes the
# search and what scopes it (`limit` counts hits).
_OUTLINE = _set("offset", "limit")
_LINES = _set("offset", "limit", "column")
_FIND_LINES = _set("offset", "column", "limit")

KINDS: dict[str, Takes] = {
    # raw sends any text-based file here, in every mode: a notebook's JSON is searched as text.
    "text": Takes("a text file", _LINES | {"raw"}, _OUTLINE | {"raw"}, _FIND_LINES | {"raw"},
                  "read it by lines with offset and limit (column continues a cut line)"),
    "pdf": Takes("a PDF", _LINES | {"pages", "view"}, _OUTLINE, _FIND_LINES | {"pages"},
                 'read it by pages (pages="3"), by lines with offset and limit, or as pictures with view="image"'),
    "image": Takes("an image", _set("view"), None, None, "read it whole, with no other argument"),
    "notebook": Takes("a notebook", _LINES | {"cells"}, _OUTLINE | {"cells"}, _FIND_LINES | {"cells"},
                      'read it by cells (cells="2-7"), by rendered lines with offset and limit, or as its JSON '
                      "source with raw=true"),
    "document": Takes("a Word document (DOCX)", _LINES, _OUTLINE, _FIND_LINES,
                      "read it by lines with offset and limit (its outline lists the headings' lines)"),
    "presentation": Takes("a PowerPoint deck (PPTX)", _LINES | {"pages"}, _OUTLINE, _FIND_LINES | {"pages"},
                          'read it by slides (pages="2") or by lines with offset and limit'),
    "spreadsheet": Takes("an Excel workbook (XLSX or XLS)", _LINES | {"pages", "char", "range"}, _OUTLINE,
                         _FIND_LINES | {"pages"},
                         'read it by sheets (pages="2" or the sheet\'s name), rows with offset and limit, a range '
                         'of cells (range="Data!B2:F40"), and a row\'s cells with offset and column'),
    "odt": Takes("an OpenDocument text (ODT)", _LINES, _OUTLINE, _FIND_LINES,
                 "read it by lines with offset and limit (its outline lists the headings' lines)"),
    "odp": Takes("an OpenDocument presentation (ODP)", _LINES | {"pages"}, _OUTLINE, _FIND_LINES | {"pages"},
                 'read it by slides (pages="2") or by lines with offset and limit'),
    "ods": Takes("an OpenDocument spreadsheet (ODS)", _LINES | {"pages"}, _OUTLINE, _FIND_LINES | {"pages"},
                 'read it by sheets (pages="2" or the sheet\'s name) and by lines with offset and limit'),
    "epub": Takes("an EPUB book", _LINES | {"pages"}, _OUTLINE, _FIND_LINES | {"pages"},
                  'read it by chapters in reading order (pages="3"; its outline maps the table of contents to '
                  "them) or by lines with offset and limit"),
    "mail": Takes("a mail message (EML or Outlook MSG)", _LINES, _OUTLINE, _FIND_LINES,
                  "read it by lines with offset and limit, and an attachment by its path after the mail's "
                  "(mail.eml/attachments/report.pdf)"),
    "rtf": Takes("an RTF document", _LINES, None, _FIND_LINES, "read it by lines with offset and limit"),
    "directory": Takes("a folder", _OUTLINE, _OUTLINE, None,
                       "list it with offset and limit (they count entries), and read a file in it by its path"),
    "archive": Takes("an archive", _OUTLINE, _OUTLINE, None,
                     "list its members with offset and limit, and read a member by its path inside the archive "
                     "(bundle.zip/docs/readme.md)"),
}

# What each field asks for, in the words of the kinds that take it.
USES = {
    "offset": "offset is the first line to read (an XLSX row, a listing's or an outline's entry)",
    "limit": "limit counts lines (XLSX rows, entries, hits)",
    "pages": "pages reads PDF pages, slides (PPTX, ODP), sheets (XLSX, ODS) and EPUB chapters",
    "cells": "cells reads notebook cells",
    "column": "column continues a line cut at 2,000 characters (in an XLSX sheet, a cell's column)",
    "char": "char continues an XLSX cell read with column",
    "range": 'range reads an A1 range of an XLSX sheet ("Data!B2:F40")',
    "raw": "raw reads a text-based file (a notebook's JSON, say) as its numbered source text",
    "view": 'view="image" shows PDF pages as pictures',
    "outline": "outline lists a file's structure, which a find does not",
    "regex": "regex makes find's text a regular expression, and this read has no find",
    "ignoreCase": "ignoreCase makes find ignore case, and this read has no find",
}

_MODE_FIELDS = {"read": _set(), "outline": _set("outline"), "find": _set("find", "regex", "ignoreCase")}


def given(request: ReadRequest) -> list[str]:
    """The fields the request gives that some kind may not take, in the contract's order."""
    values = {"offset": request.offset, "limit": request.limit, "pages": request.pages, "cells": request.cells,
              "column": request.column, "char": request.char, "range": request.range, "raw": request.raw or None,
              "view": "image" if request.view == "image" else None, "outline": request.outline or None,
              "regex": request.regex or None, "ignoreCase": request.ignore_case or None}
    return [field for field, value in values.items() if value is not None]


def check_fields(kind: str, name: str, request: ReadRequest) -> None:
    """Raise `not_for_this_kind` for the first field the request gives that a file of `kind`
    (a key of KINDS), named `name`, does not take in the request's mode."""
    takes = KINDS[kind]
    mode = "find" if request.find is not None else "outline" if request.outline else "read"
    fields = getattr(takes, mode)
    if fields is None:
        return
    refused = [field for field in given(request) if field not in fields | _MODE_FIELDS[mode]]
    if refused:
        if kind == "text" and request.raw:  # a notebook read as its JSON source, say
            name += ", read with raw=true,"
        raise ReadError(NOT_FOR_THIS_KIND, refusal(refused, takes, name, mode, fields))


def refusal(refused: list[str], takes: Takes, name: str, mode: str, fields: frozenset[str]) -> str:
    """The message: what the first refused field reads, what the file is, and what reads it."""
    field = refused[0]
    if mode == "read":
        instead = takes.how
    else:
        what = "an outline" if mode == "outline" else "a find"
        named = _listed([field for field in USES if field in fields])
        instead = f"{what} of it takes {named}"
    return f"{USES[field]}; {name} is {takes.what}: {instead}. Call again without {' and '.join(refused)}."


def office_kind(description: str) -> str:
    """The KINDS key of an Office or OpenDocument file, by the MIME type sniff gave it."""
    from agentread.readers.office_detect import MIMES, PACKAGE_MIMES

    if description in PACKAGE_MIMES:
        return PACKAGE_MIMES[description][1]
    formats = {mime: fmt for fmt, mime in MIMES.items()}
    return {"docx": "document", "xlsx": "spreadsheet", "pptx": "presentation"}[formats[description]]


def _listed(fields: list[str]) -> str:
    return ", ".join(fields[:-1]) + f" and {fields[-1]}" if len(fields) > 1 else fields[0]
