"""PDFs page by page: only the pages asked for are parsed, the parsed document is kept warm.

PDFium (agentread.readers.pdf.pdfium) reads the text: it opens a 2,000-page manual and extracts a
page in milliseconds, about as fast as poppler's pdftotext and many times faster than pypdf. pypdf
reads what PDFium refuses (some encrypted files open with an empty owner password in pypdf only;
some broken cross-reference tables it rebuilds), and its errors say what is wrong with a file
neither can open. pypdf's `reader.pages` flattens the whole page tree on first use, so its pages are
found by walking the tree with each node's /Count, building only that page.
"""

from __future__ import annotations

import io
import logging
import math
import re
import shutil
import threading
import time
from collections import OrderedDict
from typing import BinaryIO, Callable, Iterator

from agentread.cancel import checkpoint
from agentread.find import Hit, Matcher, Reached, Unit, hits_in
from agentread.hidden import note
from agentread.limits import MAX_PDF_PAGES, MAX_REPLY_IMAGE_BYTES, MAX_REPLY_IMAGES
from agentread.numbering import amount, counted, output_limit_reason, shown_lines, span, up_to, window
from agentread.readers import Source
from agentread.readers.pdf import (
    concealed,
    pdfium,  # loads the library on first use, so a PDF PDFium cannot load is left to pypdf
)
from agentread.readers.pdf.figures import count as count_figures
from agentread.request import PAGE_RANGE, InvalidParams, ReadRequest
from agentread.result import ImagePart, Part, ReadError, ReadResult, TextPart
from agentread.workspace import path_version

# Parsed documents kept between calls, keyed by path and file_version: paging through a big PDF
# parses it once. Eight covers the PDFs one task works with at a time; each holds its xref table and
# the pages built so far.
PDF_CACHE_DOCUMENTS = 8
# ... holding at most this many bytes of PDF between them. PDFium reads a file as its pages need it
# and holds none of it; a document read from memory (an editor's buffer, or pypdf's, which reads the
# file whole) holds its bytes, and eight 500 MB scans would hold 4 GB. The newest document stays,
# whatever its size.
PDF_CACHE_BYTES = 1 << 30

# Extracted page text kept per document: about 4 MB holds a 2,000-page manual whole, so paging back
# and forth through it extracts each page once.
MAX_CACHED_PAGE_CHARS = 4_000_000

# Page attributes a page inherits from its ancestors in the page tree (PDF 1.7, table 30).
INHERITABLE = ("/Resources", "/MediaBox", "/CropBox", "/Rotate")

# Pages without text rendered as images per call: a scanned page costs a model about what a plot
# does, and rendering (plus OCR where Tesseract is installed) takes far longer a page than
# extracting text.
MAX_RENDERED_PAGES = 5

# A page tree deeper than this is hostile or broken; walking it could loop.
MAX_TREE_DEPTH = 64

# Images are looked for this deep in nested form XObjects: scanners put the page image at the top or
# one level down; a deeper nest is rare and would cost a walk of a hostile file's forms.
MAX_FORM_DEPTH = 3

NO_TEXT = "[Page {} has no extractable text: it may be a scanned image or a drawing.]"

# The line a page's text ends with when the page holds figures its text does not show.
FIGURES_NOTE = ('[Page {number} has {count} (images or drawings) that its text does not show. To see the page '
                'as a picture, call again with pages="{number}" and view="image".]')

# Room for the line that ends a page's text cut to fit beside its picture.
CUT_NOTE_BYTES = 200

# A page with less text than this whose pictures cover at least PICTURE_PAGE_COVERAGE of it is a
# scan with a stamp ("Scanned by ...", a page number, an image's label) or a photo with a caption:
# its text alone would hide what the page shows, so it is rendered too. A page of body text has
# thousands of characters.
SCANT_TEXT_CHARS = 200
PICTURE_PAGE_COVERAGE = 0.5

# A scan is a few page objects (the picture, a stamp); a page with more than this many is drawn, not
# scanned, and its objects are not walked (a hostile page can hold millions).
MAX_SCAN_OBJECTS = 1000

# Page objects whose text is extracted. Real pages hold hundreds to a few thousand (the most in the
# test corpus is 3,433; a generator that places each glyph on its own makes some 2,000 a dense
# page). PDFium's text layout can cost quadratic time in them, and its C code cannot be interrupted
# once started, so the rest of such a page is left out and the page says so.
MAX_TEXT_OBJECTS = 20_000

