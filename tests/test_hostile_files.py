"""Hostile files through the real server: each answers in bounded time and memory, with a bounded
result or a clear error, and the server still answers a normal read afterwards.

Big inputs are generated in the test's temp folder (sparse where the format allows) and
removed with it.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path

import pytest

from builders import pdf_of
from rpc import body_of, text_of

# Peak resident memory of the server (VmHWM) after a hostile read: well under the machine, far
# over normal.
MAX_PEAK_RSS = 1536 << 20

# The most text a bounded answer may carry: the 50 KB budget plus headers and the closing line.
MAX_ANSWER_TEXT = 60_000


def _status(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"{field} not in /proc/{pid}/status")


def hostile_read(server, **params) -> dict:
    """Read, check it ended on its own within the server's default deadline (a read past it is
    answered `timeout`, or not within the wait for an answer), that memory stayed bounded and that
    the server still reads a normal file."""
    result = server.read(**params)
    peak = _status(server.proc.pid, "VmHWM")
    assert peak < MAX_PEAK_RSS, f"server peak RSS {peak >> 20} MB"
    assert len(text_of(result).encode("utf-8")) < MAX_ANSWER_TEXT
    if result["isError"]:
        assert text_of(result).startswith("Error: ") and result["error"]["code"] not in ("internal", "timeout"), result
    folder = Path(server.workspace_dir)
    (folder / "normal.txt").write_text("still here\n")
    after = server.read(path="normal.txt")
    assert body_of(after) == "     1\tstill here"
    return result


@pytest.fixture
def server(server, tmp_path):
    server.workspace_dir = tmp_path
    return server


# ---- images
# -------------------------------------------------------------------------------------------------

def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def png(width: int, height: int, idat: bytes, color_type: int = 0) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")


def test_a_png_claiming_100k_by_100k_pixels_is_refused_from_its_header(server, tmp_path):
    (tmp_path / "claims.png").write_bytes(png(100_000, 100_000, zlib.compress(b"\x00" * 100_001)))
    result = hostile_read(server, path="claims.png")
    assert result["error"]["code"] == "image_too_large"
    assert "100000x100000" in result["error"]["message"] or "pixels" in result["error"]["message"]


def test_a_decompression_bomb_just_under_the_pixel_limit_decodes_within_memory(server, tmp_path):
    # 9,800 x 9,800 RGBA: 96 M pixels (under the 100 M limit) that inflate to 384 MB from a
    # file of ~400 KB.
    side = 9_800
    row = b"\x00" + b"\x00" * (side * 4)
    packer = zlib.compressobj(9)
    idat = b"".join(packer.compress(row) for _ in range(side)) + packer.flush()
    (tmp_path / "bomb.png").write_bytes(png(side, side, idat, color_type=6))
    assert (tmp_path / "bomb.png").stat().st_size < 1 << 20
    result = hostile_read(server, path="bomb.png")
    if not result["isError"]:
        image = next(p for p in result["content"] if p["type"] == "image")
        assert max(image["width"], image["height"]) <= 2000
    else:
        assert result["error"]["code"] in ("image_too_large", "image_undecodable")


def test_a_bomb_over_the_pixel_limit_is_refused(server, tmp_path):
    side = 20_000  # 400 M pixels declared; the data is a token
    (tmp_path / "big.png").write_bytes(png(side, side, zlib.compress(b"\x00" * (side + 1))))
    assert hostile_read(server, path="big.png")["error"]["code"] == "image_too_large"


# ---- PDFs
# -------------------------------------------------------------------------------------------------

PAGE = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R " \
       b"/Resources << /Font << /F1 5 0 R >> >> >>"
FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
CONTENT = b"BT /F1 12 Tf 72 720 Td (hello) Tj ET"


def _stream(data: bytes, flate: bool = False) -> bytes:
    if flate:
        data = zlib.compress(data, 9)
        return b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"
    return b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def test_a_pdf_whose_page_tree_loops_answers(server, tmp_path):
    objects = {1: b"<< /Type /Catalog /Pages 2 0 R >>",
               # The tree claims a thousand pages and lists itself as its own kid.
               2: b"<< /Type /Pages /Kids [2 0 R 6 0 R] /Count 1000 >>",
               3: PAGE, 4: _stream(CONTENT), 5: FONT,
               6: b"<< /Type /Pages /Kids [6 0 R 2 0 R] /Count 999 /Parent 2 0 R >>"}
    (tmp_path / "loop.pdf").write_bytes(pdf_of(objects))
    result = hostile_read(server, path="loop.pdf")
    if result["isError"]:
        assert result["error"]["code"] == "damaged_pdf"
    result = hostile_read(server, path="loop.pdf", pages="500")
    assert result["isError"] is False or result["error"]["code"] in ("damaged_pdf", "page_out_of_range")


def test_a_pdf_whose_objects_refer_to_each_other_in_a_ring_answers(server, tmp_path):
    objects = {1: b"<< /Type /Catalog /Pages 7 0 R >>", 7: b"8 0 R", 8: b"9 0 R", 9: b"7 0 R"}
    (tmp_path / "ring.pdf").write_bytes(pdf_of(objects))
    result = hostile_read(server, path="ring.pdf")
    assert result["isError"] and result["error"]["code"] == "damaged_pdf"


def test_a_pdf_with_100k_nested_arrays_answers(server, tmp_path):
    deep = b"[" * 100_000 + b"]" * 100_000
    objects = {1: b"<< /Type /Catalog /Pages 2 0 R /Deep " + deep + b" >>",
               2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>", 3: PAGE, 4: _stream(CONTENT), 5: FONT}
    (tmp_path / "deep.pdf").write_bytes(pdf_of(objects))
    result = hostile_read(server, path="deep.pdf")
    assert not result["isError"] or result["error"]["code"] in ("damaged_pdf", "too_complex")


def test_a_pdf_with_a_broken_xref_answers(server, tmp_path):
    good = pdf_of({1: b"<< /Type /Catalog /Pages 2 0 R >>", 2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                3: PAGE, 4: _stream(CONTENT), 5: FONT})
    broken = good.replace(b"startxref\n", b"startxref\n999999").replace(b" n \n", b" q \n")
    (tmp_path / "xref.pdf").write_bytes(broken)
    result = hostile_read(server, path="xref.pdf")
    if not result["isError"]:
        assert "hello" in text_of(result)  # pypdf rebuilt the table by scanning the objects
    else:
        assert result["error"]["code"] == "damaged_pdf"


def test_a_pdf_with_a_huge_content_stream_answers_bounded(server, tmp_path):
    # 1.5 M text-showing operators (about 40 MB once inflated) from a file of a few hundred KB.
    content = b"BT /F1 12 Tf 72 720 Td " + b"(word) Tj 0 -1 Td\n" * 1_500_000 + b"ET"
    objects = {1: b"<< /Type /Catalog /Pages 2 0 R >>", 2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               3: PAGE, 4: _stream(content, flate=True), 5: FONT}
    (tmp_path / "huge.pdf").write_bytes(pdf_of(objects))
    result = hostile_read(server, path="huge.pdf")
    assert not result["isError"] or result["error"]["code"] in ("damaged_pdf", "too_complex")


# ---- notebooks
# --------------------------------------------------------------------------------------------

def _cell(outputs: list, source: str = "print(1)") -> dict:
    return {"cell_type": "code", "id": os.urandom(4).hex(), "metadata": {}, "source": source,
            "execution_count": 1, "outputs": outputs}


def _notebook_head() -> str:
    return '{"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"language": "python"}}, "cells": ['


def test_a_notebook_with_a_200_mb_output_answers_bounded(server, tmp_path):
    path = tmp_path / "big-output.ipynb"
    line = "progress " + "#" * 90 + "\\n"  # 100 characters once decoded
    with open(path, "w") as f:
        f.write(_notebook_head())
        f.write(json.dumps(_cell([]))[:-2] + '[{"output_type": "stream", "name": "stdout", "text": "')
        for _ in range(2_000):
            f.write(line * 1_000)
        f.write('"}]}, ' + json.dumps(_cell([], source="after = True")) + "]}")
    assert path.stat().st_size > 200_000_000
    try:
        result = hostile_read(server, path="big-output.ipynb")
        if not result["isError"]:
            text = text_of(result)
            assert "cut here" in text or result["truncated"]
    finally:
        path.unlink()


def test_a_notebook_with_100k_cells_answers_bounded(server, tmp_path):
    cells = [_cell([{"output_type": "stream", "name": "stdout", "text": f"{i}\n"}], source=f"x = {i}")
             for i in range(100_000)]
    (tmp_path / "many.ipynb").write_text(_notebook_head()[:-1] + json.dumps(cells) + "}")
    result = hostile_read(server, path="many.ipynb")
    assert result["isError"] is False and result["truncated"] and result["totalCells"] == 100_000
    tail = hostile_read(server, path="many.ipynb", cells="99999-")
    assert "x = 99999" in text_of(tail)
    outline = hostile_read(server, path="many.ipynb", cells="outline", offset=50_000, limit=5)
    assert outline["isError"] is False


def test_a_notebook_output_nested_100k_deep_answers(server, tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    text = (_notebook_head() + json.dumps(_cell([]))[:-2]
            + '[{"output_type": "execute_result", "data": {"application/json": ' + deep + "}}]}]}")
    (tmp_path / "deep.ipynb").write_text(text)
    result = hostile_read(server, path="deep.ipynb")
    if result["isError"]:
        assert result["error"]["code"] in ("not_a_notebook", "too_complex")
        assert "raw=true" in result["error"]["message"] or "too" in result["error"]["message"]
    raw = hostile_read(server, path="deep.ipynb", raw=True)
    assert raw["isError"] is False and raw["kind"] == "text"


# ---- text
# -------------------------------------------------------------------------------------------------

@pytest.fixture
def one_huge_line(tmp_path) -> Path:
    """A 300 MB file that is one line: text for as far as anyone looks, then a sparse tail
    (never on disk)."""
    path = tmp_path / "one-line.log"
    with open(path, "wb") as f:
        f.write(b"abcdefghij" * 200_000)
        f.truncate(300 << 20)
    return path


def test_a_300_mb_single_line_answers_at_once(server, one_huge_line):
    result = hostile_read(server, path=one_huge_line.name)
    assert result["isError"] is False and result["startLine"] == 1 and result["endLine"] == 1
    assert "line cut at" in text_of(result)


def test_reading_past_a_300_mb_single_line_answers_in_bounded_time(server, one_huge_line):
    result = hostile_read(server, path=one_huge_line.name, offset=2)
    assert result["error"]["code"] == "offset_past_end"
    assert "1 line" in result["error"]["message"]


@pytest.mark.parametrize("name, data", [
    ("bad-utf8.txt", b"caf\xc3 ok\n\xff\xfe\xfd broken\n\xed\xa0\x80 surrogate\n" * 1000),
    ("bad-utf16.txt", b"\xff\xfe" + "fine\n".encode("utf-16-le") + b"\x00\xd8\x41\x00" + b"\x00"),
    ("bad-utf16-be.txt", b"\xfe\xff" + b"\xdc\x00\x00A" * 5000 + b"\x00"),
    ("bad-bom8.txt", b"\xef\xbb\xbf" + bytes(range(256)) * 100),
    ("mixed.txt", "é".encode("utf-8") * 500 + "é".encode("cp1252") * 500 + b"\n" + "日本".encode("cp932") * 300),
    ("bad-utf32.txt", b"\xff\xfe\x00\x00" + b"\xff\xff\xff\xff" * 100 + "ok\n".encode("utf-32-le")),
])
def test_invalid_encodings_read_as_text_with_replacements_or_as_binary(server, tmp_path, name, data):
    (tmp_path / name).write_bytes(data)
    result = hostile_read(server, path=name)
    if result["isError"]:
        assert result["error"]["code"] == "binary"
    else:
        assert result["kind"] == "text" and result["encoding"]


# ---- inputs the fuzzer found (bench/fuzz.py): each should be a clear error, not `internal`
# ----------------

def test_lone_surrogates_reach_the_model_as_replacement_characters(server, tmp_path):
    """Half a surrogate pair escaped in a notebook's JSON (a fuzzed notebook came to this, seed 15),
    and a file name whose bytes are not UTF-8: what the server sends is valid UTF-8, with U+FFFD
    where they stood."""
    outputs = [{"output_type": "execute_result", "execution_count": 1, "metadata": {},
                "data": {"application/json": {"fruit": ["\ud83c"]}, "text/plain": "{'fruit': ['?']}"}}]
    notebook = {"cells": [{"cell_type": "code", "id": "c1", "source": "apple = '\udf4e'", "metadata": {},
                           "execution_count": 1, "outputs": outputs}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook))  # json writes the lone halves as \u escapes
    (tmp_path / "names").mkdir()
    with open(os.fsencode(tmp_path / "names") + b"/caf\xe9.txt", "wb") as f:  # Latin-1, not UTF-8
        f.write(b"x\n")
    for path in ("nb.ipynb", "names"):
        text = text_of(hostile_read(server, path=path))
        assert "\ufffd" in text and not any("\ud800" <= ch <= "\udfff" for ch in text), text


def _encrypted(filter_and_version: bytes) -> bytes:
    objects = {1: b"<< /Type /Catalog /Pages 2 0 R >>", 2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               3: PAGE, 4: _stream(CONTENT), 5: FONT,
               6: b"<< " + filter_and_version + b" /R 2 /O (0123456789abcdef0123456789abcdef) "
                  b"/U (0123456789abcdef0123456789abcdef) /P -1 >>"}
    return pdf_of(objects).replace(b"/Root 1 0 R", b"/Root 1 0 R /Encrypt 6 0 R /ID [(abc) (abc)]")


@pytest.mark.parametrize("encrypt", [b"/Filter /Standard /V 0", b"/Filter /Other /V 1"])
def test_a_pdf_with_an_unsupported_encryption_is_an_encrypted_pdf_error(server, tmp_path, encrypt):
    (tmp_path / "enc.pdf").write_bytes(_encrypted(encrypt))
    assert hostile_read(server, path="enc.pdf")["error"]["code"] == "encrypted_pdf"


def test_a_pdf_with_a_name_over_pypdfs_limit_is_read_or_a_damaged_pdf(server, tmp_path):
    objects = {1: b"<< /Type /Catalog /Pages 2 0 R /X /" + b"A" * 10_000 + b" >>",
               2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>", 3: PAGE, 4: _stream(CONTENT), 5: FONT}
    (tmp_path / "name.pdf").write_bytes(pdf_of(objects))
    result = hostile_read(server, path="name.pdf")
    assert (result.get("error") or {}).get("code", "read") in ("read", "damaged_pdf"), result


def test_an_open_range_past_the_last_page_is_page_out_of_range(server, tmp_path):
    objects = {1: b"<< /Type /Catalog /Pages 2 0 R >>", 2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               3: PAGE, 4: _stream(CONTENT), 5: FONT}
    (tmp_path / "one.pdf").write_bytes(pdf_of(objects))
    assert hostile_read(server, path="one.pdf", pages="2-")["error"]["code"] == "page_out_of_range"


def test_a_tiff_whose_second_page_has_no_size_is_undecodable_or_read(server, tmp_path):
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("L", (4, 4)).save(buf, "TIFF")
    tiff = bytearray(buf.getvalue())
    first = struct.unpack("<I", tiff[4:8])[0]
    entries = struct.unpack("<H", tiff[first:first + 2])[0]
    link = first + 2 + 12 * entries
    second = len(tiff)
    tiff += struct.pack("<H", 1) + struct.pack("<HHII", 262, 3, 1, 1) + struct.pack("<I", 0)  # photometric only
    tiff[link:link + 4] = struct.pack("<I", second)
    (tmp_path / "two.tif").write_bytes(bytes(tiff))
    result = hostile_read(server, path="two.tif")
    assert not result["isError"] or result["error"]["code"] == "image_undecodable"


def test_a_damaged_avif_is_undecodable(server, tmp_path):
    import io

    from PIL import Image, features

    if not features.check("avif"):
        pytest.skip("this Pillow has no AVIF codec")
    buf = io.BytesIO()
    Image.radial_gradient("L").convert("RGB").save(buf, "AVIF")
    data = bytearray(buf.getvalue())
    middle = len(data) // 2 + 100
    data[middle:middle + 30] = b"\xff" * 30  # inside the coded image data, past the headers
    (tmp_path / "bad.avif").write_bytes(bytes(data))
    assert hostile_read(server, path="bad.avif")["error"]["code"] == "image_undecodable"


def test_an_xls_whose_compound_file_chains_run_on_is_damaged_at_once(server, tmp_path):
    """One byte changed in an .xls (`bench/fuzz.py --replay 118753 --seed 4546`): xlrd's own reader
    of compound files followed its sector chains for minutes, taking gigabytes; olefile, which
    reads the workbook's stream out of it, checks them."""
    data = bytearray((Path(__file__).parent / "data" / "office" / "notes-hidden.xls").read_bytes())
    data[1748] = 0x30
    (tmp_path / "chains.xls").write_bytes(bytes(data))
    assert hostile_read(server, path="chains.xls")["error"]["code"] == "damaged_office"
