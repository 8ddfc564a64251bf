"""Archives: zip, and tar plain or compressed (gzip, bzip2, xz), read with the standard library's
zipfile and tarfile, never extracted to disk.

The archive's path lists its members as a directory listing pages its entries, in the archive's
order, with sizes and dates. A path that goes on inside it (`bundle.zip/docs/readme.md`) reads one
member: its bytes, unpacked in bounded chunks into memory, are read as their own kind through the
reader seam (engine.read_member); a folder inside it lists what is under that folder. Members whose
names climb out (`..`) or are absolute, links, devices and archives inside the archive are listed
but never read.
"""

from __future__ import annotations

import io
import lzma
import re
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any, BinaryIO, Iterator

from agentread.cancel import checkpoint
from agentread.readers import Source
from agentread.readers.directory import MAX_DIR_SCAN, human_size, page_listing
from agentread.readers.fields import check_fields
from agentread.request import ReadRequest
from agentread.result import ReadError, ReadResult

# A member is unpacked into memory to be read: past this size it is refused, whatever its header
# declares and whatever its data turns out to unpack to (a zip bomb's header lies small).
MAX_MEMBER_BYTES = 100 << 20

# A member is unpacked this many bytes at a time, each chunk counted against MAX_MEMBER_BYTES
# before the next is asked for.
UNPACK_CHUNK = 1 << 20

# A compressed tar has no index: finding a member unpacks everything before it. Past this many
# unpacked bytes a listing (or a search for a member) stops, as a directory listing stops at
# MAX_DIR_SCAN entries.
MAX_TAR_SCAN_BYTES = 2 << 30

# How tarfile opens each kind sniff found a tar to be.
TAR_MODES = {"application/x-tar": "r:", "application/gzip": "r:gz", "application/x-bzip2": "r:bz2",
             "application/x-xz": "r:xz"}
TAR_FORMS = {"application/x-tar": "tar", "application/gzip": "tar, gzip-compressed",
             "application/x-bzip2": "tar, bzip2-compressed", "application/x-xz": "tar, xz-compressed"}

# What zipfile and tarfile raise on a damaged or unsupported archive (the gzip, bzip2 and xz
# decompressors raise OSError, EOFError and their own errors).
DAMAGED = (zipfile.BadZipFile, tarfile.TarError, zlib.error, EOFError, OSError, ValueError, NotImplementedError,
           lzma.LZMAError)

# A control character in a member's name: shown escaped, and never read (a name holding a line
# break would forge lines in the listing).
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class Member:
    name: str  # as the archive stores it
    path: str | None  # what a read names after the archive's path; None: a name not safe to follow
    type: str  # file | folder | symbolic link | hard link | special
    size: int
    date: str
    target: str = ""  # a link's target, as stored
    encrypted: bool = False
    entry: Any = None  # the ZipInfo or TarInfo

    def line(self) -> str:
        shown = self.path if self.path is not None else _escaped(self.name)
        if self.type == "folder" and self.path is not None:
            return shown + "/"
        if self.type in ("symbolic link", "hard link"):
            target = f" -> {_escaped(self.target)}" if self.target else ""
            return f"{shown}{target}  ({self.type}, not followed)"
        if self.type == "special":
            return f"{shown}  (device or pipe, not read)"
        notes = [human_size(self.size), self.date] + (["encrypted"] if self.encrypted else [])
        if self.path is None:
            notes.append("unsafe name, not read")
        return f"{shown}  ({', '.join(notes)})"


def read(source: Source, request: ReadRequest) -> ReadResult:
    """The reader seam's archive reader: the listing, or the member `source.member` names."""
    try:
        found = (_read_tar if source.description in TAR_MODES else _read_zip)(source, request)
    except DAMAGED as exc:
        raise ReadError("damaged_archive", f"{request.path} could not be read as an archive ({type(exc).__name__}: "
                        f"{str(exc)[:200]}). It may be damaged or use a feature the reader does not support; "
                        "ask the user to extract it.") from None
    if isinstance(found, ReadResult):
        return found
    member, data = found
    from agentread.engine import read_member  # the engine imports the readers' table: imported when used

    path = f"{source.path}/{member.path}"
    return read_member(replace(source, path=path, stream=io.BytesIO(data), size=len(data), member=None,
                               cache_key=(path, *source.cache_key[1:]), limit=MAX_MEMBER_BYTES), request)


