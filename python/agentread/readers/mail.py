"""Mail: an RFC 5322 message (.eml, parsed by the standard library's `email` with its default
policy) or an Outlook message (.msg, by extract-msg), read as numbered lines:

    From: Ann Lee <ann@example.com>
    To: team@example.com
    Date: Mon, 3 Mar 2025 09:12:00 +0000
    Subject: Q1 report
    Attachments (1): read one by its path
      mail.eml/attachments/report.pdf  (application/pdf, 12.0 KB)

    The body, as text (an HTML body converted by inscriptis).

An attachment is read like an archive's member, by its path after the mail's
(`mail.eml/attachments/report.pdf`), by the reader of its own kind (an attached message too). Its
name is the one the mail gives it, made safe to stand in a path and unique in the mail.
"""

from __future__ import annotations

import mimetypes
import os
import re
from dataclasses import dataclass
from email import policy
from email.header import decode_header, make_header
from email.message import EmailMessage
from email.parser import BytesHeaderParser, BytesParser
from typing import Callable, Iterator

from agentread.find import Hit, Matcher, Reached
from agentread.outline import Entry, lines_entry, outline_result
from agentread.readers import Source
from agentread.readers.archive import MAX_MEMBER_BYTES, read_inside
from agentread.readers.fields import check_fields
from agentread.readers.htmllayout import text_of_html
from agentread.readers.office.document import Rendered, search_lines, show
from agentread.request import ReadRequest
from agentread.result import ReadError, ReadResult

# The header fields shown, in this order: who wrote to whom, when, and about what.
FIELDS = ("From", "To", "Cc", "Date", "Subject")

# The folder an attachment's path names after the mail's.
ATTACHMENTS = "attachments"

# Attachments listed and readable in one mail: a real mail holds a handful, a hostile one thousands
# of empty parts to make a read list them all.
MAX_ATTACHMENTS = 500

# MIME parts walked to find the body and the attachments, and how deep they nest: past these a mail
# is built to stall a read, and is refused.
MAX_PARTS = 5000
MAX_NESTING = 50

# A name's characters that cannot stand in a path (its separators), on a line (controls) or in a
# path that is not taken for a glob (*, ?, [ and ]): each becomes "_".
_UNSAFE = re.compile(r"[/\\\x00-\x1f\x7f*?\[\]]")


@dataclass(frozen=True)
class Attachment:
    name: str  # unique in the mail, safe in a path
    mime: str
    data: Callable[[], bytes]  # decoded when the attachment is read


@dataclass(frozen=True)
class Mail:
    headers: list[tuple[str, str]]  # the FIELDS it has, in their order
    body: str
    attachments: list[Attachment]


def read(source: Source, request: ReadRequest) -> ReadResult:
    """The reader seam's reader of an .eml: the mail, its outline, or the attachment
    `source.member` names."""
    return read_mail(_eml(source.whole(), source.name), source, request)


def search(source: Source, request: ReadRequest, matcher: Matcher) -> tuple[str, Iterator[Hit | Reached]]:
    return search_lines("mail", _render(_eml(source.whole(), source.name), source.name).lines, request, matcher)


def read_msg(source: Source, request: ReadRequest, data: bytes) -> ReadResult:
    """An Outlook message of bytes `data` (compound.py found it one): read as `read` reads an
    .eml."""
    with _opened_msg(data, source.name) as message:
        return read_mail(_msg(message, source.name), source, request)


def search_msg(source: Source, request: ReadRequest, matcher: Matcher,
               data: bytes) -> tuple[str, Iterator[Hit | Reached]]:
    with _opened_msg(data, source.name) as message:
        lines = _render(_msg(message, source.name), source.name).lines
    return search_lines("mail", lines, request, matcher)


def read_mail(mail: Mail, source: Source, request: ReadRequest) -> ReadResult:
    if source.member is not None:
        return _attachment(mail, source, request)
    check_fields("mail", source.name, request)
    doc = _render(mail, source.name)
    if request.outline:
        return _outline(mail, doc, source.name, request)
    return show(doc, request, source.name, "mail")


