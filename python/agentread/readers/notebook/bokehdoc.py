"""A Bokeh figure as the script of its notebook output holds it: Bokeh writes the document it draws
as a JSON literal (`docs_json = {...}`) into that script. The JSON is decoded by json; its models
(Bokeh 3 nests them as {"type": "object", "name", "id", "attributes"}, Bokeh 2 lists them as
{"type", "id", "attributes"}) give the figure's title, its axes and each glyph with its data."""

from __future__ import annotations

import base64
import json
import re
import zlib
from typing import Any

# Where the document starts in the script.
_DOCS_JSON = re.compile(r"\bdocs_json\s*=\s*")
# Objects and lists walked in a document, at most: a figure has a few hundred; a dashboard some
# thousands.
MAX_MODELS = 100_000
# The models that hold axes: bokeh.plotting's figure, and the plots of bokeh.models.
_PLOTS = ("Figure", "Plot", "GMapPlot", "GMap")
# Glyphs listed one a line; more are counted.
MAX_GLYPHS_LISTED = 20
# First values shown of each column, each cut to this many characters.
FIRST_VALUES = 3
MAX_VALUE_CHARS = 80
# NumPy's dtype names, as Bokeh writes its arrays (little-endian), to struct formats.
_DTYPES = {"int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I",
           "int64": "q", "uint64": "Q", "float32": "f", "float64": "d"}
# A gzip stream's first bytes, and the window bits that have zlib read one.
_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_WBITS = 31
_ITEM_BYTES = {"b": 1, "B": 1, "h": 2, "H": 2, "i": 4, "I": 4, "q": 8, "Q": 8, "f": 4, "d": 8}


def document(script: str) -> dict | None:
    """The document a Bokeh output's script draws, or None when the script holds none."""
    match = _DOCS_JSON.search(script)
    if match is None:
        return None
    try:
        docs, _ = json.JSONDecoder().raw_decode(script, match.end())
        if isinstance(docs, str):  # written as a string that the script parses
            docs = json.loads(docs)
    except (ValueError, RecursionError):
        return None
    return docs if isinstance(docs, dict) else None


def summary(docs: dict) -> tuple[str | None, list[str]]:
    """(the figure's title, the lines naming its axes and glyphs)."""
    models = _models(docs)
    title = next((_text(model.get("text")) for name, model in models.values() if name == "Title"
                  and _text(model.get("text"))), None)
    lines = []
    axes = [f"{side} axis: {label}" for name, model in models.values() if name in _PLOTS
            for side, where in (("x", "below"), ("y", "left"))
            for label in [_axis_label(model.get(where), models)] if label]
    if axes:
        lines.append("; ".join(axes))
    labels = _legend_labels(models)
    renderers = [(ident, model) for ident, (name, model) in models.items() if name == "GlyphRenderer"]
    for number, (ident, renderer) in enumerate(renderers[:MAX_GLYPHS_LISTED], 1):
        glyph = _resolve(renderer.get("glyph"), models)
        source = _resolve(renderer.get("data_source"), models)
        columns = _columns(source[1].get("data")) if source else {}
        points = max((count for count, _ in columns.values()), default=0)
        line = f"glyph {number}: {glyph[0] if glyph else 'unknown'}"
        line += f' "{labels[ident]}"' if ident in labels else ""
        line += f", {points} point{'s' if points != 1 else ''}"
        line += "".join(f"; {name}: {_values(first, count)}" for name, (count, first) in columns.items() if first)
        lines.append(line)
    extra = len(renderers) - MAX_GLYPHS_LISTED
    return title, lines + ([f"… and {extra} more glyph{'s' if extra != 1 else ''}"] if extra > 0 else [])


def _models(docs: dict) -> dict[str, tuple[str, dict]]:
    """Every model with attributes in the document: id → (its class name, its attributes)."""
    models: dict[str, tuple[str, dict]] = {}
    stack: list[Any] = [docs]
    seen = 0
    while stack and seen < MAX_MODELS:
        node = stack.pop()
        seen += 1
        if isinstance(node, list):
            stack.extend(item for item in reversed(node) if isinstance(item, (dict, list)))
            continue
        name = node.get("name") if node.get("type") == "object" else node.get("type")
        attributes = node.get("attributes")
        if isinstance(name, str) and isinstance(node.get("id"), str) and isinstance(attributes, dict):
            models.setdefault(node["id"], (name, attributes))
        stack.extend(item for item in reversed(node.values()) if isinstance(item, (dict, list)))
    return models


