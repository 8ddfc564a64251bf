"""Excel 97-2003 workbooks, mail (.eml, Outlook .msg) and RTF through the real server over stdio and
the MCP server: sniffed by content whatever their names, read, outlined and searched like every
kind, their limits and damaged copies answered with errors that say what to do. Mails are built
here with the standard library; the workbook is a real one (tests/data/office/clippy.xls, made by
Excel); the third-party files' checks are in tests/differential/test_oracle_legacy.py."""

from __future__ import annotations

import shutil
from email.message import EmailMessage
from pathlib import Path

import pytest

from agentread.readers.mail import MAX_ATTACHMENTS, MAX_NESTING
from builders import build_pdf
from rpc import REPO, serving, text_of

DATA = Path(__file__).resolve().parents[1] / "data" / "office"
THIRDPARTY_MSG = REPO / ".thirdparty" / "msg_parser-1.2.0" / "msg_parser-1.2.0" / "tests" / "files" / "complete.msg"

RTF = (rb"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0 Times;}}"
       rb"\pard Caf\'e9 menu\par \pard Second paragraph\par}")


def _mail(attachments: int = 2) -> bytes:
    message = EmailMessage()
    message["From"] = "Ann Lee <ann@example.com>"
    message["To"] = "Bo <bo@example.com>"
    message["Cc"] = "=?utf-8?q?Z=C3=B6e?= <zoe@example.com>"
    message["Date"] = "Mon, 03 Mar 2025 09:12:00 +0000"
    message["Subject"] = "Quarterly report"
    message.set_content("Plain body line one\nline two with budget\n")
    message.add_alternative("<html><body><p>HTML <b>body</b></p></body></html>", subtype="html")
    if attachments >= 1:
        message.add_attachment(build_pdf(["attached page one", "attached page two"]), maintype="application",
                               subtype="pdf", filename="report.pdf")
    if attachments >= 2:
        message.add_attachment(b"first copy\n", maintype="text", subtype="plain", filename="notes.txt")
        message.add_attachment(b"second copy\n", maintype="text", subtype="plain", filename="notes.txt")
        message.add_attachment(bytes(range(256)) * 4, maintype="application", subtype="octet-stream")
        message.add_attachment(b"TOKEN=secret\n", maintype="text", subtype="plain", filename=".env")
        message.add_attachment(b"up\n", maintype="text", subtype="plain", filename="..")
    return bytes(message)


