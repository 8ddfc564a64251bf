"""A search with no time to spend (FIND_TIME_SHARE 0) stops after its first piece of text, whatever
the machine's speed: each reply lists the hits so far and where it stopped, and following `next`
lists every hit once, in every kind of file."""

from __future__ import annotations

import io

import pytest

from agentread import find
from agentread.readers import Source
from agentread.readers import text as text_reader
from agentread.readers.notebook import search_notebook
from agentread.readers.office.xlsx import search_xlsx
from agentread.request import parse_request
from builders import code, notebook, stream, workbook
from test_find_decoded import reference


@pytest.fixture(autouse=True)
def no_time(monkeypatch):
    monkeypatch.setattr(find, "FIND_TIME_SHARE", 0)


def followed(search, params: dict) -> tuple[list[dict], int]:
    """Every hit of the search, following `next`, and the calls it took; each call but the last
    stopped for time."""
    found, calls = [], 0
    while True:
        request = parse_request(params)
        result = find.find_with(params["path"], lambda matcher: search(request, matcher), request)
        found += result.shown["hits"]
        calls += 1
        if result.next is None:
            assert not result.truncated
            return found, calls
        assert result.truncated and "the search stopped there for time" in result.content[0].text
        params = {"path": params["path"], **result.next}


def test_a_text_search_stops_at_a_line_start_and_next_searches_on(monkeypatch):
    """A line longer than a piece is searched to its end before the search stops."""
    lines = [f"row {i} {'FAILED ' * (i % 7 == 0)}ok" for i in range(400)]
    lines[200] = "FAILED " + "x" * 300 + " FAILED"  # over several pieces
    data = "\n".join(lines).encode() + b"\n"
    want = [(line, column) for line, column, _ in reference(data, "utf-8", "FAILED", True, False)]
    monkeypatch.setattr(text_reader, "FIND_CHUNK", 128)
    monkeypatch.setattr(text_reader, "MAX_FIND_LINE_BYTES", 128)

    def search(request, matcher):
        source = Source(path="f.txt", name="f.txt", stream=io.BytesIO(data), kind="text", description="text/plain",
                        encoding="utf-8", bom=0, size=len(data), cache_key=None, from_editor=True, limit=0)
        return text_reader.search(source, request, matcher)

    found, calls = followed(search, {"path": "f.txt", "find": "FAILED", "regex": True})
    assert [(hit["line"], hit["column"]) for hit in found] == want
    assert calls > len(data) // (2 * 128)  # about a piece a call


@pytest.mark.parametrize("encoding", ["utf-8", "cp1252"])
def test_a_regular_expression_stops_at_a_line_within_a_piece_and_next_searches_on(encoding):
    """A pattern may take a moment on every line of a small file: the search stops at a line, not
    only where a piece of the file starts; in text searched a part at a time (UTF-8) and decoded
    whole (another encoding) alike."""
    lines = [f"row {i} {'FAILED' if i % 3 == 0 else 'ok'} é" for i in range(40)]
    data = "\n".join(lines).encode(encoding) + b"\n"
    want = [(line, column) for line, column, _ in reference(data, encoding, r"F\w+D", True, False)]

    def search(request, matcher):
        source = Source(path="f.txt", name="f.txt", stream=io.BytesIO(data), kind="text", description="text/plain",
                        encoding=encoding, bom=0, size=len(data), cache_key=None, from_editor=True, limit=0)
        return text_reader.search(source, request, matcher)

    found, calls = followed(search, {"path": "f.txt", "find": r"F\w+D", "regex": True})
    assert [(hit["line"], hit["column"]) for hit in found] == want
    assert calls >= len(lines) // 2  # the file is one piece: a line or so a call


def test_a_notebook_search_stops_at_a_line_and_next_searches_on():
    data = notebook(code("a = 'ok'\nb = 'NEEDLE'", stream("NEEDLE\nok\nNEEDLE twice NEEDLE\n")), code("NEEDLE = 1"))
    found, calls = followed(lambda request, matcher: search_notebook(data, request, matcher),
                            {"path": "nb.ipynb", "find": "NEEDLE"})
    assert [(hit["cell"], hit["in"], hit["line"], hit["column"]) for hit in found] == [
        (1, "source", 3, 6), (1, "output 1", 5, 1), (1, "output 1", 7, 1), (1, "output 1", 7, 14),
        (2, "source", 2, 1)]
    assert calls > 5


def test_a_spreadsheet_search_stops_at_a_cell_and_next_searches_on():
    data = workbook({"A1": "NEEDLE", "B1": "ok", "C1": "NEEDLE", "A2": "ok", "B3": "a NEEDLE"})
    found, calls = followed(lambda request, matcher: search_xlsx(data, request, matcher),
                            {"path": "b.xlsx", "find": "NEEDLE"})
    assert [hit["cell"] for hit in found] == ["A1", "C1", "B3"] and calls > 3
