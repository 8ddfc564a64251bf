"""EPUB books and OpenDocument files through the JSON-RPC server: files made here with the libraries
that write them (ebooklib, odfdo) for what each reading promises, and hostile or damaged ones for
the limits and errors. The differential suite reads third-party files of each kind."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import pytest
from PIL import Image

from rpc import body_of, serving


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("books")


@pytest.fixture(scope="module")
def server(folder):
    yield from serving(folder)


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 30), "red").save(out, "PNG")
    return out.getvalue()


def make_book(path: Path) -> None:
    """Three chapters whose reading order is not the manifest's, a picture, a nested contents."""
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("agentread-test")
    book.set_title("A Test Book")
    book.set_language("en")
    chapters = []
    for name, title, text in (("intro.xhtml", "Introduction", "<p>The first words.</p>"),
                              ("body.xhtml", "The Body", '<h2 id="part">A part</h2><p>Middle text.</p>'
                               '<p><img src="images/red.png" alt="a red square"/></p>'),
                              ("end.xhtml", "The End", "<p>Last words of the book.</p>")):
        chapter = epub.EpubHtml(title=title, file_name=name, lang="en")
        chapter.content = f"<html><body><h1>{title}</h1>{text}</body></html>"
        chapters.append(chapter)
    for chapter in reversed(chapters):  # the manifest's order is not the spine's
        book.add_item(chapter)
    book.add_item(epub.EpubItem(uid="red", file_name="images/red.png", media_type="image/png", content=png()))
    book.toc = [epub.Link("intro.xhtml", "Introduction", "intro"),
                (epub.Section("The Body", "body.xhtml"), [epub.Link("body.xhtml#part", "A part", "part")]),
                epub.Link("end.xhtml", "The End", "end")]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = chapters
    epub.write_epub(str(path), book)


def make_text(path: Path) -> None:
    from odfdo import Document, Header, List, Paragraph, Table

    document = Document("text")
    body = document.body
    body.clear()
    body.append(Header(1, "Report"))
    body.append(Paragraph("Opening paragraph."))
    body.append(List(["first item", "second item"]))
    body.append(Header(2, "Figures"))
    table = Table("T", width=2, height=2)
    table.set_values([["Name", "Value"], ["rent", "1200"]])
    body.append(table)
    paragraph = Paragraph("A claim.")
    paragraph.insert_note(after="A claim", note_id="n1", citation="1", body="The source of it.")
    body.append(paragraph)
    document.save(path)


def make_sheet(path: Path, sheets: int = 2) -> None:
    from odfdo import Document, Table

    document = Document("spreadsheet")
    document.body.clear()
    for number in range(1, sheets + 1):
        table = Table(f"Data{number}")
        table.set_values([["item", "cost"], ["rent", 1200], ["food", 300]])
        document.body.append(table)
    document.save(path)


