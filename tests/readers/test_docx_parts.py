"""Word documents beyond the body's runs, read through the JSON-RPC server: tracked changes, text
boxes, fields and links to bookmarks, notes with their own links, comments and their threads,
SmartArt, headers and footers, damaged parts. Each file is written by python-docx, with the markup
Word writes for the feature put in where python-docx has no API."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import docx
import pytest
from docx.oxml import parse_xml

from rpc import body_of, serving, text_of

NAMESPACES = {
    "w": "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "wp": "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing",
    "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
    "wps": "http://schemas.microsoft.com/office/word/2010/wordprocessingShape",
    "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006",
    "v": "urn:schemas-microsoft-com:vml",
    "dgm": "http://schemas.openxmlformats.org/drawingml/2006/diagram",
}
DECLARED = " ".join(f'xmlns:{prefix}="{uri}"' for prefix, uri in NAMESPACES.items())
RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workspace of one server for the module, each test's file named apart."""
    return tmp_path_factory.mktemp("docx")


@pytest.fixture(scope="module")
def server(folder: Path):
    yield from serving(folder)


def write(folder: Path, name: str, *paragraphs: str, build=None) -> Path:
    """A DOCX of `paragraphs` (each a `<w:p>` in Word's markup), after `build(document)` made its
    python-docx parts."""
    document = docx.Document()
    if build:
        build(document)
    body = document.element.body
    for xml in paragraphs:
        body.insert(len(body) - 1, parse_xml(xml.replace("<w:p>", f"<w:p {DECLARED}>", 1)))
    document.save(folder / name)
    return folder / name


def add_parts(path: Path, parts: dict[str, tuple[str, str, str]], files: dict[str, str] | None = None) -> None:
    """Rewrite a DOCX with parts the main document relates to, `{name: (id, type, content type)}`
    holding `files[name]`, and other `files` (a part's relationships). A type without a scheme
    is one of the standard's (RELS)."""
    with zipfile.ZipFile(path) as z:
        members = {info.filename: z.read(info) for info in z.infolist()}
    rels = "".join(f'<Relationship Id="{rid}" Type="{kind if "://" in kind else f"{RELS}/{kind}"}" '
                   f'Target="{name.removeprefix("word/")}"/>' for name, (rid, kind, _) in parts.items())
    types = "".join(f'<Override PartName="/{name}" ContentType="{content}"/>'
                    for name, (_, _, content) in parts.items())
    members["word/_rels/document.xml.rels"] = members["word/_rels/document.xml.rels"].replace(
        b"</Relationships>", rels.encode() + b"</Relationships>")
    members["[Content_Types].xml"] = members["[Content_Types].xml"].replace(b"</Types>", types.encode() + b"</Types>")
    members.update({name: text.encode() for name, text in (files or {}).items()})
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)


def lines(server, path: Path, **params) -> list[str]:
    result = server.read(path=str(path), **params)
    assert not result["isError"], result
    return [line.split("\t", 1)[1] for line in body_of(result).split("\n") if re.match(r" *\d+\t", line)]


def run(text: str) -> str:
    return f'<w:r><w:t xml:space="preserve">{text}</w:t></w:r>'


def test_tracked_changes_are_marked_in_place_under_a_line_naming_the_view(server, folder: Path):
    path = write(folder, "changes.docx",
                 "<w:p>" + run("The fee is ") + '<w:del w:id="1" w:author="Ann"><w:r><w:delText>ten</w:delText>'
                 '</w:r></w:del><w:ins w:id="2" w:author="Ann">' + run("twelve") + "</w:ins>" + run(" euros.")
                 + "</w:p>",
                 '<w:p><w:moveFrom w:id="3" w:author="Ann">' + run("Moved away.") + "</w:moveFrom></w:p>")
    shown = lines(server, path)
    assert shown[0].startswith("[This document has tracked changes, shown as all markup: inserted text as "
                               "{++text++}, deleted text as {--text--}.")
    assert shown[1:] == ["The fee is {--ten--}{++twelve++} euros.", "{--Moved away.--}"]
    hit = server.read(path=str(path), find="twelve")["shown"]["hits"][0]
    assert hit["line"] == 2
    # a read from further in says so too, before its lines
    later = body_of(server.read(path=str(path), offset=3)).split("\n")
    assert later[0].startswith("[Tracked changes are shown as all markup:") and later[1] == "     3\t{--Moved away.--}"