# What stands for a control character in a page's text or a page's label. PDFium and pypdf give a
# glyph whose font names no character for it by its code: TeX's symbol fonts draw the circle of ©
# as code 13, a carriage return, and their big delimiters as other codes below 32. A carriage return
# or a line feed there would end a line where the page has none (a client that ends lines at a lone
# CR would number the page's lines differently), and the others mean nothing to a reader.
UNNAMED_GLYPH = "\ufffd"
CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # all but tab, line ends included

log = logging.getLogger(__name__)

# pypdf logs every repair it makes to a damaged file; the reader reports what matters in its result.
logging.getLogger("pypdf").setLevel(logging.ERROR)


class _Pdfium:
    def __init__(self, data: bytes | None, fd: int | None):
        self.pdf = pdfium.Document(data, fd)
        self.total = self.pdf.page_count
        self.picture_pages: set[int] = set()  # pages of scant text mostly covered by pictures
        self.figures: dict[int, int] = {}  # figures (count_figures) on the pages extracted, where any
        # Hidden passages (concealed.Looks) of the pages extracted: (line of the page's text, why).
        self.passages: dict[int, list[tuple[int, str]]] = {}

    def text(self, number: int) -> str:
        """The page's text; a page of scant text is also measured for pictures while
        it is loaded."""
        with self.pdf.page(number) as page:
            objects = page.objects_table(MAX_TEXT_OBJECTS)
            try:
                self.figures[number] = count_figures(objects)
            except Exception as exc:  # noqa: BLE001 - the page is then shown by its text alone
                log.warning("page %d: its figures could not be counted: %s", number, exc)
            seen = concealed.Looks(page, objects)
            # PDFium ends lines with CRLF, and joins a word hyphenated across a line break with
            # U+FFFE in place of the hyphen: the word is given whole, as written.
            text, passages = page.text(mark=seen.mark)
            text = plain_lines(text, "\r\n").replace("\ufffe", "")
            lead = len(text) - len(text.lstrip("\n"))  # the blank lines the page's text loses at its start
            self.passages[number] = [(line - lead, why) for line, why in passages]
            if objects.cut:
                text += (f"\n[Page {number} holds more than {MAX_TEXT_OBJECTS:,} objects (those inside forms "
                         f"included): the text of the first {MAX_TEXT_OBJECTS:,} in the file's order is shown, the "
                         "rest is not read.]")
            elif len(text.strip()) < SCANT_TEXT_CHARS:
                try:
                    if _mostly_picture(page):
                        self.picture_pages.add(number)
                except Exception as exc:  # noqa: BLE001 - the page is then shown by its text alone
                    log.warning("page %d: its pictures could not be measured: %s", number, exc)
            return text


def _mostly_picture(page) -> bool:
    """Whether images cover most of the page (their clipped boxes summed; overlaps are
    rare in scans)."""
    raw = pdfium.library().raw
    if raw.FPDFPage_CountObjects(page.handle) > MAX_SCAN_OBJECTS:
        return False
    page_left, page_bottom, page_right, page_top = page.box
    covered = 0.0
    for seen, (thing, matrix) in enumerate(page.objects(max_depth=MAX_FORM_DEPTH), 1):
        if seen > MAX_SCAN_OBJECTS:
            return False  # objects nested in forms count too: a form can hold millions
        box = pdfium.bounds(thing, matrix) if raw.FPDFPageObj_GetType(thing) == raw.FPDF_PAGEOBJ_IMAGE else None
        if box is None:
            continue
        left, bottom, right, top = box
        covered += (max(0.0, min(right, page_right) - max(left, page_left))
                    * max(0.0, min(top, page_top) - max(bottom, page_bottom)))
    area = (page_right - page_left) * (page_top - page_bottom)
    return covered >= PICTURE_PAGE_COVERAGE * area > 0


class _Pypdf:
    def __init__(self, reader):
        self.reader = reader
        self.pages: dict[int, object] = {}
        self.total = _page_count(reader)

    def text(self, number: int) -> str:
        page = self.pages.get(number)
        if page is None:
            page = _find_page(self.reader, number - 1)
            if page is None:
                page = self.reader.pages[number - 1]  # the tree does not add up: let pypdf flatten it
            self.pages[number] = page
        return plain_lines(page.extract_text() or "", "\n")


