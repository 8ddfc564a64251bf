"""What the DOCX and PPTX readers build and how a window of it is shown: numbered lines, images
attached where they occur, within the per-call budgets. Also the pieces every Office reader shares:
pipe tables, and the `pages` range that addresses slides and sheets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterator

from agentread import hidden
from agentread.find import Hit, Matcher, Reached, Unit, hits_in
from agentread.limits import MAX_REPLY_IMAGE_BYTES, MAX_REPLY_IMAGES
from agentread.numbering import past_end, shown_lines, up_to, window
from agentread.outline import heading_entries, outline_result
from agentread.readers.image import image_part
from agentread.request import PAGE_RANGE, InvalidParams, ReadRequest
from agentread.result import ATTACHED, ImagePart, ReadError, ReadResult, TextPart

# An Excel cell longer than this is cut: one pasted essay in a cell would otherwise push the rest of
# the row out of its line (the sheet's `column` read shows it whole).
MAX_CELL_CHARS = 500

# A passage a reader found hidden is held in its line between marks that cannot occur in XML text
# (start, end of its reason, end) until the document is rendered: the lines are cut, joined and
# quoted on the way, and a marker's own text in the file must not count as one.
HIDDEN_START, HIDDEN_WHY, HIDDEN_END = "\x05", "\x06", "\x07"
WHITE = "FFFFFF"  # a page's or a slide's colour where the file sets none

_HEX_COLOUR = re.compile(r"[0-9A-Fa-f]{6}")
_SPACES = re.compile(f"({HIDDEN_START}[^{HIDDEN_WHY}]*{HIDDEN_WHY})|\\s+")
_HELD = re.compile(f"{HIDDEN_START}([^{HIDDEN_WHY}]*){HIDDEN_WHY}([^{HIDDEN_END}]*){HIDDEN_END}")


@dataclass
class Image:
    label: str  # what the line names, e.g. "word/media/image1.png"
    blob: Callable[[], bytes]  # read only when the image is attached


@dataclass
class Rendered:
    """A document as lines, with the images named on some of them (by 1-based line number)."""

    lines: list[str] = field(default_factory=list)
    images: dict[int, Image] = field(default_factory=dict)
    # Numbered parts (slides) and their lines, as (number, first line, last line).
    sections: list[tuple[int, int, int]] = field(default_factory=list)
    # Headings as (level from 1, text, line), for the outline.
    headings: list[tuple[int, str, int]] = field(default_factory=list)
    # Passages marked hidden, by line (1-based): how many for each reason (hidden.passage's `why`).
    hidden: dict[int, dict[str, int]] = field(default_factory=dict)

    def open_section(self, number: int) -> None:
        """Lines added from here on are section `number`'s (until the next opens)."""
        self.sections.append((number, len(self.lines) + 1, 1 << 62))
        if len(self.sections) > 1:
            previous, first, _ = self.sections[-2]
            self.sections[-2] = (previous, first, len(self.lines))

    def mark_hidden(self) -> None:
        """Each held passage marked (hidden.passage) and counted by its line; neighbours with the
        same reason (a sentence in several runs) are one passage."""
        for i, line in enumerate(self.lines):
            if HIDDEN_START in line:
                self.lines[i] = _marked(line, self.hidden.setdefault(i + 1, {}))
        self.headings[:] = [(level, _marked(text, {}), line) for level, text, line in self.headings]

    def add(self, line: str = "") -> None:
        self.lines.extend(line.split("\n"))

    def add_image(self, label: str, blob: Callable[[], bytes]) -> None:
        # An alt text may span lines; its line stays one numbered line.
        self.lines.append(f"[image {len(self.images) + 1}: {' '.join(label.split())}]")
        self.images[len(self.lines)] = Image(label, blob)


def search_lines(kind: str, lines: list[str], request: ReadRequest,
                 matcher: Matcher) -> tuple[str, Iterator[Hit | Reached]]:
    """The hits in a rendered document's lines as a read numbers them, from `offset`."""
    first = request.offset or 1
    units = (Unit(text, {"line": number}, {"offset": number, "limit": 1}, {"offset": number})
             for number, text in enumerate(lines[first - 1:], first))
    return kind, hits_in(units, matcher, request.column or 1)


def held(text: str, why: str) -> str:
    """`text` held as a hidden passage for `why`, a line of it at a time (markers never span
    lines); blank text is not a passage."""
    return "\n".join(f"{HIDDEN_START}{why}{HIDDEN_WHY}{piece}{HIDDEN_END}" if piece.strip() else piece
                     for piece in text.split("\n"))