def _render(mail: Mail, name: str) -> Rendered:
    doc = Rendered()
    for field, value in mail.headers:
        doc.add(f"{field}: {' '.join(value.split())}")
    if mail.attachments:
        doc.add(f"Attachments ({len(mail.attachments)}): read one by its path")
        for attachment in mail.attachments:
            doc.add(f"  {name}/{ATTACHMENTS}/{attachment.name}  ({attachment.mime})")
    doc.add("")
    doc.add(mail.body.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n") or "[The mail has no text body.]")
    return doc


def _outline(mail: Mail, doc: Rendered, name: str, request: ReadRequest) -> ReadResult:
    """The headers, the body, and each attachment with the path that reads it."""
    body = len(mail.headers) + (len(mail.attachments) + 1 if mail.attachments else 0) + 2
    entries = [lines_entry(0, "Headers", 1, body - 2), lines_entry(0, "Body", body, max(body, len(doc.lines)))]
    entries += [Entry(1, attachment.name, f"attachment, {attachment.mime}",
                      {"path": f"{name}/{ATTACHMENTS}/{attachment.name}"}) for attachment in mail.attachments]
    header = (f"[Outline of {name}: its headers, its body and {len(mail.attachments):,} attachment"
              f"{'' if len(mail.attachments) == 1 else 's'}. Read one with the arguments after \"→\".]")
    return outline_result(entries, request, name, "mail", header, total_lines=len(doc.lines))


def _attachment(mail: Mail, source: Source, request: ReadRequest) -> ReadResult:
    """The attachment `source.member` names (`attachments/report.pdf`), read by its own kind's
    reader."""
    wanted = source.member
    mail_name = source.name[:-len(wanted) - 1] if source.name.endswith("/" + wanted) else source.path
    folder, _, name = wanted.partition("/")
    found = next((a for a in mail.attachments if a.name == name), None) if folder == ATTACHMENTS else None
    if found is None:
        outer = next((a for a in mail.attachments if folder == ATTACHMENTS and name.startswith(a.name + "/")), None)
        if outer is not None:
            raise ReadError("nested_archive", f"{request.path} leads inside {mail_name}/{ATTACHMENTS}/{outer.name}, "
                            "an attachment; files inside attachments are not opened. Read the attachment to see "
                            "what it is.")
        names = ", ".join(f"{mail_name}/{ATTACHMENTS}/{a.name}" for a in mail.attachments[:5])
        held = f"Its attachments are read by their paths: {names}" if names else "It has no attachments"
        raise ReadError("not_found", f"{mail_name} holds no attachment {wanted}. {held}; read {mail_name} to see "
                        "them all.")
    data = found.data()
    if len(data) > MAX_MEMBER_BYTES:
        raise ReadError("file_too_large", f"{request.path} is {len(data):,} bytes, over the {MAX_MEMBER_BYTES:,}-byte "
                        "limit for a file read from inside another. Ask the user to save the attachment and read "
                        "it from there.")
    return read_inside(source, request, f"{ATTACHMENTS}/{found.name}", data,
                       f"{len(data)}:{found.name}".encode(), None)


def _unique(names: list[str], mimes: list[str]) -> list[str]:
    """Names safe in a path and unique in the mail: a nameless attachment gets its place and its
    type's extension ("attachment-3.eml"), a repeated name its count ("report-2.pdf")."""
    out: list[str] = []
    taken: set[str] = set()
    for number, (name, mime) in enumerate(zip(names, mimes), 1):
        # Kept as given otherwise, a leading dot too: an attachment named ".env" is held to the
        # secret rule as such a file is (workspace.py); "." and ".." would name folders.
        name = _UNSAFE.sub("_", name or "").strip()
        if name in (".", ".."):
            name = name.replace(".", "_")
        if not name:
            extension = ".eml" if mime == "message/rfc822" else mimetypes.guess_extension(mime) or ""
            name = f"attachment-{number}{extension}"
        stem, suffix = os.path.splitext(name)
        count = 1
        while name in taken:
            count += 1
            name = f"{stem}-{count}{suffix}"
        taken.add(name)
        out.append(name)
    return out


def _too_many(name: str, what: str) -> ReadError:
    return ReadError("too_complex", f"{name} holds {what}, past what a mail holds (it may be made to stall a "
                     "reader). It cannot be read; ask the user to save the part they need.")


# --- .eml

def _eml(data: bytes, name: str) -> Mail:
    message = BytesParser(policy=policy.default).parsebytes(data)
    # The fields as written, their encoded words decoded: the default policy would parse an address
    # field into its addresses and drop what else it says ("ann@example.com (Ann Lee)").
    written = BytesHeaderParser(policy=policy.compat32).parsebytes(data)
    headers = []
    for field in FIELDS:
        value = written[field]
        if value is None:
            continue
        try:
            value = str(make_header(decode_header(value)))
        except (ValueError, LookupError, UnicodeError):  # an encoded word in an unknown or damaged charset
            value = str(value)
        headers.append((field, value))
    body, parts = _eml_parts(message, name)
    shown = [part for part in parts if part is not body]
    if len(shown) > MAX_ATTACHMENTS:
        raise _too_many(name, f"more than {MAX_ATTACHMENTS:,} attachments")
    names = _unique([part.get_filename() or "" for part in shown], [part.get_content_type() for part in shown])
    attachments = [Attachment(unique, part.get_content_type(), _eml_bytes(part)) for unique, part in zip(names, shown)]
    return Mail(headers, _eml_text(body) if body is not None else "", attachments)


def _eml_parts(message: EmailMessage, name: str) -> tuple[EmailMessage | None, list[EmailMessage]]:
    """The part that is the body (the plain text, else the HTML) and every other leaf part but the
    body's other forms (its HTML beside its plain text), an attached message whole, in order."""
    parts: list[EmailMessage] = []
    stack = [(message, 0, None)]
    while stack:
        part, depth, parent = stack.pop()
        if depth > MAX_NESTING:
            raise _too_many(name, f"MIME parts nested more than {MAX_NESTING} deep")
        if part.is_multipart() and part.get_content_type() != "message/rfc822":
            kind = part.get_content_type()
            stack.extend((child, depth + 1, kind) for child in reversed(list(part.iter_parts())))
        elif parent != "multipart/alternative" or part.is_attachment():  # not another form of the body
            parts.append(part)
        if len(parts) + len(stack) > MAX_PARTS:
            raise _too_many(name, f"more than {MAX_PARTS:,} MIME parts")
    try:
        body = message.get_body(preferencelist=("plain", "html"))
    except (KeyError, ValueError, TypeError):
        body = None
    if body is None:  # a text part that is not an attachment, where get_body found none
        body = next((p for p in parts if p.get_content_maintype() == "text" and not p.get_filename()), None)
    return body, parts


def _eml_text(part: EmailMessage) -> str:
    try:
        text = part.get_content()
    except (LookupError, ValueError, AssertionError, KeyError):  # an unknown charset, a damaged encoding
        text = (part.get_payload(decode=True) or b"").decode("utf-8", errors="replace")
    if not isinstance(text, str):
        text = ""
    return text_of_html(text) if part.get_content_subtype() == "html" else text


def _eml_bytes(part: EmailMessage) -> Callable[[], bytes]:
    def data() -> bytes:
        if part.get_content_type() == "message/rfc822":
            inner = part.get_payload()
            return inner[0].as_bytes(policy=policy.default) if inner else b""
        decoded = part.get_payload(decode=True)
        return decoded if isinstance(decoded, bytes) else str(part.get_payload()).encode("utf-8", "replace")
    return data




# --- .msg

class _opened_msg:
    """An Outlook message opened by extract-msg, closed after the read; damaged ones refused."""

    def __init__(self, data: bytes, name: str) -> None:
        self.data, self.name = data, name
        self.message = None

    def __enter__(self):
        import extract_msg

        try:
            self.message = extract_msg.openMsg(self.data, delayAttachments=False)
        except (MemoryError, RecursionError):
            raise
        except Exception as exc:  # noqa: BLE001 - extract-msg and olefile fail in many ways on a damaged file
            raise _damaged_msg(self.name, exc) from None
        return self.message

    def __exit__(self, *exc: object) -> None:
        if self.message is not None:
            self.message.close()


def _damaged_msg(name: str, exc: Exception) -> ReadError:
    return ReadError("damaged_office", f"{name} is a damaged Outlook message that could not be read "
                     f"({type(exc).__name__}: {str(exc)[:200]}). Try another copy of the file, or ask the user to "
                     "save the mail again.")


def _msg(message, name: str) -> Mail:
    try:
        values = (message.sender, message.to, message.cc, message.date, message.subject)
        headers = [(field, str(value)) for field, value in zip(FIELDS, values) if value]
        body = message.body
        if not body and message.htmlBody:
            body = text_of_html(message.htmlBody.decode("utf-8", errors="replace"))
        shown = list(message.attachments)
    except (MemoryError, RecursionError):
        raise
    except Exception as exc:  # noqa: BLE001 - extract-msg parses its properties when first asked for
        raise _damaged_msg(name, exc) from None
    if len(shown) > MAX_ATTACHMENTS:
        raise _too_many(name, f"more than {MAX_ATTACHMENTS:,} attachments")
    names = []
    for attachment in shown:
        given = attachment.longFilename or attachment.shortFilename or getattr(attachment, "name", None) or ""
        if attachment.type.name == "MSG" and not given.lower().endswith(".msg"):
            given += ".msg"  # an attached message is read as one
        names.append(given)
    mimes = [attachment.mimetype or "application/octet-stream" for attachment in shown]
    return Mail(headers, body or "", [Attachment(unique, mime, _msg_bytes(attachment))
                                      for unique, mime, attachment in zip(_unique(names, mimes), mimes, shown)])


def _msg_bytes(attachment) -> Callable[[], bytes]:
    def data() -> bytes:
        inner = attachment.data
        if isinstance(inner, bytes):
            return inner
        if inner is None:
            return b""
        return inner.exportBytes()  # an attached message, as its own .msg
    return data

