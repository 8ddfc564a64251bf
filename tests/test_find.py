"""`find` through the real server over stdio: hits in every kind of file, each shown again by the
read arguments it names, a cut line read to its end by `column`, a regular expression that
backtracks without end answered with an error, many files searched in one call, and a log of over a
gigabyte searched to its last line in bounded memory."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import docx
import openpyxl
import pytest

from agentread.limits import MAX_LINE_CHARS
from agentread.readers import text as text_reader
from builders import build_pdf, chart_deck, code, notebook, stream
from lines import CUT_MARK
from rpc import text_of

OFFICE = Path(__file__).resolve().parent / "data" / "office"
NUMBERED = re.compile(r"^ *-?\d+\t(.*)$")


def hits(result: dict) -> list[dict]:
    assert not result["isError"], text_of(result)
    return result["shown"]["hits"]


def shows(server, path: str, hit: dict) -> str:
    """The text the hit's read arguments show."""
    result = server.read(path=path, **hit["read"])
    assert not result["isError"], text_of(result)
    return text_of(result)


def follow(server, **params) -> list[dict]:
    """Every hit, following `next`; each reply's `next` names the hit after its last."""
    found: list[dict] = []
    for _ in range(1000):
        result = server.read(**params)
        found += hits(result)
        if "next" not in result:
            assert not result["truncated"]
            return found
        assert result["truncated"] and result["next"]["find"] == params["find"]
        params = {"path": params["path"], **result["next"], **({"limit": params["limit"]} if "limit" in params else {})}
    pytest.fail("following next never ended")


def test_a_hit_on_a_pdf_page_is_cited_by_page_and_line_and_its_read_shows_it(server, tmp_path: Path):
    (tmp_path / "doc.pdf").write_bytes(build_pdf(["first page", "the zebra page", None, "last zebra"]))
    result = server.read(path="doc.pdf", find="zebra")
    found = hits(result)
    assert [(h["page"], h["line"], h["column"]) for h in found] == [(2, 2, 5), (4, 2, 6)]
    assert result["kind"] == "pdf" and "page 2, line 2, column 5: the zebra page" in text_of(result)
    for hit in found:
        assert f"     {hit['line']}\t" in shows(server, "doc.pdf", hit) and "zebra" in shows(server, "doc.pdf", hit)
    assert hits(server.read(path="doc.pdf", find="zebra", pages="3-4")) == found[1:]


def test_pdf_pages_with_no_text_layer_are_named_as_not_searched_with_the_read_that_shows_them(server, tmp_path: Path):
    (tmp_path / "doc.pdf").write_bytes(build_pdf(["the zebra page", None, None, "more text", None]))
    result = server.read(path="doc.pdf", find="zebra")
    assert [h["page"] for h in hits(result)] == [1]
    note = ('[Pages 2-3, 5 have no text layer (scans or drawings) and were not searched. A read shows each as its '
            'picture')
    assert note in text_of(result) and text_of(result).split("\n")[1].endswith(': pages="2-3", pages="5".]')
    shown = server.read(path="doc.pdf", pages="2-3")
    assert [part["type"] for part in shown["content"]].count("image") == 2
    assert '[Page 5 has no text layer (a scan or a drawing) and was not searched.' in text_of(
        server.read(path="doc.pdf", find="zebra", pages="4-5"))
    assert "text layer" not in text_of(server.read(path="doc.pdf", find="zebra", pages="1"))


def test_a_scanned_page_says_it_was_not_searched_and_its_read_shows_the_word_by_ocr(server, tmp_path: Path):
    from PIL import Image, ImageDraw

    page = Image.new("RGB", (1200, 900), "white")
    for i in range(10):
        ImageDraw.Draw(page).text((50, 50 + 60 * i), f"Scanned line {i} with SCANWORD inside", fill="black")
    page.save(tmp_path / "scan.pdf")
    result = server.read(path="scan.pdf", find="SCANWORD")
    assert hits(result) == [] and "[Page 1 has no text layer (a scan or a drawing) and was not searched." \
        in text_of(result)
    if shutil.which("tesseract") is None:
        pytest.skip("tesseract is not installed: the read shows the page without OCR text")
    assert 'A read shows it as its picture with its OCR text: pages="1".]' in text_of(result)
    assert "SCANWORD" in text_of(server.read(path="scan.pdf", pages="1"))


