"""What each function of the engine's C module (python/agentread/_scan.c) buys: the read it serves,
through the engine, with the function and with the Python the engine falls back on where the module
was not built.

    python bench/c_module.py [--runs 5] [--data DIR] [--pdf]

One process; the two alternate round after round, so a busy machine slows them alike; medians.
Inputs: the bench's 0.9 GB log (bench/data.py) and the ~95 MB notebook bench/bench_notebook.py
generates; a page of 3,000 small squares made here, a drawing-heavy page of the shared corpus and
the R manual (r-doc-pdf) where present. `--pdf`: the PDF rows alone. Not part of the test run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

import bench_notebook  # noqa: E402
import data  # noqa: E402
from agentread.engine import Engine  # noqa: E402
from agentread.readers import pdf, text  # noqa: E402
from agentread.readers.notebook import model  # noqa: E402
from agentread.readers.pdf import pdfium  # noqa: E402
from agentread.request import parse_request  # noqa: E402
from agentread.workspace import Workspace  # noqa: E402
from builders import drawn_pdf  # noqa: E402
from shared_corpus import CORPUS  # noqa: E402

# The regular expression run.py searches the log for: found once, so all of the log is searched.
REGEX_FIND = "worker-13 .* line=99999[0-9][0-9] "

# A page drawn with thousands of paths: small squares 6 points apart, as a scatter plot's markers
# or a mosaic's tiles.
SQUARES = "\n".join(f"{20 + 10 * (n % 55)} {20 + 10 * (n // 55)} 4 4 re f" for n in range(3000))

# A real drawing-heavy page: three plots (a sphere, a surface, two curves) of the shared corpus's
# geometry textbook, 2,459 paths.
DRAWING = ("pdf/GeoTopo-komprimiert.pdf", "35")


def read_ms(path: Path, engine: Engine | None = None, **params) -> float:
    """One read through a fresh engine and line index (nothing cached: a first read), or through
    `engine` (a repeat read)."""
    if engine is None:
        engine = Engine(Workspace([str(path.parent)]))
        text.INDEXES = text._IndexCache(text.INDEX_CACHE_FILES)  # kept across engines, as in a server
    start = time.perf_counter()
    result = engine.read(parse_request({"path": str(path), **params}))
    ms = (time.perf_counter() - start) * 1000
    assert not result.is_error, result.text()
    return ms


def compare(label: str, module, name: str, fallback, read, runs: int) -> None:
    """`read()` with module.name as built and as `fallback`, alternately; prints both medians and
    their ratio."""
    built = getattr(module, name)
    times = {"C": [], "Python": []}
    read()  # the page cache and the imports, once
    for _ in range(runs):
        for kind, function in (("C", built), ("Python", fallback)):
            setattr(module, name, function)
            try:
                times[kind].append(read())
            finally:
                setattr(module, name, built)
    c, py = statistics.median(times["C"]), statistics.median(times["Python"])
    print(f"| {label} | `{name}` | {c:.2f} ms | {py:.2f} ms | {py / c:.1f}× |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data", type=Path, default=data.DEFAULT_DIR)
    parser.add_argument("--pdf", action="store_true", help="the PDF rows alone")
    args = parser.parse_args()
    if text.number_window is None or model.plain_end is None or text.ascii_end is text._ascii_end_in_python:
        sys.exit("the C module is not built: python3 setup.py build_ext --inplace")
    print("| read | function | with it | Python fallback | bought |")
    print("|---|---|---:|---:|---:|")
    if not args.pdf:
        text_rows(args)
    pdf_rows(args)


def text_rows(args) -> None:
    log = data.log_file(args.data)
    notebook = args.data / "notebook.ipynb"
    if not notebook.exists():
        bench_notebook.generate(notebook)
    compare("0.9 GB log, a window at line 9M, first read", text, "count_line_ends", text._count_in_python,
            lambda: read_ms(log, offset=9_000_000), args.runs)
    compare("0.9 GB log, find a regular expression", text, "count_line_ends", text._count_in_python,
            lambda: read_ms(log, find=REGEX_FIND, regex=True), args.runs)
    compare("0.9 GB log, find a regular expression", text, "ascii_end", text._ascii_end_in_python,
            lambda: read_ms(log, find=REGEX_FIND, regex=True), args.runs)
    warm = Engine(Workspace([str(log.parent)]))
    compare("0.9 GB log, a 2,000-line window at line 1, repeat read", text, "number_window", None,
            lambda: read_ms(log, warm), args.runs)
    compare(f"{notebook.stat().st_size >> 20} MB notebook of plots, outline, first read", model, "plain_end", None,
            lambda: read_ms(notebook, cells="outline"), args.runs)


def pdf_rows(args) -> None:
    squares = args.data / "squares.pdf"
    args.data.mkdir(parents=True, exist_ok=True)
    squares.write_bytes(drawn_pdf(SQUARES))
    compare("a page of 3,000 small squares, first read", pdfium, "_compiled_path_segments", None,
            lambda: first_pdf_read_ms(squares, "1"), args.runs)
    drawing = CORPUS / DRAWING[0]
    if drawing.is_file():
        compare(f"{drawing.name}, page {DRAWING[1]} (plots), first read", pdfium, "_compiled_path_segments", None,
                lambda: first_pdf_read_ms(drawing, DRAWING[1]), args.runs)
    else:
        print(f"the drawing-heavy page: skipped ({drawing} is absent)", file=sys.stderr)
    manual = data.r_manual()
    if manual is None:
        print("the R manual's rows: skipped (needs r-doc-pdf)", file=sys.stderr)
        return
    for pages in ("1-20", "1-200"):  # text, few drawings
        compare(f"R manual, pages {pages}, first read", pdfium, "_compiled_page_objects", None,
                lambda pages=pages: first_pdf_read_ms(manual, pages), args.runs)


def first_pdf_read_ms(path: Path, pages: str) -> float:
    """The pages read from the document opened afresh (the reader's cache of documents emptied),
    each page's objects walked, its text laid out and looked at for figures and hidden text; the
    pages in reads of 20, as an agent pages."""
    pdf.DOCUMENTS = pdf._DocumentCache(pdf.PDF_CACHE_DOCUMENTS, pdf.PDF_CACHE_BYTES)
    engine = Engine(Workspace([str(path.parent)]))
    first, _, last = pages.partition("-")
    first, last = int(first), int(last or first)
    start = time.perf_counter()
    while first <= last:
        result = engine.read(parse_request({"path": str(path), "pages": f"{first}-{min(first + 19, last)}"}))
        assert not result.is_error, result.text()
        first = max(result.shown["pages"]) + 1
    return (time.perf_counter() - start) * 1000


if __name__ == "__main__":
    main()
