"""The mechanisms the speed rests on (bench/ times them; these prove they are right, untimed).

Text: the line index is keyed by the file's identity and contents stamp, fills in from scans and
window reads, stays bounded; both line-end counters agree, and every window renderer gives the same
windows. PDF: parsed documents are keyed by mtime and bounded, page text is cached within its bound,
and a warm read does not read the file. Server: each read is answered once; a file is read on the
event loop only while its reads are quick.
"""

from __future__ import annotations

import dataclasses
import io
import os
import random
import re
from pathlib import Path

import pytest

from agentread.engine import Engine
from agentread.find import Matcher
from agentread.readers import READERS, pdf, text
from agentread.request import parse_request
from agentread.workspace import Workspace
from builders import build_pdf


def read(engine: Engine, **params):
    return engine.read(parse_request(params))


def first_row(result) -> tuple[int, str]:
    number, _, line = result.content[0].text.split("\n")[0].partition("\t")
    return int(number), line


def index_of(path: Path) -> text.LineIndex:
    real = os.path.realpath(path)
    keys = [key for key in list(text.INDEXES._entries) if key[0] == real]
    assert len(keys) == 1
    return text.INDEXES._entries[keys[-1]]


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return Engine(Workspace([str(tmp_path)]))


# --- text: the line index
# ----------------------------------------------------------------------------------

def test_line_index_is_dropped_when_the_file_changes(tmp_path: Path, engine: Engine):
    path = tmp_path / "log.txt"
    path.write_text("".join(f"a{i:07d}\n" for i in range(1, 200_001)))
    assert first_row(read(engine, path="log.txt", offset=150_000)) == (150_000, "a0150000")
    # Rewritten in place, same size, new mtime: the old positions would land on the wrong lines.
    path.write_text("".join(f"b{i:07d}\n" for i in range(1, 200_001)))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
    assert first_row(read(engine, path="log.txt", offset=150_000)) == (150_000, "b0150000")
    # Lines inserted at the top (size changes): every line moves down.
    path.write_text("new\n" * 10 + path.read_text())
    assert first_row(read(engine, path="log.txt", offset=150_010)) == (150_010, "b0150000")


def test_a_window_read_is_remembered_so_its_repeat_does_not_scan(tmp_path: Path, engine: Engine, monkeypatch):
    path = tmp_path / "log.txt"
    path.write_text("".join(f"line {i}\n" for i in range(1, 300_001)))
    read(engine, path="log.txt", offset=123_457)
    index = index_of(path)
    assert 123_457 in index.lines  # the window's first line, exactly
    scans = []
    original = text.count_line_ends
    monkeypatch.setattr(text, "count_line_ends", lambda buf, n: scans.append(n) or original(buf, n))
    assert first_row(read(engine, path="log.txt", offset=123_457)) == (123_457, "line 123457")
    assert scans == []


def test_line_index_stays_bounded_and_right(tmp_path: Path, engine: Engine, monkeypatch):
    monkeypatch.setattr(text, "SCAN_CHUNK", 4096)
    monkeypatch.setattr(text, "MAX_INDEX_ENTRIES", 64)
    path = tmp_path / "log.txt"
    path.write_text("".join(f"r{i}\n" for i in range(1, 400_001)))
    result = read(engine, path="log.txt", offset=399_000)
    assert first_row(result) == (399_000, "r399000")
    index = index_of(path)
    assert len(index.lines) <= 64
    assert list(index.lines) == sorted(index.lines) and index.lines[0] == 1
    for offset in (1, 2, 4097, 77_777, 250_001, 400_000):  # every jump still lands on its line
        assert first_row(read(engine, path="log.txt", offset=offset)) == (offset, f"r{offset}")


