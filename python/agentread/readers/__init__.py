"""The reader seam: every format is one module with `read(source, request) -> ReadResult`, and
one row below. A format whose structure can be listed also has `outline(source, request) ->
ReadResult` (its bookmarks, headings, symbols, slides or sheets: agentread.outline), named in its
row and called for `outline: true`.

A row says which module reads the kind sniff found, whether its reads run in a worker process (the
reader calls native code or can run away on a hostile file), and how large a file it takes whole.
The module is imported on first use, so a server that never sees a PDF never loads PDFium.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import BinaryIO

from agentread.readers.fields import check_fields, office_kind
from agentread.request import ReadRequest
from agentread.result import ReadError, ReadResult


@dataclass(frozen=True)
class Source:
    """One file, resolved and sniffed: what a reader reads."""

    path: str  # the real path, symlinks resolved
    name: str  # the path as the request gave it, for messages
    stream: BinaryIO  # seekable, positioned anywhere
    kind: str  # as sniff found it (sniff.FileInfo.kind)
    description: str  # its detected MIME type, or its kind
    encoding: str | None  # text: the Python codec
    bom: int  # bytes of byte order mark to skip
    size: int
    cache_key: tuple  # (path, version): what a reader may keep warm between reads of the same content
    from_editor: bool  # the editor's unsaved text, not the file on disk
    limit: int  # the most bytes `whole` reads (its row's max_bytes)
    member: str | None = None  # an archive: the path inside it the request leads to (None: the archive itself)

    def whole(self) -> bytes:
        """The whole file, for the readers of formats that are parsed whole."""
        self.stream.seek(0)
        # Asked for `limit` bytes, read() would set aside that much memory first: sized to the file
        # instead. A file grown since it was measured is read on, up to the limit.
        data = self.stream.read(self.size + 1)
        if len(data) > self.size:
            data += self.stream.read(self.limit + 1 - len(data))
        return data[:self.limit]


@dataclass(frozen=True)
class Row:
    reader: str  # "module:function", the function taking (source, request)
    isolated: bool  # read in a worker process where the server has them
    max_bytes: int  # a larger file is refused (readers that take it whole hold it in memory)
    # "module:function" taking (source, request, find.Matcher) → (result kind, the hits in order);
    # None: the kind holds no text to search
    search: str | None = None
    outliner: str | None = None  # "module:function" listing the file's structure, where the kind has one
    # The request fields the kind takes: a key of readers.fields.KINDS ("office": by the format
    # sniff found, OpenDocument's too); None: checked where the reader dispatches (an archive, a
    # compound file, a mail), or the kind is refused whatever is asked (binary).
    takes: str | None = None
    # A read that parses the whole file, of more bytes than this, runs in a worker process where the
    # server has them: a parse holds memory many times the file's size, and the file decides how
    # much (None: the kind is not parsed whole here). `parses`: "module:function" taking (size,
    # request), whether that read parses the file whole; None: every read does.
    parse_bytes: int | None = None
    parses: str | None = None
    # The kind holds files read by a path inside it (an archive's members, a mail's attachments:
    # bundle.zip/docs/readme.md, mail.eml/attachments/report.pdf), which its reader reads.
    holds_files: bool = False

    def in_worker(self, size: int, request: ReadRequest) -> bool:
        """Whether a read of a file of `size` bytes runs in a worker process where the server has
        them (a notebook holding images does too: Engine.plan looks)."""
        if self.isolated:
            return True
        return (self.parse_bytes is not None and size > self.parse_bytes
                and (self.parses is None or _function(self.parses)(size, request)))

    def read(self, source: Source, request: ReadRequest) -> ReadResult:
        """The read the request asks for: a window of the file, its hits (`find`) or its outline
        (the one place either is dispatched). A member of an archive is unpacked by the archive's
        reader and then searched or outlined by its own kind's row."""
        if self.takes is not None:
            check_fields(office_kind(source.description) if self.takes == "office" else self.takes, source.name,
                         request)
        if request.find is not None and source.member is None:
            from agentread.find import find_in

            return find_in(self.search and _function(self.search), source, request)
        if request.outline:
            if self.outliner is None:
                raise ReadError("no_outline", f"{source.name} is {source.description}, which has no structure to "
                                "outline. Read it without outline=true.")
            return _function(self.outliner)(source, request)
        return _function(self.reader)(source, request)


def _function(name: str):
    module, function = name.split(":")
    return getattr(importlib.import_module(module), function)


def refuse_binary(source: Source, request: ReadRequest) -> ReadResult:
    raise ReadError("binary", f"{source.name} is a binary file ({source.description}, {source.size:,} bytes) "
                    "and cannot be shown as text. Look for a text form of it (source, export, docs).")


