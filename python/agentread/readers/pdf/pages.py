"""PDF pages as pictures: a scanned or image-only page has no text to extract, so the model is
shown the page.

PDFium (through pypdfium2, by agentread.readers.pdf.pdfium: no system package) renders the page;
where the `tesseract` program is installed, its OCR text is added under the picture, marked as OCR
so the model weighs it as a guess.
"""

from __future__ import annotations

import io
import logging
import os
import shutil
import subprocess

import pybase64

from agentread.limits import MAX_IMAGE_BYTES, MAX_IMAGE_SIDE
from agentread.numbering import up_to
from agentread.readers.image import encode_png, image_part
from agentread.result import ImagePart, Part, ReadError, TextPart

log = logging.getLogger(__name__)

# A page is rendered so its long side is MAX_IMAGE_SIDE pixels, but never sharper than 300 dpi
# (a scanner's usual resolution; more adds bytes, not legibility). PDF sizes are in points,
# 72 to the inch.
MAX_RENDER_SCALE = 300 / 72

# A page of text, scanned or drawn, stays well under this as PNG with unfiltered rows (somewhat more
# than Pillow's filtered rows take); a page past this is a photograph, which JPEG keeps many times
# smaller at no loss a model would notice.
MAX_PAGE_PNG_BYTES = 2_000_000
PHOTO_PAGE_JPEG_QUALITY = 85

# Tesseract on a 2000 px page is slow; a page that takes longer than this is left without OCR rather
# than holding the read (up to five pages a call must fit well inside the server's read deadline).
OCR_TIMEOUT_SECONDS = 10

# OCR time for all the pages of one call: with five scanned pages a call, the per-page limit alone
# would let a read run for most of a minute. Pages past this budget come without OCR, and say so.
OCR_BUDGET_SECONDS = 20


def render_page(data: bytes, number: int) -> ImagePart:
    """Page `number` (1-based) of the PDF in `data`, rendered as an image part."""
    from agentread.readers.pdf.pdfium import LOCK, Document, PdfiumError

    with LOCK:
        try:
            pdf = Document(data)
        except PdfiumError as exc:
            raise ReadError("damaged_pdf", f"the PDF could not be opened to render page {number} ({exc})") from None
        try:
            if not 1 <= number <= pdf.page_count:
                raise ReadError("page_out_of_range", f"page {number} does not exist: the PDF has {pdf.page_count} "
                                f"page{'' if pdf.page_count == 1 else 's'}. Call again with "
                                f"{up_to(pdf.page_count, 'pages', quoted=True)}.")
            return render_pdfium_page(pdf, number)
        finally:
            pdf.close()


def render_pdfium_page(pdf, number: int) -> ImagePart:
    """Page `number` of an open agentread.readers.pdf.pdfium Document; the caller holds its LOCK."""
    with pdf.page(number) as page:
        width, height = page.size
        picture = page.render(min(MAX_IMAGE_SIDE / max(width, height, 1), MAX_RENDER_SCALE))
    # Written as PNG by our own encoder (unfiltered rows, on the band threads): a text page at
    # 2000 px takes far less time than with Pillow's, which also tries every row filter (for a
    # somewhat smaller PNG), and a photo page is found out sooner before it goes to JPEG.
    encoded, mime = encode_png(picture), "image/png"
    if len(encoded) > MAX_PAGE_PNG_BYTES:
        out = io.BytesIO()
        picture.save(out, "JPEG", quality=PHOTO_PAGE_JPEG_QUALITY)  # rendered in RGB
        encoded, mime = out.getvalue(), "image/jpeg"
    if len(encoded) > MAX_IMAGE_BYTES:
        return image_part(encoded)[0]  # made smaller, as every image is
    # Made here from a bitmap: sent without the check of a file from elsewhere.
    return ImagePart(mime, pybase64.b64encode_as_string(encoded), picture.width, picture.height)


def ocr_text(image: ImagePart, timeout: float = OCR_TIMEOUT_SECONDS) -> str | None:
    """Tesseract's reading of the image, or None when tesseract is not installed, fails or
    finds no text."""
    program = shutil.which("tesseract")
    if program is None:
        return None
    try:
        # One thread: Tesseract's OpenMP threads contend with the server's own work and make its
        # time unpredictable.
        done = subprocess.run([program, "stdin", "stdout"], input=pybase64.b64decode(image.data),
                              capture_output=True, timeout=timeout, check=False,
                              env={**os.environ, "OMP_THREAD_LIMIT": "1"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("tesseract failed: %s", exc)
        return None
    if done.returncode != 0:
        log.warning("tesseract failed (%d): %s", done.returncode, done.stderr[:200])
        return None
    text = done.stdout.decode("utf-8", errors="replace").strip()
    return text or None


def scanned_page(number: int, image: ImagePart, has_text: bool = False,
                 ocr_seconds: float = OCR_TIMEOUT_SECONDS) -> list[Part]:
    """What a page without text (or with a few words over a picture) becomes: a note, the page's
    picture, and the OCR text where there is some, read within `ocr_seconds` (what is left of the
    call's OCR budget)."""
    what = ("has little text and is mostly pictures (a scan or a photo)" if has_text
            else "has no extractable text (a scan or a drawing)")
    parts: list[Part] = [TextPart(f"[Page {number} {what}: it is shown as an image, "
                                  f"{image.width}x{image.height}.]"), image]
    if ocr_seconds < 1:
        if shutil.which("tesseract"):
            parts.append(TextPart(f"[No OCR text for page {number}: this call's OCR time is spent. Call again with "
                                  f'pages="{number}" for it.]'))
        return parts
    text = ocr_text(image, min(ocr_seconds, OCR_TIMEOUT_SECONDS))
    if text:
        parts.append(TextPart(f"[OCR text of page {number} (Tesseract; may contain errors):]\n{text}"))
    return parts
