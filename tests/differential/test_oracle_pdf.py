"""PDF manuals read to their end by following `next`, page by page against PDFium's own text
(pypdfium2), and their outlines against their bookmarks as pypdf reads them."""

from __future__ import annotations

import re

import pypdf
import pypdfium2
import pytest
from harness import SIZES, chain, cli, follow, need, outline_lines, pdf_pages, same_in_every_front_end

R_MANUALS = ("r-doc-pdf", "usr", "share", "R", "doc", "manual")
TASN1 = ("libtasn1-doc", "usr", "share", "doc", "libtasn1-doc", "libtasn1.pdf")
READ_WHOLE = [(*R_MANUALS, "R-intro.pdf"), (*R_MANUALS, "R-data.pdf"), TASN1]
OUTLINED = READ_WHOLE + [(*R_MANUALS, "R-exts.pdf"), (*R_MANUALS, "R-admin.pdf")]


def page_texts(path) -> dict[int, str]:
    """Each page's text as PDFium lays it out; lines end with LF where PDFium writes CRLF, a control
    character within a line (a glyph PDFium gives by its code: a lone CR, LF, ...) is U+FFFD, and a
    word hyphenated across a line is whole (PDFium's U+FFFE in the hyphen's place dropped)."""
    pdf = pypdfium2.PdfDocument(str(path))
    try:
        texts = {}
        for number in range(1, len(pdf) + 1):
            lines = pdf[number - 1].get_textpage().get_text_range().split("\r\n")
            text = "\n".join("".join("\ufffd" if ord(c) < 32 and c != "\t" or c == "\x7f" else c for c in line)
                             for line in lines)
            texts[number] = text.replace("\ufffe", "").strip("\n")
        return texts
    finally:
        pdf.close()


def pages_read(read, params: dict) -> dict[int, str]:
    return pdf_pages(follow(read, params))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("parts", READ_WHOLE, ids=lambda p: p[-1])
def test_following_next_gives_every_page_as_pdfium_lays_it_out(rpc, parts, size):
    path = need(*parts)
    params = {"path": str(path)} | ({"maxBytes": size} if size else {})
    assert pages_read(rpc, params) == page_texts(path)


def test_the_cli_follows_next_to_the_same_pages():
    path = need(*TASN1)
    assert pages_read(cli, {"path": str(path)}) == page_texts(path)


def test_mcp_and_cli_show_the_rpc_replies_word_for_word(rpc):
    path = need(*R_MANUALS, "R-intro.pdf")
    same_in_every_front_end(rpc, chain(rpc, {"path": str(path)})[:6])


def bookmarks(path) -> list[tuple[int, str, int]]:
    """(depth, title, page) of each bookmark, in order, as pypdf reads them."""
    reader = pypdf.PdfReader(str(path))
    out = []

    def walk(items, depth):
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
            else:
                page = reader.get_destination_page_number(item)
                out.append((depth, item.title, page + 1 if page is not None else None))
    walk(reader.outline, 0)
    return out


ENTRY = re.compile(r"( *)(.*?)  \(pages? (\d+)(?:-(\d+))?(?:, labelled ([^)]*))?\)(?:  → pages=\"(\d+)(?:-(\d+))?\")?")


def outline_entries(read, path, size) -> list[tuple]:
    """(depth, title, first page, last page, label) of each entry an outline lists, following
    `next`; each entry's read names its pages."""
    entries = []
    for match in outline_lines(read, path, size, ENTRY):
        first, last = int(match[3]), int(match[4] or match[3])
        assert not match[6] or (int(match[6]), int(match[7] or match[6])) == (first, last), match[0]
        entries.append((len(match[1]) // 2, match[2], first, last, match[5]))
    return entries


TITLE_CUT = 200  # the contract's cut of an outline title
MAX_DEPTH = 12  # the contract's deepest nesting shown


def expected_outline(path) -> list[tuple]:
    """Each bookmark as pypdf reads it, spanning its page to the page where the next at its level
    or higher begins (the last page for the last), with its page's label where the document prints
    another number than the page's."""
    reader = pypdf.PdfReader(str(path))
    marks = bookmarks(path)
    labels = reader.page_labels
    out = []
    for i, (depth, title, page) in enumerate(marks):
        following = [p for d, _, p in marks[i + 1:] if d <= depth]
        last = max(page, following[0]) if following else len(reader.pages)
        label = labels[page - 1] if labels[page - 1] != str(page) else None
        out.append((min(depth, MAX_DEPTH), " ".join(title.split())[:TITLE_CUT], page, last, label))
    return out


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("parts", OUTLINED, ids=lambda p: p[-1])
def test_every_bookmark_lands_on_its_page(rpc, parts, size):
    path = need(*parts)
    assert outline_entries(rpc, path, size) == expected_outline(path)


def test_a_read_of_one_page_shown_whole_is_not_truncated(rpc):
    path = need(*R_MANUALS, "R-intro.pdf")
    result = rpc({"path": str(path), "pages": "7"})
    assert result["shown"]["pages"] == [7]
    assert not result["truncated"]
