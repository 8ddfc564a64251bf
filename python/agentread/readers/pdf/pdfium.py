"""PDFium, the PDF engine, through pypdfium2: its helper classes where they fit, its raw bindings
(generated from PDFium's own headers) for what they lack: page objects, their bounds and matrices,
and loading a document from a file as its pages need it.

PDFium is not thread-safe, not even across documents: every call runs under LOCK, those pypdfium2's
helpers make included. It is re-entrant because a document the garbage collector drops closes
itself, perhaps in a thread that already holds it. pypdfium2's own finalizers take no lock: every
helper made here is closed under LOCK, by its caller or by a finalizer of ours that holds it, never
by the collector alone.
"""

from __future__ import annotations

import atexit
import math
import os
import threading
import weakref
from array import array
from collections.abc import Iterator
from ctypes import addressof, byref, c_float, c_int, c_uint, c_void_p, cast, create_string_buffer, memmove

from agentread.cancel import checkpoint, stopped

LOCK = threading.RLock()

# At exit pypdfium2 tears PDFium down without LOCK: a call in flight in a daemon thread is let
# finish first, for at most this long (a page's calls are bounded by the reader's object cap).
EXIT_WAIT_SECONDS = 10

# The object walk looks for a cancelled read once in this many objects: a hostile page can
# hold millions.
OBJECTS_BETWEEN_CHECKPOINTS = 1024

# FPDF_GetLastError codes (fpdfview.h), in words.
_ERRORS = {"FPDF_ERR_UNKNOWN": "an unknown error", "FPDF_ERR_FILE": "the file could not be read",
           "FPDF_ERR_FORMAT": "not a PDF, or damaged", "FPDF_ERR_PASSWORD": "it needs a password",
           "FPDF_ERR_SECURITY": "its security scheme is not supported", "FPDF_ERR_PAGE": "a page could not be read"}

# Pages loaded between two checks for a cancelled read, and bookmarks or labels read between two: a
# few milliseconds of work.
PAGES_PER_CHECK = 1000
NAMES_PER_CHECK = 1000

# A bookmark's title or a page's label is read into a buffer this large, a longer title again into
# one of its size: real ones are a line of text. A longer label is dropped: no page number is.
NAME_BUFFER_BYTES = 1024

_WHITE = (255, 255, 255, 255)  # the paper under a page that paints no background

Matrix = tuple  # (a, b, c, d, e, f), as a PDF's cm operator takes it
IDENTITY = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)

# PDFium's functions the compiled walks of a page's objects and of its paths' segments call
# (_scan.page_objects, _scan.path_segments), in their order, each with the signature _scan.c calls
# it with: its result, then its arguments ("object" an FPDF_PAGEOBJECT, "page" an FPDF_PAGE,
# "segment" an FPDF_PATHSEGMENT, "*" a pointer to the type that follows). The walks are used only
# where pypdfium2's bindings, generated from PDFium's headers, say the same (_functions).
PAGE_OBJECT_FUNCTIONS = {
    "FPDFPage_CountObjects": ("int", "page"),
    "FPDFPage_GetObject": ("object", "page", "int"),
    "FPDFFormObj_CountObjects": ("int", "object"),
    "FPDFFormObj_GetObject": ("object", "object", "ulong"),
    "FPDFPageObj_GetType": ("int", "object"),
    "FPDFPageObj_GetMatrix": ("int", "object", "*matrix"),
    "FPDFPageObj_Transform": (None, "object", *("double",) * 6),
    "FPDFTextObj_GetTextRenderMode": ("int", "object"),
    "FPDFPageObj_GetFillColor": ("int", "object", *("*uint",) * 4),
    "FPDFPageObj_GetStrokeColor": ("int", "object", *("*uint",) * 4),
    "FPDFTextObj_GetFontSize": ("int", "object", "*float"),
    "FPDFPageObj_GetBounds": ("int", "object", *("*float",) * 4),
    "FPDFPath_GetDrawMode": ("int", "object", "*int", "*int"),
    "FPDFPath_CountSegments": ("int", "object"),
    "FPDFPath_GetPathSegment": ("segment", "object", "int"),
    "FPDFPathSegment_GetType": ("int", "segment"),
    "FPDFPathSegment_GetPoint": ("int", "segment", "*float", "*float"),
    "FPDFPathSegment_GetClose": ("int", "segment"),
}
_FILLED_MODES = (0, 2, 4, 6)  # text render modes that fill a glyph; the others stroke it, or draw nothing
_NO_VALUE = math.nan  # a measure PDFium could not give

