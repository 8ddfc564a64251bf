"""Word documents (python-docx's test files) read to their end by following `next`: every
paragraph and table row python-docx finds, in order, and the headings an outline lists."""

from __future__ import annotations

import re

import docx
import pytest
from harness import SIZES, THIRDPARTY, body, chain, follow, follow_lines, same_in_every_front_end

SDIST = THIRDPARTY / "python_docx-1.2.0" / "python_docx-1.2.0"
DOCUMENTS = sorted(str(p.relative_to(SDIST)) for p in SDIST.rglob("*.docx")) or ["(absent)"]

# What a read adds to a paragraph's text (docs/CONTRACT.md, Rendering, DOCX): a list item's marker,
# a comment's or footnote's marker, a hyperlink's address (as Markdown writes one; a link to a
# bookmark with the line it leads to as its title).
LIST_MARK = re.compile(r"(?:- |\d+\. )")
NOTE_MARK = re.compile(r"\[comment \d+\]|\[\^\d+\]")
LINK = re.compile(r'\[([^\]]*)\]\([^)\s]*(?: "line \d+")?\)')


def plain(line: str) -> str:
    """A read's line with what the read adds taken off, and the ends' blanks (a paragraph's
    indentation) too."""
    return LINK.sub(r"\1", NOTE_MARK.sub("", line)).strip()


def heading_level(paragraph) -> int | None:
    name = paragraph.style.name if paragraph.style is not None else ""
    if name == "Title":
        return 1
    match = re.fullmatch(r"Heading (\d)", name)
    return int(match[1]) if match else None


def expected_lines(path) -> list[str]:
    """Each non-empty paragraph (a heading with its `#` marks) and each table row as a pipe row, in
    the body's order."""
    out = []
    for block in docx.Document(str(path)).iter_inner_content():
        if isinstance(block, docx.text.paragraph.Paragraph):
            if block.text.strip():
                level = heading_level(block)
                out.append(("#" * level + " " if level else "") + block.text.strip())
        else:
            for row in block.rows:
                out.append([cell_text(cell) for cell in row.cells])
    return out


def cell_text(cell) -> str:
    """A cell's text as one line: its paragraphs and the rows of tables inside it."""
    parts = []
    for block in cell.iter_inner_content():
        if isinstance(block, docx.text.paragraph.Paragraph):
            parts.append(block.text)
        else:
            parts += ["<br>".join(cell_text(c) for c in row.cells) for row in block.rows]
    return "<br>".join(parts)


def row_matches(want: list[str], line: str, above: list[str] | None) -> bool:
    """A table row: its cells, a merged cell shown once (python-docx repeats it across the columns
    and rows it spans; the read leaves the others empty)."""
    if not (line.startswith("| ") and line.endswith(" |")):
        return False
    cells = [plain(c) for c in line[2:-2].split(" | ")]
    while len(cells) > len(want) and cells[-1] == "":  # a row shorter than its table's grid, padded
        cells.pop()
    if len(cells) != len(want):
        return False
    for i, (got, value) in enumerate(zip(cells, want)):
        spanned = (i and want[i - 1] == value) or (above is not None and above[i:i + 1] == [value])
        if got != plain(value) and not (got == "" and spanned):
            return False
    return True


def in_order(expected: list[str], lines: list[str]) -> list[str]:
    """The expected lines not found, in order, among the read's (a list item's marker taken off)."""
    missing, at, above = [], 0, None
    for want in expected:
        for i in range(at, len(lines)):
            line = lines[i]
            if isinstance(want, list):
                found = row_matches(want, line, above)
            else:
                found = want in (plain(line), LIST_MARK.sub("", plain(line), count=1))
            if found:
                at = i + 1
                break
        else:
            missing.append(want)
        above = want if isinstance(want, list) else None
    return missing


def document(name):
    path = SDIST / name
    if not path.is_file():
        pytest.skip(f"{path} is absent: run ./scripts/fetch-thirdparty")
    return path


@pytest.mark.parametrize("name", DOCUMENTS)
def test_every_paragraph_and_row_in_order(rpc, name):
    path = document(name)
    assert in_order(expected_lines(path), follow_lines(rpc, {"path": str(path)})) == []


@pytest.mark.parametrize("size", SIZES[1:])
def test_a_small_reply_size_shows_the_same_lines(rpc, size):
    for name in ("features/steps/test_files/tbl-having-tables.docx", "tests/test_files/having-images.docx"):
        path = document(name)
        assert follow_lines(rpc, {"path": str(path), "maxBytes": size}) == follow_lines(rpc, {"path": str(path)})


ENTRY = re.compile(r"( *)(.*?)  \(lines? (\d+)(?:-(\d+))?\)  → offset=(\d+) limit=(\d+)")


@pytest.mark.parametrize("name", DOCUMENTS)
def test_every_heading_is_outlined_at_its_line(rpc, name):
    path = document(name)
    lines = follow_lines(rpc, {"path": str(path)})
    outline = []
    for result in follow(rpc, {"path": str(path), "outline": True}):
        for line in body(result).split("\n"):
            if match := ENTRY.fullmatch(line):
                outline.append((match[2], int(match[3])))
    headings = [(line, n) for n, line in enumerate(lines, 1) if re.match(r"#+ ", line)]
    assert outline == headings
    # and they are the paragraphs of python-docx's Heading N and Title styles
    styled = [want for want in expected_lines(path) if isinstance(want, str) and want.startswith("#")]
    assert [plain(title) for title, _ in outline] == styled


def test_a_document_is_the_same_in_every_front_end(rpc):
    path = document("features/steps/test_files/tbl-having-tables.docx")
    same_in_every_front_end(rpc, chain(rpc, {"path": str(path)})[:3], cli_reads=2)


# What python-docx's paragraphs leave out and a read shows, each on its test file.

def test_smartart_text_is_read_from_its_diagram_data(rpc):
    lines = follow_lines(rpc, {"path": str(document("features/steps/test_files/shp-inline-shape-access.docx"))})
    at = lines.index("[SmartArt:]")
    assert lines[at + 1:at + 4] == ["- foo", "- bar", "- baz"]


@pytest.mark.parametrize("name, shown", [
    ("hdr-header-footer.docx", ["Header (sections 1-2): Header for section-1",
                                "Footer (sections 1-2): Footer for section 1"]),
    ("doc-odd-even-hdrs.docx", ["Odd-page header (section 1): Odd page header.",
                                "Even-page header (section 1): Even page header."]),
    ("sct-first-page-hdrftr.docx", ["Header (sections 1-2): Default (odd, primary) Header",
                                    "First-page header (section 2): First Page Header (section 2)"])])
def test_headers_and_footers_once_with_their_sections_and_kind(rpc, name, shown):
    path = str(document(f"features/steps/test_files/{name}"))
    lines = follow_lines(rpc, {"path": path})
    at = lines.index("Headers and footers:")
    assert lines[at + 1:] == shown
    # find searches what a read shows, at the line the read shows it on
    hit = rpc({"path": path, "find": shown[0].split(": ", 1)[1]})["shown"]["hits"][0]
    assert hit["line"] == at + 2


def test_a_link_keeps_its_fragment_and_a_link_to_a_bookmark_is_shown(rpc):
    lines = follow_lines(rpc, {"path": str(document("features/steps/test_files/par-hlink-frags.docx"))})
    assert "Five with link to [http://foo.com#introduction](http://foo.com/#intro)." in lines
    assert 'Two with [link to bookmark](#linkedBookmark "line 7").' in lines
    assert lines[6] == "Seven with bookmark referred to by prior link."
