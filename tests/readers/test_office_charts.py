"""Charts and review comments in Office files built here (python-pptx, openpyxl, and parts added to
their packages as PowerPoint writes them), read through the JSON-RPC server."""

from __future__ import annotations

import datetime
import io
import re
import zipfile
from pathlib import Path

import pytest

from rpc import body_of

P = "http://schemas.openxmlformats.org/presentationml/2006/main"
P15 = "http://schemas.microsoft.com/office/powerpoint/2012/main"
P188 = "http://schemas.microsoft.com/office/powerpoint/2018/8/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
CHART = "http://schemas.openxmlformats.org/drawingml/2006/chart"
OFFICE_RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
THREADED_RELS = "http://schemas.microsoft.com/office/2018/10/relationships"


def deck_bytes(build) -> bytes:
    """A one-slide deck (blank layout) after `build(slide)`, as python-pptx writes it."""
    from pptx import Presentation

    deck = Presentation()
    build(deck.slides.add_slide(deck.slide_layouts[6]))
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def with_parts(package: bytes, parts: dict[str, tuple[str, bytes]], rels: dict[str, list[tuple[str, str]]]) -> bytes:
    """`package` with `parts` added ({name: (content type, XML)}) and relationships to them
    ({source part's rels: [(type, target)]})."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "[Content_Types].xml":
                overrides = "".join(f'<Override PartName="/{name}" ContentType="{kind}"/>'
                                    for name, (kind, _) in parts.items())
                data = data.replace(b"</Types>", overrides.encode() + b"</Types>")
            for n, (kind, part) in enumerate(rels.get(info.filename, []), 1):
                data = data.replace(b"</Relationships>", f'<Relationship Id="rIdAdded{n}" Type="{kind}" '
                                    f'Target="{part}"/></Relationships>'.encode())
            target.writestr(info, data)
        for name, (_, xml) in parts.items():
            target.writestr(name, xml)
    return out.getvalue()


def text_box(slide, text: str) -> None:
    from pptx.util import Inches

    slide.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1)).text_frame.text = text


def test_legacy_and_threaded_comments_show_on_their_slide_with_their_authors(server, tmp_path: Path):
    """A legacy comment with a reply (threaded by its p15 extension), and a threaded comment with a
    reply: each under `Comments:` on the slide, by its author's name, a reply indented."""
    legacy = (f'<p:cmLst xmlns:p="{P}" xmlns:p15="{P15}">'
              '<p:cm authorId="0" dt="2024-01-01T10:00:00.000" idx="1"><p:pos x="10" y="10"/>'
              "<p:text>Check the Q3 figures.</p:text></p:cm>"
              '<p:cm authorId="1" dt="2024-01-02T10:00:00.000" idx="1"><p:pos x="10" y="10"/>'
              "<p:text>Checked: they hold.</p:text><p:extLst><p:ext uri=\"{C676402C-5697-4E1C-873F-D02D1690AC5C}\">"
              '<p15:threadingInfo timeZoneBias="0"><p15:parentCm authorId="0" idx="1"/></p15:threadingInfo>'
              "</p:ext></p:extLst></p:cm></p:cmLst>").encode()
    authors = (f'<p:cmAuthorLst xmlns:p="{P}"><p:cmAuthor id="0" name="Ann Lee" initials="AL" lastIdx="1" '
               'clrIdx="0"/><p:cmAuthor id="1" name="Bo Chen" initials="BC" lastIdx="1" clrIdx="1"/>'
               "</p:cmAuthorLst>").encode()
    threaded = (f'<p188:cmLst xmlns:a="{A}" xmlns:p188="{P188}">'
                '<p188:cm id="{11111111-0000-0000-0000-000000000001}" authorId="{AAAAAAAA-0000-0000-0000-00000000000A}"'
                ' created="2024-02-01T09:00:00.000">'
                '<p188:replyLst><p188:reply id="{11111111-0000-0000-0000-000000000002}" '
                'authorId="{BBBBBBBB-0000-0000-0000-00000000000B}" created="2024-02-01T10:00:00.000">'
                "<p188:txBody><a:bodyPr/><a:p><a:r><a:t>Agreed, moving it.</a:t></a:r></a:p></p188:txBody>"
                "</p188:reply></p188:replyLst>"
                "<p188:txBody><a:bodyPr/><a:p><a:r><a:t>This slide belongs</a:t></a:r></a:p>"
                "<a:p><a:r><a:t>in the appendix.</a:t></a:r></a:p></p188:txBody></p188:cm></p188:cmLst>").encode()
    threaded_authors = (f'<p188:authorLst xmlns:p188="{P188}">'
                        '<p188:author id="{AAAAAAAA-0000-0000-0000-00000000000A}" name="Cy Diaz" initials="CD" '
                        'userId="cy@example.com" providerId="None"/>'
                        '<p188:author id="{BBBBBBBB-0000-0000-0000-00000000000B}" name="Di Eng" initials="DE" '
                        'userId="di@example.com" providerId="None"/></p188:authorLst>').encode()
    from pptx import Presentation

    deck = Presentation()
    for text in ("first slide", "second slide"):
        text_box(deck.slides.add_slide(deck.slide_layouts[6]), text)
    buffer = io.BytesIO()
    deck.save(buffer)
    package = with_parts(
        buffer.getvalue(),
        {"ppt/comments/comment1.xml": ("application/vnd.openxmlformats-officedocument.presentationml.comments+xml",
                                       legacy),
         "ppt/commentAuthors.xml": ("application/vnd.openxmlformats-officedocument.presentationml.commentAuthors+xml",
                                    authors),
         "ppt/comments/modernComment_101_1.xml": ("application/vnd.ms-powerpoint.comments+xml", threaded),
         "ppt/authors.xml": ("application/vnd.ms-powerpoint.authors+xml", threaded_authors)},
        {"ppt/slides/_rels/slide1.xml.rels": [(f"{OFFICE_RELS}/comments", "../comments/comment1.xml")],
         "ppt/slides/_rels/slide2.xml.rels": [(f"{THREADED_RELS}/comments", "../comments/modernComment_101_1.xml")],
         "ppt/_rels/presentation.xml.rels": [(f"{OFFICE_RELS}/commentAuthors", "commentAuthors.xml"),
                                             (f"{THREADED_RELS}/authors", "authors.xml")]})
    (tmp_path / "reviewed.pptx").write_bytes(package)
    assert body_of(server.read(path="reviewed.pptx")) == (
        "     1\t--- Slide 1 ---\n     2\tfirst slide\n     3\tComments:\n     4\t- Ann Lee: Check the Q3 figures.\n"
        "     5\t  - Bo Chen: Checked: they hold.\n     6\t\n     7\t--- Slide 2 ---\n     8\tsecond slide\n"
        "     9\tComments:\n    10\t- Cy Diaz: This slide belongs in the appendix.\n"
        "    11\t  - Di Eng: Agreed, moving it.")
    [hit] = server.read(path="reviewed.pptx", find="appendix")["shown"]["hits"]
    assert (hit["slide"], hit["line"]) == (2, 4)


