"""Office documents: DOCX, XLSX, PPTX and Excel 97-2003 (.xls) read into text a model can cite;
Word and PowerPoint 97-2003 and encrypted files refused with what they are and what would read them.

One module per format (docx.py, xlsx.py, pptx.py), each `read_<format>(data, request, path) ->
ReadResult`, and `outline_<format>` for `outline: true` (headings, slide titles, sheets);
readers/office_detect.py tells the formats apart from the bytes (outside this package: sniffing
every file imports it, and not this reader); document.py holds what they share (numbered windows
with images attached, pipe tables, the `pages` range for slides and sheets). The format libraries
(python-docx, openpyxl, python-pptx) are imported on first use, so the server starts without them.
"""

from __future__ import annotations

import importlib
import io
import re
import string
import weakref
import zipfile
import zlib
from typing import Iterator

from agentread.find import Hit, Matcher, Reached
from agentread.readers import Source
from agentread.readers.office_detect import ooxml_format_of_zip
from agentread.request import InvalidParams, ReadRequest
from agentread.result import ReadError, ReadResult

# Inflated size of the parts a reader holds in memory at once (all of a DOCX or PPTX; an XLSX's
# parts other than its sheets, which are streamed). Real documents stay far below it (a 1,000-page
# report is tens of MB); a zip bomb does not.
MAX_INFLATED_BYTES = 512 << 20

# What each legacy binary format read nowhere here is, and what reads it (an Excel 97-2003
# workbook is read: office/xls.py).
LEGACY = {
    "doc": ("a Word 97-2003 document (.doc)", "docx"),
    "ppt": ("a PowerPoint 97-2003 presentation (.ppt)", "pptx"),
}

_PACKAGES = {"docx": "python-docx", "xlsx": "openpyxl xlfmt", "pptx": "python-pptx"}

# Sheets in a workbook, slides in a deck: the format libraries set up every one when the file is
# opened, whichever are read. Real files stay far below this (a deck of 300 slides is long); a main
# part listing 20,000 is made to stall a read.
MAX_SECTIONS = 1000

# Where each format lists its sections, and the tag of one entry.
_SECTION_LISTS = {"xlsx": ("xl/workbook.xml", re.compile(rb"<(?:\w+:)?sheet\s"), "sheets"),
                  "pptx": ("ppt/presentation.xml", re.compile(rb"<(?:\w+:)?sldId\s"), "slides")}


def read(source: Source, request: ReadRequest) -> ReadResult:
    """The reader seam's Office reader: DOCX, XLSX and PPTX."""
    return read_office(source.whole(), request, source.path)


def search(source: Source, request: ReadRequest, matcher: Matcher) -> tuple[str, Iterator[Hit | Reached]]:
    """The reader seam's Office search: DOCX lines, PPTX slides' lines, XLSX cells."""
    data = source.whole()
    fmt = _check_package(data, source.path)
    if fmt == "docx":
        from agentread.readers.office.docx import search_docx as searcher
    elif fmt == "xlsx":
        from agentread.readers.office.xlsx import search_xlsx as searcher
    else:
        from agentread.readers.office.pptx import search_pptx as searcher
    return searcher(data, request, matcher)


def read_office(data: bytes, request: ReadRequest, path: str) -> ReadResult:
    """Read a DOCX, XLSX or PPTX (as sniff found it) into a ReadResult."""
    fmt = _check_package(data, path)
    try:
        module = importlib.import_module(f"agentread.readers.office.{fmt}")
        reader = getattr(module, f"{'outline' if request.outline else 'read'}_{fmt}")  # outline_docx, read_docx...
    except ImportError as exc:
        raise ReadError("internal", f"reading {fmt.upper()} files needs these Python packages: {_PACKAGES[fmt]}; "
                        f"one is not installed ({exc}). Install them with: pip install {_PACKAGES[fmt]}") from None
    try:
        return reader(data, request, path)
    except (ReadError, InvalidParams, MemoryError, RecursionError):
        raise
    except Exception as exc:  # noqa: BLE001 - zipfile, lxml and the format libraries fail in many ways
        raise ReadError("damaged_office", f"{path} is a damaged {fmt.upper()} file that could not be read "
                        f"({type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}). "
                        "Try another copy of the file.") from None


