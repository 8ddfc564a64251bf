"""An HTML output as the text a browser shows (tables laid out as columns, lists as bullets),
for outputs whose only text form is HTML. inscriptis lays the text out; it parses with lxml and
drops scripts and styles."""

from __future__ import annotations

import re

# HTML laid out per output: an object's rich view is a few KB. Laying out takes time in proportion
# to the HTML (notebooks are read in the server's process), so a page of megabytes is cut here
# (lxml repairs the cut end), and what is cut is said.
MAX_HTML_CHARS = 200_000

_BLANK_RUNS = re.compile(r"\n\s*\n(\s*\n)+")


def html_lines(html: str) -> list[str]:
    """The text of `html`, one string per line, blank runs kept to one blank line."""
    from inscriptis import get_text

    cut = len(html) - MAX_HTML_CHARS
    text = get_text(html[:MAX_HTML_CHARS]) if html.strip() else ""
    lines = [line.rstrip() for line in _BLANK_RUNS.sub("\n\n", text).strip("\n").split("\n")]
    if cut > 0:
        lines.append(f"[… the last {cut:,} characters of this HTML are not shown]")
    return lines
