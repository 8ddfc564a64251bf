"""Every file of the shared corpus, read by the real engine and checked against expectations.json.

The expected facts come from tools independent of the engine (iconv, pdfinfo/pdftotext, ImageMagick,
file); nothing here is an answer written down by hand.
"""

from __future__ import annotations

import base64
import codecs
import io
import json
import re
from pathlib import Path

import pytest

from agentread.engine import Engine
from agentread.request import parse_request
from agentread.result import ImagePart
from agentread.workspace import Workspace
from lines import numbered_rows, take
from rpc import ServerProcess, text_of
from shared_corpus import CORPUS

MAX_SIDE = 2000  # DESIGN.md: images are downscaled to fit the model's limits (2000 px on the long side)
IMAGE_MIMES = {"image/png", "image/jpeg", "image/gif", "image/webp"}
BOM_BYTES = {None: b"", "utf-8": codecs.BOM_UTF8, "utf-16le": codecs.BOM_UTF16_LE,
             "utf-16be": codecs.BOM_UTF16_BE}

# Text pypdf finds in the page content but drawn outside the page's media box, so pdftotext (which
# crops to the page) reports the page as empty. It is really in the file; the engine may show it.
OFF_PAGE_TEXT = {"pdf/imagemagick-images.pdf": "Background"}


def _names(prefix: str) -> list[str]:
    path = CORPUS / "expectations.json"
    if not path.is_file():
        return []
    return sorted(k for k in json.loads(path.read_text())["files"] if k.startswith(prefix))


@pytest.fixture(scope="module")
def engine(corpus: Path) -> Engine:
    return Engine(Workspace([str(corpus)]))


def read(engine: Engine, **params):
    return engine.read(parse_request(params))


def vscode_lines(text: str) -> list[str]:
    """Lines as the editor's model splits them: CRLF, CR and LF end a line; a final
    terminator adds none."""
    pieces = re.split(r"\r\n|\r|\n", text)
    if pieces and pieces[-1] == "":
        pieces.pop()
    return pieces


shown_lines = numbered_rows


def read_all_lines(engine: Engine, name: str) -> tuple[list[tuple[int, str]], list]:
    """Every line of a text file, following `next` from the first window (a cut line read on with
    `column` and reassembled); also the results seen."""
    lines: dict[int, str] = {}
    results, params = [], {"path": name}
    for _ in range(1000):
        result = engine.read(parse_request(params))
        assert not result.is_error, result.text()
        results.append(result)
        take(lines, params, shown_lines(result.text()))
        if not result.next:
            return list(lines.items()), results
        assert result.truncated
        params = {"path": name, **result.next}
    pytest.fail(f"{name}: following next never ended")


def reference_text(corpus: Path, name: str, facts: dict) -> str:
    """The file's text as the independent tools decoded it."""
    raw = (corpus / name).read_bytes()
    if "decoded_equals_reference" in facts:
        ref = facts["decoded_equals_reference"]
        assert ref["equal"], f"iconv's decode of {name} differs from its reference"
        return (corpus / ref["reference"]).read_text(encoding="utf-8")
    if "encoding" in facts:
        codec = "utf-8-sig" if facts["encoding"] == "utf-8" and facts["bom"] == "utf-8" else facts["encoding"]
        return raw.decode(codec)
    assert facts["valid_utf8"], name
    return raw.decode("utf-8")


def expected_line_count(facts: dict) -> int:
    if "decoded_line_count" in facts:
        return facts["decoded_line_count"]
    ends = facts["crlf_count"] + facts["lone_lf_count"] + facts["lone_cr_count"]
    return ends + (0 if facts["ends_with_newline"] or facts["size_bytes"] == 0 else 1)


# --- the whole corpus
# -------------------------------------------------------------------------------------

def test_expectations_cover_every_corpus_file(corpus: Path, expectations: dict):
    on_disk = {p.relative_to(corpus).as_posix() for sub in ("text", "pdf", "images", "notebooks")
               for p in (corpus / sub).rglob("*") if p.is_file()}
    assert on_disk == set(expectations)
    assert len(expectations) == 115


def test_every_corpus_file_answers_through_the_server(corpus: Path, expectations: dict):
    """The real server process over stdio: no JSON-RPC error, no crash, for any of the 115 files."""
    server = ServerProcess(workspace=corpus)
    try:
        for name in sorted(expectations):
            result = server.read(path=name)
            assert result["kind"] in {"text", "pdf", "image", "notebook", "error"}, name
            assert result["content"], name
            if result["isError"]:
                assert result["error"]["code"] and text_of(result).startswith("Error:"), name
        assert server.proc.poll() is None
    finally:
        server.close()