def test_chart_numbers_and_dates_as_their_format_codes_show_them(server, tmp_path: Path):
    """Dates by a `mmm d, yyyy` code, percentages, thousands with a negative section, a currency
    rounded half away from zero as Excel rounds, scientific, a time of day, and categories in two
    levels (year / quarter)."""
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    def build(slide):
        data = CategoryChartData(number_format="0.0%")
        data.categories = [datetime.date(2024, 1, 31), datetime.date(2024, 2, 29)]
        data.categories.number_format = "mmm d, yyyy"
        data.add_series("share", [0.125, 0.5])
        data.add_series("revenue", [1234.5, -20000], number_format="#,##0.00;(#,##0.00)")
        data.add_series("cost", [2.5, 1234567], number_format='[$€-407] #,##0_);"none"')
        data.add_series("mass", [12345.678, 0.5], number_format="0.00E+00")
        data.add_series("at", [0.5, 0.75], number_format="h:mm AM/PM")
        slide.shapes.add_chart(XL_CHART_TYPE.LINE, 0, 0, Inches(4), Inches(3), data)
        levels = CategoryChartData()
        for year, quarters in (("2024", ("Q1", "Q2")), ("2025", ("Q1",))):
            category = levels.add_category(year)
            for quarter in quarters:
                category.add_sub_category(quarter)
        levels.add_series("sales", [1, 2, 3])
        slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, 0, Inches(4), Inches(4), Inches(3), levels)

    (tmp_path / "formats.pptx").write_bytes(deck_bytes(build))
    assert body_of(server.read(path="formats.pptx")).split("\n")[1:] == [
        "     2\t[chart: (line)]", "     3\t| category | share | revenue | cost | mass | at |",
        "     4\t| --- | --- | --- | --- | --- | --- |",
        "     5\t| Jan 31, 2024 | 12.5% | 1,234.50 | € 3 | 1.23E+04 | 12:00 PM |",
        "     6\t| Feb 29, 2024 | 50.0% | (20,000.00) | € 1,234,567 | 5.00E-01 | 6:00 PM |",
        "     7\t[chart: (column clustered)]", "     8\t| category | sales |", "     9\t| --- | --- |",
        "    10\t| 2024 / Q1 | 1 |", "    11\t| 2024 / Q2 | 2 |", "    12\t| 2025 / Q1 | 3 |"]


