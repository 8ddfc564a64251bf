"""What kind of file is this: decided from the bytes (magic numbers, BOMs, byte statistics),
not the name."""

from __future__ import annotations

import codecs
import functools
import gzip
import io
import zipfile
from pathlib import Path

import filetype
import pytest

from agentread.engine import Engine
from agentread.limits import SNIFF_BYTES
from agentread.request import parse_request
from agentread.sniff import sniff
from agentread.workspace import Workspace


def png_bytes(size=(3, 2)) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", size, (200, 10, 10)).save(out, "PNG")
    return out.getvalue()


MINIMAL_PDF_HEAD = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"


@pytest.mark.parametrize("name", ["photo.txt", "photo.pdf", "photo", "photo.ipynb", "photo.png"])
def test_png_is_an_image_whatever_its_name(name: str):
    info = sniff(png_bytes(), name)
    assert info.kind == "image" and info.mime == "image/png"


@pytest.mark.parametrize("name", ["doc.png", "doc.txt", "doc"])
def test_pdf_is_a_pdf_whatever_its_name(name: str):
    assert sniff(MINIMAL_PDF_HEAD, name).kind == "pdf"


def test_pdf_header_after_leading_junk():
    assert sniff(b"\r\n  garbage before the header\n" + MINIMAL_PDF_HEAD, "x.pdf").kind == "pdf"


@pytest.mark.parametrize("name", ["image.png", "image.jpg", "archive.zip", "x.pdf"])
def test_plain_text_is_text_whatever_its_name(name: str):
    info = sniff(b"just some words\nand a second line\n", name)
    assert info.kind == "text" and info.encoding == "utf-8"


@pytest.mark.parametrize("data,mime", [
    (gzip.compress(b"hello\n" * 100), "application/gzip"),
    (b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 56, "application/x-executable"),
])
def test_binary_formats_are_binary(data: bytes, mime: str):
    info = sniff(data, "file.txt")
    assert info.kind == "binary" and info.mime == mime


@functools.cache
def _real_binaries() -> dict[str, bytes]:
    """Files as real libraries write them, one per family of signature."""
    import bz2
    import lzma
    import sqlite3
    import tarfile
    import tempfile

    from PIL import Image

    files = {"bz2": bz2.compress(b"x" * 100), "xz": lzma.compress(b"x" * 100)}
    for fmt in ("PNG", "JPEG", "GIF", "WEBP", "BMP", "TIFF", "ICO"):
        out = io.BytesIO()
        Image.new("RGB", (64, 48), (250, 250, 250)).save(out, fmt)  # a white image: no dark bytes by chance
        files[fmt] = out.getvalue()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        info = tarfile.TarInfo("notes.txt")
        info.size = 5
        tar.addfile(info, io.BytesIO(b"hello"))
    files["tar"] = out.getvalue()
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "a.db"
        with sqlite3.connect(db) as connection:
            connection.execute("create table t (name text)")
        files["sqlite"] = db.read_bytes()
    return files


@pytest.mark.parametrize("name", ["bz2", "xz", "PNG", "JPEG", "GIF", "WEBP", "BMP", "TIFF", "ICO", "tar", "sqlite"])
def test_real_binary_files_keep_their_detected_type(name: str):
    # The signature check is skipped for heads without control bytes: every one of these has some,
    # so each is still named by its signature (an image as an image), not merely found binary by its
    # byte statistics.
    head = _real_binaries()[name][:SNIFF_BYTES]
    info = sniff(head, "notes.txt")
    assert info.mime == filetype.guess(head).mime
    assert info.kind == ("archive" if name == "tar" else "binary" if name.islower() else "image")


def test_text_based_document_formats_are_text():
    # PostScript is read as the text it is; RTF too, with a reader of its own for its text.
    assert sniff(b"%!PS-Adobe-3.0\n%%Title: plot\n/Times findfont 12 scalefont setfont\n", "plot.ps").kind == "text"
    rtf = sniff(b"{\\rtf1\\ansi\\deff0 {\\fonttbl {\\f0 Times;}} Hello.}\n", "notes.txt")
    assert (rtf.kind, rtf.mime, rtf.encoding) == ("rtf", "application/rtf", "utf-8")


MAIL = (b"Return-Path: <ann@example.com>\nFrom: Ann <ann@example.com>\nTo: bo@example.com\n"
        b"Subject: Report\n\tcontinued\nDate: Mon, 3 Mar 2025 09:12:00 +0000\n\nHello.\n")


@pytest.mark.parametrize("head, kind", [
    (MAIL, "mail"),
    (MAIL.replace(b"\n", b"\r\n"), "mail"),
    # An mbox line first (git's patches): the file stays text, numbered as the editor numbers it.
    (b"From 0123abc Mon Sep 17 00:00:00 2001\n" + MAIL, "text"),
    # A note that only begins like a mail: no sender, or no blank line closing the fields.
    (b"To: the team\nSubject: lunch\n\nPizza.\n", "text"),
    (b"From: Ann\nTo: Bo\nSubject: x\nnot a field\n\nbody\n", "text"),
])
def test_mail_is_told_by_its_header_fields(head: bytes, kind: str):
    assert sniff(head, "notes.txt").kind == kind


def test_zip_named_ipynb_is_an_archive():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("a.txt", "hello")
    assert sniff(out.getvalue(), "nb.ipynb").kind == "archive"


def test_word_lzip_at_start_of_text_is_text():
    assert sniff(b"LZIP is a compressor; this file just talks about it.\n", "notes.md").kind == "text"


