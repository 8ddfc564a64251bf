"""A PDF's outline: its bookmarks (the document's own table of contents) with their pages and
nesting, and its page labels (the numbers the viewer shows, such as roman front matter).

PDFium is the authority: it already holds the document the reads page through (the same cached
document, so an outline then a read parses the file once), it resolves each bookmark's destination
(named destinations included) to a page as the viewer does, and it lists a 2,000-page manual's
1,400 bookmarks in milliseconds, where pypdf must first read the whole file. pypdf answers for the
files only it opens, with its public outline and page-label API.
"""

from __future__ import annotations

import logging
from typing import BinaryIO, Callable, Iterator

from agentread.limits import MAX_PDF_PAGES
from agentread.numbering import amount, counted, label_span, span
from agentread.outline import Entry, outline_result, section_ends
from agentread.readers import Source
from agentread.readers.pdf import DOCUMENTS, MAX_PAGES_WALKED, _Document, _Pdfium
from agentread.request import ReadRequest
from agentread.result import ReadResult

log = logging.getLogger(__name__)

# Bookmarks nest at most this deep (deeper ones are not listed): real documents nest a handful of
# levels, and a hostile outline could nest without end.
MAX_OUTLINE_DEPTH = 16

# Bookmarks listed at most: a real outline has a few thousand at most, a hostile one could chain
# millions.
MAX_BOOKMARKS = 100_000

# Runs of page labels named in the outline's header (pages 1-30 labelled i-xxx, ...): a document has
# a few; one labelling each page its own way would otherwise fill the reply.
MAX_LABEL_RUNS = 12

Bookmark = tuple[int, str, "int | None"]  # (level, title, 1-based page or None)


def outline(source: Source, request: ReadRequest) -> ReadResult:
    """The reader seam's PDF outline."""
    return pdf_outline(source.stream, request, source.path, source.name, source.cache_key, whole=source.whole)


def pdf_outline(stream: BinaryIO, request: ReadRequest, path: str, name: str, cache_key: tuple,
                whole: Callable[[], bytes] | None = None) -> ReadResult:
    doc = DOCUMENTS.get(cache_key, stream, path, whole)
    with doc.lock:
        if doc.outline is None:  # listed once a document: paging through its outline lists it again
            labels = doc.labels()
            doc.outline = [_entries(list(_bookmarks(doc)), labels, doc.total), _label_runs(labels)]
        entries, runs = doc.outline
    total = doc.total
    pages = amount(total, "page")
    labelled = f" Page labels (the numbers the document prints): {runs}." if runs else ""
    if total == 0:
        header = f"[{name} has no pages: there is nothing to outline or read.]"
    elif not entries:
        first = span(1, min(total, MAX_PDF_PAGES))
        header = (f"[{name} has no bookmarks (no table of contents of its own); it has {pages}.{labelled} "
                  f"Read it with pages=\"{first}\", or look for a contents page among the first.]")
    else:
        header = (f"[Outline of {name}: {amount(len(entries), 'bookmark')} in {pages}.{labelled} Each entry runs "
                  "to the page where the next at its level begins; read one with the arguments after \"→\".]")
    return outline_result(entries, request, path, "pdf", header, total_pages=total)


def _bookmarks(doc: _Document) -> Iterator[Bookmark]:
    if isinstance(doc.backend, _Pdfium):
        yield from doc.backend.pdf.bookmarks(MAX_OUTLINE_DEPTH, MAX_BOOKMARKS, MAX_PAGES_WALKED)
    else:
        yield from _pypdf_bookmarks(doc.backend.reader)


def _pypdf_bookmarks(reader) -> Iterator[Bookmark]:
    count = 0

    def walk(items, level: int) -> Iterator[Bookmark]:
        nonlocal count
        for item in items:
            if isinstance(item, list):
                if level + 1 < MAX_OUTLINE_DEPTH:
                    yield from walk(item, level + 1)
                continue
            count += 1
            if count > MAX_BOOKMARKS:
                return
            try:
                index = reader.get_destination_page_number(item)
            except Exception:  # noqa: BLE001 - a destination pypdf cannot resolve: listed without a page
                index = None
            yield level, str(item.title or ""), None if index is None or index < 0 else index + 1

    try:
        yield from walk(reader.outline, 0)
    except Exception as exc:  # noqa: BLE001 - a damaged outline: the bookmarks read so far stand
        log.warning("the PDF's outline could not be read whole: %s", exc)


def _entries(marks: list[Bookmark], labels: list[str], total: int) -> list[Entry]:
    """An entry per bookmark, spanning its page to the page where the next bookmark at its level
    or higher begins (that page may hold its end)."""
    entries: list[Entry] = []
    ends = section_ends([(level, page) for level, _, page in marks], total, shared=True)
    for (level, title, page), last in zip(marks, ends):
        if page is None:
            entries.append(Entry(level, title, "no page: its destination is not in the document", {}))
            continue
        label = labels[page - 1] if labels and labels[page - 1] and labels[page - 1] != str(page) else ""
        where = counted("page", page, last) + (f", labelled {label}" if label else "")
        entries.append(Entry(level, title, where, {"pages": span(page, last)}))
    return entries


def _label_runs(labels: list[str]) -> str:
    """Consecutive pages whose labels are of one style, in words: pages 1-30 labelled i-xxx, ..."""
    if not labels:
        return ""
    runs: list[tuple[int, int]] = []
    for number, label in enumerate(labels, 1):
        if runs and _style(label) == _style(labels[runs[-1][0] - 1]):
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    words = []
    for a, b in runs[:MAX_LABEL_RUNS]:
        first, last = labels[a - 1] or "(none)", labels[b - 1] or "(none)"
        words.append(f"{counted('page', a, b)} labelled {first if a == b else label_span(first, last)}")
    if len(runs) > MAX_LABEL_RUNS:
        words.append(f"and {len(runs) - MAX_LABEL_RUNS:,} more runs")
    return "; ".join(words)


def _style(label: str) -> str:
    if label.isdigit():
        return "arabic"
    if label and set(label) <= set("ivxlcdm"):
        return "roman"
    if label and set(label) <= set("IVXLCDM"):
        return "ROMAN"
    return "other:" + label.rstrip("0123456789")