def test_a_sheets_charts_are_named_with_their_anchor_and_the_cells_they_show(server, tmp_path: Path):
    """A column chart anchored at E2 of a sheet, and a chart sheet's line chart (its chart placed
    at a fixed position): each named in its sheet's header with its title, axes and the cells of
    its series (openpyxl writes the series' names as cells, without their text)."""
    from openpyxl import Workbook
    from openpyxl.chart import BarChart, LineChart, Reference

    book = Workbook()
    sheet = book.active
    sheet.title = "Sales"
    for row in (["Quarter", "2023", "2024"], ["Q1", 10, 12], ["Q2", 20, 22], ["Q3", 30, 35]):
        sheet.append(row)
    bars = BarChart()
    bars.title, bars.x_axis.title, bars.y_axis.title = "Revenue", "Quarter", "$M"
    bars.add_data(Reference(sheet, min_col=2, max_col=3, min_row=1, max_row=4), titles_from_data=True)
    bars.set_categories(Reference(sheet, min_col=1, min_row=2, max_row=4))
    sheet.add_chart(bars, "E2")
    line = LineChart()
    line.add_data(Reference(sheet, min_col=2, min_row=1, max_row=4), titles_from_data=True)
    book.create_chartsheet("Trend").add_chart(line)
    book.save(tmp_path / "charts.xlsx")
    text = body_of(server.read(path="charts.xlsx"))
    assert text.split("\n")[:3] == [
        '--- Sheet 1 "Sales" (4 rows × 3 columns) ---',
        "Chart 1 (from cell E2): Revenue (column clustered); axes: \"Quarter\" (category), \"$M\" (value); series "
        "\"series 1 (named by 'Sales'!B1)\" ='Sales'!$B$2:$B$4, \"series 2 (named by 'Sales'!C1)\" "
        "='Sales'!$C$2:$C$4; categories ='Sales'!$A$2:$A$4",
        "| row | A | B | C |"]
    assert text.split("\n")[-2:] == [
        '--- Sheet 2 "Trend" (empty × 0 columns) ---',
        "Chart 1 (at a fixed position): (line); series \"series 1 (named by 'Sales'!B1)\" ='Sales'!$B$2:$B$4"]