try:  # setup.py builds it; without a C compiler the walks are made in Python, several times slower
    from agentread._scan import page_objects as _compiled_page_objects
    from agentread._scan import path_segments as _compiled_path_segments
except ImportError:  # a module built from an older _scan.c takes fewer functions: neither walk is used
    _compiled_page_objects = _compiled_path_segments = None


class PdfiumError(Exception):
    pass


_PYPDFIUM2 = None
_OPEN: weakref.WeakSet = weakref.WeakSet()  # the documents not yet closed, for the exit
_exit_guarded = False


def library():
    """The pypdfium2 package, imported on first use (call under LOCK: importing it
    initialises PDFium)."""
    global _PYPDFIUM2
    if _PYPDFIUM2 is None:
        try:
            import pypdfium2
        except (ImportError, OSError) as exc:  # not installed, or its PDFium library cannot be loaded
            raise PdfiumError(f"the PDFium library (the pypdfium2 package) cannot be loaded: {exc}") from None
        _PYPDFIUM2 = pypdfium2
    return _PYPDFIUM2


def _close_all_at_exit() -> None:
    """Closes the documents still open, under LOCK, and keeps it: pypdfium2 would close them
    itself, saying so on stderr, then tears PDFium down, with no lock of its own against another
    thread's call."""
    if LOCK.acquire(timeout=EXIT_WAIT_SECONDS):
        for document in list(_OPEN):
            document.close()


def _close_under_lock(helper, source=None) -> None:
    """Closes a pypdfium2 helper (a document closes its pages first), then the file a document
    was read from."""
    with LOCK:
        helper.close()
        if isinstance(source, _FileReader):
            source.close()


