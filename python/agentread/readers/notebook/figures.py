"""Figure specifications a notebook output carries as JSON (Plotly, Vega, Vega-Lite) or as a script
(Bokeh), summarised in the few lines a model reasons with: the chart's kind and title, its axes, and
each trace or data set with its size and first values. The whole JSON is a raw read away; the
summary's first line names that call (render.py adds it)."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

PLOTLY_MIME = "application/vnd.plotly.v1+json"
_VEGA_MIME = re.compile(r"application/vnd\.vega(lite)?\.v[\d.]+\+json")
BOKEH_EXEC_MIME = "application/vnd.bokehjs_exec.v0+json"
BOKEH_LOAD_MIME = "application/vnd.bokehjs_load.v0+json"
# Where Bokeh keeps the figure it draws: in the script beside its (empty) exec payload.
BOKEH_SCRIPT_MIME = "application/javascript"

# Traces (Plotly) or data sets and views (Vega) listed one a line; a figure of hundreds of them
# names how many more there are, which its raw read shows.
MAX_TRACES_LISTED = 20
# First values shown of each array: enough to see what it holds and its scale.
FIRST_VALUES = 3
# A value shown (a category, a row of a data set) is cut to this many characters.
MAX_VALUE_CHARS = 80
# Kinds of trace or mark named in a figure's first line ("bar/scatter"); a figure mixes a few.
MAX_KINDS_NAMED = 5
# Layered, concatenated and faceted Vega-Lite views nest a few levels deep; views deeper than this
# are not listed (a spec nested deeper would recurse past Python's limit).
MAX_VIEW_DEPTH = 8

# The arrays of a Plotly trace that hold its points, in the order they are named.
_PLOTLY_ARRAYS = ("x", "y", "z", "labels", "values", "r", "theta", "lat", "lon", "a", "b", "c",
                  "open", "high", "low", "close", "ids", "parents")
# Plotly's typed arrays ({"dtype": "f8", "bdata": base64}, plotly.py 6 on) as struct formats.
_TYPED = {"i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I", "f4": "f", "f8": "d"}


def figure_mime(data: dict) -> str | None:
    """The mime type of the figure specification an output bundle carries, if any."""
    for mime in data:
        if mime in (PLOTLY_MIME, BOKEH_EXEC_MIME, BOKEH_LOAD_MIME) or _VEGA_MIME.fullmatch(mime):
            return mime
    return None


def figure_name(mime: str) -> str:
    if mime == PLOTLY_MIME:
        return "Plotly figure"
    if mime == BOKEH_EXEC_MIME:
        return "Bokeh figure"
    if mime == BOKEH_LOAD_MIME:
        return "BokehJS loader"
    return "Vega-Lite chart" if "vegalite" in mime else "Vega chart"


def details(mime: str, spec: Any) -> str:
    """' "Sales", 2 bar traces': the title and what the figure draws, as the read's first line and
    the outline name them after the figure's kind."""
    title, drawn = _title_of(mime, spec), _drawn(mime, spec)
    return (f' "{title}"' if title else "") + (f", {drawn}" if drawn else "")


def _title_of(mime: str, spec: Any) -> str | None:
    """The figure's title, if it has one."""
    if not isinstance(spec, dict):
        return None
    if mime == PLOTLY_MIME:
        layout = spec.get("layout")
        return _title(layout.get("title")) if isinstance(layout, dict) else None
    return _title(spec.get("title")) if _VEGA_MIME.fullmatch(mime) else None


def _drawn(mime: str, spec: Any) -> str | None:
    """"3 scatter traces", "bar, rule chart": what the figure draws, in a few words."""
    if mime == PLOTLY_MIME and isinstance(spec, dict):
        data = spec.get("data") if isinstance(spec.get("data"), list) else []
        traces = [trace for trace in data if isinstance(trace, dict)]
        kinds = _kinds(sorted({_trace_kind(trace) for trace in traces}), "/")
        return f"{len(traces)} {kinds + ' ' if kinds else ''}trace{'s' if len(traces) != 1 else ''}"
    if _VEGA_MIME.fullmatch(mime) and isinstance(spec, dict):
        marks = [mark for mark, _ in _vegalite_views(spec)] if "vegalite" in mime else _vega_marks(spec)
        return f"{_kinds(list(dict.fromkeys(marks)), ', ')} chart" if marks else None
    return None