def docx_with_chart(chart: bytes, anchored: bool = False) -> bytes:
    """A Word document of two paragraphs, "before the chart" holding a drawing of the chart part
    `chart` (inline, or anchored to the paragraph), and "after the chart"."""
    import docx

    document = docx.Document()
    document.add_paragraph("before the chart")
    document.add_paragraph("after the chart")
    buffer = io.BytesIO()
    document.save(buffer)
    chart_type = "application/vnd.openxmlformats-officedocument.drawingml.chart+xml"
    package = with_parts(buffer.getvalue(), {"word/charts/chart1.xml": (chart_type, chart)},
                         {"word/_rels/document.xml.rels": [(f"{OFFICE_RELS}/chart", "charts/chart1.xml")]})
    wp = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
    if anchored:
        opening = (f'<wp:anchor xmlns:wp="{wp}" distT="0" distB="0" distL="0" distR="0" simplePos="0" '
                   'relativeHeight="1" behindDoc="0" locked="0" layoutInCell="1" allowOverlap="1">'
                   '<wp:simplePos x="0" y="0"/><wp:positionH relativeFrom="column"><wp:posOffset>0</wp:posOffset>'
                   '</wp:positionH><wp:positionV relativeFrom="paragraph"><wp:posOffset>0</wp:posOffset>'
                   '</wp:positionV><wp:extent cx="1" cy="1"/><wp:wrapNone/>')
        closing = "</wp:anchor>"
    else:
        opening, closing = f'<wp:inline xmlns:wp="{wp}"><wp:extent cx="1" cy="1"/>', "</wp:inline>"
    drawing = (f'<w:r><w:drawing>{opening}<wp:docPr id="1" name="Chart 1"/><a:graphic xmlns:a="{A}">'
               f'<a:graphicData uri="{CHART}"><c:chart xmlns:c="{CHART}" xmlns:r="{OFFICE_RELS}" r:id="rIdAdded1"/>'
               f"</a:graphicData></a:graphic>{closing}</w:drawing></w:r>")
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "word/document.xml":
                data = data.replace(b"<w:t>before the chart</w:t></w:r>",
                                    b"<w:t>before the chart</w:t></w:r>" + drawing.encode())
            target.writestr(info, data)
    return out.getvalue()


@pytest.mark.parametrize("damage", [b"<c:chartSpace", b"\x00\x01 not xml"])
def test_a_word_chart_part_that_is_not_xml_is_named_and_the_document_read(server, tmp_path: Path, damage: bytes):
    """A chart part cut short or of bytes that are no XML: one line says so; the paragraphs around
    it are read."""
    (tmp_path / "damaged-chart.docx").write_bytes(docx_with_chart(damage))
    assert body_of(server.read(path="damaged-chart.docx")) == (
        "     1\tbefore the chart\n     2\t[chart: its part is not well-formed XML, so its data cannot be shown]\n"
        "     3\tafter the chart")


def test_a_word_chart_anchored_to_its_paragraph_is_read_after_it(server, tmp_path: Path):
    """A pie anchored to a paragraph (`wp:anchor`), its data written in the chart (literals), its
    series named by its own text: read after the paragraph as an inline one is."""
    pie = (f'<c:chartSpace xmlns:c="{CHART}"><c:chart><c:autoTitleDeleted val="1"/><c:plotArea><c:pieChart>'
           '<c:varyColors val="1"/><c:ser><c:idx val="0"/><c:order val="0"/><c:tx><c:v>Share</c:v></c:tx>'
           '<c:cat><c:strLit><c:ptCount val="2"/><c:pt idx="0"><c:v>North</c:v></c:pt><c:pt idx="1"><c:v>South</c:v>'
           '</c:pt></c:strLit></c:cat><c:val><c:numLit><c:formatCode>0%</c:formatCode><c:ptCount val="2"/>'
           '<c:pt idx="0"><c:v>0.6</c:v></c:pt><c:pt idx="1"><c:v>0.4</c:v></c:pt></c:numLit></c:val></c:ser>'
           "</c:pieChart></c:plotArea></c:chart></c:chartSpace>").encode()
    (tmp_path / "anchored.docx").write_bytes(docx_with_chart(pie, anchored=True))
    assert body_of(server.read(path="anchored.docx")) == (
        "     1\tbefore the chart\n     2\t[chart: (pie)]\n     3\t| category | Share |\n     4\t| --- | --- |\n"
        "     5\t| North | 60% |\n     6\t| South | 40% |\n     7\tafter the chart")

