"""PDFium, the PDF engine, through ctypes: the few calls the PDF readers make, on the library pypdfium2 ships.

pypdfium2's own Python layer declares all of PDFium's API when imported: about 20 ms, as long as poppler's
pdftotext takes to print page 1 of a 2,415-page manual, paid by every server's first PDF read. The two dozen
functions read here are declared in well under a millisecond, on the same library file.

PDFium is not thread-safe, not even across documents: every call runs under LOCK. It is re-entrant because a
document the garbage collector drops closes itself, perhaps in a thread that already holds it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
import math
import os
import sys
import threading
import weakref
from ctypes import POINTER, byref, c_char_p, c_double, c_float, c_int, c_size_t, c_uint, c_ulong, c_ushort, c_void_p
from pathlib import Path

from agentread.cancel import stopped

LOCK = threading.RLock()

# Page object types (fpdf_edit.h).
OBJECT_IMAGE = 3
OBJECT_FORM = 5

# FPDF_GetLastError codes (fpdfview.h), in words.
_ERRORS = {1: "an unknown error", 2: "the file could not be read", 3: "not a PDF, or damaged",
           4: "it needs a password", 5: "its security scheme is not supported", 6: "a page could not be read"}

_BGR = 2  # FPDFBitmap_BGR: 3 bytes a pixel, what Pillow reads as raw "BGR"
_DRAW_ANNOTATIONS = 0x01  # FPDF_ANNOT: stamps, notes and form fields are drawn, as a viewer shows the page
_WHITE = 0xFFFFFFFF  # the paper under a page that paints no background

_HANDLE = c_void_p

Matrix = tuple  # (a, b, c, d, e, f), as a PDF's cm operator takes it
IDENTITY = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)

_SIGNATURES = {  # name: (result, arguments), as fpdfview.h, fpdf_text.h and fpdf_edit.h declare them
    "FPDF_InitLibraryWithConfig": (None, (c_void_p,)),
    "FPDF_LoadMemDocument64": (_HANDLE, (c_void_p, c_size_t, c_char_p)),
    "FPDF_LoadCustomDocument": (_HANDLE, (c_void_p, c_char_p)),
    "FPDF_GetLastError": (c_ulong, ()),
    "FPDF_CloseDocument": (None, (_HANDLE,)),
    "FPDF_GetPageCount": (c_int, (_HANDLE,)),
    "FPDF_LoadPage": (_HANDLE, (_HANDLE, c_int)),
    "FPDF_ClosePage": (None, (_HANDLE,)),
    "FPDF_GetPageWidthF": (c_float, (_HANDLE,)),
    "FPDF_GetPageHeightF": (c_float, (_HANDLE,)),
    "FPDF_GetPageBoundingBox": (c_int, (_HANDLE, c_void_p)),
    "FPDFText_LoadPage": (_HANDLE, (_HANDLE,)),
    "FPDFText_ClosePage": (None, (_HANDLE,)),
    "FPDFText_CountChars": (c_int, (_HANDLE,)),
    "FPDFText_GetTextIndexFromCharIndex": (c_int, (_HANDLE, c_int)),
    "FPDFText_GetText": (c_int, (_HANDLE, c_int, c_int, POINTER(c_ushort))),
    "FPDFPage_CountObjects": (c_int, (_HANDLE,)),
    "FPDFPage_GetObject": (_HANDLE, (_HANDLE, c_int)),
    "FPDFPageObj_GetType": (c_int, (_HANDLE,)),
    "FPDFPageObj_Transform": (None, (_HANDLE, c_double, c_double, c_double, c_double, c_double, c_double)),
    "FPDFPageObj_GetMatrix": (c_int, (_HANDLE, c_void_p)),
    "FPDFPageObj_GetBounds": (c_int, (_HANDLE, POINTER(c_float), POINTER(c_float), POINTER(c_float),
                                      POINTER(c_float))),
    "FPDFFormObj_CountObjects": (c_int, (_HANDLE,)),
    "FPDFFormObj_GetObject": (_HANDLE, (_HANDLE, c_ulong)),
    "FPDFBitmap_CreateEx": (_HANDLE, (c_int, c_int, c_int, c_void_p, c_int)),
    "FPDFBitmap_FillRect": (None, (_HANDLE, c_int, c_int, c_int, c_int, c_ulong)),  # a BOOL in newer PDFium
    "FPDFBitmap_Destroy": (None, (_HANDLE,)),
    "FPDF_RenderPageBitmap": (None, (_HANDLE, _HANDLE, c_int, c_int, c_int, c_int, c_int, c_int)),
}


class PdfiumError(Exception):
    pass


class _Config(ctypes.Structure):
    """FPDF_LIBRARY_CONFIG, version 2: no font paths of our own, no JavaScript engine."""
    _fields_ = [("version", c_int), ("user_font_paths", c_void_p), ("isolate", c_void_p),
                ("v8_embedder_slot", c_uint)]


# int GetBlock(void *param, unsigned long position, unsigned char *buffer, unsigned long size): nonzero if read.
_GET_BLOCK = ctypes.CFUNCTYPE(c_int, c_void_p, c_ulong, POINTER(ctypes.c_ubyte), c_ulong)


class _FileAccess(ctypes.Structure):
    """FPDF_FILEACCESS: the file's length and how to read a block of it."""
    _fields_ = [("length", c_ulong), ("get_block", _GET_BLOCK), ("param", c_void_p)]