def _read_zip(source: Source, request: ReadRequest) -> ReadResult | tuple[Member, bytearray]:
    with zipfile.ZipFile(source.stream) as archive:
        members = [_zip_member(info) for info in archive.infolist()]
        if source.member is None:
            return _listing(source, request, members, "zip")
        found = _find(source, request, members, "zip")
        if isinstance(found, ReadResult):
            return found
        if found.encrypted:
            raise ReadError("encrypted_archive", f"{request.path} is encrypted in its archive and needs a password; "
                            "passwords cannot be passed to this tool. Ask the user for the file itself.")
        with archive.open(found.entry) as stream:
            return found, _unpack(stream, found, request)


def _zip_member(info: zipfile.ZipInfo) -> Member:
    mode = info.external_attr >> 16
    link = info.create_system == 3 and stat.S_ISLNK(mode)  # 3: made on Unix, whose mode bits it keeps
    kind = "folder" if info.is_dir() else "symbolic link" if link else "file"
    return Member(info.filename, _safe_path(info.filename), kind, info.file_size,
                  "{:04d}-{:02d}-{:02d} {:02d}:{:02d}".format(*info.date_time[:5]),
                  encrypted=bool(info.flag_bits & 0x1), entry=info)


def _read_tar(source: Source, request: ReadRequest) -> ReadResult | tuple[Member, bytearray]:
    form = TAR_FORMS[source.description]
    compressed = source.description != "application/x-tar"
    source.stream.seek(0)
    with tarfile.open(fileobj=source.stream, mode=TAR_MODES[source.description]) as archive:
        scan = _TarScan(archive, compressed)
        if source.member is None:
            members = list(scan.members(MAX_DIR_SCAN))
            return _listing(source, request, members, form, scan.stopped)
        wanted = source.member
        members = []
        for member in scan.members(None):
            members.append(member)
            if member.path == wanted and member.type != "folder":
                break  # a folder's members follow it: go on to list them
        found = _find(source, request, members, form, scan.stopped)
        if isinstance(found, ReadResult):
            return found
        return found, _unpack(archive.extractfile(found.entry), found, request)


class _TarScan:
    """A tar's members from its start, until a count, or MAX_TAR_SCAN_BYTES unpacked in a
    compressed one."""

    def __init__(self, archive: tarfile.TarFile, compressed: bool) -> None:
        self.archive, self.compressed = archive, compressed
        self.stopped: str | None = None  # why not every member was looked at, in words

    def members(self, most: int | None) -> Iterator[Member]:
        count = 0
        while True:
            if most is not None and count >= most:
                if self.archive.next() is not None:
                    self.stopped = (f"The listing stops at the first {most:,} members of this archive (a tar is read "
                                    "from its start). Read a member by its path inside the archive.")
                return
            entry = self.archive.next()
            if entry is None:
                return
            count += 1
            if count % 4096 == 0:
                checkpoint()
            yield _tar_member(entry)
            if self.compressed and entry.offset_data + entry.size > MAX_TAR_SCAN_BYTES:
                self.stopped = (f"The listing stops after the first {MAX_TAR_SCAN_BYTES >> 30} GB unpacked of this "
                                "compressed archive. Read a member by its path inside the archive.")
                return


def _tar_member(entry: tarfile.TarInfo) -> Member:
    kind = ("folder" if entry.isdir() else "file" if entry.isreg() else "symbolic link" if entry.issym()
            else "hard link" if entry.islnk() else "special")
    try:
        date = datetime.fromtimestamp(entry.mtime, timezone.utc).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        date = "date unknown"
    return Member(entry.name, _safe_path(entry.name), kind, entry.size, date, target=entry.linkname, entry=entry)