def test_a_window_headed_by_the_changes_line_keeps_within_max_bytes(server, folder: Path):
    path = write(folder, "many-changes.docx", *(f'<w:p><w:ins w:id="{n}" w:author="A">{run(str(n))}</w:ins></w:p>'
                                                 for n in range(1000)))
    result = server.read(path=str(path), offset=50, maxBytes=2000)
    assert result["truncated"] and result["shown"]["lines"][0] == 50
    assert len(text_of(result).encode()) <= 2000
    assert body_of(result).startswith("[Tracked changes are shown as all markup:")


def test_a_document_without_changes_has_no_line_about_them(server, folder: Path):
    assert lines(server, write(folder, "plain.docx", "<w:p>" + run("Plain.") + "</w:p>")) == ["Plain."]


TEXT_BOX = ('<w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor><wp:docPr id="1" '
            'name="Text Box 1"/><a:graphic><a:graphicData uri="http://schemas.microsoft.com/office/word/2010/'
            'wordprocessingShape"><wps:wsp><wps:txbx><w:txbxContent>{content}</w:txbxContent></wps:txbx></wps:wsp>'
            "</a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict><v:shape>"
            "<v:textbox><w:txbxContent>{content}</w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback>"
            "</mc:AlternateContent></w:r>")


def test_a_text_box_is_quoted_once_after_its_paragraph_and_is_no_heading(server, folder: Path):
    content = ('<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr>' + run("Boxed title") + "</w:p>"
               + "<w:p>" + run("Boxed words") + "</w:p>")
    path = write(folder, "box.docx", "<w:p>" + run("Anchor.") + TEXT_BOX.format(content=content) + "</w:p>",
                 "<w:p>" + run("After.") + "</w:p>")
    assert lines(server, path) == ["Anchor.", "> Boxed title", "> Boxed words", "After."]
    assert "no headings" in body_of(server.read(path=str(path), outline=True))


def test_fields_show_their_results_and_a_hyperlink_field_is_a_link(server, folder: Path):
    def field(instruction: str, result: str) -> str:
        return ('<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve">'
                f'{instruction}</w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>{run(result)}'
                '<w:r><w:fldChar w:fldCharType="end"/></w:r>')

    path = write(folder, "fields.docx",
                 "<w:p>" + run("See ") + field(' HYPERLINK "https://example.com/a" \\l "part2" ', "the site")
                 + run(".") + "</w:p>",
                 "<w:p>" + run("Printed ") + field(' DATE \\@ "d MMMM yyyy" ', "27 November 2026") + run(", page ")
                 + '<w:fldSimple w:instr=" PAGE "><w:r><w:t>4</w:t></w:r></w:fldSimple>' + run(".") + "</w:p>",
                 "<w:p>" + field(' HYPERLINK \\l "Results" \\o "tip" ', "the results") + "</w:p>",
                 '<w:p><w:fldSimple w:instr=" HYPERLINK &quot;https://example.org/&quot; ">' + run("simple")
                 + "</w:fldSimple></w:p>",
                 '<w:p><w:bookmarkStart w:id="0" w:name="Results"/><w:bookmarkEnd w:id="0"/></w:p>',
                 "<w:p>" + run("Results here.") + "</w:p>")
    # a link to a bookmark names the line it lands on: an empty paragraph's, the next line shown
    assert lines(server, path) == ["See [the site](https://example.com/a#part2).", "Printed 27 November 2026, page 4.",
                                   '[the results](#Results "line 6")', "[simple](https://example.org/)", "",
                                   "Results here."]


