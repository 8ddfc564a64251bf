"""The outline of AsciiDoc files, from Asciidoctor run as a Ruby program: checked against the
source of a real document (Asciidoctor's own README), and its failures (no Ruby, no gem, a program
that never ends, a document nesting too deeply, a cancelled read) each a clear error."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from test_outline import entries

from agentread.engine import Engine
from agentread.request import parse_request
from agentread.workspace import Workspace

REPO = Path(__file__).resolve().parents[2]
README = REPO / "tests" / "data" / "code" / "asciidoctor-README.adoc"

needs_asciidoctor = pytest.mark.skipif(
    shutil.which("ruby") is None or subprocess.run(["ruby", "-e", "require 'asciidoctor'"],
                                                   capture_output=True).returncode != 0,
    reason="Asciidoctor is not installed (apt install asciidoctor)")


def outline_of(path: Path, **params) -> dict:
    return Engine(Workspace([str(path.parent)])).read(
        parse_request({"path": path.name, "outline": True, **params})).to_json()


def span(entry: dict) -> tuple[int, int]:
    return entry["read"]["offset"], entry["read"]["offset"] + entry["read"]["limit"] - 1


@needs_asciidoctor
def test_headings_of_a_real_document_are_its_title_lines_and_their_ranges_nest(tmp_path: Path):
    lines = README.read_text(encoding="utf-8").splitlines()
    result = outline_of(README)
    assert not result["isError"], result
    found = entries(result)
    # Every "= " title line of the source (its "====" example block delimiters are none), in order.
    titles = [n for n, line in enumerate(lines, 1) if re.match(r"=+ \S", line)]
    assert [e["read"]["offset"] for e in found] == titles
    for entry in found:
        first, _ = span(entry)
        assert lines[first - 1] == entry["title"]
        assert entry["level"] == len(entry["title"].split(" ")[0]) - 1
    assert span(found[0]) == (1, len(lines)) and found[0]["title"] == "= Asciidoctor"
    for n, entry in enumerate(found):
        first, last = span(entry)
        later = next((e for e in found[n + 1:] if e["level"] <= entry["level"]), None)
        assert last == (later["read"]["offset"] - 1 if later else len(lines))
        inside = [e for e in found[n + 1:] if e["level"] > entry["level"]][:1]
        if inside and (later is None or inside[0]["read"]["offset"] < later["read"]["offset"]):
            assert first < span(inside[0])[0] and span(inside[0])[1] <= last
    assert "=== Ruby API" in [e["title"] for e in found]

    # An entry's arguments read exactly its section.
    entry = next(e for e in found if e["title"] == "==== APT")
    window = Engine(Workspace([str(README.parent)])).read(parse_request({"path": README.name, **entry["read"]}))
    shown = [line.split("\t", 1)[1] for line in window.text().splitlines() if "\t" in line]
    assert shown[0] == "==== APT" and len(shown) == entry["read"]["limit"]


@needs_asciidoctor
def test_two_line_titles_discrete_headings_and_attributes_show_as_written(tmp_path: Path):
    (tmp_path / "guide.adoc").write_text(
        "= The {product} Guide\n:product: Widget\n\nPreamble.\n\n[[setup]]\n== Install {product}\n\ntext\n\n"
        "Two-line Title\n--------------\n\nMore.\n\n[discrete]\n=== A Discrete Heading\n\n=== Nested\n\n== Last\n")
    found = entries(outline_of(tmp_path / "guide.adoc"))
    assert [(e["level"], e["title"], span(e)) for e in found] == [
        (0, "= The {product} Guide", (1, 21)),
        (1, "== Install {product}", (7, 10)),
        (1, "Two-line Title", (11, 20)),
        (2, "=== A Discrete Heading", (17, 18)),
        (2, "=== Nested", (19, 20)),
        (1, "== Last", (21, 21)),
    ]


@needs_asciidoctor
def test_an_include_is_not_read(tmp_path: Path):
    (tmp_path / "secret.adoc").write_text("== Secret Section\n\nsecret text\n")
    (tmp_path / "main.adoc").write_text("= Main\n\n== Open\n\ninclude::secret.adoc[]\n\n== After\n")
    result = outline_of(tmp_path / "main.adoc")
    assert [e["title"] for e in entries(result)] == ["= Main", "== Open", "== After"]
    assert "Secret" not in result["content"][0]["text"]


def test_asc_is_not_taken_for_asciidoc(tmp_path: Path):
    (tmp_path / "key.asc").write_text("= Looks Like A Title\n\n== And A Section\n")
    result = outline_of(tmp_path / "key.asc")
    assert not result["isError"] and "has no outline" in result["content"][0]["text"]


def test_without_ruby_the_outline_says_what_to_install_and_what_to_call(tmp_path: Path, monkeypatch):
    (tmp_path / "doc.adoc").write_text("= Doc\n\n== Part\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = outline_of(tmp_path / "doc.adoc")
    text = result["content"][0]["text"]
    assert result["isError"] and result["error"]["code"] == "no_outline"
    assert "Ruby is not installed" in text and "apt install asciidoctor" in text and 'find "== "' in text


def _program(tmp_path: Path, body: str) -> None:
    """`ruby` on PATH as the shell script `body`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ruby").write_text(f"#!/bin/sh\n{body}\n")
    (bin_dir / "ruby").chmod(0o755)
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"


