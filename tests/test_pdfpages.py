"""Scanned and image-only PDF pages rendered as images (pdfpages.py), on the corpus's image-only PDFs and on a
generated scan with words for Tesseract to read."""

from __future__ import annotations

import base64
import io
import shutil

import pytest
from PIL import Image, ImageDraw, ImageFont

from agentread.pdfpages import ocr_text, render_page, scanned_page
from agentread.result import ImagePart, ReadError, TextPart


@pytest.mark.parametrize("name, pages, size", [
    ("imagemagick-CCITTFaxDecode.pdf", 1, (16, 16)),  # a 3.84 pt page holding a 16 px fax image
    ("imagemagick-images.pdf", 6, (16, 16)),
    ("cmyk-image.pdf", 1, (1546, 2000)),  # US Letter, fitted to 2000 px on the long side
])
def test_corpus_image_only_pages_come_back_as_images(corpus, name: str, pages: int, size: tuple[int, int]):
    data = (corpus / "pdf" / name).read_bytes()
    for number in range(1, pages + 1):
        part = render_page(data, number)
        assert (part.width, part.height) == size
        picture = Image.open(io.BytesIO(base64.b64decode(part.data)))
        assert picture.size == size and picture.convert("L").getextrema()[0] < picture.convert("L").getextrema()[1]  # not blank


def test_a_photo_page_is_sent_as_jpeg_within_the_size_limit(corpus):
    part = render_page((corpus / "pdf" / "cmyk-image.pdf").read_bytes(), 1)
    assert part.mime_type == "image/jpeg" and len(part.data) < 1_000_000


def test_page_out_of_range(corpus):
    with pytest.raises(ReadError) as err:
        render_page((corpus / "pdf" / "cmyk-image.pdf").read_bytes(), 2)
    assert err.value.code == "page_out_of_range"


def _scan_pdf(words: str) -> bytes:
    page = Image.new("L", (1700, 2200), 255)
    ImageDraw.Draw(page).text((150, 200), words, fill=0, font=ImageFont.load_default(size=72))
    out = io.BytesIO()
    page.save(out, "PDF", resolution=200)
    return out.getvalue()


def test_scanned_page_parts_note_image_and_ocr():
    parts = scanned_page(1, render_page(_scan_pdf("INVOICE 4711"), 1))
    assert isinstance(parts[0], TextPart) and "no extractable text" in parts[0].text
    assert isinstance(parts[1], ImagePart)
    if shutil.which("tesseract") is None:
        assert len(parts) == 2
        pytest.skip("tesseract is not installed: OCR text is not added")
    assert "OCR" in parts[2].text and "INVOICE 4711" in parts[2].text


def test_ocr_is_none_without_tesseract(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert ocr_text(render_page(_scan_pdf("HELLO"), 1)) is None


@pytest.mark.parametrize("name, rendered", [
    ("cmyk-image.pdf", [1]),
    ("imagemagick-CCITTFaxDecode.pdf", [1]),
    ("imagemagick-images.pdf", [4, 5]),  # PDFium finds text ("Background") on the other pages
])
def test_pages_without_text_come_back_as_page_images_through_the_reader(corpus, name, rendered):
    from agentread.engine import Engine
    from agentread.request import parse_request
    from agentread.workspace import Workspace

    result = Engine(Workspace([str(corpus)])).read(parse_request({"path": f"pdf/{name}"}))
    assert not result.is_error, result.text()
    images = [p for p in result.content if isinstance(p, ImagePart)]
    assert len(images) == len(rendered)
    text = result.text()
    for number in rendered:
        assert f"--- Page {number} ---" in text
    # Each picture comes right after its page's header and a note naming that page.
    for number in rendered:
        i = next(i for i, p in enumerate(result.content)
                 if isinstance(p, TextPart) and p.text.startswith(f"[Page {number} has no extractable text"))
        assert result.content[i - 1].text.rstrip().endswith(f"--- Page {number} ---")
        assert isinstance(result.content[i + 1], ImagePart)