def test_a_hit_in_an_excel_cell_is_cited_by_sheet_and_cell(server, tmp_path: Path):
    (tmp_path / "data.xlsx").write_bytes((OFFICE / "datasets.xlsx").read_bytes())
    book = openpyxl.load_workbook(OFFICE / "datasets.xlsx", read_only=True)
    want = []
    for sheet in book.worksheets:
        sheet.reset_dimensions()  # its declared extent is not trusted
        want += [(sheet.title, f"{cell.column_letter}{cell.row}") for row in sheet.iter_rows() for cell in row
                 if isinstance(cell.value, str) and "virginica" in cell.value]
    found = follow(server, path="data.xlsx", find="VIRGINICA", ignoreCase=True, limit=7)
    assert [(h["sheet"], h["cell"]) for h in found] == want and len(want) > 7
    first = shows(server, "data.xlsx", found[0])
    row = int(re.sub(r"[A-Z]+", "", found[0]["cell"]))
    assert f"| {row} | " in first and "virginica" in first


def test_a_hit_deep_in_a_long_excel_cell_reads_the_part_of_the_cell_that_holds_it(server, tmp_path: Path):
    from builders import workbook

    cell = "filler " * 3000 + "NEEDLE " + "filler " * 10  # the hit at character 21,001 of 21,077
    (tmp_path / "long.xlsx").write_bytes(workbook({"A1": "head", "B2": cell}))
    (hit,) = hits(server.read(path="long.xlsx", find="NEEDLE"))
    assert (hit["cell"], hit["column"]) == ("B2", 21_001)
    assert hit["read"] == {"pages": "1", "offset": 2, "limit": 1, "column": 2, "char": 20_001}
    shown = shows(server, "long.xlsx", hit)
    assert "B2 from character 20,001: " in shown and "NEEDLE" in shown


def test_a_hit_in_a_notebook_output_names_the_cell_its_id_and_the_output(server, tmp_path: Path):
    (tmp_path / "nb.ipynb").write_bytes(notebook(code("print('hello')", stream("a needle in the output\n")),
                                                 code("needle = 1"), code("s = '" + "a" * 3000 + " needle'")))
    found = hits(server.read(path="nb.ipynb", find="needle"))
    assert [(h["cell"], h["in"], h["column"]) for h in found] == [(1, "output 1", 3), (2, "source", 1),
                                                                   (3, "source", 3007)]
    assert all(h["id"] for h in found)
    assert "a needle in the output" in shows(server, "nb.ipynb", found[0])


def test_a_raw_search_of_a_notebook_reads_its_hits_and_goes_on_in_its_json(server, tmp_path: Path):
    """The hits of a search of the file as it is (`raw`) are its JSON lines: each one's read and
    each `next` keep `raw`, or they would show the rendered notebook's lines of the same numbers."""
    cells = notebook(code("x = 1", stream("NEEDLE out\n")), code("y = 2\nz = 'NEEDLE'"), code("w = 'NEEDLE'"))
    (tmp_path / "nb.ipynb").write_text(json.dumps(json.loads(cells), indent=1))
    whole = hits(server.read(path="nb.ipynb", find="NEEDLE", raw=True))
    assert len(whole) == 3 and all(hit["read"].get("raw") is True for hit in whole)
    for hit in whole:
        assert "NEEDLE" in NUMBERED.match(shows(server, "nb.ipynb", hit).split("\n")[0]).group(1)
    assert follow(server, path="nb.ipynb", find="NEEDLE", raw=True, limit=1) == whole


def test_a_hit_in_a_word_table_is_the_table_row_read_by_its_line(server, tmp_path: Path):
    document = docx.Document()
    document.add_paragraph("Before the table.")
    table = document.add_table(rows=2, cols=2)
    for (r, c), value in {(0, 0): "Item", (0, 1): "Cost", (1, 0): "Rent", (1, 1): "1200 zebra"}.items():
        table.cell(r, c).text = value
    document.save(tmp_path / "t.docx")
    [hit] = hits(server.read(path="t.docx", find="zebra"))
    assert NUMBERED.match(shows(server, "t.docx", hit).split("\n")[0]).group(1) == "| Rent | 1200 zebra |"