# --- text
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", _names("text/"))
def test_text_file_lines_match_the_reference_decode(engine: Engine, corpus: Path, expectations: dict, name: str):
    facts = expectations[name]
    lines, results = read_all_lines(engine, name)
    first = results[0]
    assert first.kind == "text"
    total = expected_line_count(facts)
    assert first.total_lines == total
    if total == 0:
        assert lines == [] and "empty" in first.text().lower()
        return
    assert [n for n, _ in lines] == list(range(1, total + 1))

    reference = vscode_lines(reference_text(corpus, name, facts))
    assert len(reference) == total
    for (number, shown), expected in zip(lines, reference):
        assert shown == expected, f"{name} line {number}"  # a long line whole, read on by `column`
    assert not lines[0][1].startswith("\ufeff"), "the byte order mark must not be shown"


@pytest.mark.parametrize("name", _names("text/"))
def test_text_file_encoding_decodes_like_iconv(engine: Engine, corpus: Path, expectations: dict, name: str):
    facts = expectations[name]
    result = read(engine, path=name)
    assert result.encoding
    codec = result.encoding.removesuffix(" with BOM")
    raw = (corpus / name).read_bytes()
    bom = BOM_BYTES[facts["bom"]]
    assert raw.startswith(bom)
    assert result.encoding.endswith(" with BOM") == bool(bom)
    assert raw[len(bom):].decode(codec) == reference_text(corpus, name, facts)


@pytest.mark.parametrize("name", [n for n in _names("text/")])
def test_text_file_first_nonempty_line_is_shown(engine: Engine, expectations: dict, name: str):
    facts = expectations[name]
    want = facts.get("decoded_first_nonempty_line", facts.get("first_nonempty_line"))
    if want is None:
        pytest.skip("an empty file has no first line")
    lines = shown_lines(read(engine, path=name).text())
    first = next(line for _, line in lines if line.strip())
    assert first.startswith(want)


def test_empty_file_gives_the_note(engine: Engine):
    result = read(engine, path="text/empty.txt")
    assert not result.is_error and result.total_lines == 0
    assert "empty" in result.text().lower() and "0 lines" in result.text()


def test_single_line_hex_dump_is_cut_with_a_marker(engine: Engine, expectations: dict):
    facts = expectations["text/jpeg-hex-single-line.txt"]
    result = read(engine, path="text/jpeg-hex-single-line.txt")
    [(number, line)] = shown_lines(result.text())
    assert number == 1 and result.total_lines == 1
    assert line.startswith(facts["first_nonempty_line"])
    assert f"{facts['longest_line_bytes']:,}" in line and "cut" in line  # ASCII: bytes == characters
    assert len(result.text().encode()) < 3000


def test_git_lfs_pointer_named_mp4_reads_as_text(engine: Engine, expectations: dict):
    pointer = expectations["text/sintel_trailer_short.mp4"]["git_lfs_pointer"]
    result = read(engine, path="text/sintel_trailer_short.mp4")
    assert result.kind == "text" and not result.is_error
    assert pointer["oid"] in result.text() and str(pointer["size"]) in result.text()


# --- PDF
# --------------------------------------------------------------------------------------------------

def _collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _page_blocks(text: str) -> dict[int, str]:
    blocks = re.split(r"^--- Page (\d+) ---$", text, flags=re.M)
    return {int(blocks[i]): blocks[i + 1] for i in range(1, len(blocks), 2)}


@pytest.mark.parametrize("name", _names("pdf/"))
def test_pdf_against_pdfinfo_and_pdftotext(engine: Engine, expectations: dict, name: str):
    facts = expectations[name]
    result = read(engine, path=name)
    if not facts["pdfinfo_opens_without_password"]:
        assert result.is_error and result.error.code == "encrypted_pdf", result.text()
        assert "password" in result.text()
        return
    if "pypdf_error" in facts["informational_project_libs"]:
        pytest.skip("damaged page tree: covered by test_damaged_pdf_is_a_clear_error")
    assert result.kind == "pdf", result.text()
    assert result.total_pages == facts["pages"]
    for phrase in facts["phrases"]:
        page = read(engine, path=name, pages=str(phrase["page"]))
        blocks = _page_blocks(page.text())
        assert list(blocks) == [phrase["page"]]
        assert _collapse(phrase["phrase"]) in _collapse(blocks[phrase["page"]]), phrase
    chars = facts["pdftotext_nonspace_chars_by_page"]
    if isinstance(chars, list):
        blocks, part = _page_blocks(result.text()), result
        while part.next and len(blocks) < 20:  # a call shows at most five pages as pictures
            part = read(engine, path=name, **part.next)
            blocks.update(_page_blocks(part.text()))
        for number, count in enumerate(chars[:20], start=1):
            note = f"Page {number} has no extractable text"
            if count == 0:  # no text as pdftotext sees it: the page says so, or is shown as a picture
                block = blocks[number]
                assert note in block or "is mostly pictures" in block \
                    or _collapse(block).startswith(OFF_PAGE_TEXT.get(name, "\0")), number
            else:
                assert note not in blocks[number] and blocks[number].strip(), number