class Document:
    """An open PDF, read by PDFium from `data` in memory, or from the open file `fd` as its pages
    need it (a page of a large manual reads a small part of it): from a copy of the descriptor,
    closed with the document.
    """

    def __init__(self, data: bytes | None = None, fd: int | None = None):
        global _exit_guarded
        with LOCK:
            pdfium = library()
            raw = pdfium.raw
            # Loaded through the raw API, not PdfDocument(data or file): a document that opens with
            # no pages is closed here, the error code is read in every pypdfium2 version, and a
            # block is given to PDFium only whole (or refused, as when the read is cancelled)
            # whatever the version's own file reader does.
            source = data if fd is None else _FileReader(fd)
            try:
                if fd is None:
                    handle = raw.FPDF_LoadMemDocument64(data, len(data), None)
                else:
                    handle = raw.FPDF_LoadCustomDocument(byref(source.access), None)
                self.page_count = raw.FPDF_GetPageCount(handle) if handle else 0
                if self.page_count < 1:  # a page tree it cannot follow opens with none: pypdf may do better
                    code = raw.FPDF_GetLastError()
                    if handle:
                        raw.FPDF_CloseDocument(handle)
                    words = {getattr(raw, name, None): text for name, text in _ERRORS.items()}
                    raise PdfiumError(f"PDFium cannot open it: {words.get(code, 'no pages found')}")
                self.pdf = pdfium.PdfDocument(handle)
            except BaseException:
                if isinstance(source, _FileReader):
                    source.close()
                raise
            self.source = source
            # The source goes with the document: PDFium reads from it until the document is closed.
            self._close = weakref.finalize(self, _close_under_lock, self.pdf, source)
            self._close.atexit = False  # closed at exit by _close_all_at_exit, under LOCK
            _OPEN.add(self)
            if not _exit_guarded:
                # Registered after pypdfium2's import and this document's finalizer: it runs before
                # both their exit handlers (pypdfium2's finalizers, then PDFium torn down).
                atexit.register(_close_all_at_exit)
                _exit_guarded = True

    def close(self) -> None:
        """Closes the document and the pages still open in it (under LOCK, taken here too)."""
        self._close()
        self.pdf = None
        _OPEN.discard(self)

    def page(self, number: int) -> Page:
        """Page `number` (1-based), loaded; close it (or use `with`) under LOCK."""
        if self.pdf is None:
            raise PdfiumError("the document is closed")
        try:
            page = self.pdf.get_page(number - 1)
        except library().PdfiumError:
            raise PdfiumError(f"PDFium cannot load page {number}") from None
        return Page(self, page)

    def bookmarks(self, max_depth: int, max_count: int, pages_walked: int):
        """(level, title, page number or None) of each bookmark of the document's outline in order,
        to `max_depth` levels (0 the top) and `max_count` bookmarks. A bookmark met again (a hostile
        outline's cycle) ends the list it is met in. Through the raw API with one buffer: the
        helpers make a buffer and an object a call, a tenth of a long outline's time."""
        raw, handle = library().raw, self.pdf.raw
        # PDFium finds a destination's page by walking the page tree from its start, loading pages
        # as it goes, for each bookmark; with the first `pages_walked` pages' dictionaries loaded
        # first, each lookup is found among them at once: several times faster. Asking a page's
        # size loads the pages before it too, so a call every PAGES_PER_CHECK pages loads them all.
        walked = min(self.page_count, pages_walked)
        size = raw.FS_SIZEF()
        for index in [*range(PAGES_PER_CHECK - 1, walked - 1, PAGES_PER_CHECK), walked - 1]:
            checkpoint()
            raw.FPDF_GetPageSizeByIndexF(handle, index, size)
        first, following = raw.FPDFBookmark_GetFirstChild, raw.FPDFBookmark_GetNextSibling
        get_dest, page_of, title_of = raw.FPDFBookmark_GetDest, raw.FPDFDest_GetDestPageIndex, raw.FPDFBookmark_GetTitle
        buffer = create_string_buffer(NAME_BUFFER_BYTES)
        seen: set[int] = set()
        pending = [(first(handle, None), 0)]  # the next bookmark of each list being walked
        while pending:
            mark, level = pending.pop()
            if not mark or len(seen) >= max_count:
                continue
            address = addressof(mark.contents)
            if address in seen:
                continue
            seen.add(address)
            if len(seen) % NAMES_PER_CHECK == 0:
                checkpoint()
            pending.append((following(handle, mark), level))
            if level + 1 < max_depth:
                pending.append((first(handle, mark), level + 1))  # its children before its next sibling
            dest = get_dest(handle, mark)
            index = page_of(handle, dest) if dest else -1
            yield level, _name(title_of, (mark,), buffer), index + 1 if index >= 0 else None

    def page_labels(self) -> list[str]:
        """Each page's label (the number a viewer shows for it) by index; "" where it has none or
        one longer than a page number is ever written (a hostile file's labels of megabytes)."""
        raw, handle = library().raw, self.pdf.raw
        buffer = create_string_buffer(NAME_BUFFER_BYTES)
        labels = []
        for index in range(self.page_count):
            if index % NAMES_PER_CHECK == 0:
                checkpoint()
            labels.append(_name(raw.FPDF_GetPageLabel, (handle, index), buffer, grow=False))
        return labels


def _name(call, args: tuple, buffer, grow: bool = True) -> str:
    """The UTF-16 string a PDFium call of the form call(*args, buffer, length) writes, read into
    `buffer`; a longer one into a buffer of its own, or "" without `grow`. Halves of surrogate
    pairs show as U+FFFD."""
    length = call(*args, buffer, len(buffer))
    if length > len(buffer):
        if not grow:
            return ""
        buffer = create_string_buffer(length)
        length = call(*args, buffer, length)
    return buffer.raw[:max(length - 2, 0)].decode("utf-16-le", errors="replace")  # less its NUL


# Where a document can be read from its file as its pages need it: with pread, which leaves the
# descriptor's offset (shared with the engine's) alone. Windows has none, and would not let a file
# held open by the document cache be deleted or renamed: there a PDF is read whole into memory, as
# an editor's buffer is.
READS_FROM_FILES = hasattr(os, "pread")


class _FileReader:
    """FPDF_FILEACCESS over a copy of a file descriptor: PDFium asks for blocks at offsets,
    read with pread."""

    def __init__(self, fd: int):
        self.access = library().raw.FPDF_FILEACCESS()
        self.fd = os.dup(fd)
        try:
            self.access.m_FileLen = os.fstat(self.fd).st_size
        except BaseException:
            os.close(self.fd)
            raise
        self.bytes_read = 0
        # In the field's own callback type; held here for as long as PDFium may call it.
        self.callback = type(self.access.m_GetBlock)(self._get_block)
        self.access.m_GetBlock = self.callback
        self.access.m_Param = None

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def _get_block(self, _param, position: int, buffer, size: int) -> int:
        if stopped():
            return 0  # the read was cancelled or ran out of time: PDFium stops at the failed read
        try:
            data = os.pread(self.fd, size, position)
        except Exception:  # noqa: BLE001 - nothing may leave a callback into C: PDFium takes 0 as a read error
            return 0
        if len(data) != size:
            return 0  # the file was cut short since it was opened
        memmove(buffer, data, size)
        self.bytes_read += size
        return 1


