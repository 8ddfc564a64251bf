"""Parse .ipynb bytes into one tolerant in-memory shape, whatever the nbformat version (2, 3 or 4.x).

Everything is normalised to the v4 layout (flat cell list, `source`, `execution_count`, outputs with a
`data` mime bundle) so the renderer knows one shape. Deviations from the schema are collected as warnings
for the model instead of refusing the file: a notebook the editor opens should be readable here too.
Long raster image payloads are not kept as strings: each stays in the file's bytes as a Payload (its length, and
its text when an image is attached), so a notebook of plots costs about its own size in memory, not three times
it. Other payloads (big JSON, text) stay as the parser produced them; nothing here decodes them.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from dataclasses import dataclass, field
from typing import Any

# Several times faster than json on large notebooks; json remains the fallback and the error reporter.
import orjson

from agentread.result import ReadError

try:  # compiled with the package (setup.py); orjson checks each payload whole where it is not
    from agentread._scan import plain_end
except ImportError:
    plain_end = None

# How to tell the model it can still read the file, when it is not a notebook we can render by cell.
AS_TEXT_HINT = "call again with raw=true to read it as plain numbered text"

# nbformat 4.5 cell ids: 1-64 characters from this set (anything else is read, with a warning).
_VALID_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

# A derived id starts with "~", which no nbformat id can contain: it never collides with a real one.
DERIVED_ID_PREFIX = "~"

# nbformat 3 (and 2) stored mime bundles as short keys on the output itself.
_V3_MIME_KEYS = {
    "text": "text/plain", "html": "text/html", "svg": "image/svg+xml", "png": "image/png",
    "jpeg": "image/jpeg", "latex": "text/latex", "json": "application/json",
    "javascript": "application/javascript", "markdown": "text/markdown", "pdf": "application/pdf",
}
_V3_OUTPUT_TYPES = {"pyout": "execute_result", "pyerr": "error"}
_OUTPUT_TYPES = {"stream", "execute_result", "display_data", "error"}

# Raster image payloads (base64 PNG, JPEG, GIF, WebP) at least this long are left in the file's bytes instead of
# being parsed into strings: a read needs only their length and first bytes (the pixel size), and the text of the
# few it attaches. The parser then sees a notebook of plots as a small document.
PAYLOAD_MIN_CHARS = 4096
# ... and only when they are at least a third of the file: the JSON without them is a copy of the rest, which
# costs more than parsing them when they are few. Each payload is still checked (_ascii_string_length): on the
# real 3.9 MB handson-ml2 notebook of plots, parsing takes about 40% of the time of parsing them all (4 against
# 10 ms), in 1.7x the file's size in memory instead of 3x; on a generated 95 MB one, a tenth (26 against 280 ms).
PAYLOAD_SHARE = 3
# Where an image payload starts: after `"image/png": "` (nbformat 4 bundles and attachments, the slash maybe
# escaped; `"png"`, `"jpeg"` in nbformat 3). The quote after the key is not escaped, so it is no string's
# content (there every quote is escaped): it ends the key, and the value's quote opens a string.
_PAYLOAD_KEY = re.compile(rb'"(?:image\\?/(?:png|jpeg|gif|webp)|png|jpeg)"[ \t\r\n]*:[ \t\r\n]*"')
# What stands for a payload in the JSON the parser reads: a NUL (written as the escape \u0000), a token drawn for
# each parse (so that no string of the file, however escaped, can pass for a mark) and the payload's number.
_PAYLOAD_MARK = "\x00payload:%s:"
# The keys _PAYLOAD_KEY finds, as the parser gives them (nbformat 3's own are renamed with its outputs).
_IMAGE_KEYS = ("image/png", "image/jpeg", "image/gif", "image/webp", "png", "jpeg")
# The longest JSON escape (\uXXXX): a cut into a payload's bytes ends at most this far inside one.
_MAX_ESCAPE_BYTES = 6


class Payload:
    """A long base64 image payload left in the notebook's bytes: its length is known without reading it, its
    text is parsed only when the image is attached, and its head alone when the pixel size is wanted."""

    __slots__ = ("_data", "_start", "_end", "_chars")

    def __init__(self, data: bytes, start: int, end: int, chars: int) -> None:
        self._data, self._start, self._end, self._chars = data, start, end, chars

    def __len__(self) -> int:
        return self._chars

    def text(self) -> str:
        return orjson.loads(self._data[self._start - 1:self._end + 1])  # with its quotes: checked when set aside

    def head(self, chars: int) -> str:
        """About the first `chars` characters (fewer when the head holds escapes)."""
        raw = self._data[self._start:min(self._end, self._start + 2 * chars)]
        # The cut may fall inside an escape: step back to where the bytes parse.
        for cut in range(len(raw), max(-1, len(raw) - _MAX_ESCAPE_BYTES - 1), -1):
            try:
                return orjson.loads(b'"' + raw[:cut] + b'"')[:chars]
            except orjson.JSONDecodeError:
                continue
        return ""


def _set_aside(data: bytes, mark: str) -> tuple[bytes, list[Payload]]:
    """The JSON with each long image payload replaced by `mark` and its number, and the payloads numbered."""
    payloads: list[Payload] = []
    mark_json = mark.replace("\x00", "\\u0000").encode("ascii")
    pieces: list[Any] = []  # memoryview slices: only the joined result is a copy
    view = memoryview(data)
    last = set_aside = 0
    match = _PAYLOAD_KEY.search(data)
    while match:
        start = match.end()
        end = data.find(b'"', start)
        # The next key is looked for after this value: a payload's bytes are not scanned by the pattern.
        match = _PAYLOAD_KEY.search(data, max(end, start))
        chars = _ascii_string_length(data, view, start, end) if end - start >= PAYLOAD_MIN_CHARS else None
        if chars is None:
            continue  # short, or not a plain string (the parser is left to say what is wrong with it)
        pieces += [view[last:start], mark_json + b"%d" % len(payloads)]
        payloads.append(Payload(data, start, end, chars))
        set_aside += end - start
        last = end
    if set_aside * PAYLOAD_SHARE < len(data):
        return data, []  # the copy without them would cost more than parsing them
    pieces.append(view[last:])
    return b"".join(pieces), payloads


def _ascii_string_length(data: bytes, view: memoryview, start: int, end: int) -> int | None:
    """The length of the JSON string data[start:end] (between its quotes) if it is valid and all ASCII, else None.
    Not checked against base64's alphabet: the decoder skips what is not in it, in a parsed string as in a
    payload. The plain stretch, nearly always all of it, is checked in C (over 8 GB/s here); the rest (most
    notebooks end each payload with an escaped newline) is parsed, and dropped at once, by orjson (2-3 GB/s)."""
    plain = plain_end(data, start, end) if plain_end is not None else start
    if plain == end:
        return end - start
    try:
        text = orjson.loads(view[start - 1:end + 1] if plain == start else b'"' + view[plain:end + 1])
    except orjson.JSONDecodeError:
        return None
    return plain - start + len(text) if isinstance(text, str) and text.isascii() else None


def _restore(cells: list[Cell], mark: str, payloads: list[Payload]) -> int:
    """Marks back to their Payload in the cells' mime bundles; how many were put back. Looked for first under the
    bundles' image keys, where they nearly always are; only when some are missing, in every JSON value nested in
    a bundle too (walked with a stack: the parser takes deeper nesting than Python's recursion)."""
    bundles: list[Any] = [output["data"] for cell in cells for output in cell.outputs
                          if isinstance(output, dict) and isinstance(output.get("data"), dict)]
    bundles += [bundle for cell in cells for bundle in cell.attachments.values() if isinstance(bundle, dict)]
    restored = sum(_put_back(bundle, key, mark, payloads) for bundle in bundles for key in _IMAGE_KEYS
                   if key in bundle)
    stack = bundles if restored < len(payloads) else []
    while stack:
        node = stack.pop()
        for key, item in (node.items() if isinstance(node, dict) else enumerate(node)):
            if isinstance(item, (dict, list)):
                stack.append(item)
            else:
                restored += _put_back(node, key, mark, payloads)
    return restored


def _put_back(node: Any, key: Any, mark: str, payloads: list[Payload]) -> bool:
    item = node[key]
    if not isinstance(item, str) or not item.startswith(mark):
        return False
    number = item[len(mark):]
    if not (number.isascii() and number.isdigit() and int(number) < len(payloads)):
        return False
    node[key] = payloads[int(number)]
    return True


@dataclass
class Cell:
    index: int  # 1-based, as the model addresses it
    id: str  # the nbformat id, or a derived one starting with DERIVED_ID_PREFIX
    cell_type: str
    source: str
    execution_count: int | None = None
    language: str | None = None  # code cells: the kernel language; raw cells: their raw mime type
    outputs: list[Any] = field(default_factory=list)  # v4-shaped output dicts (anything else: unknown)
    attachments: dict[str, Any] = field(default_factory=dict)


@dataclass
class Notebook:
    cells: list[Cell]
    language: str | None
    version: str  # "4.5", "3.0", "4.?" when the minor is missing
    warnings: list[str]
    ids: dict[str, list[int]]  # id → 0-based positions (several when ids are duplicated)


def load_json(data: bytes) -> Any:
    if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 BOM, which some editors write
        data = data[3:]
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass  # json accepts a little more (NaN, UTF-16, lone surrogates) and says where it failed
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise ReadError("not_a_notebook", f"the file is not valid notebook JSON (line {exc.lineno}, column "
                        f"{exc.colno}: {exc.msg}), so it cannot be read by cells; {AS_TEXT_HINT}") from None
    except (ValueError, RecursionError) as exc:  # bad UTF-8, an integer of thousands of digits, deep nesting
        raise ReadError("not_a_notebook", f"the file is not valid notebook JSON ({type(exc).__name__}), so it "
                        f"cannot be read by cells; {AS_TEXT_HINT}") from None


def join_source(value: Any, old_format: bool) -> str:
    """Multiline strings are stored as a list of lines; nbformat < 4 sometimes dropped the newlines."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        lines = [v if isinstance(v, str) else str(v) for v in value]
        if old_format and lines and not lines[0].endswith(("\n", "\r")):
            return "\n".join(lines)
        return "".join(lines)
    return "" if value is None else str(value)


def parse_notebook(data: bytes) -> Notebook:
    mark = _PAYLOAD_MARK % os.urandom(8).hex()
    reduced, payloads = _set_aside(data, mark)
    try:
        doc = load_json(reduced)
    except ReadError:
        if not payloads:
            raise
        doc = load_json(data)  # the error names the place in the file itself
        payloads = []
    del reduced
    notebook = _notebook(doc)
    if payloads and _restore(notebook.cells, mark, payloads) != len(payloads):
        notebook = _notebook(load_json(data))  # a payload stood outside every bundle (in metadata, say)
    return notebook


def _notebook(doc: Any) -> Notebook:
    if not isinstance(doc, dict) or not ({"cells", "worksheets", "nbformat"} & doc.keys()):
        what = "an object" if isinstance(doc, dict) else f"a JSON {type(doc).__name__}"
        raise ReadError("not_a_notebook", f"the file is valid JSON but not a Jupyter notebook ({what} without "
                        f"'cells' or 'nbformat'), so it cannot be read by cells; {AS_TEXT_HINT}")
    warnings: list[str] = []
    major = doc.get("nbformat")
    if not isinstance(major, int):
        major = 4 if "cells" in doc else 3
        warnings.append(f"no valid 'nbformat' version; read as version {major}")
    minor = doc.get("nbformat_minor")
    if not isinstance(minor, int):
        minor = None
        warnings.append("no 'nbformat_minor'")
    metadata = doc.get("metadata")
    if not isinstance(metadata, dict):
        if metadata is not None:
            warnings.append("notebook metadata is not an object; ignored")
        metadata = {}
    old = major < 4
    raw_cells = _v3_cells(doc, warnings) if old else doc.get("cells", [])
    if not isinstance(raw_cells, list):
        raise ReadError("not_a_notebook", f"the notebook's 'cells' is not a list, so it cannot be read by cells; "
                        f"{AS_TEXT_HINT}")
    language = _language(metadata, warnings)
    cells = [_cell(i + 1, raw, old, language, warnings) for i, raw in enumerate(raw_cells)]
    if language is None:  # nbformat 3 named the language on each code cell only
        language = next((c.language for c in cells if c.cell_type == "code" and c.language), None)
    ids = _assign_ids(cells, raw_cells, major, minor, warnings)
    version = f"{major}.{'?' if minor is None else minor}"
    return Notebook(cells, language, version, warnings, ids)


def _v3_cells(doc: dict, warnings: list[str]) -> list[Any]:
    worksheets = doc.get("worksheets")
    if not isinstance(worksheets, list):
        warnings.append("no 'worksheets' list (an nbformat 3 notebook keeps its cells there): no cells")
        return []
    cells: list[Any] = []
    for sheet in worksheets:
        sheet_cells = sheet.get("cells") if isinstance(sheet, dict) else None
        if isinstance(sheet_cells, list):
            cells.extend(sheet_cells)
        else:
            warnings.append("a worksheet has no 'cells' list")
    return cells


def _language(metadata: dict, warnings: list[str]) -> str | None:
    for key, field_name in (("kernelspec", "language"), ("language_info", "name")):
        section = metadata.get(key)
        if section is None:
            continue
        if not isinstance(section, dict):
            warnings.append(f"metadata.{key} is not an object; ignored")
            continue
        value = section.get(field_name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    value = metadata.get("language")  # nbformat 3 kept it here (and on each code cell)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _cell(index: int, raw: Any, old: bool, language: str | None, warnings: list[str]) -> Cell:
    if not isinstance(raw, dict):
        warnings.append(f"cell {index} is not an object; shown empty")
        return Cell(index, "", "unknown", "")
    cell_type = raw.get("cell_type")
    cell_type = cell_type if isinstance(cell_type, str) else "unknown"
    source = join_source(raw.get("input" if old and cell_type == "code" else "source"), old)
    metadata = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
    cell = Cell(index, "", cell_type, source)
    if cell_type == "heading":  # nbformat 3: became a markdown cell with '#' marks in version 4
        level = raw.get("level") if isinstance(raw.get("level"), int) else 1
        cell.cell_type, cell.source = "markdown", "#" * max(1, min(level, 6)) + " " + source
        if not old:
            warnings.append(f"cell {index} is a 'heading' cell, which nbformat 4 no longer has; read as markdown")
    elif cell_type == "code":
        count = raw.get("prompt_number" if old else "execution_count")
        cell.execution_count = count if isinstance(count, int) and not isinstance(count, bool) else None
        vscode = metadata.get("vscode")
        cell_language = vscode.get("languageId") if isinstance(vscode, dict) else None
        if not isinstance(cell_language, str) and old:
            cell_language = raw.get("language")
        cell.language = cell_language if isinstance(cell_language, str) else language
        outputs = raw.get("outputs", [])
        cell.outputs = [_v3_output(o) for o in outputs] if old and isinstance(outputs, list) else outputs
        if not isinstance(cell.outputs, list):
            warnings.append(f"cell {index} has outputs that are not a list; not shown")
            cell.outputs = []
        unknown = {_output_type(o) for o in cell.outputs} - _OUTPUT_TYPES
        if unknown:
            warnings.append(f"cell {index} has output(s) of unknown type {', '.join(map(repr, unknown))}")
    elif cell_type == "raw":
        fmt = metadata.get("format") or metadata.get("raw_mimetype")
        cell.language = fmt if isinstance(fmt, str) else None
    elif cell_type != "markdown":
        warnings.append(f"cell {index} has unknown type {cell_type!r}; its source is shown as is")
    attachments = raw.get("attachments")
    if isinstance(attachments, dict):
        cell.attachments = attachments
    return cell


def _output_type(output: Any) -> str:
    kind = output.get("output_type") if isinstance(output, dict) else None
    return kind if isinstance(kind, str) else repr(kind)


def _v3_output(raw: Any) -> Any:
    if not isinstance(raw, dict):
        return raw
    kind = _output_type(raw)
    kind = _V3_OUTPUT_TYPES.get(kind, kind)
    if kind == "stream":
        return {"output_type": "stream", "name": raw.get("stream", "stdout"),
                "text": join_source(raw.get("text"), True)}
    if kind == "error":
        return {**raw, "output_type": "error"}
    if kind in ("execute_result", "display_data"):
        data = {mime: (join_source(raw[key], True) if isinstance(raw[key], list) else raw[key])
                for key, mime in _V3_MIME_KEYS.items() if key in raw}
        return {"output_type": kind, "data": data, "execution_count": raw.get("prompt_number")}
    return raw


def _assign_ids(cells: list[Cell], raw_cells: list[Any], major: int, minor: int | None,
                warnings: list[str]) -> dict[str, list[int]]:
    """Keep nbformat ids; derive a stable one for cells without: a hash of the source (plus how many
    earlier cells had the same source), so it survives edits to other cells and re-reads of the file."""
    ids: dict[str, list[int]] = {}
    missing = invalid = 0
    seen_sources: dict[str, int] = {}
    for pos, (cell, raw) in enumerate(zip(cells, raw_cells)):
        real = raw.get("id") if isinstance(raw, dict) else None
        if isinstance(real, str) and real:
            cell.id = real
            invalid += not _VALID_ID.match(real)
        else:
            # CRC-32: as unlikely to collide as 8 hex digits of any hash, without loading OpenSSL (8 ms).
            digest = f"{zlib.crc32(cell.source.encode('utf-8', 'surrogatepass')):08x}"
            repeat = seen_sources.get(digest, 0)
            seen_sources[digest] = repeat + 1
            if repeat:
                digest = f"{zlib.crc32(f'{digest}#{repeat}'.encode()):08x}"
            cell.id = DERIVED_ID_PREFIX + digest
            missing += 1
        ids.setdefault(cell.id, []).append(pos)
    requires_ids = major > 4 or (major == 4 and minor is not None and minor >= 5)
    if missing and requires_ids:
        warnings.append(f"{missing} cell(s) without the id nbformat {major}.{minor} requires")
    if invalid:
        warnings.append(f"{invalid} cell id(s) with characters nbformat does not allow")
    duplicated = [i for i, where in ids.items() if len(where) > 1 and not i.startswith(DERIVED_ID_PREFIX)]
    if duplicated:
        warnings.append(f"duplicate cell id(s) {', '.join(duplicated[:5])}: addressing one selects every cell "
                        "that has it")
    return ids
