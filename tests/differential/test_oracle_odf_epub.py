"""OpenDocument files (odfpy's test files) and EPUB books (Debian's packaged manuals) read to their
end by following `next`, checked against a second reader: odfpy for OpenDocument (every
paragraph's and cell's text, every slide and sheet in order), and the book's own package for EPUB
(its spine, read here with zipfile and lxml: every chapter in reading order with its paragraphs'
text)."""

from __future__ import annotations

import re
import zipfile
from html.parser import HTMLParser

import pytest
from harness import SIZES, THIRDPARTY, body, chain, follow, follow_lines, same_in_every_front_end

odf = pytest.importorskip("odf", reason="odfpy (the test extra) is the second reader of OpenDocument files")
from odf import draw, table, teletype  # noqa: E402
from odf import text as odf_text  # noqa: E402
from odf.opendocument import load  # noqa: E402

EXAMPLES = THIRDPARTY / "odfpy-1.4.1" / "odfpy-1.4.1" / "tests" / "examples"
FILES = sorted(p.name for p in EXAMPLES.glob("*.od?")) or ["(absent)"]
GUIDE = (THIRDPARTY / "ubuntu-packaging-guide-epub" / "usr" / "share" / "doc" / "ubuntu-packaging-guide-epub"
         / "ubuntu-packaging-guide.epub")
MANUAL = THIRDPARTY / "live-manual-epub" / "usr" / "share" / "doc" / "live-manual" / "epub" / "live-manual.en.epub"

TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
# Paragraphs whose text odfpy gives with their notes' bodies or frames' captions run in: the
# reader shows those apart, so they are not compared word for word.
MIXED = {(TEXT, "note"), (TEXT, "annotation"), (DRAW, "frame")}


def example(name):
    path = EXAMPLES / name
    if not path.is_file():
        pytest.skip(f"{path} is absent: run ./scripts/fetch-thirdparty")
    return path


def flat(text: str) -> str:
    return " ".join(text.split())


def squeezed(text: str) -> str:
    """Text without its white space: a browser's layout (inscriptis's) may space an inline element
    apart from the punctuation after it."""
    return "".join(text.split())


def paragraphs(element) -> list[str]:
    """odfpy's text of every paragraph and heading under `element` that holds no note or frame."""
    found = []
    for kind in (odf_text.P, odf_text.H):
        for p in element.getElementsByType(kind):
            if any(getattr(n, "qname", None) in MIXED for n in _descendants(p)):
                continue
            text = flat(teletype.extractText(p))
            if text:
                found.append(text)
    return found


def _descendants(node):
    for child in node.childNodes:
        yield child
        yield from _descendants(child)


def readable(name) -> bool:
    try:
        load(str(EXAMPLES / name))
        return True
    except Exception:  # noqa: BLE001 - whatever odfpy cannot load, the reader is checked to refuse
        return False


def check_odf(path, lines: list[str]) -> None:
    document = load(str(path))
    shown = flat("\n".join(lines).replace("\\|", "|").replace("<br>", " "))
    missing = [t for t in paragraphs(document.body) if t not in shown]
    assert missing == [], path.name
    kind = document.mimetype.rsplit(".", 1)[-1]
    if kind == "presentation":
        pages = document.body.getElementsByType(draw.Page)
        assert [int(n) for n in re.findall(r"^--- Slide (\d+)", "\n".join(lines), re.M)] == \
            list(range(1, len(pages) + 1))
    if kind == "spreadsheet":
        sheets = document.body.getElementsByType(table.Table)
        assert [int(n) for n in re.findall(r"^--- Sheet (\d+)", "\n".join(lines), re.M)] == \
            list(range(1, len(sheets) + 1))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", FILES)
def test_every_paragraph_cell_slide_and_sheet(rpc, name, size):
    path = example(name)
    if not readable(name):  # nasty.odt: an entity odfpy's parser refuses too
        result = rpc({"path": str(path)})
        assert result["isError"] and result["error"]["code"] == "damaged_office", result
        return
    check_odf(path, follow_lines(rpc, {"path": str(path), "maxBytes": size}))


