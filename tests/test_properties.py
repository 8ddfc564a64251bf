"""Properties over generated input (hypothesis): the sniffer, request paths, the line-end counter,
text windows, encodings, notebook rendering.

Each property is bounded (max_examples) so the file runs in well under a minute. Files are written
under one folder per module with a fresh name per example: the readers' caches key by path, mtime
and size, and two examples of one size written within a clock tick must not share an entry.
"""

from __future__ import annotations

import codecs
import itertools
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from agentread.engine import Engine
from agentread.limits import MAX_LINE_CHARS
from agentread.readers.notebook import read_notebook
from agentread.request import parse_request
from agentread.result import ReadError, ReadResult
from agentread.sniff import sniff
from agentread.workspace import Workspace
from lines import take

KINDS = {"text", "pdf", "image", "notebook", "office", "legacy_office", "archive", "mail", "rtf", "binary"}
TERMINATORS = re.compile(rb"\r\n|\r|\n")
BOUNDED = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                           HealthCheck.data_too_large])
_names = itertools.count()


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("properties")


@pytest.fixture(scope="module")
def engine(folder: Path) -> Engine:
    return Engine(Workspace([str(folder)]))


def write(folder: Path, data: bytes, suffix: str = ".txt") -> Path:
    path = folder / f"f{next(_names)}{suffix}"
    path.write_bytes(data)
    return path


def reference_lines(body: bytes) -> list[bytes]:
    """Lines as the editor counts them: LF, CRLF and lone CR end a line; a final terminator
    starts none."""
    pieces = TERMINATORS.split(body)
    if pieces and pieces[-1] == b"":
        pieces.pop()
    return pieces


def shown_lines(result: ReadResult) -> list[tuple[int, str]]:
    """(number, text) of each numbered line of a text result, the note on lines numbered from the
    end and the closing line of a cut window left out."""
    lines = result.text().split("\n")
    if lines[0].startswith("[Lines numbered from the end"):
        lines.pop(0)
    if result.truncated:
        assert lines[-1].startswith("[Showing line"), lines[-1]
        lines.pop()
    out = []
    for line in lines:
        number, tab, text = line.partition("\t")
        assert tab and number.strip().removeprefix("-").isdigit() and len(number) >= 6, line[:80]
        out.append((int(number), text))
    return out


# ---- the sniffer
# ------------------------------------------------------------------------------------------

@settings(max_examples=400, deadline=None)
@given(head=st.binary(max_size=4096), name=st.sampled_from(["a.txt", "a.ipynb", "a.pdf", "a.png", "a", "A.IPYNB"]))
def test_sniff_never_raises_and_names_a_known_kind(head: bytes, name: str):
    info = sniff(head, name)
    assert info.kind in KINDS
    assert 0 <= info.bom <= 4
    if info.kind == "text":
        codecs.lookup(info.encoding)  # a codec Python knows


@settings(max_examples=150, deadline=None)
@given(prefix=st.sampled_from([b"%PDF-1.7\n", b"\x89PNG\r\n\x1a\n", b"\xef\xbb\xbf", b"\xff\xfe", b"{\"cells\":",
                               b"GIF89a", b"\xff\xd8\xff", b"PK\x03\x04", b"\x1f\x8b\x08", b"BZh9",
                               b"\xfd7zXZ\x00", b""]),
       rest=st.binary(max_size=2048))
def test_sniff_survives_magic_numbers_followed_by_junk(prefix: bytes, rest: bytes):
    assert sniff(prefix + rest, "x.ipynb").kind in KINDS


# ---- request paths
# ----------------------------------------------------------------------------------------

_path_text = st.text(st.characters(blacklist_characters="\x00"), max_size=40)  # NUL: refused by parse_request


@BOUNDED
@given(path=st.one_of(_path_text, _path_text.map("file://".__add__), _path_text.map("~".__add__),
                      st.tuples(st.sampled_from(["file://", "file:///", "file://localhost/", "/", "~/", "./"]),
                                _path_text, st.sampled_from(["", "%00", "%ff", "[", "]", ":99", "\ud800"]))
                      .map("".join)))
