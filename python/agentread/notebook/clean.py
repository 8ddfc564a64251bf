"""Turn raw output text into what a model can read: no terminal escapes, no progress-bar frames, no base64."""

from __future__ import annotations

import re

from agentread.limits import MAX_LINE_CHARS

# Terminal escape sequences: CSI (colours, cursor moves, erase), OSC (titles, hyperlinks) ended by BEL or ST,
# DCS/SOS/PM/APC strings, the short two-byte escapes, and the 8-bit CSI form.
_ANSI = re.compile(r"""
      \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?
    | \x1b\[[0-?]*[ -/]*[@-~]
    | \x1b[PX^_][^\x1b]*(?:\x1b\\)?
    | \x1b[ -/]*[0-~]
    | \x9b[0-?]*[ -/]*[@-~]
""", re.VERBOSE)

# Overstrike, as R's help pages and man pages print bold and underline: a character, a backspace, and the
# character that a terminal shows in its place.
_OVERSTRIKE = re.compile(r"[^\x08\n]\x08")

# Control characters left after the escapes are gone (a lone ESC, backspaces, C1 controls): noise to a model.
# Tab and newline are text; carriage returns are handled by collapse_progress.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")

# A run this long of base64 characters mixing upper case, lower case and digits is encoded data printed by
# the code (an image, a key, a pickled blob); it tells the model nothing and would spend its budget.
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{200,}={0,2}")


def strip_ansi(text: str) -> str:
    if "\x1b" in text or "\x9b" in text:
        text = _ANSI.sub("", text)
    while "\x08" in text and _OVERSTRIKE.search(text):
        text = _OVERSTRIKE.sub("", text)
    return _CONTROL.sub("", text) if _CONTROL.search(text) else text


def collapse_progress(text: str) -> str:
    """Keep what a terminal would finally show on each line: the last frame after a carriage return."""
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
    if run.isupper() or run.islower() or not any(c.isdigit() for c in run):
        return run  # a DNA sequence or a long word is not encoded data
    return f"[{len(run):,} characters of base64-like data not shown]"


def clean_output(text: str) -> str:
    text = collapse_progress(strip_ansi(text))
    return _BASE64_RUN.sub(_hide_base64, text) if len(text) >= 200 else text


def split_lines(text: str) -> list[str]:
    """Lines as an editor shows them; a final newline ends the last line rather than starting another."""
    if not text:
        return []
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[-1] == "":
        lines.pop()
    return [cut_line(line) for line in lines]


def cut_line(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]} [… {len(line) - MAX_LINE_CHARS:,} more characters on this line]"