class _FSMatrix(ctypes.Structure):
    _fields_ = [(name, c_float) for name in "abcdef"]


class _FSRect(ctypes.Structure):
    _fields_ = [(name, c_float) for name in ("left", "top", "right", "bottom")]


_C = None


def library():
    """The PDFium library, loaded and initialised on first use (call under LOCK)."""
    global _C
    if _C is None:
        # Found, not imported: importing pypdfium2_raw declares the whole API, the cost this module saves. A
        # pypdfium2 built on the system's PDFium ships none of its own.
        spec = importlib.util.find_spec("pypdfium2_raw")
        name = {"win32": "pdfium.dll", "darwin": "libpdfium.dylib"}.get(sys.platform, "libpdfium.so")
        folders = (spec.submodule_search_locations if spec else None) or []
        shipped = [Path(folder) / name for folder in folders]
        found = next((str(path) for path in shipped if path.is_file()), None) or ctypes.util.find_library("pdfium")
        try:
            lib = ctypes.CDLL(found or name)
        except OSError as exc:
            raise PdfiumError(f"the PDFium library (the pypdfium2 package) cannot be loaded: {exc}") from None
        for function, (result, arguments) in _SIGNATURES.items():
            getattr(lib, function).restype = result
            getattr(lib, function).argtypes = arguments
        lib.FPDF_InitLibraryWithConfig(byref(_Config(version=2)))  # a second initialisation is a no-op
        _C = lib
    return _C


class Document:
    """An open PDF, read by PDFium from `data` in memory, or from the open file `fd` as its pages need it (a
    page of a 6.5 MB manual reads about 200 KB of it): from a copy of the descriptor, closed with the document.
    """

    def __init__(self, data: bytes | None = None, fd: int | None = None):
        with LOCK:
            c = library()
            source = data if fd is None else _FileReader(fd)
            if fd is None:
                handle = c.FPDF_LoadMemDocument64(data, len(data), None)
            else:
                handle = c.FPDF_LoadCustomDocument(byref(source.access), None)
            self.page_count = c.FPDF_GetPageCount(handle) if handle else 0
            if self.page_count < 1:  # a page tree it cannot follow opens with none: pypdf may do better
                code = c.FPDF_GetLastError()
                _close_document(c, handle, source)
                raise PdfiumError(f"PDFium cannot open it: {_ERRORS.get(code, 'no pages found')}")
        self.handle = handle
        self.source = source
        # The source goes with the handle: PDFium reads from it until the document is closed.
        self._close = weakref.finalize(self, _close_document, c, handle, source)
        self._close.atexit = False  # the process frees it at exit, perhaps after the library was torn down

    def close(self) -> None:
        """Under LOCK, once its pages are closed."""
        self._close()
        self.handle = None

    def page(self, number: int) -> Page:
        """Page `number` (1-based), loaded; close it (or use `with`) under LOCK."""
        if self.handle is None:
            raise PdfiumError("the document is closed")
        handle = library().FPDF_LoadPage(self.handle, number - 1)
        if not handle:
            raise PdfiumError(f"PDFium cannot load page {number}")
        return Page(self, handle)


