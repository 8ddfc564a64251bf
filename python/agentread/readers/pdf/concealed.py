"""Text a PDF page holds but a person looking at it does not see, found from what the page itself
says through PDFium: its text objects' render mode, colour, font size and matrix, as the reader's
walk of the page's objects described them (pdfium.PageObjects); where one may be hidden, each
character of the text page is traced to its object (FPDFText_GetTextObject) and its box says
where it stands. Such a passage is marked where it
stands in the page's text (agentread.hidden.passage), its words kept. The one place these rules
are decided; docs/CONTRACT.md ("Hidden content") states them.

- Drawn invisibly: render mode 3 (neither filled nor stroked), 7 (a clip only), or fully
  transparent. Not where the character lies on an image: that is a scan's OCR layer, the words a
  person reads in the picture.
- In the colour under it: filled (or, stroked only, stroked) in the colour of what the page drew
  last before it under the whole of its first character, among its images and opaque filled
  paths, or of the paper (white) where it drew none there: `in white on white` when both are
  white, `in the colour under it` otherwise; colours match when each channel differs by at most
  SAME_COLOUR. Not over an image or a shading (a gradient), nor over a translucent fill, whose
  colour cannot be told, nor where the last fill there covers the character in part. What lies
  under a text object is looked for among the page's first MAX_UNDER_OBJECTS images, shadings and
  filled paths.
- Tiny: a text object whose font size, as its matrix and the forms holding it scale it, is under
  TINY_POINTS.
- Off the page: a text object whose every character's centre lies outside the page's crop box,
  which is all a viewer shows (a line that runs past the edge is a slip of layout, its start shown).

Only on a page that shows some text: a page whose text is all unseen (a scan's OCR layer beside
its picture, a label a converter put beside a tiny page) has nothing else to read.
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from ctypes import addressof, byref

from agentread.cancel import Cancelled, checkpoint
from agentread.hidden import SAME_COLOUR, passage
from agentread.readers.pdf import pdfium

# Type this small (its font size in points, as drawn) is a speck to a reader: print's smallest
# legible type is some 4 pt.
TINY_POINTS = 1.0

# A colour channel at least this high (of 255) is white to the eye.
WHITE_CHANNEL = 245

# Images and filled paths looked at for what lies under a text object: a page's background and
# pictures are a few, but a cheat sheet draws hundreds of shapes before a dark band of white type;
# a drawn page's many thousands would cost a look each for each of its text objects.
MAX_UNDER_OBJECTS = 1000

# Fills looked at for one under a text object of their colour, a page (a text costs one for each
# fill drawn before it, up to the one under it): a page's coloured bands are a few, but a plot of
# markers in its labels' colour has thousands, each of which would be compared with each label.
# Past this, a page's text is not looked at for its fill's colour.
MAX_COLOUR_CHECKS = 10_000

# What lies under a character is looked for among the page's images and fills by cell, the page's
# box cut into this many a side: a line of type lies in a cell or two, and meets few of a drawn
# page's thousand fills; a hostile page's thousands of white words each looked at all of them.
UNDER_CELLS = 16

# Text objects looked for among all of the page's images and fills before these are kept by cell: a
# page's few white headings are looked for in less time than a drawn page's cells take to make.
SCANS_BEFORE_CELLS = 20

# Characters looked at between two checks for a cancelled read: a millisecond or so of work.
CHARS_BETWEEN_CHECKPOINTS = 1024

INVISIBLY = "drawn invisibly"
WHITE = "in white on white"
IN_COLOUR = "in the colour under it"
TINY = f"in type under {TINY_POINTS:g} pt"
OFF_PAGE = "outside the page's visible area"

log = logging.getLogger(__name__)

_UNSEEN_MODES = (3, 7)  # neither filled nor stroked: invisible, and a clip only


class Looks:
    """The page's text objects that may be hidden (drawn unseen, in white or in the colour of a fill
    drawn under them, in type under TINY_POINTS, or starting outside the page's box), with their
    render mode, colour, whether tiny and their place in the page's order, from the page's
    objects as the reader walked them (pdfium.PageObjects). The page's characters are looked at
    one by one only where there is some."""

    def __init__(self, page, objects):
        self.raw = raw = pdfium.library().raw
        self.box = left, bottom, right, top = page.box
        # By address: render mode, colour, whether tiny, place in the page's order.
        self.suspects: dict[int, tuple[int, tuple | None, bool, int]] = {}
        # What may lie under text, in the page's order: (place, box, colour: a fill's, _PICTURE for
        # an image, _SHADING for a shading, None for a translucent fill), of the first
        # MAX_UNDER_OBJECTS images, shadings and filled paths.
        self.under: list[tuple[int, tuple, tuple | None]] = []
        kinds, path = objects.kinds, raw.FPDF_PAGEOBJ_PATH
        unfilled = {raw.FPDF_PAGEOBJ_IMAGE: _PICTURE, raw.FPDF_PAGEOBJ_SHADING: _SHADING}  # of no one colour
        for index in [at for at, kind in enumerate(kinds) if kind in unfilled or (kind == path and objects.filled[at])]:
            box = objects.box(index)
            if box is not None:
                fill = objects.colour(index) if kinds[index] == path else unfilled[kinds[index]]
                opaque = fill is not None and (fill in (_PICTURE, _SHADING) or fill[3] == 255)
                self.under.append((index, box, fill if opaque else None))
                if len(self.under) == MAX_UNDER_OBJECTS:
                    break
        self._fills = [(at, box, fill) for at, box, fill in self.under  # opaque fills of a colour
                       if fill not in (None, _PICTURE, _SHADING) and not _white(fill)]
        self._fill_places = [at for at, _, _ in self._fills]
        # The fills by colour (_bucket): a text's colour is compared with those in its bucket and
        # the 26 around it, not with every fill's.
        self._buckets: dict[tuple, list[int]] = {}
        for number, (_, _, fill) in enumerate(self._fills):
            self._buckets.setdefault(_bucket(fill), []).append(number)
        self._alike_fills: dict[tuple, list[int]] = {}  # by a text's colour: _fills' alike ones, in order
        self._pictures = [box for _, box, fill in self.under if fill is _PICTURE]
        self._cells: dict[tuple[int, int], list[int]] | None = None  # `under` by cell, made once needed
        self._scans = 0  # text objects looked for among all of `under`
        self._checks = MAX_COLOUR_CHECKS
        text = raw.FPDF_PAGEOBJ_TEXT
        modes, points, starts = objects.modes, objects.points, objects.starts
        for index in [at for at, kind in enumerate(kinds) if kind == text]:
            size = points[index]
            if size != size:  # PDFium gave no size or matrix: not measured
                continue
            mode, colour = modes[index], objects.colour(index)
            x, y = starts[2 * index], starts[2 * index + 1]
            tiny = size < TINY_POINTS
            if (tiny or mode in _UNSEEN_MODES or _white(colour) or (colour is not None and colour[3] == 0)
                    or not (left <= x <= right and bottom <= y <= top)
                    or (colour is not None and (alike := self._alike_to(colour))
                        and self._on_its_colour(index, objects.box(index), alike))):
                self.suspects[objects.handles[index]] = (mode, colour, tiny, index)

    def _alike_to(self, colour: tuple) -> list[int]:
        """The page's fills (their places in _fills, in the page's order) alike to `colour`."""
        if colour not in self._alike_fills:
            red, green, blue = _bucket(colour)
            near = [number for r in (red - 1, red, red + 1) for g in (green - 1, green, green + 1)
                    for b in (blue - 1, blue, blue + 1) for number in self._buckets.get((r, g, b), ())]
            self._alike_fills[colour] = sorted(n for n in near if _alike(colour, self._fills[n][2]))
        return self._alike_fills[colour]

    def _on_its_colour(self, place: int, box: tuple | None, alike: list[int]) -> bool:
        """Whether a fill of the text's colour (`alike`: _alike_to's) drawn before it meets the
        text's box, the page's fills looked at in its order while its MAX_COLOUR_CHECKS last: each
        fill drawn before the text, of its colour or not, up to the first that is under it, costs a
        check."""
        if box is None:
            return False
        looked = min(bisect_left(self._fill_places, place), self._checks)  # the fills it may look at
        for number in alike:
            if number >= looked:
                break
            if pdfium.near(box, self._fills[number][1]):
                self._checks -= number + 1
                return True
        self._checks -= looked
        return False

    def on_image(self, x: float, y: float) -> bool:
        return any(_inside(box, x, y) for box in self._pictures)

    def colour_under(self, place: int, glyph: tuple) -> tuple | None:
        """The colour the page drew last before its object `place` under all of the box `glyph`:
        a fill's, the paper's where none meets it; None over an image or a translucent fill, or
        where the last fill to meet the glyph does not cover it (a dot, a band's edge)."""
        last = -1  # the last drawn before the object that meets the glyph: each run's, from its top
        for numbers in self._meeting(glyph):
            for number in reversed(numbers[:bisect_left(numbers, place, key=lambda n: self.under[n][0])]):
                if number <= last:
                    break
                if pdfium.near(self.under[number][1], glyph):
                    last = number
                    break
        if last < 0:
            return _PAPER
        _, box, fill = self.under[last]
        return None if fill in (_PICTURE, _SHADING) or not pdfium.holds(box, glyph) else fill

    def _meeting(self, glyph: tuple) -> list:
        """Runs of places in `under`, each in the page's order, that hold every image and fill
        meeting `glyph`: all of them for the page's first SCANS_BEFORE_CELLS text objects, then
        those of the glyph's cells."""
        if self._scans < SCANS_BEFORE_CELLS:
            self._scans += 1
            return [range(len(self.under))]
        if self._cells is None:
            self._cells = {}
            for number, (_, box, _) in enumerate(self.under):
                for cell in self._cells_of(box):
                    self._cells.setdefault(cell, []).append(number)
        return [self._cells.get(cell, []) for cell in self._cells_of(glyph)]

    def _cells_of(self, box: tuple) -> list[tuple[int, int]]:
        """The cells of the page's box (UNDER_CELLS a side; those on its edges take in what lies
        past them) that `box` meets: a box meets only boxes that share a cell with it. None where
        PDFium gave a side no number (NaN): such a box meets none."""
        left, bottom, right, top = self.box
        across = (_cell(box[0], left, right), _cell(box[2], left, right))
        up = (_cell(box[1], bottom, top), _cell(box[3], bottom, top))
        if None in across or None in up:
            return []
        return [(x, y) for x in range(min(across), max(across) + 1) for y in range(min(up), max(up) + 1)]

    def mark(self, page, textpage, first: int, last: int, text: str) -> tuple[str, list[tuple[int, str]]]:
        """`text`, the text of characters first..last of `textpage` (on the loaded `page`), with
        each hidden passage marked, and each passage's line (0-based, lines ended by CRLF) and
        why. A passage stops at a line's end: a marker never spans lines."""
        if not self.suspects:
            return text, []
        try:
            return self._mark(textpage, first, last, text)
        except Cancelled:
            raise
        except Exception as exc:  # noqa: BLE001 - the page's text is then shown unmarked
            log.warning("the page's hidden text could not be looked for: %s", exc)
            return text, []

    def _mark(self, textpage, first: int, last: int, text: str) -> tuple[str, list[tuple[int, str]]]:
        raw = self.raw
        handle = textpage.raw
        start = raw.FPDFText_GetTextIndexFromCharIndex(handle, first)
        left, bottom, right, top = self.box
        box = raw.FS_RECTF()
        shown: set[int] = set()  # the text objects with a character inside the page's box
        under: dict[int, bool] = {}  # each text object unseen: whether on an image; coloured: whether on its colour
        whys: list[str | None] = [None] * len(text)
        owners: dict[int, int] = {}  # the text object of each character marked off the page, by its place
        seen = False  # whether the page shows a character
        for index in range(first, last + 1):
            if index % CHARS_BETWEEN_CHECKPOINTS == 0:
                checkpoint()
            thing = raw.FPDFText_GetTextObject(handle, index)
            key = addressof(thing.contents) if thing else None
            if key not in self.suspects:
                if not seen and key is not None and not chr(raw.FPDFText_GetUnicode(handle, index)).isspace():
                    seen = True
                continue
            at = raw.FPDFText_GetTextIndexFromCharIndex(handle, index) - start
            if not 0 <= at < len(text) or text[at].isspace() or ord(text[at]) != raw.FPDFText_GetUnicode(handle, index):
                continue  # not where the text shows it (a character past the Basic Multilingual Plane)
            if not raw.FPDFText_GetLooseCharBox(handle, index, byref(box)):
                continue
            mode, colour, tiny, place = self.suspects[key]
            x, y = (box.left + box.right) / 2, (box.top + box.bottom) / 2
            why = None
            if mode in _UNSEEN_MODES or (colour is not None and colour[3] == 0):
                if key not in under:  # decided by the object's first character: a line lies on one picture
                    under[key] = self.on_image(x, y)
                why = None if under[key] else INVISIBLY
            elif not (left <= x <= right and bottom <= y <= top):
                why = OFF_PAGE
                owners[at] = key
            elif tiny:
                why = TINY
            elif colour is not None:
                if key not in under:  # the same: a line lies on one band of colour
                    beneath = self.colour_under(place, (box.left, box.bottom, box.right, box.top))
                    under[key] = beneath is not None and _alike(colour, beneath)
                why = (WHITE if _white(colour) else IN_COLOUR) if under[key] else None
            if why != OFF_PAGE:
                shown.add(key)
            whys[at] = why
            seen = seen or why is None
        for at, key in owners.items():
            if key in shown:
                whys[at] = None  # a line running past the page's edge, not a passage put out of sight
        if not seen or not any(whys):
            return text, []  # a page that shows no text keeps all it has: a scan's OCR layer, a stray label
        return _marked(text, whys)


def _inside(box: tuple, x: float, y: float) -> bool:
    left, bottom, right, top = box
    return left <= x <= right and bottom <= y <= top


def _cell(at: float, low: float, high: float) -> int | None:
    """Which of UNDER_CELLS from `low` to `high` the coordinate `at` is in, those past either end
    in the end one; None for NaN."""
    share = (at - low) / (high - low) * UNDER_CELLS if high > low else 0.0
    return None if share != share else int(min(max(share, 0.0), UNDER_CELLS - 1.0))


def _white(colour) -> bool:
    return colour is not None and min(colour[:3]) >= WHITE_CHANNEL


def _alike(one: tuple, other: tuple) -> bool:
    """Whether two colours look the same (their red, green and blue), or both are white."""
    return all(abs(a - b) <= SAME_COLOUR for a, b in zip(one[:3], other[:3])) or (_white(one) and _white(other))


def _bucket(colour: tuple) -> tuple[int, int, int]:
    """The bucket of a colour's red, green and blue among Looks' fills: alike ones are in the same
    or next buckets."""
    return colour[0] // (SAME_COLOUR + 1), colour[1] // (SAME_COLOUR + 1), colour[2] // (SAME_COLOUR + 1)


_PAPER = (255, 255, 255, 255)  # under all a page draws
_PICTURE = (-1, -1, -1, -1)  # an image's colour in Looks.under: of no one colour
_SHADING = (-2, -2, -2, -2)  # a shading's (a gradient's): of no one colour, and no scan's picture


def _marked(text: str, whys: list[str | None]) -> tuple[str, list[tuple[int, str]]]:
    """The text with each run of one `why` marked: spaces between two characters of a run join
    it; a line's end ends it."""
    out: list[str] = []
    passages: list[tuple[int, str]] = []
    line = 0
    at = 0
    while at < len(text):
        why = whys[at]
        if why is None:
            if text[at] == "\n" and text[at - 1:at] == "\r":  # PDFium's line end; a lone LF is a glyph
                line += 1
            out.append(text[at])
            at += 1
            continue
        end = at + 1
        while end < len(text) and text[end] not in "\r\n":
            if whys[end] == why:
                end += 1
                continue
            gap = end
            while gap < len(text) and whys[gap] is None and text[gap].isspace() and text[gap] not in "\r\n":
                gap += 1
            if gap < len(text) and gap > end and whys[gap] == why:
                end = gap + 1
                continue
            break
        out.append(passage(text[at:end], why))
        passages.append((line, why))
        at = end
    return "".join(out), passages