def plain_lines(text: str, line_end: str) -> str:
    """A page's text with its lines (ended by `line_end`) ended by LF, and each control character
    within them, CR and LF included, as UNNAMED_GLYPH."""
    return "\n".join(CONTROLS.sub(UNNAMED_GLYPH, line) for line in text.split(line_end))


class _Document:
    def __init__(self, backend: _Pdfium | _Pypdf, size: int):
        self.backend = backend
        self.size = size  # bytes of the file held in memory (none where PDFium reads the file itself)
        # Neither library is safe to use from two threads at once on a document; PDFium not
        # even on two.
        self.lock = pdfium.LOCK if isinstance(backend, _Pdfium) else threading.Lock()
        # Extracted text by page number: extraction is the costly part of a read (tens of ms a
        # page), and an agent re-reads the pages it cites. Bounded by MAX_CACHED_PAGE_CHARS across
        # the document.
        self.texts: OrderedDict[int, str] = OrderedDict()
        self.text_chars = 0
        self.total = backend.total
        self.outline: list | None = None  # the outline's entries, once listed (readers/pdf/outline.py)
        self._labels: list[str] | None = None

    def labels(self) -> list[str]:
        """Each page's label (the number the document prints on it) by page number - 1, or []
        when it labels none but as its page numbers; read once a document. Call under `lock`."""
        if self._labels is None:
            self._labels = _page_labels(self)
        return self._labels

    def remember(self, number: int, text: str) -> None:
        self.texts[number] = text
        self.text_chars += len(text)
        while self.text_chars > MAX_CACHED_PAGE_CHARS and len(self.texts) > 1:
            _, dropped = self.texts.popitem(last=False)
            self.text_chars -= len(dropped)


# Pages looked at one by one, for their labels or to load their dictionaries before an outline's
# bookmarks are resolved: a real document has a few thousand; past this many (a hostile page count)
# pages go by their numbers and each bookmark's page is found on its own.
MAX_PAGES_WALKED = 100_000


def _page_labels(doc: _Document) -> list[str]:
    try:
        if doc.total > MAX_PAGES_WALKED:
            return []
        if isinstance(doc.backend, _Pdfium):
            labels = doc.backend.pdf.page_labels()
        else:  # a label longer than PDFium's buffer is dropped, as PDFium's are
            labels = [label if len(label) * 2 < pdfium.NAME_BUFFER_BYTES else ""
                      for label in doc.backend.reader.page_labels]
    except Exception as exc:  # noqa: BLE001 - damaged labels: pages go by their numbers
        log.warning("the PDF's page labels could not be read: %s", exc)
        return []
    if not any(labels) or all(label == str(number) for number, label in enumerate(labels, 1)):
        return []
    return [CONTROLS.sub(UNNAMED_GLYPH, label) for label in labels]


class _DocumentCache:
    def __init__(self, size: int, max_bytes: int):
        self._size, self._max_bytes = size, max_bytes
        self._docs: OrderedDict[tuple, _Document] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: tuple, stream: BinaryIO, name: str, whole: Callable[[], bytes] | None = None) -> _Document:
        """The parsed document for `key`, opened from `stream` when it is not cached; `whole` gives
        the file's bytes where pypdf must read it (the stream's, by default)."""
        with self._lock:
            doc = self._docs.pop(key, None)
            if doc is not None:
                self._docs[key] = doc
                return doc
        doc = _open(stream, name, whole)
        with self._lock:
            stale = [cached for cached in self._docs if cached != key]
        # Documents of files since changed, replaced or deleted can never be asked for again, and
        # one read from its file holds it open (and a deleted file's space with it): they go first.
        # Looked at outside the lock, since a stat may wait on a slow disk.
        stale = {cached for cached in stale if _changed(cached)}
        with self._lock:
            old = self._docs.pop(key, None)  # opened by another thread meanwhile
            self._bytes += doc.size - (old.size if old else 0)
            self._docs[key] = doc
            dropped = [old]
            for cached in stale:
                dropped.append(self._docs.pop(cached, None))
                self._bytes -= dropped[-1].size if dropped[-1] else 0
            while len(self._docs) > self._size or (self._bytes > self._max_bytes and len(self._docs) > 1):
                dropped.append(self._docs.popitem(last=False)[1])
                self._bytes -= dropped[-1].size
        # `dropped` goes on return, not under the cache's lock: a PDFium document closes itself
        # under PDFium's lock, which a long page layout in another thread may hold for seconds, and
        # every read waits on the cache's.
        return doc

    @property
    def held_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._docs)


