"""agentread.readers.pdf.pdfium, the engine's PDFium calls through pypdfium2, against pypdfium2's
own text extraction: the text of every page of the corpus's PDFs, which documents open and why not,
closing from the garbage collector, and every pypdfium2 helper closed under the lock. (Rendering is
held to pypdfium2's in test_pdfpages.)"""

from __future__ import annotations

import ctypes
import gc
import threading

import pytest

from agentread.readers.pdf import pdfium

# Pages compared per document: the corpus's PDFs are short, and a few pages cover each one's
# fonts and layout.
PAGES_COMPARED = 20

# How long closing a document may take before it counts as a deadlock: only a thread that waits
# forever takes this long.
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
                textpage = theirs[number - 1].get_textpage()
                assert text == textpage.get_text_range(0, textpage.count_chars()), (path.name, number)
                compared += 1
            with pdfium.LOCK:
                ours.close()
        theirs.close()
    assert compared > 30


def test_a_file_cut_short_under_an_open_document_fails_its_pages_not_the_process(tmp_path):
    """PDFium reads a file as its pages need it: one truncated meanwhile (a build rewriting its PDF)
    makes those reads fail, and PDFium's pages with them (the block reads themselves: the test of
    whole blocks below)."""
    from builders import build_pdf

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
    """The garbage collector may close a document in a thread in the middle of its own
    PDFium calls."""
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
    """No PDFium to load (pypdfium2 missing, or its library failing to load): PDFs
    are still read."""
    import sys

    from agentread.engine import Engine
    from agentread.request import parse_request
    from agentread.workspace import Workspace

    monkeypatch.setattr(pdfium, "_PYPDFIUM2", None)
    monkeypatch.setitem(sys.modules, "pypdfium2", None)  # its import then fails, as a missing package's does
    with pytest.raises(pdfium.PdfiumError, match="cannot be loaded"):
        pdfium.Document(b"%PDF-1.4")
    result = Engine(Workspace([str(corpus)])).read(parse_request({"path": "pdf/pdflatex-4-pages.pdf", "pages": "2"}))
    assert not result.is_error and result.total_pages == 4 and "--- Page 2 ---\n" in result.text()


def test_a_block_is_given_to_pdfium_only_whole_and_only_while_its_read_runs(tmp_path):
    """What PDFium is told when it asks for a block of the file (1: here it is; 0: a read error)."""
    from agentread.cancel import run_cancellable

    path = tmp_path / "blocks.bin"
    path.write_bytes(bytes(range(256)) * 4)
    with open(path, "rb") as f, pdfium.LOCK:
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
    reader.close()


def test_where_files_cannot_be_read_from_a_pdf_is_read_from_memory(corpus, tmp_path, monkeypatch):
    """Without pread (Windows), a document read from its file would hold it open, and there
    undeletable."""
    from agentread.engine import Engine
    from agentread.readers import pdf
    from agentread.request import parse_request
    from agentread.workspace import Workspace

    monkeypatch.setattr(pdfium, "READS_FROM_FILES", False)
    data = (corpus / "pdf" / "pdflatex-4-pages.pdf").read_bytes()
    (tmp_path / "memory.pdf").write_bytes(data)
    result = Engine(Workspace([str(tmp_path)])).read(parse_request({"path": "memory.pdf", "pages": "2"}))
    assert not result.is_error and "--- Page 2 ---\n" in result.text()
    doc = next(d for key, d in pdf.DOCUMENTS._docs.items() if key[0] == str((tmp_path / "memory.pdf").resolve()))
    assert doc.backend.pdf.source == data and doc.size == len(data)


def test_an_encrypted_pdf_is_refused_saying_it_needs_a_password(tmp_path):
    from pypdf import PdfReader, PdfWriter

    from builders import build_pdf

    (tmp_path / "plain.pdf").write_bytes(build_pdf(["secret words"]))
    writer = PdfWriter(clone_from=PdfReader(tmp_path / "plain.pdf"))
    writer.encrypt(user_password="hunter2", owner_password="owner-pw", algorithm="RC4-128")
    with open(tmp_path / "locked.pdf", "wb") as f:
        writer.write(f)
    with pytest.raises(pdfium.PdfiumError, match="it needs a password"):
        pdfium.Document((tmp_path / "locked.pdf").read_bytes())


