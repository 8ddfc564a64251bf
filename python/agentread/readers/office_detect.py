"""Which Office format is this? Decided from the bytes: the parts a zip holds, or the streams an
OLE2 file holds.

An OOXML file (DOCX, XLSX, PPTX) is a zip whose `[Content_Types].xml` names the main part's type;
Office and every library that writes these files put that entry first, so the first bytes are
enough. A legacy binary file (.doc, .xls, .ppt), an Outlook message (.msg) and a password-protected
OOXML file are all OLE2 compound files; what they hold is told by the names in the compound file's
directory.
"""

from __future__ import annotations

import re
import struct
import zlib

ZIP_MAGIC = b"PK\x03\x04"
OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"

# The main part's content type (in [Content_Types].xml) → format. Macro-enabled files and templates
# share their format's layout, so one prefix covers document, template and macro variants.
MAIN_CONTENT_TYPES = (
    (b"wordprocessingml.document.main+xml", "docx"), (b"wordprocessingml.template.main+xml", "docx"),
    (b"ms-word.document.macroEnabled.main+xml", "docx"), (b"ms-word.template.macroEnabledTemplate.main+xml", "docx"),
    (b"spreadsheetml.sheet.main+xml", "xlsx"), (b"spreadsheetml.template.main+xml", "xlsx"),
    (b"ms-excel.sheet.macroEnabled.main+xml", "xlsx"), (b"ms-excel.template.macroEnabled.main+xml", "xlsx"),
    (b"presentationml.presentation.main+xml", "pptx"), (b"presentationml.slideshow.main+xml", "pptx"),
    (b"presentationml.template.main+xml", "pptx"), (b"ms-powerpoint.presentation.macroEnabled.main+xml", "pptx"),
    (b"ms-powerpoint.slideshow.macroEnabled.main+xml", "pptx"),
)

# The main part's usual name, for a zip whose content types entry is not within the first bytes.
MAIN_PARTS = {b"word/document.xml": "docx", b"xl/workbook.xml": "xlsx", b"ppt/presentation.xml": "pptx"}

FOLDERS = {b"word": "docx", b"xl": "xlsx", b"ppt": "pptx"}

MIMES = {
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
}

# [Content_Types].xml is a few KB; inflating more than this from a head is not looking for
# it any more.
MAX_CONTENT_TYPES_BYTES = 1 << 20

# OLE2 streams (or storages) at the top of a compound file that say what it is, first match wins
# (an encrypted OOXML file holds only the encryption streams; a .doc may also hold a "Workbook"
# stream of an embedded sheet, so Word comes first; an Outlook message keeps its properties in the
# storage named last).
OLE2_STREAMS = (
    ("EncryptedPackage", "encrypted"),
    ("WordDocument", "doc"),
    ("PowerPoint Document", "ppt"),
    ("Workbook", "xls"),
    ("Book", "xls"),  # Excel 5.0/95
    ("__properties_version1.0", "msg"),
)

_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")


def ooxml_format(head: bytes) -> str | None:
    """"docx", "xlsx" or "pptx" for a zip head whose entries make it one, else None.

    The content types or the main part decide; failing those (a writer that puts them last, after a
    sheet bigger than the head), an XML part in a format's folder does."""
    if not head.startswith(ZIP_MAGIC):
        return None
    by_folder = None
    for name, body in _zip_entries(head):
        if name == b"[Content_Types].xml" and body is not None:
            return _from_content_types(body)
        if name in MAIN_PARTS:
            return MAIN_PARTS[name]
        if by_folder is None and name.endswith(b".xml"):
            by_folder = FOLDERS.get(name.split(b"/", 1)[0])
    return by_folder


def ooxml_format_of_zip(archive) -> str | None:
    """The same decision from a whole zip (a zipfile.ZipFile), by its central directory."""
    names = set(archive.namelist())
    if "[Content_Types].xml" in names:
        with archive.open("[Content_Types].xml") as f:
            return _from_content_types(f.read(MAX_CONTENT_TYPES_BYTES))
    return next((fmt for name, fmt in MAIN_PARTS.items() if name.decode() in names), None)


