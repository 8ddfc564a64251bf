"""Render cells as the lines a model reads: a header per cell, its source, then its
outputs, labelled.

A rendered cell is a list of lines, where a line is text or an ImageRef (an image to attach at that
place, decoded only if it lands in what is sent). Long outputs are cut to head and tail when a Cap
is given; every line also carries its number in the cell's *uncut* rendering, so a cut can say
exactly which `offset` (with `cells="N"`) shows what was left out.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass, field
from typing import Any, Union

import orjson
import pybase64

from agentread.limits import MAX_LINE_CHARS
from agentread.numbering import amount
from agentread.readers.notebook import bokehdoc, figures
from agentread.readers.notebook.clean import clean_output, editor_lines, source_lines
from agentread.readers.notebook.htmltext import html_text
from agentread.readers.notebook.model import Cell, Notebook, Payload
from agentread.readers.notebook.svgcheck import unsafe_reason
from agentread.readers.notebook.widgets import WIDGET_MIME, describe


def _payload_text(value: Any) -> str:
    if isinstance(value, Payload):  # an image payload inside a JSON output: shown as text, then cleaned
        return value.text()
    raise TypeError(f"{type(value).__name__} is not JSON")


_TOO_DEEP = "[a JSON value nested too deep to show; raw=true shows it]"


def _dump_json(value: Any) -> str:
    """A JSON value as indented text. orjson writes at most 255 levels deep, json as deep as
    Python's recursion limit lets its indented writer go (about 1,000); the parser accepts 1,024, so
    a deeper value gets a placeholder."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2, default=_payload_text).decode()
    except TypeError:  # nested too deep for orjson, or an integer past 64 bits: json writes both
        try:
            return json.dumps(value, indent=2, ensure_ascii=False, default=_payload_text)
        except RecursionError:
            return _TOO_DEEP


# Image outputs a model can see as they are, in the order we prefer when an output carries several.
RASTER_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp")
SVG_MIME = "image/svg+xml"

# Text forms of a rich output, best first. text/plain is what the kernel meant as the text view;
# markdown, LaTeX and reST read well as source; JSON is data. HTML is shown as the text it lays out
# when no text form says more than an object's default repr; JavaScript never (a placeholder).
TEXT_MIMES = ("text/plain", "text/markdown", "text/latex", "text/x-rst", "application/json")

# HTML by any of its media types: text/html, and those a library gives its own HTML
# (text/vnd.plotly.v1+html), which is HTML all the same.
_HTML_MIME = re.compile(r"text/html|text/vnd\.[\w.-]+\+html")

# The text/plain repr IPython gives objects that only have a rich form ("<IPython.core.display.HTML
# object>") says nothing; a markdown or LaTeX alternative is better then.
_DEFAULT_REPR_PREFIXES = ("<IPython.", "<Figure ", "<matplotlib.")
# Python's default repr, "<__main__.Note at 0x7f45...>" or "<mod.Note object at 0x...>", says as
# little.
_DEFAULT_REPR = re.compile(r"^<[\w.]+(?: object)? at 0x[0-9a-fA-F]+>\s*$")


def _default_repr(text: str) -> bool:
    return text.startswith(_DEFAULT_REPR_PREFIXES) or _DEFAULT_REPR.match(text) is not None

# A widget's text form (its Python repr) this long at most is shown on its one-line placeholder; a
# longer one follows it on lines of its own.
WIDGET_TEXT_CHARS = 200

# SVG larger than this is not rasterised (rendering time grows with it); it is shown as cut
# text instead.
MAX_SVG_CHARS = 2_000_000

# Source lines shown per cell in an outline entry: just the first non-blank line, cut to this
# many characters.
OUTLINE_FIRST_LINE_CHARS = 80

# Base64 characters decoded to read an image's size from its header (PNG/GIF at the start, JPEG's
# SOF usually within the first few KB); never the whole payload.
_HEADER_B64_CHARS = 16_384

# Characters read beyond a head's base64 length, for the line breaks of a wrapped payload (dropped
# before decoding): 16 KB wrapped at 76 columns has about 220 of them, 440 characters with CRLF.
_HEAD_LINE_BREAK_CHARS = 1024


