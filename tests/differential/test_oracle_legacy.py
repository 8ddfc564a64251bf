"""Excel 97-2003 workbooks, Outlook messages, mail and RTF made by other people's tools, read to
their end by following `next` at every reply size and compared with an independent reader: each
.xls of readxl with its .xlsx twin as openpyxl reads it; a message's subject and attachments with
the streams olefile reads from the compound file; a mail's fields and attachments with the
standard library's older (compat32) parse of it. Word and PowerPoint 97-2003 files and encrypted
ones are refused, saying what reads them."""

from __future__ import annotations

import email
import email.header
import email.policy
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import olefile
import openpyxl
import pytest
from harness import (
    SIZES,
    THIRDPARTY,
    chain,
    editor_lines,
    follow,
    follow_lines,
    lines_of,
    need,
    same_in_every_front_end,
)
from test_oracle_xlsx import EXTDATA, rows_read, shown, trimmed

from rpc import ServerProcess, text_of

TWINS = ("datasets", "deaths", "clippy", "geometry", "type-me")
XLRD_TESTS = ("xlrd-1.2.0", "xlrd-1.2.0", "tests")
MSGS = ("msg_parser-1.2.0", "msg_parser-1.2.0", "tests", "files")
MAILS = ("libpython3.11-testsuite", "usr", "lib", "python3.11", "test", "test_email", "data")
OLETOOLS = ("oletools-0.60.2", "oletools-0.60.2", "tests", "test-data")


def values(path) -> dict[tuple[int, int], list[str]]:
    """(sheet, row) -> its cells' values as openpyxl reads them (the value Excel last computed: an
    .xls keeps no formula's text), a date drawn in its number format as test_oracle_xlsx draws
    it."""
    rows = {}
    for number, sheet in enumerate(openpyxl.load_workbook(path, read_only=True, data_only=True).worksheets, 1):
        sheet.reset_dimensions()
        for row in sheet.iter_rows():
            cells = [shown(cell.value, getattr(cell, "number_format", "General")) for cell in row]
            if any(cells):
                rows[(number, next(c.row for c in row if hasattr(c, "row")))] = cells
    return rows


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", TWINS)
def test_an_xls_reads_as_its_xlsx_twin(rpc, name, size):
    xls = need(*EXTDATA, f"{name}.xls")
    params = {"path": str(xls)} | ({"maxBytes": size} if size else {})
    assert trimmed(rows_read(follow(rpc, params))) == trimmed(values(xls.with_suffix(".xlsx")))


def test_every_xls_of_xlrds_tests_reads_to_its_end(rpc):
    folder = need(*XLRD_TESTS)
    # An Excel 2.x-4.0 sheet is a bare BIFF stream, not a compound file: read as binary.
    books = [p for p in sorted(folder.glob("*.xls")) if p.read_bytes().startswith(olefile.MAGIC)]
    assert len(books) >= 8
    for path in books:
        replies = follow(rpc, {"path": str(path), "maxBytes": SIZES[-1]})
        assert replies[0]["kind"] == "spreadsheet", path
        outline = rpc({"path": str(path), "outline": True})
        assert not outline["isError"] and outline["totalPages"] == replies[0]["totalPages"], path


def test_an_xls_is_the_same_in_every_front_end(rpc):
    path = need(*EXTDATA, "datasets.xls")
    same_in_every_front_end(rpc, chain(rpc, {"path": str(path), "limit": 40})[:3], cli_reads=2)


def _subject(ole: olefile.OleFileIO, storage: str = "") -> str:
    """The subject property's stream (PidTagSubject, UTF-16), read from the compound file itself."""
    return ole.openstream(f"{storage}__substg1.0_0037001F").read().decode("utf-16-le")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", ["complete.msg", "other.msg", "outer.msg"])
def test_a_message_reads_to_its_end_with_its_subject(rpc, name, size):
    path = need(*MSGS, name)
    params = {"path": str(path)} | ({"maxBytes": size} if size else {})
    lines = follow_lines(rpc, params)
    assert rpc(params)["kind"] == "mail"
    with olefile.OleFileIO(str(path)) as ole:
        subject = _subject(ole)
    assert f"Subject: {' '.join(subject.split())}" in lines
    assert lines == follow_lines(rpc, {"path": str(path)})  # the same lines whatever the reply size


def test_a_message_attachment_reads_as_the_stream_that_holds_it(rpc):
    path = need(*MSGS, "complete.msg")
    listed = [line.strip().split("  (")[0] for line in lines_of([rpc({"path": str(path)})]) if "/attachments/" in line]
    assert len(listed) == 10
    text = next(p for p in listed if p.endswith(".txt"))
    with olefile.OleFileIO(str(path)) as ole:
        storages = sorted({entry[0] for entry in ole.listdir() if entry[0].startswith("__attach_version1.0_")})
        # Each attachment's bytes (PidTagAttachDataBinary) are read out of its own storage.
        texts = [ole.openstream(f"{s}/__substg1.0_37010102").read() for s in storages
                 if ole.exists(f"{s}/__substg1.0_37010102")]
        inner = next(s for s in storages if ole.exists(f"{s}/__substg1.0_3701000D"))
        inner_subject = _subject(ole, f"{inner}/__substg1.0_3701000D/")
    expected = next(t for t in texts if t.startswith(b"[MS-OXPROPS]")).decode("utf-8")
    assert rpc({"path": text})["kind"] == "text"
    assert follow_lines(rpc, {"path": text, "maxBytes": 8192}) == editor_lines(expected)
    message = next(p for p in listed if p.endswith(".msg") and inner_subject.split()[0] in p)
    assert f"Subject: {inner_subject}" in follow_lines(rpc, {"path": message})