def test_line_index_shared_by_threads_keeps_each_line_with_its_offset(monkeypatch):
    """Reads of one file in several workers add to its index at once; each line keeps
    its own offset."""
    import sys
    import threading

    monkeypatch.setattr(text, "MAX_INDEX_ENTRIES", 512)  # thinning happens under way too
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch as often as they can
    index, errors = text.LineIndex(0), []

    def add(first: int) -> None:  # line n starts at byte 10 (n - 1)
        try:
            for n in range(first, 60_000, 4):
                index.add(n, 10 * (n - 1))
                line, offset = index.nearest(n)
                assert offset == 10 * (line - 1), (n, line, offset)
        except Exception as exc:  # noqa: BLE001 - reported by the test thread
            errors.append(exc)

    try:
        threads = [threading.Thread(target=add, args=(k,)) for k in (2, 3, 4, 5)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(previous)
    assert errors == []
    assert list(index.lines) == sorted(index.lines)
    assert all(offset == 10 * (line - 1) for line, offset in zip(index.lines, index.offsets))


def test_the_total_count_fills_the_index_so_the_last_window_is_a_jump(tmp_path: Path, engine: Engine,
                                                                       monkeypatch):
    monkeypatch.setattr(text, "SCAN_CHUNK", 4096)
    path = tmp_path / "log.txt"
    path.write_text("".join(f"r{i}\n" for i in range(1, 100_001)))
    error = read(engine, path="log.txt", offset=10_000_000)
    assert error.is_error and "100,000 lines" in error.text()
    line, offset = index_of(path).nearest(100_000)
    assert 100_000 - line < 4096  # an entry within one chunk of the end


def test_the_line_end_counter_and_the_window_numbering_are_the_compiled_ones():
    # setup.py builds them; without a C compiler the package falls back to Python, several
    # times slower.
    from agentread import _scan

    assert text.count_line_ends is _scan.count_line_ends
    assert text.number_window is _scan.number_window


COUNTERS = {"compiled": text.count_line_ends, "python": text._count_in_python}


@pytest.mark.parametrize("seed", range(20))
def test_both_line_end_counters_agree_with_the_editor(seed: int):
    rng = random.Random(seed)
    pieces = [b"\n", b"\r", b"\r\n", b"x", b"\xff", b"\r\r\n", b"\n\r", b"x" * 300]  # runs longer than a block
    data = bytearray(b"".join(rng.choice(pieces) for _ in range(rng.randrange(1, 3000))))
    want = len(text.LINE_END.findall(bytes(data)))
    assert [count(data, len(data)) for count in COUNTERS.values()] == [want, want]
    cut = rng.randrange(len(data) + 1)  # a prefix: a CR at its end counts as lone
    assert {count(data, cut) for count in COUNTERS.values()} == {len(text.LINE_END.findall(bytes(data[:cut])))}


def test_more_line_ends_in_a_row_than_an_8_bit_sum_holds_are_all_counted():
    for data in (b"\n" * 100_000, b"\r" * 100_001, b"\r\n" * 70_000, b"\n\r" * 65_537):
        want = len(text.LINE_END.findall(data))
        assert [count(bytearray(data), len(data)) for count in COUNTERS.values()] == [want, want]


def test_the_compiled_counter_refuses_a_count_past_its_buffer():
    with pytest.raises(ValueError, match="outside a buffer of 3 bytes"):
        text.count_line_ends(bytearray(b"a\nb"), 4)
    with pytest.raises(TypeError):
        text.count_line_ends("a\nb", 3)


ASCII_ENDS = {"compiled": text.ascii_end, "python": text._ascii_end_in_python}


@pytest.mark.parametrize("seed", range(20))
def test_both_ascii_end_finders_find_the_first_byte_over_127(seed: int):
    from agentread import _scan

    assert text.ascii_end is _scan.ascii_end
    rng = random.Random(seed)
    pieces = [b"x", b"\n", b"x" * 300, b"\x80", b"\xff", "é".encode()]  # runs longer than a block
    data = bytearray(b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 200))))
    start = rng.randrange(len(data) + 1)
    end = rng.randrange(start, len(data) + 1)
    other = re.compile(rb"[\x80-\xff]").search(bytes(data), start, end)
    want = other.start() if other else end
    assert [ascii_end(data, start, end) for ascii_end in ASCII_ENDS.values()] == [want, want]