NOTES = """<w:{kind}s {ns}><w:{kind} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:{kind}>
<w:{kind} w:id="1"><w:p><w:r><w:t xml:space="preserve">See </w:t></w:r><w:hyperlink r:id="rId1"><w:r>
<w:t>the spec</w:t></w:r></w:hyperlink><w:r><w:t>.</w:t></w:r></w:p></w:{kind}></w:{kind}s>"""
NOTE_RELS = (f'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship '
             f'Id="rId1" Type="{RELS}/hyperlink" Target="https://example.org/{{kind}}" TargetMode="External"/>'
             "</Relationships>")


def test_notes_are_listed_under_their_marks_with_links_of_their_own_part(server, folder: Path):
    path = write(folder, "notes.docx", "<w:p>" + run("Claim.") + '<w:r><w:footnoteReference w:id="1"/></w:r>'
                 + run(" Aside.") + '<w:r><w:endnoteReference w:id="1"/></w:r></w:p>')
    content = "application/vnd.openxmlformats-officedocument.wordprocessingml.{kind}s+xml"
    add_parts(path, {f"word/{kind}s.xml": (f"rId9{n}", f"{kind}s", content.format(kind=kind))
                     for n, kind in enumerate(("footnote", "endnote"))},
              {**{f"word/{kind}s.xml": NOTES.format(kind=kind, ns=DECLARED) for kind in ("footnote", "endnote")},
               **{f"word/_rels/{kind}s.xml.rels": NOTE_RELS.format(kind=kind) for kind in ("footnote", "endnote")}})
    assert lines(server, path) == ["Claim.[^1] Aside.[^e1]", "", "Footnotes:",
                                   "[^1]: See [the spec](https://example.org/footnote).", "", "Endnotes:",
                                   "[^e1]: See [the spec](https://example.org/endnote)."]


DIAGRAM = """<dgm:dataModel {ns}><dgm:ptLst>
<dgm:pt modelId="0" type="doc"/>
<dgm:pt modelId="1"><dgm:t><a:p><a:r><a:t>Plan</a:t></a:r></a:p></dgm:t></dgm:pt>
<dgm:pt modelId="2"><dgm:t><a:p><a:r><a:t>Build</a:t></a:r></a:p></dgm:t></dgm:pt>
<dgm:pt modelId="3"><dgm:t><a:p><a:r><a:t>frame</a:t></a:r></a:p></dgm:t></dgm:pt>
<dgm:pt modelId="4"><dgm:t><a:p><a:r><a:t>roof</a:t></a:r></a:p></dgm:t></dgm:pt>
<dgm:pt modelId="5" type="sibTrans"><dgm:t><a:p><a:r><a:t>not text</a:t></a:r></a:p></dgm:t></dgm:pt>
</dgm:ptLst><dgm:cxnLst>
<dgm:cxn modelId="10" srcId="0" destId="2" srcOrd="1"/><dgm:cxn modelId="11" srcId="0" destId="1" srcOrd="0"/>
<dgm:cxn modelId="12" srcId="2" destId="4" srcOrd="1"/><dgm:cxn modelId="13" srcId="2" destId="3" srcOrd="0"/>
<dgm:cxn modelId="14" type="presOf" srcId="1" destId="5"/><dgm:cxn modelId="15" srcId="3" destId="2"/>
</dgm:cxnLst></dgm:dataModel>"""


def test_smartart_items_nest_as_their_connections_order_them(server, folder: Path):
    """Transitions are not items; a connection back up the tree (damage) is not followed."""
    graphic = ('<w:r><w:drawing><wp:inline><wp:docPr id="1" name="Diagram 1" descr="Stages"/><a:graphic>'
               '<a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/diagram"><dgm:relIds '
               'r:dm="rId90"/></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>')
    path = write(folder, "diagram.docx", "<w:p>" + run("Stages:") + graphic + "</w:p>")
    add_parts(path, {"word/diagrams/data1.xml": (
        "rId90", "diagramData", "application/vnd.openxmlformats-officedocument.drawingml.diagramData+xml")},
        {"word/diagrams/data1.xml": DIAGRAM.format(ns=DECLARED)})
    assert lines(server, path) == ["Stages:", '[SmartArt "Stages":]', "- Plan", "- Build", "  - frame", "  - roof"]