@pytest.mark.skipif(shutil.which("ruby") is None, reason="Ruby is not installed")
def test_without_the_gem_the_outline_says_what_to_install(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PATH", os.environ["PATH"])
    _program(tmp_path, f'exec {shutil.which("ruby")} --disable-gems "$@"')  # Ruby that finds no gem
    (tmp_path / "doc.adoc").write_text("= Doc\n")
    result = outline_of(tmp_path / "doc.adoc")
    text = result["content"][0]["text"]
    assert result["error"]["code"] == "no_outline" and "the asciidoctor gem is not" in text
    assert "gem install asciidoctor" in text


def test_a_program_that_never_ends_is_stopped_at_its_timeout(tmp_path: Path, monkeypatch):
    from agentread.readers.asciidoc import headings
    from agentread.result import ReadError

    monkeypatch.setenv("PATH", os.environ["PATH"])
    _program(tmp_path, f"echo $$ > {tmp_path / 'pid'}; exec sleep 1000")
    with pytest.raises(ReadError) as caught:
        headings(b"= Doc\n", "doc.adoc", timeout=0.5)
    assert caught.value.code == "timeout" and "offset and limit" in caught.value.message
    with pytest.raises(ProcessLookupError):  # killed and collected
        os.kill(int((tmp_path / "pid").read_text()), 0)


def test_a_cancelled_read_ends_the_program(tmp_path: Path, monkeypatch):
    from agentread.cancel import Cancelled, run_cancellable
    from agentread.readers.asciidoc import headings

    monkeypatch.setenv("PATH", os.environ["PATH"])
    _program(tmp_path, f"echo $$ > {tmp_path / 'pid'}; exec sleep 1000")
    cancelled = threading.Event()
    cancelled.set()
    with pytest.raises(Cancelled):
        run_cancellable(cancelled, headings, b"= Doc\n", "doc.adoc")
    with pytest.raises(ProcessLookupError):
        os.kill(int((tmp_path / "pid").read_text()), 0)


@needs_asciidoctor
def test_a_document_nesting_too_deeply_is_a_clear_error(tmp_path: Path):
    depth = 3000  # delimited blocks inside one another: Asciidoctor's parser recurses past Ruby's stack
    (tmp_path / "deep.adoc").write_text("= Deep\n\n== A\n\n" + "".join("=" * (4 + n) + "\n" for n in range(depth))
                                        + "x\n" + "".join("=" * (4 + n) + "\n" for n in reversed(range(depth))))
    result = outline_of(tmp_path / "deep.adoc")
    assert result["error"]["code"] == "too_complex" and "offset and limit" in result["content"][0]["text"]


@needs_asciidoctor
def test_a_first_read_of_a_long_asciidoc_file_is_its_window_alone(tmp_path: Path):
    (tmp_path / "long.adoc").write_text("= Long\n\n" + "".join(f"== Section {n}\n\ntext\n\n" for n in range(3000)))
    result = Engine(Workspace([str(tmp_path)])).read(parse_request({"path": "long.adoc", "maxBytes": 8000}))
    assert result.truncated and "Outline of the rest" not in result.text()


@needs_asciidoctor
def test_unicode_titles_in_a_c_locale_and_a_stray_byte(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("LC_ALL", "C")
    monkeypatch.setenv("LANG", "C")
    (tmp_path / "u.adoc").write_bytes("= Tïtle ü\n\n== Ünïcode ✓\n\ntext \xff here\n\n=== Sub\n".encode("utf-8")
                                      .replace("\xff".encode("utf-8"), b"\xff"))
    result = outline_of(tmp_path / "u.adoc")
    assert [(e["title"], span(e)) for e in entries(result)] == [
        ("= Tïtle ü", (1, 7)), ("== Ünïcode ✓", (3, 7)), ("=== Sub", (7, 7))]


@needs_asciidoctor
def test_lone_cr_and_crlf_line_ends_give_the_editors_line_numbers(tmp_path: Path):
    (tmp_path / "cr.adoc").write_bytes(b"= Title\r\rintro\r\r== One\r\ntext\r\n\r\n== Two\rmore\r")
    result = outline_of(tmp_path / "cr.adoc")
    assert [(e["title"], span(e)) for e in entries(result)] == [
        ("= Title", (1, 9)), ("== One", (5, 7)), ("== Two", (8, 9))]
