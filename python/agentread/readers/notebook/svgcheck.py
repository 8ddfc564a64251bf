"""Whether an SVG is safe to hand to the rasteriser, and drawing it within a time limit.

cairosvg draws nesting and `<use>` references by recursion, so a `<use>` that points back at its own
ancestor (or a chain of them, or nowhere: cairosvg then draws the whole document again) recurses
until Python's limit, seconds of CPU for a few KB of input. Such an SVG is shown as text instead.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable

# Deeper nesting than this is not a plot: matplotlib's figures are under 10 levels deep.
MAX_SVG_DEPTH = 64

# `<use>` references followed through one another; a plot's marker is one reference to a path.
MAX_USE_CHAIN = 8

# Elements visited while following references, whatever their chains: bounds the check itself.
MAX_VISITS = 100_000

# A plot is drawn far within this limit. cairosvg is pure Python over cairo, and some damaged paths
# send it into loops no check before drawing can foresee: past this it is stopped, and the SVG is
# not shown as an image.
MAX_RASTER_SECONDS = 3.0

_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"


class RasterTimeout(Exception):
    pass


def rasterise_within(rasterise: Callable[..., Any], svg: bytes, seconds: float = MAX_RASTER_SECONDS) -> Any:
    """`rasterise(bytestring=svg)`, stopped after `seconds`: a profiler on this thread sees every
    call the rasteriser makes, C functions included (its endless loops call only str methods), and
    raises once the time is up. Profiling costs far less than tracing lines would."""
    deadline = time.monotonic() + seconds

    def watch(frame, event, arg):
        if time.monotonic() > deadline:
            raise RasterTimeout(f"drawing it took longer than {seconds:g} s")

    previous = sys.getprofile()
    sys.setprofile(watch)
    try:
        return rasterise(bytestring=svg)
    finally:
        sys.setprofile(previous)


def unsafe_reason(svg: bytes) -> str | None:
    """Why the rasteriser must not draw this SVG, or None when it may."""
    from lxml import etree

    try:
        parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
        root = etree.fromstring(svg, parser)
    except (etree.XMLSyntaxError, ValueError) as exc:
        return f"it is not well-formed XML ({str(exc)[:120]})"
    # Counted and found by XPath, in C: a matplotlib plot has thousands of elements, and walking
    # them in Python cost more than parsing them. Unresolved entity references are not counted:
    # libxml2 bounds their expansion.
    if root.xpath("count(descendant-or-self::node()[not(self::text())])") > MAX_VISITS:
        return f"it has over {MAX_VISITS:,} elements"
    if root.xpath("boolean(" + "/".join(["*"] * MAX_SVG_DEPTH) + ")"):  # an element below the deepest allowed
        return f"it is nested over {MAX_SVG_DEPTH} levels deep"
    ids = {element.get("id"): element for element in root.xpath("descendant-or-self::*[@id]")}
    uses = root.xpath("descendant-or-self::*[local-name()='use']")
    budget = [MAX_VISITS]
    try:
        for use in uses:
            if not _chain_ok(use, ids, 0, budget):
                return "its <use> references point nowhere, loop, or chain too deep"
    except _OverBudget:
        return f"its <use> references expand past {MAX_VISITS:,} elements"
    return None


class _OverBudget(Exception):
    """Following the references visited MAX_VISITS elements: the drawing would be as large."""


def _target(use, ids):
    href = use.get("href") or use.get(_XLINK_HREF) or ""
    return ids.get(href[1:]) if href.startswith("#") else None


def _chain_ok(use, ids, length: int, budget: list[int]) -> bool:
    """`use` points at an element of this document (cairosvg takes a missing or unknown reference
    for the whole document, itself included), no reference from it reaches one of its ancestors, and
    chains stay short."""
    target = _target(use, ids)
    if target is None or length >= MAX_USE_CHAIN or target is use or any(a is target for a in use.iterancestors()):
        return False
    for inner in target.iter():
        budget[0] -= 1
        if budget[0] < 0:
            raise _OverBudget
        if isinstance(inner.tag, str) and inner.tag.rsplit("}", 1)[-1] == "use":
            if not _chain_ok(inner, ids, length + 1, budget):
                return False
    return True