# Whole-file limits, each far above what its format reaches in practice (a 100 MB notebook must
# read; a 2 GB "PNG" must not). A PDF too: PDFium reads only the pages asked for, but one stream may
# be most of the file and is then held whole, a damaged one is scanned whole to rebuild its
# cross-references, and pypdf reads it whole.
MAX_DOCUMENT_BYTES = 512 << 20
MAX_IMAGE_FILE_BYTES = 100 << 20
# A mail is parsed whole, its attachments decoded in memory: mail servers refuse messages far
# smaller (tens of MB), so a larger "mail" is not one.
MAX_MAIL_BYTES = 200 << 20
# Text is streamed: a window costs what it shows, whatever the file's size.
UNLIMITED = 1 << 62
# Files parsed whole in the server process up to these sizes, in a worker past them
# (Row.parse_bytes), so that the worst file of each size costs the server tens of MB and a second or
# so of a read thread: a notebook's JSON becomes objects of a few hundred bytes a cell (a notebook
# of empty cells is the worst), and a syntax tree or a list of lines takes up to hundreds of bytes
# for each byte of a file of one-character tokens or lines.
NOTEBOOK_PARSE_BYTES = 1 << 20
TEXT_PARSE_BYTES = 256 << 10

READERS: dict[str, Row] = {
    "text": Row("agentread.readers.text:read", isolated=False, max_bytes=UNLIMITED,
                search="agentread.readers.text:search", outliner="agentread.readers.structure:outline",
                takes="text", parse_bytes=TEXT_PARSE_BYTES, parses="agentread.readers.structure:parses_whole"),
    "delimited": Row("agentread.readers.delimited:read", isolated=False, max_bytes=UNLIMITED,
                     search="agentread.readers.text:search", outliner="agentread.readers.structure:outline",
                     takes="text", parse_bytes=TEXT_PARSE_BYTES, parses="agentread.readers.structure:parses_whole"),
    "binary": Row("agentread.readers:refuse_binary", isolated=False, max_bytes=UNLIMITED,
                  outliner="agentread.readers:refuse_binary"),
    "pdf": Row("agentread.readers.pdf:read", isolated=True, max_bytes=MAX_DOCUMENT_BYTES,
               search="agentread.readers.pdf:search", outliner="agentread.readers.pdf.outline:outline",
               takes="pdf"),
    "image": Row("agentread.readers.image:read", isolated=True, max_bytes=MAX_IMAGE_FILE_BYTES, takes="image"),
    # The Office and notebook readers outline too, on `request.outline`: their formats are told
    # apart (and refused) in one place.
    "office": Row("agentread.readers.office:read", isolated=True, max_bytes=MAX_DOCUMENT_BYTES,
                  search="agentread.readers.office:search", outliner="agentread.readers.office:read",
                  takes="office"),
    # A compound file (OLE2) is told by its streams (readers/compound.py): an Excel 97-2003 workbook
    # and an Outlook message are read, the rest refused saying what would read them.
    "legacy_office": Row("agentread.readers.compound:read", isolated=True, max_bytes=MAX_DOCUMENT_BYTES,
                         search="agentread.readers.compound:search", outliner="agentread.readers.compound:read",
                         holds_files=True),
    "mail": Row("agentread.readers.mail:read", isolated=True, max_bytes=MAX_MAIL_BYTES,
                search="agentread.readers.mail:search", outliner="agentread.readers.mail:read", holds_files=True),
    "rtf": Row("agentread.readers.rtf:read", isolated=True, max_bytes=MAX_DOCUMENT_BYTES,
               search="agentread.readers.rtf:search", takes="rtf"),
    # EPUB and OpenDocument (ODT, ODS, ODP): lxml parses them whole.
    "epub": Row("agentread.readers.epub:read", isolated=True, max_bytes=MAX_DOCUMENT_BYTES,
                search="agentread.readers.epub:search", outliner="agentread.readers.epub:outline", takes="epub"),
    "opendocument": Row("agentread.readers.odf:read", isolated=True, max_bytes=MAX_DOCUMENT_BYTES,
                        search="agentread.readers.odf:search", outliner="agentread.readers.odf:outline",
                        takes="office"),
    # A notebook's image outputs are decoded and drawn (Pillow, cairo): one that holds any is read
    # in a worker (Engine.plan looks), and so is a large one; the rest here.
    "notebook": Row("agentread.readers.notebook:read", isolated=False, max_bytes=MAX_DOCUMENT_BYTES,
                    search="agentread.readers.notebook:search", outliner="agentread.readers.notebook:read",
                    takes="notebook", parse_bytes=NOTEBOOK_PARSE_BYTES),
    # zipfile and tarfile seek to what they need, whatever the archive's size; a member is held to
    # its own limit (readers/archive.py). Its listing is its outline, as a directory's is.
    "archive": Row("agentread.readers.archive:read", isolated=True, max_bytes=UNLIMITED,
                   search="agentread.readers.archive:search",
                   outliner="agentread.readers.archive:read", holds_files=True),
}