def _kinds(kinds: list[str], between: str) -> str:
    return between.join(kinds[:MAX_KINDS_NAMED]) + (f"{between}…" if len(kinds) > MAX_KINDS_NAMED else "")


def summary(mime: str, spec: Any) -> list[str]:
    """The lines under a figure's first line: axes, traces or data sets, each with its size and
    first values."""
    if not isinstance(spec, dict):
        return []
    if mime == PLOTLY_MIME:
        return _plotly(spec)
    if _VEGA_MIME.fullmatch(mime):
        return _vegalite(spec) if "vegalite" in mime else _vega(spec)
    return []


def _title(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("text")
    if isinstance(value, list):  # Vega's multi-line title
        value = " ".join(line for line in value if isinstance(line, str))
    return _cut(" ".join(value.split())) if isinstance(value, str) and value.strip() else None


def _cut(text: str) -> str:
    return text if len(text) <= MAX_VALUE_CHARS else text[:MAX_VALUE_CHARS] + "…"


def _shown(value: Any) -> str:
    try:
        return _cut(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str))
    except RecursionError:  # a value nested past Python's limit: the raw read shows it
        return "[…]"


def _values(values: list, count: int | None = None) -> str:
    """The first values of an array of `count` (all of `values` by default), and "…" when there
    are more."""
    more = ", …" if (len(values) if count is None else count) > FIRST_VALUES else ""
    return ", ".join(_shown(v) for v in values[:FIRST_VALUES]) + more


def _more(total: int, what: str) -> list[str]:
    extra = total - MAX_TRACES_LISTED
    return [f"… and {extra} more {what}{'s' if extra != 1 else ''}"] if extra > 0 else []


def _plotly(spec: dict) -> list[str]:
    lines = []
    layout = spec.get("layout") if isinstance(spec.get("layout"), dict) else {}
    axes = [f"{name.replace('axis', ' axis')}: {title}"
            for name in sorted(layout) if re.fullmatch(r"[xyz]axis\d*", name)
            and isinstance(layout[name], dict) and (title := _title(layout[name].get("title")))]
    if axes:
        lines.append("; ".join(axes))
    traces = spec.get("data") if isinstance(spec.get("data"), list) else []
    for number, trace in enumerate(traces[:MAX_TRACES_LISTED], 1):
        if not isinstance(trace, dict):
            continue
        arrays = {name: found for name in _PLOTLY_ARRAYS if (found := _array(trace.get(name))) is not None}
        name = f' "{_cut(str(trace["name"]))}"' if isinstance(trace.get("name"), (str, int, float)) else ""
        points = max((count for count, _ in arrays.values()), default=0)
        line = f"trace {number}: {_trace_kind(trace)}{name}, {points} point{'s' if points != 1 else ''}"
        line += "".join(f"; {key}: {_values(first, count)}" for key, (count, first) in arrays.items() if first)
        lines.append(line)
    return lines + _more(len(traces), "trace")


def _trace_kind(trace: dict) -> str:
    """A trace's type; Plotly draws one without as a scatter."""
    kind = trace.get("type", "scatter")
    return _cut(kind) if isinstance(kind, str) else "unknown"