def hex_colour(value: str | None) -> str | None:
    """A colour attribute's value as six upper-case hex digits, or None ("auto", none, or not a
    colour)."""
    if value and _HEX_COLOUR.fullmatch(value):
        return value.upper()
    return None


def unseen_colour(colour: str, under: str, same: str = "in the colour under it") -> str | None:
    """Why text in `colour` on `under` (six hex digits each) is not seen, a reason for
    hidden.passage: "in white on white", else `same`; None where it is seen."""
    if not all(abs(int(colour[i:i + 2], 16) - int(under[i:i + 2], 16)) <= hidden.SAME_COLOUR for i in (0, 2, 4)):
        return None
    return "in white on white" if under == WHITE else same


def collapsed(text: str) -> str:
    """`text`'s whitespace collapsed to single spaces, but in the reasons of the passages held."""
    return _SPACES.sub(lambda found: found[1] or " ", text).strip()


def cut(text: str, chars: int) -> str:
    """`text` cut to its first `chars` characters and "…" when longer, a passage held in it closed
    where the cut falls (or left out where the cut falls in its reason)."""
    if len(text) <= chars:
        return text
    text = text[:chars]
    start, why = text.rfind(HIDDEN_START), text.rfind(HIDDEN_WHY)
    if start > text.rfind(HIDDEN_END):
        text = text[:start] if why < start else text + HIDDEN_END
    return text + "\u2026"


def _marked(line: str, counts: dict[str, int]) -> str:
    out: list[str] = []
    at, why, passage_text = 0, None, ""
    for found in _HELD.finditer(line):
        if why is not None and (found.start() != at or found[1] != why):
            out.append(hidden.passage(passage_text, why))
            counts[why] = counts.get(why, 0) + 1
            why = None
        if why is None:
            out.append(line[at:found.start()])
            why, passage_text = found[1], ""
        passage_text += found[2]
        at = found.end()
    if why is not None:
        out.append(hidden.passage(passage_text, why))
        counts[why] = counts.get(why, 0) + 1
    out.append(line[at:])
    return "".join(out)


def headings_outline(doc: Rendered, request: ReadRequest, path: str, why_none: str = "") -> ReadResult:
    """A document's outline: its headings (by level), each spanning its lines to the next at its
    level or higher; `why_none` says what a heading would be, where there is none."""
    entries = heading_entries(doc.headings, len(doc.lines))
    if entries:
        header = (f"[Outline of {path}: {len(entries):,} heading{'' if len(entries) == 1 else 's'} in "
                  f"{len(doc.lines):,} lines. Read one with the arguments after \"→\".]")
    else:
        header = (f"[{path} has no headings{why_none}; it has {len(doc.lines):,} lines: read it with offset and "
                  "limit.]")
    return outline_result(entries, request, path, "document", header, total_lines=len(doc.lines))


def column_letters(column: int) -> str:
    """A sheet's column by its letters, as Excel and LibreOffice name it: 1 is A, 27 is AA."""
    out = ""
    while column:
        column, rest = divmod(column - 1, 26)
        out = chr(65 + rest) + out
    return out


def one_line(text: str) -> str:
    """A table cell on one line, safe inside a pipe table."""
    return text.strip().replace("|", "\\|").replace("\r\n", "\n").replace("\n", "<br>")


def cell_text(text: str, reads_on: str | None = None) -> str:
    """A cell as one_line, cut at MAX_CELL_CHARS, its marker naming the call that `reads_on` to
    show it whole when there is one."""
    text = one_line(text)
    if len(text) <= MAX_CELL_CHARS:
        return text
    if reads_on:
        return (f"{text[:MAX_CELL_CHARS]}[… cut at {MAX_CELL_CHARS} of {len(text):,} characters; {reads_on} reads "
                "it whole]")
    return f"{text[:MAX_CELL_CHARS]}[… {len(text):,} characters]"


def pipe_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def pipe_table(rows: list[list[str]]) -> list[str]:
    """Rows of cell texts as a Markdown pipe table, the first row as its header (ragged
    rows padded). Cells are whole: a row over the line cap is cut like any line, and read on with
    `column`."""
    if not rows:
        return []
    width = max(len(row) for row in rows)
    rows = [[one_line(c) for c in row] + [""] * (width - len(row)) for row in rows]
    return [pipe_row(rows[0]), pipe_row(["---"] * width), *(pipe_row(row) for row in rows[1:])]


