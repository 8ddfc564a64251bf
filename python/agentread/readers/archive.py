"""Archives: zip, and tar plain or compressed (gzip, bzip2, xz), read with the standard library's
zipfile and tarfile, never extracted to disk.

The archive's path lists its members as a directory listing pages its entries, in the archive's
order, with sizes and dates. A path that goes on inside it (`bundle.zip/docs/readme.md`) reads one
member: its bytes, unpacked in bounded chunks into memory, are read as their own kind through the
reader seam (engine.read_member); a folder inside it lists what is under that folder. Members whose
names climb out (`..`) or are absolute, links, devices and archives inside the archive are listed
but never read. What the reads of one version of an archive need again, its members' records and
the members last unpacked, is kept between them (CACHE).
"""

from __future__ import annotations

import io
import lzma
import re
import stat
import tarfile
import threading
import zipfile
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from functools import cached_property
from typing import Any, BinaryIO

from agentread.cancel import checkpoint
from agentread.readers import Source
from agentread.readers.directory import MAX_DIR_SCAN, human_size, page_listing
from agentread.readers.fields import check_fields
from agentread.request import ReadRequest
from agentread.result import ReadError, ReadResult
from agentread.versions import content_version, mtime_text

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


# Archives whose members' records are kept between reads, keyed by path and version, so that
# paging a listing with `next` or reading one member after another reads the archive's directory
# once. Eight covers the archives one task works with at a time.
ARCHIVE_CACHE_ARCHIVES = 8
# ... with at most this many bytes of members' records between them, as RECORD_BYTES and the
# strings a record holds count them (a hostile tar's member can carry megabytes of pax headers): a
# full listing (MAX_DIR_SCAN members) of ordinary records fits; larger archives are read again on
# each call.
ARCHIVE_CACHE_RECORD_BYTES = 256 << 20
# What a member's record takes besides its strings (its ZipInfo or TarInfo, measured).
RECORD_BYTES = 1200
# Unpacked members kept between reads, at most this many bytes between them: two of the largest a
# read unpacks, so paging through a member with `next` (or back and forth between two) unpacks it
# once. A member over it is not kept.
MEMBER_CACHE_BYTES = 2 * MAX_MEMBER_BYTES


@dataclass(frozen=True)
class Member:
    name: str  # as the archive stores it
    type: str  # file | folder | symbolic link | hard link | special
    size: int
    stamp: tuple | float  # a zip's local date and time (ZipInfo.date_time), a tar's mtime
    target: str = ""  # a link's target, as stored
    encrypted: bool = False
    entry: Any = None  # the ZipInfo or TarInfo

    # The path and the date are worked out when first asked for: a listing shows a page of members,
    # and a lookup asks for paths only.
    @cached_property
    def path(self) -> str | None:
        """What a read names after the archive's path; None: a name not safe to follow."""
        return _safe_path(self.name)

    @cached_property
    def date(self) -> str:
        if isinstance(self.stamp, tuple):
            return "{:04d}-{:02d}-{:02d} {:02d}:{:02d}".format(*self.stamp[:5])
        try:
            return datetime.fromtimestamp(self.stamp, timezone.utc).strftime("%Y-%m-%d %H:%M")
        except (OverflowError, OSError, ValueError):
            return "date unknown"

    @cached_property
    def iso_date(self) -> str | None:
        """The date as a result's `mtime` gives it: ISO 8601, UTC for a tar's; a zip's as stored, in
        the local time of whoever made the archive (a zip records no zone); None when unknown."""
        if isinstance(self.stamp, tuple):
            return "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}".format(*self.stamp[:6])
        try:
            return mtime_text(self.stamp)
        except (OverflowError, OSError, ValueError):
            return None

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


@dataclass(frozen=True)
class _Index:
    """An archive's members as far as they were walked, in archive order."""

    members: list[Member]
    # "end": every member is there; "limit": a compressed tar's walk stopped at MAX_TAR_SCAN_BYTES;
    # "more": members may follow (a tar's walk stopped where its read had what it needed)
    end: str