def _from_content_types(body: bytes) -> str | None:
    return next((fmt for content_type, fmt in MAIN_CONTENT_TYPES if content_type in body), None)


def _zip_entries(head: bytes):
    """(name, inflated body or None) of the local file headers within `head`, in order."""
    pos = 0
    while pos + _LOCAL_HEADER.size <= len(head) and head.startswith(ZIP_MAGIC, pos):
        (_, _, flags, method, _, _, _, size, _, name_len, extra_len) = _LOCAL_HEADER.unpack_from(head, pos)
        start = pos + _LOCAL_HEADER.size + name_len + extra_len
        name = head[pos + _LOCAL_HEADER.size:pos + _LOCAL_HEADER.size + name_len]
        yield name, _inflate(head[start:start + size] if size and not flags & 0x08 else head[start:], method)
        if flags & 0x08 or not size:
            # Sizes follow the data (a streamed zip): find the next entry by its signature instead.
            found = head.find(ZIP_MAGIC, start)
            if found < 0:
                return
            pos = found
        else:
            pos = start + size


def _inflate(data: bytes, method: int) -> bytes | None:
    if method == 0:
        return data[:MAX_CONTENT_TYPES_BYTES]
    if method != 8:
        return None
    try:
        return zlib.decompressobj(-15).decompress(data, MAX_CONTENT_TYPES_BYTES)
    except zlib.error:
        return None


def ole2_contents(data: bytes) -> str | None:
    """What an OLE2 compound file holds: "encrypted", "doc", "ppt", "xls", "msg", or None for
    anything else, by the names olefile lists at the top of its directory. Raises OSError (olefile's
    own errors among them) for a file whose directory cannot be read."""
    import olefile  # imported on first use: sniffing every file imports this module

    with olefile.OleFileIO(data) as ole:
        names = {entry[0] for entry in ole.listdir(streams=True, storages=True)}
    return next((what for stream, what in OLE2_STREAMS if stream in names), None)


# EPUB and OpenDocument zips name their type in a member `mimetype`, first and stored uncompressed
# (OCF 3.0, ODF 1.2 part 3): the type → (the kind sniff gives, the format).
PACKAGE_MIMES = {
    "application/epub+zip": ("epub", "epub"),
    "application/vnd.oasis.opendocument.text": ("opendocument", "odt"),
    "application/vnd.oasis.opendocument.text-template": ("opendocument", "odt"),
    "application/vnd.oasis.opendocument.spreadsheet": ("opendocument", "ods"),
    "application/vnd.oasis.opendocument.spreadsheet-template": ("opendocument", "ods"),
    "application/vnd.oasis.opendocument.presentation": ("opendocument", "odp"),
    "application/vnd.oasis.opendocument.presentation-template": ("opendocument", "odp"),
}
EPUB_MIME = "application/epub+zip"
# A zip repacked in name order (as reproducible builds do) has `mimetype` late; its META-INF comes
# first: an EPUB's container (META-INF/container.xml, which only OCF has), or an OpenDocument
# manifest, whose root entry names the type.
_MANIFEST_ROOT = re.compile(rb'full-path="/"[^>]*?media-type="([^"]+)"|media-type="([^"]+)"[^>]*?full-path="/"')


def package_mime(head: bytes) -> str | None:
    """The type an EPUB or OpenDocument zip head names (a key of PACKAGE_MIMES), else None."""
    if not head.startswith(ZIP_MAGIC):
        return None
    for name, body in _zip_entries(head):
        if name == b"mimetype":
            mime = body.strip().decode("ascii", "replace") if body else None
            return mime if mime in PACKAGE_MIMES else None
        if name == b"META-INF/container.xml":
            return EPUB_MIME
        if name == b"META-INF/manifest.xml" and body:
            found = _MANIFEST_ROOT.search(body)
            mime = (found.group(1) or found.group(2)).decode("ascii", "replace") if found else None
            return mime if mime in PACKAGE_MIMES else None
    return None
