"""PDF page ranges, the per-call page cap and `next`, the document cache, and page-tree walking, on
PDFs the tests write byte by byte (so every page's text is known)."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest

from agentread.engine import Engine
from agentread.limits import MAX_OUTPUT_BYTES, MAX_PDF_PAGES
from agentread.readers import pdf
from agentread.request import InvalidParams, parse_request
from agentread.result import ReadError
from agentread.workspace import Workspace, path_version
from builders import build_pdf, pdf_of
from rpc import ServerProcess, serving, text_of
from shared_corpus import REPO


def page_blocks(text: str) -> dict[int, str]:
    text = re.sub(r"\n*\[Showing pages? [^\n]*\]$", "", text)  # the closing "how to continue" line
    parts = re.split(r"^--- Page (\d+) ---$", text, flags=re.M)
    return {int(parts[i]): parts[i + 1].strip() for i in range(1, len(parts), 2)}


PAGES = 45


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "doc.pdf").write_bytes(build_pdf([f"marker page {n}" for n in range(1, PAGES + 1)]))
    return tmp_path


@pytest.fixture
def engine(ws: Path) -> Engine:
    return Engine(Workspace([str(ws)]))


def read(engine: Engine, **params):
    return engine.read(parse_request(params))


def shows(result, pages) -> None:
    assert not result.is_error, result.text()
    blocks = page_blocks(result.text())
    assert list(blocks) == list(pages)
    for number in pages:
        assert blocks[number].splitlines()[0] == f"marker page {number}"


# --- ranges
# -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec,want", [("3", (3, 3)), ("2-3", (2, 3)), ("3-", (3, 45)), (" 10 - 12 ", (10, 12)),
                                       ("40-999", (40, 45)), ("45", (45, 45)), (None, (1, MAX_PDF_PAGES))])
def test_parse_pages(spec, want):
    assert pdf.parse_pages(spec, 45) == want


@pytest.mark.parametrize("spec", ["x", "0", "5-3", "-4", "1,3", "two", "3-x", "1.5"])
def test_bad_page_ranges_are_invalid_params(spec):
    with pytest.raises(InvalidParams):
        pdf.parse_pages(spec, 45)


def test_page_beyond_the_end_names_the_total():
    with pytest.raises(ReadError) as excinfo:
        pdf.parse_pages("46", 45)
    assert excinfo.value.code == "page_out_of_range" and "45" in excinfo.value.message


def test_ranges_through_the_engine(engine: Engine):
    shows(read(engine, path="doc.pdf", pages="3"), [3])
    shows(read(engine, path="doc.pdf", pages="2-3"), [2, 3])
    shows(read(engine, path="doc.pdf", pages=7), [7])  # a number, as models often send
    tail = read(engine, path="doc.pdf", pages="40-")
    shows(tail, range(40, 46))
    assert tail.total_pages == PAGES and not tail.truncated and tail.next is None
    with pytest.raises(InvalidParams):
        read(engine, path="doc.pdf", pages="x")
    beyond = read(engine, path="doc.pdf", pages="46")
    assert beyond.is_error and beyond.error.code == "page_out_of_range"
    assert f"{PAGES} pages" in beyond.text()


def test_bad_range_is_a_jsonrpc_error_through_the_server(ws: Path, server):  # ws is the server's workspace
    answer = server.request("agentread/read", {"path": "doc.pdf", "pages": "x"})
    assert "error" in answer and answer["error"]["code"] == -32602
    assert "pages" in answer["error"]["message"]
    beyond = server.read(path="doc.pdf", pages="99")
    assert beyond["isError"] and beyond["error"]["code"] == "page_out_of_range"
    ok = server.read(path="doc.pdf", pages="2-3")
    assert ok["kind"] == "pdf" and ok["totalPages"] == PAGES


# --- at most 20 pages a call
# ------------------------------------------------------------------------------

def test_first_read_shows_twenty_pages_and_says_how_to_continue(engine: Engine):
    first = read(engine, path="doc.pdf")
    shows(first, range(1, MAX_PDF_PAGES + 1))
    assert first.truncated and first.next == {"pages": f"{MAX_PDF_PAGES + 1}-{PAGES}"}  # all the rest
    rest = f'pages="{MAX_PDF_PAGES + 1}-{PAGES}"'
    assert f"(at most {MAX_PDF_PAGES} pages a call). Call again with {rest}" in first.text()


def test_long_range_is_capped_and_next_covers_the_rest(engine: Engine):
    seen: list[int] = []
    params = {"path": "doc.pdf", "pages": "1-45"}
    for _ in range(10):
        result = read(engine, **params)
        blocks = page_blocks(result.text())
        assert len(blocks) <= MAX_PDF_PAGES
        seen += list(blocks)
        if result.next is None:
            break
        params = {"path": "doc.pdf", **result.next}
    assert seen == list(range(1, PAGES + 1))


def test_following_next_from_the_first_read_visits_every_page_once(engine: Engine):
    seen: list[int] = []
    params = {"path": "doc.pdf"}
    for _ in range(10):
        result = read(engine, **params)
        seen += list(page_blocks(result.text()))
        if result.next is None:
            break
        params = {"path": "doc.pdf", **result.next}
    assert seen == list(range(1, PAGES + 1))


@pytest.fixture
def corpus_server(corpus: Path):
    yield from serving(corpus / "pdf")


def test_one_page_asked_for_and_shown_is_not_cut_and_says_where_the_document_goes_on(corpus_server: ServerProcess):
    page = corpus_server.read(path="GeoTopo-komprimiert.pdf", pages="7")
    assert page["shown"] == {"pages": [7]} and not page["truncated"] and "next" not in page
    assert 'Showing page 7 of 117, all that was asked for. Pages 8-117 follow: pages="8-27" reads on.' in text_of(page)
    last_but_one = corpus_server.read(path="GeoTopo-komprimiert.pdf", pages="116")
    assert 'Page 117 follows: pages="117" reads on.' in text_of(last_but_one) and not last_but_one["truncated"]
    last = corpus_server.read(path="GeoTopo-komprimiert.pdf", pages="117")
    assert not last["truncated"] and "Showing" not in text_of(last)


def test_a_single_page_is_named_alone_in_next_and_in_words(corpus_server: ServerProcess):
    lines = corpus_server.read(path="GeoTopo-komprimiert.pdf", pages="7", limit=5)
    assert lines["truncated"] and lines["next"] == {"pages": "7", "offset": 6}
    assert 'Call again with pages="7" and offset=6 to continue.' in text_of(lines)
    past = corpus_server.read(path="GeoTopo-komprimiert.pdf", pages="7", offset=900)
    assert past["error"]["message"].startswith("offset 900 is past the end of page 7, which has ")
    one = corpus_server.read(path="toy.pdf", pages="2")
    assert one["error"]["message"].endswith('the PDF has 1 page. Call again with pages="1".')


def test_read_many_counts_a_page_asked_for_and_shown_as_whole(ws: Path, server):
    answer = server.request("agentread/readMany", {"paths": [{"path": "doc.pdf", "pages": "7"}]})["result"]
    assert [f["state"] for f in answer["files"]] == ["whole"] and not answer["truncated"] and "next" not in answer


def test_next_names_the_rest_of_the_range_with_the_reason_it_stopped(ws: Path, server):
    ranged = server.read(path="doc.pdf", pages="5-40")
    assert ranged["next"] == {"pages": f"{MAX_PDF_PAGES + 5}-40"}
    assert f"[Showing pages 5-{MAX_PDF_PAGES + 4} of {PAGES} (at most {MAX_PDF_PAGES} pages a call)." in text_of(ranged)
    (ws / "wide.pdf").write_bytes(build_pdf([f"page {n} " + "words " * 150 for n in (1, 2, 3)]))
    small = server.read(path="wide.pdf", pages="2-", maxBytes=2000)
    assert small["shown"] == {"pages": [2]} and small["next"] == {"pages": "3"}
    assert re.search(r'\[Showing page 2 of 3 \(output limit of [\d,]+ bytes\)\. Call again with pages="3" to '
                     r'continue\.\]', text_of(small))


# --- page contents
# ----------------------------------------------------------------------------------------

def test_page_without_text_says_so(tmp_path: Path):
    (tmp_path / "blank.pdf").write_bytes(build_pdf(["first words", None, "third words"]))
    result = read(Engine(Workspace([str(tmp_path)])), path="blank.pdf")
    blocks = page_blocks(result.text())
    assert blocks[1] == "first words" and blocks[3] == "third words"
    assert "no extractable text" in blocks[2]


def test_nested_page_tree_with_inherited_resources(tmp_path: Path):
    texts = [f"marker page {n}" for n in range(1, 36)]
    (tmp_path / "tree.pdf").write_bytes(build_pdf(texts, group=7))
    engine = Engine(Workspace([str(tmp_path)]))
    for number in (1, 7, 8, 14, 15, 29, 35):
        shows(read(engine, path="tree.pdf", pages=str(number)), [number])
    assert read(engine, path="tree.pdf").total_pages == 35


def test_encrypted_pdfs(tmp_path: Path):
    from pypdf import PdfReader, PdfWriter

    source = build_pdf(["secret words"])
    (tmp_path / "plain.pdf").write_bytes(source)
    for name, password in (("empty-password.pdf", ""), ("user-password.pdf", "hunter2")):
        writer = PdfWriter(clone_from=PdfReader(tmp_path / "plain.pdf"))
        writer.encrypt(user_password=password, owner_password="owner-pw", algorithm="RC4-128")
        with open(tmp_path / name, "wb") as f:
            writer.write(f)
    engine = Engine(Workspace([str(tmp_path)]))
    opened = read(engine, path="empty-password.pdf")
    assert not opened.is_error and "secret words" in opened.text()
    locked = read(engine, path="user-password.pdf")
    assert locked.is_error and locked.error.code == "encrypted_pdf" and "password" in locked.text()


def test_garbage_after_a_pdf_header_is_a_damaged_pdf(tmp_path: Path):
    (tmp_path / "junk.pdf").write_bytes(b"%PDF-1.7\n" + os.urandom(2000))
    result = read(Engine(Workspace([str(tmp_path)])), path="junk.pdf")
    assert result.is_error and result.error.code == "damaged_pdf" and result.text().startswith("Error:")


# --- the document cache
# -----------------------------------------------------------------------------------

def _keys_for(path: Path) -> list[tuple]:
    real = os.path.realpath(path)
    return [key for key in list(pdf.DOCUMENTS._docs) if key[0] == real]


def test_cache_is_keyed_by_path_and_file_version(ws: Path, engine: Engine):
    """One parse serves every page; a file touched since is parsed anew, and the parse of it as it
    was, which can never be asked for again, is dropped."""
    path = ws / "doc.pdf"
    read(engine, path="doc.pdf", pages="1")
    before = _keys_for(path)
    assert len(before) == 1
    read(engine, path="doc.pdf", pages="2")
    assert _keys_for(path) == before  # the same parse serves the next page
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))  # touched: a new parse
    read(engine, path="doc.pdf", pages="1")
    after = _keys_for(path)
    assert len(after) == 1 and after != before  # the parse of the file as it was can never be asked for again


def test_documents_of_deleted_files_are_dropped_and_closed_at_the_next_open(ws: Path, engine: Engine):
    """A document read from its file holds it open: a deleted PDF's space is freed once another
    PDF is opened."""
    (ws / "gone.pdf").write_bytes(build_pdf(["soon deleted"]))
    read(engine, path="gone.pdf")
    (key,) = _keys_for(ws / "gone.pdf")
    closer = pdf.DOCUMENTS._docs[key].backend.pdf._close
    (ws / "gone.pdf").unlink()
    read(engine, path="doc.pdf", pages="1")
    assert key not in pdf.DOCUMENTS._docs and not closer.alive


def test_a_document_read_from_an_editor_buffer_stays_cached_when_another_is_opened(ws: Path):
    """Keyed by its path and the hash of its text, it has no file version to go stale."""
    cache = pdf._DocumentCache(size=8, max_bytes=1 << 20)
    cache.get(("/editor/buffer.pdf", 7), io.BytesIO(build_pdf(["in the editor"])), "buffer.pdf")
    path = os.path.realpath(ws / "doc.pdf")
    cache.get((path, *path_version(path)), io.BytesIO((ws / "doc.pdf").read_bytes()), "doc.pdf")
    assert ("/editor/buffer.pdf", 7) in cache._docs and len(cache) == 2


def test_rewritten_file_is_read_anew(ws: Path, engine: Engine):
    path = ws / "doc.pdf"
    shows(read(engine, path="doc.pdf", pages="5"), [5])
    st = path.stat()
    path.write_bytes(build_pdf([f"MARKER PAGE {n}" for n in range(1, PAGES + 1)]))  # the same size
    assert path.stat().st_size == st.st_size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
    assert page_blocks(read(engine, path="doc.pdf", pages="5").text())[5] == "MARKER PAGE 5"
    shorter = build_pdf(["only page"])
    path.write_bytes(shorter)
    result = read(engine, path="doc.pdf")
    assert result.total_pages == 1 and page_blocks(result.text()) == {1: "only page"}


def test_cache_is_bounded(tmp_path: Path):
    engine = Engine(Workspace([str(tmp_path)]))
    for i in range(pdf.PDF_CACHE_DOCUMENTS + 4):
        (tmp_path / f"d{i}.pdf").write_bytes(build_pdf([f"document {i}"]))
        assert page_blocks(read(engine, path=f"d{i}.pdf").text()) == {1: f"document {i}"}
        assert len(pdf.DOCUMENTS) <= pdf.PDF_CACHE_DOCUMENTS
    assert len(pdf.DOCUMENTS) == pdf.PDF_CACHE_DOCUMENTS


def test_a_page_over_the_output_budget_is_cut_with_next_and_offset_reads_all_of_it(tmp_path: Path):
    lines = [f"row {n:04d} of a very long table page" for n in range(1, 3001)]  # ~110 KB of text on page 2
    (tmp_path / "long.pdf").write_bytes(build_pdf(["short first page", ") Tj 0 -14 Td (".join(lines), "last"]))
    engine = Engine(Workspace([str(tmp_path)]))
    whole = read(engine, path="long.pdf")
    assert page_blocks(whole.text()) == {1: "short first page"} and whole.next == {"pages": "2-3"}
    first = read(engine, path="long.pdf", pages="2-3")
    assert first.truncated and first.next["pages"] == "2-3" and first.next["offset"] > 2
    assert len(first.text().encode()) < MAX_OUTPUT_BYTES + 500
    seen, result = [], first
    while True:
        # Rows past the page's foot lie outside what a viewer shows, and are marked so.
        seen += re.findall(r"^\s*\d+\t(?:\u27e6hidden: [^\u27e7]*\u27e7)?row (\d{4}) ", result.text(), flags=re.M)
        if not result.next or "offset" not in result.next:
            break
        result = read(engine, path="long.pdf", **result.next)
    assert [int(n) for n in seen] == list(range(1, 3001))  # every line once, in order
    assert re.search(r"--- Page 3 ---\n\s*\d+\tlast$", result.text())  # then page 3, the rest of the range
    assert result.next is None and not result.truncated
    end = read(engine, path="long.pdf", pages="2-3", offset=-3)  # counted back from the end of the pages read
    assert end.end_line == end.total_lines == result.end_line and end.start_line == end.total_lines - 2
    assert re.findall(r"^\s*\d+\t(.*)$", end.text(), flags=re.M) == ["", "--- Page 3 ---", "last"]


def _with_form(page_ops: bytes, form_ops: bytes, depth: int = 1) -> bytes:
    """A one-page PDF drawing `page_ops`, in which `/Fm1 Do` draws a form XObject of `form_ops`;
    with `depth`, that form is the innermost of so many, each drawing the next."""
    def stream(ops: bytes, extra: bytes = b"") -> bytes:
        return b"<< /Length %d%s >>\nstream\n" % (len(ops), extra) + ops + b"\nendstream"

    font = b"/Font << /F1 3 0 R >>"
    objects = {1: b"<< /Type /Catalog /Pages 2 0 R >>", 2: b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
               3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
               4: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R /Resources << " + font
               + b" /XObject << /Fm1 6 0 R >> >> >>",
               5: stream(page_ops)}
    for n in range(depth):  # form 6 is the outermost, drawn by the page; each draws the next
        inner = b" /XObject << /Fm1 %d 0 R >>" % (7 + n) if n < depth - 1 else b""
        objects[6 + n] = stream(form_ops if n == depth - 1 else b"q /Fm1 Do Q",
                                b" /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << " + font + inner
                                + b" >>")
    return pdf_of(objects)


# Where the page's words are: on the page; all in one form; the first 100 on the page, the rest but
# the last in a form, the last after it on the page; all in the innermost of 12 nested forms. A form
# counts as an object too.
@pytest.mark.parametrize("layout", ["page", "form", "split", "nested"])
def test_a_page_of_too_many_objects_shows_the_first_and_says_so(tmp_path: Path, layout: str):
    # One text object per word, 50 words a row in 1-point type: MAX_TEXT_OBJECTS + 50 words
    # on one page.
    count = pdf.MAX_TEXT_OBJECTS + 50
    words = [f"BT /F1 1 Tf {12 * (n % 50)} {785 - 1.9 * (n // 50):.1f} Td (w{n}) Tj ET".encode() for n in range(count)]
    if layout == "page":
        data = build_pdf(["first"]).replace(b"BT /F1 12 Tf 72 720 Td (first) Tj ET", b"\n".join(words))
    elif layout in ("form", "nested"):
        data = _with_form(b"q /Fm1 Do Q", b"\n".join(words), depth=12 if layout == "nested" else 1)
    else:
        data = _with_form(b"\n".join(words[:100] + [b"q /Fm1 Do Q", words[-1]]), b"\n".join(words[100:-1]))
    (tmp_path / "dense.pdf").write_bytes(data)
    engine, text = Engine(Workspace([str(tmp_path)])), ""
    result = read(engine, path="dense.pdf")
    while True:  # the page's text is over the output budget: followed to its end
        text += result.text()
        if not result.next:
            break
        result = read(engine, path="dense.pdf", **result.next)
    shown = set(re.findall(r"\bw(\d+)\b", text))
    kept = pdf.MAX_TEXT_OBJECTS - {"page": 0, "nested": 12}.get(layout, 1)  # forms are among the objects kept
    assert shown == {str(n) for n in range(kept)}  # every one of the first, none after
    assert f"holds more than {pdf.MAX_TEXT_OBJECTS:,} objects (those inside forms included)" in text


def test_a_page_that_cannot_be_drawn_keeps_its_note_and_says_so(tmp_path: Path):
    # A crop box of negative width: PDFium opens the page, finds no text, and refuses to render it.
    data = build_pdf([None]).replace(b"/MediaBox [0 0 612 792]", b"/MediaBox [0 0 612 792] /CropBox [0 0 -5 792]")
    (tmp_path / "bad-crop.pdf").write_bytes(data)
    result = read(Engine(Workspace([str(tmp_path)])), path="bad-crop.pdf")
    assert not result.is_error and "no extractable text" in result.text()
    assert "could not be rendered as an image" in result.text()


def test_a_page_tree_pypdf_trips_over_is_a_damaged_pdf(tmp_path: Path, monkeypatch):
    # Seen in fuzzing: a file PDFium refuses, whose page tree leads pypdf into an object stream that
    # is not one, which pypdf checks with an assertion. Both failures are injected here into the
    # real reader.
    def refuse(data):
        raise RuntimeError("PDFium refuses it")

    def trip(reader):
        raise AssertionError

    monkeypatch.setattr(pdf, "_Pdfium", refuse)
    monkeypatch.setattr(pdf, "_page_count", trip)
    (tmp_path / "tree.pdf").write_bytes(build_pdf(["words"]))
    result = read(Engine(Workspace([str(tmp_path)])), path="tree.pdf")
    assert result.is_error and result.error.code == "damaged_pdf", result.text()


def test_shown_pages_and_lines(engine: Engine, ws: Path):
    first = read(engine, path="doc.pdf")
    assert first.shown == {"pages": list(range(1, MAX_PDF_PAGES + 1))}
    assert read(engine, path="doc.pdf", pages="7-9").shown == {"pages": [7, 8, 9]}
    # By lines: each page is "--- Page N ---" and one line of text, pages apart by a blank line (3
    # lines each).
    window = read(engine, path="doc.pdf", pages="3-8", offset=5, limit=4)
    assert window.shown == {"pages": [4, 5], "lines": [5, 8]}
    assert re.findall(r"--- Page (\d+) ---", window.text()) == ["5"]


def test_a_find_in_a_pdf_only_pypdf_opens_names_its_pages_without_text_as_not_searched(tmp_path: Path):
    """pypdf draws no pages: its pages without text are named as not searched, with no read to
    show them."""
    from pypdf import PdfReader

    from agentread.find import Matcher
    from agentread.request import ReadRequest

    path = tmp_path / "doc.pdf"
    path.write_bytes(build_pdf(["the zebra page", None]))
    doc = pdf._Document(pdf._Pypdf(PdfReader(path)), path.stat().st_size)
    request, scans = ReadRequest(path="doc.pdf", find="zebra"), {}
    assert [hit.where["page"] for hit in pdf._search(doc, request, Matcher(request), scans)] == [1]
    assert pdf._unsearched(scans, pictures=False) == [
        "[Page 2 has no text layer (a scan or a drawing) and was not searched. No read shows more: only pypdf "
        "opens this file, and it draws no pages.]"]


TASN1 = REPO / ".thirdparty" / "libtasn1-doc" / "usr" / "share" / "doc" / "libtasn1-doc"


@pytest.fixture
def tasn1_server():
    if not (TASN1 / "libtasn1.pdf").is_file():
        pytest.skip(f"{TASN1} is absent: run ./scripts/fetch-thirdparty (scripts/test does) to fetch it")
    yield from serving(TASN1)


def test_a_glyph_given_as_a_carriage_return_never_ends_a_line(tasn1_server: ServerProcess):
    # Texinfo draws © as a circle (code 13 of TeX's symbol font, named no character) over a c:
    # PDFium gives the circle as a carriage return.
    page = text_of(tasn1_server.read(path="libtasn1.pdf", pages="2"))
    assert "Copyright \ufffdc 2001–2022 Free Software Foundation, Inc.\n" in page
    found = tasn1_server.read(path="libtasn1.pdf", find="Copyright")
    assert "page 2 (labelled T-2), line 4: Copyright \ufffdc 2001–2022" in text_of(found)
    assert [hit["line"] for hit in found["shown"]["hits"]][:2] == [4, 6]
    outline = tasn1_server.read(path="libtasn1.pdf", outline=True)
    whole = tasn1_server.read(path="libtasn1.pdf", pages="1-20")
    for reply in (page, text_of(found), text_of(outline), text_of(whole)):
        assert "\r" not in reply
    # The line the find names is that line of the page read by lines, as a client numbers them.
    line = tasn1_server.read(path="libtasn1.pdf", pages="2", offset=4, limit=1)
    assert text_of(line).startswith("     4\tCopyright \ufffdc 2001")