def test_a_powerpoint_charts_data_is_searched_to_its_last_row_and_its_read_shows_it(server, tmp_path: Path):
    (tmp_path / "chart.pptx").write_bytes(chart_deck(80))
    [hit] = hits(server.read(path="chart.pptx", find="day 79 "))
    assert (hit["slide"], hit["read"]) == (1, {"pages": "1", "offset": hit["line"], "limit": 1})
    assert NUMBERED.match(shows(server, "chart.pptx", hit).split("\n")[0]).group(1) == "| day 79 | 79 |"


def test_a_string_regardless_of_case_is_found_in_a_text_file_in_every_case(server, tmp_path: Path):
    (tmp_path / "mixed.log").write_text("é Line=7 a\r\nno\nß LINE=7 line=7\rline=8\n", encoding="utf-8", newline="")
    found = hits(server.read(path="mixed.log", find="lINE=7", ignoreCase=True))
    assert [(h["line"], h["column"]) for h in found] == [(1, 3), (3, 3), (3, 10)]


@pytest.mark.parametrize("pattern", [r"(?<![^a])x", r"\Ax", r"x(?![^a])", r"x\Z", r"(?-m)^x$", r"(?-m:^)x$"])
def test_a_pattern_that_looks_past_its_line_finds_each_line_alone(server, tmp_path: Path, pattern: str):
    """Each line is matched alone, as grep does: a lookaround, a text anchor or an inline flag that
    would fail beside the neighbouring lines still finds line 2, "x"."""
    (tmp_path / "lines.txt").write_text("bxb\nx\nbxb\n")
    found = hits(server.read(path="lines.txt", find=pattern, regex=True))
    assert [hit["line"] for hit in found] == [2]


@pytest.mark.parametrize("encoding", ["utf-8", "cp1252"])
def test_an_empty_match_is_a_hit_as_grep_lists_it(server, tmp_path: Path, encoding: str):
    """`^$` finds the empty lines, `^\\s*$` the blank ones, a lookahead the place before its text,
    in a text file (searched in parts, or decoded whole) and in a Word document."""
    (tmp_path / "blank.txt").write_bytes("a\r\n\nb\n   \rc\n\n".encode(encoding))
    found = {pattern: [(h["line"], h["column"]) for h in hits(server.read(path="blank.txt", find=pattern, regex=True))]
             for pattern in (r"^$", r"^\s*$", r"(?=c)", r"b$")}
    assert found == {r"^$": [(2, 1), (6, 1)], r"^\s*$": [(2, 1), (4, 1), (6, 1)], r"(?=c)": [(5, 1)],
                     r"b$": [(3, 1)]}
    document = docx.Document()
    for text in ("first", "", "last"):
        document.add_paragraph(text)
    document.save(tmp_path / "blank.docx")
    [hit] = hits(server.read(path="blank.docx", find="^$", regex=True))
    assert hit["line"] == 2 and shows(server, "blank.docx", hit).startswith("     2\t\n")


def test_following_next_over_empty_matches_lists_each_place_once_and_ends(server, tmp_path: Path):
    (tmp_path / "few.txt").write_text("ab\n\nba\n")
    whole = [(h["line"], h["column"]) for h in hits(server.read(path="few.txt", find="|a", regex=True))]
    assert whole == [(1, 1), (1, 2), (1, 3), (2, 1), (3, 1), (3, 2), (3, 3)]
    paged = follow(server, path="few.txt", find="|a", regex=True, limit=1)
    assert [(h["line"], h["column"]) for h in paged] == whole


def test_a_text_with_a_line_break_is_refused_as_find_matches_within_one_line(server, tmp_path: Path):
    """A hit is within one line, for a text as for a regular expression (matched in each line
    alone): a text with a line break matches nowhere, so it is refused, naming a line of it."""
    (tmp_path / "two.txt").write_text("x foo\nbar y\n")
    for find in ("foo\nbar", "foo\r\nbar", "foo\rbar"):
        answer = server.request("agentread/read", {"path": "two.txt", "find": find})
        assert answer["error"]["code"] == -32602 and "within one line" in answer["error"]["message"]
        assert "find='foo'" in answer["error"]["message"]
    assert hits(server.read(path="two.txt", find="foo\nbar", regex=True)) == []


