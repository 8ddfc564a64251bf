"""agentread.pdfium, the engine's few PDFium calls, against pypdfium2's own Python layer on the same library:
the text of every page of the corpus's PDFs, which documents open, and closing from the garbage collector.
(Rendering is held to pypdfium2's in test_pdfpages.)"""

from __future__ import annotations

import gc
import os
import threading

import pytest

from agentread import pdfium

# Pages compared per document: the corpus's PDFs are short, and a few pages cover each one's fonts and layout.
PAGES_COMPARED = 20

# How long closing a document may take before it counts as a deadlock: only a thread that waits forever takes this
# long.
DEADLOCKED_AFTER = 60


def test_each_corpus_page_reads_as_pypdfium2_reads_it(corpus):
    import pypdfium2

    compared = 0
    for path in sorted((corpus / "pdf").glob("*.pdf")):
        data = path.read_bytes()
        try:
            theirs = pypdfium2.PdfDocument(data)
        except pypdfium2.PdfiumError:
            with pytest.raises(pdfium.PdfiumError):
                pdfium.Document(data)
            continue
        with open(path, "rb") as f:
            from_file = pdfium.Document(fd=f.fileno())  # read as its pages need it, from a copy of the descriptor
        for ours in (pdfium.Document(data), from_file):
            assert ours.page_count == len(theirs), path.name
            for number in range(1, min(ours.page_count, PAGES_COMPARED) + 1):
                with pdfium.LOCK, ours.page(number) as page:
                    text = page.text()
                    assert page.size == pytest.approx(theirs[number - 1].get_size()), (path.name, number)
                assert text == theirs[number - 1].get_textpage().get_text_range(), (path.name, number)
                compared += 1
            with pdfium.LOCK:
                ours.close()
        theirs.close()
    assert compared > 30


def test_a_file_cut_short_under_an_open_document_fails_its_pages_not_the_process(tmp_path):
    """PDFium reads a file as its pages need it: one truncated meanwhile (a build rewriting its PDF) makes those
    reads fail, and PDFium's pages with them (the block reads themselves: the test of whole blocks below)."""
    from test_pdf import build_pdf

    path = tmp_path / "cut.pdf"
    path.write_bytes(build_pdf([f"page {n} " + "words " * 20_000 for n in range(1, 5)]))  # 120 KB a page
    with open(path, "rb") as f:
        document = pdfium.Document(fd=f.fileno())
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size // 3)
    outcomes = []
    with pdfium.LOCK:
        for number in range(1, document.page_count + 1):
            try:
                with document.page(number) as page:
                    outcomes.append(page.text())
            except pdfium.PdfiumError as exc:
                outcomes.append(exc)
        document.close()
    assert len(outcomes) == 4 and any(isinstance(o, pdfium.PdfiumError) or not o for o in outcomes)


def test_what_is_not_a_pdf_is_refused_with_the_reason():
    with pytest.raises(pdfium.PdfiumError, match="not a PDF, or damaged"):
        pdfium.Document(b"%PDF-1.4\nnothing here")


def test_a_document_dropped_by_a_thread_holding_the_lock_closes_without_deadlock(corpus):
    """The garbage collector may close a document in a thread in the middle of its own PDFium calls."""
    data = (corpus / "pdf" / "pdflatex-4-pages.pdf").read_bytes()

    closed = []

    def drop_under_lock():
        with pdfium.LOCK:
            document = pdfium.Document(data)
            with document.page(1):
                pass
            closer = document._close
            del document
            gc.collect()
            closed.append(not closer.alive)

    worker = threading.Thread(target=drop_under_lock, daemon=True)
    worker.start()
    worker.join(timeout=DEADLOCKED_AFTER)
    assert not worker.is_alive(), "closing a dropped document waited for the lock its own thread held"
    assert closed == [True]


def test_a_closed_document_refuses_its_pages(corpus):
    document = pdfium.Document((corpus / "pdf" / "pdflatex-4-pages.pdf").read_bytes())
    with pdfium.LOCK:
        document.close()
        document.close()
        with pytest.raises(pdfium.PdfiumError, match="closed"):
            document.page(1)


def test_without_the_library_a_pdf_is_read_by_pypdf(corpus, monkeypatch):
    """No PDFium to load (a pypdfium2 built without its own, none on the system): PDFs are still read."""
    import ctypes
    import ctypes.util
    import importlib.util

    from agentread.engine import Engine
    from agentread.request import parse_request
    from agentread.workspace import Workspace

    monkeypatch.setattr(pdfium, "_C", None)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    monkeypatch.setattr(ctypes, "CDLL", _no_such_library)  # by its name alone it would be found, loaded already
    with pytest.raises(pdfium.PdfiumError, match="cannot be loaded"):
        pdfium.Document(b"%PDF-1.4")
    result = Engine(Workspace([str(corpus)])).read(parse_request({"path": "pdf/pdflatex-4-pages.pdf", "pages": "2"}))
    assert not result.is_error and result.total_pages == 4 and "--- Page 2 ---\n" in result.text()


def _no_such_library(name, *args, **kwargs):
    raise OSError(f"{name}: cannot open shared object file: No such file or directory")


def test_a_block_is_given_to_pdfium_only_whole_and_only_while_its_read_runs(tmp_path):
    """What PDFium is told when it asks for a block of the file (1: here it is; 0: a read error)."""
    import ctypes
    import threading

    from agentread.cancel import run_cancellable

    path = tmp_path / "blocks.bin"
    path.write_bytes(bytes(range(256)) * 4)
    with open(path, "rb") as f:
        reader = pdfium._FileReader(f.fileno())
    buffer = (ctypes.c_ubyte * 300)()
    assert reader._get_block(None, 1000, buffer, 24) == 1 and bytes(buffer[:24]) == bytes(range(232, 256))
    buffer[:] = bytes(300)
    assert reader._get_block(None, 1000, buffer, 100) == 0, "past the end: the file was cut short"
    assert bytes(buffer) == bytes(300), "nothing written for a block not read whole"
    stop = threading.Event()
    stop.set()
    assert run_cancellable(stop, reader._get_block, None, 0, buffer, 10) == 0, "the read was cancelled"
    assert reader.bytes_read == 24
    os.close(reader.fd)


def test_where_files_cannot_be_read_from_a_pdf_is_read_from_memory(corpus, tmp_path, monkeypatch):
    """Without pread (Windows), a document read from its file would hold it open, and there undeletable."""
    from agentread import pdf
    from agentread.engine import Engine
    from agentread.request import parse_request
    from agentread.workspace import Workspace

    monkeypatch.setattr(pdfium, "READS_FROM_FILES", False)
    data = (corpus / "pdf" / "pdflatex-4-pages.pdf").read_bytes()
    (tmp_path / "memory.pdf").write_bytes(data)
    result = Engine(Workspace([str(tmp_path)])).read(parse_request({"path": "memory.pdf", "pages": "2"}))
    assert not result.is_error and "--- Page 2 ---\n" in result.text()
    doc = next(d for key, d in pdf.DOCUMENTS._docs.items() if key[0] == str((tmp_path / "memory.pdf").resolve()))
    assert doc.backend.pdf.source == data and doc.size == len(data)