# OPC (ECMA-376 part 2) compares part names without regard to ASCII case: a part named
# in lower case, as some writers store `xl/sharedstrings.xml`, is the same part as Excel's own name.
_ASCII_FOLD = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
# Each open zip's members by their folded names, built once a zip at its first name not stored as
# written, and dropped with the zip.
_FOLDED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def member(archive: zipfile.ZipFile, part: str) -> str | None:
    """The zip member that holds part `part`: the member of that name, else the one whose name
    differs from it only in ASCII case (the same part, as OPC compares names); None where the zip
    holds neither."""
    try:
        archive.getinfo(part)
        return part
    except KeyError:
        pass
    folded = _FOLDED.get(archive)
    if folded is None:
        folded = _FOLDED[archive] = {}
        for name in archive.namelist():  # the last of names alike, as zipfile finds a repeated name
            folded[name.translate(_ASCII_FOLD)] = name
    return folded.get(part.translate(_ASCII_FOLD))


def refuse_legacy(what: str | None, path: str, size: int) -> ReadError:
    """The error for an OLE2 compound file no reader here reads, by what
    office_detect.ole2_contents found it holds: a Word or PowerPoint 97-2003 file, an encrypted
    OOXML file, or something else."""
    if what == "encrypted":
        return ReadError("encrypted_office", f"{path} is a password-protected Office document: its content is "
                         "encrypted. Passwords cannot be passed to this tool: ask the user for a copy saved "
                         "without a password, or to paste the text you need.")
    if what in LEGACY:
        name, modern = LEGACY[what]
        return ReadError("legacy_office", f"{path} is {name}, a binary format this tool cannot read. Ask the "
                         f"user to save it as .{modern}, or convert it with LibreOffice: soffice --headless "
                         f"--convert-to {modern} \"{path}\"; then read the .{modern}.")
    return ReadError("binary", f"{path} is an OLE2 compound file ({size:,} bytes) that is not a Word, Excel or "
                     "PowerPoint file nor an Outlook message (an installer or a Visio drawing, for example) and "
                     "cannot be shown as text.")


def _check_package(data: bytes, path: str) -> str:
    """The format, from the whole zip's directory; a damaged zip or a zip bomb is refused here."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            fmt = ooxml_format_of_zip(archive)
            inflated = sum(i.file_size for i in archive.infolist()
                           if not (fmt == "xlsx" and i.filename.startswith("xl/worksheets/")))
            sections = _count_sections(archive, fmt) if inflated <= MAX_INFLATED_BYTES else 0
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, zlib.error, RuntimeError) as exc:
        # RuntimeError: a member compressed by a method zipfile lacks (NotImplementedError)
        # or encrypted.
        raise ReadError("damaged_office", f"{path} is a damaged Office file: its zip structure cannot be read "
                        f"({exc}). Try another copy of the file.") from None
    if fmt is None:
        raise ReadError("damaged_office", f"{path} looked like an Office document, but it has neither content "
                        "types nor a main part. Try another copy of the file.")
    if inflated > MAX_INFLATED_BYTES:
        raise ReadError("too_complex", f"{path} inflates to {inflated:,} bytes, over the {MAX_INFLATED_BYTES:,}"
                        f"-byte limit for a {fmt.upper()} file read in memory (a possible zip bomb). It cannot be "
                        "read; ask the user for a smaller export.")
    if sections > MAX_SECTIONS:
        unit = _SECTION_LISTS[fmt][2]
        raise ReadError("too_complex", f"{path} lists {sections:,} {unit}, over the limit of {MAX_SECTIONS:,} "
                        f"{unit} a file. It cannot be read; ask the user for an export of the part you need.")
    return fmt


def _count_sections(archive: zipfile.ZipFile, fmt: str) -> int:
    """Sheets or slides the main part lists (0 when it is not where the format's writers put it)."""
    if fmt not in _SECTION_LISTS:
        return 0
    part, entry, _ = _SECTION_LISTS[fmt]
    stored = member(archive, part)
    if stored is None:
        return 0
    with archive.open(stored) as f:
        return len(entry.findall(f.read(MAX_INFLATED_BYTES)))
