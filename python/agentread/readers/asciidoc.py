"""The headings of an AsciiDoc file, from Asciidoctor, the reference AsciiDoc implementation (a
Ruby gem, Debian's `asciidoctor` package): asciidoc_outline.rb, run as a subprocess, parses the
text with Asciidoctor's public API and writes each heading's level and line.

The text goes to the program on stdin, never as a path, and Asciidoctor reads it in secure mode:
no include is read and no file beside the document is looked at. Where Ruby or the gem is missing,
the outline is an error that names what to install and how to read the file meanwhile.
"""

from __future__ import annotations

import importlib.resources
import json
import re
import shutil
import subprocess
import time

from agentread.cancel import Cancelled, stopped
from agentread.outline import Heading
from agentread.result import ReadError

# Asciidoctor's time for one document, under the read service's deadline (60 s) so that a hostile
# document (quadratic nesting) is answered with this error rather than the service's; an ordinary
# document of the 16 MB outlined at most parses well within it.
ASCIIDOCTOR_TIMEOUT_SECONDS = 30.0
# How often the wait looks whether its read was cancelled, so that a cancelled read ends the
# program.
CANCEL_POLL_SECONDS = 0.2
# Of what the program writes to stderr, the part a message quotes.
MAX_ERROR_CHARS = 300

# The program's exit statuses (asciidoc_outline.rb).
GEM_MISSING = 3
NESTS_TOO_DEEPLY = 4

PROGRAM = "asciidoc_outline.rb"

INSTEAD = 'read it with offset and limit, or find "== " to list its section titles'
_LINE_END = re.compile(r"\r\n|\r|\n")  # as the editor ends lines


def ruby() -> str | None:
    """The Ruby interpreter that runs Asciidoctor, None where there is none."""
    return shutil.which("ruby")


def headings(data: bytes, name: str, timeout: float = ASCIIDOCTOR_TIMEOUT_SECONDS) -> list[Heading]:
    """The headings of `data` (UTF-8 AsciiDoc) in document order: the document title at level 1,
    a "==" section at 2, ... (discrete headings too, at their level). `name` is the file's, for
    messages. The program writes a few bytes a heading, of a file the caller bounds
    (MAX_OUTLINE_FILE_BYTES)."""
    interpreter = ruby()
    if interpreter is None:
        raise _missing(name, "Ruby is not installed")
    # Valid UTF-8, which Asciidoctor requires (a stray byte becomes U+FFFD), each line ending in LF:
    # Asciidoctor ends lines at LF alone, and the editor's numbers at a lone CR too.
    lines = _LINE_END.split(data.decode("utf-8", errors="replace"))
    with importlib.resources.as_file(importlib.resources.files(__package__) / PROGRAM) as program:
        process = subprocess.Popen([interpreter, str(program)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        try:
            out, err = _wait(process, "\n".join(lines).encode("utf-8"), timeout, name)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
    if process.returncode == GEM_MISSING:
        raise _missing(name, "Ruby is installed, the asciidoctor gem is not")
    if process.returncode == NESTS_TOO_DEEPLY:
        raise ReadError("too_complex", f"{name} nests its blocks too deeply for Asciidoctor to parse; {INSTEAD}.")
    if process.returncode != 0:
        detail = err.decode("utf-8", errors="replace").strip()[-MAX_ERROR_CHARS:]
        raise ReadError("no_outline", f"Asciidoctor could not list the headings of {name} (exit status "
                        f"{process.returncode}: {detail}); {INSTEAD}.")
    try:
        found = [(level, line) for level, line, _ in json.loads(out) if 1 <= line <= len(lines)]
    except (ValueError, TypeError):  # not what the program writes: another `ruby` on the PATH
        raise ReadError("no_outline", f"Asciidoctor gave no list of the headings of {name}; {INSTEAD}.") from None
    # Each title as the source writes it ("== Install {product}", the text line of a two-line
    # title): what a search of the file finds. Asciidoctor's converted title is HTML with the
    # document's attributes put in, which the file does not hold.
    return [(level + 1, lines[line - 1].strip(), line) for level, line in found]


def _wait(process: subprocess.Popen, data: bytes, timeout: float, name: str) -> tuple[bytes, bytes]:
    """What the program writes, `data` given on its stdin, within `timeout` seconds; a cancelled
    read stops waiting (the caller ends the program)."""
    deadline = time.monotonic() + timeout
    given: bytes | None = data
    while True:
        try:
            return process.communicate(given, timeout=max(0.0, min(CANCEL_POLL_SECONDS, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            given = None  # given once: communicate keeps feeding it
        if stopped():
            raise Cancelled()
        if time.monotonic() >= deadline:
            raise ReadError("timeout", f"Asciidoctor took over {timeout:g} s to parse {name} and was stopped; "
                            f"{INSTEAD}.")


def _missing(name: str, what: str) -> ReadError:
    return ReadError("no_outline", f"{name} is AsciiDoc, whose outline comes from Asciidoctor, and {what}: "
                     "install it (apt install asciidoctor, or gem install asciidoctor). Meanwhile "
                     f"{INSTEAD}.")