CX = "http://schemas.microsoft.com/office/drawing/2014/chartex"
CHARTEX_TYPE = "application/vnd.ms-office.chartex+xml"
CHARTEX_REL = "http://schemas.microsoft.com/office/2014/relationships/chartEx"
WATERFALL = (f'<cx:chartSpace xmlns:a="{A}" xmlns:cx="{CX}"><cx:chartData><cx:data id="0">'
             '<cx:strDim type="cat"><cx:f>Sheet1!$A$2:$A$4</cx:f><cx:lvl ptCount="3"><cx:pt idx="0">Start</cx:pt>'
             '<cx:pt idx="1">Refunds</cx:pt><cx:pt idx="2">End</cx:pt></cx:lvl></cx:strDim>'
             '<cx:numDim type="val"><cx:f>Sheet1!$B$2:$B$4</cx:f><cx:lvl ptCount="3" formatCode="#,##0">'
             '<cx:pt idx="0">12000</cx:pt><cx:pt idx="1">-1500.4</cx:pt><cx:pt idx="2">10499.6</cx:pt></cx:lvl>'
             '</cx:numDim></cx:data></cx:chartData><cx:chart><cx:title><cx:tx><cx:txData><cx:v>Cash flow</cx:v>'
             '</cx:txData></cx:tx></cx:title><cx:plotArea><cx:plotAreaRegion><cx:series layoutId="waterfall">'
             '<cx:tx><cx:txData><cx:f>Sheet1!$B$1</cx:f><cx:v>Amount</cx:v></cx:txData></cx:tx><cx:dataId val="0"/>'
             '</cx:series></cx:plotAreaRegion></cx:plotArea></cx:chart></cx:chartSpace>').encode()
TREEMAP = (f'<cx:chartSpace xmlns:a="{A}" xmlns:cx="{CX}"><cx:chartData><cx:data id="0">'
           '<cx:strDim type="cat"><cx:f>Sheet1!$A$2:$B$4</cx:f><cx:lvl ptCount="3"><cx:pt idx="0">Apples</cx:pt>'
           '<cx:pt idx="1">Pears</cx:pt><cx:pt idx="2">Leeks</cx:pt></cx:lvl><cx:lvl ptCount="3">'
           '<cx:pt idx="0">Fruit</cx:pt><cx:pt idx="2">Vegetables</cx:pt></cx:lvl></cx:strDim>'
           '<cx:numDim type="size"><cx:f>Sheet1!$C$2:$C$4</cx:f><cx:lvl ptCount="3" formatCode="General">'
           '<cx:pt idx="0">40</cx:pt><cx:pt idx="1">25</cx:pt><cx:pt idx="2">9.5</cx:pt></cx:lvl></cx:numDim>'
           '</cx:data></cx:chartData><cx:chart><cx:plotArea><cx:plotAreaRegion><cx:series layoutId="treemap">'
           '<cx:tx><cx:txData><cx:v>Sales</cx:v></cx:txData></cx:tx><cx:dataId val="0"/></cx:series>'
           "</cx:plotAreaRegion></cx:plotArea></cx:chart></cx:chartSpace>").encode()


