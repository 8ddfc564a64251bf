"""The read, top to bottom: resolve the path → sniff → the reader its row names (readers/)
→ ReadResult.

`Engine.plan` resolves and sniffs, and says whether the read runs in a worker process; `run` reads a
plan, here or in a worker, without resolving or sniffing again. Every refusal a model can act on is
a ReadError raised on the way, turned into an error result by `answer`. A reader is imported when a
read needs it: a command that reads one file loads that file's reader only.
"""

from __future__ import annotations

import dataclasses
import io
from dataclasses import dataclass
from typing import Callable

from agentread.hidden import mark_result
from agentread.limits import SNIFF_BYTES
from agentread.live import LiveNotebook, live_notebook_bytes
from agentread.logs import logger
from agentread.readers import READERS, Source
from agentread.readers.fields import check_fields
from agentread.request import ReadRequest
from agentread.result import ReadError, ReadResult, TextPart, error_result
from agentread.sniff import FileInfo, sniff
from agentread.versions import (
    bytes_version,
    kept_version,
    mtime_text,
    path_of,
    since,
    text_version,
    version_tag_bytes,
)
from agentread.versions import file_version as file_version_of
from agentread.workspace import Resolved, Workspace, file_version, open_folder, open_verified

# A reader sizes its window to its text budget, not the lines around it (headers, notes, the closing
# line): a reply still over the caller's `maxBytes` is read again with the budget cut by what it
# overshot, at most this many times, before it is refused.
MAX_FIT_TRIES = 3

# A notebook holding an image output is read in a worker (its images are decoded and drawn):
# its MIME type, as a key of an output's data, is looked for in the notebook's bytes, this
# many at a time.
NOTEBOOK_IMAGE_KEY = b'"image/'
IMAGE_SCAN_BYTES = 1 << 20

# A live editor buffer, looked up by real path: the text (or notebook) the user sees, unsaved
# edits included.
LiveLookup = Callable[[str], "str | LiveNotebook | None"]


@dataclass(frozen=True)
class Plan:
    """A read resolved and sniffed: what `run` reads, wherever it runs (it crosses to a
    worker process)."""

    request: ReadRequest
    resolved: Resolved
    kind: str  # a row of READERS, "directory", or "live_notebook"
    info: FileInfo | None = None
    buffer: str | LiveNotebook | None = None  # the editor's text or notebook, when the file is open there
    isolated: bool = False  # read in a worker process where the server has them
    # (version, size, mtime) when found before the read by a caller that compared it first (the
    # stub session's lookup); else `run` finds it
    version: tuple | None = None


class Engine:
    def __init__(self, workspace: Workspace, live: LiveLookup | None = None):
        self.workspace = workspace
        self.live = live or (lambda path: None)

    def read(self, request: ReadRequest, live: LiveLookup | None = None) -> ReadResult:
        """The read, here (without a session: `since` tells unchanged from changed only). Never
        raises for a problem with the file; InvalidParams propagates."""
        def read() -> ReadResult:
            plan = self.plan(request, live)
            return since(run(plan), request.since, path_of(plan.resolved))

        return answer(request, read)

    def plan(self, request: ReadRequest, live: LiveLookup | None = None) -> Plan:
        """Resolve and sniff: where the read leads, what reads it, and whether in a worker.
        Raises ReadError."""
        resolved = self.workspace.resolve(request.path, request.consent)
        if resolved.is_dir:
            return Plan(request, resolved, "directory")
        buffer = None if resolved.member is not None else (live or self.live)(resolved.path)
        if isinstance(buffer, LiveNotebook) and not request.raw:
            # The saved file is parsed whole under the editor's cells.
            if READERS["notebook"].in_worker(resolved.st.st_size, request) or _live_images(buffer):
                return Plan(request, resolved, "live_notebook", buffer=buffer, isolated=True)
            with open_verified(resolved) as f:
                return Plan(request, resolved, "live_notebook", buffer=buffer, isolated=_holds_image(f))
        if isinstance(buffer, str):
            data = buffer.encode("utf-8", errors="surrogatepass")
            info = sniff(data[:SNIFF_BYTES], resolved.path)
            kind = _kind(info, request, resolved.path, len(data))
            return Plan(request, resolved, kind, info, buffer, READERS[kind].in_worker(len(data), request)
                        or (kind == "notebook" and NOTEBOOK_IMAGE_KEY in data))
        with open_verified(resolved) as f:
            info = sniff(f.read(SNIFF_BYTES), resolved.path)
            if resolved.member is not None and not READERS[info.kind].holds_files:
                raise ReadError("not_found", f"{request.path} does not exist: {resolved.path} is a file "
                                f"({info.description}), not a folder or an archive. Read {resolved.path} itself.")
            kind = _kind(info, request, resolved.path, resolved.st.st_size)
            return Plan(request, resolved, kind, info, isolated=READERS[kind].in_worker(resolved.st.st_size, request)
                        or (kind == "notebook" and _holds_image(f)))