def _changed(key: tuple) -> bool:
    """Whether the file of a cache key (its path, then its file_version) is no longer what it
    was read as."""
    if len(key) == 2:
        return False  # an editor's buffer, keyed by (path, hash of its text)
    return path_version(key[0]) != key[1:]


DOCUMENTS = _DocumentCache(PDF_CACHE_DOCUMENTS, PDF_CACHE_BYTES)


def parse_pages(spec: str | None, total: int) -> tuple[int, int]:
    """"3", "10-20" or "10-" → (first, last) 1-based inclusive; the last is clipped to
    the document."""
    if spec is None:
        return 1, min(total, MAX_PDF_PAGES)
    match = PAGE_RANGE.match(spec)
    if not match:
        raise InvalidParams(f"'pages' must look like \"3\" or \"10-20\", got {spec!r}")
    first = int(match.group(1))
    last = first if match.group(2) is None else (int(match.group(2)) if match.group(2) else total)
    if total == 0:
        raise ReadError("page_out_of_range", f"page {first} does not exist: the PDF has no pages, so there is "
                        "nothing to read.")
    if first > total:
        raise ReadError("page_out_of_range", f"page {first} does not exist: the PDF has {amount(total, 'page')}. "
                        f"Call again with {up_to(total, 'pages', quoted=True)}.")
    if first < 1 or last < first:
        raise InvalidParams(f"'pages' range {spec!r} is empty or starts below 1")
    return first, min(last, total)


def _open(stream: BinaryIO, name: str, whole: Callable[[], bytes] | None) -> _Document:
    def read_whole() -> bytes:
        if whole:
            return whole()
        stream.seek(0)
        return stream.read()

    try:
        fd = stream.fileno() if pdfium.READS_FROM_FILES else None
    except (AttributeError, OSError):  # io.UnsupportedOperation: a buffer in memory
        fd = None
    data = read_whole() if fd is None else None
    try:
        return _Document(_Pdfium(data, fd), 0 if data is None else len(data))
    except Exception as exc:  # noqa: BLE001 - PdfiumError, or the library failing to load: pypdf has a go
        log.info("PDFium could not open %s (%s); trying pypdf", name, _short(exc))
    if data is None:
        data = read_whole()
    reader = _pypdf_reader(io.BytesIO(data), name)
    try:
        return _Document(_Pypdf(reader), len(data))
    except Exception as exc:  # noqa: BLE001 - pypdf fails in many ways (even assertions) on a broken page tree
        raise ReadError("damaged_pdf", f"{name} is a damaged PDF whose pages could not be found ({_short(exc)}). "
                        "Try another copy of the document.") from None


def _pypdf_reader(stream: BinaryIO, name: str):
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, PyPdfError

    try:
        reader = PdfReader(stream)
        if reader.is_encrypted and not reader.decrypt(""):  # an empty user password opens most "protected" PDFs
            raise ReadError("encrypted_pdf", f"{name} is encrypted and needs a password to open. Passwords "
                            "cannot be passed to this tool: ask the user for an unencrypted copy, or to "
                            "paste the text you need.")
        return reader
    except ReadError:
        raise
    except (NotImplementedError, FileNotDecryptedError) as exc:
        raise ReadError("encrypted_pdf", f"{name} is encrypted with a method that cannot be opened "
                        f"({_short(exc)}). Ask the user for an unencrypted copy.") from None
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError,
            OSError, OverflowError) as exc:
        raise ReadError("damaged_pdf", f"{name} is a damaged PDF that could not be parsed ({_short(exc)}). "
                        "Try another copy of the document.") from None


def _short(exc: Exception) -> str:
    return (str(exc).split("\n")[0][:200]) or type(exc).__name__


def _page_count(reader) -> int:
    from pypdf.errors import PyPdfError

    try:
        count = reader.trailer["/Root"]["/Pages"]["/Count"]
        if isinstance(count, int) and count > 0:
            return int(count)
    except (KeyError, TypeError, AttributeError, ValueError, NotImplementedError, PyPdfError):
        pass
    try:
        return len(reader.pages)  # no usable /Count: let pypdf walk (and repair) the tree
    except Exception as exc:  # noqa: BLE001 - pypdf raises many types on broken trees
        raise ReadError("damaged_pdf", f"the PDF's page tree is damaged and no pages can be found "
                        f"({_short(exc)}). Try another copy of the document.") from None


