"""What a PDF page shows besides its text: its figures (images and vector drawings), counted from
the page's objects, so that the page's text can say they are there and how to see them.

An image of some size is a figure. A drawn path is part of one when it bends or slants (a curve, a
diagonal line): rules, underlines, table borders and cell shading are drawn with straight lines
along the page's axes, and are not. Images and drawings near each other make one figure.
"""

from __future__ import annotations

from ctypes import byref, c_float

from agentread.readers.pdf import pdfium

# Page objects looked at (those inside forms included): a real page holds at most a few thousand,
# and one with a million must not hold up its read. Figures among the objects past these are not
# counted.
MAX_FIGURE_OBJECTS = 5000

# Segments of one path looked at for a curve or a slant: a figure's path shows one in its first
# few; a hostile path can hold millions.
MAX_PATH_SEGMENTS = 64

# Parts (images, bent or slanted paths) grouped into figures: grouping compares each with the
# figures so far, so its time grows with the square of the parts; a plot's markers and a drawing's
# strokes lie close together and make few figures.
MAX_FIGURE_PARTS = 1000

# Parts closer than this (in points, 1/72 inch) belong to one figure: the strokes of a drawing
# touch or nearly, and figures on a page are set apart by at least a line of text.
FIGURE_GAP = 6.0

# A figure is at least this wide and tall, in points (about 8 mm): smaller ones are symbols, bullets
# and logos of the text's own size.
MIN_FIGURE_SIDE = 24.0

# A path is along the page's axes when each segment moves less than this (in the path's units)
# across its direction: drawing programs leave such jitter in straight rules.
AXIS_SLACK = 0.5

Box = tuple  # (left, bottom, right, top) in points on the page


def count_figures(page) -> int:
    """The figures on a loaded pdfium.Page: groups of images and bent or slanted drawings, each at
    least MIN_FIGURE_SIDE on both sides."""
    raw = pdfium.library().raw
    image, path = raw.FPDF_PAGEOBJ_IMAGE, raw.FPDF_PAGEOBJ_PATH
    parts: list[Box] = []
    for seen, (thing, matrix) in enumerate(page.objects(), 1):
        if seen > MAX_FIGURE_OBJECTS or len(parts) >= MAX_FIGURE_PARTS:
            break
        kind = raw.FPDFPageObj_GetType(thing)
        if kind == image or (kind == path and _bends(raw, thing)):
            box = pdfium.bounds(thing, matrix)
            if box is not None:
                parts.append(box)
    return sum(1 for left, bottom, right, top in _grouped(parts)
               if right - left >= MIN_FIGURE_SIDE and top - bottom >= MIN_FIGURE_SIDE)


def _bends(raw, thing) -> bool:
    """Whether the path has a curve, or a line neither level nor upright, among its first
    MAX_PATH_SEGMENTS segments."""
    x = y = 0.0
    px, py = c_float(), c_float()
    for index in range(min(raw.FPDFPath_CountSegments(thing), MAX_PATH_SEGMENTS)):
        segment = raw.FPDFPath_GetPathSegment(thing, index)
        kind = raw.FPDFPathSegment_GetType(segment)
        if kind == raw.FPDF_SEGMENT_BEZIERTO:
            return True
        if not raw.FPDFPathSegment_GetPoint(segment, byref(px), byref(py)):
            continue
        if kind == raw.FPDF_SEGMENT_LINETO and abs(px.value - x) > AXIS_SLACK and abs(py.value - y) > AXIS_SLACK:
            return True
        x, y = px.value, py.value
    return False


def _grouped(parts: list[Box]) -> list[Box]:
    """The parts' boxes merged where they come within FIGURE_GAP of each other, until no two
    merged boxes do."""
    groups: list[Box] = []
    for box in parts:
        while True:
            near = [group for group in groups if _near(group, box)]
            if not near:
                break
            groups = [group for group in groups if not _near(group, box)]
            box = (min(b[0] for b in (box, *near)), min(b[1] for b in (box, *near)),
                   max(b[2] for b in (box, *near)), max(b[3] for b in (box, *near)))
        groups.append(box)
    return groups


def _near(a: Box, b: Box) -> bool:
    return (a[0] - FIGURE_GAP <= b[2] and b[0] - FIGURE_GAP <= a[2]
            and a[1] - FIGURE_GAP <= b[3] and b[1] - FIGURE_GAP <= a[3])