class _Cache:
    """Members' records and unpacked members of recently read archives, keyed by the archive's
    cache_key (path, version): a changed archive has a new key, and is read anew."""

    def __init__(self, archives: int, record_bytes: int, max_bytes: int) -> None:
        self.archives, self.record_bytes, self.max_bytes = archives, record_bytes, max_bytes
        self._indexes: OrderedDict[tuple, tuple[_Index, int]] = OrderedDict()  # each with its records' bytes
        self._data: OrderedDict[tuple, bytes] = OrderedDict()  # by (archive's key, member's path)
        self.held_records = self.held_bytes = 0
        self._lock = threading.Lock()

    def index(self, key: tuple) -> _Index | None:
        with self._lock:
            found = self._indexes.pop(key, None)
            if found is not None:
                self._indexes[key] = found
            return found[0] if found is not None else None

    def keep_index(self, key: tuple, index: _Index) -> None:
        size = sum(_record_bytes(member) for member in index.members)
        if size > self.record_bytes:
            return
        with self._lock:
            old = self._indexes.pop(key, None)
            if old is not None and index.end == "more" and (old[0].end != "more" or
                                                            len(old[0].members) > len(index.members)):
                index, size = old  # another read walked further meanwhile
            self.held_records -= old[1] if old else 0
            for cached in [cached for cached in self._indexes if cached[0] == key[0]]:  # older versions
                self.held_records -= self._indexes.pop(cached)[1]
            self._indexes[key] = (index, size)
            self.held_records += size
            while len(self._indexes) > self.archives or self.held_records > self.record_bytes:
                self.held_records -= self._indexes.popitem(last=False)[1][1]

    def data(self, key: tuple, member: str) -> bytes | None:
        with self._lock:
            found = self._data.pop((key, member), None)
            if found is not None:
                self._data[key, member] = found
            return found

    def keep_data(self, key: tuple, member: str, data: bytes) -> None:
        if len(data) > self.max_bytes:
            return
        with self._lock:
            old = self._data.pop((key, member), None)
            self.held_bytes -= len(old) if old is not None else 0
            for cached in [cached for cached in self._data if cached[0][0] == key[0] and cached[0] != key]:
                self.held_bytes -= len(self._data.pop(cached))  # members of the archive's older versions
            self._data[key, member] = data
            self.held_bytes += len(data)
            while self.held_bytes > self.max_bytes:
                self.held_bytes -= len(self._data.popitem(last=False)[1])


CACHE = _Cache(ARCHIVE_CACHE_ARCHIVES, ARCHIVE_CACHE_RECORD_BYTES, MEMBER_CACHE_BYTES)


def _record_bytes(member: Member) -> int:
    """About what a member's record holds in memory: RECORD_BYTES and its strings (a tar's pax
    headers, a zip's extra field and comment)."""
    entry = member.entry
    strings = len(member.name) + len(member.target)
    if isinstance(entry, tarfile.TarInfo):
        strings += sum(len(key) + len(value) for key, value in entry.pax_headers.items())
    elif isinstance(entry, zipfile.ZipInfo):
        strings += len(entry.extra) + len(entry.comment)
    return RECORD_BYTES + strings


def read(source: Source, request: ReadRequest) -> ReadResult:
    """The reader seam's archive reader: the listing, or the member `source.member` names."""
    found = _guarded(lambda: _listing_or_member(source, request), request)
    if isinstance(found, ReadResult):
        return found
    member, data = found
    entry = member.entry
    where = entry.CRC if isinstance(entry, zipfile.ZipInfo) else entry.offset_data
    # A large member's version is of what its record says of it (size, date, a zip's CRC-32, a
    # tar's place) and samples of its bytes.
    return read_inside(source, request, member.path, data, f"{member.size}:{member.stamp}:{where}".encode(),
                       member.iso_date)


def read_inside(source: Source, request: ReadRequest, inner: str, data: bytes, identity: bytes,
                date: str | None) -> ReadResult:
    """A file held inside `source` (an archive's member, a mail's attachment) at path `inner`,
    its bytes `data` in memory, read by the reader of its kind, with its own version, size and
    date (`identity`: what names it when it is too large to hash whole, versions.py)."""
    from agentread.engine import read_member  # the engine imports the readers' table: imported when used

    path = f"{source.path}/{inner}"
    result = read_member(replace(source, path=path, stream=io.BytesIO(data), size=len(data), member=None,
                                 cache_key=(path, *source.cache_key[1:]), limit=MAX_MEMBER_BYTES), request)
    if not result.is_error:  # the member's own version, size and date, not the archive's
        result.version = content_version(io.BytesIO(data), len(data), identity, path)
        result.size, result.mtime = len(data), date
    return result


def search(source: Source, request: ReadRequest, matcher: object) -> None:
    """The reader seam's search of an archive's own path: refused, saying how to search a member."""
    name = _archive_name(source)
    with _Opened(source) as opened:
        members = _guarded(lambda: _listed(opened)[0], request)
    example = _example(members)
    raise ReadError("find_unsupported", f"{name} is an archive ({_form(source)}); find searches one member at a "
                    f"time. Search a member by its path inside the archive"
                    f"{f', e.g. {name}/{example}' if example else ''}, or read {name} first to list its members.")


def _guarded(call, request: ReadRequest):
    try:
        return call()
    except DAMAGED as exc:
        raise ReadError("damaged_archive", f"{request.path} could not be read as an archive ({type(exc).__name__}: "
                        f"{str(exc)[:200]}). It may be damaged or use a feature the reader does not support; "
                        "ask the user to extract it.") from None