# What a read can meet in a file, each turned into an error result by `problem_result`.
PROBLEMS = (ReadError, OSError, MemoryError, RecursionError)


def answer(request: ReadRequest, read: Callable[[], ReadResult]) -> ReadResult:
    """read(), with every problem of the file it meets turned into the error result the
    model reads."""
    try:
        return read()
    except PROBLEMS as exc:
        return problem_result(request, exc)


def problem_result(request: ReadRequest, exc: BaseException) -> ReadResult:
    """The error result for one of PROBLEMS met reading `request`."""
    if isinstance(exc, ReadError):
        return error_result(request.path, exc.code, exc.message)
    if isinstance(exc, OSError):  # the file system failed mid-read (EIO, a vanished mount, /proc oddities)
        return error_result(request.path, "read_failed", f"{request.path} could not be read: "
                            f"{exc.strerror or exc}. It may be on a failing disk or be a system file; "
                            "read another file.")
    logger(__name__).error("read of %s exhausted resources", request.path, exc_info=exc)
    return error_result(request.path, "too_complex", f"{request.path} is too large or too deeply "
                        f"nested to read ({type(exc).__name__}). Read a smaller part of it.")


def run(plan: Plan) -> ReadResult:
    """Read what `plan` names, held to the caller's `maxBytes`. Raises ReadError (see `answer`)."""
    limit = plan.request.max_bytes
    # Before the read: a change during it makes the version older, never newer.
    version = plan.version or plan_version(plan)
    result = _versioned(_read(plan, plan.request), version)
    tried = plan.request
    for _ in range(MAX_FIT_TRIES):
        over = 0 if limit is None or result.is_error else _reply_bytes(result) - limit
        if over <= 0:
            return result
        tried = dataclasses.replace(tried, max_bytes=tried.max_bytes - over)
        result = _versioned(_read(plan, tried), version)
    if result.is_error or _reply_bytes(result) <= limit:
        return result
    raise ReadError("reply_too_large", f"the smallest reply this read of {plan.request.path} gives "
                    f"({_reply_bytes(result):,} bytes) is over the {limit:,}-byte limit of one reply here. Read a "
                    "smaller part of it: a smaller limit, one page or one cell.")


def _reply_bytes(result: ReadResult) -> int:
    """The bytes of text a result's reply holds, its version included."""
    return result.text_bytes() + version_tag_bytes(result)


def plan_version(plan: Plan) -> tuple | None:
    """(version, size, mtime) of what the plan reads (versions.py); None for a directory. Of a
    path inside an archive, the archive's: a member's read gives its own (readers/archive.py)."""
    st, path = plan.resolved.st, path_of(plan.resolved)
    if plan.kind == "directory":
        return None
    if isinstance(plan.buffer, LiveNotebook):
        with open_verified(plan.resolved) as f:
            data = live_notebook_bytes(f.read(), plan.buffer)
        return bytes_version(data, st, path), len(data), st.st_mtime
    if isinstance(plan.buffer, str):
        return text_version(plan.buffer, path), len(plan.buffer.encode("utf-8", "surrogatepass")), st.st_mtime
    # A digest kept for the status resolve found answers without opening the file again; that status
    # is from before the read, as a version must be.
    version = kept_version(st, path)
    if version is None:
        with open_verified(plan.resolved) as f:
            version = file_version_of(f, path)
    return version, st.st_size, st.st_mtime


def _versioned(result: ReadResult, version: tuple | None) -> ReadResult:
    """`result` with the version of what the plan read, unless its reader gave its own (an archive's
    member)."""
    if version is not None and not result.is_error and result.version is None:
        result.version, result.size, result.mtime = version[0], version[1], mtime_text(version[2])
    return result


def _read(plan: Plan, request: ReadRequest) -> ReadResult:
    result = mark_result(_read_kind(plan, request))
    return result.text_only() if request.view == "text" else result