@pytest.mark.parametrize("seed", range(20))
def test_a_string_regardless_of_case_is_found_where_the_lowered_bytes_hold_it(seed: int):
    """The search of an ASCII string ignoring case in a UTF-8 file, as it is made for a string
    without f, i, k or s: every byte value around it, and multi-byte characters among them."""
    rng = random.Random(seed)
    pieces = [bytes([b]) for b in range(256)] + [b"A", b"a", b"Z", b"z", "\u212a".encode(), "é".encode()] * 20
    needle = "".join(rng.choice("aAzZ=1 ") for _ in range(rng.randrange(1, 4))).lower().encode()
    data = bytearray(b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 3000))))
    size = rng.randrange(len(data) + 1)
    matcher = Matcher(parse_request({"path": "f.txt", "find": needle.decode(), "ignoreCase": True}))
    assert list(matcher.ascii_spans(data, 0, size)) == list(text._find_all(data.lower(), needle, size))


def test_the_compiled_ascii_end_refuses_a_range_outside_its_buffer():
    with pytest.raises(ValueError, match="outside a buffer of 3 bytes"):
        text.ascii_end(bytearray(b"abc"), 1, 4)
    with pytest.raises(ValueError):
        text.ascii_end(bytearray(b"abc"), 2, 1)
    with pytest.raises(TypeError):
        text.ascii_end(b"abc", 0, 3)


def test_the_compiled_numbering_refuses_what_no_window_is():
    for first, limit in ((1, 0), (2**63 - 5, 10), (-(2**63) + 5, 10)):
        with pytest.raises(ValueError, match=f"first={first}, limit={limit}"):
            text.number_window(b"a\nb", True, first, limit, 100, 10)
    with pytest.raises(TypeError):
        text.number_window("a\nb", True, 1, 10, 100, 10)


# How a text window is numbered: compiled, in C-level calls on the block (no compiler, or bad
# bytes), one line at a time (every encoding but UTF-8 and ASCII).
RENDERERS = {"compiled": {}, "python": {"number_window": None}, "line loop": {"PLAIN_WINDOW_ENCODINGS": ()}}


@pytest.mark.parametrize("seed", range(4))
def test_every_window_renderer_gives_the_same_windows(tmp_path: Path, monkeypatch, seed: int):
    rng = random.Random(seed)
    lines = [rng.choice([b"", b"x" * rng.randrange(1, 120), "é ✓ 名前".encode(), b"\t tab"] * 20 + [b"bad \xff"])
             for _ in range(30_000)]  # UTF-8 with a bad byte here and there
    data = b"".join(line + rng.choice([b"\n", b"\r\n", b"\r"]) for line in lines)
    (tmp_path / "log.txt").write_bytes(data)
    windows = [(1, None), (29_000, None), (rng.randrange(1, 30_000), 50), (rng.randrange(1, 30_000), 2000)]
    answers = {}
    for name, patches in RENDERERS.items():
        with monkeypatch.context() as patched:
            for attribute, value in patches.items():
                patched.setattr(text, attribute, value)
            engine = Engine(Workspace([str(tmp_path)]))  # each renderer with its own (empty) line index
            results = [read(engine, path="log.txt", offset=offset, **({"limit": limit} if limit else {}))
                       for offset, limit in windows]
            assert {result.encoding for result in results} == {"utf-8"}
            answers[name] = [result.text() for result in results]
    assert answers["compiled"] == answers["python"] == answers["line loop"]
    assert "output limit" in answers["compiled"][0] and "\ufffd" in answers["compiled"][0]