def test_any_path_is_read_or_refused_with_a_result_never_an_exception(engine, path):
    """Whatever path a model sends (URIs, ~, brackets, escapes, lone surrogates): a result from the
    engine, and no exception from the consent check a client asks before reading either."""
    import orjson

    from agentread.request import InvalidParams
    from agentread.result import ReadError

    try:
        request = parse_request({"path": path})
    except InvalidParams:
        return
    result = engine.read(request)
    orjson.dumps(result.to_json())  # as the server sends it: UTF-8, which has no lone surrogates
    try:
        engine.workspace.refusal(path)
    except ReadError as exc:  # a path that names no file: the read was refused for the same
        assert result.is_error and result.error.code == exc.code


# ---- text windows
# -----------------------------------------------------------------------------------------


# Bytes rich in line ends: runs of CR and LF of every length, so that block and chunk edges fall
# between a CR and its LF, and plain bytes (a NUL, a high byte) in between.
_line_end_bytes = st.lists(st.sampled_from([b"\r", b"\n", b"\r\n", b"a", b"\x00", b"\xff", b"\r" * 300,
                                            b"\n" * 300, b"ab" * 150]), max_size=200).map(b"".join)


@BOUNDED
@given(data=_line_end_bytes, cut=st.floats(0, 1))
def test_the_line_end_counters_count_as_the_editor_splits(data: bytes, cut: float):
    from agentread.readers import text

    n = int(len(data) * cut)
    want = len(TERMINATORS.findall(data[:n]))  # a CR at the end of the prefix counts as a line end
    assert text.count_line_ends(bytearray(data), n) == text._count_in_python(bytearray(data), n) == want


_piece = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40).map(lambda s: s.encode("utf-8")),
    st.sampled_from([b"\n", b"\r\n", b"\r", b"\r\r\n", b"\n\r", b"\n\n", b"\t", b"\x0c"]),
    st.sampled_from([b"\xff", b"\xc3", b"\x80abc", b"\xe2\x82", b"\xed\xa0\x80"]),  # invalid UTF-8
    st.builds(lambda ch, n: ch * n, st.sampled_from([b"a", b"\xc3\xa9", b"xy"]), st.integers(1500, 4500)),
)
text_bytes = st.lists(_piece, max_size=60).map(b"".join)


def _valid_utf8(block: bytes) -> bool:
    """Whether a block holds no bad UTF-8 (a character cut at its end is not bad: the block
    ends there)."""
    try:
        block.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.reason == "unexpected end of data"
    return True


@settings(BOUNDED, max_examples=400)  # fast: no file, no engine
@example(data=b"\n\xed\xa0\x80\n0000000", cut=0.5, first=1, limit=2, budget=19)  # line 2 grows from 3 to 9 bytes
@given(data=st.one_of(text_bytes, _line_end_bytes), cut=st.one_of(st.just(1.0), st.floats(0, 1)),
       first=st.sampled_from([1, 2, 9_995, 99_990, 999_999, 10**15, -1, -30, -100_010, -(10**15)]),
       limit=st.integers(1, 40),
       budget=st.integers(1, 4000))