def _find_page(reader, index: int):
    """Page `index` (0-based) by walking /Kids with /Count; None when the tree does not add up."""
    from pypdf import PageObject
    from pypdf.generic import IndirectObject, NameObject

    node = reader.trailer["/Root"]["/Pages"].get_object()
    inherited: dict = {}
    seen: set[int] = set()
    for _ in range(MAX_TREE_DEPTH):
        if id(node) in seen:
            return None
        seen.add(id(node))
        for key in INHERITABLE:
            if key in node:
                inherited[key] = node[key]
        for kid_ref in node.get("/Kids", []):
            kid = kid_ref.get_object()
            if kid.get("/Type") == "/Pages" or "/Kids" in kid:
                count = kid.get("/Count", 0)
                if not isinstance(count, int):
                    return None
                if index < count:
                    node = kid
                    break
                index -= count
            elif index == 0:
                page = PageObject(reader, kid_ref if isinstance(kid_ref, IndirectObject) else None)
                page.update(kid)
                for key, value in inherited.items():
                    if key not in page:
                        page[NameObject(key)] = value
                return page
            else:
                index -= 1
        else:
            return None
    return None


def _page_text(doc: _Document, number: int) -> str:
    text = doc.texts.get(number)
    if text is None:
        try:
            text = _extract(doc, number)
        except Exception as exc:  # noqa: BLE001 - one broken page must not sink the others
            log.warning("page %d: text extraction failed: %s", number, exc)
            # Not remembered: PDFium reads the file as pages need it, and a read that failed may
            # not fail again.
            return f"[Text could not be extracted from page {number}: {_short(exc)}]"
        doc.remember(number, text)
    return text


def _extract(doc: _Document, number: int) -> str:
    text = doc.backend.text(number)
    text = text.strip("\n")
    if not text.strip():
        return NO_TEXT.format(number)
    return text


def read(source: Source, request: ReadRequest) -> ReadResult:
    """The reader seam's PDF reader. PDFium reads from the file only what the pages asked for need,
    once: the parsed document is kept under the source's cache key. pypdf, for what PDFium refuses,
    reads it whole."""
    return read_pdf(source.stream, request, source.path, source.cache_key, whole=source.whole)