@dataclass
class ImageRef:
    mime: str
    payload: Any  # base64 text (str or list of str) or, for SVG, the SVG text
    label: str  # "output 2" or "attachment plot.png"
    cell: int = 0  # 1-based cell index
    line: int = 0  # line number in the cell's uncut rendering

    def encoded(self) -> bytes:
        text = _text(self.payload)
        if self.mime == SVG_MIME:
            return text.encode("utf-8")
        return pybase64.b64decode(text)  # non-alphabet characters (line breaks) are skipped

    def describe(self) -> str:
        dims = image_dims(self.mime, self.payload)
        return f"{self.label}: {self.mime}" + (f" {dims[0]}x{dims[1]}" if dims else "")


Line = Union[str, ImageRef]


@dataclass(frozen=True)
class Cap:
    """How much of one output a rendering keeps: the head and the tail, within these totals."""
    lines: int
    chars: int


@dataclass(frozen=True)
class OutputCut:
    """An output cut to its head and tail by a rendering."""
    output: int  # its number in the rendering ("--- output 2: ...")
    total: int  # its lines, uncut
    head: int  # lines kept at its start ...
    tail: int  # ... and at its end
    at: int  # where the line marking the cut is in RenderedCell.lines
    offset: int  # the first line left out, numbered in the cell's uncut rendering (what the mark names)

    def shown(self, sent: int) -> list[list[int]]:
        """The output's own lines shown, as [first, last] ranges, when the rendering's first
        `sent` lines were."""
        head = min(self.head, max(0, sent - (self.at - self.head)))
        tail = min(self.tail, max(0, sent - self.at - 1))
        first_tail = self.total - self.tail + 1
        return ([[1, head]] if head else []) + ([[first_tail, first_tail + tail - 1]] if tail else [])


@dataclass
class RenderedCell:
    lines: list[Line]
    numbers: list[int]  # for each line, its number in the cell's uncut rendering (1 = the header)
    cuts: list[OutputCut] = field(default_factory=list)  # outputs cut to head and tail, in order


def human_size(n: int) -> str:
    if n < 1000:
        return f"{n} B"
    if n < 1_000_000:
        return f"{n / 1000:.1f} KB"
    return f"{n / 1_000_000:.1f} MB"


def header(cell: Cell) -> str:
    """`### Cell 3 [id=ab12cd34] code (python) exec=7`: everything needed to cite or
    edit this cell."""
    text = f"### Cell {cell.index} [id={cell.id}] {cell.cell_type}"
    if cell.cell_type == "code":
        count = "none" if cell.execution_count is None else cell.execution_count
        text += f" ({cell.language or 'unknown'}) exec={count}"
    elif cell.language:  # a raw cell's format
        text += f" ({cell.language})"
    return text


def render_cell(cell: Cell, nb: Notebook, output_cap: Cap | None, address: str | None = None) -> RenderedCell:
    """The cell's lines; `address` is the `cells` value that reads this cell alone (its index unless
    an id of the notebook is that number too), which the mark of a cut output names. `nb` holds what
    its outputs refer to: the widgets' saved state, the file a figure's raw read shows."""
    out = RenderedCell([], [])
    address = address or str(cell.index)
    position = 0

    def add(line: Line, number: int) -> None:
        if isinstance(line, ImageRef):
            line.cell, line.line = cell.index, number
        out.lines.append(line)
        out.numbers.append(number)

    def add_block(block: list[Line], cap: Cap | None = None, output: int = 0) -> None:
        nonlocal position
        start = position
        position += len(block)
        kept = _cut(block, cap) if cap else None
        if kept is None:
            for i, line in enumerate(block):
                add(line, start + i + 1)
            return
        head, tail = kept
        for i in range(head):
            add(block[i], start + i + 1)
        omitted = block[head:len(block) - tail]
        chars = sum(len(x) for x in omitted if isinstance(x, str))
        out.cuts.append(OutputCut(output, len(block), head, tail, len(out.lines), start + head + 1))
        add(f"[… {len(omitted):,} lines ({chars:,} characters) of this output cut here; read them with "
            f"cells=\"{address}\", offset={start + head + 1}]", start + head + 1)
        for i in range(len(block) - tail, len(block)):
            add(block[i], start + i + 1)

    # The source is never cut to head and tail (it is what an agent edits); only the call budget
    # stops it. Its lines stay one for one; an inlined base64 payload is shown as a placeholder
    # (raw=true shows it).
    add_block([header(cell)] + source_lines(cell.source))
    attachments = [_attachment_line(name, bundle) for name, bundle in cell.attachments.items()]
    if attachments:
        add_block(attachments)
    for number, (label, body) in enumerate(_outputs(cell, nb), 1):
        add_block([f"--- output {number}: {label} ---"])
        add_block(body, output_cap, number)
    add_block([""])  # a blank line between cells
    return out


