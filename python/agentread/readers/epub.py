"""EPUB: the book's chapters in reading order (its spine), each as the text a browser shows.

    --- Chapter 3 "Getting Set Up" (text/getting-set-up.xhtml) ---
    Getting Set Up                   (the chapter's XHTML laid out by inscriptis: headings, lists,
    * Install basic packaging software    tables as columns)
    [image 2: _images/cycle.png "the release cycle", image/png 640x480, attached]

`pages` picks chapters as it picks slides ("3", "2-5", "4-"), numbered in reading order; the
outline is the book's table of contents (its navigation document, else its NCX), each entry with
the chapter that holds it. ebooklib opens the package and its items; lxml and inscriptis lay out
each chapter read. A package whose manifest names files the zip lacks (an item named by a fragment,
`about-manual.xhtml#o8`, which ebooklib reads as a file name) is mended before ebooklib opens it.
"""

from __future__ import annotations

import io
import posixpath
import warnings
import zipfile
from contextlib import contextmanager
from typing import Iterator
from urllib.parse import unquote

from agentread.find import Hit, Matcher, Reached, hits_in
from agentread.outline import Entry, outline_result
from agentread.readers import Source
from agentread.readers.office.document import Rendered, select_sections
from agentread.readers.zipped import check_package, parsing, section_units, sections_result
from agentread.request import ReadRequest
from agentread.result import ReadError, ReadResult

WHAT = "EPUB book"

# Chapters (spine items) in a book. A long book splits into hundreds of files, a Bible into a
# chapter a file; a spine of tens of thousands is made to stall a read.
MAX_CHAPTERS = 5000

# Marks an image's place in a chapter's markup until its text is laid out: a private-use character
# no book's text holds around a number.
_MARK = "\ue000"


def read(source: Source, request: ReadRequest) -> ReadResult:
    with _parsing(source) as (book, chapters):
        out, first, last = _render(book, chapters, request)
        return sections_result(out, request, source.path, "document", first, last, len(chapters), "chapters")


def search(source: Source, request: ReadRequest, matcher: Matcher) -> tuple[str, Iterator[Hit | Reached]]:
    """The chapters asked for, each one's lines numbered as a read of that chapter numbers them."""
    with _parsing(source) as (book, chapters):
        out, first, last = _render(book, chapters, request)
    return "document", hits_in(section_units(out, first, last, request.offset or 1, "chapter"), matcher,
                               request.column or 1)


def outline(source: Source, request: ReadRequest) -> ReadResult:
    """The table of contents, nested, each entry read by its chapter; a book without one lists its
    chapters by file."""
    with _parsing(source) as (book, chapters):
        entries = [_toc_entry(*found) for found in _contents(book, chapters)]
    if entries:
        header = (f"[Outline of {source.path}: its table of contents, {len(entries):,} entr"
                  f"{'y' if len(entries) == 1 else 'ies'}, in {len(chapters):,} chapters (pages counts chapters "
                  "in reading order). Read one with the arguments after \"→\".]")
    else:
        entries = [Entry(0, item.get_name(), f"chapter {number}", {"pages": str(number)})
                   for number, (item, _) in enumerate(chapters, 1)]
        header = (f"[{source.path} has no table of contents: its {len(chapters):,} chapters in reading order, by "
                  "file. Read one with the arguments after \"→\".]")
    return outline_result(entries, request, source.path, "document", header, total_pages=len(chapters))


@contextmanager
def _parsing(source: Source) -> Iterator[tuple[object, list]]:
    """The book and its chapters in reading order, as (item, linear), the package checked first; a
    failure of ebooklib, or of laying out a chapter, is the book's damage."""
    data = source.whole()
    check_package(data, source.name, WHAT, "damaged_epub")
    with parsing(source.name, WHAT, "damaged_epub"):
        book = _opened(data)
        chapters = [(item, linear != "no") for item, linear in
                    ((book.get_item_with_id(idref), linear) for idref, linear in book.spine) if item is not None]
        if len(chapters) > MAX_CHAPTERS:
            raise ReadError("too_complex", f"{source.name} lists {len(chapters):,} chapters, over the limit of "
                            f"{MAX_CHAPTERS:,} a book. It cannot be read; ask the user for an export of the part "
                            "you need.")
        yield book, chapters


def _opened(data: bytes):
    """The book as ebooklib opens it; one whose manifest names a file the zip lacks, as opened with
    that manifest mended (_mended)."""
    from ebooklib import epub

    with warnings.catch_warnings():  # ebooklib warns of its own future defaults
        warnings.simplefilter("ignore")
        try:
            return epub.read_epub(io.BytesIO(data), options={"ignore_ncx": False})
        except KeyError:  # zipfile's: the manifest names a member the zip lacks
            mended = _mended(data)
            if mended is None:
                raise
            return epub.read_epub(io.BytesIO(mended), options={"ignore_ncx": False})