def test_a_hit_past_a_lines_cut_is_found_and_its_read_shows_it(server, tmp_path: Path):
    line = "x" * 4500 + " needle " + "y" * 3000
    (tmp_path / "wide.txt").write_text(f"short\n{line}\n")
    [hit] = hits(server.read(path="wide.txt", find="needle"))
    assert (hit["line"], hit["column"]) == (2, 4502)
    assert hit["read"] == {"offset": 2, "limit": 1, "column": 4001}
    assert "needle" in shows(server, "wide.txt", hit)


def shown_piece(server, path: str, hit: dict) -> str:
    """The part of the hit's line its read shows, without its number and cut mark."""
    return CUT_MARK.sub("", NUMBERED.match(shows(server, path, hit).split("\n")[0]).group(1))


def test_a_match_across_a_lines_cut_is_read_whole(server, tmp_path: Path):
    """A match running past the 2,000-character piece its start is in is shown whole by its read,
    with the text before it; one longer than a piece from its start; an empty match at the end of a
    line of 2,000 characters by the piece that ends there."""
    straddling = "a" * (MAX_LINE_CHARS - 3) + "NEEDLE" + "b" * 3000
    (tmp_path / "cut.txt").write_text(f"{straddling}\n{'c' * MAX_LINE_CHARS}\n")
    [hit] = hits(server.read(path="cut.txt", find="NEEDLE"))
    assert hit["column"] == MAX_LINE_CHARS - 2 and "aaaNEEDLE" in shown_piece(server, "cut.txt", hit)
    [long] = hits(server.read(path="cut.txt", find=r"N\w{1000}\w{1000}\w{500}", regex=True))  # counts of 1,000 at most
    assert shown_piece(server, "cut.txt", long).startswith("NEEDLE")
    [end] = [h for h in hits(server.read(path="cut.txt", find="$", regex=True)) if h["line"] == 2]
    assert end["column"] == MAX_LINE_CHARS + 1 and shown_piece(server, "cut.txt", end).endswith("ccc")
    (tmp_path / "nb.ipynb").write_bytes(notebook(code(straddling)))
    [cell] = hits(server.read(path="nb.ipynb", find="NEEDLE"))
    assert cell["column"] == MAX_LINE_CHARS - 2 and "aaaNEEDLE" in shows(server, "nb.ipynb", cell)