def read_pdf(stream: BinaryIO, request: ReadRequest, path: str, cache_key: tuple,
             whole: Callable[[], bytes] | None = None) -> ReadResult:
    as_pictures = request.view == "image"
    if as_pictures and (request.offset is not None or request.limit is not None):
        raise InvalidParams('view "image" shows whole pages: leave out offset and limit (or leave out view to '
                            "read a page's text by lines)")
    doc = DOCUMENTS.get(cache_key, stream, path, whole)
    with doc.lock:
        first, last = parse_pages(request.pages, doc.total)
        if doc.total == 0:
            return ReadResult(kind="pdf", path=path, total_pages=0,
                              content=[TextPart("[The PDF has no pages: there is nothing to read.]")])
        stop = min(last, first + MAX_PDF_PAGES - 1)
        # offset/limit number the lines of all the pages asked for (at most MAX_PDF_PAGES), and the
        # line window bounds the output; otherwise whole pages are shown within the output budget.
        by_lines = request.offset is not None or request.limit is not None or request.column is not None
        most = MAX_REPLY_IMAGES if as_pictures else MAX_RENDERED_PAGES
        parts: list[str] = []
        pictures: dict[int, ImagePart] = {}  # pages rendered (index in parts → image)
        scans: set[int] = set()  # of those, the pages without text of their own (index in parts)
        image_bytes = 0
        why = ""  # why the pages stop before the range does, where not for the text budget or the page cap
        cut_at = None  # the line where the first page's text was cut to fit beside its picture
        used = 0
        shown = first - 1
        for number in range(first, stop + 1):
            checkpoint()
            text = _page_text(doc, number)
            scanned = _is_picture_page(doc, number, text)
            if not by_lines and (scanned or as_pictures):
                if len(pictures) == most:  # the call ends before it, so that `next` starts with it
                    why = f" (at most {most} pages are shown as {'pictures' if as_pictures else 'images'} a call)"
                    break
                picture = _render(doc, number)
                if isinstance(picture, str):
                    text += picture
                elif pictures and image_bytes + len(picture.data) > MAX_REPLY_IMAGE_BYTES:
                    why = f" (the pictures of one reply hold about {MAX_REPLY_IMAGE_BYTES >> 20} MB)"
                    break
                else:
                    image_bytes += len(picture.data)
                    pictures[len(parts)] = picture
                    if scanned:
                        scans.add(len(parts))
                    text = "" if text == NO_TEXT.format(number) else text
            elif figures := _figures(doc, number):
                text += "\n" + FIGURES_NOTE.format(number=number, count=figures)
            block = f"--- Page {number} ---\n{text}".rstrip("\n")
            size = len(block.encode("utf-8")) + 1
            if not by_lines and used + size > request.output_bytes:
                if parts:
                    pictures.pop(len(parts), None)
                    break
                if as_pictures:  # its picture is shown whole, its text as much as fits
                    block, cut_at = _cut_text(block, request.output_bytes, number, last)
                else:
                    # The first page alone is over the budget: the read becomes a line read of the
                    # pages asked for from line 1, so that `next` continues inside the page and on
                    # through the rest of the range.
                    by_lines = True
            parts.append(block)
            used += size
            shown = number
    # What the read covers: the pages asked for, or the whole document when none were; `next`
    # names all of the rest, so that following it shows every page, and a read that showed all it
    # covers is not cut, whatever follows in the document.
    end = last if request.pages is not None else doc.total
    result = ReadResult(kind="pdf", path=path, total_pages=doc.total)
    if by_lines:
        result = _line_window(result, parts, request, first, shown, end)
        _note_hidden(result, doc, parts, first, result.start_line, result.end_line)
        if result.truncated:
            return result
        parts = [result.content[0].text]
    else:
        _note_hidden(result, doc, parts, first, 1, cut_at - 1 if cut_at is not None else math.inf)
    also = ' and view="image"' if as_pictures else ""
    if cut_at is not None:
        result.truncated = True
        result.next = {"pages": span(first, last), "offset": cut_at}
    elif shown < end:
        result.truncated = True
        result.next = {"pages": span(shown + 1, end), **({"view": "image"} if as_pictures else {})}
        reason = ((why or f" ({output_limit_reason(request.output_bytes)})") if shown < stop
                  else f" (at most {MAX_PDF_PAGES} pages a call)")
        parts.append(f"[Showing {counted('page', first, shown)} of {doc.total}{reason}. Call again with "
                     f'pages="{result.next["pages"]}"{also} to continue.]')
    elif shown < doc.total:
        parts.append(f"[Showing {counted('page', first, shown)} of {doc.total}, all that was asked for. "
                     f'{counted("Page", shown + 1, doc.total)} follow{"s" if shown + 1 == doc.total else ""}: '
                     f'pages="{span(shown + 1, min(doc.total, shown + MAX_PDF_PAGES))}"{also} reads on.]')
    result.content = _with_pictures(parts, pictures, scans, first)
    if not by_lines:
        result.shown = {"pages": list(range(first, shown + 1))}
    return result


def _note_hidden(result: ReadResult, doc: _Document, blocks: list[str], first: int, offset: int, last: float) -> None:
    """Counts in `result` the hidden passages its reply shows: those on lines offset..last of the
    page blocks (page `first` on, joined by a blank line, numbered from 1)."""
    if not isinstance(doc.backend, _Pdfium):
        return
    start = 1  # the line of a block's "--- Page N ---"
    for number, block in enumerate(blocks, first):
        lines = block.count("\n") + 1
        for line, why in doc.backend.passages.get(number, ()):
            if line + 2 <= lines and offset <= start + 1 + line <= last:
                note(result, why)
        start += lines + 1


def _figures(doc: _Document, number: int) -> str:
    """The figures PDFium found on the page, in words ("1 figure", "5 figures"); "" for none."""
    count = doc.backend.figures.get(number, 0) if isinstance(doc.backend, _Pdfium) else 0
    return "" if count == 0 else "1 figure" if count == 1 else f"{count} figures"