def chartex_frame(shape_id: int, rid: str) -> bytes:
    """A slide's graphic frame of a newer chart, in mc:AlternateContent as PowerPoint writes it
    (its fallback, a picture, left out)."""
    return ('<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">'
            f'<mc:Choice xmlns:cx1="http://schemas.microsoft.com/office/drawing/2015/9/8/chartex" Requires="cx1">'
            f'<p:graphicFrame xmlns:p="{P}"><p:nvGraphicFramePr><p:cNvPr id="{shape_id}" name="Chart"/>'
            "<p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr>"
            f'<p:xfrm><a:off xmlns:a="{A}" x="0" y="0"/><a:ext xmlns:a="{A}" cx="100" cy="100"/></p:xfrm>'
            f'<a:graphic xmlns:a="{A}"><a:graphicData uri="http://schemas.microsoft.com/office/drawing/2014/chartex">'
            f'<cx:chart xmlns:cx="{CX}" xmlns:r="{OFFICE_RELS}" r:id="{rid}"/></a:graphicData></a:graphic>'
            "</p:graphicFrame></mc:Choice></mc:AlternateContent>").encode()


def test_the_newer_chart_kinds_are_read_from_their_parts(server, tmp_path: Path):
    """A waterfall and a treemap (Office 2016's chart parts, which python-pptx passes over): each
    named by its kind and title, its data a table (a treemap's categories in their groups)."""
    package = with_parts(deck_bytes(lambda slide: text_box(slide, "the slide's text")),
                         {"ppt/charts/chartEx1.xml": (CHARTEX_TYPE, WATERFALL),
                          "ppt/charts/chartEx2.xml": (CHARTEX_TYPE, TREEMAP)},
                         {"ppt/slides/_rels/slide1.xml.rels": [(CHARTEX_REL, "../charts/chartEx1.xml"),
                                                               (CHARTEX_REL, "../charts/chartEx2.xml")]})
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "ppt/slides/slide1.xml":
                data = data.replace(b"</p:spTree>", chartex_frame(90, "rIdAdded1") + chartex_frame(91, "rIdAdded2")
                                    + b"</p:spTree>")
            target.writestr(info, data)
    (tmp_path / "newer.pptx").write_bytes(out.getvalue())
    assert body_of(server.read(path="newer.pptx")).split("\n")[1:] == [
        "     2\tthe slide's text", "     3\t[chart: Cash flow (waterfall)]", "     4\t| category | Amount |",
        "     5\t| --- | --- |", "     6\t| Start | 12,000 |", "     7\t| Refunds | -1,500 |",
        "     8\t| End | 10,500 |",
        "     9\t[chart: (treemap)]", "    10\t| category | Sales |", "    11\t| --- | --- |",
        "    12\t| Fruit / Apples | 40 |", "    13\t| Fruit / Pears | 25 |", "    14\t| Vegetables / Leeks | 9.5 |"]


def test_a_newer_chart_on_a_sheet_is_named_with_the_cells_it_spans(server, tmp_path: Path):
    """A waterfall anchored over E20:L35 (in mc:AlternateContent, as Excel writes one) beside a
    line chart openpyxl drew: both named in the sheet's header."""
    from openpyxl import Workbook
    from openpyxl.chart import LineChart, Reference

    book = Workbook()
    sheet = book.active
    for row in (["Step", "Amount"], ["Start", 12000], ["Refunds", -1500.4], ["End", 10499.6]):
        sheet.append(row)
    line = LineChart()
    line.add_data(Reference(sheet, min_col=2, min_row=2, max_row=4))
    sheet.add_chart(line, "E2")
    buffer = io.BytesIO()
    book.save(buffer)
    xdr = "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"
    anchor = (f'<xdr:twoCellAnchor xmlns:xdr="{xdr}"><xdr:from><xdr:col>4</xdr:col><xdr:colOff>0</xdr:colOff>'
              "<xdr:row>19</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from><xdr:to><xdr:col>11</xdr:col>"
              "<xdr:colOff>0</xdr:colOff><xdr:row>34</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:to>"
              '<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">'
              '<mc:Choice xmlns:cx1="http://schemas.microsoft.com/office/drawing/2015/9/8/chartex" Requires="cx1">'
              '<xdr:graphicFrame macro=""><xdr:nvGraphicFramePr><xdr:cNvPr id="3" name="Waterfall"/>'
              "<xdr:cNvGraphicFramePr/></xdr:nvGraphicFramePr><xdr:xfrm/>"
              f'<a:graphic xmlns:a="{A}"><a:graphicData uri="http://schemas.microsoft.com/office/drawing/2014/chartex">'
              f'<cx:chart xmlns:cx="{CX}" xmlns:r="{OFFICE_RELS}" r:id="rIdAdded1"/></a:graphicData></a:graphic>'
              "</xdr:graphicFrame></mc:Choice></mc:AlternateContent><xdr:clientData/></xdr:twoCellAnchor>")
    package = with_parts(buffer.getvalue(), {"xl/charts/chartEx1.xml": (CHARTEX_TYPE, WATERFALL)},
                         {"xl/drawings/_rels/drawing1.xml.rels": [(CHARTEX_REL, "../charts/chartEx1.xml")]})
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "xl/drawings/drawing1.xml":
                end = data.rindex(b"</")  # the drawing's end tag, however it is prefixed
                data = data[:end] + anchor.encode() + data[end:]
            target.writestr(info, data)
    (tmp_path / "waterfall.xlsx").write_bytes(out.getvalue())
    assert body_of(server.read(path="waterfall.xlsx")).split("\n")[1:3] == [
        "Chart 1 (from cell E2): (line); series \"series 1\" ='Sheet'!$B$2:$B$4",
        'Chart 2 (over cells E20:L35): Cash flow (waterfall); series "Amount" =Sheet1!$B$2:$B$4; categories '
        "=Sheet1!$A$2:$A$4"]


def test_a_sheets_many_charts_take_a_share_of_a_small_reply_and_its_rows_the_rest(server, tmp_path: Path):
    """Five charts of 20 series each on a sheet read 2,000 bytes at a time: the chart lines fit a
    quarter of the reply, the series and charts past it counted, and the sheet's rows follow (not
    an error that the smallest reply is too large)."""
    from openpyxl import Workbook
    from openpyxl.chart import BarChart, Reference

    book = Workbook()
    sheet = book.active
    sheet.append(["Quarter", *(f"year {year}" for year in range(20))])
    for row in range(1, 41):
        sheet.append([f"Q{row}", *(row * year for year in range(20))])
    for number in range(5):
        bars = BarChart()
        bars.title = f"Revenue {number}"
        bars.add_data(Reference(sheet, min_col=2, max_col=21, min_row=1, max_row=41), titles_from_data=True)
        sheet.add_chart(bars, f"X{2 + number * 20}")
    book.save(tmp_path / "dashboard.xlsx")
    result = server.read(path="dashboard.xlsx", maxBytes=2000)
    lines = body_of(result).split("\n")
    assert not result["isError"] and len(body_of(result).encode()) <= 2000
    assert lines[1].startswith("Chart 1 (from cell X2): Revenue 0 (column clustered); series \"series 1 (named by ")
    assert re.search(r", and 1\d more series$", lines[1]) and len(lines[1].encode()) <= 2000 // 4
    assert lines[2] == "[4 more charts drawn on this sheet, not listed: a reply lists at most 20, in 1/4 of its bytes.]"
    assert lines[3].startswith("| row | A | B |") and lines[5].startswith("| 1 | Quarter | year 0 |")


def test_a_chart_of_damaged_points_reads_the_points_it_holds(server, tmp_path: Path):
    """A point whose index is far past the count declared, one without an index, and a value that
    is no number: the chart is the rows its XML holds, each value as written."""
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    def build(slide):
        data = CategoryChartData()
        data.categories = ["a", "b", "c"]
        data.add_series("s", [1, 2, 3])
        slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, 0, 0, Inches(4), Inches(3), data)

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(deck_bytes(build))) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename.startswith("ppt/charts/chart"):
                values = data.index(b"<c:val>")
                head, tail = data[:values], data[values:]
                tail = tail.replace(b'<c:pt idx="1">', b'<c:pt idx="4000000000">', 1).replace(
                    b'<c:pt idx="2">', b"<c:pt>", 1).replace(b"<c:v>1</c:v>", b"<c:v>n/a</c:v>", 1)
                data = head + tail
            target.writestr(info, data)
    (tmp_path / "points.pptx").write_bytes(out.getvalue())
    assert body_of(server.read(path="points.pptx")).split("\n")[1:] == [
        "     2\t[chart: (column clustered)]", "     3\t| category | s |", "     4\t| --- | --- |",
        "     5\t| a | n/a |", "     6\t| b |  |", "     7\t| c |  |", "     8\t|  | 2 |"]