def _read_kind(plan: Plan, request: ReadRequest) -> ReadResult:
    path = plan.resolved.path
    if plan.kind == "directory":
        from agentread.readers.directory import read_directory

        check_fields("directory", request.path, request)
        with open_folder(plan.resolved) as folder:
            return read_directory(path, folder, request)
    if plan.kind == "live_notebook":
        check_fields("notebook", request.path, request)
        return _read_live_notebook(plan, request)
    row = READERS[plan.kind]
    if isinstance(plan.buffer, str):
        data = plan.buffer.encode("utf-8", errors="surrogatepass")
        return row.read(_source(plan, io.BytesIO(data), len(data), (path, "editor", hash(data))), request)
    with open_verified(plan.resolved) as f:
        return row.read(_source(plan, f, plan.resolved.st.st_size, (path, *file_version(plan.resolved.st))),
                        request)


def _source(plan: Plan, stream, size: int, cache_key: tuple) -> Source:
    info = plan.info
    return Source(path=plan.resolved.path, name=plan.request.path, stream=stream, kind=info.kind,
                  description=info.description, encoding=info.encoding, bom=info.bom, size=size,
                  cache_key=cache_key, from_editor=isinstance(plan.buffer, str), limit=READERS[plan.kind].max_bytes,
                  member=plan.resolved.member)


def read_member(source: Source, request: ReadRequest) -> ReadResult:
    """An archive member's bytes (`source`, in memory), sniffed and read by the reader of their
    kind. A member that is itself an archive is refused: archives are opened one level deep."""
    source.stream.seek(0)
    info = sniff(source.stream.read(SNIFF_BYTES), source.path)
    if info.kind == "archive":
        raise ReadError("nested_archive", f"{request.path} is an archive inside an archive ({info.description}, "
                        f"{source.size:,} bytes); archives inside archives are not opened. Ask the user to extract "
                        "the outer archive, then read this one from the folder it was extracted to.")
    kind = _kind(info, request, source.path, source.size)
    return READERS[kind].read(dataclasses.replace(source, kind=info.kind, description=info.description,
                                                  encoding=info.encoding, bom=info.bom,
                                                  limit=min(source.limit, READERS[kind].max_bytes)), request)


def _kind(info: FileInfo, request: ReadRequest, path: str, size: int) -> str:
    """The row that reads the file; a file over the row's size limit is refused
    before it is read."""
    kind = "text" if request.raw and info.encoding else info.kind
    if kind == "text":
        from agentread.readers.delimited import is_delimited

        if is_delimited(path):
            kind = "delimited"
    _check_size(kind, size, request.path)
    return kind


def _check_size(kind: str, size: int, name: str) -> None:
    limit = READERS[kind].max_bytes
    if size > limit:
        raise ReadError("file_too_large", f"{name} is a {kind} file of {size:,} bytes, over the {limit:,}-byte "
                        f"limit for {kind} files. It cannot be read whole; ask the user for a smaller export.")


def _read_live_notebook(plan: Plan, request: ReadRequest) -> ReadResult:
    from agentread.readers.notebook import read_notebook

    resolved, live = plan.resolved, plan.buffer
    _check_size("notebook", resolved.st.st_size, request.path)
    with open_verified(resolved) as f:
        saved = f.read()
    if request.find is not None:  # the cells as the editor holds them
        from agentread.find import find_with
        from agentread.readers.notebook import search_notebook

        data = live_notebook_bytes(saved, live)
        return find_with(resolved.path, lambda matcher: search_notebook(data, request, matcher, saved), request)
    result = read_notebook(live_notebook_bytes(saved, live), request, resolved.path, saved)
    outputs = "outputs as shown there" if live.outputs_from_editor else "outputs as last saved"
    note = f"[Read from the notebook open in the editor: unsaved edits included, {outputs}."
    if resolved.st.st_mtime > live.changed_at > 0:
        note += " The file on disk was saved after the editor's last change and may differ; raw=true reads it."
    result.content.insert(0, TextPart(note + "]"))
    return result


def _holds_image(f) -> bool:
    """Whether the notebook file holds an image output's key, looked for a chunk at a time
    from its start."""
    f.seek(0)
    tail = b""
    while chunk := f.read(IMAGE_SCAN_BYTES):
        if NOTEBOOK_IMAGE_KEY in tail + chunk:
            return True
        tail = chunk[-len(NOTEBOOK_IMAGE_KEY):]
    return False


def _live_images(live: LiveNotebook) -> bool:
    """Whether the editor's outputs of an open notebook hold an image."""
    return any(isinstance(output, dict) and isinstance(output.get("data"), dict)
               and any(str(key).startswith("image/") for key in output["data"])
               for cell in live.cells for output in cell.outputs or ())