class Page:
    def __init__(self, document: Document, page):
        self.document = document  # open for as long as its page is
        self.page = page  # pypdfium2's PdfPage
        self.handle = page.raw  # its FPDF_PAGE, for the raw API
        self._close = weakref.finalize(self, _close_under_lock, page)
        self._close.atexit = False  # at exit its document closes it

    def __enter__(self) -> Page:
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def close(self) -> None:
        self._close()
        self.handle = None

    @property
    def size(self) -> tuple[float, float]:
        """Width and height in points, as the page is shown (its /Rotate applied)."""
        return self.page.get_size()

    @property
    def box(self) -> tuple[float, float, float, float]:
        """What the page shows (its crop box within its media box) as (left, bottom, right,
        top), in the coordinates of its objects' bounds: not turned by /Rotate, and not
        necessarily from (0, 0)."""
        try:
            return self.page.get_bbox()
        except library().PdfiumError:
            return (0.0, 0.0, *self.size)

    def text(self, mark=None):
        """The page's text in reading order, lines ended with CRLF, as PDFium lays it out; with
        `mark`, what mark(page, textpage, first, last, text) makes of it while its characters
        can be asked about."""
        pdfium = library()
        try:
            textpage = self.page.get_textpage()
        except pdfium.PdfiumError:
            raise PdfiumError("PDFium cannot lay out the page's text") from None
        try:
            index, handle = pdfium.raw.FPDFText_GetTextIndexFromCharIndex, textpage.raw
            # Characters PDFium leaves out of the text (index -1) at either end are skipped here, in
            # a loop: asked to cover them, FPDFText_GetText can write past a buffer sized for the
            # text (crbug.com/pdfium/2079), and get_text_range's own skipping recurses once a
            # character (a page of them runs out of stack).
            first, last = 0, textpage.count_chars() - 1
            while first <= last and index(handle, first) < 0:
                first += 1
            while last >= first and index(handle, last) < 0:
                last -= 1
            if first > last:
                return mark(self, textpage, 0, -1, "") if mark else ""
            text = textpage.get_text_range(first, last - first + 1, errors="ignore")
            return mark(self, textpage, first, last, text) if mark else text
        finally:
            textpage.close()

    def objects(self, max_depth: float = math.inf, enter=None):
        """(object, matrix) for each of the page's objects in the file's order, those in form
        XObjects up to `max_depth` levels counted (the page's own is one), of each form for which
        enter(form), asked once the form is handed out, is true. The matrix takes the object's
        coordinates to the page's: an object in a form is placed in the form's own space, which the
        form object places. Objects are raw FPDF_PAGEOBJECTs: pypdfium2's get_objects makes a helper
        of each and cannot leave a form unwalked once it is handed out."""
        raw = library().raw
        kind, form_kind = raw.FPDFPageObj_GetType, raw.FPDF_PAGEOBJ_FORM
        stack = [(raw.FPDFPage_GetObject, self.handle, raw.FPDFPage_CountObjects(self.handle), 0, 1, IDENTITY)]
        while stack:
            get, holder, count, start, depth, matrix = stack.pop()
            for position in range(start, count):
                if position % OBJECTS_BETWEEN_CHECKPOINTS == 0:
                    checkpoint()  # and at each form's first object: a page can nest millions of small forms
                thing = get(holder, position)
                if not thing:
                    continue
                yield thing, matrix
                if depth < max_depth and (enter is None or enter(thing)) and kind(thing) == form_kind:
                    stack.append((get, holder, count, position + 1, depth, matrix))  # back here after the form
                    stack.append((raw.FPDFFormObj_GetObject, thing, raw.FPDFFormObj_CountObjects(thing), 0,
                                  depth + 1, _compose(matrix, _matrix(raw, thing))))
                    break

    def objects_table(self, keep: int, compiled: bool = True) -> PageObjects:
        """The page's first `keep` objects, in the order objects() walks them, described once in
        columns (PageObjects) for the rules that look at them all: a page's thousands of objects
        cost a few calls each, which from Python cost several times PDFium's own work (compiled
        here: _scan.page_objects). Each object past the first `keep` is shrunk to nothing (the file
        is not touched), and a form so shrunk is not entered: PDFium's text layout skips an object
        of no width, so that a page of millions of objects is laid out by the first `keep`. Not
        removed: PDFium finds the object to remove by a search from the start, itself quadratic.
        The compiled walk looks for a cancelled read before it starts: it costs a small part of
        the page's load, which parsed every object it meets."""
        raw = library().raw
        kinds = (raw.FPDF_PAGEOBJ_TEXT, raw.FPDF_PAGEOBJ_IMAGE, raw.FPDF_PAGEOBJ_PATH, raw.FPDF_PAGEOBJ_FORM,
                 raw.FPDF_FILLMODE_NONE)
        functions = _functions(raw) if compiled and _compiled_page_objects is not None else None
        if functions:
            checkpoint()
            cut, columns = _compiled_page_objects(functions, cast(self.handle, c_void_p).value, keep, kinds)
            return PageObjects(cut, columns)
        return self._objects_table_in_python(keep, kinds)

    def _objects_table_in_python(self, keep: int, kinds: tuple) -> PageObjects:
        """objects_table made by objects() and pypdfium2's bindings, as _scan.page_objects does."""
        raw = library().raw
        text, image, path, form, no_fill = kinds
        columns = (bytearray(), array("Q"), array("d"), array("b"), bytearray(), bytearray(), array("d"),
                   array("d"), bytearray())
        kind_of, handles, boxes, modes, colours, coloured, points, starts, filled = columns
        size, placed, fill, stroke = c_float(), raw.FS_MATRIX(), c_int(), c_int()
        rgba = (c_uint(), c_uint(), c_uint(), c_uint())
        shrunk, left = None, keep
        for thing, matrix in self.objects(enter=lambda form: form is not shrunk):
            if left <= 0:
                raw.FPDFPageObj_Transform(thing, 0, 0, 0, 0, 0, 0)
                shrunk = thing
                continue
            left -= 1
            kind = raw.FPDFPageObj_GetType(thing)
            kind_of.append(kind)
            handles.append(addressof(thing.contents))
            boxes.extend((bounds(thing, matrix) if kind != form else None) or (_NO_VALUE,) * 4)
            mode, colour, measured, start, is_filled = -1, None, _NO_VALUE, (_NO_VALUE, _NO_VALUE), 0
            if kind == text:
                mode = raw.FPDFTextObj_GetTextRenderMode(thing)
                mode = mode if -1 <= mode <= 7 else -1
                get = raw.FPDFPageObj_GetFillColor if mode in _FILLED_MODES else raw.FPDFPageObj_GetStrokeColor
                colour = get(thing, *map(byref, rgba))
                if (raw.FPDFTextObj_GetFontSize(thing, byref(size))
                        and raw.FPDFPageObj_GetMatrix(thing, byref(placed))):
                    a, b, c, d, e, f = matrix
                    scale = (placed.a * placed.d - placed.b * placed.c) * (a * d - b * c)
                    measured = size.value * math.sqrt(abs(scale))
                    start = (a * placed.e + c * placed.f + e, b * placed.e + d * placed.f + f)
            elif kind == path:
                if raw.FPDFPath_GetDrawMode(thing, byref(fill), byref(stroke)):
                    is_filled = int(fill.value != no_fill)
                colour = raw.FPDFPageObj_GetFillColor(thing, *map(byref, rgba))
            modes.append(mode)
            colours.extend([min(part.value, 255) for part in rgba] if colour else bytes(4))
            coloured.append(1 if colour else 0)
            points.append(measured)
            starts.extend(start)
            filled.append(is_filled)
        return PageObjects(shrunk is not None, tuple(bytes(column) for column in columns))

    def render(self, scale: float):
        """The page drawn on white at `scale` pixels a point, as a Pillow RGB image."""
        width, height = (math.ceil(side * scale) for side in self.size)
        if width < 1 or height < 1:
            raise PdfiumError(f"the page has no area to draw ({width}x{height} px)")
        # Annotations (stamps, notes, form fields' appearances) drawn, as a viewer shows the page.
        bitmap = self.page.render(scale=scale, fill_color=_WHITE, draw_annots=True)
        try:
            return bitmap.to_pil()  # a copy: Pillow converts the bitmap's BGR to RGB
        finally:
            bitmap.close()


