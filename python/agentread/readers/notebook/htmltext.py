"""An HTML output as the text a browser shows (tables laid out as columns, lists as bullets),
for outputs whose only text form is HTML. lxml parses it and drops its scripts and styles (counted,
so the read can say what it left out); inscriptis lays out the rest. Its hidden passages (comments,
elements its own styles or style sheets hide) are laid out between markers (markup_hidden.py), and
counted."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agentread.readers.markup_hidden import mark_tree, may_hide

# HTML laid out per output: an object's rich view is a few KB. Laying out takes time in proportion
# to the HTML (notebooks are read in the server's process), so a page of megabytes is laid out up
# to here (lxml repairs the cut end), and the rest follows as its source, which costs nothing to
# show: so every character is read on by lines and `column`, and searched by `find`. Scripts and
# styles are dropped first: a plotting library's script is megabytes of code no reader shows.
MAX_HTML_CHARS = 200_000

# What a browser runs or applies but never shows as text.
_DROPPED_TAGS = ("script", "style")

# Where a script or style may start; HTML without one is laid out as it is, not parsed first.
_DROPPED_TAG = re.compile(r"<\s*(?:script|style)", re.IGNORECASE)

_BLANK_RUNS = re.compile(r"\n\s*\n(\s*\n)+")


@dataclass(frozen=True)
class HtmlText:
    lines: list[str]  # the visible text, one string per line ([] when there is none)
    scripts: int  # scripts left out
    styles: int  # styles left out
    dropped_chars: int  # the characters of their content
    hidden: dict[str, int] = field(default_factory=dict)  # passages marked, by why (hidden.note)


def html_text(html: str) -> HtmlText:
    """The text of `html`, one string per line, blank runs kept to one blank line, its scripts and
    styles dropped, its hidden passages marked; past MAX_HTML_CHARS of what remains (at a tag's
    start, so no text is split there), a line saying so, then the source."""
    import lxml.html
    from lxml import etree

    if not html.strip():
        return HtmlText([], 0, 0, 0)
    hides = may_hide(html)
    if not _DROPPED_TAG.search(html) and not hides:
        return HtmlText(_laid_out(html), 0, 0, 0)
    # huge_tree: a script past libxml2's 10 MB text limit is otherwise cut short, and what
    # follows it lost.
    parser = lxml.html.HTMLParser(huge_tree=True)
    try:
        tree = lxml.html.document_fromstring(html, parser=parser)
    except etree.ParserError:  # nothing but comments or blanks: no element to show
        return HtmlText([], 0, 0, 0)
    dropped = list(tree.iter(*_DROPPED_TAGS))
    dropped_chars = sum(len(element.text_content()) for element in dropped)
    css = [element.text_content() for element in dropped if element.tag == "style"]
    etree.strip_elements(tree, *_DROPPED_TAGS, with_tail=False)
    hidden = mark_tree(tree, css) if hides else {}
    shown = lxml.html.tostring(tree, encoding="unicode") if dropped or hidden else html
    scripts = sum(element.tag == "script" for element in dropped)
    return HtmlText(_laid_out(shown, bool(dropped)), scripts, len(dropped) - scripts, dropped_chars, hidden)


def _laid_out(shown: str, dropped: bool = False) -> list[str]:
    """The lines `shown` lays out as, [] when it shows nothing."""
    from agentread.readers.htmllayout import text_of_html

    cut = len(shown)
    if cut > MAX_HTML_CHARS:
        tag = shown.rfind("<", MAX_HTML_CHARS // 2, MAX_HTML_CHARS)
        cut = tag if tag > 0 else MAX_HTML_CHARS
    text = text_of_html(shown[:cut])
    lines = [line.rstrip() for line in _BLANK_RUNS.sub("\n\n", text).strip("\n").split("\n")]
    if cut < len(shown):
        what = "this HTML, its scripts and styles left out," if dropped else "this HTML"
        lines.append(f"[… {what} goes on past character {cut:,} of {len(shown):,}, too long to lay out: its last "
                     f"{len(shown) - cut:,} characters follow as its source]")
        lines.append(shown[cut:])
    return lines if any(lines) else []
