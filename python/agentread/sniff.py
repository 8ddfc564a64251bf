"""What kind of file is this? Decided once from its first bytes (magic, never the name alone).

The answer is a small FileInfo value passed down to the reader, so no reader guesses again.
"""

from __future__ import annotations

import bz2
import codecs
import functools
import lzma
import re
import zlib
from dataclasses import dataclass

from agentread.readers.office_detect import MIMES as OFFICE_MIMES
from agentread.readers.office_detect import OLE2_MAGIC, PACKAGE_MIMES, ooxml_format, package_mime

# Byte order marks, longest first (the UTF-32 LE mark begins with the UTF-16 LE one).
BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# Image formats read as images (Pillow decodes them); anything else filetype recognises is binary.
IMAGE_MIMES = {"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/tiff",
               "image/x-icon", "image/vnd.microsoft.icon", "image/avif", "image/heic", "image/heif"}

# Archives listed and read member by member (readers/archive.py): zip (and the formats built on it
# that no other reader takes, such as a JAR) and tar, plain or compressed.
TAR_MIME = "application/x-tar"
ARCHIVE_MIMES = ("application/zip", TAR_MIME)
# A compressed file is a tar when its first unpacked bytes are a tar header: the decompressor of
# each compression filetype recognises, and the names that say tar where the head is too short to
# unpack one (a bzip2 block unpacks only whole).
TAR_COMPRESSIONS = {
    "application/gzip": lambda: zlib.decompressobj(wbits=47),  # 32 + 15: gzip or zlib framing, either
    "application/x-bzip2": bz2.BZ2Decompressor,
    "application/x-xz": lzma.LZMADecompressor,
}
TAR_NAMES = (".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tbz", ".tar.xz", ".txz")
# A tar header block: what filetype needs to see its magic.
TAR_HEADER_BYTES = 512

# A PDF's header, which its first 1024 bytes hold.
PDF_MAGIC = b"%PDF-"

# An RTF document's first bytes (the format's group and control word).
RTF_MAGIC = b"{\\rtf"

# A mail (RFC 5322: .eml, a message saved from a mail client) begins with header fields, `Name:
# value` lines and their indented continuations, up to a blank line. It is told from a note that
# happens to begin "To: ..." by naming its sender and at least MIN_MAIL_FIELDS of the fields
# mail software writes. A file beginning with an mbox "From " line (git's patches) stays text.
MAIL_FIELD = re.compile(rb"([!-9;-~]+):")
MAIL_FIELDS = frozenset({b"date", b"subject", b"message-id", b"to", b"received", b"mime-version", b"cc",
                         b"return-path", b"content-type"})
MIN_MAIL_FIELDS = 2

# Share of NUL bytes above which a UTF-8-valid head is still binary. A stray NUL in a log is text; a
# struct of integers is not.
MAX_NUL_SHARE = 1 / 8

# Share of C0 control bytes (other than tab, newline, carriage return, form feed, escape, backspace)
# above which a head is binary: rather than text in a legacy encoding, or than UTF-8 that is only
# valid because its bytes are all below 0x80. Escape and backspace stay text: ANSI-coloured logs and
# overstruck man pages are full of them.
MAX_CONTROL_SHARE = 0.10

# A UTF-8 head this short is judged text whatever its controls: a few bytes are too few to
# call it binary.
MIN_CONTROL_SAMPLE = 256

# In UTF-16 text without a BOM, Latin-script characters leave every other byte NUL: at least this
# share of the odd (or even) positions being NUL, and almost none of the others, means UTF-16.
UTF16_NUL_SHARE = 0.4

# Below this share of invalid sequences among non-ASCII bytes, a file is UTF-8 with a few bad bytes
# (shown as U+FFFD, as the editor does) rather than a legacy encoding.
MAX_UTF8_ERROR_SHARE = 0.02

# The bytes _control_share deletes before counting: everything but C0 controls that text does not
# hold, and DEL.
_NOT_CONTROLS = bytes(b for b in range(256) if not ((b < 32 and b not in b"\t\n\r\x0c\x1b\x08") or b == 127))

# Legacy encodings considered for text that is not UTF-8, most widely used first (the order breaks
# ties). Exotic pages are left out: on short samples they win by accident and turn "café" into Urdu.
LEGACY_ENCODINGS = {name: rank for rank, name in enumerate((
    "cp1252", "gb18030", "cp932", "cp1251", "cp1250", "cp949", "big5", "euc_jp", "koi8_r", "cp1253",
    "cp1254", "cp1257", "cp1255", "cp1256", "cp874", "iso8859_2", "iso8859_15", "latin_1", "mac_roman"))}
MULTI_BYTE_ENCODINGS = {"gb18030", "cp932", "cp949", "big5", "euc_jp"}

