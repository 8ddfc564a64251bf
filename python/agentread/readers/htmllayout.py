"""HTML laid out as text as a browser shows it, by inscriptis: the one place the readers hand it
HTML (an e-book's chapters, a mail's HTML body, a notebook's HTML outputs)."""

from __future__ import annotations

import re

# A document's XML declaration, which lxml's HTML parser refuses in a string that declares it.
_XML_DECLARATION = re.compile(r"^<\?xml [^>]+?\?>")


def text_of_html(html) -> str:
    """The text `html` (markup, or a tree lxml.html made, which is changed) lays out as; "" for
    none."""
    import lxml.html
    from inscriptis import Inscriptis
    from lxml.etree import ParserError

    if isinstance(html, str):
        html = _XML_DECLARATION.sub("", html.strip(), count=1)
        if not html:
            return ""
        try:
            html = lxml.html.document_fromstring(html)
        except ParserError:  # no element at all: shown as the text it is
            html = lxml.html.document_fromstring("<pre>" + html + "</pre>")
    # inscriptis unescapes the text it is given once more, as if it were still markup (`&amp;lt;`
    # would show as `<`, not as `&lt;`): its ampersands are handed to it escaped.
    for node in html.iter():
        if isinstance(node.tag, str) and node.text:
            node.text = node.text.replace("&", "&amp;")
        if node.tail:
            node.tail = node.tail.replace("&", "&amp;")
    return Inscriptis(html).get_text()