def _cut(block: list[Line], cap: Cap) -> tuple[int, int] | None:
    """How many lines to keep at the head and at the tail, or None when the block fits the cap."""
    # A line is sized as a read shows it: a long one cut at MAX_LINE_CHARS (with its marker).
    sizes = [min(len(x), MAX_LINE_CHARS + 100) + 1 if isinstance(x, str) else 80 for x in block]
    if len(block) <= cap.lines and sum(sizes) <= cap.chars:
        return None
    # Two thirds for the head (how it started), one third for the tail (how it ended:
    # results, the error).
    head_lines, tail_lines = cap.lines * 2 // 3, cap.lines - cap.lines * 2 // 3
    head_chars, tail_chars = cap.chars * 2 // 3, cap.chars - cap.chars * 2 // 3
    head = _fit(sizes, head_lines, head_chars)
    tail = _fit(sizes[head:][::-1], tail_lines, tail_chars)
    return max(head, 1), tail  # at least one line so the output is never silently empty


def _fit(sizes: list[int], max_lines: int, max_chars: int) -> int:
    used = count = 0
    for size in sizes[:max_lines]:
        if used + size > max_chars:
            break
        used += size
        count += 1
    return count


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Payload):
        return value.text()
    if isinstance(value, list):
        try:
            return "".join(v if isinstance(v, str) else str(v) for v in value)
        except RecursionError:  # str() of a list nested past Python's recursion limit
            return _TOO_DEEP
    return _dump_json(value)


def _payload_chars(value: Any) -> int:
    if isinstance(value, (str, Payload)):
        return len(value)
    if isinstance(value, list):
        return sum(len(v) for v in value if isinstance(v, str))
    return len(_dump_json(value))


def _outputs(cell: Cell, nb: Notebook) -> list[tuple[str, list[Line]]]:
    """(label, body) per output. Consecutive stream outputs of the same name are merged, as Jupyter
    shows them; stdout, stderr, stdout stay three outputs in that order."""
    rendered: list[tuple[str, list[Line]]] = []
    stream_name: str | None = None
    stream_texts: list[str] = []

    def flush() -> None:
        nonlocal stream_name
        if stream_name is not None:
            rendered.append((stream_name, editor_lines(clean_output("".join(stream_texts)))))
        stream_name = None
        stream_texts.clear()

    for output in cell.outputs:
        kind = output.get("output_type") if isinstance(output, dict) else None
        if kind == "stream":
            name = output.get("name") if isinstance(output.get("name"), str) else "stream"
            if name != stream_name:
                flush()
                stream_name = name
            stream_texts.append(_text(output.get("text", "")))
            continue
        flush()
        if kind in ("execute_result", "display_data"):
            data = output.get("data") if isinstance(output.get("data"), dict) else {}
            metadata = output.get("metadata") if isinstance(output.get("metadata"), dict) else {}
            label = "result" if kind == "execute_result" else "display"
            rendered.append((label, _bundle(data, metadata, f"output {len(rendered) + 1}", nb)))
        elif kind == "error":
            rendered.append(_error(output))
        else:
            keys = ", ".join(sorted(map(str, output))) if isinstance(output, dict) else type(output).__name__
            rendered.append((f"{kind or 'unknown'} (unknown output type)",
                             [f"[output of unknown type {kind!r} with fields: {keys}; not shown, raw=true shows it]"]))
    flush()
    return rendered


