"""What the readers of zip-based books and documents (EPUB, OpenDocument) check before a library
parses one whole: that its zip can be read, that it inflates within the Office readers' limit, and
that it lists no more sections than they allow."""

from __future__ import annotations

import io
import re
import zipfile
import zlib

from agentread.readers.office import MAX_INFLATED_BYTES, MAX_SECTIONS
from agentread.result import ReadError


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


def damaged(path: str, what: str, code: str, exc: Exception) -> ReadError:
    """The error for a file its library could not parse."""
    detail = str(exc).splitlines()[0][:200] if str(exc) else ""
    return ReadError(code, f"{path} is a damaged {what} that could not be read ({type(exc).__name__}: {detail}). "
                     "Try another copy of the file.")