# How much more "chaos" (charset-normalizer's measure of implausible characters) a single-byte page
# may show than the detector's favourite and still be weighed against it: the measure is unreliable
# on short samples.
SINGLE_BYTE_MARGIN = 0.2


@dataclass(frozen=True)
class FileInfo:
    kind: str  # text | pdf | image | notebook | office | legacy_office | epub | opendocument | archive | mail | rtf
    # | binary
    mime: str | None = None  # detected mime type, where known
    encoding: str | None = None  # for text: Python codec name
    bom: int = 0  # bytes of byte order mark to skip

    @property
    def description(self) -> str:
        return self.mime or self.kind


def sniff(head: bytes, name: str) -> FileInfo:
    """Classify a file from its first bytes; `name` only tells a notebook from other JSON."""
    if not head:
        return FileInfo("text", "text/plain", "utf-8")
    for bom, encoding in BOMS:
        if head.startswith(bom):
            return _text_or_notebook(head[len(bom):], name, encoding, len(bom))
    office = ooxml_format(head)  # before filetype, which would call an Office zip a plain binary
    if office:
        return FileInfo("office", OFFICE_MIMES[office])
    package = package_mime(head)  # EPUB and OpenDocument: zips that name their type first
    if package:
        return FileInfo(PACKAGE_MIMES[package][0], package)
    # filetype tries some 80 signatures in Python, a large share of a small read's time. Every
    # binary signature it knows (a zip's and a tar's too) puts a NUL or another control byte within
    # the first bytes, so a head without any is text for it (PostScript and RTF, text-based formats
    # it names, are then read as the text they are), and a text file's read does not import it.
    if head.startswith(PDF_MAGIC):  # no zip or tar begins so: filetype is not needed for it
        return FileInfo("pdf", "application/pdf")
    control_share = _control_share(head)
    archive = control_share and _filetype().match(head, _archive_matchers())
    if archive:  # before PDF: an archive's first member may be one
        return FileInfo("archive", archive.mime)
    if PDF_MAGIC in head[:1024]:  # PDF allows junk before the header
        return FileInfo("pdf", "application/pdf")
    if head.startswith(OLE2_MAGIC):  # .doc/.xls/.ppt, .msg, an encrypted OOXML file, or another compound file
        return FileInfo("legacy_office", "application/x-ole-storage")
    kind = _filetype().guess(head) if control_share else None
    if kind is not None:
        if kind.mime in IMAGE_MIMES:
            return FileInfo("image", kind.mime)
        if _compressed_tar(head, kind.mime, name):
            return FileInfo("archive", kind.mime)
        if kind.mime != "application/x-lzip" or not _is_utf8(head):  # 'LZIP' is also an English word
            return FileInfo("binary", kind.mime)
    nuls = head.count(0) if 0 in head else 0  # memchr finds none in most text at once; counting reads every byte
    utf16 = _utf16_without_bom(head, nuls)
    if utf16:
        return _text_or_notebook(head, name, utf16, 0)
    if _is_utf8(head):
        if nuls > len(head) * MAX_NUL_SHARE or \
                (len(head) >= MIN_CONTROL_SAMPLE and control_share > MAX_CONTROL_SHARE):
            return FileInfo("binary", "application/octet-stream")
        return _text_or_notebook(head, name, "utf-8", 0)
    if 0 in head or control_share > MAX_CONTROL_SHARE:
        return FileInfo("binary", "application/octet-stream")
    if _mostly_utf8(head):
        return _text_or_notebook(head, name, "utf-8", 0)
    return _text_or_notebook(head, name, _legacy_encoding(head), 0)


def _text_or_notebook(body: bytes, name: str, encoding: str, bom: int) -> FileInfo:
    if name.lower().endswith(".ipynb") and body.lstrip()[:1] == b"{":
        return FileInfo("notebook", "application/x-ipynb+json", encoding, bom)
    if body.startswith(RTF_MAGIC):
        return FileInfo("rtf", "application/rtf", encoding, bom)
    if _is_mail(body):
        return FileInfo("mail", "message/rfc822", encoding, bom)
    if body.lstrip()[:5].lower() in (b"<svg ", b"<?xml") and b"<svg" in body[:4096]:
        return FileInfo("text", "image/svg+xml", encoding, bom)
    return FileInfo("text", "text/plain", encoding, bom)


def _is_mail(body: bytes) -> bool:
    """Whether the head begins with a mail's header fields, ended by a blank line within it."""
    if not MAIL_FIELD.match(body):  # most text fails here, before the head is searched
        return False
    end = re.search(rb"\r?\n\r?\n", body)
    if end is None:
        return False
    names = set()
    for line in body[:end.start()].splitlines():
        field = MAIL_FIELD.match(line)
        if field is not None:
            names.add(field.group(1).lower())
        elif line[:1] not in (b" ", b"\t"):
            return False
    return b"from" in names and len(names & MAIL_FIELDS) >= MIN_MAIL_FIELDS