def _mended(data: bytes) -> bytes | None:
    """The book's zip with its manifest naming only files it holds: an item named by a fragment
    (`about-manual.xhtml#o8`) is its file's, left out where another item names that file (the
    spine's reference to it is then skipped: the file is read once, where it first stands); an item
    naming no file of the zip is left out (a chapter the spine then skips, an image shown as not in
    the book). None where the manifest names every file it lists."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True)  # the book's XML expands nothing
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = set(archive.namelist())
        container = etree.fromstring(archive.read("META-INF/container.xml"), parser)
        rootfile = container.find(".//{*}rootfile[@full-path]")
        if rootfile is None:
            return None
        package_name = rootfile.get("full-path")
        package = etree.fromstring(archive.read(package_name), parser)
        folder = posixpath.dirname(package_name)
        named, changed = set(), False
        for item in list(package.iterfind("{*}manifest/{*}item")):
            href, fragment, _ = (item.get("href") or "").partition("#")
            member = posixpath.normpath(posixpath.join(folder, unquote(href)))
            if member not in members or (fragment and member in named):
                item.getparent().remove(item)
                changed = True
            elif fragment:
                item.set("href", href)
                changed = True
            named.add(member)
        if not changed:
            return None
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as mended:  # stored: it is read once, in memory
            for info in archive.infolist():
                content = etree.tostring(package, xml_declaration=True, encoding="utf-8") \
                    if info.filename == package_name else archive.read(info)
                mended.writestr(info.filename, content)
    return out.getvalue()


def _toc(toc, level: int = 0) -> Iterator[tuple[int, str, str]]:
    """(level, title, href) of each table of contents entry, in order. A section that only groups
    its entries (no href of its own, or the same as its first entry's) is one entry."""
    for node in toc:
        if isinstance(node, tuple):
            section, children = node
            first = children[0] if children and not isinstance(children[0], tuple) else None
            if first is not None and first.href == section.href:
                yield level, section.title, section.href
                children = children[1:]
            else:
                yield level, section.title, getattr(section, "href", "") or ""
            yield from _toc(children, level + 1)
        else:
            yield level, node.title, node.href


def _contents(book, chapters: list) -> list[tuple[int, str, str, int | None]]:
    """The table of contents as (level, title, href, the chapter it is in or None). A href is the
    book's path of a chapter; failing that (some books write them relative to another folder), the
    path in the folder of the entry before, then the one chapter whose path ends in it."""
    numbers = {item.get_name(): number for number, (item, _) in enumerate(chapters, 1)}
    found: list[tuple[int, str, str, int | None]] = []
    folder = ""
    for level, title, href in _toc(book.toc):
        path = unquote((href or "").partition("#")[0])
        number = numbers.get(path) or numbers.get(posixpath.join(folder, path))
        if number is None:
            ending = [n for name, n in numbers.items() if name.endswith("/" + path)]
            number = ending[0] if len(ending) == 1 else None
        if number is not None:
            folder = posixpath.dirname(chapters[number - 1][0].get_name())
        found.append((level, " ".join((title or "").split()), href or "", number))
    return found


def _toc_entry(level: int, title: str, href: str, number: int | None) -> Entry:
    fragment = href.partition("#")[2]
    title = title or "(untitled)"
    if number is None:
        return Entry(level, title, f"{href}, not a chapter of the book" if href else "no link", {})
    return Entry(level, title, f"chapter {number}" + (f", #{fragment}" if fragment else ""), {"pages": str(number)})


def _render(book, chapters: list, request: ReadRequest) -> tuple[Rendered, int, int]:
    first, last = select_sections(request.pages, len(chapters), "chapter")
    titles: dict[int, str] = {}
    for _, title, _, number in _contents(book, chapters):
        if number is not None and title:
            titles.setdefault(number, title)
    out = Rendered()
    for number in range(first, last + 1):
        item, linear = chapters[number - 1]
        name = item.get_name()
        title = titles.get(number, "")
        if out.lines:
            out.add("")
        out.open_section(number)
        named = f' "{title}"' if title else ""
        out.add(f"--- Chapter {number}{named} ({name}){'' if linear else ', outside the reading order'} ---")
        _chapter(out, book, item)
    return out, first, last


def _chapter(out: Rendered, book, item) -> None:
    """A chapter's text as a browser lays it out, its images named on lines of their own."""
    import lxml.html

    from agentread.readers.htmllayout import text_of_html

    content = item.get_content()
    if not content.strip():
        return
    tree = lxml.html.document_fromstring(content)
    images: list[tuple[str, str]] = []  # (path in the book, label)
    for element in list(tree.iter("img", "image")):
        src = element.get("src") or element.get("{http://www.w3.org/1999/xlink}href") or element.get("xlink:href") \
            or element.get("href") or ""
        alt = " ".join((element.get("alt") or "").split())
        path = posixpath.normpath(posixpath.join(posixpath.dirname(item.get_name()), unquote(src.partition("#")[0])))
        images.append((path, path + (f' "{alt}"' if alt else "")))
        mark = lxml.html.Element("div")
        mark.text = f"{_MARK}{len(images) - 1}{_MARK}"
        mark.tail = element.tail
        element.getparent().replace(element, mark)
    text = text_of_html(tree)
    blank = True
    for line in text.split("\n"):
        line = line.rstrip()
        stripped = line.strip()
        if stripped.startswith(_MARK) and stripped.endswith(_MARK) and stripped[1:-1].isdigit():
            path, label = images[int(stripped[1:-1])]
            image = book.get_item_with_href(path)
            if image is None:
                out.add(f"[image: {label}, not in the book]")
            else:
                out.add_image(label, image.get_content)
            blank = False
        elif stripped or not blank:  # blank runs kept to one blank line
            if _MARK in line:  # an image laid out within a line (in a table cell, say)
                for number, (_, label) in enumerate(images):
                    line = line.replace(f"{_MARK}{number}{_MARK}", f"[image: {label}]")
            out.add(line)
            blank = not stripped