def test_a_block_numbered_at_once_reads_as_the_line_loop_numbers_it(data, cut, first, limit, budget):
    """The two block renderers of a text window (compiled, and in a few C-level calls) against the
    line loop they stand in for (Window over the editor's lines): the same text, lines and reason to
    stop, or None where they leave it to the loop. The block may end mid-line, mid-CRLF or
    mid-character, as a read's block does."""
    from agentread.numbering import Window
    from agentread.readers import text

    block = data[: int(len(data) * cut)]
    eof = len(block) == len(data)
    python = text._number_block(block, eof, first, limit, budget, "utf-8")
    answers = [python]
    if text.number_window is not None:
        compiled = text.number_window(block, eof, first, limit, budget, MAX_LINE_CHARS)
        # It sizes lines by their bytes, so where bad bytes grow when replaced it may leave to the
        # loop a window that _number_block, sizing the replaced text, can end; on valid text it
        # decides whatever that can.
        assert compiled is not None or python is None or not _valid_utf8(block)
        if compiled is not None:
            rendered, shown, stop = compiled
            try:
                answers.append((rendered.decode("utf-8"), first + shown, text._stop_reason(stop, limit, budget)))
            except UnicodeDecodeError:
                pass  # bad bytes: _plain_window hands the block to _number_block, checked here too
    win = Window(first, limit, budget)
    for line in reference_lines(data):
        if not win.add(line.decode("utf-8", errors="replace")):
            break
    for answer in answers:
        if answer is not None:
            assert answer == ("\n".join(win.lines), win.next_number, win.reason)