def _resolve(reference: Any, models: dict[str, tuple[str, dict]]) -> tuple[str, dict] | None:
    """A model a reference ({"id": …}, or the model itself) points to."""
    ident = reference.get("id") if isinstance(reference, dict) else None
    return models.get(ident) if isinstance(ident, str) else None


def _axis_label(axes: Any, models: dict[str, tuple[str, dict]]) -> str | None:
    for reference in axes if isinstance(axes, list) else []:
        axis = _resolve(reference, models)
        if axis and axis[0].endswith("Axis") and _text(axis[1].get("axis_label")):
            return _text(axis[1]["axis_label"])
    return None


def _legend_labels(models: dict[str, tuple[str, dict]]) -> dict[str, str]:
    """Renderer id → the legend's label for it."""
    labels = {}
    for name, item in models.values():
        label = _text(item.get("label")) if name == "LegendItem" else None
        renderers = item.get("renderers") if isinstance(item.get("renderers"), list) else []
        for reference in renderers if label else []:
            if isinstance(reference, dict) and isinstance(reference.get("id"), str):
                labels.setdefault(reference["id"], label)
    return labels


def _text(value: Any) -> str | None:
    """A string property, written plain or as {"type": "value", "value": …}."""
    if isinstance(value, dict):
        value = value.get("value")
    if not isinstance(value, str) or not value.strip():
        return None
    value = " ".join(value.split())
    return value if len(value) <= MAX_VALUE_CHARS else value[:MAX_VALUE_CHARS] + "…"


def _columns(data: Any) -> dict[str, tuple[int, list]]:
    """A data source's columns: name → (its length, its first values)."""
    if isinstance(data, dict) and data.get("type") == "map" and isinstance(data.get("entries"), list):
        entries = [entry for entry in data["entries"] if isinstance(entry, list) and len(entry) == 2]
    elif isinstance(data, dict):
        entries = list(data.items())
    else:
        return {}
    columns = {}
    for name, column in entries:
        found = _column(column)
        if found is not None:
            columns[_text(str(name)) or "?"] = found
    return columns


def _column(column: Any) -> tuple[int, list] | None:
    if isinstance(column, list):
        return len(column), column[:FIRST_VALUES]
    if not isinstance(column, dict):
        return None
    array, dtype, shape = column.get("array", column.get("__ndarray__")), column.get("dtype"), column.get("shape")
    if isinstance(array, list):
        return len(array), array[:FIRST_VALUES]
    data = array.get("data") if isinstance(array, dict) else array  # Bokeh 3: {"type": "bytes", "data"}
    if not isinstance(data, str) or dtype not in _DTYPES:
        return None
    size, wanted = _ITEM_BYTES[_DTYPES[dtype]], FIRST_VALUES * _ITEM_BYTES[_DTYPES[dtype]]
    try:
        raw = base64.b64decode(data)
    except ValueError:  # damaged base64
        return None
    count = len(raw) // size
    if raw.startswith(_GZIP_MAGIC):  # Bokeh 3 compresses its arrays: only their head is inflated
        try:
            raw = zlib.decompressobj(wbits=_GZIP_WBITS).decompress(raw, wanted)
        except zlib.error:  # not a stream after all: the bytes are the array's own
            pass
    first = memoryview(raw[:min(wanted, len(raw) // size * size)]).cast(_DTYPES[dtype]).tolist()
    return (shape[0] if isinstance(shape, list) and shape and type(shape[0]) is int else count), first


def _values(values: list, count: int) -> str:
    shown = [v if isinstance(v, str) else _json(v) for v in values[:FIRST_VALUES]]
    return ", ".join(v if len(v) <= MAX_VALUE_CHARS else v[:MAX_VALUE_CHARS] + "…" for v in shown) + \
        (", …" if count > FIRST_VALUES else "")


def _json(value: Any) -> str:
    try:
        return json.dumps(value, default=str)
    except RecursionError:  # a value nested past Python's limit: the raw read shows it
        return "[…]"