def test_a_one_line_json_file_is_read_to_its_last_character_by_following_next(server, tmp_path: Path):
    data = json.dumps([{"id": i, "name": f"item {i}", "tags": ["é", "ü"]} for i in range(2500)])
    assert len(data) > 124_000 and "\n" not in data
    (tmp_path / "one.json").write_text(data)
    params: dict = {"path": "one.json"}
    pieces = []
    for _ in range(len(data) // MAX_LINE_CHARS + 2):
        result = server.read(**params)
        assert not result["isError"], text_of(result)
        shown = NUMBERED.match(text_of(result).split("\n")[0]).group(1)
        pieces.append(re.sub(r" \[… line cut at character [\d,]+ of [\d,]+ characters; offset=1, column=\d+ reads "
                             r"on\]$", "", shown))
        if "next" not in result:
            assert not result["truncated"]
            break
        assert result["truncated"] and result["next"] == {"offset": 1, "column": params.get("column", 1) + 2000}
        params = {"path": "one.json", **result["next"]}
    assert "".join(pieces) == data


def test_a_large_log_is_searched_streamed_with_the_editors_line_numbers(server, tmp_path: Path):
    """Many pieces of the search (CRLF and lone CR line ends among them, a CRLF split between two):
    every hit's line number is the editor's."""
    lines, want = [], []
    for i in range(1, 400_001):
        lines.append(f"2024-01-01T00:00:{i % 60:02d} worker-{i % 7} request {i} {'FAILED' if i % 9973 == 0 else 'ok'}")
        if i % 9973 == 0:
            want.append(i)
    ends = ["\n", "\r\n", "\r"]
    data = "".join(line + ends[i % 3] for i, line in enumerate(lines)).encode()
    # A first line that puts a CRLF's CR last in the first piece read and its LF first in the next.
    crlf = data.rindex(b"\r\n", 0, text_reader.FIND_CHUNK - 100)
    data = b"#" * (text_reader.FIND_CHUNK - 2 - crlf) + b"\n" + data
    assert data[text_reader.FIND_CHUNK - 1:text_reader.FIND_CHUNK + 1] == b"\r\n"
    assert len(data) > 16 * text_reader.FIND_CHUNK
    want = [line + 1 for line in want]
    (tmp_path / "big.log").write_bytes(data)
    found = follow(server, path="big.log", find="FAILED", limit=7)
    assert [h["line"] for h in found] == want
    failed = [h for h in hits(server.read(path="big.log", find=r"request (\d+) FAILED$", regex=True))]
    assert [h["line"] for h in failed] == want
    assert f"request {want[3] - 1} FAILED" in shows(server, "big.log", failed[3])


# A log past a gigabyte: the search must stream it, as a read does.
GIGABYTE_LOG_BYTES = (1 << 30) + (1 << 20)
# The server's peak resident memory after searching it: a search that held the file would pass it.
STREAMED_PEAK_BYTES = 512 << 20


def test_a_gigabyte_log_is_searched_streamed_to_its_last_line(server, tmp_path: Path):
    block = "".join(f"2024-01-01T00:00:{i % 60:02d} worker-{i % 7} request {i} ok\n" for i in range(20_000)).encode()
    lines_a_block = block.count(b"\n")
    blocks = GIGABYTE_LOG_BYTES // len(block) + 1
    marked = {0: b"FIRST FAILED\n", blocks // 2: b"MIDDLE FAILED\n", blocks - 1: b"LAST FAILED\n"}
    want = []
    log = tmp_path / "huge.log"
    try:
        with open(log, "wb") as f:
            for n in range(blocks):
                f.write(block)
                if n in marked:
                    f.write(marked[n])
                    want.append((n + 1) * lines_a_block + len(want) + 1)
        assert log.stat().st_size > 1 << 30
        found = follow(server, path="huge.log", find="FAILED")
        assert [h["line"] for h in found] == want
        assert [h["line"] for h in follow(server, path="huge.log", find=r"^\w+ FAILED$", regex=True)] == want
        assert "LAST FAILED" in shows(server, "huge.log", found[-1])
    finally:
        log.unlink(missing_ok=True)  # pytest keeps the temp folders of its last runs
    peak = re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{server.proc.pid}/status").read_text())
    assert peak is None or int(peak[1]) * 1024 < STREAMED_PEAK_BYTES


def test_a_regular_expression_that_backtracks_without_end_is_answered_with_an_error(server, tmp_path: Path):
    (tmp_path / "a.txt").write_text("a" * 100 + "b\n")
    result = server.read(path="a.txt", find=r"(a|aa)+\d", regex=True)  # \d: the backtracking engine's
    assert result["isError"] and result["error"]["code"] == "regex_timeout"
    # The same nested repeat without \d runs on RE2, which reads each character once: an answer.
    assert text_of(server.read(path="a.txt", find="(a|aa)+$", regex=True)).startswith("[No hit of ")
    assert "plain string" in text_of(result)
    bad = server.read(path="a.txt", find="(unclosed", regex=True)
    assert bad["isError"] and bad["error"]["code"] == "invalid_regex"


def test_a_page_of_hits_after_the_first_says_where_it_starts_not_hits_1_to_n(server, tmp_path: Path):
    (tmp_path / "h.log").write_text("".join(f"line {i} ERROR x\n" for i in range(5)))
    first = server.read(path="h.log", find="ERROR", limit=2)
    assert text_of(first).startswith("[Hits 1-2 of text 'ERROR' in ") and first["next"]["offset"] == 3
    second = server.read(path="h.log", **first["next"], limit=2)
    assert text_of(second).split("\n")[0].endswith(" from offset=3, column=8 on; more follow.]")
    last = server.read(path="h.log", **second["next"], limit=2)
    assert text_of(last).split("\n")[0].endswith(" from offset=5, column=8 on.]")
    assert text_of(server.read(path="h.log", find="WARN", offset=4)).startswith("[No hit of text 'WARN' in ")
    assert " from offset=4 on.]" in text_of(server.read(path="h.log", find="WARN", offset=4))


def test_find_in_a_directory_says_to_use_a_glob(server, tmp_path: Path):
    (tmp_path / "sub").mkdir()
    result = server.read(path="sub", find="x")
    assert result["isError"] and result["error"]["code"] == "find_in_directory"


def test_many_files_are_searched_in_one_call_and_next_goes_on(server, tmp_path: Path):
    (tmp_path / "src").mkdir()
    for n in range(5):
        (tmp_path / "src" / f"m{n}.py").write_text("".join(f"x = {i}  # TODO {n}.{i}\n" for i in range(40)))
    (tmp_path / "src" / "clean.py").write_text("nothing here\n")
    (tmp_path / "src" / "doc.pdf").write_bytes(build_pdf(["a TODO on a page"]))
    params: dict = {"paths": ["src/*"], "find": "TODO", "maxBytes": 6000}
    seen: list[tuple[str, int]] = []
    for _ in range(50):
        answer = server.request("agentread/readMany", params)["result"]
        assert len("\n".join(p["text"] for p in answer["content"] if p["type"] == "text").encode()) <= 6000
        for f in answer["files"]:
            if f["state"] in ("whole", "cut"):
                seen += [(f["path"], h["line"]) for h in f["shown"]["hits"]]
        if "next" not in answer:
            break
        assert answer["next"]["find"] == "TODO"  # once, beside the paths, not in each
        assert all(isinstance(e, str) or "find" not in e for e in answer["next"]["paths"])
        params = {**answer["next"], "maxBytes": 6000}
    want = [(f"src/m{n}.py", i + 1) for n in range(5) for i in range(40)] + [("src/doc.pdf", 2)]
    assert sorted(seen) == sorted(want)


def test_find_needs_the_consent_a_read_needs(server, tmp_path: Path):
    (tmp_path / ".env").write_text("TOKEN=secret\n")
    (tmp_path.parent / "outside.txt").write_text("secret\n")
    for path in (".env", str(tmp_path.parent / "outside.txt")):
        result = server.read(path=path, find="secret")
        assert result["isError"] and result["error"]["code"] in ("sensitive_file", "outside_workspace")
        assert "secret" not in json.dumps(result.get("shown", {}))
    assert hits(server.read(path=".env", find="secret", consent=True))[0]["line"] == 1




def pieces_read(server, path: str, starts: dict[int, str], budget: int = 50) -> dict[int, str]:
    """Long lines read whole by following `next` from a plain read: {line: its text}, each piece
    the one a read shows from the column it asked for (or from the line's start), under the
    summary line every notebook reply opens with."""
    pieces: dict[tuple[int, int], str] = {}
    params: dict = {"path": path}
    for _ in range(budget):
        result = server.read(**params)
        assert not result["isError"], text_of(result)
        lines = [line for line in text_of(result).split("\n")[1:] if not line.startswith("[… continuing")]
        if "column" in params:
            pieces[params["offset"], params["column"]] = CUT_MARK.sub("", lines[0])
        for number, start in starts.items():
            for line in lines:
                if line.startswith(start):
                    pieces[number, 1] = CUT_MARK.sub("", line)
        if "next" not in result:
            assert not result["truncated"]
            return {number: "".join(text for (n, _), text in sorted(pieces.items()) if n == number)
                    for number in starts}
        assert result["truncated"]
        params = {"path": path, **result["next"]}
    pytest.fail("following next never ended")


def test_a_notebooks_long_source_and_output_lines_are_read_to_their_last_character_by_next(server,
                                                                                            tmp_path: Path):
    source = "s = '" + "".join(chr(ord("a") + i % 26) for i in range(4990)) + "'"
    output = " ".join(f"value{i}" for i in range(700))[:5000]
    (tmp_path / "nb.ipynb").write_bytes(notebook(code(source, stream(output + "\nend\n"))))
    first = server.read(path="nb.ipynb")
    assert first["truncated"] and first["next"] == {"cells": "1", "offset": 2, "column": MAX_LINE_CHARS + 1}
    assert f'cells="1", offset=4, column={MAX_LINE_CHARS + 1} reads on]' in text_of(first)
    assert pieces_read(server, "nb.ipynb", {2: source[:40], 4: output[:40]}) == {2: source, 4: output}


def test_find_in_a_notebook_output_hits_past_column_2000_and_its_read_shows_it(server, tmp_path: Path):
    output = "x" * 4500 + " needle " + "y" * 1000
    (tmp_path / "nb.ipynb").write_bytes(notebook(code("print(s)", stream(output + "\n"))))
    [hit] = hits(server.read(path="nb.ipynb", find="needle"))
    assert (hit["cell"], hit["in"], hit["line"], hit["column"]) == (1, "output 1", 4, 4502)
    assert hit["read"] == {"cells": "1", "offset": 4, "limit": 1, "column": 4001}
    assert "needle" in shows(server, "nb.ipynb", hit)


def test_a_notebooks_html_past_what_is_laid_out_follows_as_source_read_on_and_searched(server, tmp_path: Path):
    rows = "".join(f"<tr><td>row{n}</td><td>val{n}</td></tr>" for n in range(6000))
    html = f"<table>{rows}</table><p>HTMLEND</p>"  # 243,809 characters: past the 200,000 laid out
    (tmp_path / "nb.ipynb").write_bytes(notebook(code("show()", {"output_type": "display_data", "metadata": {},
                                                                 "data": {"text/html": html}})))
    [end] = hits(server.read(path="nb.ipynb", find="HTMLEND"))
    assert end["in"] == "output 1" and "HTMLEND" in shows(server, "nb.ipynb", end)
    assert len(hits(server.read(path="nb.ipynb", find="row5999<"))) == 1
    [mark] = hits(server.read(path="nb.ipynb", find="this HTML goes on past character"))
    said = re.search(r"past character ([\d,]+) of 243,809", shows(server, "nb.ipynb", mark))
    cut = int(said.group(1).replace(",", ""))
    assert 100_000 < cut <= 200_000 and html[cut] == "<"
    rest = mark["line"] + 1
    assert pieces_read(server, "nb.ipynb", {rest: html[cut:cut + 30]}) == {rest: html[cut:]}


def test_an_excel_cell_of_3000_characters_is_read_whole_by_following_next(server, tmp_path: Path):
    note = " ".join(f"word{i}" for i in range(600))[:3000]
    wide = [f"cell {i} " * 12 for i in range(30)]
    book = openpyxl.Workbook()
    book.active.title = "Data"
    for row in (["name", "note"], ["long", note], ["wide", *wide], ["after", "x"]):
        book.active.append(row)
    book.create_sheet("More").append(["second sheet"])
    book.save(tmp_path / "cells.xlsx")
    first = server.read(path="cells.xlsx")
    assert first["truncated"] and first["next"] == {"pages": "1-2", "offset": 2, "column": 2}
    assert 'cut at 500 of 3,000 characters; pages="1-2", offset=2, column=2 reads it whole]' in text_of(first)
    whole: dict[str, str] = {}
    params: dict = {"path": "cells.xlsx"}
    for _ in range(20):
        result = server.read(**params)
        assert not result["isError"], text_of(result)
        if "column" in params:
            whole.update(re.match(r"([A-Z]+\d+): (.*)$", line).groups()
                         for line in text_of(result).split("\n")[1:] if not line.startswith("["))
        if "next" not in result:
            break
        params = {"path": "cells.xlsx", **result["next"]}
    assert not result["truncated"] and "second sheet" in text_of(result)
    cut = min(openpyxl.utils.column_index_from_string(cell[:-1]) for cell in whole if cell.endswith("3"))
    assert cut > 3  # the wide row was cut where its line reached 2,000 characters, and read on from there
    assert whole == {"B2": note, **{f"{openpyxl.utils.get_column_letter(i + 2)}3": cell
                                    for i, cell in enumerate(wide) if i + 2 >= cut}}
    [hit] = hits(server.read(path="cells.xlsx", find="word300 "))
    assert hit["cell"] == "B2" and hit["read"] == {"pages": "1", "offset": 2, "limit": 1, "column": 2, "char": 2001}
    assert note.index("word300 ") > 2000 and "word300 " in shows(server, "cells.xlsx", hit)
