"""The read, top to bottom: resolve the path → directory? → sniff → one reader → ReadResult.

Every refusal a model can act on is a ReadError raised on the way and turned into an error result here.
"""

from __future__ import annotations

import dataclasses
import io
import logging
from typing import Callable

from agentread.delimited import add_header
from agentread.directory import read_directory
from agentread.limits import SNIFF_BYTES
from agentread.live import LiveNotebook, live_notebook_bytes
from agentread.request import ReadRequest
from agentread.result import ReadError, ReadResult, TextPart, error_result
from agentread.sniff import FileInfo, sniff
from agentread.text import read_text
from agentread.workspace import Resolved, Workspace, file_version, open_verified

log = logging.getLogger(__name__)

# Files read whole (image, notebook, Office) are refused past these sizes: the readers hold the file in memory. So
# is a PDF, though PDFium reads only what its pages need: one of its streams may be most of the file, and is
# then held whole; a damaged one is scanned whole to rebuild its cross-references; pypdf reads it whole.
# Each is far above what its format reaches in practice (a 100 MB notebook must read; a 2 GB "PNG" must not).
# A legacy Office file is read whole only to say what it is.
MAX_WHOLE_FILE_BYTES = {"pdf": 512 << 20, "image": 100 << 20, "notebook": 512 << 20, "office": 512 << 20,
                        "legacy_office": 512 << 20}

# Kinds whose readers call native code (PDFium, Pillow's decoders, lxml, cairo, Tesseract) or can run long on a
# hostile file. The server reads them in a worker process (workers.py), where a crash or a runaway read costs
# that process only; text, directories and binary refusals are read where the request is, which is faster.
ISOLATED_KINDS = frozenset({"pdf", "image", "office", "legacy_office"})

# A notebook's image outputs are decoded and drawn (Pillow, cairo for SVG): a notebook holding one is read in a
# worker too. Its MIME type, as a key of an output's data, is looked for in the notebook's bytes.
NOTEBOOK_IMAGE_KEY = b'"image/'

# A reader sizes its window to its text budget, not the lines around it (headers, notes, the closing line): a
# reply still over the caller's `maxBytes` is read again with the budget cut by what it overshot, at most this
# many times, before it is refused.
MAX_FIT_TRIES = 3

# A live editor buffer, looked up by real path: the text (or notebook) the user sees, unsaved edits included.
LiveLookup = Callable[[str], "str | LiveNotebook | None"]


class FileChanged(Exception):
    """The file a read was told to expect (Engine.read's `expect`) has changed since; nothing was read."""


class ReadElsewhere(Exception):
    """Raised by an engine that isolates (Engine's `isolate`) for a file whose reader runs in a worker process
    (runs_isolated); nothing was read. `path` is the real path (it picks the worker)."""

    def __init__(self, path: str):
        super().__init__(path)
        self.path = path


def runs_isolated(kind: str, data: bytes | None = None, live: LiveNotebook | None = None) -> bool:
    """Whether a reader of this kind of content runs in a worker process: the one place that decides it. A
    notebook does when its bytes (`data`) or the editor's outputs for it (`live`) hold an image."""
    if kind == "notebook":
        return (data is not None and NOTEBOOK_IMAGE_KEY in data) or (live is not None and any(
            isinstance(output, dict) and isinstance(output.get("data"), dict)
            and any(str(key).startswith("image/") for key in output["data"])
            for cell in live.cells for output in cell.outputs or ()))
    return kind in ISOLATED_KINDS