# What pypdfium2's helpers call to close what they hold: each must run under LOCK,
# whoever closes it.
CLOSERS = ("FPDF_CloseDocument", "FPDF_ClosePage", "FPDFText_ClosePage", "FPDFBitmap_Destroy")


def test_every_pypdfium2_helper_is_closed_under_the_lock(corpus, monkeypatch):
    """Closed by the reader, by its document, or by the garbage collector dropping the reader's
    wrapper: never by pypdfium2's own finalizers alone, which take no lock."""
    with pdfium.LOCK:
        raw = pdfium.library().raw
    closed = []

    def watched(name):
        close = getattr(raw, name)

        def closing(handle):
            closed.append((name, _held_by_another_thread()))
            return close(handle)
        return closing

    for name in CLOSERS:
        monkeypatch.setattr(raw, name, watched(name))  # before any helper is made: some keep their closer
    path = corpus / "pdf" / "pdflatex-4-pages.pdf"
    with pdfium.LOCK:
        document = pdfium.Document(path.read_bytes())
        with document.page(1) as page:
            assert page.text() and page.render(0.25).size == (149, 211)  # A4 in points, a quarter of it
        document.page(2)  # left open: the document closes it
        document.close()
    with open(path, "rb") as f, pdfium.LOCK:
        document = pdfium.Document(fd=f.fileno())
        page = document.page(3)
        assert page.text()
    del page  # dropped unclosed, outside the lock
    gc.collect()
    del document
    gc.collect()
    # pypdfium2 before 5.0 never destroys a bitmap drawn into a buffer of its own (only its
    # pixels are freed).
    assert {name for name, _ in closed} >= set(CLOSERS) - {"FPDFBitmap_Destroy"}
    assert all(held for _, held in closed), closed
    assert [name for name, _ in closed].count("FPDF_CloseDocument") == 2


def _held_by_another_thread() -> bool:
    """Whether LOCK is held (here: by the thread asking), so that another thread cannot take it."""
    taken = []

    def try_to_take():
        if pdfium.LOCK.acquire(blocking=False):
            pdfium.LOCK.release()
            taken.append(True)

    other = threading.Thread(target=try_to_take)
    other.start()
    other.join()
    return not taken


def test_no_pdfium_function_is_declared_by_hand():
    """PDFium's signatures are pypdfium2's, generated from PDFium's headers: a wrong one is
    a memory bug. (The compiled walk's calls are checked against them: the test below.)"""
    import re
    from pathlib import Path

    import agentread

    for path in Path(agentread.__file__).parent.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\bFPDF\w*\.(argtypes|restype)\s*=|libpdfium|pdfium\.dll|\bpypdfium2_raw\b", text), path
        if "pdf" in path.parts or path.name.startswith("pdf"):  # nor a structure or callback type of PDFium's
            assert not re.search(r"\.(argtypes|restype)\s*=(?!=)|\b(CDLL|CFUNCTYPE|Structure)\b", text), path


@pytest.mark.parametrize(("name", "arguments"), [
    ("FPDFFormObj_GetObject", lambda real: (real.argtypes[0], ctypes.c_int)),  # an index of int, not unsigned long
    ("FPDFPathSegment_GetPoint", lambda real: (real.argtypes[0], *(ctypes.POINTER(ctypes.c_double),) * 2)),
])
def test_the_compiled_walks_are_not_used_where_a_signature_they_call_differs_from_pypdfium2s(monkeypatch, name,
                                                                                             arguments):
    """_scan.c calls PDFium's functions with the signatures PAGE_OBJECT_FUNCTIONS names: were
    pypdfium2's bindings (PDFium's headers) to say otherwise of one, the walks are made in
    Python."""
    import types

    with pdfium.LOCK:
        raw = pdfium.library().raw
        real = getattr(raw, name)
        other = ctypes.CFUNCTYPE(real.restype, *arguments(real))(ctypes.cast(real, ctypes.c_void_p).value)
        bindings = types.SimpleNamespace(**{name: getattr(raw, name) for name in dir(raw) if not name.startswith("__")})
        monkeypatch.setattr(pdfium, "_FUNCTIONS", None)
        assert pdfium._functions(bindings)  # the bindings as they are
        monkeypatch.setattr(pdfium, "_FUNCTIONS", None)
        setattr(bindings, name, other)
        assert pdfium._functions(bindings) is None