def _compressed_tar(head: bytes, mime: str, name: str) -> bool:
    """Whether a compressed head unpacks to a tar header (at most TAR_HEADER_BYTES are unpacked)."""
    if mime not in TAR_COMPRESSIONS:
        return False
    try:
        unpacked = TAR_COMPRESSIONS[mime]().decompress(head, TAR_HEADER_BYTES)
    except (zlib.error, OSError, EOFError, lzma.LZMAError):
        return False
    if len(unpacked) < TAR_HEADER_BYTES:
        return name.lower().endswith(TAR_NAMES)
    kind = _filetype().guess(unpacked)
    return kind is not None and kind.mime == TAR_MIME


def _filetype():
    """filetype, imported by the first head with a control byte (see `sniff`)."""
    import filetype

    return filetype


@functools.cache
def _archive_matchers() -> list:
    return [_filetype().get_type(mime=mime) for mime in ARCHIVE_MIMES]


def _is_utf8(head: bytes) -> bool:
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)  # a cut last character is fine
        return True
    except UnicodeDecodeError:
        return False


def _mostly_utf8(head: bytes) -> bool:
    text = head.decode("utf-8", errors="replace")
    bad = text.count("\ufffd")
    non_ascii = sum(1 for ch in text if ord(ch) > 127)
    return non_ascii > 0 and bad <= max(1, non_ascii * MAX_UTF8_ERROR_SHARE) and bad < non_ascii


def _utf16_without_bom(head: bytes, nuls: int) -> str | None:
    """UTF-16 text without a byte order mark: NULs in every other byte. `nuls` is how many
    the head holds."""
    if len(head) < 4 or nuls < UTF16_NUL_SHARE * (len(head) // 2):
        return None  # too few NULs for either half: no need to split the head in two
    even, odd = head[0::2], head[1::2]
    even_nul, odd_nul = even.count(0) / len(even), odd.count(0) / len(odd)
    if odd_nul >= UTF16_NUL_SHARE and even_nul < 0.05:
        encoding = "utf-16-le"
    elif even_nul >= UTF16_NUL_SHARE and odd_nul < 0.05:
        encoding = "utf-16-be"
    else:
        return None
    try:
        text = head[: len(head) // 2 * 2].decode(encoding)
    except UnicodeDecodeError:
        return None
    controls = sum(1 for ch in text if ord(ch) < 32 and ch not in "\t\n\r\x0c")
    if controls > len(text) * MAX_CONTROL_SHARE:
        return None  # an array of small integers, not text
    return encoding


def _control_share(head: bytes) -> float:
    return len(head.translate(None, _NOT_CONTROLS)) / len(head)


def _legacy_encoding(head: bytes) -> str:
    """Best guess among common legacy encodings.

    Short samples fit many code pages about equally well, and the detector's ranking among them is
    noise (French prose comes out Baltic). So: the detector's best, plus, for single-byte pages,
    every page within SINGLE_BYTE_MARGIN of it; then the page whose non-ASCII characters are most
    often letters (real text is words, mis-decoded text is symbols); then the detector's language
    fit; then the most widely used page."""
    from charset_normalizer import from_bytes  # imported on first use: it is slow to import

    matches = list(from_bytes(head, cp_isolation=list(LEGACY_ENCODINGS)))
    if not matches:
        return "cp1252"
    best = matches[0]
    single_byte = best.encoding not in MULTI_BYTE_ENCODINGS
    coherence = {name: m.coherence for m in reversed(matches)
                 if (m.chaos, m.coherence) == (best.chaos, best.coherence)
                 or (single_byte and m.encoding not in MULTI_BYTE_ENCODINGS
                     and m.chaos <= best.chaos + SINGLE_BYTE_MARGIN)
                 for name in [m.encoding, *m.could_be_from_charset]}

    def rank(name: str) -> tuple[float, float, int]:
        letters = _letter_share(head.decode(name, errors="replace")) if single_byte else 0.0
        return -letters, -coherence[name], LEGACY_ENCODINGS.get(name, len(LEGACY_ENCODINGS))

    return codecs.lookup(min(coherence, key=rank)).name


def _letter_share(text: str) -> float:
    """Share of non-ASCII characters that read as letters where they stand. A capital right after a
    small letter does not ("seÒor", "cafÈ": Spanish in the Mac page), so near-equal pages are told
    apart by case."""
    import unicodedata

    non_ascii = [i for i, ch in enumerate(text) if ord(ch) > 127]
    if not non_ascii:
        return 1.0

    def plausible(i: int) -> bool:
        ch = text[i]
        if ch == "\u20ac":
            return True
        return unicodedata.category(ch)[0] == "L" and not (ch.isupper() and i and text[i - 1].islower())

    return sum(1 for i in non_ascii if plausible(i)) / len(non_ascii)
