"""Text reading on generated files: line numbers as the editor counts them, windows that
continue exactly, the output budget, long lines, encodings, and memory that stays bounded
however big the file is.

The reference for line numbering is VS Code's model: CRLF, CR and LF end a line; a final terminator
does not start another; form feed, U+2028 and NEL are ordinary characters.
"""

from __future__ import annotations

import codecs
import gzip
import os
import re
import tracemalloc
from pathlib import Path

import pytest

from agentread.engine import Engine
from agentread.limits import MAX_LINE_CHARS, MAX_LINES, MAX_OUTPUT_BYTES
from agentread.request import parse_request
from agentread.workspace import Workspace
from lines import NUMBERED, numbered_rows, take
from rpc import body_of


def vscode_lines(text: str) -> list[str]:
    pieces = re.split(r"\r\n|\r|\n", text)
    if pieces and pieces[-1] == "":
        pieces.pop()
    return pieces


def shown(result) -> list[tuple[int, str]]:
    return numbered_rows(result.text())


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def engine(ws: Path) -> Engine:
    return Engine(Workspace([str(ws)]))


def read(engine: Engine, **params):
    return engine.read(parse_request(params))


def follow(engine: Engine, path: str, **params) -> tuple[list[tuple[int, str]], list]:
    """Read from the start (or the given window) and follow `next` to the end, a cut line
    reassembled from the reads that continue it (`column`)."""
    lines: dict[int, str] = {}
    results = []
    request = {"path": path, **params}
    for _ in range(10_000):
        result = engine.read(parse_request(request))
        assert not result.is_error, result.text()
        results.append(result)
        take(lines, request, shown(result))  # a line read on with `column` joined to its start
        if not result.next:
            return list(lines.items()), results
        assert result.truncated
        if "column" not in result.next:
            assert result.next == {"offset": result.end_line + 1}
        request = {"path": path, **{k: v for k, v in params.items() if k != "offset"}, **result.next}
    pytest.fail("following next never ended")


# --- line numbering
# ---------------------------------------------------------------------------------------

