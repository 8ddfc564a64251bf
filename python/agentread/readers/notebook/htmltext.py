"""An HTML output as the text a browser shows (tables laid out as columns, lists as bullets),
for outputs whose only text form is HTML. inscriptis lays the text out; it parses with lxml and
drops scripts and styles."""

from __future__ import annotations

import re

# HTML laid out per output: an object's rich view is a few KB. Laying out takes time in proportion
# to the HTML (notebooks are read in the server's process), so a page of megabytes is laid out up
# to here (lxml repairs the cut end), and the rest follows as its source, which costs nothing to
# show: so every character is read on by lines and `column`, and searched by `find`.
MAX_HTML_CHARS = 200_000

_BLANK_RUNS = re.compile(r"\n\s*\n(\s*\n)+")


def html_lines(html: str) -> list[str]:
    """The text of `html`, one string per line, blank runs kept to one blank line; past
    MAX_HTML_CHARS (at a tag's start, so no text is split there), a line saying so, then the
    source."""
    from inscriptis import get_text

    cut = len(html)
    if cut > MAX_HTML_CHARS:
        tag = html.rfind("<", MAX_HTML_CHARS // 2, MAX_HTML_CHARS)
        cut = tag if tag > 0 else MAX_HTML_CHARS
    text = get_text(html[:cut]) if html[:cut].strip() else ""
    lines = [line.rstrip() for line in _BLANK_RUNS.sub("\n\n", text).strip("\n").split("\n")]
    if cut < len(html):
        lines.append(f"[… this HTML goes on past character {cut:,} of {len(html):,}, too long to lay out: its last "
                     f"{len(html) - cut:,} characters follow as its source]")
        lines.append(html[cut:])
    return lines
