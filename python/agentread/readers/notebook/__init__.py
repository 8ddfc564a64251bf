"""Notebooks (.ipynb), read cell by cell with their outputs, in a form a model can cite and edit.

Addressing, with `cells` (1-based, like lines and pages):
    "4"            cell 4            "2-7"   cells 2 to 7        "5-"   cell 5 to the last
    "1,4-6,ab12"   a list: numbers, ranges and cell ids, mixed; cells come back in notebook order,
                   once each
    "ab12cd34"     the cell with that id (every cell with it, if the file repeats an id); an item
                   that is an id of this notebook is read as the id even if it looks like a number
    "outline"      one line per cell (see below); offset/limit page it
    absent / "all" every cell
Cells without an nbformat id (files older than nbformat 4.5) get a derived one, "~" and 8 hex
digits, made from the cell's source: it stays the same while that cell is unchanged, and it can be
used in `cells`.

A read by cells sends whole cells until the per-call budget (about 50 KB of text, 2000 lines, 10
images) is reached, then ends with a line naming the cells shown and `next: {"cells": "13-40"}` for
the rest. A first cell over the budget by itself is sent cut, with `next: {"cells": "13-40",
"offset": 1996}`: that offset read goes on with the rest of cell 13, then cells 14-40, line by line,
so following `next` shows every line once. In a read of several cells each output keeps at most 60
lines / 6000 characters (its head and its tail); reading one cell alone allows each output half the
call budget. A cut says what was left out and how to read it, and makes the read `truncated`; when
every selected cell was shown, `next` reads what the first cut left out
(`{"cells": "5", "offset": 42}`, as its mark says):
  [… 1,234 lines (56,789 characters) of this output cut here; read them with cells="5", offset=42]
A line over 2,000 characters (source or output) is cut the same way, its mark naming the column
that reads on: `[… line cut at character 2,000 of 5,000 characters; cells="5", offset=42,
column=2001 reads on]`.
`offset`/`limit` page through the uncut rendering of the selected cells (all cells when `cells` is
absent), line by line, with `next: {"offset": N}` (plus the same `cells`); line 1 of a single cell
is its header. `column` starts the first line at that character, as in a text file, and a window
that cut a line has `next: {"offset": N, "column": 2001}`, the rest of that line.
Every result's `shown` says which cells it holds, the lines of a cell it starts or
ends inside, and the lines kept of each output cut to head and tail (docs/CONTRACT.md).

Versions and schema: nbformat 4 files are parsed here; nbformat 1-3 files are read and upgraded to
version 4 by nbformat (the ids its upgrade draws at random are not shown: derived ones are).
Whatever its faults, a notebook is read as far as it can be. One whose fields are off nbformat 4's
layout (a field missing, unknown or of the wrong type, a cell or output of an unknown type) has
nbformat's validator check its top level and the cells the read shows, and the Warning line names
each problem by cell and field. A value the layout check does not look at (a metadata field of the
wrong type) is named only in a notebook flagged for another reason.

Format of a read:
    Notebook: 12 cells (7 code, 5 markdown), language python, nbformat 4.5.
    Warning: the notebook does not follow the nbformat schema; shown as far as it could be read:
    cell 4 (id=ab12): outputs[1] is missing 'output_type'; ...
                                        (one line, only for a notebook off the schema)
    ### Cell 3 [id=ab12cd34] code (python) exec=7
    <source lines>
    --- output 1: stdout ---            (consecutive outputs of one stream are merged; order is
                                         kept)
    --- output 2: result ---            (execute_result; "display" for display_data)
    [image 1: output 2, image/png 640x480, attached]     (the image part follows this line)
    --- output 3: error ValueError ---  (the traceback, without colour codes)
Markdown cells read `### Cell 1 [id=…] markdown`; raw cells add their format: `raw (text/html)`.
Outputs are cleaned: ANSI escapes removed, `\\r` progress frames collapsed to the final one, base64
never shown (a data: URI or a long run of base64, wrapped or not, becomes "[… 4,096 characters of
base64 not shown; raw=true shows them]", in sources too, where lines stay one for one; raw=true
shows the file as it is); text/plain is preferred (markdown and LaTeX are kept as text, LaTeX beside
a picture too); HTML (text/html, text/vnd.*+html) is shown as laid-out text when no text form says
more than a default repr, its scripts and styles left out and counted (htmltext.py: past 200,000
characters, the rest as its source); figure specifications (Plotly, Vega, Vega-Lite, Bokeh) are
summarised, naming the raw read of their whole JSON (figures.py, bokehdoc.py, locate.py); widgets
and JavaScript outputs become one-line placeholders naming the mime type (a widget its model and
saved state, widgets.py), their text form on that line or, when long, whole after it. PNG, JPEG, GIF
(and SVG where cairosvg is installed) outputs and markdown attachments are attached as downscaled
image parts; an SVG the rasteriser would recurse on (a <use> pointing nowhere or at its own
ancestor, deep nesting) is shown as text, saying why.
    --- output 2: display ---
    [Plotly figure (application/vnd.plotly.v1+json) "Sales", 1 bar trace; raw=true, offset=66,
        limit=807 shows its whole JSON]
    x axis: region; y axis: units
    trace 1: bar "2024", 3 points; x: north, south, east; y: 2, 3, 1

Outline line per cell (`cells="outline"`), one line, wrapped here:
    Cell 3 [id=ab12cd34] code (python) exec=7, 12 lines: import numpy as np | stdout 3 lines;
        display image/png 640x480 33.1 KB, text/plain 21 B; display application/vnd.plotly.v1+json
        7.3 KB (Plotly figure "Sales", 1 bar trace)
"""

from agentread.readers.notebook.reader import notebook_outline, read, read_notebook, search, search_notebook

__all__ = ["read", "read_notebook", "notebook_outline", "search", "search_notebook"]