SAMPLES = {
    "lf": "one\ntwo\nthree\n",
    "crlf": "one\r\ntwo\r\nthree\r\n",
    "lone_cr": "one\rtwo\rthree\r",
    "mixed": "a\r\nb\nc\rd\r\r\ne\n\nf",
    "no_trailing_newline": "first\nsecond",
    "blank_lines": "\n\n\nx\n\n",
    "only_newline": "\n",
    "only_cr": "\r",
    "cr_then_crlf": "x\r\r\ny\r\n",
    "not_terminators": "form\x0cfeed\nline\u2028separator\npara\u2029graph\nnext\u0085line\nvt\x0bx\n",
    "unicode": "héllo wörld\n日本語のテキスト\n😀 emoji line\r\n",
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_line_numbers_match_the_editor(ws: Path, engine: Engine, name: str):
    text = SAMPLES[name]
    (ws / "f.txt").write_bytes(text.encode("utf-8"))
    result = read(engine, path="f.txt")
    want = vscode_lines(text)
    assert result.total_lines == len(want)
    assert shown(result) == list(enumerate(want, start=1))


ENCODINGS = [("utf-8-bom", codecs.BOM_UTF8, "utf-8"), ("utf-16-le", codecs.BOM_UTF16_LE, "utf-16-le"),
             ("utf-16-be", codecs.BOM_UTF16_BE, "utf-16-be"), ("utf-32-le", codecs.BOM_UTF32_LE, "utf-32-le"),
             ("utf-32-be", codecs.BOM_UTF32_BE, "utf-32-be")]


@pytest.mark.parametrize("label,bom,codec", ENCODINGS, ids=[e[0] for e in ENCODINGS])
def test_byte_order_marks_are_not_shown(ws: Path, engine: Engine, label: str, bom: bytes, codec: str):
    text = "Ünïcödé first\r\nsecond\u2028same line\rthird\n"
    (ws / "bom.txt").write_bytes(bom + text.encode(codec))
    result = read(engine, path="bom.txt")
    assert not result.is_error
    assert shown(result) == list(enumerate(vscode_lines(text), start=1))
    assert "\ufeff" not in result.text()
    assert result.encoding.endswith("with BOM")
    assert codecs.lookup(result.encoding.removesuffix(" with BOM")).name == codecs.lookup(codec).name


def test_crlf_split_across_read_chunks_counts_once(ws: Path, engine: Engine):
    """A CRLF whose CR ends one internal read chunk and whose LF opens the next is one line end."""
    parts, size = [], 0
    for boundary in (1 << 16, 1 << 20, 2 << 20):  # window and scan chunk sizes, and a later scan chunk
        line = "y" * (boundary - size - 1)  # the CR lands on byte boundary-1, the LF on byte boundary
        parts.append(line + "\r\n")
        size += len(line) + 2
        parts.append("z\r")  # and a lone CR right after
        size += 2
    parts += [f"tail {i}\r\n" for i in range(5)]
    text = "".join(parts)
    (ws / "chunks.txt").write_bytes(text.encode())
    want = vscode_lines(text)
    lines, results = follow(engine, "chunks.txt")
    assert results[0].total_lines == len(want)
    assert [n for n, _ in lines] == list(range(1, len(want) + 1))
    assert [line for _, line in lines] == want
    for offset in range(1, len(want) + 1):  # jumping straight to each line through the index
        fresh = Engine(Workspace([str(ws)]))
        first = shown(read(fresh, path="chunks.txt", offset=offset, limit=1))
        assert first[0][0] == offset
        assert first[0][1][:MAX_LINE_CHARS] == want[offset - 1][:MAX_LINE_CHARS]


# --- windows and continuation
# -----------------------------------------------------------------------------

@pytest.fixture
def ten_k(ws: Path) -> list[str]:
    lines = [f"line {i:05d} " + "abcdefghij"[: i % 11] for i in range(1, 10_001)]
    text = "".join(f"{line}\r\n" if i % 3 == 0 else f"{line}\n" for i, line in enumerate(lines))
    (ws / "10k.txt").write_bytes(text.encode())
    return vscode_lines(text)


def test_following_next_reassembles_the_file(engine: Engine, ten_k: list[str]):
    lines, results = follow(engine, "10k.txt")
    assert [line for _, line in lines] == ten_k
    assert [n for n, _ in lines] == list(range(1, len(ten_k) + 1))
    assert all(r.total_lines == len(ten_k) for r in results)
    assert len(results) == -(-len(ten_k) // MAX_LINES)
    assert not results[-1].truncated and results[-1].end_line == len(ten_k)


def test_offset_limit_windows(engine: Engine, ten_k: list[str]):
    for offset, limit in ((1, 1), (2, 10), (4321, 777), (9990, 50), (10_000, 1), (5000, 2000)):
        result = read(engine, path="10k.txt", offset=offset, limit=limit)
        want = ten_k[offset - 1: offset - 1 + limit]
        assert shown(result) == list(enumerate(want, start=offset))
        assert result.start_line == offset and result.end_line == offset + len(want) - 1
        more = offset - 1 + limit < len(ten_k)
        assert result.truncated == more
        assert result.next == ({"offset": offset + limit} if more else None)
        if more:
            assert f"offset={offset + limit}" in result.text().splitlines()[-1]
    lines, _ = follow(engine, "10k.txt", offset=3, limit=777)
    assert [line for _, line in lines] == ten_k[2:]


def test_limit_over_the_cap_is_capped_not_refused(engine: Engine, ten_k: list[str]):
    result = read(engine, path="10k.txt", limit=5000)
    assert not result.is_error
    assert len(shown(result)) == MAX_LINES
    assert result.next == {"offset": MAX_LINES + 1}


def test_output_budget_is_honoured(ws: Path, engine: Engine):
    want = [f"{i:06d}" + "x" * 994 for i in range(3000)]  # 1000-character lines
    (ws / "wide.txt").write_text("\n".join(want) + "\n")
    first = read(engine, path="wide.txt")
    count = len(shown(first))
    assert 0 < count < MAX_LINES
    assert len(first.text().encode("utf-8")) <= MAX_OUTPUT_BYTES + 300  # the budget plus the closing marker
    assert first.next == {"offset": count + 1} and first.truncated
    assert first.total_lines == 3000
    lines, _ = follow(engine, "wide.txt")
    assert [line for _, line in lines] == want


def test_multibyte_budget_counts_bytes(ws: Path, engine: Engine):
    want = ["漢字" * 300 for _ in range(200)]  # 600 characters, 1800 bytes of UTF-8 per line
    (ws / "cjk.txt").write_text("\n".join(want), encoding="utf-8")
    first = read(engine, path="cjk.txt")
    assert len(first.text().encode("utf-8")) <= MAX_OUTPUT_BYTES + 300
    lines, _ = follow(engine, "cjk.txt")
    assert [line for _, line in lines] == want


def test_the_number_column_widens_at_line_a_million_within_a_window(ws: Path, engine: Engine):
    (ws / "many.txt").write_bytes(b"x\n" * 1_000_100)
    result = read(engine, path="many.txt", offset=999_990, limit=20)
    assert shown(result) == [(n, "x") for n in range(999_990, 1_000_010)]
    rows = result.text().split("\n")
    assert rows[9] == "999999\tx" and rows[10] == "1000000\tx"


def test_a_block_of_numbered_lines_is_each_line_numbered():
    from agentread.numbering import numbered, numbered_lines

    lines = ["a", "", "é\tb %s %d", "last"]
    for first in (1, 999_998, 123_456_789):
        assert numbered_lines(first, lines) == "\n".join(numbered(first + i, line) for i, line in enumerate(lines))


# --- long lines
# -------------------------------------------------------------------------------------------

def test_long_line_is_cut_with_a_marker(ws: Path, engine: Engine):
    long = "".join(chr(ord("a") + i % 26) for i in range(5000))
    (ws / "long.txt").write_text(f"short\n{long}\nafter\n")
    result = read(engine, path="long.txt")
    rows = dict(shown(result))
    assert rows[1] == "short" and rows[3] == "after"
    assert rows[2].startswith(long[:MAX_LINE_CHARS]) and long[:MAX_LINE_CHARS + 1] not in rows[2]
    assert "5,000" in rows[2] and "cut" in rows[2]
    exact = "q" * MAX_LINE_CHARS
    (ws / "exact.txt").write_text(exact + "\n")
    assert shown(read(engine, path="exact.txt")) == [(1, exact)]


def test_a_cut_lines_rest_read_alone_says_the_lines_after_it_follow(ws: Path, engine: Engine):
    (ws / "long.txt").write_text("\n" + "a" * 3000 + "\nlast")
    rest = read(engine, path="long.txt", offset=2, column=MAX_LINE_CHARS + 1, limit=1)
    assert shown(rest) == [(2, "a" * 1000)] and rest.truncated and rest.next == {"offset": 3}
    assert rest.total_lines == 3


def test_fifty_megabyte_single_line_is_read_without_holding_it(ws: Path, engine: Engine):
    size = 50_000_000
    with open(ws / "one.txt", "wb") as f:
        block = b"0123456789abcdef" * 65536  # 1 MiB
        written = 0
        while written < size:
            chunk = block[: size - written]
            f.write(chunk)
            written += len(chunk)
        f.write(b"\nsecond line\n")
    tracemalloc.start()
    try:
        result = read(engine, path="one.txt")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"peak {peak:,} bytes for a {size:,}-byte line"
    rows = dict(shown(result))
    assert rows[1].startswith("0123456789abcdef" * 100) and "cut" in rows[1] and f"{size:,}" in rows[1]
    assert rows[2] == "second line" and result.total_lines == 2
    assert read(engine, path="one.txt", offset=2).text().endswith("second line")


# --- ends and edges
# ---------------------------------------------------------------------------------------

def test_offset_past_end_states_the_total(ws: Path, engine: Engine):
    (ws / "ten.txt").write_text("".join(f"{i}\n" for i in range(10)))
    for offset in (11, 12, 10_000):
        result = read(engine, path="ten.txt", offset=offset)
        assert result.is_error and result.error.code == "offset_past_end"
        assert "10 lines" in result.text() and f"{offset:,}" in result.text()
    last = read(engine, path="ten.txt", offset=10)
    assert shown(last) == [(10, "9")] and not last.truncated


def test_empty_file_note(ws: Path, engine: Engine):
    (ws / "empty.txt").write_bytes(b"")
    result = read(engine, path="empty.txt")
    assert not result.is_error and result.total_lines == 0 and "empty" in result.text().lower()
    past = read(engine, path="empty.txt", offset=2)
    assert past.is_error and past.error.code == "offset_past_end" and "0 lines" in past.text()
    (ws / "bom-only.txt").write_bytes(codecs.BOM_UTF8)
    assert read(engine, path="bom-only.txt").total_lines == 0


def test_mostly_utf8_with_a_few_bad_bytes_reads_as_utf8(ws: Path, engine: Engine):
    good = "\n".join(f"Zeile {i}: Grüße aus Köln, naïve café" for i in range(200))
    raw = good.encode("utf-8")
    raw = raw[:3000] + b"\xff" + raw[3000:6000] + b"\xc3(" + raw[6000:]
    (ws / "mostly.txt").write_bytes(raw)
    result = read(engine, path="mostly.txt")
    assert result.encoding == "utf-8"
    want = vscode_lines(raw.decode("utf-8", errors="replace"))
    assert [line for _, line in shown(result)] == want
    assert sum(line.count("\ufffd") for line in want) == 2


LEGACY = {
    "cp1252": ("cp1252", "“Déjà vu” — the café’s crème brûlée costs 5 € … "
                         "Señor Müller’s naïve façade, œuvre and Œdipe.\n" * 30),
    "gbk": ("gbk", "我们在这里测试简体中文的编码识别。今天天气很好，我们一起去公园散步吧！"
                   "这个文件使用国标编码保存，阅读器应当正确显示每一行。\n" * 20),
    "shift_jis": ("shift_jis", "これは日本語のテキストです。今日はとても良い天気ですね。"
                               "このファイルはシフトJISで保存されています、正しく表示されるはずです。\n" * 20),
}


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_encodings_are_detected(ws: Path, engine: Engine, name: str):
    codec, text = LEGACY[name]
    raw = text.encode(codec)
    (ws / f"{name}.txt").write_bytes(raw)
    result = read(engine, path=f"{name}.txt")
    assert not result.is_error and result.kind == "text"
    assert raw.decode(result.encoding) == text
    assert [line for _, line in shown(result)] == vscode_lines(text)


def test_gzip_named_txt_is_refused_as_binary(ws: Path, engine: Engine):
    data = gzip.compress(b"hello world\n" * 1000)
    (ws / "notes.txt").write_bytes(data)
    result = read(engine, path="notes.txt")
    assert result.is_error and result.error.code == "binary"
    assert "gzip" in result.text() and f"{len(data):,}" in result.text()


def test_text_named_bin_reads_as_text(ws: Path, engine: Engine):
    (ws / "data.bin").write_text("plain words\nsecond\n")
    result = read(engine, path="data.bin")
    assert result.kind == "text" and shown(result) == [(1, "plain words"), (2, "second")]


def test_crlf_numbering_through_the_server(tmp_path: Path, server):
    text = "a\r\nb\rc\nd\u2028e\x0cf\n"
    (tmp_path / "mixed.txt").write_bytes(text.encode())
    result = server.read(path="mixed.txt")
    assert result["totalLines"] == len(vscode_lines(text)) == 4
    rows = [NUMBERED.match(r).groups() for r in body_of(result).split("\n")]
    assert [(int(n), line) for n, line in rows] == list(enumerate(vscode_lines(text), start=1))


# --- reading from the end
# ---------------------------------------------------------------------------------

def test_negative_offset_counts_back_from_the_end(engine: Engine, ten_k: list[str]):
    last = read(engine, path="10k.txt", offset=-5)
    assert shown(last) == list(enumerate(ten_k, start=1))[-5:] and not last.truncated
    assert (last.start_line, last.end_line, last.total_lines) == (9996, 10_000, 10_000)
    middle = read(engine, path="10k.txt", offset=-50, limit=10)
    assert [n for n, _ in shown(middle)] == list(range(9951, 9961)) and middle.next == {"offset": 9961}
    before_the_start = read(engine, path="10k.txt", offset=-20_000, limit=3)  # as tail -n does: from line 1
    assert [n for n, _ in shown(before_the_start)] == [1, 2, 3]


@pytest.fixture
def uncounted(monkeypatch):
    """Every file treated as too large to count on a first read; tiny scan chunks, so that line ends
    straddle their boundaries everywhere."""
    from agentread.readers import text

    monkeypatch.setattr(text, "COUNT_REST_BYTES", 0)
    monkeypatch.setattr(text, "SCAN_CHUNK", 3)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_end_of_a_file_too_large_to_count_is_numbered_from_the_end(ws: Path, engine: Engine, uncounted,
                                                                      name: str):
    text = SAMPLES[name]
    (ws / "f.txt").write_bytes(text.encode("utf-8"))
    want = vscode_lines(text)
    for back in range(1, len(want)):  # found from the end: numbered from it, the total unknown
        result = read(engine, path="f.txt", offset=-back, limit=1)
        assert shown(result) == [(-back, want[-back])], back
        assert result.total_lines is None and "numbered from the end" in result.text()
    # Reaching back to the first line counts them all: then the editor's numbers, and from
    # then on too.
    result = read(engine, path="f.txt", offset=-len(want) - 1)
    assert shown(result) == list(enumerate(want, start=1)) and result.total_lines == len(want)
    assert read(engine, path="f.txt", offset=-1).start_line == len(want)


def test_following_next_from_the_end(engine: Engine, ten_k: list[str], uncounted):
    lines, results = follow(engine, "10k.txt", offset=-2_500)
    assert lines == [(n - len(ten_k) - 1, line) for n, line in enumerate(ten_k, start=1)][-2_500:]
    assert [r.next for r in results] == [{"offset": -500}, None]
    assert "Showing lines -2,500 to -501 (limit of 2,000 lines). Call again with offset=-500" in results[0].text()


def test_lines_appended_after_the_end_was_found_are_not_numbered_past_it(ws: Path, engine: Engine, uncounted,
                                                                          monkeypatch):
    from agentread.readers import text

    path = ws / "growing.log"
    path.write_text("".join(f"line {i}\n" for i in range(100)))
    found = text._start_from_end

    def then_grow(f, start, back):  # the log is written to between finding the end and reading the window
        result = found(f, start, back)
        with open(path, "a") as log:
            log.write("new 1\nnew 2\n")
        return result

    monkeypatch.setattr(text, "_start_from_end", then_grow)
    result = read(engine, path="growing.log", offset=-2)
    assert shown(result) == [(-2, "line 98"), (-1, "line 99")] and result.next is None and not result.truncated


def test_the_end_of_a_large_csv_keeps_its_header(ws: Path, engine: Engine, uncounted):
    (ws / "t.csv").write_text("id,name\n" + "".join(f"{i},n{i}\n" for i in range(100)))
    result = read(engine, path="t.csv", offset=-2)
    assert result.text().split("\n")[0] == "[Header row (line 1): id,name]"
    assert shown(result) == [(-2, "98,n98"), (-1, "99,n99")]


def test_the_end_of_an_empty_file(ws: Path, engine: Engine, uncounted):
    (ws / "empty.txt").write_bytes(b"")
    assert read(engine, path="empty.txt", offset=-10).total_lines == 0


def _bytes_read() -> int:
    """Bytes this process has read through system calls (page cache hits included)."""
    fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return int(fields["rchar"])


# --- big files: streaming and the line index
# --------------------------------------------------------------

def test_three_hundred_megabyte_file_first_window_is_bounded(tmp_path: Path):
    path = tmp_path / "big.log"
    line = b"2024-01-01T00:00:00 INFO request served in 12 ms from worker pool alpha, status ok\n"  # 83 bytes
    block = line * 12_000  # about 1 MB
    try:
        with open(path, "wb") as f:
            while f.tell() < 300_000_000:
                f.write(block)
        engine = Engine(Workspace([str(tmp_path)]))
        tracemalloc.start()
        try:
            result = read(engine, path="big.log")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 16 << 20, f"peak {peak:,} bytes"
        rows = shown(result)
        assert rows[0] == (1, line.decode().rstrip("\n")) and rows[-1][0] == len(rows)
        assert result.truncated and result.next == {"offset": len(rows) + 1}
        total = os.path.getsize(path) // len(line)
        before = _bytes_read()
        end = read(engine, path="big.log", offset=-3)
        assert _bytes_read() - before < 1 << 20  # found reading backwards from the end, not by a scan
        assert shown(end) == [(n, line.decode().rstrip("\n")) for n in (-3, -2, -1)]
        assert (end.start_line, end.end_line, end.total_lines) == (-3, -1, None)
        tracemalloc.start()
        try:
            tail = read(engine, path="big.log", offset=total - 1)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 16 << 20
        assert [n for n, _ in shown(tail)] == [total - 1, total] and tail.total_lines == total
    finally:
        path.unlink(missing_ok=True)


def test_line_index_sees_appended_lines(ws: Path, engine: Engine):
    path = ws / "grow.txt"
    path.write_text("".join(f"row {i}\n" for i in range(1, 50_001)))
    for _ in range(2):
        result = read(engine, path="grow.txt", offset=49_990)
        assert result.total_lines == 50_000 and shown(result)[-1] == (50_000, "row 50000")
    with open(path, "a") as f:
        f.write("".join(f"row {i}\n" for i in range(50_001, 50_011)))
    result = read(engine, path="grow.txt", offset=49_990)
    assert result.total_lines == 50_010
    assert shown(result) == [(i, f"row {i}") for i in range(49_990, 50_011)]


def test_line_index_sees_a_same_size_rewrite(ws: Path, engine: Engine):
    path = ws / "same.txt"
    path.write_text("".join(f"{i:04d}\n" for i in range(5000)))  # 5000 lines of 5 bytes
    assert read(engine, path="same.txt", offset=4000).total_lines == 5000
    st = path.stat()
    path.write_text("".join(f"{i:09d}\n" for i in range(2500)))  # same 25,000 bytes, 2500 lines
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert path.stat().st_size == st.st_size
    result = read(engine, path="same.txt", offset=2000)
    assert result.total_lines == 2500 and shown(result)[0] == (2000, f"{1999:09d}")
    past = read(engine, path="same.txt", offset=4000)
    assert past.is_error and past.error.code == "offset_past_end" and "2,500" in past.text()


@pytest.mark.parametrize("count,ending", [(MAX_LINES, "\n"), (MAX_LINES, ""), (MAX_LINES + 1, "\n"),
                                          (MAX_LINES + 1, "")])
def test_window_ending_exactly_at_the_cap(ws: Path, engine: Engine, count: int, ending: str):
    (ws / "cap.txt").write_text("\n".join(f"l{i}" for i in range(1, count + 1)) + ending)
    result = read(engine, path="cap.txt")
    assert len(shown(result)) == MAX_LINES and result.total_lines == count
    if count == MAX_LINES:
        assert not result.truncated and result.next is None
        assert "offset=" not in result.text()
    else:
        assert result.truncated and result.next == {"offset": MAX_LINES + 1}
        assert shown(read(engine, path="cap.txt", **result.next)) == [(count, f"l{count}")]


@pytest.mark.parametrize("text", ["café\n", "Grüße\n", "Zürich\n", "São Paulo\n", "Ça va bien, merci.\n",
                                  "prix: 5 €\n"])
def test_short_western_text_in_cp1252(ws: Path, engine: Engine, text: str):
    (ws / "short.txt").write_bytes(text.encode("cp1252"))
    result = read(engine, path="short.txt")
    assert shown(result) == [(1, text.rstrip("\n"))]


def test_shown_lines_of_a_window_and_of_a_tail(ws: Path, engine: Engine):
    (ws / "t.txt").write_text("".join(f"row {n}\n" for n in range(1, 101)))
    assert read(engine, path="t.txt").shown == {"lines": [1, 100]}
    assert read(engine, path="t.txt", offset=10, limit=5).shown == {"lines": [10, 14]}
    assert read(engine, path="t.txt", offset=-3).shown == {"lines": [98, 100]}
    (ws / "empty.txt").write_text("")
    assert read(engine, path="empty.txt").shown is None


def test_shown_names_the_csv_header_row_put_before_a_window(ws: Path, engine: Engine):
    (ws / "t.csv").write_text("id,name\n" + "".join(f"{n},n{n}\n" for n in range(1, 50)))
    assert read(engine, path="t.csv", offset=20, limit=3).shown == {"lines": [20, 22], "headerLine": 1}
    assert read(engine, path="t.csv").shown == {"lines": [1, 50]}


@pytest.mark.parametrize("name", ["long.txt", "wide.txt", "doc.pdf", "report.docx", "deck.pptx", "sheet.xlsx"])
def test_truncated_always_comes_with_next_and_following_it_ends(ws: Path, engine: Engine, name: str):
    """Across the readers: a reply cut short names the call that continues it, and that
    call moves on."""
    import docx
    import openpyxl
    from pptx import Presentation

    from builders import build_pdf

    if name == "long.txt":
        (ws / name).write_text("".join(f"line {n}\n" for n in range(1, 5001)))
    elif name == "wide.txt":
        (ws / name).write_text("".join("w" * 3000 + "\n" for _ in range(100)))
    elif name == "doc.pdf":
        (ws / name).write_bytes(build_pdf([f"page {n}" for n in range(1, 50)]))
    elif name == "report.docx":
        d = docx.Document()
        for n in range(4000):
            d.add_paragraph(f"para {n}")
        d.save(ws / name)
    elif name == "deck.pptx":
        prs = Presentation()
        for n in range(300):
            prs.slides.add_slide(prs.slide_layouts[1]).shapes.title.text = f"slide {n} " + "t" * 200
        prs.save(ws / name)
    else:
        wb = openpyxl.Workbook()
        for n in range(1, 5001):
            wb.active.append([n, "x" * 30])
        wb.create_sheet("second").append(["end"])
        wb.save(ws / name)
    params: dict = {"path": name}
    for _ in range(1000):
        result = read(engine, **params)
        assert not result.is_error, result.text()
        assert result.truncated == (result.next is not None)
        if result.next is None:
            break
        assert {"path": name, **result.next} != params
        params = {"path": name, **result.next}
    else:
        pytest.fail("next never ended")