@BOUNDED
@given(data=text_bytes, offset=st.integers(1, 80), limit=st.one_of(st.none(), st.integers(1, 25)))
def test_windows_number_lines_like_the_editor_and_next_continues_exactly(folder, engine, data, offset, limit):
    path = write(folder, data)
    info = sniff(data[:65536], str(path))
    assume(info.kind == "text" and not info.encoding.startswith(("utf-16", "utf-32")))
    expected = [line.decode(info.encoding, errors="replace") for line in reference_lines(data[info.bom:])]
    params = {"path": str(path), "offset": offset, **({"limit": limit} if limit else {})}
    result = engine.read(parse_request(params))
    if offset > len(expected) and not (offset == 1 and not expected):
        assert result.is_error and result.error.code == "offset_past_end", result.text()[:300]
        assert f"{len(expected):,} line" in result.error.message
        return
    if not expected:
        assert not result.is_error and result.total_lines == 0
        return
    seen: dict[int, str] = {}
    asked = params
    for _ in range(len(expected) + sum(len(line) // MAX_LINE_CHARS for line in expected) + 2):
        assert not result.is_error, result.text()[:300]
        window = shown_lines(result)
        assert window, "a window shows at least one line"
        assert (result.start_line, result.end_line) == (window[0][0], window[-1][0])
        if result.total_lines is not None:
            assert result.total_lines == len(expected)
        if limit:
            assert len(window) <= limit
        take(seen, asked, window)
        if not result.truncated:
            break
        if "column" not in result.next:
            assert result.next == {"offset": window[-1][0] + 1}
        asked = {**params, **result.next}
        result = engine.read(parse_request(asked))
    assert list(seen) == list(range(offset, len(expected) + 1)), "each line once, in order"
    for number, text in seen.items():
        assert text == expected[number - 1], number


@BOUNDED
@given(data=text_bytes, share=st.floats(0, 1), limit=st.one_of(st.none(), st.integers(1, 25)),
       chunk=st.integers(1, 64))
def test_windows_counted_from_the_end_number_lines_like_the_editor(folder, engine, data, share, limit, chunk):
    """In a file too large to count, the lines found reading backwards are the
    editor's last lines."""
    from agentread.readers import text

    path = write(folder, data)
    info = sniff(data[:65536], str(path))
    assume(info.kind == "text" and not info.encoding.startswith(("utf-16", "utf-32")))
    expected = [line.decode(info.encoding, errors="replace") for line in reference_lines(data[info.bom:])]
    assume(len(expected) > 1)
    back = 1 + int(share * (len(expected) - 2))  # reaching back to line 1 counts every line: numbered from it
    params = {"path": str(path), "offset": -back, **({"limit": limit} if limit else {})}
    seen: dict[int, str] = {}
    asked = params
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(text, "COUNT_REST_BYTES", 0)
        patch.setattr(text, "SCAN_CHUNK", chunk)
        result = engine.read(parse_request(params))
        for _ in range(back + sum(len(line) // MAX_LINE_CHARS for line in expected) + 1):
            assert not result.is_error and result.total_lines is None, result.text()[:300]
            # A window holding characters no editor draws (a code page's ZWNJ) shows them marked
            # (test_hidden.py); here the numbering is checked, on the file's own text.
            assume(not result.hidden)
            assert result.text().startswith("[Lines numbered from the end of the file: -1 is its last line.")
            take(seen, asked, shown_lines(result))
            if not result.truncated:
                break
            asked = {**params, **result.next}
            result = engine.read(parse_request(asked))
    assert list(seen) == list(range(-back, 0)), "each line once, in order"
    for number, line in seen.items():
        assert line == expected[number], number


# ---- encodings
# --------------------------------------------------------------------------------------------

_plain = st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufeff"), max_size=300)
_with_breaks = st.lists(st.one_of(_plain, st.sampled_from(["\n", "\r\n", "\r"])), max_size=12).map("".join)


def _round_trip(engine: Engine, folder: Path, text: str, data: bytes) -> ReadResult:
    path = write(folder, data)
    lines = reference_lines(text.encode("utf-8"))
    result = engine.read(parse_request({"path": str(path)}))
    assert not result.is_error, result.text()[:300]
    if not lines:
        assert result.total_lines == 0
        return result
    assert not result.truncated
    assert [t for _, t in shown_lines(result)] == [line.decode("utf-8") for line in lines]
    return result


@settings(max_examples=60, deadline=None)
@given(text=_with_breaks, encoding=st.sampled_from(["utf-8-sig", "utf-16", "utf-16-be-bom", "utf-32"]))
def test_text_with_a_bom_reads_back_equal(folder, engine, text, encoding):
    if encoding == "utf-16-be-bom":
        data = codecs.BOM_UTF16_BE + text.encode("utf-16-be")
    else:
        data = text.encode(encoding)
    result = _round_trip(engine, folder, text, data)
    if text:
        assert "with BOM" in result.encoding


@settings(max_examples=60, deadline=None)
@given(text=_with_breaks)
def test_utf8_without_bom_reads_back_equal(folder, engine, text):
    data = text.encode("utf-8")
    assume(sniff(data, "x.txt").kind == "text")  # text that opens with a magic number is rightly not text
    result = _round_trip(engine, folder, text, data)
    if text:
        assert result.encoding == "utf-8"


# Real sentences: a legacy code page is only well-defined for prose a detector can recognise (a
# string of "café café ... déjà" fits the Baltic page as well as the Western one).
_WESTERN = ["Le garçon était très content de voir sa fiancée à la gare.",
            "Die Größe der Straße über München überrascht jeden Besucher.",
            "El señor compró café y pan en la pequeña tienda del pueblo.",
            "Déjà vu: the naïve rôle of the façade was discussed at length.",
            "Ça coûte 5 € et c'est déjà très cher pour une journée.",
            "Müller und Söhne liefern Käse, Brötchen und Äpfel aus.",
            "The plain ASCII line in between, with nothing special about it."]


def test_two_french_sentences_in_cp1252_are_read_as_cp1252(folder, engine):
    text = "Le garçon était très content de voir sa fiancée à la gare. Ça coûte 5 € et c'est déjà très cher.\n"
    result = _round_trip(engine, folder, text, text.encode("cp1252"))
    assert result.encoding == "cp1252"


@settings(max_examples=40, deadline=None)
@given(sentences=st.lists(st.sampled_from(_WESTERN), min_size=2, max_size=30),
       breaks=st.lists(st.sampled_from([" ", "\n", "\r\n", "\r"]), min_size=30, max_size=30))
def test_western_cp1252_prose_reads_back_equal(folder, engine, sentences, breaks):
    text = "".join(w + b for w, b in zip(sentences, breaks))
    assume(any(ord(ch) > 127 for ch in text))
    result = _round_trip(engine, folder, text, text.encode("cp1252"))
    assert result.encoding == "cp1252"


# ---- notebooks
# --------------------------------------------------------------------------------------------

# Escapes go only where outputs carry them (ANSI below): sources, names and metadata are the
# user's own text.
_txt = st.text(st.characters(blacklist_characters="\x1b"), max_size=20)
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False), _txt)
junk = st.recursive(_scalar, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(_txt, inner, max_size=4)),
                    max_leaves=12)
BASE64_RUN = "iVBORw0KGgo" + "A" * 3000
ANSI = st.sampled_from(["\x1b[31mred\x1b[0m\n", "\x1b[1;32mok\x1b[0m", "plain\n", "50%\r100%\n", "\x1b]0;t\x07x",
                        "\x1b[2K\x1b[1G", "a\bb\n"])
_ansi_text = st.one_of(ANSI, st.lists(ANSI, max_size=5), junk)
_mime = st.sampled_from(["text/plain", "image/png", "image/jpeg", "image/svg+xml", "text/html",
                         "application/json", "application/vnd.jupyter.widget-view+json", "text/markdown", "x"])
_payload = st.one_of(_ansi_text, st.just(BASE64_RUN), st.just([BASE64_RUN[:1000], BASE64_RUN[1000:]]))
output = st.one_of(junk, st.fixed_dictionaries({
    "output_type": st.one_of(st.sampled_from(["stream", "execute_result", "display_data", "error", "pyout",
                                              "pyerr", "nonsense"]), junk),
}, optional={
    "name": st.one_of(st.sampled_from(["stdout", "stderr"]), junk),
    "text": _ansi_text,
    "data": st.one_of(st.dictionaries(_mime, _payload, max_size=3), junk),
    "metadata": junk,
    "traceback": st.one_of(st.lists(_ansi_text, max_size=3), junk),
    "ename": junk, "evalue": _ansi_text, "execution_count": junk,
    "png": st.just(BASE64_RUN),
}))
cell = st.one_of(junk, st.fixed_dictionaries({
    "cell_type": st.one_of(st.sampled_from(["code", "markdown", "raw", "heading"]), junk),
}, optional={
    "source": st.one_of(_txt, st.lists(_txt), junk),
    "outputs": st.one_of(st.lists(output, max_size=4), junk),
    "execution_count": junk, "metadata": junk,
    "id": st.one_of(st.sampled_from(["a1", "a1", "bad id!", ""]), junk),
    "attachments": st.one_of(st.dictionaries(_txt, st.dictionaries(_mime, _payload, max_size=2),
                                             max_size=2), junk),
}))
notebook = st.fixed_dictionaries({
    "cells": st.one_of(st.lists(cell, max_size=8), junk),
}, optional={"nbformat": st.one_of(st.sampled_from([4, 3, 2, 5]), junk), "nbformat_minor": junk,
             "metadata": st.one_of(st.just({"kernelspec": {"language": "python"}}), junk),
             "worksheets": st.one_of(st.lists(st.fixed_dictionaries({"cells": st.lists(cell, max_size=4)})), junk)})
_cells_arg = st.sampled_from([None, "outline", "all", "1", "2-3", "1,3-", "a1", "9", "0", "x-y", "1-1,1"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=notebook, cells=_cells_arg, offset=st.one_of(st.none(), st.integers(1, 30)),
       limit=st.one_of(st.none(), st.integers(1, 10)))
def test_notebook_rendering_raises_only_read_errors_and_leaks_no_escapes_or_base64(doc, cells, offset, limit):
    data = json.dumps(doc).encode("utf-8")
    params = {"path": "nb.ipynb", "cells": cells, "offset": offset, "limit": limit}
    request = parse_request({k: v for k, v in params.items() if v is not None})
    try:
        result = read_notebook(data, request, "/ws/nb.ipynb")
    except ReadError as exc:
        assert exc.code in {"not_a_notebook", "invalid_cells", "cell_not_found", "offset_past_end", "too_complex"}
        return
    text = result.text()
    assert "\x1b" not in text
    assert not re.search(r"[A-Za-z0-9+/]{200,}", text), "base64 shown as text"
    json.dumps(result.to_json())


@BOUNDED
@given(data=st.lists(st.tuples(st.integers(0, 300), st.sampled_from([b" ", b"~", b"\x7f", b"\x1f", b"\x00", b"\x80",
                                                                     b"\xff", b'"', b"\\"])), max_size=6)
       .map(lambda runs: b"".join((b"iVBOR+/=0z" * 30)[:n] + byte for n, byte in runs)),  # plain runs, then a byte
       cut=st.floats(0, 1), start=st.integers(0, 900))
def test_the_compiled_payload_check_stops_where_a_json_string_stops_being_plain(data, cut, start):
    from agentread.readers.notebook import model

    assume(model.plain_end is not None)
    start = min(start, len(data))
    end = start + int((len(data) - start) * cut)
    plain = start
    while plain < end and 0x20 <= data[plain] < 0x80 and data[plain] not in b'"\\':
        plain += 1
    assert model.plain_end(data, start, end) == plain


def test_the_compiled_payload_check_refuses_a_range_outside_its_bytes():
    from agentread.readers.notebook import model

    assert model.plain_end is not None, "setup.py builds agentread._scan"
    for start, end in ((-1, 2), (2, 1), (0, 4)):
        with pytest.raises(ValueError, match=f"\\[{start}:{end}\\] is outside 3 bytes"):
            model.plain_end(b"abc", start, end)


# Pieces written into a notebook's raw bytes inside and around an image payload: JSON escapes of
# each kind (the \u ones included), what breaks a JSON string (a raw quote, newline, control byte,
# lone backslash), non-ASCII.
_PAYLOAD_EDITS = st.sampled_from([b"\\n", b"\\r", b"\\/", b"\\\\", b'\\"', b"\\t", b"\\b", b"\\u0041", b"\\u00e9",
                                  b"\\ud83d\\ude00", b"\\u00", b"\\", b'"', b"\n", b"\x01", b"\xc3\xa9", b"=", b"%"])


def _noise_png_b64(side: int) -> str:
    import base64
    import io
    import random

    from PIL import Image

    out = io.BytesIO()
    Image.frombytes("L", (side, side), random.Random(side).randbytes(side * side)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


_PNG_B64 = _noise_png_b64(96)  # 12 KB of base64: long enough to be set aside


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=st.lists(st.tuples(st.integers(-3, 9000), _PAYLOAD_EDITS), min_size=1, max_size=4),
       cells=st.sampled_from([None, "outline"]))
def test_notebook_reads_the_same_with_image_payloads_set_aside_or_parsed(edits, cells):
    """Long image payloads are left in the file's bytes (notebook/model.py); whatever a
    payload holds, the read (or the error) is the one the parser gives when it reads every
    payload itself."""
    from agentread.readers.notebook import model

    plots = [{"cell_type": "code", "source": f"plot({i})", "metadata": {}, "execution_count": i, "outputs": [
        {"output_type": "display_data", "metadata": {},
         "data": {"text/plain": "<Figure>", "image/png": _PNG_B64}}]} for i in range(3)]
    data = bytearray(json.dumps({"cells": plots, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode())
    starts = [match.end() for match in model._PAYLOAD_KEY.finditer(bytes(data))]
    assert len(model._set_aside(bytes(data), "\x00mark:")[1]) == 3  # before the edits, every payload is set aside
    for at, piece in edits:
        where = min(len(data), max(0, starts[at % 3] + at))
        data[where:where] = piece
    request = parse_request({"path": "nb.ipynb", **({"cells": cells} if cells else {})})

    def outcome():
        try:
            return read_notebook(bytes(data), request, "/ws/nb.ipynb").to_json()
        except ReadError as exc:
            return exc.code, exc.message

    set_aside = outcome()
    compiled, parsed_at = model.plain_end, model.PAYLOAD_MIN_CHARS
    try:
        model.plain_end = None  # each payload checked by orjson whole, as where _scan is not compiled
        assert outcome() == set_aside
        model.PAYLOAD_MIN_CHARS = 10**12
        assert outcome() == set_aside
    finally:
        model.plain_end, model.PAYLOAD_MIN_CHARS = compiled, parsed_at
