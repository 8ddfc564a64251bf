"""A cut read of every kind, at a reply as small as the contract takes, ends with the line that says
how to read on: the version first, then the exact arguments of `next` (docs/CONTRACT.md, "Closing
lines"), whatever notes the read adds, a text-only read's note of the pictures left out included."""

from __future__ import annotations

import pytest
from harness import arguments_named, need

from rpc import text_of

DOCUTILS = "docutils-0.22.4/docutils-0.22.4/docutils"
R_INTRO = "r-doc-pdf/usr/share/doc/r-doc-pdf/manual/R-intro.pdf"
GNUPLOT = "jupytext-1.19.6/jupytext-1.19.6/tests/data/notebooks/inputs/ipynb_gnuplot/gnuplot_notebook.ipynb"
IMAGES_DOCX = "python_docx-1.2.0/python_docx-1.2.0/tests/test_files/having-images.docx"
FILL_PPTX = "python_pptx-1.0.2/python_pptx-1.0.2/features/steps/test_files/dml-fill.pptx"
DATASETS = "r-cran-readxl/usr/lib/R/site-library/readxl/extdata/datasets.xlsx"
MESSAGE = "msg_parser-1.2.0/msg_parser-1.2.0/tests/files/complete.msg"
DIGEST = "libpython3.11-testsuite/usr/lib/python3.11/test/test_email/data/msg_02.txt"
RTF_SPEC = "oletools-0.60.2/oletools-0.60.2/tests/test-data/msodde/RTF-Spec-1.7.rtf"

# One cut read of each kind (a `limit` where the file fits the reply whole), as VS Code's chat
# sends it at its smallest; those of a file with pictures also with view "text".
READS = {
    "text": {"path": f"{DOCUTILS}/nodes.py"},
    "find": {"path": f"{DOCUTILS}/nodes.py", "find": "def "},
    "find raw": {"path": f"{DOCUTILS}/nodes.py", "find": "def ", "raw": True},
    "outline": {"path": f"{DOCUTILS}/nodes.py", "outline": True},
    "pdf": {"path": R_INTRO, "pages": "7-9"},
    "pdf outline": {"path": R_INTRO, "outline": True},
    "pdf find": {"path": R_INTRO, "find": "vector"},
    "pdf lines": {"path": R_INTRO, "pages": "95-100", "limit": 5},
    "pdf image": {"path": R_INTRO, "pages": "1-3", "view": "image"},
    "notebook": {"path": GNUPLOT},
    "notebook text only": {"path": GNUPLOT, "view": "text"},
    "docx": {"path": IMAGES_DOCX, "limit": 3},
    "docx text only": {"path": IMAGES_DOCX, "limit": 3, "view": "text"},
    "pptx": {"path": FILL_PPTX, "limit": 3},
    "xlsx": {"path": DATASETS},
    "xlsx outline": {"path": DATASETS, "outline": True, "limit": 2},
    "xls": {"path": DATASETS.replace(".xlsx", ".xls")},
    "msg": {"path": MESSAGE},
    "msg outline": {"path": MESSAGE, "outline": True},
    "msg find": {"path": MESSAGE, "find": "Azure", "limit": 2},
    "eml": {"path": DIGEST},
    "eml attachment": {"path": f"{DIGEST}/attachments/attachment-1.txt", "limit": 3},
    "rtf": {"path": RTF_SPEC},
}


@pytest.mark.parametrize("name", list(READS))
def test_a_cut_read_ends_with_how_to_read_on(rpc, name):
    params = READS[name]
    need(*params["path"].split("/attachments/")[0].split("/"))
    result = rpc({**params, "maxBytes": 1400})
    assert result["truncated"] and result["next"], text_of(result)[-300:]
    last = text_of(result).rstrip("\n").split("\n")[-1]
    assert last.startswith(f"[version {result['version']}] ["), last
    assert arguments_named(last, result["next"]), (last, result["next"])


def test_a_text_only_read_says_what_it_left_out_before_how_to_read_on(rpc):
    need(*IMAGES_DOCX.split("/"))
    result = rpc({"path": IMAGES_DOCX, "limit": 3, "view": "text", "maxBytes": 1400})
    *_, note, last = text_of(result).split("\n")
    assert note.startswith("[3 pictures left out: ") and "offset=4" in last


@pytest.mark.parametrize("path", [IMAGES_DOCX, GNUPLOT])
def test_a_text_only_read_names_no_picture_attached(rpc, path):
    need(*path.split("/"))
    text = text_of(rpc({"path": path, "view": "text"}))
    named = [line for line in text.split("\n") if "[image " in line]
    assert named and all(line.endswith(', left out: view="text"]') for line in named), named