def test_a_newer_chart_in_a_word_document_is_read_not_its_fallback_picture(server, tmp_path: Path):
    """A waterfall in a Word document, in mc:AlternateContent as Word writes it (a picture of the
    chart its fallback): read where it stands from its part, as an ordinary chart is; the picture
    is not attached. A second whose part the file lacks says so."""
    import docx
    from PIL import Image

    document = docx.Document()
    document.add_paragraph("before the chart")
    document.add_paragraph("after the chart")
    buffer = io.BytesIO()
    document.save(buffer)
    picture = io.BytesIO()
    Image.new("RGB", (64, 48), "navy").save(picture, "PNG")
    package = with_parts(buffer.getvalue(), {"word/charts/chartEx1.xml": (CHARTEX_TYPE, WATERFALL),
                                             "word/media/fallback.png": ("image/png", picture.getvalue())},
                         {"word/_rels/document.xml.rels": [(CHARTEX_REL, "charts/chartEx1.xml"),
                                                           (f"{OFFICE_RELS}/image", "media/fallback.png")]})
    wp = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
    pic = "http://schemas.openxmlformats.org/drawingml/2006/picture"

    def drawing(number: int, graphic: str) -> str:
        return (f'<w:drawing><wp:inline xmlns:wp="{wp}"><wp:extent cx="5486400" cy="3200400"/>'
                f'<wp:docPr id="{number}" name="Chart {number}"/><a:graphic xmlns:a="{A}">{graphic}</a:graphic>'
                "</wp:inline></w:drawing>")

    def newer_chart(number: int, rid: str) -> str:
        return ('<w:r><mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">'
                '<mc:Choice xmlns:cx1="http://schemas.microsoft.com/office/drawing/2015/9/8/chartex" Requires="cx1">'
                + drawing(number, f'<a:graphicData uri="{CX}"><cx:chart xmlns:cx="{CX}" xmlns:r="{OFFICE_RELS}" '
                                  f'r:id="{rid}"/></a:graphicData>')
                + "</mc:Choice><mc:Fallback>"
                + drawing(number, f'<a:graphicData uri="{pic}"><pic:pic xmlns:pic="{pic}"><pic:nvPicPr>'
                                  f'<pic:cNvPr id="0" name="fallback.png"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill>'
                                  f'<a:blip xmlns:r="{OFFICE_RELS}" r:embed="rIdAdded2"/></pic:blipFill><pic:spPr/>'
                                  "</pic:pic></a:graphicData>")
                + "</mc:Fallback></mc:AlternateContent></w:r>")
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "word/document.xml":
                data = data.replace(b"<w:t>before the chart</w:t></w:r>", b"<w:t>before the chart</w:t></w:r>"
                                    + (newer_chart(1, "rIdAdded1") + newer_chart(2, "rIdMissing")).encode())
            target.writestr(info, data)
    (tmp_path / "waterfall.docx").write_bytes(out.getvalue())
    result = server.read(path="waterfall.docx")
    assert body_of(result).split("\n") == [
        "     1\tbefore the chart", "     2\t[chart: Cash flow (waterfall)]", "     3\t| category | Amount |",
        "     4\t| --- | --- |", "     5\t| Start | 12,000 |", "     6\t| Refunds | -1,500 |",
        "     7\t| End | 10,500 |", "     8\t[chart: its part is missing from the file, so its data cannot be shown]",
        "     9\tafter the chart"]
    assert [part["type"] for part in result["content"]] == ["text"]