def _error(output: dict) -> tuple[str, list[Line]]:
    ename = str(output.get("ename", "Error"))
    traceback = output.get("traceback")
    if isinstance(traceback, list) and traceback:
        text = "\n".join(t if isinstance(t, str) else str(t) for t in traceback)
    else:
        text = f"{ename}: {output.get('evalue', '')}"
    return f"error {strip_label(ename)}", editor_lines(clean_output(text))


def strip_label(text: str) -> str:
    return clean_output(text).replace("\n", " ")[:200]


def _bundle(data: dict, metadata: dict, label: str, nb: Notebook) -> list[Line]:
    """One output's lines: the image if it has one, else a figure's summary, else its best text
    form, else a placeholder."""
    # A formula (sympy) carries its LaTeX beside its picture: the LaTeX is what a model reads best
    # and can cite, so it is kept, and the picture follows it. So is a figure's summary: the picture
    # shows its shape, the summary its numbers.
    latex = editor_lines(clean_output(_text(data["text/latex"]))) if "text/latex" in data else []
    figure = _figure(data, metadata, nb)
    for mime in RASTER_MIMES:
        if mime in data:
            return [*latex, *figure, ImageRef(mime, data[mime], label)]
    svg_refused = _svg_refusal(data[SVG_MIME]) if SVG_MIME in data else None
    if SVG_MIME in data and svg_refused is None:
        return [*latex, *figure, ImageRef(SVG_MIME, data[SVG_MIME], label)]
    if figure:  # its HTML or script form draws the same figure in a browser
        return figure
    text_mime = _best_text_mime(data)
    text = _text(data[text_mime]) if text_mime else ""
    if WIDGET_MIME in data:
        return _placeholder(f"interactive widget ({WIDGET_MIME}), not shown: {describe(data[WIDGET_MIME], nb.widgets)}",
                            text)
    html_mime = _html_mime(data)
    if html_mime and (text_mime is None or (text_mime == "text/plain" and _default_repr(text))):
        return _html(html_mime, _text(data[html_mime]))
    rich = [m for m in data if _HTML_MIME.fullmatch(m) or m == "application/javascript"]
    if text_mime == "text/plain" and rich and _default_repr(text):
        # "<IPython.core.display.Javascript object>" stands for the script: say what the output is.
        return _placeholder(f"{', '.join(rich)} output, not shown", text)
    if text_mime:
        return editor_lines(clean_output(text))
    if SVG_MIME in data:  # not rasterised: the SVG source is the next best thing, without inlined payloads
        return [f"[{SVG_MIME} shown as text: {svg_refused}]"] + editor_lines(clean_output(_text(data[SVG_MIME])))
    kinds = ", ".join(f"{mime} {human_size(_payload_chars(value))}" for mime, value in data.items())
    return [f"[{kinds or 'empty output'}: not shown, no text or image form; raw=true shows it]"]


def _html_mime(data: dict) -> str | None:
    """The HTML form of an output bundle: text/html, else another HTML media type."""
    return "text/html" if "text/html" in data else next((m for m in data if _HTML_MIME.fullmatch(m)), None)


def _html(mime: str, html: str) -> list[Line]:
    """HTML as the text it lays out, saying what it left out (scripts and styles)."""
    shown = html_text(html)
    dropped = " and ".join(amount(n, noun) for n, noun in ((shown.scripts, "script"), (shown.styles, "style")) if n)
    left = f"its {dropped} ({human_size(shown.dropped_chars)}) left out" if dropped else ""
    if shown.lines:
        return [f"[{mime} output, shown as text{'; ' + left if left else ''}]"] + \
            editor_lines(clean_output("\n".join(shown.lines)))
    if left:
        return [f"[{mime} {human_size(len(html))}: no visible text; {left}, raw=true shows them]"]
    return [f"[{mime} {human_size(len(html))}: not shown, no visible text (only frames or empty elements); "
            "raw=true shows it]"]