def test_headers_and_footers_of_every_kind_follow_the_body_and_are_not_headings(server, folder: Path):
    def build(document):
        document.add_heading("Body title", level=1)
        document.settings.odd_and_even_pages_header_footer = True
        first = document.sections[0]
        first.different_first_page_header_footer = True
        first.header.paragraphs[0].text = "Odd header"
        first.header.paragraphs[0].style = "Heading 1"
        first.first_page_header.paragraphs[0].text = "Cover header"
        first.even_page_footer.paragraphs[0].text = "Even footer"
        first.even_page_footer.add_paragraph("second line")
        second = document.add_section()
        second.header.is_linked_to_previous = False
        second.header.paragraphs[0].text = "Part two header"
        document.add_paragraph("Part two.")

    path = write(folder, "headers.docx", build=build)
    assert lines(server, path) == [
        "# Body title", "", "Part two.", "", "Headers and footers:", "Odd-page header (section 1): Odd header",
        "First-page header (sections 1-2): Cover header", "Even-page footer (sections 1-2):", "Even footer",
        "second line", "Odd-page header (section 2): Part two header"]
    outline = body_of(server.read(path=str(path), outline=True))
    assert "Body title" in outline and "Odd header" not in outline


@pytest.mark.parametrize("kind", ["ins", "del"])
def test_a_change_with_no_text_is_not_marked(server, folder: Path, kind: str):
    path = write(folder, f"empty-{kind}.docx", f'<w:p>{run("Kept.")}<w:{kind} w:id="1" w:author="A"/></w:p>')
    assert lines(server, path) == ["Kept."]


COMMENTS = """<w:comments {ns} xmlns:w14="http://schemas.microsoft.com/office/word/2010/wordml">
<w:comment w:id="0" w:author="Ann"><w:p w14:paraId="0000000A">{ask}</w:p></w:comment>
<w:comment w:id="1" w:author="Bob"><w:p w14:paraId="0000000B">{answer}</w:p></w:comment></w:comments>"""
THREADS = """<w15:commentsEx xmlns:w15="http://schemas.microsoft.com/office/word/2012/wordml">
<w15:commentEx w15:paraId="0000000A" w15:done="1"/>
<w15:commentEx w15:paraId="0000000B" w15:paraIdParent="0000000A" w15:done="0"/></w15:commentsEx>"""