class PageObjects:
    """A page's objects (Page.objects_table), in columns of one entry an object: its kind
    (FPDF_PAGEOBJ_*), its FPDF_PAGEOBJECT's address, its box on the page (left, bottom, right, top;
    NaN where PDFium gives none, and for a form); for a text its render mode (-1 where unknown),
    the colour it is drawn in (filled, or stroked where its mode fills no glyph), its font size as
    drawn (its matrix and the forms holding it applied) and where it starts on the page; for a path
    whether it is filled, and its fill colour. `cut`: whether objects past those were shrunk."""

    def __init__(self, cut: bool, columns: tuple[bytes, ...]):
        kinds, handles, boxes, modes, colours, coloured, points, starts, filled = columns
        self.cut = cut
        self.kinds = kinds
        self.handles = memoryview(handles).cast("Q")
        self.boxes = memoryview(boxes).cast("d")
        self.modes = memoryview(modes).cast("b")
        self.colours = colours
        self.coloured = coloured
        self.points = memoryview(points).cast("d")
        self.starts = memoryview(starts).cast("d")
        self.filled = filled

    def __len__(self) -> int:
        return len(self.kinds)

    def handle(self, index: int):
        """The object as pypdfium2's bindings take it."""
        return cast(c_void_p(self.handles[index]), library().raw.FPDF_PAGEOBJECT)

    def box(self, index: int) -> tuple[float, float, float, float] | None:
        box = tuple(self.boxes[4 * index:4 * index + 4])
        return None if math.isnan(box[0]) else box

    def colour(self, index: int) -> tuple[int, int, int, int] | None:
        return tuple(self.colours[4 * index:4 * index + 4]) if self.coloured[index] else None

    def segments(self, paths: list[int], most: int, compiled: bool = True) -> PathSegments | _PathSegmentsInPython:
        """The first `most` segments of each of the `paths` (indexes of paths in the table) while
        the page is open: a plot's thousands of paths cost a few calls a segment, which from Python
        cost more than the rest of the page's read (compiled here: _scan.path_segments). Without
        the compiled walk each path's segments are asked for as they are read: a path's shape is
        often decided by its first few."""
        raw = library().raw
        functions = _functions(raw) if compiled and _compiled_path_segments is not None else None
        if functions:
            addresses = array("Q", (self.handles[index] for index in paths)).tobytes()
            return PathSegments(paths, _compiled_path_segments(functions, addresses, most))
        return _PathSegmentsInPython(self, most)