def _form(source: Source) -> str:
    return TAR_FORMS.get(source.description, "zip")


class _Opened:
    """The archive as zipfile or tarfile opens it, opened when a read first needs it and at most
    once a read: a tar walked to a member is then read on from there."""

    def __init__(self, source: Source) -> None:
        self.source, self.tar = source, source.description in TAR_MODES
        self._archive: zipfile.ZipFile | tarfile.TarFile | None = None

    def archive(self) -> Any:
        if self._archive is None:
            self.source.stream.seek(0)
            self._archive = (tarfile.open(fileobj=self.source.stream, mode=TAR_MODES[self.source.description])
                             if self.tar else zipfile.ZipFile(self.source.stream))
        return self._archive

    def __enter__(self) -> _Opened:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._archive is not None:
            self._archive.close()


def _listing_or_member(source: Source, request: ReadRequest) -> ReadResult | tuple[Member, bytes]:
    with _Opened(source) as opened:
        return _listing_or_unpacked(opened, request)


def _listing_or_unpacked(opened: _Opened, request: ReadRequest) -> ReadResult | tuple[Member, bytes]:
    source, tar = opened.source, opened.tar
    if source.member is None:
        return _listing(source, request, *_listed(opened))
    found = _find(source, request, *(_tar_lookup(opened) if tar else (_zip_index(opened).members, None)))
    if isinstance(found, ReadResult):
        return found
    if found.encrypted:
        raise ReadError("encrypted_archive", f"{request.path} is encrypted in its archive and needs a password; "
                        "passwords cannot be passed to this tool. Ask the user for the file itself.")
    data = CACHE.data(source.cache_key, found.path)
    if data is None:
        data = (_unpack_tar if tar else _unpack_zip)(opened, found, request)
        CACHE.keep_data(source.cache_key, found.path, data)
    return found, data


def _listed(opened: _Opened) -> tuple[list[Member], str | None]:
    """The members an archive's listing shows, and why they are not all there are (None: they
    are)."""
    if not opened.tar:
        return _zip_index(opened).members, None
    index = CACHE.index(opened.source.cache_key)
    listed = index and _tar_listed(index)
    if not listed:
        listed = _tar_listed(_walk_tar(opened, lambda members: len(members) > MAX_DIR_SCAN))
    return listed


def _zip_index(opened: _Opened) -> _Index:
    index = CACHE.index(opened.source.cache_key)
    if index is None:
        index = _Index([_zip_member(info) for info in opened.archive().infolist()], "end")
        CACHE.keep_index(opened.source.cache_key, index)
    return index


def _zip_member(info: zipfile.ZipInfo) -> Member:
    mode = info.external_attr >> 16
    link = info.create_system == 3 and stat.S_ISLNK(mode)  # 3: made on Unix, whose mode bits it keeps
    kind = "folder" if info.is_dir() else "symbolic link" if link else "file"
    return Member(info.filename, kind, info.file_size, info.date_time, encrypted=bool(info.flag_bits & 0x1),
                  entry=info)


def _unpack_zip(opened: _Opened, member: Member, request: ReadRequest) -> bytes:
    # A ZipInfo read from this version of the archive, in an earlier read or this one, names the
    # member's place in it.
    with opened.archive().open(member.entry) as stream:
        return _unpack(stream, member, request)


_COUNT_STOP = ("The listing stops at the first {:,} members of this archive (a tar is read from its start). Read a "
               "member by its path inside the archive.")
_LIMIT_STOP = (f"The listing stops after the first {MAX_TAR_SCAN_BYTES >> 30} GB unpacked of this compressed "
               "archive. Read a member by its path inside the archive.")


def _tar_listed(index: _Index) -> tuple[list[Member], str | None] | None:
    """A tar's listing from what a walk found; None: walk further."""
    if len(index.members) > MAX_DIR_SCAN:
        return index.members[:MAX_DIR_SCAN], _COUNT_STOP.format(MAX_DIR_SCAN)
    if index.end == "more":
        return None
    return index.members, _LIMIT_STOP if index.end == "limit" else None


def _tar_lookup(opened: _Opened) -> tuple[list[Member], str | None]:
    """The members a tar is walked through to find `source.member` (the first of that name, or all
    for a folder), and why not all were looked at (None: they were)."""
    wanted = opened.source.member
    index = CACHE.index(opened.source.cache_key)
    found = index and _tar_found(index, wanted)
    if not found:
        found = _tar_found(_walk_tar(opened, lambda members: members[-1].path == wanted
                                     and members[-1].type != "folder"), wanted)
    return found


def _tar_found(index: _Index, wanted: str) -> tuple[list[Member], str | None] | None:
    at = next((n for n, m in enumerate(index.members) if m.path == wanted and m.type != "folder"), None)
    if at is not None:
        return index.members[:at + 1], None
    if index.end == "more":
        return None  # a folder's members follow it, and a member may follow those walked
    return index.members, _LIMIT_STOP if index.end == "limit" else None


