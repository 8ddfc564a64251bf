"""SVG outputs the rasteriser must not draw (it recurses on them for seconds) are told
apart from plots."""

from __future__ import annotations

import pytest

from agentread.readers.notebook.svgcheck import MAX_SVG_DEPTH, MAX_USE_CHAIN, MAX_VISITS, unsafe_reason

HEAD = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" height="30">'
PLOT = (HEAD + '<defs><path id="tick" d="M 0 0 L 0 3.5"/></defs><g id="axis"><use xlink:href="#tick" x="5"/>'
        '<use href="#tick" x="9"/></g><text id="label">0.5</text><use xlink:href="#label" y="9"/></svg>')


def test_a_plot_with_markers_may_be_drawn():
    assert unsafe_reason(PLOT.encode()) is None


@pytest.mark.parametrize("svg, why", [
    (HEAD + '<g id="a"><use xlink:href="#a"/></g></svg>', "loop"),  # points at its own ancestor
    (HEAD + '<g id="a"><use xf="#b"/></g></svg>', "nowhere"),  # no reference: cairosvg draws the document again
    (HEAD + '<use xlink:href="#missing"/></svg>', "nowhere"),
    (HEAD + '<g id="a"><use xlink:href="#b"/></g><g id="b"><use xlink:href="#a"/></g></svg>', "loop"),
    (HEAD + "<g>" * (MAX_SVG_DEPTH + 1) + "</g>" * (MAX_SVG_DEPTH + 1) + "</svg>", "nested"),
    (HEAD + "<g", "well-formed"),
])
def test_svg_the_rasteriser_would_recurse_on_is_refused(svg: str, why: str):
    assert why in unsafe_reason(svg.encode())


def test_depth_and_size_limits_are_exact():
    def nested(levels: int) -> bytes:  # the root, then `levels` groups inside one another
        return (HEAD + "<g>" * levels + "</g>" * levels + "</svg>").encode()

    assert unsafe_reason(nested(MAX_SVG_DEPTH - 1)) is None  # MAX_SVG_DEPTH levels, the root counted
    assert "nested over" in unsafe_reason(nested(MAX_SVG_DEPTH))
    def nodes(count: int) -> bytes:  # the root and count - 1 more, comments counted as elements are
        pairs, odd = divmod(count - 1, 2)
        return (HEAD + "<rect/><!-- counted too -->" * pairs + "<rect/>" * odd + "</svg>").encode()

    assert unsafe_reason(nodes(MAX_VISITS)) is None
    assert unsafe_reason(nodes(MAX_VISITS + 1)) == f"it has over {MAX_VISITS:,} elements"


def test_references_that_expand_past_the_budget_are_refused_as_such():
    # Each group draws the one below it ten times: a million elements drawn from a document
    # of under 100.
    groups = '<g id="g0"><rect width="1" height="1"/></g>'
    for i in range(1, MAX_USE_CHAIN):
        groups += f'<g id="g{i}">' + f'<use href="#g{i - 1}"/>' * 10 + "</g>"
    why = unsafe_reason((HEAD + groups + "</svg>").encode())
    assert why == f"its <use> references expand past {MAX_VISITS:,} elements"


def test_a_rasteriser_stuck_in_a_loop_of_string_calls_is_stopped():
    from agentread.readers.notebook.svgcheck import RasterTimeout, rasterise_within

    def stuck(bytestring: bytes) -> bytes:  # as cairosvg on some damaged paths: a loop of str methods only
        text = bytestring.decode()
        while True:
            text = (" " + text.strip() + " ").strip()

    with pytest.raises(RasterTimeout):
        rasterise_within(stuck, b"<svg/>", seconds=0.2)
    assert rasterise_within(lambda bytestring: bytestring[::-1], b"abc") == b"cba"
