"""Charts (DrawingML `c:chartSpace` parts, in DOCX, XLSX and PPTX files alike) read from the values
the chart part caches, the ones the chart was last drawn with:

    [chart: Sales (column clustered + line); axes: "Quarter" (category), "$M" (value)]
    | category | 2023 | 2024 |       (a row per category, a column per series; a scatter series'
    | --- | --- | --- |              own x values and a bubble series' sizes as columns of their
    | 1/5/02 | 12.5% | 3,200.00 |    own; each number as its format code shows it)

Every chart kind is read the same way (3-D, combined, scatter, bubble, pie, stock...): the plots in
the plot area, their series, and each series' points by index; the kinds Office 2016 added
(waterfall, treemap, histogram...: `cx:chartSpace` parts) likewise, from the data each series names.
A spreadsheet's charts are named in one line each (`sheet_charts`), with the cells their series
take their values from, since those cells are the sheet's own rows.

Numbers are drawn as their format codes show them, as a sheet's cells are (sheetxml.shown).
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field

from lxml import etree

from agentread.readers.office.document import pipe_table
from agentread.readers.office.sheetxml import relationships, shown

C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
CX = "{http://schemas.microsoft.com/office/drawing/2014/chartex}"  # the charts Office 2016 added (waterfall...)
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_XDR = "{http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing}"

# The element in a drawing that names a chart part (by its relationship, `r:id`), and the one that
# names a part of the newer kinds (drawn inside mc:AlternateContent, a picture its fallback).
CHART_REFERENCE = C + "chart"
CHARTEX_REFERENCE = CX + "chart"
CHART_CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.drawingml.chart+xml"
CHARTEX_CONTENT_TYPE = "application/vnd.ms-office.chartex+xml"
# The namespaces a markup-compatibility choice holding a newer chart requires (`Requires="cx1"`),
# one for each set of kinds Office added from 2015 on; the choice's fallback is a picture.
CHARTEX_NAMESPACES = frozenset(f"http://schemas.microsoft.com/office/drawing/{version}/chartex" for version in (
    "2014", "2015/9/8", "2015/10/21", "2016/5/9", "2016/5/10", "2016/5/11", "2016/5/12", "2016/5/13", "2016/5/14"))

# What stands for a chart whose part the file lacks.
MISSING_CHART = "[chart: its part is missing from the file, so its data cannot be shown]"

# A chart part is parsed whole; no entity is expanded and nothing is fetched.
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)

# Charts named in a sheet's header: a dashboard sheet has a few; past this the rest are counted
# (each is parsed on every read of the sheet).
MAX_CHARTS_LISTED = 20
# A sheet's chart lines take at most a reply's bytes divided by this (a quarter), so that its rows
# have room beside them in the smallest reply; the series and charts past it are counted.
CHARTS_SHARE_OF_REPLY = 4
_MORE_CHARTS = (f"[{{more}} more chart{{s}} drawn on this sheet, not listed: a reply lists at most "
                f"{MAX_CHARTS_LISTED}, in 1/{CHARTS_SHARE_OF_REPLY} of its bytes.]")
# Characters of a chart's title or a series' name shown: a title is a few words, a longer one is
# a pasted paragraph.
MAX_NAME_CHARS = 200

# The plot elements of a chart's plot area and what each is called. A bar chart is a "column"
# chart when its bars stand up (barDir="col").
_PLOTS = {"areaChart": "area", "area3DChart": "3-D area", "barChart": "bar", "bar3DChart": "3-D bar",
          "lineChart": "line", "line3DChart": "3-D line", "pieChart": "pie", "pie3DChart": "3-D pie",
          "doughnutChart": "doughnut", "ofPieChart": "of pie", "scatterChart": "xy scatter",
          "bubbleChart": "bubble", "radarChart": "radar", "stockChart": "stock", "surfaceChart": "surface",
          "surface3DChart": "3-D surface"}
# The newer kinds, by the layout their series name.
_LAYOUTS = {"clusteredColumn": "histogram", "paretoLine": "pareto", "boxWhisker": "box and whisker",
            "waterfall": "waterfall", "treemap": "treemap", "sunburst": "sunburst", "funnel": "funnel",
            "regionMap": "map"}
# What a newer kind's data dimension is for: its values (`size` in a treemap or sunburst) first.
_VALUE_DIMENSIONS = ("val", "size", "y", "colorVal")
_GROUPING = {"clustered": " clustered", "stacked": " stacked", "percentStacked": " stacked 100"}
# Plots whose points stand at x values, not categories: both their axes are value axes, told apart
# by where they stand.
_XY_PLOTS = ("scatterChart", "bubbleChart")
_AXES = {C + "catAx": "category", C + "dateAx": "category", C + "serAx": "series", C + "valAx": "value"}


@dataclass
class Series:
    name: str
    values: dict[int, str]  # point index → the value as shown
    categories: dict[int, str]  # ... its category or x value
    sizes: dict[int, str] = field(default_factory=dict)  # a bubble's size
    name_ref: str = ""  # the cell its name comes from, when it does
    values_ref: str = ""  # the cells the values come from (`Sheet1!$B$2:$B$6`), when they do
    categories_ref: str = ""
    x_values: bool = False  # categories are x values (scatter, bubble)


@dataclass
class Chart:
    title: str
    kinds: list[str]
    axes: list[tuple[str, str]]  # (role, title) of the axes that have a title: ("value", "$M")
    series: list[Series]


def read_chart(blob: bytes) -> Chart | None:
    """The chart a chart part holds, or None when its XML cannot be parsed."""
    try:
        root = etree.fromstring(blob, _PARSER)
    except (etree.XMLSyntaxError, ValueError):
        return None
    if root.tag == CX + "chartSpace":
        return _chartex(root)
    chart = root.find(C + "chart")
    if chart is None:
        return Chart("", [], [], [])
    date1904 = _val(root.find(C + "date1904")) in ("1", "true")
    plot_area = chart.find(C + "plotArea")
    plots = [] if plot_area is None else [p for p in plot_area if _local(p.tag) in _PLOTS]
    series = _named([_series(ser, date1904, _local(plot.tag)) for plot in plots
                     for ser in plot.iterchildren(C + "ser")])
    kinds = list(dict.fromkeys(_kind(plot) for plot in plots))
    xy = any(_local(plot.tag) in _XY_PLOTS for plot in plots)
    axes = [] if plot_area is None else [(_axis_role(ax, xy), _text_of(ax.find(C + "title"))) for ax in plot_area
                                         if ax.tag in _AXES]
    return Chart(_title(chart, series), kinds, [(role, title) for role, title in axes if title], series)


def chart_lines(blob: bytes) -> list[str]:
    """A chart as lines: its title, kinds and axes on one, then its data as a pipe table."""
    chart = read_chart(blob)
    if chart is None:
        return ["[chart: its part is not well-formed XML, so its data cannot be shown]"]
    lines = [f"[chart: {describe(chart)}]"]
    series = chart.series
    if not any(s.values or s.categories for s in series):
        return lines
    first = next((s for s in series if s.categories), None)
    categories = first.categories if first else {}
    header = ["x" if first and first.x_values else "category" if first else "point"]
    columns: list[dict[int, str]] = [categories]
    for s in series:
        if s.categories and s.categories != categories:  # a scatter series of its own x values
            header.append(f"{s.name} x")
            columns.append(s.categories)
        header.append(s.name)
        columns.append(s.values)
        if s.sizes:
            header.append(f"{s.name} size")
            columns.append(s.sizes)
    # The points the file holds (not the count it declares, nor an index it names: either may be
    # anything), so the rows are as many as its XML has points.
    points = sorted(set().union(*columns))
    rows = [header] + [[categories.get(i, "" if categories else str(i + 1)), *(c.get(i, "") for c in columns[1:])]
                       for i in points]
    return lines + pipe_table(rows)


def describe(chart: Chart) -> str:
    """`Title (kinds); axes: "Quarter" (category), "$M" (value)`"""
    kinds = " + ".join(chart.kinds) or "chart"
    axes = ", ".join(f'"{title}" ({direction})' for direction, title in chart.axes)
    return f"{chart.title + ' ' if chart.title else ''}({kinds}){'; axes: ' + axes if axes else ''}"


def sheet_charts(archive: zipfile.ZipFile, sheet_part: str | None, reply_bytes: int) -> list[str]:
    """A line for each chart drawn on a worksheet or chart sheet (the part `sheet_part` of the
    zip): where it is anchored, what it is, and the cells each series takes its values from; the
    lines within a share of a reply of `reply_bytes` (CHARTS_SHARE_OF_REPLY)."""
    if sheet_part is None:
        return []
    charts = []
    for drawing in (target for _, kind, target in relationships(archive, sheet_part) if kind == "drawing"):
        try:
            root = etree.fromstring(archive.read(drawing), _PARSER)
        except (KeyError, etree.XMLSyntaxError, ValueError):
            continue
        targets = {rel_id: target for rel_id, _, target in relationships(archive, drawing)}
        for anchor in root:
            for reference in anchor.iter(CHART_REFERENCE, CHARTEX_REFERENCE):
                part = targets.get(reference.get(_R + "id") or "")
                if part is not None:
                    charts.append((_anchor(anchor), part))
    room = reply_bytes // CHARTS_SHARE_OF_REPLY - len(_MORE_CHARTS.format(more=len(charts), s="s").encode())
    lines: list[str] = []
    for number, (where, part) in enumerate(charts[:MAX_CHARTS_LISTED], 1):
        try:
            chart = read_chart(archive.read(part))
        except KeyError:  # a relationship to a part the zip lacks
            chart = None
        head = f"Chart {number} ({where}): "
        line = (head + f"its part {part} is missing or damaged, so it cannot be shown." if chart is None
                else _chart_line(head + describe(chart), chart, room))
        room -= len(line.encode("utf-8")) + 1
        if room < 0:
            break
        lines.append(line)
    if len(lines) < len(charts):
        more = len(charts) - len(lines)
        lines.append(_MORE_CHARTS.format(more=f"{more:,}", s="" if more == 1 else "s"))
    return lines


def _chart_line(head: str, chart: Chart, room: int) -> str:
    """`head`, then the cells each series shows (its values where it names none) and the cells of
    the categories, as many series as `room` bytes hold: `; series "2023" =Sheet1!$B$2:$B$6, …;
    categories =Sheet1!$A$2:$A$6`."""
    categories = next((s.categories_ref for s in chart.series if s.categories_ref), "")
    tail = f"; {'x values' if chart.series and chart.series[0].x_values else 'categories'} ={categories}" \
        if categories else ""
    parts: list[str] = []
    for listed, s in enumerate(chart.series):
        shown = f"={s.values_ref}" if s.values_ref else ", ".join(s.values[i] for i in sorted(s.values))
        part = f'"{s.name}" {shown}'
        more = f", and {len(chart.series) - listed:,} more series" if listed else f"; {len(chart.series):,} series"
        if len(f"{head}; series {', '.join([*parts, part])}{more}{tail}".encode("utf-8")) > room:
            return f"{head}{'; series ' + ', '.join(parts) if parts else ''}{more}{tail}"
        parts.append(part)
    return f"{head}{'; series ' + ', '.join(parts) if parts else ''}{tail}"


# --- the parts of a chart
# -----------------------------------------------------------------------------------------

def _chartex(root) -> Chart:
    """A chart of the newer kinds: each series names its data (`cx:dataId`), whose dimensions hold
    the categories and values in levels of points."""
    data = {source.get("id"): source for source in root.iter(CX + "data")}
    series = []
    for ser in root.iter(CX + "series"):
        source = data.get(_val(ser.find(CX + "dataId")))
        dimensions = {} if source is None else {dim.get("type"): dim for dim in source
                                                if dim.tag in (CX + "strDim", CX + "numDim")}
        values = next((dimensions[kind] for kind in _VALUE_DIMENSIONS if kind in dimensions), None)
        categories = dimensions.get("cat", dimensions.get("x"))
        series.append(Series(_short(_text_of(ser)), _dimension(values), _dimension(categories),
                             name_ref=_ref(ser.find(CX + "tx")), values_ref=_ref(values),
                             categories_ref=_ref(categories)))
    kinds = list(dict.fromkeys(_LAYOUTS.get(ser.get("layoutId", ""), ser.get("layoutId") or "chart")
                               for ser in root.iter(CX + "series")))
    axes = [("category" if axis.find(CX + "catScaling") is not None else "value", _text_of(axis.find(CX + "title")))
            for axis in root.iter(CX + "axis")]
    chart = root.find(CX + "chart")
    title = "" if chart is None else _short(_text_of(chart.find(CX + "title")))
    return Chart(title, kinds, [(role, text) for role, text in axes if text], _named(series))


def _named(series: list[Series]) -> list[Series]:
    """`series`, those whose name the chart does not hold named by their number (and the cell
    their name would come from)."""
    for number, s in enumerate(series, 1):
        s.name = s.name or f"series {number}" + (f" (named by {s.name_ref})" if s.name_ref else "")
    return series


def _dimension(dim) -> dict[int, str]:
    """A newer chart's data dimension: its points, in levels (the first the innermost) where its
    categories are a hierarchy."""
    if dim is None:
        return {}
    levels = [_level(level, level.get("formatCode"), False) for level in dim.iterchildren(CX + "lvl")]
    return {} if not levels else levels[0] if len(levels) == 1 else _levels(levels)


def _axis_role(axis, xy: bool) -> str:
    """What an axis shows: categories, values, series (a 3-D chart's depth), or x or y."""
    if xy and axis.tag == C + "valAx":
        return "x" if _val(axis.find(C + "axPos")) in ("b", "t") else "y"
    return _AXES[axis.tag]


def _kind(plot) -> str:
    name = _local(plot.tag)
    kind = _PLOTS[name]
    if name in ("barChart", "bar3DChart"):
        upright = _val(plot.find(C + "barDir")) != "bar"
        kind = kind.replace("bar", "column") if upright else kind
        kind += _GROUPING.get(_val(plot.find(C + "grouping")) or "clustered", "")
    elif name in ("areaChart", "area3DChart", "lineChart", "line3DChart"):
        kind += _GROUPING.get(_val(plot.find(C + "grouping")) or "standard", "")
    elif name == "ofPieChart":
        kind = f"{_val(plot.find(C + 'ofPieType')) or 'pie'} of pie"
    elif name == "radarChart" and _val(plot.find(C + "radarStyle")) == "filled":
        kind += " filled"
    return kind


def _series(ser, date1904: bool, plot: str) -> Series:
    values_el = _first(ser, C + "val", C + "yVal")
    categories_el = _first(ser, C + "cat", C + "xVal")
    sizes_el = ser.find(C + "bubbleSize")
    return Series(name=_short(_text_of(ser)), name_ref=_ref(ser.find(C + "tx")),
                  values=_points(values_el, date1904),
                  categories=_points(categories_el, date1904),
                  sizes=_points(sizes_el, date1904),
                  values_ref=_ref(values_el), categories_ref=_ref(categories_el),
                  x_values=plot in _XY_PLOTS)


def _points(data, date1904: bool) -> dict[int, str]:
    """The points a data source caches (`c:numCache`, `c:strCache`, literals, or the levels of a
    multi-level category), each shown as its format code asks."""
    if data is None:
        return {}
    levels = list(data.iter(C + "lvl"))
    if levels:  # multi-level categories: the first level is the innermost, the others group it
        return _levels([_level(level, None, date1904) for level in levels])
    cache = next((el for el in data.iter(C + "numCache", C + "strCache", C + "numLit", C + "strLit")), None)
    return {} if cache is None else _level(cache, cache.findtext(C + "formatCode"), date1904)


def _level(parent, code: str | None, date1904: bool) -> dict[int, str]:
    """The points under `parent` by index: a cache's (`c:pt` holding `c:v`) or a newer chart's
    level (`cx:pt` holding its text)."""
    numeric = parent.tag in (C + "numCache", C + "numLit") or parent.getparent().tag == CX + "numDim"
    points: dict[int, str] = {}
    for pt in parent.iterchildren(C + "pt", CX + "pt"):
        idx = pt.get("idx", "")
        if not idx.isdigit():
            continue
        text = (pt.findtext(C + "v") or "") if pt.tag == C + "pt" else (pt.text or "")
        points[int(idx)] = _one_line(format_value(text, pt.get("formatCode") or code, date1904) if numeric else text)
    return points


def _levels(levels: list[dict[int, str]]) -> dict[int, str]:
    """The labels of a multi-level category axis, outer group first (`2024 / Q1`): a group's label
    stands at its first point and holds for the points after it."""
    inner, outer = levels[0], levels[1:][::-1]
    groups = [""] * len(outer)  # each outer level's label at the point reached
    labels = {}
    for i in sorted(inner):
        groups = [level.get(i, group) for level, group in zip(outer, groups)]
        labels[i] = " / ".join([*(g for g in groups if g), inner[i]])
    return labels


def _ref(data) -> str:
    formula = None if data is None else next(data.iter(C + "f", CX + "f"), None)
    return "" if formula is None else (formula.text or "").strip()


def _title(chart, series: list[Series]) -> str:
    title = chart.find(C + "title")
    if title is None:
        return ""
    text = _text_of(title)
    # A title without text of its own shows the only series' name (as the chart shows it).
    if not text and len(series) == 1 and _val(chart.find(C + "autoTitleDeleted")) not in ("1", "true"):
        text = series[0].name
    return _short(text)


def _text_of(el) -> str:
    """The text of a title or series name (`c:tx`): rich text, or the cell text it caches."""
    tx = None if el is None else _first(el, C + "tx", CX + "tx")
    if tx is None:
        return ""
    rich = _first(tx, C + "rich", CX + "rich")
    if rich is not None:
        return " ".join(" ".join("".join(t.text or "" for t in p.iter(_A + "t")).split())
                        for p in rich.iter(_A + "p")).strip()
    cached = next(tx.iter(C + "v", CX + "v"), None)
    return _one_line(cached.text or "") if cached is not None else ""


def _first(el, *tags: str):
    return next((found for tag in tags if (found := el.find(tag)) is not None), None)


def _val(el) -> str | None:
    return None if el is None else el.get("val")


def _local(tag) -> str:
    return tag.split("}", 1)[-1] if isinstance(tag, str) else ""


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _short(text: str) -> str:
    return text if len(text) <= MAX_NAME_CHARS else text[:MAX_NAME_CHARS] + "…"


# --- a sheet's drawings
# -----------------------------------------------------------------------------------------

def _anchor(anchor) -> str:
    """Where a drawing's anchor places its chart: `E2:L18` (the cells it spans), `from E2`, or a
    fixed position."""
    cells = [_cell(anchor.find(_XDR + end)) for end in ("from", "to")]
    if cells[0] and cells[1]:
        return f"over cells {cells[0]}:{cells[1]}"
    if cells[0]:
        return f"from cell {cells[0]}"
    return "at a fixed position"


def _cell(marker) -> str:
    if marker is None:
        return ""
    column, row = marker.findtext(_XDR + "col") or "", marker.findtext(_XDR + "row") or ""
    if not (column.isdigit() and row.isdigit()):
        return ""
    from openpyxl.utils.cell import get_column_letter

    try:
        return f"{get_column_letter(int(column) + 1)}{int(row) + 1}"
    except ValueError:  # a column past XFD
        return ""


def format_value(text: str, code: str | None, date1904: bool = False) -> str:
    """A cached number as its format code shows it, drawn as a sheet's cells are (sheetxml.shown);
    text that is no number as it is."""
    try:
        value = float(text)
    except ValueError:
        return text.strip()
    if value != value or value in (float("inf"), float("-inf")):
        return text.strip()
    return shown(value, None if not code or code.strip().lower() == "general" else code, date1904)