def _close_document(c, handle: int | None, source: bytes | _FileReader) -> None:
    with LOCK:
        if handle:
            c.FPDF_CloseDocument(handle)
        if isinstance(source, _FileReader):
            os.close(source.fd)


# Where a document can be read from its file as its pages need it: with pread, which leaves the descriptor's
# offset (shared with the engine's) alone. Windows has none, and would not let a file held open by the document
# cache be deleted or renamed: there a PDF is read whole into memory, as an editor's buffer is.
READS_FROM_FILES = hasattr(os, "pread")


class _FileReader:
    """FPDF_FILEACCESS over a copy of a file descriptor: PDFium asks for blocks at offsets, read with pread."""

    def __init__(self, fd: int):
        self.fd = os.dup(fd)
        try:
            length = os.fstat(self.fd).st_size
        except BaseException:
            os.close(self.fd)
            raise
        self.bytes_read = 0
        self.callback = _GET_BLOCK(self._get_block)  # kept alive here for as long as PDFium may call it
        self.access = _FileAccess(length, self.callback, None)

    def _get_block(self, _param, position: int, buffer, size: int) -> int:
        if stopped():
            return 0  # the read was cancelled or ran out of time: PDFium stops at the failed read
        try:
            data = os.pread(self.fd, size, position)
        except Exception:  # noqa: BLE001 - nothing may leave a callback into C: PDFium takes 0 as a read error
            return 0
        if len(data) != size:
            return 0  # the file was cut short since it was opened
        ctypes.memmove(buffer, data, size)
        self.bytes_read += size
        return 1