def _html_mail() -> bytes:
    message = EmailMessage()
    message["From"] = "ann@example.com (Ann Lee)"
    message["To"] = "bo@example.com"
    message["Subject"] = "Only HTML"
    message.set_content("<html><body><h1>Title</h1><p>First <i>para</i>graph.</p><ul><li>item</li></ul>"
                        "<p>Write &amp;lt;br&amp;gt; &amp;amp; more.</p></body></html>", subtype="html")
    return bytes(message)


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("legacy")
    (root / "mail.eml").write_bytes(_mail())
    (root / "saved.txt").write_bytes(_mail())  # a mail whatever its name
    (root / "html.eml").write_bytes(_html_mail())
    crowded = EmailMessage()
    crowded["From"], crowded["To"], crowded["Subject"] = "a@example.com", "b@example.com", "many parts"
    crowded.set_content("body")
    for n in range(MAX_ATTACHMENTS + 1):
        crowded.add_attachment(b"x", maintype="text", subtype="plain", filename=f"{n}.txt")
    (root / "crowded.eml").write_bytes(bytes(crowded))
    deep = EmailMessage()
    deep.set_content("the innermost part")
    for _ in range(MAX_NESTING + 1):
        outer = EmailMessage()
        outer.make_mixed()
        outer.attach(deep)
        deep = outer
    deep["From"], deep["To"], deep["Subject"] = "a@example.com", "b@example.com", "deep"
    (root / "deep.eml").write_bytes(bytes(deep))
    (root / "notes.rtf").write_bytes(RTF)
    # Text speaking of RTF's own words, escaped (`\\pict`), as the RTF specification does.
    (root / "prose.rtf").write_bytes(rb"{\rtf1\ansi The \\pict word and \\bin word.\par More text {\b bold}\par "
                                     rb"\\\\ and \\\{ too\par}")
    shutil.copy(DATA / "clippy.xls", root / "clippy.xls")
    shutil.copy(DATA / "clippy.xls", root / "book.bin")
    shutil.copy(DATA / "notes-hidden.xls", root / "notes-hidden.xls")
    data = (DATA / "clippy.xls").read_bytes()
    (root / "cut.xls").write_bytes(data[:len(data) // 3])
    (root / "junk.xls").write_bytes(data[:8] + b"\xff" * 4096)
    if THIRDPARTY_MSG.is_file():
        message = THIRDPARTY_MSG.read_bytes()
        (root / "message.msg").write_bytes(message)
        (root / "cut.msg").write_bytes(message[:len(message) // 2])
    return root


@pytest.fixture(scope="module")
def server(ws: Path):
    yield from serving(ws)


def _lines(server, **params) -> list[str]:
    """Every numbered line of a read, following `next`."""
    out = []
    while True:
        result = server.read(**params)
        assert not result["isError"], text_of(result)
        out += [line.split("\t", 1)[1] for line in text_of(result).split("\n") if "\t" in line]
        if not result.get("next"):
            return out
        params = {"path": params["path"], **({"maxBytes": params["maxBytes"]} if "maxBytes" in params else {}),
                  **result["next"]}


def test_a_mail_shows_its_fields_attachments_and_body(server, ws):
    result = server.read(path="saved.txt")
    assert result["kind"] == "mail" and not result["isError"]
    lines = _lines(server, path="mail.eml")
    assert lines[:5] == ["From: Ann Lee <ann@example.com>", "To: Bo <bo@example.com>", "Cc: Zöe <zoe@example.com>",
                         "Date: Mon, 03 Mar 2025 09:12:00 +0000", "Subject: Quarterly report"]
    assert lines[5] == "Attachments (6): read one by its path"
    assert lines[6:12] == ["  mail.eml/attachments/report.pdf  (application/pdf)",
                           "  mail.eml/attachments/notes.txt  (text/plain)",
                           "  mail.eml/attachments/notes-2.txt  (text/plain)",
                           "  mail.eml/attachments/attachment-4.bin  (application/octet-stream)",
                           "  mail.eml/attachments/.env  (text/plain)",
                           "  mail.eml/attachments/__  (text/plain)"]
    assert lines[13:] == ["Plain body line one", "line two with budget"]
    # The same lines at the smallest reply, following `next`.
    assert _lines(server, path="mail.eml", maxBytes=1400) == lines


def test_an_html_body_is_read_as_text(server):
    lines = _lines(server, path="html.eml")
    assert lines[0] == "From: ann@example.com (Ann Lee)"
    body = "\n".join(lines[4:])
    assert "Title" in body and "First paragraph." in body and "<" not in body
    assert "Write &lt;br&gt; &amp; more." in body  # markup written out as text, as a browser shows it


def test_an_attachment_is_read_by_its_path_as_its_own_kind(server, ws):
    pdf = server.read(path="mail.eml/attachments/report.pdf", pages="2")
    assert pdf["kind"] == "pdf" and "attached page two" in text_of(pdf)
    assert pdf["size"] == len(build_pdf(["attached page one", "attached page two"]))
    second = server.read(path="mail.eml/attachments/notes-2.txt")
    assert "second copy" in text_of(second) and second["version"] != server.read(path="mail.eml")["version"]
    binary = server.read(path="mail.eml/attachments/attachment-4.bin")
    assert binary["error"]["code"] == "binary"
    # An attachment is held to the secret rule by its name, as an archive's member is.
    assert server.read(path="mail.eml/attachments/.env")["error"]["code"] == "sensitive_file"
    assert "up" in text_of(server.read(path="mail.eml/attachments/__"))


@pytest.mark.parametrize("path, code, words", [
    ("mail.eml/attachments/missing.pdf", "not_found", "mail.eml/attachments/report.pdf"),
    ("mail.eml/report.pdf", "not_found", "read mail.eml to see them all"),
    ("mail.eml/attachments/report.pdf/inner", "nested_archive", "attachments/report.pdf"),
    ("clippy.xls/sheet1", "not_found", "Read"),
])
def test_a_path_inside_that_leads_nowhere_says_what_does(server, path, code, words):
    result = server.read(path=path)
    assert result["error"]["code"] == code and words in result["error"]["message"], result["error"]


def test_a_mail_outline_and_find(server):
    outline = text_of(server.read(path="mail.eml", outline=True))
    assert "Headers  (lines 1-12)  → offset=1 limit=12" in outline
    assert '→ path="mail.eml/attachments/report.pdf"' in outline
    found = server.read(path="mail.eml", find="budget")
    assert "line 15, column 15" in text_of(found)
    inside = server.read(path="mail.eml/attachments/report.pdf", find="page two")
    assert inside["kind"] == "pdf" and "page 2" in text_of(inside)


def test_a_field_a_mail_does_not_take_is_refused(server):
    result = server.read(path="mail.eml", pages="2")
    assert result["error"]["code"] == "not_for_this_kind"
    assert "a mail message (EML or Outlook MSG)" in result["error"]["message"]


@pytest.mark.parametrize("name, words", [("crowded.eml", f"more than {MAX_ATTACHMENTS:,} attachments"),
                                         ("deep.eml", f"MIME parts nested more than {MAX_NESTING} deep")])
def test_a_mail_past_its_limits_is_refused(server, name, words):
    result = server.read(path=name)
    assert result["error"]["code"] == "too_complex" and words in text_of(result), text_of(result)


def test_a_mail_read_raw_is_its_source(server):
    result = server.read(path="mail.eml", raw=True, limit=3)
    assert result["kind"] == "text" and "From: Ann Lee" in text_of(result)


def test_rtf_reads_as_its_text(server):
    result = server.read(path="notes.rtf")
    assert result["kind"] == "rtf"
    assert _lines(server, path="notes.rtf") == ["Café menu", "Second paragraph"]
    assert server.read(path="notes.rtf", outline=True)["error"]["code"] == "no_outline"
    assert "\\rtf1" in text_of(server.read(path="notes.rtf", raw=True))
    assert "line 2" in text_of(server.read(path="notes.rtf", find="Second"))


def test_an_rtf_changed_between_reads_is_read_anew(server, ws):
    """A document's text is kept between reads of the same file (paging through it), not past a
    change of the file."""
    path = ws / "changing.rtf"
    path.write_bytes(rb"{\rtf1\ansi First words\par Second line\par}")
    assert _lines(server, path="changing.rtf") == ["First words", "Second line"]
    assert _lines(server, path="changing.rtf", offset=2) == ["Second line"]
    path.write_bytes(rb"{\rtf1\ansi Other words\par}")
    assert _lines(server, path="changing.rtf") == ["Other words"]


def test_rtf_text_naming_rtf_words_reads_whole(server):
    assert _lines(server, path="prose.rtf") == ["The \\pict word and \\bin word.", "More text bold",
                                                "\\\\ and \\{ too"]


def test_an_xls_reads_by_its_content_whatever_its_name(server):
    result = server.read(path="book.bin", maxBytes=1400)
    assert result["kind"] == "spreadsheet" and result["totalPages"] == 2
    assert '--- Sheet 1 "list-column"' in text_of(result)
    found = server.read(path="clippy.xls", find="Clippy")
    assert "sheet 'list-column' B2" in text_of(found)


def test_an_xls_reads_a_range_as_an_xlsx_does(server):
    first = server.read(path="clippy.xls", range="'two-row-header'!B2:C9", limit=1)
    assert '--- Sheet 2 "two-row-header" (range B2:C9) ---' in text_of(first)
    assert "| 2 | (office supply type) | (date is approximate) |" in text_of(first)
    assert first["next"] == {"range": "'two-row-header'!B3:C9"}
    rest = server.read(path="clippy.xls", **first["next"])
    assert "| 3 | paperclip | 2007-01-01 |" in text_of(rest) and "Clippy" not in text_of(rest)
    assert not rest.get("next")


def test_an_xls_shows_its_notes_and_marks_the_rows_and_columns_excel_hides(server):
    """An .xls LibreOffice Calc wrote (tests/data/office/notes-hidden.xls): each note after its
    cell's value, one on an empty cell alone, its author left out where the file gives none (one
    space); the hidden row and column named in the header and their cells marked; a note found."""
    result = server.read(path="notes-hidden.xls")
    hidden_row = "⟦hidden: in rows Excel hides⟧{}⟦/hidden⟧"
    hidden_column = "⟦hidden: in columns Excel hides⟧{}⟦/hidden⟧"
    assert text_of(result).split("\n")[:-1] == [
        "[Hidden from a person reading the file: 5 passages in columns Excel hides, 3 passages in rows Excel hides; "
        "each is marked ⟦…⟧ where it stands.]",
        '--- Sheet 1 "Budget" (6 rows × 3 columns) ---',
        "Hidden in Excel (shown here): row 4; column C",
        "| row | A | B | C |", "| --- | --- | --- | --- |",
        f"| 1 | Item | Q1 | {hidden_column.format('Q2')} |",
        f"| 2 | Rent | 1200 [note: Includes the storage unit] | {hidden_column.format(1250)} |",
        f"| 3 | Salaries | 5000 | {hidden_column.format(5100)} |",
        f"| 4 | {hidden_row.format('Bonus')} | {hidden_row.format(900)} | {hidden_row.format(0)} |",
        f"| 5 | Travel [note: Two trips to the client.<br>Second line.] | 300 | {hidden_column.format(450)} |",
        f"| 6 | Total | 7400 | {hidden_column.format(6800)} |",
        "",
        '--- Sheet 2 "Notes only" (3 rows × 3 columns) ---',
        "| row | A | B | C |", "| --- | --- | --- | --- |",
        "| 1 | plain |  |  |",
        "| 3 |  |  | [note: A note on an empty cell] |"]
    assert result["hidden"] == {"in columns Excel hides": 5, "in rows Excel hides": 3}
    found = text_of(server.read(path="notes-hidden.xls", find="storage unit"))
    assert "sheet 'Budget' B2" in found and "[note: Includes the storage unit]" in found


@pytest.mark.parametrize("name, code", [("cut.xls", "damaged_office"), ("junk.xls", "damaged_office"),
                                        ("cut.msg", "damaged_office")])
def test_a_damaged_compound_file_says_so(server, ws, name, code):
    if not (ws / name).exists():
        pytest.skip(f"{THIRDPARTY_MSG} is absent: run ./scripts/fetch-thirdparty")
    result = server.read(path=name)
    assert result["error"]["code"] == code and "another copy of the file" in result["error"]["message"], result["error"]


def test_mcp_reads_a_mail_its_attachment_and_a_workbook(ws):
    from mcp_client import run, texts

    async def calls(client):
        return [texts(await client.call_tool("read", {"path": path}))
                for path in ("mail.eml", "mail.eml/attachments/notes.txt", "clippy.xls")]

    mail, attachment, book = run({}, "--root", str(ws), calls=calls)
    assert "Subject: Quarterly report" in mail and "first copy" in attachment
    assert '--- Sheet 1 "list-column"' in book


def test_an_outlook_message_and_its_attachment_are_searched(server, ws):
    if not (ws / "message.msg").exists():
        pytest.skip(f"{THIRDPARTY_MSG} is absent: run ./scripts/fetch-thirdparty")
    found = server.read(path="message.msg", find="Withings", limit=1)
    assert found["kind"] == "mail" and "line 18" in text_of(found) and found["next"]
    inside = server.read(path="message.msg/attachments/_MS-OXPROPS_.txt", find="Property ID: 0x6850")
    assert inside["kind"] == "text" and "line 16,034: Property ID: 0x6850" in text_of(inside), text_of(inside)
    outline = text_of(server.read(path="message.msg", outline=True, maxBytes=1400))
    assert '→ path="message.msg/attachments/Create a database on Azure in 90 seconds.msg"' in outline
