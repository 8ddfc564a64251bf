"""What a PDF page shows besides its text: its figures (images, drawings and plots), counted from
the page's objects, so that the page's text can say they are there and how to see them.

An image of some size is a figure. A drawn path is part of one when it bends or slants (a curve, a
diagonal line). Rules, underlines, table borders and cell shading are drawn with straight lines
along the page's axes, and are not; but plots are drawn that way too (box plots, bar charts,
histograms, step curves, mosaics), and what sets them apart is their shape: an axis is a row of
short ticks of one length standing on one line, a step curve turns back and forth between level
and upright many times in one path, a mosaic is boxes apart from each other; a table has none of
these, and is mostly words. Images, drawings and plots near each other make one figure.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from itertools import accumulate

from agentread.readers.pdf import pdfium

# Page objects looked at (those inside forms included): a real page holds at most a few thousand,
# and one with a million must not hold up its read. Figures among the objects past these are not
# counted.
MAX_FIGURE_OBJECTS = 5000

# Segments of one path looked at for its shape: a figure's path shows a curve, a slant or steps in
# its first few; a hostile path can hold millions.
MAX_PATH_SEGMENTS = 64

# Parts (images, bent or slanted paths) grouped into figures, and paths grouped into drawings to
# look for plots among, each: grouping compares each with the groups so far, so its time grows with
# the square of the parts; a plot's markers and a drawing's strokes lie close together and make few
# groups.
MAX_FIGURE_PARTS = 1000

# Parts closer than this (in points, 1/72 inch) belong to one figure: the strokes of a drawing
# touch or nearly, and figures on a page are set apart by at least a line of text.
FIGURE_GAP = 6.0

# A figure is at least this wide and tall, in points (about 8 mm): smaller ones are symbols, bullets
# and logos of the text's own size.
MIN_FIGURE_SIDE = 24.0

# A path is along the page's axes when its lines heading one way (level or upright) drift less than
# this across that way, together (in the path's units): drawing programs leave such jitter in
# straight rules, while a slant plotted as many tiny steps drifts on.
AXIS_SLACK = 0.5

# A tick is a straight line at most this thick (its box: the stroke's width on either side) and
# this long, in points, and longer than twice its thickness (not a dot): plotting programs draw
# ticks a few points long, while a table's shortest border spans a line of text.
TICK_THICKNESS = 2.5
TICK_LENGTH = 10.0

# An axis is at least this many ticks of one length side by side on one line: a scale needs three
# values to read, and fraction bars and short rules seldom line up so.
MIN_AXIS_TICKS = 3

# A step curve turns between level and upright at least this many times in one path: a rectangle
# turns three times (four with its closing side), a staircase of three steps six.
MIN_STEP_TURNS = 6

# A mosaic is at least this many boxes, none touching another (a panel's frame round them does not):
# a table's cells share their borders, a framed paragraph is one box.
MIN_MOSAIC_TILES = 4

# A drawing whose box is covered by text past this share is a table or a framed passage, not a
# plot: a plot's words are its labels, around its edges.
MAX_PLOT_TEXT_SHARE = 0.3

Box = tuple  # (left, bottom, right, top) in points on the page


@dataclass
class _Path:
    box: Box
    bends: bool  # a curve or a slant among its first segments
    turns: int  # level-upright turns in a row of its lines
    tile: bool  # a closed rectangle


def count(objects, compiled: bool = True) -> int:
    """The figures among the page's first MAX_FIGURE_OBJECTS objects as the reader's walk described
    them (pdfium.PageObjects), on the page still open: groups of images, bent or slanted drawings
    and plots, each at least MIN_FIGURE_SIDE on both sides. `compiled`: the paths' segments as
    _scan.path_segments reads them, where it can."""
    raw = pdfium.library().raw
    text, image, path = raw.FPDF_PAGEOBJ_TEXT, raw.FPDF_PAGEOBJ_IMAGE, raw.FPDF_PAGEOBJ_PATH
    kinds = objects.kinds[:MAX_FIGURE_OBJECTS]
    drawn = [(index, box) for index, kind in enumerate(kinds)
             if (kind == image or kind == path) and (box := objects.box(index)) is not None]
    segments = objects.segments([index for index, _ in drawn if kinds[index] == path], MAX_PATH_SEGMENTS, compiled)
    parts: list[Box] = []  # images and bent paths: figures by their size alone
    paths: list[_Path] = []
    for index, box in drawn:
        if len(parts) >= MAX_FIGURE_PARTS:
            break
        if kinds[index] == image:
            parts.append(box)
            continue
        shape = _shape(raw, segments, index, box)
        if len(paths) < MAX_FIGURE_PARTS:  # a plot's paths: the first ones draw its frame and axes
            paths.append(shape)
        if shape.bends:
            parts.append(box)
    # Grouped only where the page's paths could make a plot at all: most pages hold none.
    plots = [box for box, members in (_grouped_with([p.box for p in paths]) if _plot_shaped(paths) else [])
             if _large(box) and _plot_shaped([paths[i] for i in members])]
    if plots:
        words = [box for box in (objects.box(at) for at, kind in enumerate(kinds) if kind == text) if box is not None]
        parts += [box for box in plots if _text_share(box, words) <= MAX_PLOT_TEXT_SHARE]
    return sum(1 for box, _ in _grouped_with(parts) if _large(box))


def _shape(raw, segments, index: int, box: Box) -> _Path:
    """The path's bends, turns and whether it is a rectangle, from its first MAX_PATH_SEGMENTS
    segments (pdfium.PathSegments)."""
    x = y = 0.0
    turns = most = sides = 0
    heading = None  # "-" or "|": the direction of the last line in the row
    across = 0.0  # how far the lines heading that way have drifted across it
    closed = False
    bezier, line = raw.FPDF_SEGMENT_BEZIERTO, raw.FPDF_SEGMENT_LINETO
    for kind, px, py, closes in segments.of(index):
        if kind == bezier:
            return _Path(box, True, 0, False)
        if px != px:  # NaN: PDFium gives no point
            continue
        if kind == line and (px, py) != (x, y):
            dx, dy = px - x, py - y
            way = "-" if abs(dx) >= abs(dy) else "|"
            # A slant drawn as many tiny lines (a plotted function's points) drifts across its way.
            across = (across if way == heading else 0.0) + (dy if way == "-" else dx)
            if abs(across) > AXIS_SLACK:
                return _Path(box, True, 0, False)
            turns += heading is not None and way != heading
            heading = way
            sides += max(abs(dx), abs(dy)) > AXIS_SLACK
        elif kind != line:  # a move starts another row of lines
            most, turns, heading = max(most, turns), 0, None
        closed = closed or bool(closes)
        x, y = px, py
    tile = segments.count(index) <= 6 and 3 <= sides <= 4 and (closed or sides == 4)
    return _Path(box, False, max(most, turns), tile)


def _plot_shaped(paths: list[_Path]) -> bool:
    """Whether drawn paths grouped together are shaped as a plot: an axis of ticks, a step curve or
    a mosaic."""
    ticks = Counter()
    for path in paths:
        left, bottom, right, top = path.box
        width, height = right - left, top - bottom
        thick, long = min(width, height), max(width, height)
        if not path.bends and thick <= TICK_THICKNESS and 2 * thick < long <= TICK_LENGTH:
            # Ticks on one axis share their span across it: a level tick's left and right ends
            # (rounded to the point), an upright one's bottom and top.
            ticks[("-", round(left), round(right)) if width > height else ("|", round(bottom), round(top))] += 1
    if max(ticks.values(), default=0) >= MIN_AXIS_TICKS or any(p.turns >= MIN_STEP_TURNS for p in paths):
        return True
    # The tiles by their left side, each looked at beside those around it there: a tile touches
    # one of those next to it in a mosaic's column or a table's, and none past its right side.
    tiles = sorted((path.box for path in paths if path.tile), key=lambda box: box[0])
    reach = list(accumulate((box[2] for box in tiles), max, initial=-math.inf))  # rightmost side so far
    apart = (at for at in range(len(tiles)) if not _touches_another(tiles, reach, at))
    return sum(1 for _ in zip(range(MIN_MOSAIC_TILES), apart)) == MIN_MOSAIC_TILES


def _touches_another(tiles: list[Box], reach: list[float], at: int) -> bool:
    """Whether tile `at` of `tiles` (in order of their left side; `reach`: the rightmost side of
    those before each) touches another (_touch)."""
    box = tiles[at]
    after = at + 1
    while after < len(tiles) and tiles[after][0] <= box[2]:
        if _touch(box, tiles[after]):
            return True
        after += 1
    before = at - 1
    while before >= 0 and reach[before + 1] >= box[0]:
        if _touch(box, tiles[before]):
            return True
        before -= 1
    return False


def _text_share(box: Box, words: list[Box]) -> float:
    """The share of `box` that the text objects' boxes cover (their overlaps counted twice: lines
    of text seldom overlap)."""
    left, bottom, right, top = box
    covered = sum(max(0.0, min(right, r) - max(left, x)) * max(0.0, min(top, t) - max(bottom, y))
                  for x, y, r, t in words)
    return covered / ((right - left) * (top - bottom))


def _large(box: Box) -> bool:
    return box[2] - box[0] >= MIN_FIGURE_SIDE and box[3] - box[1] >= MIN_FIGURE_SIDE


def _grouped_with(parts: list[Box]) -> list[tuple[Box, list[int]]]:
    """The parts' boxes merged where they come within FIGURE_GAP of each other, until no two
    merged boxes do; each with the indexes of the parts in it."""
    groups: list[tuple[Box, list[int]]] = []
    for index, box in enumerate(parts):
        # A drawing's parts come one after another, most inside the box of the group the part
        # before joined (the last): such a part comes near no other group, as the groups are apart,
        # and joins it as it is.
        if groups and pdfium.holds(groups[-1][0], box):
            groups[-1][1].append(index)
            continue
        members = [index]
        while True:
            near: list[tuple[Box, list[int]]] = []
            far: list[tuple[Box, list[int]]] = []
            for group in groups:
                (near if pdfium.near(group[0], box, FIGURE_GAP) else far).append(group)
            if not near:
                break
            boxes = [box, *(group[0] for group in near)]
            box = (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes),
                   max(b[3] for b in boxes))
            # The largest group's list takes the others' members: a plot's hundreds of parts are
            # not copied again with each one that joins.
            largest = max((group[1] for group in near), key=len)
            for group in near:
                if group[1] is not largest:
                    largest += group[1]
            largest += members
            members, groups = largest, far
        groups.append((box, members))
    return groups


def _touch(a: Box, b: Box) -> bool:
    """Whether two boxes meet: overlap or share a border, one not lying wholly inside the other
    (a mosaic's frame, a panel's, holds its tiles)."""
    inside = (a[0] > b[0] and a[1] > b[1] and a[2] < b[2] and a[3] < b[3]
              or b[0] > a[0] and b[1] > a[1] and b[2] < a[2] and b[3] < a[3])
    return pdfium.near(a, b) and not inside