@pytest.mark.parametrize("counter", COUNTERS)
def test_line_counts_across_chunks_match_a_slow_split(tmp_path: Path, engine: Engine, monkeypatch, counter: str):
    monkeypatch.setattr(text, "SCAN_CHUNK", 64)
    monkeypatch.setattr(text, "count_line_ends", COUNTERS[counter])
    rng = random.Random(7)
    # Stretches dense with CRs between stretches with none.
    data = b"".join(rng.choice([b"a", b"bb", b"\r", b"\n", b"\r\n"] if (i // 500) % 2 else [b"a", b"\n"])
                    for i in range(20_000))
    (tmp_path / "mixed.txt").write_bytes(data)
    total = len(data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n"))
    total -= data.endswith((b"\n", b"\r"))
    error = read(engine, path="mixed.txt", offset=total + 5)
    assert f"{total:,} line" in error.text()


# --- PDF: the document cache and the page text cache
# --------------------------------------------------------

def test_pdf_cache_is_keyed_by_mtime_and_bounded(tmp_path: Path, engine: Engine):
    path = tmp_path / "a.pdf"
    path.write_bytes(build_pdf(["first version"]))
    assert "first version" in read(engine, path="a.pdf").text()
    st = path.stat()
    path.write_bytes(build_pdf(["other version"]))  # the same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
    assert "other version" in read(engine, path="a.pdf").text()
    for i in range(pdf.PDF_CACHE_DOCUMENTS + 3):
        (tmp_path / f"d{i}.pdf").write_bytes(build_pdf([f"doc {i}"]))
        read(engine, path=f"d{i}.pdf")
        assert len(pdf.DOCUMENTS) <= pdf.PDF_CACHE_DOCUMENTS


def test_pdf_cache_is_bounded_by_the_bytes_it_holds():
    docs = [build_pdf([f"document {i} " + "w" * 40 * i]) for i in range(6)]
    limit = len(docs[4]) + len(docs[5])
    cache = pdf._DocumentCache(size=8, max_bytes=limit)
    for i, data in enumerate(docs):
        cache.get(("/d", i), io.BytesIO(data), f"d{i}.pdf")
        assert cache.held_bytes <= limit and cache.held_bytes == sum(map(len, docs[i + 1 - len(cache):i + 1]))
    assert len(cache) == 2  # the two newest fit, a third would not
    huge = build_pdf(["big " + "w" * 40 * 200])
    assert len(huge) > limit
    cache.get(("/huge",), io.BytesIO(huge), "huge.pdf")
    assert len(cache) == 1 and cache.held_bytes == len(huge)  # the newest stays whatever its size
    cache.get(("/huge",), io.BytesIO(huge), "huge.pdf")  # a warm read counts nothing twice
    assert cache.held_bytes == len(huge)


def test_a_pdf_opened_twice_at_once_is_counted_once():
    data = build_pdf(["one document"])
    cache = pdf._DocumentCache(size=8, max_bytes=1 << 20)

    class Racing(io.BytesIO):  # another thread opens the same file while this one reads it
        def read(self, *args):
            cache.get(("/same",), io.BytesIO(data), "same.pdf")
            return super().read(*args)

    cache.get(("/same",), Racing(data), "same.pdf")
    assert len(cache) == 1 and cache.held_bytes == len(data)


def test_page_text_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(pdf, "MAX_CACHED_PAGE_CHARS", 100)
    key = ("/nowhere/pages.pdf", 1, 2)
    request = parse_request({"path": "pages.pdf", "pages": "1-5"})
    data = build_pdf([f"page {n} " + "w" * 40 for n in range(1, 6)])
    result = pdf.read_pdf(io.BytesIO(data), request, "pages.pdf", key)
    assert "page 5" in result.content[0].text
    doc = pdf.DOCUMENTS.get(key, io.BytesIO(data), "pages.pdf")
    assert doc.text_chars <= 100 and list(doc.texts) == [4, 5]


def test_a_warm_pdf_read_does_not_read_the_file():
    key = ("/nowhere/warm.pdf", 3, 4)
    data = build_pdf(["warm page"])
    loads = []

    class Counted(io.BytesIO):
        def read(self, *args):
            loads.append(1)
            return super().read(*args)

    request = parse_request({"path": "warm.pdf"})
    for _ in range(3):
        assert "warm page" in pdf.read_pdf(Counted(data), request, "warm.pdf", key).content[0].text
    assert loads == [1]


def test_pdfium_reads_what_a_page_needs_of_the_file_and_a_warm_read_nothing(tmp_path: Path, engine: Engine,
                                                                             monkeypatch):
    """The file here is 2 MB of padding the page never refers to: PDFium reads its end
    (cross-references) and the page's objects, the cache holds none of it, and a PDF over the size
    limit is refused all the same."""

    data = build_pdf(["the first page"])
    xref = data.rindex(b"\nxref\n") + 1
    padding = b"%" + b"x" * 2_000_000 + b"\n"  # a comment between the objects and the cross-reference table
    moved = data[xref:].replace(b"startxref\n%d" % xref, b"startxref\n%d" % (xref + len(padding)))
    padded = data[:xref] + padding + moved
    (tmp_path / "big.pdf").write_bytes(padded)
    held = pdf.DOCUMENTS.held_bytes
    assert "the first page" in read(engine, path="big.pdf").text()
    doc = next(d for key, d in pdf.DOCUMENTS._docs.items() if key[0] == str((tmp_path / "big.pdf").resolve()))
    first = doc.backend.pdf.source.bytes_read
    assert 0 < first < len(padded) // 20 and doc.size == 0 and pdf.DOCUMENTS.held_bytes <= held
    assert "the first page" in read(engine, path="big.pdf").text()
    assert doc.backend.pdf.source.bytes_read == first, "a warm read reads nothing of the file"
    monkeypatch.setitem(READERS, "pdf", dataclasses.replace(READERS["pdf"], max_bytes=100_000))
    (tmp_path / "big.pdf").write_bytes(padded + b"\n")  # changed: not the document cached
    refused = read(engine, path="big.pdf")
    assert refused.is_error and refused.error.code == "file_too_large", refused.text()


def test_the_servers_imports_hold_no_format_library_and_a_pdf_read_loads_only_pdfium(tmp_path: Path):
    """Cold start: the server's module imports no format library; what a format needs is imported
    when it is first read: a PDF read, PDFium through pypdfium2, and no other format's library."""
    import subprocess
    import sys

    (tmp_path / "a.pdf").write_bytes(build_pdf(["a page"]))
    script = """
import sys
import agentread.serve.jsonrpc
from agentread.engine import Engine
from agentread.request import parse_request
from agentread.workspace import Workspace
libraries = ("pypdf", "pypdfium2", "agentread.readers.pdf.pdfium", "PIL", "openpyxl", "docx", "pptx", "cairosvg",
             "pillow_heif")
print(sorted(name for name in libraries if name in sys.modules))
assert "a page" in Engine(Workspace([sys.argv[1]])).read(parse_request({"path": "a.pdf"})).text()
print(sorted(name for name in libraries if name in sys.modules))
"""
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True)
    expected = ["[]", "['agentread.readers.pdf.pdfium', 'pypdfium2']"]
    assert done.stdout.splitlines() == expected, done.stdout + done.stderr


# --- whole-file reads
# -----------------------------------------------------------------------------------------

def test_a_whole_file_read_takes_what_the_file_holds_when_read():
    from agentread.readers import Source

    def whole(data: bytes, size: int) -> bytes:
        return Source(path="a.pdf", name="a.pdf", stream=io.BytesIO(data), kind="pdf", description="pdf",
                      encoding=None, bom=0, size=size, cache_key=("a.pdf",), from_editor=False, limit=1000).whole()

    data = bytes(range(256)) * 3
    # Read sized to the file as measured; a file that has grown since is read on, up to the limit.
    assert whole(data, len(data)) == data
    assert whole(data, 10) == data
    assert whole(data * 2, 10) == (data * 2)[:1000]
    assert whole(data[:5], 700) == data[:5]  # shrunk since


def test_a_file_up_to_the_count_size_tells_its_total_on_the_first_read(tmp_path: Path, engine: Engine, monkeypatch):
    (tmp_path / "small.log").write_text("".join(f"s{i}\n" for i in range(1, 30_001)))  # ~200 KB
    (tmp_path / "large.log").write_text("".join(f"l{i}\n" for i in range(1, 60_001)))  # ~400 KB
    monkeypatch.setattr(text, "COUNT_REST_BYTES", 300_000)
    small = read(engine, path="small.log")
    assert small.total_lines == 30_000 and "of 30,000" in small.text()
    large = read(engine, path="large.log")
    assert large.total_lines is None and large.next == {"offset": 2001}
    # Once a read has scanned to the end, the total is known.
    read(engine, path="large.log", offset=59_000)
    assert read(engine, path="large.log").total_lines == 60_000


# --- the server
# ----------------------------------------------------------------------------------------------

def test_a_file_stays_quick_while_its_reads_are(tmp_path: Path):
    """What the read service remembers of reads (the test in test_protocol shows where
    they then run)."""
    from agentread.serve.service import QUICK_READ_SECONDS, QUICK_READ_SLOW_SECONDS, _QuickFiles

    workspace = Workspace([str(tmp_path)])
    (tmp_path / "a.txt").write_text("one\n")
    request = parse_request({"path": "a.txt"})
    engine = Engine(workspace)
    plan = engine.plan(request)
    quick = _QuickFiles()

    def still(req=request, live=None) -> bool:
        version = quick.version(workspace, req)
        return version is not None and quick.still(engine.plan(req, live), version)

    quick.note(workspace, plan, 0.001, on_loop=False)
    assert still() and still(parse_request({"path": str(tmp_path / "a.txt")}))
    assert not still(live={plan.resolved.path: "an editor's buffer"}.get)
    assert not still(parse_request({"path": "a.txt", "raw": True}))
    quick.note(workspace, plan, QUICK_READ_SECONDS, on_loop=False)  # slow on a thread: it may have waited
    assert still()
    quick.note(workspace, plan, QUICK_READ_SECONDS, on_loop=True)  # a pause of a loaded machine, maybe
    assert still()
    quick.note(workspace, plan, QUICK_READ_SLOW_SECONDS, on_loop=True)  # slow where nothing else waits for it
    assert not still()
    quick.note(workspace, plan, 0.001, on_loop=False)
    (tmp_path / "a.txt").write_text("one\ntwo\n")  # changed since
    assert not still()


def _server(root: Path):
    from agentread.serve.jsonrpc import AgentReadServer

    server = AgentReadServer()
    server.service.workspace.set_roots([str(root)])
    server.live_buffers = dict  # no editor is open: the server was never initialized by a client
    return server


def test_a_read_cancelled_while_queued_never_runs(tmp_path: Path):
    """Image and Office readers have no checkpoints: a read cancelled before a worker takes it must
    leave the queue, not run to its end once a worker is free."""
    import asyncio
    import threading
    from concurrent.futures import ThreadPoolExecutor

    (tmp_path / "a.txt").write_text("one\n")
    server = _server(tmp_path)
    server.service.threads.executor = ThreadPoolExecutor(1)
    busy = threading.Event()
    server.service.threads.executor.submit(busy.wait, 30)  # the only worker is taken
    ran = []
    plan = server.service.engine.plan
    server.service.engine.plan = lambda *args: ran.append(args) or plan(*args)

    async def play():
        task = asyncio.create_task(server.read({"path": "a.txt"}))
        await asyncio.sleep(0.1)  # queued behind the busy worker
        task.cancel()  # as pygls does on $/cancelRequest
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(play())
    busy.set()
    server.service.threads.executor.shutdown(wait=True)
    assert not ran