def test_the_object_walk_stops_at_a_cancelled_read(corpus):
    """A hostile page can hold millions of objects: the walk over them looks for a cancelled
    read as it goes."""
    from agentread.cancel import Cancelled, run_cancellable

    stop = threading.Event()
    stop.set()
    with pdfium.LOCK:
        document = pdfium.Document((corpus / "pdf" / "pdflatex-4-pages.pdf").read_bytes())
        with document.page(1) as page:
            assert list(page.objects())
            with pytest.raises(Cancelled):
                run_cancellable(stop, lambda: list(page.objects()))
        document.close()


def test_a_page_that_starts_and_ends_with_thousands_of_characters_left_out_of_its_text_reads():
    """NUL character codes of a font without a Unicode map are in PDFium's character list but not
    its text: the reader skips them in a loop (pypdfium2's get_text_range() recurses once a
    character, past Python's stack)."""
    from builders import pdf_of

    left_out = b"\\000" * 3000
    content = b"BT /F1 12 Tf 72 720 Td (" + left_out + b"AB" + left_out + b") Tj ET"
    data = pdf_of({
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        4: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R"
           b" /Resources << /Font << /F1 3 0 R >> >> >>",
        5: b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
    })
    with pdfium.LOCK:
        document = pdfium.Document(data)
        with document.page(1) as page:
            assert page.text() in ("AB", "\ufffe\ufffe")  # the PDFium of pypdfium2 4 gives both letters as U+FFFE
        document.close()


