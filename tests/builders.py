"""What the tests build byte by byte, so every fact a test checks is known: PDFs with one line of
text a page, notebooks of cells and outputs, small PNGs. Shared by the tests and bench/."""

from __future__ import annotations

import base64
import io
import json

from PIL import Image


def build_pdf(page_texts: list[str | None], group: int | None = None, word: str = "marker",
              catalog: bytes = b"") -> bytes:
    """A PDF with one page per entry (None: a page with no text). With `group`, pages hang
    under intermediate /Pages nodes of `group` pages each, and the font resources live on
    those nodes only. `catalog`: more entries of its catalog (/PageLabels ...)."""
    objects: dict[int, bytes] = {}
    font = 3
    objects[font] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    resources = f"<< /Font << /F1 {font} 0 R >> >>".encode()
    next_id = 4
    leaves: list[int] = []
    for number, text in enumerate(page_texts, start=1):
        page_id, content_id = next_id, next_id + 1
        next_id += 2
        stream = b"" if text is None else f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
        objects[content_id] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
        leaves.append(page_id)
    kids_of_root: list[int] = []
    parent_of: dict[int, int] = {}
    if group:
        for start in range(0, len(leaves), group):
            node = next_id
            next_id += 1
            members = leaves[start:start + group]
            kids = " ".join(f"{k} 0 R" for k in members).encode()
            objects[node] = (b"<< /Type /Pages /Parent 2 0 R /Kids [" + kids + b"] /Count %d /Resources " % len(members)
                             + resources + b" >>")
            for k in members:
                parent_of[k] = node
            kids_of_root.append(node)
    else:
        kids_of_root = leaves
        parent_of = {k: 2 for k in leaves}
    for page_id in leaves:
        own = b"" if group else b" /Resources " + resources
        objects[page_id] = (b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R"
                            % (parent_of[page_id], page_id + 1) + own + b" >>")
    objects[1] = b"<< /Type /Catalog /Pages 2 0 R " + catalog + b">>"
    objects[2] = (b"<< /Type /Pages /Kids [" + " ".join(f"{k} 0 R" for k in kids_of_root).encode()
                  + b"] /Count %d >>" % len(leaves))
    return pdf_of(objects)


def drawn_pdf(drawing: str, text: str = "Quarterly figures") -> bytes:
    """A one-page PDF (612x792 pt) with a line of text at the top and `drawing`, content stream
    operators (paths: m, l, c, re, S, f), drawn after it."""
    stream = f"BT /F1 12 Tf 72 740 Td ({text}) Tj ET\n{drawing}".encode()
    return pdf_of({
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
           b"/Resources << /Font << /F1 5 0 R >> >> >>",
        4: b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        5: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    })


def page_pdf(drawing: str, crop: str | None = None) -> bytes:
    """A one-page PDF (612x792 pt, `crop` its /CropBox as "x0 y0 x1 y1") drawing `drawing`, content
    stream operators, with Helvetica as /F1, a 2x2 grey image as /Im1 (placed with cm, Do), a
    graphics state drawing at no opacity as /Clear (gs) and a blue-to-white gradient across the page
    as /Fade (sh)."""
    stream = drawing.encode()
    box = f" /CropBox [{crop}]".encode() if crop else b""
    return pdf_of({
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]" + box + b" /Contents 4 0 R /Resources << "
           b"/Font << /F1 5 0 R >> /XObject << /Im1 6 0 R >> /ExtGState << /Clear << /ca 0 /CA 0 >> >> "
           b"/Shading << /Fade << /ShadingType 2 /ColorSpace /DeviceRGB /Coords [0 0 612 0] /Function << "
           b"/FunctionType 2 /Domain [0 1] /C0 [0.2 0.4 0.8] /C1 [1 1 1] /N 1 >> >> >> >> >>",
        4: b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        5: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        6: b"<< /Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray /BitsPerComponent 8 "
           b"/Length 4 >>\nstream\n\x90\xa0\xb0\xc0\nendstream",
    })


def table_rules(rows: int = 6, columns: int = 4) -> str:
    """The drawing of a table as word processors draw one: a frame, cell borders as stroked lines
    and as thin filled rectangles, a shaded header row, and an underline."""
    left, top, width, height = 72, 700, 120, 20
    ops = [f"0.9 g {left} {top - height} {columns * width} {height} re f 0 g",  # the header row's shading
           f"{left} {top - rows * height} {columns * width} {rows * height} re S"]  # the frame
    for row in range(1, rows):
        y = top - row * height
        ops.append(f"{left} {y} m {left + columns * width} {y} l S")
    for column in range(1, columns):
        ops.append(f"{left + column * width - 0.25} {top - rows * height} 0.5 {rows * height} re f")
    ops.append("72 735 m 200 735 l S")  # the underline of the title
    return "\n".join(ops)


