"""PDF figures through both servers as their clients call them: a page says it holds a figure, view
"image" brings it as a picture beside its text, view "text" leaves the pictures out and says so."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentread.limits import MAX_IMAGE_SIDE
from rpc import ServerProcess, text_of

ANNOUNCED = '[Page 1 has 1 figure (images or drawings) that its text does not show. To see the page as a picture, ' \
            'call again with pages="1" and view="image".]'
LEFT_OUT = '[1 picture left out: this read asked for text only (view="text"). Call again without view to see it.]'


@pytest.fixture
def ws(corpus: Path, tmp_path: Path) -> Path:
    shutil.copy(corpus / "pdf" / "pdflatex-image.pdf", tmp_path / "paper.pdf")
    return tmp_path


def test_the_json_rpc_server_announces_shows_and_leaves_out_the_figure(ws: Path):
    server = ServerProcess(workspace=ws)
    try:
        plain = server.read(path="paper.pdf")
        pictured = server.read(path="paper.pdf", pages="1", view="image")
        only = server.read(path="paper.pdf", pages="1", view="text")
        invalid = server.request("agentread/read", {"path": "paper.pdf", "view": "video"})
    finally:
        server.close()
    assert ANNOUNCED in text_of(plain) and not any(p["type"] == "image" for p in plain["content"])
    [picture] = [p for p in pictured["content"] if p["type"] == "image"]
    assert picture["mimeType"] == "image/png" and max(picture["width"], picture["height"]) == MAX_IMAGE_SIDE
    assert text_of(pictured).startswith("--- Page 1 ---\n") and "[Page 1 as a picture, " in text_of(pictured)
    assert text_of(only) == text_of(plain)  # nothing to leave out: a text page's read, as without view
    assert invalid["error"]["code"] == -32602 and "'view' must be one of text, image" in invalid["error"]["message"]


def test_the_mcp_server_announces_shows_and_leaves_out_the_figure(ws: Path):
    from mcp_client import run, texts

    async def calls(client):
        return [await client.call_tool("read", args) for args in (
            {"path": "paper.pdf"}, {"path": "paper.pdf", "pages": "1", "view": "image"})]

    plain, pictured = run({}, "--root", str(ws), calls=calls)
    assert ANNOUNCED in texts(plain) and all(c.type == "text" for c in plain.content)
    assert [c.type for c in pictured.content] == ["text", "image", "text"]  # the last: its version
    assert texts(pictured).startswith("--- Page 1 ---\n") and "[Page 1 as a picture, " in texts(pictured)
    assert pictured.content[1].mime_type == "image/png"


def test_a_text_only_read_through_both_servers_gets_the_note_and_no_image(corpus: Path, tmp_path: Path):
    from mcp_client import run, texts

    shutil.copy(corpus / "pdf" / "imagemagick-images.pdf", tmp_path / "scan.pdf")
    server = ServerProcess(workspace=tmp_path)
    try:
        scan = server.read(path="scan.pdf", pages="1", view="text")
    finally:
        server.close()
    # The note comes last but the version, on a line of its own: pages="1" of 6 is all that was
    # asked for, so the read is not cut.
    tagged = [LEFT_OUT, f"[version {scan['version']}]"]
    assert not scan["truncated"] and [p["type"] for p in scan["content"]].count("image") == 0
    assert text_of(scan).splitlines()[-2:] == tagged

    async def calls(client):
        return await client.call_tool("read", {"path": "scan.pdf", "pages": "1", "view": "text"})

    answer = run({}, "--root", str(tmp_path), calls=calls)
    assert not answer.is_error and all(c.type == "text" for c in answer.content)
    assert texts(answer).splitlines()[-2:] == tagged


def test_a_read_of_many_files_shows_a_pdf_page_as_a_picture_when_its_entry_asks(ws: Path):
    (ws / "notes.txt").write_text("a note\n")
    server = ServerProcess(workspace=ws)
    try:
        reply = server.request("agentread/readMany", {"paths": [{"path": "paper.pdf", "pages": "1", "view": "image"},
                                                                "notes.txt"]})["result"]
    finally:
        server.close()
    [picture] = [p for p in reply["content"] if p["type"] == "image"]
    assert picture["mimeType"] == "image/png" and max(picture["width"], picture["height"]) == MAX_IMAGE_SIDE
    text = text_of(reply)
    assert "==> paper.pdf (pages=1, view=image) <==" in text and "[Page 1 as a picture, " in text
    assert "==> notes.txt <==" in text and "     1\ta note" in text