def test_a_sheet_by_its_name_and_its_cells_found(rpc):
    path = example("pythagoras.ods")
    read = body(rpc({"path": str(path), "pages": "Sheet1"}))
    assert "| 4 | of:=SUM([.A1:.A2]) → 7 |" in read
    found = body(rpc({"path": str(path), "find": "SUM"}))
    assert "sheet 'Sheet1' A4" in found and '[read: pages="1", offset=7, limit=1]' in found


def test_the_outline_of_a_deck_names_its_titles(rpc):
    text = body(rpc({"path": str(example("ol.odp")), "outline": True}))
    assert 'OL  (slide 1)  → pages="1"' in text


def test_each_kind_is_the_same_in_every_front_end(rpc):
    for name in ("twolevellist.odt", "pythagoras.ods", "ol.odp"):
        path = example(name)
        same_in_every_front_end(rpc, chain(rpc, {"path": str(path)})[:3], cli_reads=1)


# EPUB.

def guide():
    if not GUIDE.is_file():
        pytest.skip(f"{GUIDE} is absent: run ./scripts/fetch-thirdparty")
    return GUIDE


def spine(path) -> list[tuple[str, list[str]]]:
    """The book's chapters in reading order, as (path in the book, its paragraphs' text), from its
    package document: the second reader. A file the spine lists again (the live manual's items
    named by a fragment, `about-manual.xhtml#o8`) is one chapter, where it first stands."""
    from lxml import etree

    with zipfile.ZipFile(path) as book:
        container = etree.fromstring(book.read("META-INF/container.xml"))
        opf_path = container.find(".//{*}rootfile").get("full-path")
        opf = etree.fromstring(book.read(opf_path))
        folder = opf_path.rpartition("/")[0]
        hrefs = {item.get("id"): item.get("href").partition("#")[0] for item in opf.iter("{*}item")}
        chapters = []
        for ref in opf.iter("{*}itemref"):
            href = hrefs[ref.get("idref")]
            if href in [name for name, _ in chapters]:
                continue
            name = f"{folder}/{href}" if folder else href
            try:
                html = etree.fromstring(book.read(name))
                texts = [squeezed("".join(p.itertext())) for p in html.iter("{*}p")]
            except etree.XMLSyntaxError:  # read as a browser reads it: HTML (metadata.xhtml's `<a@b.org>`)
                texts = [squeezed(text) for text in HtmlParagraphs.of(book.read(name).decode("utf-8"))]
            chapters.append((href, [t for t in texts if t]))
    return chapters


class HtmlParagraphs(HTMLParser):
    """Each paragraph's text of a chapter that is not well-formed XML, by Python's HTML parser."""

    @classmethod
    def of(cls, markup: str) -> list[str]:
        parser = cls()
        parser.feed(markup)
        parser.close()
        return parser.found

    def __init__(self):
        super().__init__()
        self.found: list[str] = []
        self.depth = 0

    def handle_starttag(self, tag, attrs):
        if tag == "p":
            self.depth += 1
            if self.depth == 1:
                self.found.append("")

    def handle_endtag(self, tag):
        if tag == "p" and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.found[-1] += data


CHAPTER = re.compile(r'--- Chapter (\d+)(?: ".*")? \((.*)\)(?:, outside the reading order)? ---')


def chapters_read(lines: list[str]) -> dict[int, tuple[str, str]]:
    chapters: dict[int, tuple[str, list[str]]] = {}
    current = None
    for line in lines:
        if match := CHAPTER.fullmatch(line):
            current = int(match[1])
            assert current not in chapters, f"chapter {current} shown twice"
            chapters[current] = (match[2], [])
        elif current is not None:
            chapters[current][1].append(line)
    return {n: (name, squeezed("".join(text))) for n, (name, text) in chapters.items()}


def test_every_chapter_in_reading_order_with_its_paragraphs(rpc):
    path = guide()
    expected = spine(path)
    read = chapters_read(follow_lines(rpc, {"path": str(path)}))
    assert [read[n][0] for n in sorted(read)] == [name for name, _ in expected]
    for number, (name, texts) in enumerate(expected, 1):
        missing = [t for t in texts if t not in read[number][1]]
        assert missing == [], f"chapter {number} ({name})"