def _array(value: Any) -> tuple[int, list] | None:
    """A trace's array: its length and its first values. A typed array's length is read from its
    base64's, and only its head is decoded (by the standard library)."""
    if isinstance(value, list):
        return len(value), value[:FIRST_VALUES]
    if isinstance(value, dict) and isinstance(value.get("bdata"), str) and value.get("dtype") in _TYPED:
        data, size = value["bdata"].strip(), int(value["dtype"][1:])  # bytes an item: "f8" → 8
        count = (len(data) * 3 // 4 - len(data) + len(data.rstrip("="))) // size
        head = data[:-(-FIRST_VALUES * size // 3) * 4]  # whole 4-character groups holding the first items
        try:
            raw = base64.b64decode(head)
            first = memoryview(raw[:len(raw) // size * size]).cast(_TYPED[value["dtype"]]).tolist()
        except (ValueError, TypeError):  # damaged base64
            return None
        return count, first[:FIRST_VALUES]
    return None


def _vegalite_views(spec: dict, depth: int = 0) -> list[tuple[str, dict]]:
    """(mark, encoding) of each view of a Vega-Lite spec, layers and concatenations unfolded."""
    views = []
    mark = spec.get("mark")
    mark = mark.get("type") if isinstance(mark, dict) else mark
    if isinstance(mark, str):
        views.append((_cut(mark), spec.get("encoding") if isinstance(spec.get("encoding"), dict) else {}))
    if depth < MAX_VIEW_DEPTH:
        for key in ("layer", "hconcat", "vconcat", "concat"):
            for inner in spec.get(key) or [] if isinstance(spec.get(key), list) else []:
                if isinstance(inner, dict):
                    views += _vegalite_views(inner, depth + 1)
        if isinstance(spec.get("spec"), dict):  # facet, repeat
            views += _vegalite_views(spec["spec"], depth + 1)
    return views


def _vegalite(spec: dict) -> list[str]:
    lines = []
    views = _vegalite_views(spec)
    for mark, encoding in views[:MAX_TRACES_LISTED]:
        channels = []
        for channel, field in encoding.items():
            if isinstance(field, dict):
                name = field.get("title") or field.get("field") or field.get("aggregate") or field.get("value")
                kind = f" ({field['type']})" if isinstance(field.get("type"), str) else ""
                channels.append(f"{channel} = {_shown(name)}{kind}")
        lines.append(f"mark {mark}" + (f": {', '.join(channels)}" if channels else ""))
    lines += _more(len(views), "view")
    datasets = spec.get("datasets") if isinstance(spec.get("datasets"), dict) else {}
    data = spec.get("data") if isinstance(spec.get("data"), dict) else {}
    if isinstance(data.get("values"), list):
        lines.append(_rows("data", data["values"]))
    elif isinstance(data.get("url"), str):
        lines.append(f"data from {_cut(data['url'])}")
    for name, rows in list(datasets.items())[:MAX_TRACES_LISTED]:
        if isinstance(rows, list):
            lines.append(_rows(f'data set "{_cut(str(name))}"', rows))
    return lines


def _rows(what: str, rows: list) -> str:
    fields = list(rows[0]) if rows and isinstance(rows[0], dict) else []
    line = f"{what}: {len(rows)} row{'s' if len(rows) != 1 else ''}"
    line += f" ({', '.join(_cut(str(f)) for f in fields[:MAX_TRACES_LISTED])})" if fields else ""
    return line + (f"; first: {_values(rows)}" if rows else "")


def _vega_marks(spec: dict) -> list[str]:
    marks = spec.get("marks") if isinstance(spec.get("marks"), list) else []
    return [_shown(m["type"]) for m in marks if isinstance(m, dict) and "type" in m]


def _vega(spec: dict) -> list[str]:
    lines = []
    marks = spec.get("marks") if isinstance(spec.get("marks"), list) else []
    described = []
    for mark in marks[:MAX_TRACES_LISTED]:
        if isinstance(mark, dict) and "type" in mark:
            source = mark.get("from", {}).get("data") if isinstance(mark.get("from"), dict) else None
            described.append(f"{mark['type']}" + (f" (from {_shown(source)})" if source else ""))
    if described:
        lines.append("marks: " + ", ".join(described) + (f", … {len(marks) - MAX_TRACES_LISTED} more"
                                                          if len(marks) > MAX_TRACES_LISTED else ""))
    axes = []
    for axis in spec.get("axes") or [] if isinstance(spec.get("axes"), list) else []:
        if isinstance(axis, dict):
            title = _title(axis.get("title"))
            axes.append(f"{axis.get('orient', '?')} ({_shown(axis.get('scale', '?'))}"
                        + (f", {title}" if title else "") + ")")
    if axes:
        lines.append("axes: " + ", ".join(axes))
    data = spec.get("data") if isinstance(spec.get("data"), list) else []
    for entry in data[:MAX_TRACES_LISTED]:
        if isinstance(entry, dict):
            name = _cut(str(entry.get("name", "?")))
            if isinstance(entry.get("values"), list):
                lines.append(_rows(f'data "{name}"', entry["values"]))
            elif isinstance(entry.get("url"), str):
                lines.append(f'data "{name}" from {_cut(entry["url"])}')
            elif isinstance(entry.get("source"), (str, list)):
                lines.append(f'data "{name}" from {_shown(entry["source"])}')
    return lines + _more(len(data), "data set")