def test_a_message_is_the_same_in_every_front_end(rpc):
    path = need(*MSGS, "complete.msg")
    requests = chain(rpc, {"path": str(path), "limit": 40})[:2]
    requests.append({"path": f"{path}/attachments/_MS-OXPROPS_.txt", "limit": 40})
    same_in_every_front_end(rpc, requests, cli_reads=1)


def _mails():
    folder = THIRDPARTY.joinpath(*MAILS)
    return sorted(folder.glob("msg_*.txt")) if folder.is_dir() else []


def test_every_mail_of_pythons_tests_reads_as_compat32_parses_it(rpc):
    mails = _mails() or [need(*MAILS, "msg_01.txt")]
    read = 0
    for path in mails:
        first = rpc({"path": str(path)})
        if first["kind"] != "mail":
            continue  # a MIME fragment or an mbox file: text
        read += 1
        lines = follow_lines(rpc, {"path": str(path), "maxBytes": SIZES[-1]})
        assert lines == follow_lines(rpc, {"path": str(path)}), path
        old = email.message_from_bytes(path.read_bytes(), policy=email.policy.compat32)
        for field in ("From", "To", "Subject"):
            if old[field] is not None:
                value = str(email.header.make_header(email.header.decode_header(old[field])))
                assert f"{field}: {' '.join(value.split())}" in lines, (path, field)
        attachments = [line.strip().split("  (")[0] for line in lines if "/attachments/" in line]
        for attachment in attachments:
            # Read by its own kind's reader, which may find it damaged (a test's cut image).
            result = rpc({"path": attachment})
            assert not result["isError"] or result["error"]["code"] in ("image_undecodable", "binary"), \
                text_of(result)
    assert read >= 30


def test_a_text_attachment_reads_as_its_decoded_part(rpc):
    path = need(*MAILS, "msg_02.txt")
    old = email.message_from_bytes(path.read_bytes(), policy=email.policy.compat32)
    # The first part is the body; the second is the first attachment.
    first = old.get_payload()[1].get_payload(decode=True).decode()
    assert follow_lines(rpc, {"path": f"{path}/attachments/attachment-1.txt", "maxBytes": SIZES[-1]}) == \
        editor_lines(first)


@pytest.mark.parametrize("size", SIZES)
def test_the_rtf_specification_reads_to_its_end(rpc, size):
    path = need(*OLETOOLS, "msodde", "RTF-Spec-1.7.rtf")
    params = {"path": str(path)} | ({"maxBytes": size} if size else {})
    lines = follow_lines(rpc, params)
    assert rpc(params)["kind"] == "rtf"
    assert "Rich Text Format (RTF) Specification" in lines[2] and "\\rtf" not in "\n".join(lines[:50])
    assert lines[-1] == "This EULA is governed by the laws of the State of Washington, U.S.A."
    assert lines == follow_lines(rpc, {"path": str(path)})


@pytest.mark.parametrize("name, code, words", [
    ("oleobj/embedded-simple-2007.doc", "legacy_office", "soffice --headless --convert-to docx"),
    ("msodde/harmless-clean.doc", "legacy_office", "Word 97-2003"),
    ("oleobj/embedded-simple-2007.ppt", "legacy_office", "soffice --headless --convert-to pptx"),
    ("encrypted/encrypted.docx", "encrypted_office", "password-protected"),
    ("encrypted/encrypted.xls", "encrypted_office", "password-protected Excel 97-2003"),
])
def test_unreadable_compound_files_say_what_reads_them(rpc, name, code, words):
    path = need(*OLETOOLS, *name.split("/"))
    for result in (rpc({"path": str(path)}), rpc({"path": str(path), "outline": True})):
        assert result["error"]["code"] == code and words in result["error"]["message"], result["error"]


# What the model is told to run on a legacy file: the command in the refusal, quoted as written.
CONVERSION = re.compile(r"convert it with LibreOffice: (soffice --headless --convert-to (docx|pptx) \"[^\"]+\");")


@pytest.mark.parametrize("name, words", [("msodde/harmless-clean.doc", "This is a harmless test document."),
                                         ("oleobj/embedded-simple-2007.ppt", "# Embedded Objects")])
def test_the_conversion_a_refusal_names_reads(tmp_path, name, words):
    """The command a .doc's or .ppt's refusal names, run as written where the file is, makes a file
    this tool reads."""
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) is not installed: scripts/test installs it")
    source = need(*OLETOOLS, *name.split("/"))
    shutil.copy(source, tmp_path / source.name)
    server = ServerProcess(workspace=tmp_path)
    try:
        refusal = server.read(path=source.name)
        command, modern = CONVERSION.search(refusal["error"]["message"]).groups()
        subprocess.run(shlex.split(command), cwd=tmp_path, check=True, capture_output=True, timeout=300)
        converted = server.read(path=Path(source.name).with_suffix(f".{modern}").name)
    finally:
        server.close()
    assert not converted["isError"] and words in text_of(converted), text_of(converted)
