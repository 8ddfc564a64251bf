"""What the readers of zip-based books and documents (EPUB, OpenDocument) share: the checks made
before a library parses one whole (its zip can be read, it inflates within the Office readers'
limit, it lists no more sections than they allow), and the window of its sections a read shows."""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from contextlib import contextmanager
from typing import Iterator

from agentread.cancel import Cancelled
from agentread.find import Unit
from agentread.numbering import span
from agentread.readers.office import MAX_INFLATED_BYTES, MAX_SECTIONS
from agentread.readers.office.document import Rendered, show
from agentread.request import InvalidParams, ReadRequest
from agentread.result import ReadError, ReadResult, TextPart


def check_package(data: bytes, path: str, what: str, code: str,
                  sections: tuple[str, re.Pattern[bytes], str] | None = None) -> None:
    """Refuse a damaged zip (error `code`), a zip bomb, or a main part listing over MAX_SECTIONS
    entries: `sections` is (the part, the pattern of one entry, what they are called)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            inflated = sum(info.file_size for info in archive.infolist())
            if inflated > MAX_INFLATED_BYTES:
                raise ReadError("too_complex", f"{path} inflates to {inflated:,} bytes, over the "
                                f"{MAX_INFLATED_BYTES:,}-byte limit for {what} read in memory (a possible zip bomb). "
                                "It cannot be read; ask the user for a smaller export.")
            count = 0
            if sections is not None and sections[0] in archive.namelist():
                with archive.open(sections[0]) as part:
                    count = len(sections[1].findall(part.read(MAX_INFLATED_BYTES)))
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, zlib.error, RuntimeError) as exc:
        # RuntimeError: a member compressed by a method zipfile lacks, or encrypted.
        raise ReadError(code, f"{path} is a damaged {what}: its zip structure cannot be read ({exc}). Try another "
                        "copy of the file.") from None
    if sections is not None and count > MAX_SECTIONS:
        raise ReadError("too_complex", f"{path} lists {count:,} {sections[2]}, over the limit of {MAX_SECTIONS:,} "
                        f"{sections[2]} a file. It cannot be read; ask the user for an export of the part you need.")


@contextmanager
def parsing(path: str, what: str, code: str) -> Iterator[None]:
    """Any failure of the library, or of the walk over what it parsed, raised as the file's damage
    (error `code`); the project's own errors and a cancelled read pass through."""
    try:
        yield
    except (ReadError, InvalidParams, Cancelled, MemoryError, RecursionError):
        raise
    except Exception as exc:  # noqa: BLE001 - zipfile, lxml and the format libraries fail in many ways
        detail = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise ReadError(code, f"{path} is a damaged {what} that could not be read ({type(exc).__name__}: "
                        f"{detail}). Try another copy of the file.") from None


def sections_result(out: Rendered, request: ReadRequest, path: str, kind: str, first: int, last: int,
                     total: int, unit: str) -> ReadResult:
    """A window of the slides, sheets or chapters read, as a PPTX read shows its slides."""
    result = show(out, request, path, kind, pages=None if request.pages is None else span(first, last))
    result.total_pages = total
    if not total:
        result.content = [TextPart(f"[The file has no {unit}: there is nothing to read.]")]
    if result.shown:
        lines = result.shown["lines"]
        result.shown["pages"] = [n for n, start, end in out.sections if start <= lines[1] and end >= lines[0]]
    return result


def section_units(out: Rendered, first: int, last: int, offset: int, unit: str) -> Iterator[Unit]:
    """The lines of the sections read (slides, chapters) for a find, each numbered and cited as a
    read of its section numbers it (`unit`: "slide", "chapter"); the first section's from line
    `offset`."""
    for section, start, end in out.sections:
        skip = offset - 1 if section == first else 0
        for line, text in enumerate(out.lines[start - 1 + skip:end], skip + 1):
            yield Unit(text, {unit: section, "line": line}, {"pages": str(section), "offset": line, "limit": 1},
                       {"pages": span(section, last), "offset": line})