def _figure(data: dict, metadata: dict, nb: Notebook) -> list[str]:
    """A figure specification's summary, its first line naming the raw read of its whole JSON; []
    when the output carries none."""
    mime = figures.figure_mime(data)
    if mime is None:
        return []
    name, spec = figures.figure_name(mime), data[mime]
    if mime == figures.BOKEH_LOAD_MIME:
        return [f"[{name} ({mime}): the script that loads Bokeh into the page, not shown]"]
    if mime == figures.BOKEH_EXEC_MIME:  # the figure's model is in the script beside it
        script = data.get(figures.BOKEH_SCRIPT_MIME)
        root = metadata.get(mime, {}).get("id") if isinstance(metadata.get(mime), dict) else None
        head = f"[{name} ({mime})" + (f", root model {_text(root)}" if root is not None else "")
        if script is None:
            return [head + ", drawn by a script this output does not hold; not shown]"]
        docs = bokehdoc.document(_text(script))
        title, lines = bokehdoc.summary(docs) if docs else (None, [])
        return [head + (f' "{title}"' if title else "") + f": drawn by its script ({figures.BOKEH_SCRIPT_MIME} "
                f"{human_size(_payload_chars(script))}), which holds its data, not shown; "
                f"{_raw_call(nb, figures.BOKEH_SCRIPT_MIME, script)} shows it]", *lines]
    head = f"[{name} ({mime}){figures.details(mime, spec)}"
    return [head + f"; {_raw_call(nb, mime, spec)} shows its whole JSON]", *figures.summary(mime, spec)]


def _raw_call(nb: Notebook, key: str, value: Any) -> str:
    """The raw read of the lines of the file that hold `value` (under `key`), or of the file when
    it is not found there (an output the editor has not saved)."""
    lines = nb.file.lines_of(key, value) if nb.file is not None else None
    if lines is None:
        return "raw=true (the notebook's JSON as saved)"
    return f"raw=true, offset={lines[0]}, limit={lines[1] - lines[0] + 1}"


def _placeholder(note: str, text: str) -> list[Line]:
    """A line naming an output not shown, with its text form on that line when short, else whole on
    the lines after it (never cut: a read pages it and a find searches it)."""
    lines = editor_lines(clean_output(text))
    if not lines:
        return [f"[{note}]"]
    if len(lines) == 1 and len(lines[0]) <= WIDGET_TEXT_CHARS:
        return [f"[{note}; its text form: {lines[0]}]"]
    return [f"[{note}; its text form follows]", *lines]


def _best_text_mime(data: dict) -> str | None:
    candidates = [m for m in TEXT_MIMES if m in data]
    candidates += [m for m in data if m.startswith("text/") and not _HTML_MIME.fullmatch(m) and m not in candidates]
    if len(candidates) > 1 and candidates[0] == "text/plain":
        if _default_repr(_text(data["text/plain"])):
            return candidates[1]
    return candidates[0] if candidates else None


def _attachment_line(name: str, bundle: Any) -> Line:
    label = f"attachment {' '.join(str(name).split())}"  # a name with a line break stays one line
    if isinstance(bundle, dict):
        for mime in RASTER_MIMES:
            if mime in bundle:
                return ImageRef(mime, bundle[mime], label)
        svg_refused = _svg_refusal(bundle[SVG_MIME]) if SVG_MIME in bundle else None
        if SVG_MIME in bundle and svg_refused is None:
            return ImageRef(SVG_MIME, bundle[SVG_MIME], label)
        kinds = ", ".join(f"{m} {human_size(_payload_chars(v))}" for m, v in bundle.items())
        return f"[{label}: {kinds}, not shown" + (f": {svg_refused}" if svg_refused else "") + "]"
    return f"[{label}: unreadable attachment, not shown]"


def _svg_refusal(payload: Any) -> str | None:
    """Why an SVG is not handed to the rasteriser (it is shown as text instead), or None
    when it may be."""
    if svg_rasteriser() is None:
        return "no SVG rasteriser available"
    if _payload_chars(payload) > MAX_SVG_CHARS:
        return "too large to rasterise"
    unsafe = unsafe_reason(_text(payload).encode("utf-8", "surrogatepass"))
    return f"not rasterised because {unsafe}" if unsafe else None


_rasteriser: Any = False  # False = not looked for yet


def svg_rasteriser() -> Any:
    """cairosvg's svg2png when cairosvg and the cairo library are installed, else None (SVG
    shown as text)."""
    global _rasteriser
    if _rasteriser is False:
        try:
            from cairosvg import svg2png
            _rasteriser = svg2png
        except (ImportError, OSError):  # OSError: cairosvg present but no libcairo on this machine
            _rasteriser = None
    return _rasteriser


