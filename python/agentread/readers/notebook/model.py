"""Parse .ipynb bytes into the nbformat 4 layout the renderer knows.

nbformat 4 files (any minor) are parsed here, fast; older ones (nbformat 1-3) are upgraded to
version 4 by nbformat itself. Reading is tolerant, as the editor is: a field of the wrong type is
read as empty, an unknown cell type shows its source. As each cell is read, its fields are checked
against those nbformat 4 defines; a notebook off that layout is flagged (`Notebook.odd`), and a read
of it then has nbformat's validator name each problem in the cells it shows (schema.py). Long raster
image payloads are not kept as strings: each stays in the file's bytes as a Payload (its length, and
its text when an image is attached), so a notebook of plots costs little more memory than its own
bytes, not several times them. Other payloads (big JSON, text) stay as the parser produced them;
nothing here decodes them.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from dataclasses import dataclass, field
from typing import Any

# Several times faster than json on large notebooks; json remains the fallback and the
# error reporter.
import orjson

from agentread.readers.notebook.locate import FileJson
from agentread.readers.notebook.widgets import widget_states
from agentread.result import ReadError

try:  # compiled with the package (setup.py); orjson checks each payload whole where it is not
    from agentread._scan import plain_end
except ImportError:
    plain_end = None

# How to tell the model it can still read the file, when it is not a notebook we can render by cell.
AS_TEXT_HINT = "call again with raw=true to read it as plain numbered text"

# nbformat 4.5 cell ids: 1-64 characters from this set (anything else is read as it is).
_VALID_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

# A derived id starts with "~", which no nbformat id can contain: it never collides with a real one.
DERIVED_ID_PREFIX = "~"

# The fields nbformat 4's schema gives the notebook, each kind of cell and each kind of output,
# all required but the attachments (nbformat/v4/nbformat.v4.*.schema.json; from minor 5 on,
# cells also have a required "id"). Checking a cell's fields as it is read costs next to
# nothing, where nbformat's validator costs more than the read, whether its schema is compiled
# first or each cell is checked uncompiled: it is called only for a notebook off this layout,
# and has the last word on it.
_TOP_FIELDS = frozenset({"cells", "metadata", "nbformat", "nbformat_minor"})
_CELL_FIELDS = {"code": frozenset({"cell_type", "metadata", "source", "outputs", "execution_count"}),
                "markdown": frozenset({"cell_type", "metadata", "source"}),
                "raw": frozenset({"cell_type", "metadata", "source"})}
_OPTIONAL_CELL_FIELDS = {"code": frozenset(), "markdown": frozenset({"attachments"}),
                         "raw": frozenset({"attachments"})}
# Per kind of cell, the fields it must have and those it may have; without and with the id
# of minor 5 on.
_CELL_LAYOUTS = {with_ids: {kind: (fields | extra, fields | _OPTIONAL_CELL_FIELDS[kind] | extra)
                            for kind, fields in _CELL_FIELDS.items()}
                 for with_ids, extra in ((False, frozenset()), (True, frozenset({"id"})))}
_OUTPUT_FIELDS = {"execute_result": frozenset({"output_type", "execution_count", "data", "metadata"}),
                  "display_data": frozenset({"output_type", "data", "metadata"}),
                  "stream": frozenset({"output_type", "name", "text"}),
                  "error": frozenset({"output_type", "ename", "evalue", "traceback"})}
IDS_FROM_MINOR = 5

# Raster image payloads (base64 PNG, JPEG, GIF, WebP) at least this long are left in the file's
# bytes instead of being parsed into strings: a read needs only their length and first bytes (the
# pixel size), and the text of the few it attaches. The parser then sees a notebook of plots as a
# small document.
PAYLOAD_MIN_CHARS = 4096
# ... and only when they are at least a third of the file: the JSON without them is a copy of the
# rest, which costs more than parsing them when they are few. Each payload is still checked
# (_ascii_string_length), and parsing the rest takes a fraction of the time and memory of parsing
# them all, a smaller one the larger the notebook.
PAYLOAD_SHARE = 3
# Where an image payload starts: after `"image/png": "` (nbformat 4 bundles and attachments, the
# slash maybe escaped; `"png"`, `"jpeg"` in nbformat 3, renamed by its upgrade). The quote after the
# key is not escaped, so it is no string's content (there every quote is escaped): it ends the key,
# and the value's quote opens a string.
_PAYLOAD_KEY = re.compile(rb'"(?:image\\?/(?:png|jpeg|gif|webp)|png|jpeg)"[ \t\r\n]*:[ \t\r\n]*"')
# What stands for a payload in the JSON the parser reads: a NUL (written as the escape \u0000), a
# token drawn for each parse (so that no string of the file, however escaped, can pass for a mark)
# and the payload's number.
_PAYLOAD_MARK = "\x00payload:%s:"
# The keys _PAYLOAD_KEY finds, as the parser gives them (nbformat 3's own are renamed by
# its upgrade).
_IMAGE_KEYS = ("image/png", "image/jpeg", "image/gif", "image/webp", "png", "jpeg")
# The longest JSON escape (\uXXXX): a cut into a payload's bytes ends at most this far inside one.
_MAX_ESCAPE_BYTES = 6


class Payload:
    """A long base64 image payload left in the notebook's bytes: its length is known without
    reading it, its text is parsed only when the image is attached, and its head alone when the
    pixel size is wanted."""

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
    """The JSON with each long image payload replaced by `mark` and its number, and the
    payloads numbered."""
    payloads: list[Payload] = []
    mark_json = mark.replace("\x00", "\\u0000").encode("ascii")
    pieces: list[Any] = []  # memoryview slices: only the joined result is a copy
    view = memoryview(data)
    last = set_aside = 0
    match = _PAYLOAD_KEY.search(data)
    while match:
        start = match.end()
        end = data.find(b'"', start)
        # The next key is looked for after this value: a payload's bytes are not scanned by
        # the pattern.
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
    """The length of the JSON string data[start:end] (between its quotes) if it is valid and all
    ASCII, else None. Not checked against base64's alphabet: the decoder skips what is not in it, in
    a parsed string as in a payload. The plain stretch, nearly always all of it, is checked in C,
    several times faster than parsing; the rest (most notebooks end each payload with an escaped
    newline) is parsed, and dropped at once, by orjson."""
    plain = plain_end(data, start, end) if plain_end is not None else start
    if plain == end:
        return end - start
    try:
        text = orjson.loads(view[start - 1:end + 1] if plain == start else b'"' + view[plain:end + 1])
    except orjson.JSONDecodeError:
        return None
    return plain - start + len(text) if isinstance(text, str) and text.isascii() else None


def _restore(cells: list[Cell], mark: str, payloads: list[Payload]) -> int:
    """Marks back to their Payload in the cells' mime bundles; how many were put back. Looked for
    first under the bundles' image keys, where they nearly always are; only when some are missing,
    in every JSON value nested in a bundle too (walked with a stack: the parser takes deeper nesting
    than Python's recursion)."""
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
    raw: Any = None  # the cell as the (upgraded) document holds it, for nbformat's validator


@dataclass
class Notebook:
    cells: list[Cell]
    language: str | None
    version: str  # of the file: "4.5", "3.0", "4.?" when the minor is missing
    warnings: list[str]  # what the reader had to decide about the file (a version guessed, a repeated id)
    ids: dict[str, list[int]]  # id → 0-based positions (several when ids are duplicated)
    top: dict[str, Any] = field(default_factory=dict)  # the nbformat 4 document without its cells
    minor: int = 0  # the nbformat 4 minor whose schema applies (0 when missing, as nbformat reads it)
    odd: bool = False  # a field is off nbformat 4's layout: a read has nbformat's validator check what it shows
    widgets: dict[str, Any] = field(default_factory=dict)  # model id → the widget state the metadata saved
    file: FileJson | None = None  # the file a raw read shows, where a figure's JSON is looked for


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


def join_source(value: Any) -> str:
    """Multiline strings are stored as a list of lines, each with its newline."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(v if isinstance(v, str) else str(v) for v in value)
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
    notebook = _from_document(doc)
    if payloads and _restore(notebook.cells, mark, payloads) != len(payloads):
        notebook = _from_document(load_json(data))  # a payload stood outside every bundle (in metadata, say)
    notebook.file = FileJson(data)
    return notebook


def _from_document(doc: Any) -> Notebook:
    """The notebook a parsed file holds: nbformat 4 as it is, an older version upgraded
    by nbformat."""
    if not isinstance(doc, dict) or not ({"cells", "worksheets", "nbformat"} & doc.keys()):
        what = "an object" if isinstance(doc, dict) else f"a JSON {type(doc).__name__}"
        raise ReadError("not_a_notebook", f"the file is valid JSON but not a Jupyter notebook ({what} without "
                        f"'cells' or 'nbformat'), so it cannot be read by cells; {AS_TEXT_HINT}")
    warnings: list[str] = []
    major = doc.get("nbformat")
    if type(major) is not int or major < 1:
        major = 4 if "cells" in doc else 3
        warnings.append(f"no valid 'nbformat' version; read as version {major}")
        doc = {**doc, "nbformat": major}
    minor = doc.get("nbformat_minor")
    version = f"{major}.{minor if type(minor) is int else '?'}"
    if major >= 4:
        return notebook_from_dict(doc, version, warnings)
    return notebook_from_dict(upgrade(doc, major, warnings), version, warnings, file_ids=False)


def upgrade(doc: dict, major: int, warnings: list[str]) -> Any:
    """An nbformat 1-3 notebook as nbformat 4, read and upgraded by nbformat. The ids it gives
    the cells are drawn at random, so the caller derives its own, which stay the same from one
    read to the next."""
    import nbformat

    doc = _upgradable(doc, major, warnings)
    try:
        node = nbformat.versions[major].to_notebook_json(doc, minor=doc.get("nbformat_minor", 0))
        return nbformat.convert(node, 4)
    except Exception as exc:  # noqa: BLE001 - nbformat's upgrade indexes the document freely: damage fails many ways
        raise ReadError("not_a_notebook", f"the file is an nbformat {major} notebook that nbformat cannot upgrade "
                        f"to version 4 ({type(exc).__name__}: {str(exc)[:200]}), so it cannot be read by cells; "
                        f"{AS_TEXT_HINT}") from None


def _upgradable(doc: dict, major: int, warnings: list[str]) -> dict:
    """The notebook's frame as nbformat's upgrade reads it without checking: where the file lacks a
    part of it (nbformat 2 and 3: the metadata, the worksheets and their cell lists), it is read as
    empty, and said."""
    if major < 2:
        return doc
    doc = dict(doc)
    if not isinstance(doc.get("metadata"), dict):
        warnings.append("no notebook 'metadata' object; read without")
        doc["metadata"] = {}
    sheets = doc.get("worksheets")
    if not isinstance(sheets, list):
        warnings.append(f"no 'worksheets' list (an nbformat {major} notebook keeps its cells there): no cells")
        sheets = []
    kept = [sheet for sheet in sheets if isinstance(sheet, dict) and isinstance(sheet.get("cells"), list)]
    if len(kept) < len(sheets):
        warnings.append(f"{len(sheets) - len(kept)} worksheet(s) without a 'cells' list; read without them")
    doc["worksheets"] = kept
    return doc


def notebook_from_dict(doc: dict, version: str | None = None, warnings: list[str] | None = None,
                       file_ids: bool = True) -> Notebook:
    """The reader's notebook from an nbformat 4 document (a dict, or nbformat's NotebookNode).
    Without `file_ids`, the cells' ids are not the file's (nbformat's upgrade draws them) and
    derived ones are used."""
    raw_cells = doc.get("cells", [])
    if not isinstance(raw_cells, list):
        raise ReadError("not_a_notebook", f"the notebook's 'cells' is not a list, so it cannot be read by cells; "
                        f"{AS_TEXT_HINT}")
    warnings = [] if warnings is None else warnings
    metadata = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    minor = doc.get("nbformat_minor")
    minor = minor if type(minor) is int and minor >= 0 else 0
    language = _language(metadata)
    cells = [_cell(i + 1, raw, language) for i, raw in enumerate(raw_cells)]
    ids = _assign_ids(cells, raw_cells if file_ids else [None] * len(cells), warnings)
    layouts = _CELL_LAYOUTS[minor >= IDS_FROM_MINOR]
    odd = _top_off_layout(doc) or any(_cell_off_layout(raw, layouts) for raw in raw_cells)
    top = {key: value for key, value in doc.items() if key != "cells"}
    return Notebook(cells, language, version or f"4.{minor}", warnings, ids, top, minor, odd, widget_states(metadata))


def _language(metadata: dict) -> str | None:
    for key, field_name in (("kernelspec", "language"), ("language_info", "name")):
        section = metadata.get(key)
        value = section.get(field_name) if isinstance(section, dict) else None
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _cell(index: int, raw: Any, language: str | None) -> Cell:
    if not isinstance(raw, dict):
        return Cell(index, "", "unknown", "", raw=raw)
    cell_type = raw.get("cell_type")
    cell = Cell(index, "", cell_type if isinstance(cell_type, str) else "unknown", join_source(raw.get("source")),
                raw=raw)
    metadata = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
    if cell.cell_type == "code":
        count = raw.get("execution_count")
        cell.execution_count = count if type(count) is int else None
        vscode = metadata.get("vscode")
        cell_language = vscode.get("languageId") if isinstance(vscode, dict) else None
        cell.language = cell_language if isinstance(cell_language, str) else language
        outputs = raw.get("outputs")
        cell.outputs = outputs if isinstance(outputs, list) else []
    elif cell.cell_type == "raw":
        fmt = metadata.get("format") or metadata.get("raw_mimetype")
        cell.language = fmt if isinstance(fmt, str) else None
    attachments = raw.get("attachments")
    if isinstance(attachments, dict):
        cell.attachments = attachments
    return cell


def _top_off_layout(doc: dict) -> bool:
    metadata, minor = doc.get("metadata"), doc.get("nbformat_minor")
    if doc.keys() != _TOP_FIELDS or doc["nbformat"] != 4 or type(minor) is not int or minor < 0 \
            or not isinstance(metadata, dict):
        return True
    kernelspec, language_info = metadata.get("kernelspec"), metadata.get("language_info")
    return not ((kernelspec is None or isinstance(kernelspec, dict) and _strings(kernelspec, "name", "display_name"))
                and (language_info is None or isinstance(language_info, dict) and _strings(language_info, "name")))


def _cell_off_layout(raw: Any, layouts: dict[str, tuple[frozenset, frozenset]]) -> bool:
    kind = raw.get("cell_type") if isinstance(raw, dict) else None
    required, allowed = layouts.get(kind, (None, None)) if isinstance(kind, str) else (None, None)
    if required is None or not required <= raw.keys() <= allowed:
        return True
    if "id" in required and not (isinstance(raw["id"], str) and _VALID_ID.match(raw["id"])):
        return True
    if not isinstance(raw["metadata"], dict) or not isinstance(raw["source"], (str, list)):
        return True
    if kind != "code":
        return not isinstance(raw.get("attachments", {}), dict)
    outputs = raw["outputs"]
    return not (_count(raw["execution_count"]) and isinstance(outputs, list)) or any(map(_output_off_layout, outputs))


def _output_off_layout(output: Any) -> bool:
    kind = output.get("output_type") if isinstance(output, dict) else None
    if not isinstance(kind, str) or output.keys() != _OUTPUT_FIELDS.get(kind):
        return True
    if kind == "stream":
        return not (isinstance(output["name"], str) and isinstance(output["text"], (str, list)))
    if kind == "error":
        return not (_strings(output, "ename", "evalue") and isinstance(output["traceback"], list))
    return not (isinstance(output["data"], dict) and isinstance(output["metadata"], dict)
                and (kind == "display_data" or _count(output["execution_count"])))


def _strings(section: dict, *names: str) -> bool:
    return all(isinstance(section.get(name), str) for name in names)


def _count(value: Any) -> bool:
    """An execution count as the schema has it: a whole number from 0, or null."""
    return value is None or (type(value) is int and value >= 0)


def _assign_ids(cells: list[Cell], raw_cells: list[Any], warnings: list[str]) -> dict[str, list[int]]:
    """Keep the file's ids; derive a stable one for cells without: a hash of the source (plus
    how many earlier cells had the same source), so it survives edits to other cells and
    re-reads of the file."""
    ids: dict[str, list[int]] = {}
    seen_sources: dict[str, int] = {}
    for pos, (cell, raw) in enumerate(zip(cells, raw_cells)):
        real = raw.get("id") if isinstance(raw, dict) else None
        if isinstance(real, str) and real:
            cell.id = real
        else:
            # CRC-32: as unlikely to collide as 8 hex digits of any hash, without loading OpenSSL, a
            # slow import.
            digest = f"{zlib.crc32(cell.source.encode('utf-8', 'surrogatepass')):08x}"
            repeat = seen_sources.get(digest, 0)
            seen_sources[digest] = repeat + 1
            if repeat:
                digest = f"{zlib.crc32(f'{digest}#{repeat}'.encode()):08x}"
            cell.id = DERIVED_ID_PREFIX + digest
        ids.setdefault(cell.id, []).append(pos)
    duplicated = [i for i, where in ids.items() if len(where) > 1 and not i.startswith(DERIVED_ID_PREFIX)]
    if duplicated:
        warnings.append(f"duplicate cell id(s) {', '.join(duplicated[:5])}: addressing one selects every cell "
                        "that has it")
    return ids
