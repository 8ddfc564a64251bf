"""The one result type every reader returns, and its camelCase JSON form (the contract
in DESIGN.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Union

# A lone UTF-16 surrogate: what Python makes of a file name's undecodable byte, or of a broken \u
# escape in a notebook's JSON. Text sent as UTF-8 cannot hold one (orjson refuses it, a terminal
# too), nor can a model use it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def sendable(text: str) -> str:
    """`text` with each lone surrogate shown as U+FFFD, as the text reader shows a byte it
    cannot decode."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text)


@dataclass
class TextPart:
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"type": "text", "text": sendable(self.text)}


@dataclass
class ImagePart:
    mime_type: str
    data: str  # base64
    width: int
    height: int

    def to_json(self) -> dict[str, Any]:
        return {"type": "image", "mimeType": self.mime_type, "data": self.data,
                "width": self.width, "height": self.height}


Part = Union[TextPart, ImagePart]


# How a reader's line naming a picture ends when the picture follows it, and how it ends in a
# text-only read (view "text"), which leaves the picture out.
ATTACHED = ", attached]"
LEFT_OUT = ', left out: view="text"]'


def joined(content: list[Part]) -> list[Part]:
    """The parts as they are sent. Hosts (VS Code's chat agent, MCP clients) concatenate a
    result's text parts with nothing between them, and put a note of their own in an image's
    place (VS Code's chat follows it with the image's URI and no line break); so adjacent text
    parts go as one, joined by a line break, and the text on either side of an image ends and
    starts a line: the model reads the text line for line."""
    out: list[Part] = []
    for part in content:
        last = out[-1] if out else None
        if isinstance(part, TextPart):
            if isinstance(last, TextPart):
                out[-1] = TextPart(f"{last.text}\n{part.text}")
            elif last is not None and not part.text.startswith("\n"):
                out.append(TextPart("\n" + part.text))
            else:
                out.append(part)
        else:
            if isinstance(last, TextPart) and not last.text.endswith("\n"):
                out[-1] = TextPart(last.text + "\n")
            elif isinstance(last, ImagePart):
                out.append(TextPart("\n"))
            out.append(part)
    return out


@dataclass
class ErrorInfo:
    code: str
    message: str


@dataclass
class ReadResult:
    kind: str  # text | notebook | pdf | image | directory | error
    path: str
    content: list[Part] = field(default_factory=list)
    total_lines: int | None = None
    start_line: int | None = None
    end_line: int | None = None
    total_pages: int | None = None
    total_cells: int | None = None
    truncated: bool = False
    next: dict[str, Any] | None = None
    # What this reply holds, so that clients need not parse the text (docs/CONTRACT.md, "shown").
    shown: dict[str, Any] | None = None
    encoding: str | None = None
    error: ErrorInfo | None = None
    # A session's repeated read of an unchanged file, answered with one line (session.py;
    # docs/CONTRACT.md).
    unchanged: bool = False
    # The file's version (versions.py): a short hash, its size in bytes and its modification
    # time; `changed` when a read says the file changed since an earlier read, `diff` when its text
    # is a diff.
    version: str | None = None
    size: int | None = None
    mtime: str | None = None
    changed: bool = False
    diff: bool = False
    # Passages a person reading the file would not see, marked in the text, by kind (hidden.py).
    hidden: dict[str, int] | None = None

    @property
    def is_error(self) -> bool:
        return self.error is not None

    def text(self) -> str:
        """The text parts joined: what the model reads, with images as a one-line note."""
        out = []
        for part in self.content:
            if isinstance(part, TextPart):
                out.append(sendable(part.text))
            else:
                out.append(f"[image: {part.mime_type} {part.width}x{part.height}{ATTACHED}")
        return "\n".join(out)

    def text_only(self) -> ReadResult:
        """The result as a client that takes no pictures gets it (view "text"): its images taken
        out, and one line saying how many; in a cut read that line goes just before the closing
        line, which stays last because it says how to read on. The one place a reply is made text
        only."""
        pictures = sum(isinstance(part, ImagePart) for part in self.content)
        if not pictures:
            return self
        kept: list[TextPart] = []
        for part in self.content:
            if isinstance(part, TextPart):
                kept.append(part)
            elif kept and kept[-1].text.endswith(ATTACHED):  # the line naming the picture says it is not
                kept[-1] = TextPart(kept[-1].text[:-len(ATTACHED)] + LEFT_OUT)
        note = TextPart(f"[{pictures} picture{'s' if pictures != 1 else ''} left out: this read asked for text only "
                        f'(view="text"). Call again without view to see {"them" if pictures != 1 else "it"}.]')
        head, _, closing = kept[-1].text.rpartition("\n") if self.truncated and kept else ("", "", "")
        if closing.startswith("[") and closing.endswith("]"):
            kept[-1:] = [*([TextPart(head)] if head else []), note, TextPart(closing)]
        else:
            kept.append(note)
        self.content = kept
        return self

    def text_bytes(self) -> int:
        """UTF-8 bytes of the text parts: what a host's limit on a reply's text counts."""
        return sum(len(sendable(p.text).encode("utf-8")) for p in self.content if isinstance(p, TextPart))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "path": sendable(self.path),
                               "content": [p.to_json() for p in joined(self.content)]}
        for key, value in (("totalLines", self.total_lines), ("startLine", self.start_line),
                           ("endLine", self.end_line), ("totalPages", self.total_pages),
                           ("totalCells", self.total_cells)):
            if value is not None:
                out[key] = value
        out["truncated"] = self.truncated
        if self.next is not None:
            out["next"] = self.next
        if self.shown is not None:
            out["shown"] = self.shown
        if self.encoding is not None:
            out["encoding"] = self.encoding
        if self.unchanged:
            out["unchanged"] = True
        if self.version is not None:
            out.update(version=self.version, size=self.size, mtime=self.mtime)
        if self.changed:
            out["changed"] = True
        if self.diff:
            out["diff"] = True
        if self.hidden:
            out["hidden"] = self.hidden
        out["isError"] = self.is_error
        if self.error is not None:
            out["error"] = {"code": self.error.code, "message": sendable(self.error.message)}
        return out


class ReadError(Exception):
    """A failure the model can act on. Raised anywhere in a read; the engine turns it into an
    error result."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def error_result(path: str, code: str, message: str) -> ReadResult:
    return ReadResult(kind="error", path=path, content=[TextPart(f"Error: {message}")],
                      error=ErrorInfo(code, message))
