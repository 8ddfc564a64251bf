"""Turn raw output text into what a model can read: no terminal escapes, no progress-bar
frames, no base64."""

from __future__ import annotations

import re

# Terminal escape sequences: CSI (colours, cursor moves, erase), OSC (titles, hyperlinks) ended by
# BEL or ST, DCS/SOS/PM/APC strings, the short two-byte escapes, and the 8-bit CSI form.
_ANSI = re.compile(r"""
      \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?
    | \x1b\[[0-?]*[ -/]*[@-~]
    | \x1b[PX^_][^\x1b]*(?:\x1b\\)?
    | \x1b[ -/]*[0-~]
    | \x9b[0-?]*[ -/]*[@-~]
""", re.VERBOSE)

# Overstrike, as R's help pages and man pages print bold and underline: a character, a backspace,
# and the character that a terminal shows in its place.
_OVERSTRIKE = re.compile(r"[^\x08\n]\x08")

# Control characters left after the escapes are gone (a lone ESC, backspaces, C1 controls): noise to
# a model. Tab and newline are text; carriage returns are handled by collapse_progress.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")

# A run this long of base64 characters mixing upper case, lower case and digits is encoded data
# printed by the code (an image, a key, a pickled blob); it tells the model nothing and would
# spend its budget.
BASE64_RUN_CHARS = 200
# Encoders that wrap base64 at a fixed width (MIME's 76 columns, PEM's 64) give whole lines of at
# least this many such characters; a shorter line ends the data.
WRAPPED_BASE64_LINE_CHARS = 60
# Wrapped lines in a row count as one run, with a shorter last line if it looks encoded (a digit,
# "+", "/" or padding), so a word on the line after the data stays. The look-behind starts a match
# only where a run starts, so a long run of letters that is not base64 is scanned once, not once per
# character. The last line's digit is found by a look-ahead, which the engine does not re-enter: the
# match stays linear in the line's length even when the line turns out not to be base64 (a long hex
# dump ending in " (truncated)").
_FULL_LINE = rf"[A-Za-z0-9+/]{{{WRAPPED_BASE64_LINE_CHARS},}}={{0,2}}"
_BASE64_RUN = re.compile(rf"(?<![A-Za-z0-9+/]){_FULL_LINE}"
                         rf"(?:[ \t]*\r?\n{_FULL_LINE}(?![^\r\n]))*"
                         r"(?:[ \t]*\r?\n(?:(?=[A-Za-z0-9+/]*[0-9+/])[A-Za-z0-9+/]+={0,2}|[A-Za-z]+={1,2})"
                         r"(?![^\r\n]))?")

# A data: URI carrying base64 (an image inlined in SVG, HTML or markdown), wrapped or not: after the
# comma, full lines, then a last (shorter) piece.
_DATA_URI = re.compile(r"(data:[\w.+-]*/?[\w.+-]*(?:;[\w.+-]+=[\w.+-]*)*;base64,)[ \t]*(?:\r?\n[ \t]*)?"
                       rf"((?:{_FULL_LINE}[ \t]*\r?\n[ \t]*(?=[A-Za-z0-9+/]))*[A-Za-z0-9+/]*={{0,2}})")


def strip_ansi(text: str) -> str:
    if "\x1b" in text or "\x9b" in text:
        text = _ANSI.sub("", text)
    while "\x08" in text and _OVERSTRIKE.search(text):
        text = _OVERSTRIKE.sub("", text)
    return _CONTROL.sub("", text) if _CONTROL.search(text) else text


def collapse_progress(text: str) -> str:
    """Keep what a terminal would finally show on each line: the last frame after a
    carriage return."""
    text = text.replace("\r\n", "\n")
    if "\r" not in text:
        return text
    lines = []
    for line in text.split("\n"):
        if "\r" in line:
            frames = [frame for frame in line.split("\r") if frame]
            line = frames[-1] if frames else ""
        lines.append(line)
    return "\n".join(lines)


def _hide_base64(match: re.Match) -> str:
    run = match.group(0)
    data = "".join(run.split())
    if len(data) < BASE64_RUN_CHARS or data.isupper() or data.islower() or not any(c.isdigit() for c in data):
        return run  # a DNA sequence or a long word is not encoded data
    return _placeholder(data)


def _hide_data_uri(match: re.Match) -> str:
    data = "".join(match.group(2).split())
    return match.group(1) + _placeholder(data) if data else match.group(0)


def _placeholder(data: str) -> str:
    return f"[… {len(data):,} characters of base64 not shown; raw=true shows them]"


def hide_base64(text: str) -> str:
    """Encoded payloads replaced by a short placeholder saying how long they were: data: URIs
    carrying base64, and long base64 runs (on one line, or wrapped over lines)."""
    if ";base64," in text:
        text = _DATA_URI.sub(_hide_data_uri, text)
    return _BASE64_RUN.sub(_hide_base64, text) if len(text) >= BASE64_RUN_CHARS else text


def clean_output(text: str) -> str:
    return hide_base64(collapse_progress(strip_ansi(text)))


def source_lines(text: str) -> list[str]:
    """A cell's source as lines, one for one (line N of the cell stays line N), encoded
    payloads hidden."""
    if ";base64," not in text and len(text) < BASE64_RUN_CHARS:
        return editor_lines(text)
    return [hide_base64(line) for line in editor_lines(text)]


def editor_lines(text: str) -> list[str]:
    """Lines as an editor splits them, uncut (a read cuts a long one where it shows it); a final
    newline ends the last line rather than starting another."""
    if not text:
        return []
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines
