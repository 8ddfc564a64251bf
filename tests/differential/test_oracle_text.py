"""Text read to its end by following `next`, against the file's own lines (split as the editor
splits them): Python sources of docutils, and notebooks' JSON read as text (`raw`), whose base64
lines run to 50,000 characters."""

from __future__ import annotations

import pytest
from harness import SIZES, chain, cli, editor_lines, follow_lines, need, same_in_every_front_end

from rpc import text_of

DOCUTILS = ("docutils-0.22.4", "docutils-0.22.4", "docutils")
JUPYTEXT_NB = ("jupytext-1.19.6", "jupytext-1.19.6", "tests", "data", "notebooks", "inputs")

TEXTS = [
    (*DOCUTILS, "nodes.py"),  # 3,341 lines, longer than one reply
    (*DOCUTILS, "parsers", "rst", "states.py"),
    (*DOCUTILS, "utils", "punctuation_chars.py"),  # long lines of escapes
]
RAW = [  # notebooks as their JSON text: lines of 28,000 to 54,000 characters
    (*JUPYTEXT_NB, "ipynb_py", "Notebook_with_R_magic.ipynb"),
    (*JUPYTEXT_NB, "ipynb_idl", "demo_gdl_fbp.ipynb"),
]


def oracle(path) -> list[str]:
    return editor_lines(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("parts", TEXTS + RAW, ids=lambda p: p[-1])
def test_following_next_over_rpc_gives_every_line_once(rpc, parts, size):
    path = need(*parts)
    params = {"path": str(path), "maxBytes": size, "raw": True if parts in RAW else None}
    assert follow_lines(rpc, {k: v for k, v in params.items() if v is not None}) == oracle(path)


@pytest.mark.parametrize("parts", [TEXTS[0], RAW[0]], ids=lambda p: p[-1])
def test_following_next_in_the_cli_gives_every_line_once(parts):
    path = need(*parts)
    params = {"path": str(path), "raw": True if parts in RAW else None}
    assert follow_lines(cli, {k: v for k, v in params.items() if v is not None}) == oracle(path)


@pytest.mark.parametrize("parts", [TEXTS[0], RAW[0]], ids=lambda p: p[-1])
def test_mcp_and_cli_show_the_rpc_replies_word_for_word(rpc, parts):
    """The reads an agent makes following `next` (the server's own reply size, the only one MCP
    has), each the same text in the three front ends."""
    path = need(*parts)
    params = {"path": str(path), "raw": True if parts in RAW else None}
    params = {k: v for k, v in params.items() if v is not None}
    same_in_every_front_end(rpc, chain(rpc, params))


def test_a_truncated_read_ends_with_how_to_continue(rpc):
    path = need(*TEXTS[0])
    result = rpc({"path": str(path), "maxBytes": 8192})
    assert result["truncated"]
    last = text_of(result).rstrip("\n").rsplit("\n", 1)[-1]
    assert last.startswith(f"[version {result['version']}] [Showing lines ") and last.endswith("to continue.]"), last