def test_damaged_pdf_is_a_clear_error(engine: Engine):
    result = read(engine, path="pdf/unreadablemetadata.pdf")
    assert result.is_error and result.error.code == "damaged_pdf"
    assert result.text().startswith("Error:")


def test_following_next_visits_every_page_of_a_long_pdf_once(engine: Engine, expectations: dict):
    name = "pdf/GeoTopo-komprimiert.pdf"
    total = expectations[name]["pages"]
    seen: list[int] = []
    params = {"path": name}
    for _ in range(total):
        result = engine.read(parse_request(params))
        assert result.total_pages == total and not result.is_error
        seen += list(_page_blocks(result.text()))
        if not result.next:
            break
        assert result.truncated and set(result.next) == {"pages"}
        params = {"path": name, **result.next}
    assert seen == list(range(1, total + 1))
    last_phrase = expectations[name]["phrases"][-1]
    assert _collapse(last_phrase["phrase"]) in _collapse(_page_blocks(result.text())[last_phrase["page"]])


# --- images
# -----------------------------------------------------------------------------------------------

def _image_part(result) -> ImagePart:
    parts = [p for p in result.content if isinstance(p, ImagePart)]
    assert len(parts) == 1, result.text()
    return parts[0]


def _fitted(width: int, height: int) -> tuple[int, int]:
    scale = min(1.0, MAX_SIDE / max(width, height))
    return round(width * scale), round(height * scale)


@pytest.mark.parametrize("name", [n for n in _names("images/") if not n.endswith(".svg")])
def test_image_part_has_the_identified_size(engine: Engine, expectations: dict, name: str):
    from PIL import Image

    facts = expectations[name]
    result = read(engine, path=name)
    if "width" not in facts:  # ImageMagick could not decode it either
        assert result.is_error or result.kind == "image"
        if result.is_error:
            assert result.text().startswith("Error:")
        return
    assert result.kind == "image", result.text()
    part = _image_part(result)
    assert part.mime_type in IMAGE_MIMES
    want_w, want_h = _fitted(facts["width"], facts["height"])
    assert abs(part.width - want_w) <= 1 and abs(part.height - want_h) <= 1
    assert max(part.width, part.height) <= MAX_SIDE
    data = base64.b64decode(part.data, validate=True)
    with Image.open(io.BytesIO(data)) as img:
        assert img.size == (part.width, part.height)
        assert Image.MIME[img.format] == part.mime_type


def test_big_tiff_is_downscaled_keeping_its_aspect(engine: Engine, expectations: dict):
    facts = expectations["images/drawing-multipage.tif"]
    part = _image_part(read(engine, path="images/drawing-multipage.tif"))
    assert max(facts["width"], facts["height"]) > MAX_SIDE
    assert max(part.width, part.height) == MAX_SIDE
    assert abs(part.width / part.height - facts["width"] / facts["height"]) < 0.01


def test_truncated_jpeg_is_repaired_and_says_so(engine: Engine, expectations: dict):
    assert expectations["images/truncated_jpeg.jpg"]["decodes_cleanly"] is False
    result = read(engine, path="images/truncated_jpeg.jpg")
    assert result.kind == "image"
    assert "truncated" in result.text()


def test_gif_with_zero_size_is_a_clear_error(engine: Engine):
    result = read(engine, path="images/gif-1x1.gif")
    assert result.is_error and result.kind == "error"
    assert result.text().startswith("Error:") and "image" in result.text()


@pytest.mark.parametrize("name", [n for n in _names("images/") if n.endswith(".svg")])
def test_svg_reads_as_text(engine: Engine, corpus: Path, name: str):
    result = read(engine, path=name)
    assert result.kind == "text"
    reference = vscode_lines((corpus / name).read_text(encoding="utf-8"))
    assert result.total_lines == len(reference)
    assert [line for _, line in shown_lines(result.text())] == reference


def test_png_named_jpg_comes_back_as_png(engine: Engine, expectations: dict):
    facts = expectations["images/hf-logo-really-png.jpg"]
    assert facts["extension_matches_content"] is False and facts["magic_mime"] == "image/png"
    part = _image_part(read(engine, path="images/hf-logo-really-png.jpg"))
    assert part.mime_type == "image/png"
    assert base64.b64decode(part.data).startswith(b"\x89PNG\r\n\x1a\n")


# --- notebooks (their content is the notebook suites' to prove)
# -------------------------------------------

@pytest.mark.parametrize("name", _names("notebooks/"))
def test_notebook_answers_as_notebook_or_clear_error(engine: Engine, name: str):
    result = read(engine, path=name)
    assert result.kind in {"notebook", "error"}
    if result.is_error:
        assert result.error.code and result.text().startswith("Error:")
    else:
        assert result.text().strip()
