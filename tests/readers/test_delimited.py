"""CSV and TSV files: streamed as numbered text, with the header row shown before windows that
start below it."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from agentread.engine import Engine
from agentread.request import parse_request
from agentread.workspace import Workspace

ROWS = 100_000


def read(root: Path, **params):
    result = Engine(Workspace([str(root)])).read(parse_request(params))
    assert not result.is_error, result.text()
    return result


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("csv")
    with open(root / "scores.csv", "w", newline="") as f:
        writer = csv.writer(f)  # CRLF line ends, as csv writes them
        writer.writerow(["id", "name", "score"])
        writer.writerows([i, f"name {i}", i * 0.5] for i in range(ROWS))
    return root


def test_a_window_deep_in_a_csv_starts_with_its_header_row(big_csv: Path):
    result = read(big_csv, path="scores.csv", offset=90_001, limit=2)
    lines = result.text().splitlines()
    assert lines[:3] == ["[Header row (line 1): id,name,score]", " 90001\t89999,name 89999,44999.5",
                         " 90002\t90000,name 90000,45000.0"]
    assert result.total_lines == ROWS + 1 and result.next == {"offset": 90_003}


def test_the_first_window_shows_the_header_once_as_line_1(big_csv: Path):
    text = read(big_csv, path="scores.csv", limit=3).text()
    assert text.startswith("     1\tid,name,score\n") and "Header row" not in text


def test_tsv_header_and_a_text_file_without_delimiters(tmp_path: Path):
    (tmp_path / "t.tsv").write_text("col a\tcol b\n1\t2\n3\t4\n")
    assert read(tmp_path, path="t.tsv", offset=3).text().startswith("[Header row (line 1): col a\tcol b]\n")
    (tmp_path / "notes.csv").write_text("just a line\nanother line\n")
    assert "Header row" not in read(tmp_path, path="notes.csv", offset=2).text()
    (tmp_path / "data.txt").write_text("a,b\n1,2\n")
    assert "Header row" not in read(tmp_path, path="data.txt", offset=2).text()


def test_a_huge_header_is_cut(tmp_path: Path):
    header = ",".join(f"column_{i}" for i in range(2000))
    (tmp_path / "wide.csv").write_text(header + "\n" + "1," * 1999 + "1\n")
    first = read(tmp_path, path="wide.csv", offset=2).text().splitlines()[0]
    assert first.startswith("[Header row (line 1): column_0,column_1,") and first.endswith(" […]]")
    assert len(first) < 2100
