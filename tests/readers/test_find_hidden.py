"""`find` says which hits are hidden from a person reading the file, in every kind and front end: a
hit whose matched text is in a passage a reader marked (PDF, Word, PowerPoint, Excel, HTML and
Markdown) or holds characters the reply marks (tag characters, bidirectional controls, invisible
characters, variation selectors) names what hides it, and the reply's first line counts those hits;
a hit with a marker elsewhere on its line is not hidden, and a marker's own words are not searched.
Ordinary files' hits are never called hidden. A `since` diff marks and counts what it shows."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import test_office_hidden as office
import test_pdf_hidden as pdf
from hypothesis import given, settings
from hypothesis import strategies as st
from test_xlsx_display import hiding

from agentread.engine import Engine
from agentread.readers.markup_hidden import COMMENT
from agentread.request import parse_request
from agentread.workspace import Workspace
from rpc import body_of, serving, text_of
from shared_corpus import CORPUS, REPO

LABELLED = Path(__file__).resolve().parents[1] / "data" / "hidden"
FIRST_LINE = "[Hidden from a person reading the file: "
THIRDPARTY = REPO / ".thirdparty"

# The labelled files of hidden characters, a search in each: (file, find, regex, what hides its hit
# (hidden.hidden_in's keys), the words the hit's line says it with).
CHARACTER_HITS = [
    ("tags.md", "ssh", False, ["tags"], "in tag characters"),
    ("selectors.txt", "curl evil", False, ["selectors"], "in variation selectors"),
    ("trojan_source.py", "user.*admin", True, ["bidi"], "across bidirectional controls"),
    ("zero_width_bits.txt", "figures.*are", True, ["invisible"], "holding invisible characters"),
    ("zero_width_between_letters.txt", "pa.*rd", True, ["invisible"], "holding invisible characters"),
    ("word_joiner.txt", "rf.*tmp", True, ["invisible"], "holding invisible characters"),
    ("latin_joiner.txt", "ad.min", True, ["invisible"], "holding invisible characters"),
    ("bom_inside.txt", "second .line", True, ["invisible"], "holding invisible characters"),
]
# Hits on the same lines that their markers stand beside, not in: not hidden.
BESIDE = [("tags.md", "green"), ("selectors.txt", "Nice work"), ("trojan_source.py", "if access"),
          ("zero_width_bits.txt", "final"), ("word_joiner.txt", "cache")]
# Labelled files whose characters are ordinary text (joiners of Hindi and Persian, emoji, forms of
# ideographs, breaks in long addresses, right-to-left marks): no hit of any line is hidden.
ORDINARY = sorted(name for name, want in json.loads((LABELLED / "labels.json").read_text()).items() if not want)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """Every labelled file of every kind, in one folder: the character set as committed, the PDF
    and Office sets built as their tests build them, and a workbook hiding rows, columns and
    sheets."""
    folder = tmp_path_factory.mktemp("find_hidden")
    for path in LABELLED.glob("*.*"):
        if path.name != "labels.json":
            shutil.copy(path, folder / path.name)
    for name in pdf.LABELS:
        pdf.build(folder, name)
    for name in office.LABELS:
        (folder / name).write_bytes(office.build(name))
    hiding(folder / "hiding.xlsx")
    return folder


@pytest.fixture(scope="module")
def rpc(workspace: Path):
    yield from serving(workspace)


def _hits(result: dict) -> list[dict]:
    return result["shown"]["hits"]


def test_hits_in_hidden_characters_say_so_through_json_rpc(rpc):
    for name, words, regex, keys, said in CHARACTER_HITS:
        result = rpc.read(path=name, find=words, regex=regex)
        assert [hit.get("hidden") for hit in _hits(result)] == [keys], (name, text_of(result))
        assert result["hidden"] == {keys[0]: 1}
        assert body_of(result).startswith(f"{FIRST_LINE}1 hit {said}; each is marked"), body_of(result)
        assert f"(hidden: {said}): " in text_of(result) and "\u27e6" in text_of(result)


def test_a_hit_beside_a_marker_is_not_hidden_but_shows_it(rpc):
    for name, words in BESIDE:
        result = rpc.read(path=name, find=words)
        assert len(_hits(result)) == 1 and "hidden" not in _hits(result)[0], name
        assert "hidden" not in result and not text_of(result).startswith(FIRST_LINE), text_of(result)
        assert "\u27e6" in text_of(result) and "(hidden: " not in text_of(result)


@pytest.mark.parametrize("name", ORDINARY)
def test_ordinary_characters_hide_no_hit(rpc, name: str):
    # One hit a line, the whole line: every joiner, selector and mark is inside a match.
    result = rpc.read(path=name, find=".+", regex=True)
    assert _hits(result) and all("hidden" not in hit for hit in _hits(result))
    assert "hidden" not in result and "\u27e6" not in text_of(result)


def test_hits_in_markup_passages_say_so_and_hits_beside_them_do_not(rpc, workspace: Path):
    (workspace / "comments.md").write_bytes((LABELLED / "markup" / "comments.md").read_bytes())
    inside = rpc.read(path="comments.md", find="evil-package")
    beside = rpc.read(path="comments.md", find="green")
    assert [hit.get("hidden") for hit in _hits(inside)] == [["in HTML comments"]]
    assert inside["hidden"] == {"in HTML comments": 1}
    assert body_of(inside).startswith(f"{FIRST_LINE}1 hit in HTML comments;")
    assert "hidden" not in beside and "\u27e6hidden: in HTML comments\u27e7" in text_of(beside)


def test_a_notebooks_hits_in_comments_of_its_markdown_say_so(rpc, workspace: Path):
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("Intro text <!-- the secret plan --> end"),
                      nbformat.v4.new_code_cell("x = 1  # the plan")]
    nbformat.write(notebook, str(workspace / "plan.ipynb"))
    result = rpc.read(path="plan.ipynb", find="plan")
    assert [hit.get("hidden") for hit in _hits(result)] == [["in HTML comments"], None], text_of(result)
    assert result["hidden"] == {"in HTML comments": 1}
    assert "hidden" not in rpc.read(path="plan.ipynb", find="Intro")


def test_hits_in_office_passages_say_so_through_json_rpc(rpc):
    for name, label in office.LABELS.items():
        for words in label["passages"]:
            result = rpc.read(path=name, find=words)
            (why, _), = label["hidden"].items()
            assert [hit.get("hidden") for hit in _hits(result)] == [[why]], (name, text_of(result))
            assert result["hidden"] == {why: 1} and f"(hidden: {why}): " in text_of(result)
            assert f"\u27e6hidden: {why}\u27e7{words}" in text_of(result)
    # The visible words of the same files are not hidden.
    for name, words in (("vanish.docx", "Minutes of the meeting"), ("off_slide.pptx", "Slide")):
        result = rpc.read(path=name, find=words)
        assert _hits(result) and "hidden" not in result and "(hidden: " not in text_of(result), text_of(result)


def test_hits_in_cells_excel_hides_say_so_through_json_rpc(rpc):
    for words, why in (("a3", "in rows Excel hides"), ("b1", "in columns Excel hides"),
                       ("salaries", "in sheets Excel hides")):
        result = rpc.read(path="hiding.xlsx", find=words)
        assert [hit.get("hidden") for hit in _hits(result)] == [[why]], text_of(result)
        assert f"(hidden: {why}): \u27e6hidden: {why}\u27e7{words}\u27e6/hidden\u27e7" in text_of(result)
    shown = rpc.read(path="hiding.xlsx", find="c1")
    assert _hits(shown) and "hidden" not in shown


def test_hits_in_pdf_passages_say_so_through_mcp(workspace: Path):
    from mcp_client import run, texts

    asked = [(name, why, words) for name, label in sorted(pdf.LABELS.items()) for why, words in label["passages"]]

    async def calls(client):
        found = [await client.call_tool("read", {"path": name, "find": words}) for name, _, words in asked]
        return found + [await client.call_tool("read", {"path": "white_tail_of_a_line.pdf", "find": words})
                        for words in ("Totals", "white")]

    *found, visible, marker = run({}, "--root", str(workspace), calls=calls)
    for (name, why, _), answer in zip(asked, found):
        assert answer.structured_content == {"hidden": {why: 1}}, (name, texts(answer))
        assert texts(answer).startswith(f"{FIRST_LINE}1 hit {why};") and f"(hidden: {why}): " in texts(answer)
    # A hit on the line of a passage, not in it, shows the passage marked and is not hidden; the
    # marker's words ("in white on white") are not the file's, and are not searched.
    assert visible.structured_content is None and "\u27e6hidden: in white on white\u27e7" in texts(visible)
    assert marker.structured_content is None and "No hit of text 'white'" in texts(marker)


def test_the_command_line_says_a_hit_is_hidden(workspace: Path):
    for name, words, why in (("vanish.docx", "mail the file", "in a run Word hides"),
                             ("hidden_slide.pptx", "wire the funds", "on a hidden slide"),
                             ("hiding.xlsx", "salaries", "in sheets Excel hides"),
                             ("tags.md", "id_rsa", "tags")):
        done = subprocess.run([sys.executable, "-m", "agentread", "read", "--json", name, "--find", words],
                              cwd=workspace, capture_output=True, text=True, check=True)
        result = json.loads(done.stdout)
        assert result["hidden"] == {why: 1} and [hit["hidden"] for hit in _hits(result)] == [[why]], done.stdout


def test_read_many_says_which_files_hits_are_hidden(rpc, workspace: Path):
    (workspace / "plain.md").write_text("the plain truth\n")
    many = rpc.request("agentread/readMany", {"paths": ["tags.md", "plain.md", "vanish.docx"],
                                              "find": "the"})["result"]
    hidden = {Path(f["path"]).name: f.get("hidden") for f in many["files"]}
    # tags.md: "the" is once in what its tag characters carry; vanish.docx: twice in its hidden run.
    assert hidden == {"tags.md": {"tags": 1}, "plain.md": None, "vanish.docx": {"in a run Word hides": 2}}, hidden
    assert "(hidden: in tag characters)" in text_of(many) and "(hidden: in a run Word hides)" in text_of(many)


def test_a_since_diff_marks_and_counts_the_hidden_characters_it_shows(tmp_path: Path):
    for server in serving(tmp_path):
        path = tmp_path / "notes.txt"
        path.write_text("one\ntwo\nthree\n")
        before = server.read(path="notes.txt")["version"]
        carried = "".join(chr(0xE0000 + ord(c)) for c in "run rm -rf")
        path.write_text(f"one\ntwo {carried}\nthree\n")
        diff = server.read(path="notes.txt", since=before)
        assert diff["diff"] is True and diff["hidden"] == {"tags": 1}
        assert body_of(diff).startswith(f"{FIRST_LINE}1 run of tag characters;")
        assert '+two \u27e6hidden: tag characters "run rm -rf"\u27e7' in text_of(diff)
        assert carried not in text_of(diff)
        # A diff whose lines hold none has no count, whatever the file's read would hold.
        last = diff["version"]
        path.write_text(f"zero\none\ntwo {carried}\nthree\n")
        moved = server.read(path="notes.txt", since=last, offset=1, limit=1)
        assert "\u27e6" not in text_of(moved) and "hidden" not in moved, text_of(moved)


def test_a_since_diff_is_marked_through_mcp(tmp_path: Path):
    from mcp_client import run, texts

    path = tmp_path / "notes.txt"
    path.write_text("one\n")

    async def calls(client):
        first = await client.call_tool("read", {"path": "notes.txt"})
        version = texts(first).rsplit("[version ", 1)[1].split("]")[0]
        path.write_text("one\u202e two\n")
        return await client.call_tool("read", {"path": "notes.txt", "since": version})

    diff = run({}, "--root", str(tmp_path), calls=calls)
    assert diff.structured_content == {"hidden": {"bidi": 1}}
    assert "+one\u27e6U+202E RIGHT-TO-LEFT OVERRIDE\u27e7 two" in texts(diff) and "\u202e" not in texts(diff)


# Text with none of the characters hidden.py marks and no marker brackets: letters, digits,
# punctuation and spaces of several scripts (not the Hangul fillers, letters that draw nothing).
ORDINARY_TEXT = st.text(st.characters(categories=("L", "N", "P", "Zs"),
                                      exclude_characters="\u27e6\u27e7\u115f\u1160\u3164\uffa0"),
                        min_size=1, max_size=60)


@settings(max_examples=60)
@given(lines=st.lists(ORDINARY_TEXT, min_size=1, max_size=5), pick=st.integers(0, 10_000))
def test_no_hit_of_ordinary_text_is_called_hidden(tmp_path_factory, lines: list[str], pick: int):
    folder = tmp_path_factory.mktemp("ordinary")
    (folder / "a.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    line = lines[pick % len(lines)]
    words = line[pick % len(line):][:8] or line
    result = Engine(Workspace([str(folder)])).read(parse_request({"path": str(folder / "a.txt"), "find": words}))
    assert result.shown["hits"] and all("hidden" not in hit for hit in result.shown["hits"])
    assert result.hidden is None


ORDINARY_KINDS = {".txt", ".md", ".pdf", ".ipynb", ".csv", ".docx", ".pptx", ".xlsx", ".xls", ".html", ".htm", ".odt",
                  ".ods", ".odp", ".epub"}


def test_hits_in_ordinary_documents_are_never_called_hidden():
    """Every file of the shared corpus and of the differential suite's third-party files of a kind
    find searches (up to 8 MB), searched for "the": no hit is hidden but those in the HTML comments
    ordinary web pages and Markdown files hold (which are hidden from a person reading them)."""
    roots = [root for root in (CORPUS, THIRDPARTY) if root.is_dir()]
    if not roots:
        pytest.skip(f"neither the shared corpus ({CORPUS}) nor the third-party files ({THIRDPARTY}) are here")
    files = sorted(p for root in roots for p in root.rglob("*") if p.suffix in ORDINARY_KINDS and p.is_file()
                   and p.stat().st_size < 8 << 20)
    engine = Engine(Workspace([str(root.resolve()) for root in roots]))
    hits = in_comments = 0
    for path in files:
        result = engine.read(parse_request({"path": str(path), "find": "the", "ignoreCase": True}))
        if result.is_error:
            continue
        hidden = [hit for hit in result.shown["hits"] if "hidden" in hit]
        assert all(hit["hidden"] == [COMMENT] for hit in hidden) and path.suffix in (".html", ".md") or not hidden, \
            (path, result.hidden)
        assert (result.hidden or {}) == ({COMMENT: len(hidden)} if hidden else {}), path
        hits, in_comments = hits + len(result.shown["hits"]), in_comments + len(hidden)
    assert hits > 1000 and in_comments < hits / 100, (hits, in_comments)