def _render(doc: _Document, number: int) -> ImagePart | str:
    """Page `number` as a picture, or the line that says why it cannot be one."""
    if not isinstance(doc.backend, _Pdfium):
        return (f"\n[Page {number} cannot be shown as a picture: only pypdf could open this file, and it draws "
                "no pages.]")
    from agentread.readers.pdf.pages import render_pdfium_page

    try:
        return render_pdfium_page(doc.backend.pdf, number)
    except Exception as exc:  # noqa: BLE001 - a page PDFium cannot draw keeps its text and says so
        log.warning("page %d: rendering failed: %s", number, exc)
        return f"\n[Page {number} could not be rendered as an image ({_short(exc)}).]"


def _cut_text(block: str, budget: int, number: int, last: int) -> tuple[str, int]:
    """The page's block cut at a line end to fit `budget` bytes with the line that says so, and the
    number of the first line left out (the block's lines numbered as a line read numbers them)."""
    kept = block.encode("utf-8")[:budget - CUT_NOTE_BYTES].decode("utf-8", errors="ignore")
    kept = kept[:kept.rfind("\n")] if "\n" in kept else kept
    after = kept.count("\n") + 2
    return (kept + f"\n[The text of page {number} is cut here to fit the reply. Call again with "
            f'pages="{span(number, last)}" and offset={after}, without view, to read on as text.]'), after


def search(source: Source, request: ReadRequest,
           matcher: Matcher) -> tuple[str, Iterator[Hit | Reached], Callable[[], list[str]]]:
    """The reader seam's PDF search: the pages asked for (all by default), each page's lines
    numbered as a line read of that page numbers them (line 1 is its `--- Page N ---` line). A
    scanned page's OCR text is not searched (Tesseract takes seconds a page, and a scanned book has
    hundreds): the reply names the pages passed over that way and the read that shows them."""
    doc = DOCUMENTS.get(source.cache_key, source.stream, source.path, source.whole)
    scans: dict[int, bool] = {}  # the picture pages passed, each: whether it has some text of its own
    return "pdf", _search(doc, request, matcher, scans), lambda: _unsearched(scans, isinstance(doc.backend, _Pdfium))


def _search(doc: _Document, request: ReadRequest, matcher: Matcher,
            scans: dict[int, bool]) -> Iterator[Hit | Reached]:
    with doc.lock:
        if doc.total == 0 and request.pages is None:
            return  # no pages, no hits
        first, last = parse_pages(request.pages or "1-", doc.total)  # every page by default
        yield from hits_in(_page_units(doc, first, last, request.offset or 1, scans), matcher, request.column or 1)


def _page_units(doc: _Document, first: int, last: int, offset: int, scans: dict[int, bool]) -> Iterator[Unit]:
    """The lines of pages first..last from line `offset` of the range as a line read numbers it;
    the picture pages among those (a read shows them as images, with OCR text) go in `scans`."""
    number = 0  # in the range: each page's lines after a blank line, as _line_window joins them
    labels = doc.labels()  # a hit is cited by the page's label too, as the document prints it
    for page in range(first, last + 1):
        checkpoint()
        text = _page_text(doc, page)
        if number + 1 >= offset and (text == NO_TEXT.format(page) or _is_picture_page(doc, page, text)):
            scans[page] = text != NO_TEXT.format(page)
        lines = [] if text == NO_TEXT.format(page) else text.split("\n")
        label = labels[page - 1] if labels and labels[page - 1] != str(page) else None
        where = {"page": page, "label": label} if label else {"page": page}
        for line, text in enumerate(lines, 2):
            if number + line >= offset:
                yield Unit(text, {**where, "line": line}, {"pages": str(page), "offset": line, "limit": 1},
                           {"pages": span(page, last), "offset": line})
        number += len(lines) + 2


# Runs of picture pages a find reply names one by one, so that its lines stay within the room a
# reply keeps for them (find.UNSEARCHED_BYTES); more are counted, with the pages they lie between.
MAX_UNSEARCHED_RUNS = 4