def image_dims(mime: str, payload: Any) -> tuple[int, int] | None:
    """Pixel size read from the first bytes of a base64 image, without decoding the rest."""
    if mime == SVG_MIME:
        return None
    head = _base64_head(payload, 64)
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:  # IHDR: width, height big-endian
        return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    if head.startswith((b"GIF87a", b"GIF89a")) and len(head) >= 10:
        return int.from_bytes(head[6:8], "little"), int.from_bytes(head[8:10], "little")
    try:  # JPEG and the rest: Pillow finds the size in the header without decoding pixels
        from PIL import Image

        return Image.open(io.BytesIO(_base64_head(payload, _HEADER_B64_CHARS))).size
    except Exception:  # noqa: BLE001 - an unreadable header only means no size is shown
        return None


def _base64_head(payload: Any, chars: int) -> bytes:
    """Decode about the first `chars` base64 characters of a payload (str or list of str lines)."""
    if isinstance(payload, Payload):
        payload = payload.head(chars + _HEAD_LINE_BREAK_CHARS)
    elif isinstance(payload, list):
        pieces, total = [], 0
        for piece in payload:
            pieces.append(str(piece))
            total += len(pieces[-1])
            if total >= chars:
                break
        payload = "".join(pieces)
    if not isinstance(payload, str):
        return b""
    head = "".join(payload[:chars + _HEAD_LINE_BREAK_CHARS].split())[:chars]
    try:
        return pybase64.b64decode(head[:len(head) // 4 * 4])
    except ValueError:  # binascii.Error: damaged data has no size to show
        return b""


def outline_line(cell: Cell, nb: Notebook) -> str:
    """One line per cell: index, id, type, size of the source, its first line, and what its
    outputs hold."""
    lines = editor_lines(cell.source)
    first = next(filter(None, map(str.strip, lines)), "")
    if len(first) > OUTLINE_FIRST_LINE_CHARS:
        first = first[:OUTLINE_FIRST_LINE_CHARS] + "…"
    text = header(cell)[4:] + f", {len(lines)} line{'s' if len(lines) != 1 else ''}"
    if first:
        text += f": {first}"
    kinds = [_output_summary(o, nb) for o in cell.outputs]
    kinds += [f"attachment {name}" for name in cell.attachments]
    if kinds:
        text += " | " + "; ".join(kinds)
    return text


def _output_summary(output: Any, nb: Notebook) -> str:
    if not isinstance(output, dict):
        return "unknown output"
    kind = output.get("output_type")
    if kind == "stream":
        text = output.get("text", "")
        text = text[-1] if isinstance(text, list) and len(text) == 1 else text
        count = len(text) if isinstance(text, list) else len(editor_lines(str(text)))
        return f"{output.get('name', 'stream')} {count} line{'s' if count != 1 else ''}"
    if kind == "error":
        return f"error {strip_label(str(output.get('ename', '')))}"
    data = output.get("data")
    if kind not in ("execute_result", "display_data") or not isinstance(data, dict):
        return f"{kind} (unknown output type)"
    parts = []
    for mime, value in data.items():
        size = _payload_chars(value)
        if mime.startswith("image/") and mime != SVG_MIME:
            dims = image_dims(mime, value)
            parts.append(f"{mime}{f' {dims[0]}x{dims[1]}' if dims else ''} {human_size(size * 3 // 4)}")
        else:
            parts.append(f"{mime} {human_size(size)}{_named(mime, value, nb)}")
    return ("result " if kind == "execute_result" else "display ") + ", ".join(parts)


def _named(mime: str, value: Any, nb: Notebook) -> str:
    """What a figure or a widget is, in a few words, as the read names it: ' (Plotly figure "Sales",
    2 bar traces)'."""
    if mime == WIDGET_MIME:
        return f" ({describe(value, nb.widgets)})"
    if figures.figure_mime({mime: value}) != mime:
        return ""
    return f" ({figures.figure_name(mime)}{figures.details(mime, value)})"


def outline(nb: Notebook) -> list[str]:
    return [outline_line(cell, nb) for cell in nb.cells]