def select_sections(spec: str | None, total: int, unit: str, names: list[str] | None = None) -> tuple[int, int]:
    """`pages` for slides and sheets: "3", "2-5", "4-", or (sheets) a name → (first, last),
    1-based inclusive."""
    if spec is None:
        return 1, total
    if names and spec in names:
        number = names.index(spec) + 1
        return number, number
    match = PAGE_RANGE.match(spec)
    if not match:
        known = f", or a sheet name ({', '.join(repr(n) for n in names)})" if names else ""
        raise InvalidParams(f"'pages' must look like \"3\" or \"2-5\"{known}, got {spec!r}")
    first = int(match.group(1))
    last = first if match.group(2) is None else (int(match.group(2)) if match.group(2) else max(first, total))
    if first < 1 or last < first:
        raise InvalidParams(f"'pages' range {spec!r} is empty or starts below 1")
    if total == 0:
        raise ReadError("page_out_of_range", f"{unit} {first} does not exist: there are no {unit}s, so there is "
                        "nothing to read.")
    if first > total:  # "4-" of a 2-slide deck included: a range past the end, not a malformed one
        raise ReadError("page_out_of_range", f"{unit} {first} does not exist: there {'is' if total == 1 else 'are'}"
                        f" {total} {unit}{'' if total == 1 else 's'}. Call again with "
                        f"{up_to(total, 'pages', quoted=True)}.")
    return first, min(last, total)


def show(doc: Rendered, request: ReadRequest, path: str, kind: str, header: str | None = None,
         pages: str | None = None) -> ReadResult:
    """The window of `doc` the request asks for (offset/limit over its lines), with the images named
    in it attached after their lines, at most MAX_REPLY_IMAGES and MAX_REPLY_IMAGE_BYTES of them.
    `pages` is repeated in the continuing call when the read was of a slide range."""
    lines = doc.lines
    offset = request.line_from(len(lines))
    if offset > max(len(lines), 1):
        raise past_end(offset, len(lines), "line", f"the rendered {kind}")
    also = f'pages="{pages}" and ' if pages else ""
    budget = request.output_bytes - (len(header.encode("utf-8")) + 1 if header else 0)  # the header's line too
    out, last, following = window(lines, offset, request.line_limit, budget, also, request.column or 1)
    content: list[TextPart | ImagePart] = []
    text: list[str] = [header] if header else []
    held_back: list[int] = []
    attached = image_chars = 0
    for number, line in zip(range(offset, last + 1), out):
        text.append(line)
        image = doc.images.get(number)
        if image is None:
            continue
        if attached >= MAX_REPLY_IMAGES or image_chars >= MAX_REPLY_IMAGE_BYTES:
            held_back.append(number)
            continue
        try:
            part, note = image_part(image.blob())
        except ReadError as exc:
            text[-1] = f"{text[-1][:-1]}, not attached: it could not be decoded ({exc.message})]"
            continue
        if image_chars + len(part.data) > MAX_REPLY_IMAGE_BYTES:
            held_back.append(number)
            continue
        attached += 1
        image_chars += len(part.data)
        noted = f", {note}" if note else ""
        text[-1] = f"{text[-1][:-1]}, {part.mime_type} {part.width}x{part.height}{noted}{ATTACHED}"
        content += [TextPart("\n".join(text)), part]
        text = []
    text += out[last - offset + 1:]  # the closing line of a cut window
    if held_back:
        text.append(f"[Images on line{'s' if len(held_back) > 1 else ''} {', '.join(map(str, held_back))} not "
                    f"attached: at most {MAX_REPLY_IMAGES} images (about {MAX_REPLY_IMAGE_BYTES >> 20} "
                    f"MB) per call. Call again with {also}offset={held_back[0]} to see them.]")
    if text:
        content.append(TextPart("\n".join(text)))
    result = ReadResult(kind=kind, path=path, content=content, start_line=offset, end_line=last,
                        total_lines=len(lines), truncated=following is not None,
                        shown=shown_lines(offset, last, request.column or 1) if lines else None)
    if following is not None:
        result.next = {**({"pages": pages} if pages else {}), **following}
    for number in range(offset, last + 1):  # the passages in the lines shown
        for why, n in doc.hidden.get(number, {}).items():
            hidden.note(result, why, n)
    return result