def _walk_tar(opened: _Opened, enough) -> _Index:
    """A tar's members from its start until `enough(members walked)`, its end, or
    MAX_TAR_SCAN_BYTES unpacked in a compressed one; kept for the next read."""
    compressed = opened.source.description != "application/x-tar"
    members, end, archive = [], "end", opened.archive()
    while (entry := archive.next()) is not None:
        members.append(_tar_member(entry))
        if len(members) % 4096 == 0:
            checkpoint()
        if compressed and entry.offset_data + entry.size > MAX_TAR_SCAN_BYTES:
            end = "limit"
            break
        if enough(members):
            end = "more"
            break
    index = _Index(members, end)
    CACHE.keep_index(opened.source.cache_key, index)
    return index


def _tar_member(entry: tarfile.TarInfo) -> Member:
    kind = ("folder" if entry.isdir() else "file" if entry.isreg() else "symbolic link" if entry.issym()
            else "hard link" if entry.islnk() else "special")
    return Member(entry.name, kind, entry.size, entry.mtime, target=entry.linkname, entry=entry)


def _unpack_tar(opened: _Opened, member: Member, request: ReadRequest) -> bytes:
    # A TarInfo read from this version of the archive gives the member's offset: tarfile goes there
    # without reading the headers before it (from where this read's walk stopped, if it walked).
    return _unpack(opened.archive().extractfile(member.entry), member, request)


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


def _listing(source: Source, request: ReadRequest, members: list[Member], stopped: str | None = None,
             folder: str | None = None) -> ReadResult:
    check_fields("archive", request.path, request)  # a member is checked by its own kind's row
    name = _archive_name(source)
    where = f", folder {folder}/" if folder else ""
    example = _example(members)
    closing = (f"[Read a member by its path inside the archive, e.g. {name}/{example}.]" if example else "")
    count = ("member" if len(members) == 1 and stopped is None else "members") + ("" if folder is None else " in it")
    return page_listing(request, "archive", source.path, _Lines(members), stopped,
                        heading=f"Archive {source.path}{where} ({_form(source)}, {{total}} {count}, in archive "
                                "order{where}):",
                        what=("member", "members", "read a member by its path inside the archive"),
                        empty="The archive holds no members." if folder is None else "The folder is empty.",
                        closing=closing)


class _Lines(Sequence[str]):
    """The listing's lines, each made when the page it is on is shown."""

    def __init__(self, members: list[Member]) -> None:
        self.members = members

    def __len__(self) -> int:
        return len(self.members)

    def __getitem__(self, at):
        if isinstance(at, slice):
            return [member.line() for member in self.members[at]]
        return self.members[at].line()


def _example(members: list[Member]) -> str | None:
    """A member's path to show how one is read: the first file's that can be read."""
    return next((m.path for m in members if m.type == "file" and m.path), None)


def _find(source: Source, request: ReadRequest, members: list[Member],
          stopped: str | None = None) -> Member | ReadResult:
    """The member `source.member` names (the last of that name, as zipfile takes it), or the listing
    of the folder it names; a ReadError for one that is not there or not to be read."""
    wanted = source.member
    found = next((m for m in reversed(members) if m.path == wanted and m.type != "folder"), None)
    if found is None:
        under = [m for m in members if m.path and m.path.startswith(wanted + "/")]
        archive = _archive_name(source)
        if under or any(m.path == wanted for m in members):
            if request.find is not None:
                example = _example(under)
                raise ReadError("find_in_directory", f"{request.path} is a folder inside {archive}; find searches "
                                "one member at a time. Search a member by its path"
                                f"{f', e.g. {archive}/{example}' if example else ''}, or read {request.path} to "
                                "list its members.")
            return _listing(source, request, under, stopped, folder=wanted)
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


def _unpack(stream: BinaryIO, member: Member, request: ReadRequest) -> bytes:
    """The member's bytes, a chunk at a time, refused past MAX_MEMBER_BYTES whatever its header
    said."""
    chunks, size = [], 0
    while chunk := stream.read(UNPACK_CHUNK):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_MEMBER_BYTES:
            raise _too_large(request, f"unpacks to more than {MAX_MEMBER_BYTES:,} bytes (its header says "
                             f"{member.size:,})")
        checkpoint()
    return b"".join(chunks)


def _too_large(request: ReadRequest, how: str) -> ReadError:
    return ReadError("file_too_large", f"{request.path} {how}, over the {MAX_MEMBER_BYTES:,}-byte limit for a "
                     "member read from inside an archive (it may be a decompression bomb). It is not unpacked; ask "
                     "the user to extract it if it is needed.")

