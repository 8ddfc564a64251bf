"""Charts in the libraries' own test files, read over JSON-RPC, each checked against what an
independent reader finds: python-pptx's chart API where it models the chart, the chart's own
embedded workbook (read by openpyxl) for a Word chart."""

from __future__ import annotations

import io
import re
import warnings
import zipfile

import pptx
from harness import THIRDPARTY, follow_lines, need
from openpyxl import load_workbook
from openpyxl.utils.datetime import from_excel

PPTX_FILES = ("python_pptx-1.0.2", "python_pptx-1.0.2", "features", "steps", "test_files")
DOCX_FILES = ("python_docx-1.2.0", "python_docx-1.2.0", "features", "steps", "test_files")
CHART = re.compile(r"\[chart: (.*)\]")
SEPARATOR = re.compile(r"\| ---(?: \| ---)* \|")


def charts_read(lines: list[str]) -> list[tuple[str, list[list[str]]]]:
    """Each chart line's text, with the rows of the pipe table right under it (its header first,
    its separator row left out)."""
    charts: list[tuple[str, list[list[str]]]] = []
    table = False  # whether the lines are still the last chart's table
    for line in lines:
        if match := CHART.fullmatch(line):
            charts.append((match[1], []))
            table = True
        elif table and line.startswith("| "):
            if not SEPARATOR.fullmatch(line):
                charts[-1][1].append([cell.strip() for cell in line[2:-2].split(" | ")])
        else:
            table = False
    return charts


def month_day_year(serial: float) -> str:
    """A date serial as the format code m/d/yy shows it."""
    day = from_excel(float(serial))
    return f"{day.month}/{day.day}/{day.year % 100:02d}"


def test_three_d_area_charts_show_the_numbers_their_part_caches_and_dates_as_their_format_shows(rpc):
    """Slide 1 of cht-chart-type.pptx holds three 2-D area charts python-pptx models and three 3-D
    ones it does not, all of the same data: each is a table of its dates (m/d/yy, as the chart's
    format code shows them, not serial numbers) and its series' values."""
    path = need(*PPTX_FILES, "cht-chart-type.pptx")
    charts = charts_read(follow_lines(rpc, {"path": str(path), "pages": "1"}))
    plot = next(shape.chart for shape in pptx.Presentation(str(path)).slides[0].shapes if shape.has_chart).plots[0]
    expected = [["category", *(s.name for s in plot.series)]]
    expected += [[month_day_year(serial), *(f"{s.values[i]:g}" for s in plot.series)]
                 for i, serial in enumerate(plot.categories)]
    assert [title for title, _ in charts] == ["(area)", "(area stacked)", "(area stacked 100)", "(3-D area)",
                                              "(3-D area stacked)", "(3-D area stacked 100)"]
    assert expected[1][0] == "1/5/02"
    assert [rows for _, rows in charts] == [expected] * 6


def test_every_chart_python_pptx_models_shows_its_series_values(rpc):
    """Each chart of cht-chart-type.pptx: a column per series, named as python-pptx names it, with
    the values python-pptx gives (a scatter's and a bubble's y values)."""
    path = need(*PPTX_FILES, "cht-chart-type.pptx")
    charts = iter(charts_read(follow_lines(rpc, {"path": str(path)})))
    for slide in pptx.Presentation(str(path)).slides:
        for shape in slide.shapes:
            if not shape.has_chart:
                continue
            _, rows = next(charts)
            try:
                series = [s for plot in shape.chart.plots for s in plot.series]
            except NotImplementedError:  # the 3-D area charts, checked above
                continue
            for s in series:
                column = rows[0].index(s.name)
                assert [row[column] for row in rows[1:]] == [f"{v:g}" for v in s.values], s.name


def test_a_word_chart_is_its_data_as_its_embedded_workbook_holds_it(rpc):
    """shp-inline-shape-access.docx holds a column chart of 3 series and 4 categories: it reads as
    that table, the one the chart's embedded workbook (its data sheet) holds, not as an empty
    line."""
    path = need(*DOCX_FILES, "shp-inline-shape-access.docx")
    lines = follow_lines(rpc, {"path": str(path)})
    [(title, rows)] = charts_read(lines)
    with zipfile.ZipFile(path) as package, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # openpyxl warns of the sheet's extensions it drops
        sheet = load_workbook(io.BytesIO(package.read("word/embeddings/Microsoft_Excel_Sheet1.xlsx"))).active
    data = [[f"{cell.value:g}" if isinstance(cell.value, float) else str(cell.value) for cell in row]
            for row in sheet.iter_rows(max_row=5, max_col=4)]
    assert title == "(column clustered)"
    assert rows[0] == ["category", *data[0][1:]] and rows[1:] == data[1:]
    assert len(rows) == 5 and len(rows[0]) == 4


def test_a_combined_chart_shows_every_plots_series(rpc):
    """A bar plot and a line plot in one chart: both kinds named, each plot's series a column."""
    for path in sorted((THIRDPARTY.joinpath(*PPTX_FILES)).glob("cht-*.pptx")) or [need(*PPTX_FILES, "cht-x.pptx")]:
        deck = pptx.Presentation(str(path))
        for number, slide in enumerate(deck.slides, 1):
            for shape in slide.shapes:
                if shape.has_chart and len(shape.chart.plots) > 1:
                    charts = charts_read(follow_lines(rpc, {"path": str(path), "pages": str(number)}))
                    names = [s.name for plot in shape.chart.plots for s in plot.series]
                    assert any(" + " in title and rows[0][1:] == names for title, rows in charts), charts
                    return
    raise AssertionError("no combined chart in python-pptx's test files")