class PathSegments:
    """The first segments of some of a page's paths (PageObjects.segments), in columns: for each
    path the segments PDFium says it has (-1 where it cannot say) and where its segments end in the
    columns of one entry a segment: its kind (FPDF_SEGMENT_*), the point it goes to (NaN where
    PDFium gives none), and whether it closes its figure."""

    def __init__(self, paths: list[int], columns: tuple[bytes, ...]):
        counts, ends, kinds, xs, ys, closes = columns
        self.at = {index: position for position, index in enumerate(paths)}
        self.counts = memoryview(counts).cast("i")
        self.ends = memoryview(ends).cast("q")
        self.kinds = memoryview(kinds).cast("i")
        self.xs = memoryview(xs).cast("f")
        self.ys = memoryview(ys).cast("f")
        self.closes = closes

    def count(self, index: int) -> int:
        """The segments PDFium says the path (its index in the table) has."""
        return self.counts[self.at[index]]

    def of(self, index: int) -> Iterator[tuple[int, float, float, int]]:
        """(kind, x, y, closes) of each of the path's first segments."""
        position = self.at[index]
        start, end = self.ends[position - 1] if position else 0, self.ends[position]
        return zip(self.kinds[start:end], self.xs[start:end], self.ys[start:end], self.closes[start:end])