def test_comments_name_their_author_the_text_they_are_on_and_the_comment_they_answer(server, folder: Path):
    path = write(folder, "comments.docx",
                 '<w:p><w:commentRangeStart w:id="0"/><w:commentRangeStart w:id="1"/>' + run("The clause") + "</w:p>",
                 "<w:p>" + run("goes on.") + '<w:commentRangeEnd w:id="0"/><w:commentRangeEnd w:id="1"/><w:r>'
                 '<w:commentReference w:id="0"/></w:r><w:r><w:commentReference w:id="1"/></w:r></w:p>')
    add_parts(path, {"word/comments.xml": (
        "rId90", "comments", "application/vnd.openxmlformats-officedocument.wordprocessingml.comments+xml"),
        "word/commentsExtended.xml": (
        "rId91", "http://schemas.microsoft.com/office/2011/relationships/commentsExtended",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.commentsExtended+xml")},
        {"word/comments.xml": COMMENTS.format(ns=DECLARED, ask=run("Is this right?"), answer=run("Yes.")),
         "word/commentsExtended.xml": THREADS})
    assert lines(server, path) == ["The clause", "goes on.[comment 0][comment 1]", "", "Comments:",
                                   '[comment 0] Ann on "The clause goes on." (resolved): Is this right?',
                                   "[comment 1] Bob, replying to comment 0: Yes."]


def test_a_broken_header_reference_and_damaged_smartart_data_are_passed_over_and_the_rest_read(server, folder: Path):
    def build(document):
        document.sections[0].footer.paragraphs[0].text = "Kept footer"
        sect = document.element.body[-1]
        sect.insert(0, parse_xml(f'<w:headerReference {DECLARED} w:type="default" r:id="rId999"/>'))

    graphic = ('<w:r><w:drawing><wp:inline><wp:docPr id="1" name="Diagram 1"/><a:graphic><a:graphicData uri='
               '"http://schemas.openxmlformats.org/drawingml/2006/diagram"><dgm:relIds r:dm="rId90"/></a:graphicData>'
               "</a:graphic></wp:inline></w:drawing></w:r>")
    path = write(folder, "damaged.docx", "<w:p>" + run("Before.") + graphic + "</w:p>", build=build)
    add_parts(path, {"word/diagrams/data1.xml": (
        "rId90", "diagramData", "application/vnd.openxmlformats-officedocument.drawingml.diagramData+xml")},
        {"word/diagrams/data1.xml": "<dgm:dataModel"})
    shown = lines(server, path)
    assert shown[0] == "Before."
    assert shown[1].startswith("[SmartArt: its data could not be read (")
    assert shown[-2:] == ["Headers and footers:", "Footer (section 1): Kept footer"]


def test_bidirectional_runs_phonetic_guides_and_positional_tabs_keep_their_text(server, folder: Path):
    path = write(folder, "scripts.docx",
                 '<w:p><w:dir w:val="rtl">' + run("שלום") + '</w:dir><w:bdo w:val="ltr">' + run(" world") + "</w:bdo>"
                 + "</w:p>",
                 "<w:p><w:r><w:ruby><w:rubyPr/><w:rt>" + run("かんじ") + "</w:rt><w:rubyBase>" + run("漢字")
                 + '</w:rubyBase></w:ruby></w:r><w:r><w:ptab w:relativeTo="margin" w:alignment="right" '
                 'w:leader="none"/><w:t>right</w:t></w:r></w:p>')
    assert lines(server, path) == ["שלום world", "漢字(かんじ)\tright"]


def test_a_choice_needing_markup_this_reader_does_not_know_gives_way_to_its_fallback(server, folder: Path):
    ink = "http://schemas.microsoft.com/office/drawing/2016/ink"
    path = write(folder, "choice.docx",
                 f'<w:p><w:r><mc:AlternateContent xmlns:aink="{ink}"><mc:Choice Requires="aink">'
                 "<w:t>ink strokes</w:t></mc:Choice><mc:Fallback><w:t>Ink unavailable</w:t></mc:Fallback>"
                 "</mc:AlternateContent></w:r></w:p>")
    assert lines(server, path) == ["Ink unavailable"]


def test_a_list_in_a_header_takes_its_marks_from_the_documents_numbering(server, folder: Path):
    def build(document):
        header = document.sections[0].header
        header.paragraphs[0].text = "first"
        header.add_paragraph("second")
        for paragraph in header.paragraphs:  # numbering 1 of python-docx's template is a bullet list
            paragraph.paragraph_format.element.get_or_add_pPr().append(parse_xml(
                f'<w:numPr {DECLARED}><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>'))
        document.add_paragraph("Body.")

    assert lines(server, write(folder, "header-list.docx", build=build))[-3:] == [
        "Header (section 1):", "- first", "- second"]


def test_a_document_changed_between_reads_is_read_anew(server, folder: Path):
    """A document's rendering is kept for the next window of it (paging through it), not past a
    change of its bytes."""
    path = write(folder, "changing.docx", f"<w:p>{run('First words')}</w:p>", f"<w:p>{run('Second line')}</w:p>")
    assert lines(server, path) == ["First words", "Second line"]
    assert lines(server, path, offset=2) == ["Second line"]
    write(folder, "changing.docx", f"<w:p>{run('Other words')}</w:p>")
    assert lines(server, path) == ["Other words"]