def _unsearched(scans: dict[int, bool], pictures: bool) -> list[str]:
    """A find reply's lines naming the picture pages it passed, and the reads that show them (as
    pictures where PDFium draws them)."""
    ocr = " with its OCR text" if shutil.which("tesseract") else ""
    lines = []
    for has_text, one, many in ((False, "has no text layer (a scan or a drawing) and was not searched",
                                 "have no text layer (scans or drawings) and were not searched"),
                                (True, "is mostly a picture with little text (a scan): only that text was searched",
                                 "are mostly pictures with little text (scans): only that text was searched")):
        runs: list[list[int]] = []
        for page in sorted(page for page, some in scans.items() if some == has_text):
            if runs and runs[-1][1] == page - 1:
                runs[-1][1] = page
            else:
                runs.append([page, page])
        if not runs:
            continue
        names = [span(a, b) for a, b in runs]
        more = runs[MAX_UNSEARCHED_RUNS:]
        listed = ", ".join(names[:MAX_UNSEARCHED_RUNS]) + (
            f" and {len(more):,} more runs of pages from {more[0][0]} to {more[-1][1]}" if more else "")
        reads = ", ".join(f'pages="{name}"' for name in names[:MAX_UNSEARCHED_RUNS])
        single = names == [str(runs[0][0])]
        shows = (f"A read shows {'it' if single else 'each'} as its picture{ocr}: {reads}" if pictures else
                 "No read shows more: only pypdf opens this file, and it draws no pages")
        lines.append(f"[{'Page' if single else 'Pages'} {listed} {one if single else many}. {shows}.]")
    return lines


def _is_picture_page(doc: _Document, number: int, text: str) -> bool:
    """A page to show as an image: no text, or scant text on a page that is mostly pictures
    (PDFium only)."""
    if not isinstance(doc.backend, _Pdfium):
        return False
    return text == NO_TEXT.format(number) or number in doc.backend.picture_pages


def _with_pictures(blocks: list[str], pictures: dict[int, ImagePart], scans: set[int], first: int) -> list[Part]:
    """The page blocks as text parts, each rendered page's picture after its text: a scan's with its
    note and OCR text, an asked-for picture with a line naming it, so that the text reads whole
    where the picture is left out."""
    if not pictures:
        return [TextPart("\n\n".join(blocks))]
    from agentread.readers.pdf.pages import OCR_BUDGET_SECONDS, scanned_page  # OCR runs here, outside the PDFium lock

    ocr_until = time.monotonic() + OCR_BUDGET_SECONDS
    content: list[Part] = []
    text: list[str] = []
    for index, block in enumerate(blocks):
        text.append(block)
        if index in scans:
            has_text = "\n" in block  # more than its "--- Page N ---" line
            content += [TextPart("\n\n".join(text)), *scanned_page(first + index, pictures[index], has_text,
                                                                  ocr_until - time.monotonic())]
            text = []
        elif index in pictures:
            picture = pictures[index]
            text[-1] += f"\n[Page {first + index} as a picture, {picture.width}x{picture.height}:]"
            content += [TextPart("\n\n".join(text)), picture]
            text = []
    if text:
        content.append(TextPart("\n\n".join(text)))
    return content


def _line_window(result: ReadResult, pages: list[str], request: ReadRequest, first: int, shown: int,
                 end: int) -> ReadResult:
    """offset/limit over the numbered lines of the pages read (first..shown, of the range first..end
    the read covers): for citing and paging within long pages. `next` keeps the whole range, so
    that once these lines are read the pages after them follow."""
    lines = "\n\n".join(pages).split("\n")
    offset = request.line_from(len(lines))
    if offset > len(lines):
        raise ReadError("offset_past_end", f"offset {offset:,} is past the end of {counted('page', first, shown)}, "
                        f"which {'has' if first == shown else 'have'} {amount(len(lines), 'line')}. Call again with "
                        f"{up_to(len(lines), 'offset', 'an ')}.")
    out, last, following = window(lines, offset, request.line_limit, request.output_bytes,
                                  also=f'pages="{span(first, end)}" and ', column=request.column or 1)
    result.content = [TextPart("\n".join(out))]
    result.start_line, result.end_line, result.total_lines = offset, last, len(lines)
    result.shown = {"pages": _pages_of_lines(pages, first, offset, last),
                    **shown_lines(offset, last, request.column or 1)}
    if following is not None:
        result.truncated = True
        result.next = {"pages": span(first, end), **following}
    return result


def _pages_of_lines(pages: list[str], first: int, offset: int, last: int) -> list[int]:
    """The pages whose lines (page blocks joined by a blank line, numbered from 1) meet lines
    offset..last."""
    out, start = [], 1
    for number, block in enumerate(pages, first):
        end = start + block.count("\n")
        if start <= last and end >= offset:
            out.append(number)
        start = end + 2
    return out
