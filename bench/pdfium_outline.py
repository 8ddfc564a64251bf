"""The PDFium calls a PDF outline makes, alone in a Python process: open the file, load its page
tree, walk the bookmarks with their titles and pages, read the page labels. What any Python reader
of an outline on PDFium pays at least; bench/run.py times it beside the command line's outline.

    python bench/pdfium_outline.py FILE.pdf
"""

import ctypes
import sys

import pypdfium2.raw as raw

# As the engine loads the page tree: a page's size every thousand pages loads the pages before it.
PAGES_PER_CALL = 1000


def main(path: str) -> None:
    doc = raw.FPDF_LoadDocument(path.encode(), None)
    pages = raw.FPDF_GetPageCount(doc)
    size = raw.FS_SIZEF()
    for index in [*range(PAGES_PER_CALL - 1, pages - 1, PAGES_PER_CALL), pages - 1]:
        raw.FPDF_GetPageSizeByIndexF(doc, index, size)
    buffer = ctypes.create_string_buffer(1024)
    lines = []
    pending = [(raw.FPDFBookmark_GetFirstChild(doc, None), 0)]
    while pending:
        mark, level = pending.pop()
        if not mark:
            continue
        pending += [(raw.FPDFBookmark_GetNextSibling(doc, mark), level), (raw.FPDFBookmark_GetFirstChild(doc, mark),
                                                                          level + 1)]
        length = raw.FPDFBookmark_GetTitle(mark, buffer, len(buffer))
        dest = raw.FPDFBookmark_GetDest(doc, mark)
        page = raw.FPDFDest_GetDestPageIndex(doc, dest) + 1 if dest else 0
        lines.append(f"{'  ' * level}{buffer.raw[:max(length - 2, 0)].decode('utf-16-le', 'replace')} {page}")
    for index in range(pages):
        raw.FPDF_GetPageLabel(doc, index, buffer, len(buffer))
    raw.FPDF_CloseDocument(doc)
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])  # pypdfium2's import has started PDFium
