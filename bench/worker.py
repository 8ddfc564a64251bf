"""One agentread workload in a fresh process (so "cold" means cold): prints JSON timings and
peak memory.

    python bench/worker.py text PATH OFFSET [OFFSET...]
        each read's ms, in order (repeats are warm)
    python bench/worker.py pdf PATH PAGES [PAGES...]
        same, for page ranges
    python bench/worker.py pdf-picture PATH PAGE [READS]
        the page as a picture (view "image"), READS times (default 2: cold, then warm)
    python bench/worker.py pdf-next PATH
        pages "1-20" then `next` to the end: total ms
    python bench/worker.py pdf-extract PATH LAST
        pypdf alone: pages 1..LAST in one loop
    python bench/worker.py pdfium PATH PAGES [PAGES...]
        prototype: pypdfium2 text of the same pages
    python bench/worker.py find PATH PARAMS
        one search, PARAMS the find's arguments as JSON
    python bench/worker.py image PATH [PATH...]
        each image to an image part
    python bench/worker.py image-library PATH [PATH...]
        Pillow alone: each decoded and downscaled

The process first imports what the process that reads the format in a started server has imported:
the server's modules (agentread.serve.jsonrpc: pygls, logging, asyncio...), and for the formats read
in worker processes (PDF, images) what those preload (serve/workers.py PRELOAD: the readers, Pillow,
lxml, pypdfium2). So "cold" is a fresh server's first read of a format, what its reader keeps (a
parsed document, a cache) made on that read; the server's own start is timed apart, over stdio. Peak
memory is the process's maximum resident size, interpreter included.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import agentread.serve.jsonrpc  # noqa: E402,F401 - see above
from agentread.engine import Engine  # noqa: E402
from agentread.request import parse_request  # noqa: E402
from agentread.serve.service import THREAD_READERS  # noqa: E402
from agentread.serve.workers import PRELOAD  # noqa: E402
from agentread.workspace import Workspace  # noqa: E402


def _engine(path: str) -> Engine:
    engine = Engine(Workspace())
    engine.workspace.set_roots([os.path.dirname(os.path.realpath(path))])
    return engine


def _timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    value = fn()
    return (time.perf_counter() - start) * 1000, value


def text(path: str, *offsets: str) -> dict:
    engine = _engine(path)
    times, notes = [], []
    for offset in offsets:
        ms, result = _timed(lambda: engine.read(parse_request({"path": path, "offset": int(offset)})))
        assert not result.is_error, result.text()
        times.append(ms)
        notes.append({"start": result.start_line, "end": result.end_line, "total": result.total_lines})
    return {"ms": times, "windows": notes}


def pdf(path: str, *ranges: str) -> dict:
    engine = _engine(path)
    times = []
    for pages in ranges:
        ms, result = _timed(lambda: engine.read(parse_request({"path": path, "pages": pages})))
        assert not result.is_error, result.text()
        times.append(ms)
    return {"ms": times}


def pdf_picture(path: str, page: str, reads: str = "2") -> dict:
    """Page `page` as a picture (view "image"), `reads` times: the first cold, the rest warm."""
    engine = _engine(path)
    times, sizes = [], []
    for _ in range(int(reads)):
        ms, result = _timed(lambda: engine.read(parse_request({"path": path, "pages": page, "view": "image"})))
        assert not result.is_error, result.text()
        times.append(ms)
        sizes = [(part.width, part.height, len(part.data) * 3 // 4) for part in result.content
                 if hasattr(part, "width")]
    return {"ms": times, "pictures": sizes}


def pdf_next(path: str, limit: str = "0") -> dict:
    """Page through the document as an agent would: first call, then each `next` until
    there is none."""
    engine = _engine(path)
    stop = int(limit) or None
    args, calls, chars = {"path": path, "pages": "1-20"}, 0, 0
    start = time.perf_counter()
    while True:
        result = engine.read(parse_request(args))
        assert not result.is_error, result.text()
        calls += 1
        chars += len(result.content[0].text)
        # A read that showed all the pages it asked for has no `next`: the pages after them follow.
        last = max(result.shown["pages"])
        following = result.next or ({"pages": f"{last + 1}-{last + 20}"} if last < result.total_pages else None)
        if not following or (stop and int(following["pages"].split("-")[0]) > stop):
            break
        args = {"path": path, **following}
    return {"ms": [(time.perf_counter() - start) * 1000], "calls": calls, "chars": chars}


def pdf_extract(path: str, last: str) -> dict:
    """The reference for paging: pypdf's own extraction of pages 1..last in one loop, no
    engine around it."""
    from pypdf import PdfReader

    def extract():
        reader = PdfReader(path)
        return [reader.pages[i].extract_text() for i in range(int(last))]

    ms, _ = _timed(extract)
    return {"ms": [ms]}


def pdfium(path: str, *ranges: str) -> dict:
    """Prototype of the engine the issue proposes: pypdfium2 (PDFium), text of the same
    page ranges."""
    import pypdfium2

    times = []
    doc = None
    for pages in ranges:
        first, _, last = pages.partition("-")
        first, last = int(first), int(last or first)

        def extract():
            nonlocal doc
            doc = doc or pypdfium2.PdfDocument(path)
            out = []
            for i in range(first - 1, min(last, len(doc))):
                page = doc[i]
                textpage = page.get_textpage()
                out.append(textpage.get_text_bounded())
                textpage.close()
                page.close()
            return out

        ms, _ = _timed(extract)
        times.append(ms)
    return {"ms": times}


def image(*paths: str) -> dict:
    """Each image to an image part. Pillow and its readers of the common formats are imported
    first (~45 ms): imports are excluded here as everywhere, and the floor's are imported outside
    its timing too."""
    from agentread.readers.image import _pillow

    _pillow()
    times, sizes = [], []
    for path in paths:
        engine = _engine(path)
        ms, result = _timed(lambda: engine.read(parse_request({"path": path})))
        assert not result.is_error, result.text()
        times.append(ms)
        sizes.append([result.content[1].width, result.content[1].height])
    return {"ms": times, "sizes": sizes}


def image_library(*paths: str) -> dict:
    """The floor for an image: Pillow alone doing what any reader must to send it within 2,000 px,
    on its own best path: decoded at the deepest scale the decoder offers that still gives 3/4 of
    the size sent (the cut agentread asks for), then reduced and resized in one call (bicubic), with
    no encode. Each path in turn, in one process, as the image workload reads them."""
    from PIL import Image

    Image.preinit()  # its format readers, imported on the first open
    side, floor, gap = 2000, 0.75, 3.0  # agentread's MAX_IMAGE_SIDE, DRAFT_FLOOR and RESIZE_REDUCING_GAP

    def read(path: str) -> None:
        img = Image.open(path)
        scale = min(1.0, side / max(img.size))
        if img.format == "JPEG":
            img.draft("RGB", (int(img.width * scale * floor), int(img.height * scale * floor)))
        img.load()
        if max(img.size) > side:
            scale = side / max(img.size)
            img.resize((round(img.width * scale), round(img.height * scale)), Image.BICUBIC, reducing_gap=gap)

    times = [_timed(lambda: read(path))[0] for path in paths]
    return {"ms": times}


def find(path: str, params: str) -> dict:
    """One search of the file (`params`: the find's arguments as JSON): its ms, the hits listed."""
    engine = _engine(path)
    ms, result = _timed(lambda: engine.read(parse_request({"path": path, **json.loads(params)})))
    assert not result.is_error, result.text()
    return {"ms": [ms], "hits": len(result.shown["hits"])}


WORKLOADS = {"find": find, "text": text, "pdf": pdf, "pdf-next": pdf_next, "pdf-extract": pdf_extract, "pdfium": pdfium,
             "image": image, "image-library": image_library,
             "pdf-picture": pdf_picture}

# Workloads of the formats a server reads in its worker processes.
IN_WORKERS = {"pdf", "pdf-picture", "pdf-next", "image", "find"}

if __name__ == "__main__":
    if sys.argv[1] in IN_WORKERS:
        for module in PRELOAD:  # what a worker process has imported before its first read
            __import__(module)
    else:
        for module in THREAD_READERS:  # what a started server has imported (ReadService.start)
            __import__(module)
    out = WORKLOADS[sys.argv[1]](*sys.argv[2:])
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))