def test_notebook_needs_the_name_and_a_json_object():
    body = b'{\n "cells": [],\n "metadata": {},\n "nbformat": 4,\n "nbformat_minor": 5\n}\n'
    assert sniff(body, "a.ipynb").kind == "notebook"
    assert sniff(body, "a.json").kind == "text"
    assert sniff(b"not json at all\n", "a.ipynb").kind == "text"


def test_svg_is_text_with_its_mime():
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect/></svg>\n'
    info = sniff(svg, "logo.svg")
    assert info.kind == "text" and info.mime == "image/svg+xml"
    info = sniff(b'<?xml version="1.0"?>\n' + svg, "logo.png")
    assert info.kind == "text" and info.mime == "image/svg+xml"


def test_empty_is_utf8_text():
    info = sniff(b"", "empty.bin")
    assert info.kind == "text" and info.encoding == "utf-8" and info.bom == 0


@pytest.mark.parametrize("bom,codec", [(codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
                                       (codecs.BOM_UTF16_BE, "utf-16-be"), (codecs.BOM_UTF32_LE, "utf-32-le"),
                                       (codecs.BOM_UTF32_BE, "utf-32-be")])
def test_byte_order_marks(bom: bytes, codec: str):
    info = sniff(bom + "hi there\n".encode(codec), "f.txt")
    assert info.kind == "text" and info.bom == len(bom)
    assert codecs.lookup(info.encoding).name == codecs.lookup(codec).name


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_bom(codec: str):
    info = sniff("Plain English text in UTF-16 without a mark.\n".encode(codec) * 20, "f.txt")
    assert info.kind == "text" and info.bom == 0 and info.encoding == codec


def test_stray_nul_is_text_many_nuls_are_binary():
    assert sniff(b"log line one\n\x00\nlog line two\n" * 50, "x.log").kind == "text"
    assert sniff(b"\x00\x00\x00\x01\x00\x00\x00\x02" * 500, "x.log").kind == "binary"  # 32-bit integers


def test_array_of_small_16bit_integers_is_binary(tmp_path: Path):
    import struct

    data = struct.pack(">2000H", *(i % 200 for i in range(2000)))
    assert sniff(data, "samples.dat").kind == "binary"


def test_control_bytes_without_utf8_are_binary():
    data = bytes([0x01, 0x02, 0x81, 0x03, 0x90, 0x04, 0x05, 0xfe]) * 200
    assert sniff(data, "x.txt").kind == "binary"


def test_control_bytes_that_happen_to_be_utf8_are_binary():
    import random

    noise = bytes(random.Random(5).randrange(1, 32) for _ in range(5000))  # valid UTF-8: every byte < 0x80
    assert sniff(noise, "x.txt").kind == "binary"
    assert sniff(b"a\x01b\x02c\x03", "x.txt").kind == "text"  # too short to call binary


def test_ansi_logs_and_overstruck_man_pages_stay_text():
    assert sniff(b"\x1b[31mERROR\x1b[0m \x07disk full\n" * 100, "x.log").kind == "text"
    assert sniff(b"N\bNA\bAM\bME\bE\n     ls - list directory contents\n" * 100, "ls.1").kind == "text"


def test_mostly_utf8_stays_utf8():
    text = ("Grüße aus Köln — naïve café. " * 100).encode("utf-8") + b"\xff" + b" end\n"
    info = sniff(text, "x.txt")
    assert info.kind == "text" and info.encoding == "utf-8"


def test_utf8_character_cut_by_the_sniff_window_is_still_utf8(tmp_path: Path):
    """The sniffed head ends inside a multi-byte character: that is not an invalid byte."""
    prefix = (b"a" * 99 + b"\n") * (SNIFF_BYTES // 100) + b"b" * (SNIFF_BYTES % 100 - 1)
    body = prefix + "€ and more\n".encode("utf-8")  # '€' is 3 bytes; its first byte is the head's last
    assert sniff(body[:SNIFF_BYTES], "x.txt").encoding == "utf-8"
    (tmp_path / "x.txt").write_bytes(body)
    last = body.count(b"\n")
    result = Engine(Workspace([str(tmp_path)])).read(parse_request({"path": "x.txt", "offset": last}))
    assert result.encoding == "utf-8" and result.text().endswith("b€ and more")


def test_engine_uses_magic_not_extension(tmp_path: Path):
    (tmp_path / "picture.txt").write_bytes(png_bytes((5, 4)))
    (tmp_path / "notes.png").write_text("really text\n")
    (tmp_path / "doc.txt").write_bytes(MINIMAL_PDF_HEAD)
    engine = Engine(Workspace([str(tmp_path)]))
    picture = engine.read(parse_request({"path": "picture.txt"}))
    assert picture.kind == "image" and (picture.content[1].width, picture.content[1].height) == (5, 4)
    notes = engine.read(parse_request({"path": "notes.png"}))
    assert notes.kind == "text" and "really text" in notes.text()
    doc = engine.read(parse_request({"path": "doc.txt"}))
    assert doc.kind == "error" and doc.error.code == "damaged_pdf"  # read as the PDF it claims to be


def test_spanish_in_cp1252_is_not_taken_for_the_mac_page():
    # Both pages decode ñ, ó, é to letters; only in cp1252 are they small letters inside
    # small-letter words.
    text = "The plain ASCII line in between. El señor compró café y pan en la pequeña tienda del pueblo. "
    assert sniff(text.encode("cp1252"), "x.txt").encoding == "cp1252"