class _PathSegmentsInPython:
    """PathSegments made through pypdfium2's bindings, as _scan.path_segments does, a segment as
    it is read."""

    def __init__(self, objects: PageObjects, most: int):
        self.objects = objects
        self.most = most

    def count(self, index: int) -> int:
        return library().raw.FPDFPath_CountSegments(self.objects.handle(index))

    def of(self, index: int) -> Iterator[tuple[int, float, float, int]]:
        raw = library().raw
        thing = self.objects.handle(index)
        x, y = c_float(), c_float()
        for at in range(min(raw.FPDFPath_CountSegments(thing), self.most)):
            segment = raw.FPDFPath_GetPathSegment(thing, at)
            kind = raw.FPDFPathSegment_GetType(segment)
            if not raw.FPDFPathSegment_GetPoint(segment, byref(x), byref(y)):
                x.value = y.value = _NO_VALUE
            yield kind, x.value, y.value, 1 if raw.FPDFPathSegment_GetClose(segment) else 0


def _functions(raw) -> tuple[int, ...] | None:
    """The addresses of PAGE_OBJECT_FUNCTIONS in the PDFium pypdfium2 loaded; None unless each one's
    signature in pypdfium2's bindings is the one _scan.c calls it with."""
    global _FUNCTIONS
    if _FUNCTIONS is None:
        from ctypes import POINTER, c_double, c_ulong

        types = {"int": c_int, "ulong": c_ulong, "double": c_double, "page": raw.FPDF_PAGE,
                 "object": raw.FPDF_PAGEOBJECT, "segment": raw.FPDF_PATHSEGMENT, "*matrix": POINTER(raw.FS_MATRIX),
                 "*uint": POINTER(c_uint), "*float": POINTER(c_float), "*int": POINTER(c_int), None: None}
        matrix_of_floats = [kind for _, kind in raw.FS_MATRIX._fields_] == [c_float] * 6
        functions = [getattr(raw, name, None) for name in PAGE_OBJECT_FUNCTIONS]
        same = matrix_of_floats and all(
            function is not None and [function.restype, *function.argtypes] == [types[kind] for kind in signature]
            for function, signature in zip(functions, PAGE_OBJECT_FUNCTIONS.values()))
        _FUNCTIONS = tuple(cast(function, c_void_p).value for function in functions) if same else ()
    return _FUNCTIONS or None


_FUNCTIONS: tuple[int, ...] | None = None  # () where the bindings differ


def near(a: tuple, b: tuple, gap: float = 0.0) -> bool:
    """Whether two boxes (left, bottom, right, top) come within `gap` of each other (0: meet)."""
    return (a[0] - gap <= b[2] and b[0] - gap <= a[2]
            and a[1] - gap <= b[3] and b[1] - gap <= a[3])


def holds(outer: tuple, inner: tuple) -> bool:
    """Whether box `outer` (left, bottom, right, top) holds the whole of box `inner`."""
    return outer[0] <= inner[0] and outer[1] <= inner[1] and inner[2] <= outer[2] and inner[3] <= outer[3]


def bounds(thing, matrix: Matrix) -> tuple[float, float, float, float] | None:
    """A page object's box (left, bottom, right, top) in points on the page, its coordinates taken
    there by `matrix` (from objects()); None where PDFium gives none."""
    box = (c_float(), c_float(), c_float(), c_float())
    if not library().raw.FPDFPageObj_GetBounds(thing, *map(byref, box)):
        return None
    left, bottom, right, top = (side.value for side in box)
    a, b, c, d, e, f = matrix
    xs, ys = zip(*((a * x + c * y + e, b * x + d * y + f) for x in (left, right) for y in (bottom, top)))
    return min(xs), min(ys), max(xs), max(ys)


def _matrix(raw, thing) -> Matrix:
    """The matrix PDFium placed an object with (a form object's: the form's space on
    its holder's)."""
    m = raw.FS_MATRIX()
    return (m.a, m.b, m.c, m.d, m.e, m.f) if raw.FPDFPageObj_GetMatrix(thing, byref(m)) else IDENTITY


def _compose(outer: Matrix, inner: Matrix) -> Matrix:
    """The matrix applying `inner`, then `outer` ([a b c d e f] as PDF writes them: x' =
    ax + cy + e)."""
    a0, b0, c0, d0, e0, f0 = outer
    a1, b1, c1, d1, e1, f1 = inner
    return (a0 * a1 + c0 * b1, b0 * a1 + d0 * b1, a0 * c1 + c0 * d1, b0 * c1 + d0 * d1,
            a0 * e1 + c0 * f1 + e0, b0 * e1 + d0 * f1 + f0)