class Engine:
    def __init__(self, workspace: Workspace, live: LiveLookup | None = None, isolate: bool = False):
        self.workspace = workspace
        self.live = live or (lambda path: None)
        # The server's engine: a file that runs_isolated raises ReadElsewhere instead of being read.
        self.isolate = isolate

    def read(self, request: ReadRequest, live: LiveLookup | None = None, expect: tuple | None = None) -> ReadResult:
        """Never raises for a problem with the file: those become error results. InvalidParams propagates;
        FileChanged, raised before anything is read when `expect` (a file_version) is not the file's version;
        and ReadElsewhere, from an engine that isolates."""
        live = live or self.live
        result = self._guarded(request, live, expect)
        if request.max_bytes is None:
            return result
        tried = request
        for _ in range(MAX_FIT_TRIES):
            over = result.text_bytes() - request.max_bytes
            if over <= 0 or result.is_error:
                return result
            tried = dataclasses.replace(tried, max_bytes=tried.max_bytes - over)
            result = self._guarded(tried, live, expect)
        if result.text_bytes() <= request.max_bytes or result.is_error:
            return result
        return error_result(request.path, "reply_too_large", f"the smallest reply this read of {request.path} "
                            f"gives ({result.text_bytes():,} bytes) is over the {request.max_bytes:,}-byte limit of "
                            "one reply here. Read a smaller part of it: a smaller limit, one page or one cell.")

    def _guarded(self, request: ReadRequest, live: LiveLookup, expect: tuple | None) -> ReadResult:
        try:
            return self._read(request, live, expect)
        except ReadError as exc:
            return error_result(request.path, exc.code, exc.message)
        except OSError as exc:  # the file system failed mid-read (EIO, a vanished mount, /proc oddities)
            return error_result(request.path, "read_failed", f"{request.path} could not be read: "
                                f"{exc.strerror or exc}. It may be on a failing disk or be a system file; "
                                "read another file.")
        except (MemoryError, RecursionError) as exc:
            log.exception("read of %s exhausted resources", request.path)
            return error_result(request.path, "too_complex", f"{request.path} is too large or too deeply "
                                f"nested to read ({type(exc).__name__}). Read a smaller part of it.")

    def _read(self, request: ReadRequest, live: LiveLookup, expect: tuple | None) -> ReadResult:
        resolved = self.workspace.resolve(request.path, request.consent)
        if expect is not None and (resolved.is_dir or file_version(resolved.st) != expect):
            raise FileChanged(resolved.path)  # open_verified then holds the read to this inode
        if resolved.is_dir:
            return read_directory(resolved.path, request)
        buffer = live(resolved.path)
        if isinstance(buffer, LiveNotebook) and not request.raw:
            return self._read_live_notebook(buffer, request, resolved)
        if isinstance(buffer, str):
            data = buffer.encode("utf-8", errors="surrogatepass")
            info = sniff(data[:SNIFF_BYTES], resolved.path)
            return self._dispatch(io.BytesIO(data), info, request, resolved, len(data), live_buffer=True)
        with open_verified(resolved) as f:
            info = sniff(f.read(SNIFF_BYTES), resolved.path)
            return self._dispatch(f, info, request, resolved, resolved.st.st_size, live_buffer=False)

    def _read_live_notebook(self, live: LiveNotebook, request: ReadRequest, resolved: Resolved) -> ReadResult:
        from agentread.notebook import read_notebook

        with open_verified(resolved) as f:
            saved = _whole(f, "notebook", resolved.st.st_size, request.path)
        if self.isolate and runs_isolated("notebook", saved, live):
            raise ReadElsewhere(resolved.path)
        result = read_notebook(live_notebook_bytes(saved, live), request, resolved.path)
        outputs = "outputs as shown there" if live.outputs_from_editor else "outputs as last saved"
        note = f"[Read from the notebook open in the editor: unsaved edits included, {outputs}."
        if resolved.st.st_mtime > live.changed_at > 0:
            note += " The file on disk was saved after the editor's last change and may differ; raw=true reads it."
        result.content.insert(0, TextPart(note + "]"))
        return result

    def _dispatch(self, f, info: FileInfo, request: ReadRequest, resolved: Resolved, size: int,
                  live_buffer: bool) -> ReadResult:
        path = resolved.path
        st = resolved.st
        cache_key = None if live_buffer else (path, *file_version(st))
        kind = "text" if request.raw and info.encoding else info.kind
        if kind == "binary":
            raise ReadError("binary", f"{request.path} is a binary file ({info.description}, {size:,} bytes) "
                            "and cannot be shown as text. Look for a text form of it (source, export, docs).")
        if kind == "text":
            encoding = info.encoding or "utf-8"
            result = read_text(f, request, path, encoding, info.bom, size, cache_key,
                               label="utf-8 (editor buffer)" if live_buffer else None)
            return add_header(result, f, path, encoding, info.bom)
        if self.isolate and runs_isolated(kind):
            raise ReadElsewhere(path)
        if kind == "pdf":
            from agentread.pdf import read_pdf

            # PDFium reads from the file only what the pages asked for need (a page of a 6 MB manual, 200 KB),
            # once: the parsed document is cached under cache_key. pypdf, for what PDFium refuses, reads it whole.
            _check_size(kind, size, request.path)
            return read_pdf(f, request, path, cache_key or (path, hash(f.getvalue())),
                            whole=lambda: _whole(f, kind, size, request.path))
        data = _whole(f, kind, size, request.path)
        if kind == "image":
            from agentread.image import read_image

            return read_image(data, request, path, info.description)
        if kind == "office":
            from agentread.office import read_office

            return read_office(data, request, path)
        if kind == "legacy_office":
            from agentread.office import refuse_legacy

            raise refuse_legacy(data, request.path, size)
        if self.isolate and runs_isolated(kind, data):
            raise ReadElsewhere(path)
        from agentread.notebook import read_notebook

        return read_notebook(data[info.bom:], request, path)


def _check_size(kind: str, size: int, name: str) -> None:
    limit = MAX_WHOLE_FILE_BYTES[kind]
    if size > limit:
        raise ReadError("file_too_large", f"{name} is a {kind} file of {size:,} bytes, over the {limit:,}-byte "
                        f"limit for {kind} files. It cannot be read whole; ask the user for a smaller export.")


def _whole(f, kind: str, size: int, name: str) -> bytes:
    _check_size(kind, size, name)
    limit = MAX_WHOLE_FILE_BYTES[kind]
    f.seek(0)
    # Asked for `limit` bytes, read() sets aside that much memory before reading: 6.7 ms for a 6.5 MB PDF
    # against 1.2 sized to the file. A file grown since it was measured is read on, up to the limit.
    data = f.read(size + 1)
    if len(data) > size:
        data += f.read(limit + 1 - len(data))
    return data[:limit]