@pytest.mark.parametrize("size", SIZES[1:])
def test_a_chapter_at_a_smaller_reply_size(rpc, size):
    path = guide()
    name, texts = spine(path)[2]
    read = chapters_read(follow_lines(rpc, {"path": str(path), "pages": "3", "maxBytes": size}))
    assert list(read) == [3] and read[3][0] == name
    assert [t for t in texts if t not in read[3][1]] == []


def test_the_outline_is_the_table_of_contents_with_its_chapters(rpc):
    path = guide()
    names = [name for name, _ in spine(path)]
    entries = [line for result in follow(rpc, {"path": str(path), "outline": True})
               for line in body(result).split("\n")[1:] if "→" in line]
    assert entries[0] == 'Ubuntu Packaging Guide  (chapter 1)  → pages="1"'
    gpg = next(e for e in entries if e.strip().startswith("Create your GPG key"))
    number = int(re.search(r'pages="(\d+)"', gpg)[1])
    assert names[number - 1].endswith("getting-set-up.xhtml")


def test_a_book_is_the_same_in_every_front_end(rpc):
    path = guide()
    same_in_every_front_end(rpc, chain(rpc, {"path": str(path), "pages": "2-3"})[:3], cli_reads=1)


def manual():
    if not MANUAL.is_file():
        pytest.skip(f"{MANUAL} is absent: run ./scripts/fetch-thirdparty")
    return MANUAL


def test_a_book_whose_manifest_names_files_by_a_fragment_is_read(rpc):
    """The live manual's manifest lists items by href with a fragment (about-manual.xhtml#o8),
    which ebooklib takes for files the zip lacks: the book is read all the same, each file once,
    every chapter in reading order with its paragraphs' text."""
    expected = spine(manual())
    read = chapters_read(follow_lines(rpc, {"path": str(MANUAL)}))
    assert [read[n][0] for n in sorted(read)] == [name for name, _ in expected]
    for number, (name, texts) in enumerate(expected, 1):
        missing = [t for t in texts if t not in read[number][1]]
        assert missing == [], f"chapter {number} ({name})"


def test_the_outline_of_that_book_leads_to_its_chapters(rpc):
    names = [name for name, _ in spine(manual())]
    entries = [line for result in follow(rpc, {"path": str(MANUAL), "outline": True})
               for line in body(result).split("\n")[1:]]
    assert all("→" in entry for entry in entries)
    terms = next(e for e in entries if e.strip().startswith("1.2 Terms"))
    assert names[int(re.search(r'pages="(\d+)"', terms)[1]) - 1] == "about-manual.xhtml" and "#o12" in terms


def test_a_long_odt_and_its_headings_outlined_at_their_lines(rpc):
    """odfpy's API manual (3,000 lines, nearly 600 headings): every paragraph read, and every
    heading odfpy finds listed in the outline, in order, its read showing that heading's line."""
    path = THIRDPARTY / "odfpy-1.4.1" / "odfpy-1.4.1" / "api-for-odfpy.odt"
    if not path.is_file():
        pytest.skip(f"{path} is absent: run ./scripts/fetch-thirdparty")
    lines = follow_lines(rpc, {"path": str(path)})
    check_odf(path, lines)
    headings = [flat(teletype.extractText(h)) for h in load(str(path)).body.getElementsByType(odf_text.H)]
    entry = re.compile(r" *(#+) (.*?)  \(lines? ([\d,]+)(?:-[\d,]+)?\)  → offset=(\d+) limit=\d+")
    listed = [entry.fullmatch(line) for result in follow(rpc, {"path": str(path), "outline": True})
              for line in body(result).split("\n")[1:] if "→" in line]
    assert [m[2] for m in listed] == [h for h in headings if h]
    for match in listed:
        assert lines[int(match[4]) - 1] == f"{match[1]} {match[2]}"