def _safe_path(name: str) -> str | None:
    """The path a read names a member by: its name without `./` parts or a folder's closing slash;
    None for a name that is absolute, climbs out with `..` or holds a control character."""
    if not name or name.startswith(("/", "\\")) or _DRIVE.match(name) or _CONTROL.search(name):
        return None
    if ".." in re.split(r"[/\\]", name):
        return None
    parts = [part for part in name.split("/") if part not in ("", ".")]
    return "/".join(parts) or None


def _escaped(name: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", name)


def _listing(source: Source, request: ReadRequest, members: list[Member], form: str, stopped: str | None = None,
             folder: str | None = None) -> ReadResult:
    check_fields("archive", request.path, request)  # a member is checked by its own kind's row
    name = _archive_name(source)
    where = f", folder {folder}/" if folder else ""
    example = next((m.path for m in members if m.type == "file" and m.path), None)
    closing = (f"[Read a member by its path inside the archive, e.g. {name}/{example}.]" if example else "")
    count = "members" if folder is None else "members in it"
    return page_listing(request, "archive", source.path, [m.line() for m in members], stopped,
                        heading=f"Archive {source.path}{where} ({form}, {{total}} {count}, in archive order{{where}}):",
                        what=("members", "read a member by its path inside the archive"),
                        empty="The archive holds no members." if folder is None else "The folder is empty.",
                        closing=closing)


def _find(source: Source, request: ReadRequest, members: list[Member], form: str,
          stopped: str | None = None) -> Member | ReadResult:
    """The member `source.member` names (the last of that name, as zipfile takes it), or the listing
    of the folder it names; a ReadError for one that is not there or not to be read."""
    wanted = source.member
    found = next((m for m in reversed(members) if m.path == wanted and m.type != "folder"), None)
    if found is None:
        under = [m for m in members if m.path and m.path.startswith(wanted + "/")]
        if under or any(m.path == wanted for m in members):
            return _listing(source, request, under, form, stopped, folder=wanted)
        archive = _archive_name(source)
        outer = next((m for m in members if m.type == "file" and m.path and wanted.startswith(m.path + "/")), None)
        if outer is not None:
            raise ReadError("nested_archive", f"{request.path} leads inside {archive}/{outer.path}, a file in the "
                            "archive; archives inside archives are not opened. Read that file to see what it is, "
                            "or ask the user to extract the outer archive.")
        more = "" if stopped is None else " among the members looked at"
        raise ReadError("not_found", f"{archive} holds no member {wanted}{more}. Read {archive} to list its "
                        "members (their paths are what follows the archive's path).")
    if found.type != "file":
        what = "a device or pipe" if found.type == "special" else f"a {found.type}"
        target = f" to {_escaped(found.target)}" if found.target else ""
        raise ReadError("unsafe_member", f"{request.path} is {what}{target} inside its archive; links and devices in "
                        "archives are not followed. Read the member it names by its own path, if the archive "
                        "holds it.")
    if found.size > MAX_MEMBER_BYTES:
        raise _too_large(request, f"declares {found.size:,} bytes unpacked")
    return found


def _archive_name(source: Source) -> str:
    """The archive's path as the request gave it (its real path when that cannot be told)."""
    asked = source.name.rstrip("/")
    if source.member is None:
        return asked
    return asked[:-len(source.member) - 1] if asked.endswith("/" + source.member) else source.path


def _unpack(stream: BinaryIO, member: Member, request: ReadRequest) -> bytearray:
    """The member's bytes, a chunk at a time, refused past MAX_MEMBER_BYTES whatever its header
    said."""
    data = bytearray()
    while chunk := stream.read(UNPACK_CHUNK):
        data += chunk
        if len(data) > MAX_MEMBER_BYTES:
            raise _too_large(request, f"unpacks to more than {MAX_MEMBER_BYTES:,} bytes (its header says "
                             f"{member.size:,})")
        checkpoint()
    return data


def _too_large(request: ReadRequest, how: str) -> ReadError:
    return ReadError("file_too_large", f"{request.path} {how}, over the {MAX_MEMBER_BYTES:,}-byte limit for a "
                     "member read from inside an archive (it may be a decompression bomb). It is not unpacked; ask "
                     "the user to extract it if it is needed.")