def pdf_of(objects: dict[int, bytes], root: int = 1, xref: bool = True) -> bytes:
    """A PDF file of these numbered objects (`root` the catalog), with its cross-reference table
    unless `xref` is false (a file a reader must rebuild it for); a missing object's entry is 0."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for obj_id in sorted(objects):
        offsets[obj_id] = len(out)
        out += b"%d 0 obj\n" % obj_id + objects[obj_id] + b"\nendobj\n"
    start = len(out)
    size = max(objects) + 1
    if xref:
        out += b"xref\n0 %d\n0000000000 65535 f \n" % size
        for obj_id in range(1, size):
            out += b"%010d 00000 n \n" % offsets.get(obj_id, 0)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, root, start)
    return bytes(out)


def code(source: str, *outputs: dict, count: int | None = 1, **extra) -> dict:
    return {"cell_type": "code", "source": source, "metadata": {}, "execution_count": count,
            "outputs": list(outputs), **extra}


def markdown(source: str, **extra) -> dict:
    return {"cell_type": "markdown", "source": source, "metadata": {}, **extra}


def stream(text: str, name: str = "stdout") -> dict:
    return {"output_type": "stream", "name": name, "text": text}


def result(data: dict) -> dict:
    return {"output_type": "execute_result", "execution_count": 1, "data": data, "metadata": {}}


def png_b64(width: int = 64, height: int = 48) -> str:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


def notebook(*cells: dict, with_ids: bool = True, language: str = "python") -> bytes:
    if with_ids:
        cells = tuple({"id": f"c{i}", **c} for i, c in enumerate(cells, 1))
    doc = {"nbformat": 4, "nbformat_minor": 5 if with_ids else 4, "cells": list(cells),
           "metadata": {"kernelspec": {"name": "k", "display_name": "K", "language": language}}}
    return json.dumps(doc).encode()


def write_empty_cells(path, cells: int) -> int:
    """A notebook of `cells` empty raw cells written to `path` a block at a time (never whole in
    memory); its size in bytes."""
    cell = json.dumps(markdown(""), separators=(",", ":")).replace("markdown", "raw").encode()
    block = 10_000
    with open(path, "wb") as f:
        f.write(b'{"nbformat":4,"nbformat_minor":4,"metadata":{},"cells":[')
        for start in range(0, cells, block):
            f.write((b"," if start else b"") + b",".join([cell] * min(block, cells - start)))
        f.write(b"]}")
        return f.tell()


def workbook(cells: dict[str, object]) -> bytes:
    """An XLSX file of one sheet holding `cells` ({"B2": "text"}), written by openpyxl."""
    import openpyxl

    book = openpyxl.Workbook()
    for ref, value in cells.items():
        book.active[ref] = value
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def document(*paragraphs: str) -> bytes:
    """A DOCX file of `paragraphs`, written by python-docx."""
    import docx

    doc = docx.Document()
    for text in paragraphs:
        doc.add_paragraph(text)
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def deck(*texts: str) -> bytes:
    """A PPTX file of one slide a text, each in a text box, written by python-pptx."""
    import pptx
    from pptx.util import Inches

    slides = pptx.Presentation()
    for text in texts:
        slide = slides.slides.add_slide(slides.slide_layouts[6])
        slide.shapes.add_textbox(Inches(1), Inches(1), Inches(8), Inches(5)).text_frame.text = text
    out = io.BytesIO()
    slides.save(out)
    return out.getvalue()


def chart_deck(rows: int, series: int = 1) -> bytes:
    """A PPTX file of one slide holding a line chart of `rows` categories ("day N") and `series`
    series ("sK", point N worth N * K), written by python-pptx."""
    import pptx
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    data = CategoryChartData()
    data.categories = [f"day {n}" for n in range(1, rows + 1)]
    for s in range(1, series + 1):
        data.add_series(f"s{s}", [n * s for n in range(1, rows + 1)])
    slides = pptx.Presentation()
    slide = slides.slides.add_slide(slides.slide_layouts[6])
    slide.shapes.add_chart(XL_CHART_TYPE.LINE, 0, 0, Inches(6), Inches(4), data)
    out = io.BytesIO()
    slides.save(out)
    return out.getvalue()