class Page:
    def __init__(self, document: Document, handle: int):
        self.document = document  # open for as long as its page is
        self.handle = handle

    def __enter__(self) -> Page:
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def close(self) -> None:
        if self.handle:
            library().FPDF_ClosePage(self.handle)
            self.handle = None

    @property
    def size(self) -> tuple[float, float]:
        """Width and height in points, as the page is shown (its /Rotate applied)."""
        c = library()
        return c.FPDF_GetPageWidthF(self.handle), c.FPDF_GetPageHeightF(self.handle)

    @property
    def box(self) -> tuple[float, float, float, float]:
        """What the page shows (its crop box within its media box) as (left, bottom, right, top), in the
        coordinates of its objects' bounds: not turned by /Rotate, and not necessarily from (0, 0)."""
        rect = _FSRect()
        if not library().FPDF_GetPageBoundingBox(self.handle, byref(rect)):
            return (0.0, 0.0, *self.size)
        return rect.left, rect.bottom, rect.right, rect.top

    def text(self) -> str:
        """The page's text in reading order, lines ended with CRLF, as PDFium lays it out."""
        c = library()
        textpage = c.FPDFText_LoadPage(self.handle)
        if not textpage:
            raise PdfiumError("PDFium cannot lay out the page's text")
        try:
            index = c.FPDFText_GetTextIndexFromCharIndex
            # Characters PDFium leaves out of the text (index -1) at either end are skipped: asked to cover them,
            # FPDFText_GetText can write past a buffer sized for the text (crbug.com/pdfium/2079).
            first, last = 0, c.FPDFText_CountChars(textpage) - 1
            while first <= last and index(textpage, first) < 0:
                first += 1
            while last >= first and index(textpage, last) < 0:
                last -= 1
            if first > last:
                return ""
            buffer = (c_ushort * (index(textpage, last) - index(textpage, first) + 2))()  # and a NUL
            written = min(c.FPDFText_GetText(textpage, first, last - first + 1, buffer), len(buffer))
            return ctypes.string_at(buffer, 2 * max(written - 1, 0)).decode("utf-16-le", errors="ignore")
        finally:
            c.FPDFText_ClosePage(textpage)

    def objects(self, max_depth: float = math.inf, enter=None):
        """(object, matrix) for each of the page's objects in the file's order, those in form XObjects up to
        `max_depth` levels counted (the page's own is one), of each form for which enter(form), asked once the
        form is handed out, is true. The matrix takes the object's coordinates to the page's: an object in a
        form is placed in the form's own space, which the form object places."""
        c = library()
        stack = [(c.FPDFPage_GetObject, self.handle, c.FPDFPage_CountObjects(self.handle), 0, 1, IDENTITY)]
        while stack:
            get, holder, count, start, depth, matrix = stack.pop()
            for position in range(start, count):
                thing = get(holder, position)
                yield thing, matrix
                if depth < max_depth and (enter is None or enter(thing)) \
                        and c.FPDFPageObj_GetType(thing) == OBJECT_FORM:
                    stack.append((get, holder, count, position + 1, depth, matrix))  # back here after the form
                    stack.append((c.FPDFFormObj_GetObject, thing, c.FPDFFormObj_CountObjects(thing), 0, depth + 1,
                                  _compose(matrix, _matrix(thing))))
                    break

    def render(self, scale: float):
        """The page drawn on white at `scale` pixels a point, as a Pillow RGB image."""
        from PIL import Image

        c = library()
        width, height = (math.ceil(side * scale) for side in self.size)
        if width < 1 or height < 1:
            raise PdfiumError(f"the page has no area to draw ({width}x{height} px)")
        stride = width * 3
        pixels = ctypes.create_string_buffer(stride * height)
        bitmap = c.FPDFBitmap_CreateEx(width, height, _BGR, pixels, stride)
        if not bitmap:
            raise PdfiumError(f"PDFium cannot make a {width}x{height} bitmap")
        try:
            c.FPDFBitmap_FillRect(bitmap, 0, 0, width, height, _WHITE)
            c.FPDF_RenderPageBitmap(bitmap, self.handle, 0, 0, width, height, 0, _DRAW_ANNOTATIONS)
        finally:
            c.FPDFBitmap_Destroy(bitmap)
        return Image.frombuffer("RGB", (width, height), pixels, "raw", "BGR", stride, 1)


def bounds(thing: int, matrix: Matrix) -> tuple[float, float, float, float] | None:
    """A page object's box (left, bottom, right, top) in points on the page, its coordinates taken there by
    `matrix` (from objects()); None where PDFium gives none."""
    box = (c_float(), c_float(), c_float(), c_float())
    if not library().FPDFPageObj_GetBounds(thing, *map(byref, box)):
        return None
    left, bottom, right, top = (side.value for side in box)
    a, b, c, d, e, f = matrix
    xs, ys = zip(*((a * x + c * y + e, b * x + d * y + f) for x in (left, right) for y in (bottom, top)))
    return min(xs), min(ys), max(xs), max(ys)


def _matrix(thing: int) -> Matrix:
    """The matrix PDFium placed an object with (a form object's: the form's space on its holder's)."""
    m = _FSMatrix()
    return (m.a, m.b, m.c, m.d, m.e, m.f) if library().FPDFPageObj_GetMatrix(thing, byref(m)) else IDENTITY


def _compose(outer: Matrix, inner: Matrix) -> Matrix:
    """The matrix applying `inner`, then `outer` ([a b c d e f] as PDF writes them: x' = ax + cy + e)."""
    a0, b0, c0, d0, e0, f0 = outer
    a1, b1, c1, d1, e1, f1 = inner
    return (a0 * a1 + c0 * b1, b0 * a1 + d0 * b1, a0 * c1 + c0 * d1, b0 * c1 + d0 * d1,
            a0 * e1 + c0 * f1 + e0, b0 * e1 + d0 * f1 + f0)
