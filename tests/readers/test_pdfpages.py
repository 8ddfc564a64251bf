"""Scanned and image-only PDF pages rendered as images (pdfpages.py), on the corpus's image-only
PDFs and on a generated scan with words for Tesseract to read."""

from __future__ import annotations

import base64
import io
import re
import shutil
import zlib
from math import ceil

import pytest
from PIL import Image, ImageDraw, ImageFont

from agentread.readers.pdf import MAX_FORM_DEPTH
from agentread.readers.pdf import pages as pdfpages
from agentread.readers.pdf.pages import ocr_text, render_page, scanned_page
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
        # Not blank: its darkest pixel is darker than its lightest.
        assert picture.size == size and picture.convert("L").getextrema()[0] < picture.convert("L").getextrema()[1]


def test_a_photo_page_is_sent_as_jpeg_within_the_size_limit(corpus):
    part = render_page((corpus / "pdf" / "cmyk-image.pdf").read_bytes(), 1)
    assert part.mime_type == "image/jpeg" and len(part.data) < 1_000_000


def test_a_scanned_text_page_is_sent_as_png_with_every_pixel_rendered(corpus):
    import pypdfium2

    from agentread.readers.pdf.pages import MAX_RENDER_SCALE

    data = (corpus / "pdf" / "Seige_of_Vicksburg_Sample_OCR.pdf").read_bytes()
    part = render_page(data, 2)
    page = pypdfium2.PdfDocument(data)[1]
    rendered = page.render(scale=min(2000 / max(page.get_size()), MAX_RENDER_SCALE)).to_pil()
    assert part.mime_type == "image/png"
    with Image.open(io.BytesIO(base64.b64decode(part.data))) as sent:
        assert sent.size == rendered.size and sent.tobytes() == rendered.tobytes()


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


# How long Tesseract may take on the page here before it counts as stuck, in place of the reader's
# limit for a call a model waits on (OCR_TIMEOUT_SECONDS): the test is about the OCR text added,
# which must not depend on speed.
OCR_STUCK_AFTER = 120


def test_scanned_page_parts_note_image_and_ocr(monkeypatch):
    monkeypatch.setattr(pdfpages, "OCR_TIMEOUT_SECONDS", OCR_STUCK_AFTER)
    parts = scanned_page(1, render_page(_scan_pdf("INVOICE 4711"), 1), ocr_seconds=OCR_STUCK_AFTER)
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
    # Six 16 px pictures, five of them under the word "Background": at most five pages are
    # rendered a call.
    ("imagemagick-images.pdf", [1, 2, 3, 4, 5]),
])
def test_picture_pages_come_back_as_page_images_through_the_reader(corpus, name, rendered):
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
    # Each picture comes right after its page (header and any text) and a note naming that page.
    for number in rendered:
        i = next(i for i, p in enumerate(result.content)
                 if isinstance(p, TextPart) and p.text.startswith(f"[Page {number} has "))
        assert re.search(rf"--- Page {number} ---(\nBackground)?$", result.content[i - 1].text.rstrip())
        assert isinstance(result.content[i + 1], ImagePart)
    if len(rendered) == 5:  # the call ends before page 6, and `next` starts with it
        assert "--- Page 6 ---" not in text and 'pages="6"' in text
        assert result.truncated and result.next == {"pages": "6"} and result.shown == {"pages": [1, 2, 3, 4, 5]}
        rest = Engine(Workspace([str(corpus)])).read(parse_request({"path": f"pdf/{name}", **result.next}))
        assert [p for p in rest.content if isinstance(p, ImagePart)] and not rest.truncated