def test_documents_left_open_are_closed_quietly_at_exit(corpus):
    """pypdfium2 closes what is still open at exit, on stderr, and then tears PDFium down: the
    reader closes its documents first, under the lock (a process's document cache holds them open
    to the end)."""
    import subprocess
    import sys

    script = """
import sys, weakref
class Holder:
    pass
holder = Holder()
weakref.finalize(holder, print, "done")  # weakref's exit handler, registered before pypdfium2's is
from agentread.readers.pdf import pdfium
path = sys.argv[1]
kept = pdfium.Document(open(path, "rb").read())
page = kept.page(1)
with open(path, "rb") as f:
    from_file = pdfium.Document(fd=f.fileno())
"""
    done = subprocess.run([sys.executable, "-c", script, str(corpus / "pdf" / "pdflatex-4-pages.pdf")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "" and done.stdout == "done\n", done


# Pages of each document whose objects both walks describe: the first few, and the pages the
# figure set labels as showing figures (images, forms, drawings).
TABLE_PAGES = 3


def _table_pages(corpus) -> list[tuple[str, bytes, list[int]]]:
    """(name, PDF, page numbers) of real PDFs: the corpus's, and the figure set's third-party ones
    where fetched."""
    import json
    from pathlib import Path

    from shared_corpus import REPO

    found = [(path.name, path.read_bytes(), list(range(1, TABLE_PAGES + 1)))
             for path in sorted((corpus / "pdf").glob("*.pdf"))]
    labels = json.loads((Path(__file__).parents[1] / "data" / "figures" / "labels.json").read_text())
    for document in labels["documents"]:
        path = REPO / ".thirdparty" / document["path"]
        if document["root"] == "thirdparty" and path.is_file():
            found.append((path.name, path.read_bytes(), [*range(1, TABLE_PAGES + 1), *document["figures"]]))
    return found


def _columns(table: pdfium.PageObjects, handles: bool = True) -> list:
    """The table's columns as lists, NaN as None, to compare two tables."""
    def plain(values):
        return [None if value != value else value for value in values]

    return [bytes(table.kinds), list(table.handles) if handles else None, plain(table.boxes), list(table.modes),
            bytes(table.colours), bytes(table.coloured), plain(table.points), plain(table.starts), bytes(table.filled)]


def test_the_compiled_walk_describes_each_object_as_the_python_walk_does(corpus):
    """_scan.page_objects calls PDFium's functions in C; the walk in Python (used without a C
    compiler) calls them through pypdfium2's bindings: on real pages, text, pictures, drawings and
    forms, both give the same table, object by object."""
    from agentread import _scan

    with pdfium.LOCK:
        assert pdfium._compiled_page_objects is _scan.page_objects
        assert pdfium._functions(pdfium.library().raw), "pypdfium2's signatures differ from those _scan.c calls"
    kinds, pages = set(), 0
    for name, data, numbers in _table_pages(corpus):
        try:
            document = pdfium.Document(data)
        except pdfium.PdfiumError:
            continue
        with pdfium.LOCK:
            for number in sorted(set(numbers)):
                if number > document.page_count:
                    continue
                with document.page(number) as page:
                    compiled = page.objects_table(10**9)
                    in_python = page.objects_table(10**9, compiled=False)
                    assert not compiled.cut and not in_python.cut
                    assert _columns(compiled) == _columns(in_python), (name, number)
                    kinds |= set(compiled.kinds)
                    pages += 1
            document.close()
    with pdfium.LOCK:
        raw = pdfium.library().raw
        assert {raw.FPDF_PAGEOBJ_TEXT, raw.FPDF_PAGEOBJ_IMAGE, raw.FPDF_PAGEOBJ_PATH, raw.FPDF_PAGEOBJ_FORM} <= kinds
    assert pages > 50


@pytest.mark.parametrize("keep", [1, 7, 40])
def test_both_walks_shrink_the_objects_past_those_kept_alike(corpus, keep):
    """Past the first `keep` objects each is shrunk to nothing, and a form so shrunk is not entered:
    the page's text is then that of the objects kept, the same from either walk."""
    for name, data, numbers in _table_pages(corpus)[:12]:
        for number in numbers[:2]:
            seen = []
            for compiled in (True, False):
                with pdfium.LOCK:
                    try:
                        document = pdfium.Document(data)
                    except pdfium.PdfiumError:
                        break
                    if number <= document.page_count:
                        with document.page(number) as page:
                            table = page.objects_table(keep, compiled=compiled)
                            seen.append((table.cut, _columns(table, handles=False), page.text()))
                    document.close()
            if len(seen) == 2:
                assert seen[0] == seen[1], (name, number)
                assert len(seen[0][1][0]) <= keep


# Pages the comparisons of both walks of paths' segments must reach at least where .thirdparty is
# fetched: its manuals and vignettes hold some 3,700, with the corpus's.
MIN_THIRDPARTY_PAGES = 3000


def _every_pdf() -> dict[bytes, str]:
    """Every real PDF, the shared corpus's and those under .thirdparty, each once (a few are
    copies or links of others): name by content."""
    from shared_corpus import CORPUS, REPO

    found = {}
    for path in sorted(path for root in (CORPUS / "pdf", REPO / ".thirdparty") for path in root.rglob("*.pdf")):
        if path.is_file():
            found.setdefault(path.read_bytes(), str(path))
    return found


def _segments(segments, paths: list[int]) -> list:
    """Each path's segment count and segments, NaN as None, to compare two readings."""
    return [(segments.count(index), [tuple(None if value != value else value for value in segment)
                                     for segment in segments.of(index)]) for index in paths]


def _both_readings_of_paths(data: bytes) -> tuple[int, int, int]:
    """Compares, on each page of the PDF, the paths' segments _scan.path_segments reads with those
    read through pypdfium2's bindings, and the figures counted from each: (pages, paths,
    figures)."""
    from agentread.readers.pdf import figures

    pages = paths = counted = 0
    with pdfium.LOCK:
        try:
            document = pdfium.Document(data)
        except pdfium.PdfiumError:
            return 0, 0, 0
        path_kind = pdfium.library().raw.FPDF_PAGEOBJ_PATH
        for number in range(1, document.page_count + 1):
            try:
                page = document.page(number)
            except pdfium.PdfiumError:
                continue
            with page:
                table = page.objects_table(figures.MAX_FIGURE_OBJECTS)
                drawn = [index for index, kind in enumerate(table.kinds) if kind == path_kind]
                compiled = table.segments(drawn, figures.MAX_PATH_SEGMENTS)
                assert isinstance(compiled, pdfium.PathSegments)
                in_python = table.segments(drawn, figures.MAX_PATH_SEGMENTS, compiled=False)
                assert _segments(compiled, drawn) == _segments(in_python, drawn), number
                count = figures.count(table)
                assert count == figures.count(table, compiled=False), number
            pages, paths, counted = pages + 1, paths + len(drawn), counted + count
        document.close()
    return pages, paths, counted


def test_the_compiled_segments_of_every_real_page_are_those_read_in_python(corpus):
    """_scan.path_segments calls PDFium's functions in C, the figure rule's fallback calls them
    through pypdfium2's bindings: on every page of the real PDFs, each path's segments, and the
    figures counted from them, are the same."""
    from agentread import _scan
    from shared_corpus import REPO

    assert pdfium._compiled_path_segments is _scan.path_segments
    pages = paths = figures = 0
    for data, name in _every_pdf().items():
        try:
            seen = _both_readings_of_paths(data)
        except AssertionError as exc:
            raise AssertionError(f"{name}, page {exc}") from None
        pages, paths, figures = pages + seen[0], paths + seen[1], figures + seen[2]
    assert paths > 10_000 and figures > 10, (pages, paths, figures)
    if not (REPO / ".thirdparty").is_dir():
        pytest.skip(f"compared on the corpus's {pages} pages only: .thirdparty is absent (./scripts/fetch-thirdparty)")
    assert pages > MIN_THIRDPARTY_PAGES


def test_the_segments_of_a_page_of_thousands_of_paths_are_read_alike_by_both_walks():
    """A made page: thousands of small squares, curves, a slant, steps, paths of more segments
    than are read, and a path of several moves: both walks, and the figures counted from each."""
    from builders import drawn_pdf

    squares = (f"{20 + 10 * (n % 55)} {20 + 10 * (n // 55)} 4 4 re f" for n in range(3000))
    curves = (f"{30 + 9 * n} 600 m {35 + 9 * n} 610 {40 + 9 * n} 590 {45 + 9 * n} 600 c S" for n in range(40))
    steps = " ".join(f"{300 + 2 * n} {650 + 2 * (n % 2)} l" for n in range(200))  # past the segments read
    slant = " ".join(f"{300 + 0.4 * n:.1f} {700 + 0.2 * n:.1f} l" for n in range(1, 250))
    moves = "100 650 m 150 650 l 150 660 m 150 700 l 120 700 m 120 680 l h"
    data = drawn_pdf("\n".join([*squares, *curves, f"300 650 m {steps} S", f"300 700 m {slant} S", moves + " S"]))
    pages, paths, figures = _both_readings_of_paths(data)
    assert (pages, paths, figures) == (1, 3043, 2)  # the squares' mosaic, and the slant


def test_the_compiled_segments_refuse_what_is_not_a_list_of_addresses():
    from agentread import _scan

    with pdfium.LOCK:
        functions = pdfium._functions(pdfium.library().raw)
    with pytest.raises(ValueError, match="path_segments: 7 bytes of addresses"):
        _scan.path_segments(functions, bytes(7), 64)
    with pytest.raises(ValueError, match="most=-1"):
        _scan.path_segments(functions, b"", -1)
    with pytest.raises(ValueError, match="functions expected"):
        _scan.path_segments(functions[:-1], b"", 64)