def repacked_in_name_order(source: Path, target: Path) -> None:
    """The zip again with its members sorted by name, as reproducible builds write them (mimetype
    is then not first)."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for name in sorted(old.namelist()):
            new.writestr(name, old.read(name))


def test_an_epub_reads_its_chapters_in_reading_order_with_its_picture(server, folder):
    make_book(folder / "book.epub")
    result = server.read(path="book.epub")
    text = body_of(result)
    assert result["kind"] == "document" and result["totalPages"] == 3
    headers = [line.split("\t", 1)[1] for line in text.split("\n") if "--- Chapter" in line]
    assert headers == ['--- Chapter 1 "Introduction" (intro.xhtml) ---', '--- Chapter 2 "The Body" (body.xhtml) ---',
                       '--- Chapter 3 "The End" (end.xhtml) ---']
    assert "[image 1: images/red.png \"a red square\", image/png 40x30, attached]" in text
    assert any(part["type"] == "image" for part in result["content"])


def test_an_epub_chapter_by_pages_its_outline_and_a_find(server, folder):
    make_book(folder / "book.epub")
    chapter = body_of(server.read(path="book.epub", pages="3"))
    assert "Last words of the book." in chapter and "Middle text" not in chapter
    outline = body_of(server.read(path="book.epub", outline=True))
    assert 'Introduction  (chapter 1)  → pages="1"' in outline
    assert '  A part  (chapter 2, #part)  → pages="2"' in outline
    found = body_of(server.read(path="book.epub", find="Middle"))
    assert "chapter 2, line" in found and 'pages="2"' in found


def test_an_odt_reads_headings_lists_tables_and_notes(server, folder):
    make_text(folder / "report.odt")
    lines = [line.split("\t", 1)[1] for line in body_of(server.read(path="report.odt")).split("\n") if "\t" in line]
    assert lines[:5] == ["# Report", "Opening paragraph.", "- first item", "- second item", "## Figures"]
    assert "| Name | Value |" in lines and "| rent | 1200 |" in lines
    assert "A claim[^1]." in lines and "[^1]: The source of it." in lines
    outline = body_of(server.read(path="report.odt", outline=True))
    assert '# Report  (lines 1-' in outline and "## Figures" in outline


def test_an_ods_reads_sheets_by_number_or_name_with_their_row_numbers(server, folder):
    make_sheet(folder / "costs.ods")
    second = body_of(server.read(path="costs.ods", pages="Data2"))
    assert '--- Sheet 2 "Data2" (3 rows × 2 columns) ---' in second and "| 2 | rent | 1200 |" in second
    assert "Data1" not in second
    found = body_of(server.read(path="costs.ods", find="food"))
    assert "sheet 'Data1' A3" in found


def test_fields_the_new_kinds_do_not_take_are_refused(server, folder):
    make_sheet(folder / "costs.ods")
    make_book(folder / "book.epub")
    refused = server.read(path="costs.ods", char=3, column=1, offset=2)
    assert refused["error"]["code"] == "not_for_this_kind"
    assert "OpenDocument spreadsheet (ODS)" in refused["error"]["message"]
    refused = server.read(path="book.epub", cells="2")
    assert refused["error"]["code"] == "not_for_this_kind" and "EPUB book" in refused["error"]["message"]


def test_zips_repacked_in_name_order_are_still_read_as_their_kind(server, folder):
    """With mimetype no longer first, the EPUB's container and the ODT's manifest say what they are
    (else both were listed as plain zip archives)."""
    make_book(folder / "book.epub")
    make_text(folder / "report.odt")
    repacked_in_name_order(folder / "book.epub", folder / "sorted.epub")
    repacked_in_name_order(folder / "report.odt", folder / "sorted.odt")
    assert server.read(path="sorted.epub")["kind"] == "document"
    assert "# Report" in body_of(server.read(path="sorted.odt"))


def test_a_truncated_file_is_a_clear_error(server, folder):
    make_text(folder / "report.odt")
    data = (folder / "report.odt").read_bytes()
    (folder / "cut.odt").write_bytes(data[:len(data) // 2])
    result = server.read(path="cut.odt")
    assert result["error"]["code"] == "damaged_office" and "another copy" in result["error"]["message"]
    make_book(folder / "book.epub")
    data = (folder / "book.epub").read_bytes()
    (folder / "cut.epub").write_bytes(data[:len(data) // 2])
    result = server.read(path="cut.epub")
    assert result["error"]["code"] == "damaged_epub" and "another copy" in result["error"]["message"]


def test_a_spreadsheet_of_too_many_sheets_is_refused(server, folder):
    make_sheet(folder / "many.ods", sheets=1001)
    result = server.read(path="many.ods", pages="1")
    assert result["error"]["code"] == "too_complex" and "1,001 sheets" in result["error"]["message"]


def test_a_book_claiming_to_inflate_past_the_limit_is_refused(server, folder):
    """The central directory says a member inflates to 600 MB: refused before anything is
    inflated."""
    make_book(folder / "book.epub")
    data = bytearray((folder / "book.epub").read_bytes())
    entry = data.rfind(b"PK\x01\x02")  # the last member's central directory entry
    struct.pack_into("<I", data, entry + 24, 600 << 20)  # its uncompressed size
    (folder / "bomb.epub").write_bytes(bytes(data))
    result = server.read(path="bomb.epub")
    assert result["error"]["code"] == "too_complex" and "zip bomb" in result["error"]["message"]


def test_a_book_of_too_many_chapters_is_refused(server, folder):
    make_book(folder / "book.epub")
    with zipfile.ZipFile(folder / "book.epub") as old, \
            zipfile.ZipFile(folder / "long.epub", "w", zipfile.ZIP_DEFLATED) as new:
        for name in old.namelist():
            data = old.read(name)
            if name.endswith(".opf"):
                data = data.replace(b"</spine>", b'<itemref idref="chapter_0"/>' * 5001 + b"</spine>")
            new.writestr(name, data)
    result = server.read(path="long.epub")
    assert result["error"]["code"] == "too_complex" and "chapters" in result["error"]["message"]


def test_a_sheet_with_a_repeat_count_that_is_no_number_is_a_clear_error(server, folder):
    """odfdo parses it; the walk over its rows fails on the count, and that is the file's damage,
    not an internal error."""
    make_sheet(folder / "costs.ods")
    with zipfile.ZipFile(folder / "costs.ods") as old, \
            zipfile.ZipFile(folder / "badcount.ods", "w", zipfile.ZIP_DEFLATED) as new:
        for name in old.namelist():
            data = old.read(name)
            if name == "content.xml":
                data = data.replace(b"<table:table-row", b'<table:table-row table:number-rows-repeated="many"', 1)
            new.writestr(name, data)
    result = server.read(path="badcount.ods")
    assert result["error"]["code"] == "damaged_office", result
    assert "ValueError" in result["error"]["message"] and "another copy" in result["error"]["message"]


def test_a_filled_row_repeated_past_the_limit_is_shown_so_many_times_then_counted(server, folder):
    make_sheet(folder / "costs.ods", sheets=1)
    with zipfile.ZipFile(folder / "costs.ods") as old, \
            zipfile.ZipFile(folder / "repeats.ods", "w", zipfile.ZIP_DEFLATED) as new:
        for name in old.namelist():
            data = old.read(name)
            if name == "content.xml":  # the second row (rent) stands for 1,500 rows
                at = data.index(b"<table:table-row", data.index(b"<table:table-row") + 1)
                data = data[:at] + data[at:].replace(b"<table:table-row",
                                                     b'<table:table-row table:number-rows-repeated="1500"', 1)
            new.writestr(name, data)
    text = body_of(server.read(path="repeats.ods"))
    assert '--- Sheet 1 "Data1" (1,502 rows × 2 columns) ---' in text
    assert "| 1001 | rent | 1200 |" in text and "| 1002 | rent" not in text
    assert "[Rows 1,002-1,501 repeat row 2: not shown.]" in text and "| 1502 | food | 300 |" in text


def test_an_external_entity_in_a_book_reads_no_file(server, folder, tmp_path):
    """A table of contents naming a local file as an entity (XXE) shows an untitled entry, never
    the file: lxml (5 and later) resolves no external entity."""
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-TOKEN-42\n")
    make_book(folder / "book.epub")
    with zipfile.ZipFile(folder / "book.epub") as old, zipfile.ZipFile(folder / "xxe.epub", "w") as new:
        for name in old.namelist():
            data = old.read(name)
            if name.endswith(".ncx"):
                data = data.replace(b"<ncx", f'<!DOCTYPE ncx [<!ENTITY x SYSTEM "file://{secret}">]>\n<ncx'.encode(), 1)
                data = data.replace(b"<text>Introduction</text>", b"<text>&x;</text>")
            new.writestr(name, data)
    for params in ({"outline": True}, {"pages": "1"}, {"find": "SECRET"}):
        text = body_of(server.read(path="xxe.epub", **params))
        assert "SECRET-TOKEN" not in text.replace("find=\"SECRET\"", "").replace("'SECRET'", "")
    assert '(untitled)  (chapter 1)  → pages="1"' in body_of(server.read(path="xxe.epub", outline=True))


def test_a_repeated_table_cell_in_a_text_shows_its_text_in_each_column(server, folder):
    """table:number-columns-repeated stands for that many equal cells: the text is in each (not in
    the first alone)."""
    make_text(folder / "report.odt")
    with zipfile.ZipFile(folder / "report.odt") as old, \
            zipfile.ZipFile(folder / "repeated.odt", "w", zipfile.ZIP_DEFLATED) as new:
        for name in old.namelist():
            data = old.read(name)
            if name == "content.xml":  # the row "rent | 1200" becomes "rent | rent"
                cell = b"<text:p>rent</text:p></table:table-cell>"
                at = data.index(cell) + len(cell)
                data = data[:at] + data[data.index(b"</table:table-row>", at):]
                data = data.replace(b'office:string-value="rent"',
                                    b'office:string-value="rent" table:number-columns-repeated="2"')
            new.writestr(name, data)
    assert "| rent | rent |" in body_of(server.read(path="repeated.odt"))