def _stamped_scan_pdf(stamp: str, forms: int = 0, origin: int = 0, rotate: int = 0) -> bytes:
    """A page that is one grey picture with a line of text over it, as scanning apps stamp their
    pages; with `forms`, the picture is drawn by the innermost of so many nested form XObjects. The
    page's box starts at (`origin`, `origin`), and it is shown turned by `rotate` degrees."""
    width, height = 60, 80
    pixels = zlib.compress(bytes(range(256)) * (width * height * 3 // 256) + bytes(width * height * 3 % 256))
    picture = b"/Scan 4 0 R" if not forms else b"/Form 7 0 R"
    draw = (f"q 300 0 0 400 {origin} {origin} cm /{'Form' if forms else 'Scan'} Do Q "
            f"BT /F1 10 Tf {origin + 20} {origin + 20} Td ({stamp}) Tj ET").encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [%d %d %d %d] /Rotate %d /Contents 5 0 R /Resources << /XObject "
        b"<< %s >> /Font << /F1 6 0 R >> >> >>" % (origin, origin, origin + 300, origin + 400, rotate, picture),
        b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 "
        b"/Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream" % (width, height, len(pixels), pixels),
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(draw), draw),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for level in range(forms):  # form 7 draws form 8 ... the last draws the picture; each shrinks what it draws
        inner = b"/Scan 4 0 R" if level == forms - 1 else b"/Form %d 0 R" % (8 + level)  # and scales it back
        ops = b"2 0 0 2 0 0 cm /%s Do" % inner.split()[0][1:]
        objects.append(b"<< /Type /XObject /Subtype /Form /BBox [0 0 1 1] /Matrix [0.5 0 0 0.5 0 0] /Resources "
                       b"<< /XObject << %s >> >> /Length %d >>\nstream\n%s\nendstream" % (inner, len(ops), ops))
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


# The picture on the page, or inside nested forms as deep as the reader looks (MAX_FORM_DEPTH
# levels, the page's own counted), or one form deeper, where it is not looked for and the page is
# its text alone.
@pytest.mark.parametrize("forms", [0, 1, MAX_FORM_DEPTH - 1, MAX_FORM_DEPTH])
def test_a_scan_with_a_stamp_keeps_its_words_and_comes_back_as_an_image(tmp_path, forms):
    from agentread.engine import Engine
    from agentread.request import parse_request
    from agentread.workspace import Workspace

    (tmp_path / "scan.pdf").write_bytes(_stamped_scan_pdf("Scanned by a phone app", forms))
    result = Engine(Workspace([str(tmp_path)])).read(parse_request({"path": "scan.pdf"}))
    if forms == MAX_FORM_DEPTH:  # not shown, but said to be there
        assert len(result.content) == 1
        assert result.content[0].text.startswith("--- Page 1 ---\nScanned by a phone app\n[Page 1 has 1 figure ")
        return
    assert result.content[0].text == "--- Page 1 ---\nScanned by a phone app"
    assert "has little text and is mostly pictures" in result.content[1].text
    assert isinstance(result.content[2], ImagePart)


def test_a_find_in_a_stamped_scan_searches_its_stamp_and_says_its_picture_was_not(tmp_path):
    from agentread.engine import Engine
    from agentread.request import parse_request
    from agentread.workspace import Workspace

    (tmp_path / "scan.pdf").write_bytes(_stamped_scan_pdf("Scanned by a phone app"))
    engine = Engine(Workspace([str(tmp_path)]))
    found = engine.read(parse_request({"path": "scan.pdf", "find": "phone"}))
    assert [(h["page"], h["line"]) for h in found.shown["hits"]] == [(1, 2)]
    assert found.text().split("\n")[1].startswith("[Page 1 is mostly a picture with little text (a scan): only that "
                                                  "text was searched. A read shows it as its picture")
    assert found.text().split("\n")[1].endswith(': pages="1".]')


@pytest.mark.parametrize("origin, rotate", [(500, 0), (0, 90), (-200, 270)])
def test_a_scan_is_measured_on_its_page_wherever_the_page_starts_and_however_it_turns(tmp_path, origin, rotate):
    from agentread.engine import Engine
    from agentread.request import parse_request
    from agentread.workspace import Workspace

    (tmp_path / "scan.pdf").write_bytes(_stamped_scan_pdf("Scanned", origin=origin, rotate=rotate))
    result = Engine(Workspace([str(tmp_path)])).read(parse_request({"path": "scan.pdf"}))
    assert "has little text and is mostly pictures" in result.content[1].text
    from agentread.readers.pdf.pages import MAX_RENDER_SCALE

    shown = (300, 400) if rotate in (0, 180) else (400, 300)  # drawn turned, at 300 dpi
    assert (result.content[2].width, result.content[2].height) == tuple(ceil(side * MAX_RENDER_SCALE) for side in shown)


def test_a_page_of_ocr_text_over_its_scan_is_text_only(corpus):
    from agentread.engine import Engine
    from agentread.request import parse_request
    from agentread.workspace import Workspace

    result = Engine(Workspace([str(corpus)])).read(parse_request({"path": "pdf/Seige_of_Vicksburg_Sample_OCR.pdf",
                                                                  "pages": "1"}))
    assert not any(isinstance(p, ImagePart) for p in result.content)
    # PDFium's mark for a word hyphenated across a line break (U+FFFE) is dropped: the word
    # reads whole.
    assert "conspicuous and dangerous for use" in result.text() and "\ufffe" not in result.text()


def test_pages_past_the_calls_ocr_budget_say_how_to_get_their_ocr(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/tesseract")  # as if installed
    parts = scanned_page(3, render_page(_scan_pdf("LATE PAGE"), 1), ocr_seconds=0.2)
    assert isinstance(parts[1], ImagePart) and len(parts) == 3
    assert parts[2].text == ('[No OCR text for page 3: this call\'s OCR time is spent. '
                             'Call again with pages="3" for it.]')
