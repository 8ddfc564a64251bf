"""A real path (every link resolved, by realpath) looked up and opened with no link followed on it.

Between realpath and an open, a folder on the path can be swapped for a link to elsewhere; an open
by path would follow it. Here the path is refused instead: where Linux has openat2(2), in one call
that refuses any link (RESOLVE_NO_SYMLINKS); elsewhere, and to tell why a lookup failed, by a walk
from `/` that opens one folder at a time from the one before, each with O_NOFOLLOW.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import stat
import sys
from dataclasses import dataclass

# How the walk opens each folder on a real path: without following a link, and where the system has
# O_PATH without reading it (search permission is all a path needs, as in the kernel's own lookup).
_FOLDER_FLAGS = (getattr(os, "O_PATH", os.O_RDONLY) | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0))
# Whether a file can be opened and looked at from a folder's descriptor (POSIX); where it cannot
# (Windows), a real path is looked at and opened as it is.
_BY_DESCRIPTOR = {os.open, os.stat} <= os.supports_dir_fd
# How what a real path names is opened to be read: a link in its place is refused, and O_NONBLOCK
# keeps a FIFO put there from blocking the open (the caller's fstat then refuses it).
OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
# How a lookup opens what a real path names: as a place only, so that a device or FIFO is not opened
# (Linux; elsewhere the lookup is the walk's lstat).
_LOOKUP_FLAGS = getattr(os, "O_PATH", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)

# openat2(2), Linux 5.6 on: its number (the same on every architecture) and the resolve flag that
# refuses every link on the path, and the errors that say it cannot be called here (an older kernel,
# a sandbox that forbids it, a struct it does not know).
_SYS_OPENAT2 = 437
_RESOLVE_NO_SYMLINKS = 0x04
_AT_FDCWD = -100
_UNAVAILABLE = frozenset({errno.ENOSYS, errno.EPERM, errno.E2BIG})


class Swapped(OSError):
    """A component of a real path is a link where realpath found none: it was swapped since."""


@dataclass(frozen=True)
class Found:
    """What a lookup of a real path found there."""
    path: str  # the real path, or the regular file it leads on past
    st: os.stat_result | None  # its lstat; None: nothing (see `error`)
    member: str | None = None  # the rest of the path, past that regular file
    error: OSError | None = None  # why nothing was found


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def _libc_syscall():
    """libc's syscall(2), where this is Linux and it can be had; else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        call = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    call.restype = ctypes.c_long
    return call


_syscall = _libc_syscall()


def _openat2(real: str, flags: int) -> int | None:
    """openat2 of the real path with no link resolved on it: a descriptor, or None where it cannot
    be called (the walk does it then). OSError as os.open would raise: ELOOP for a link met."""
    global _syscall
    if _syscall is None:
        return None
    how = _OpenHow(flags, 0, _RESOLVE_NO_SYMLINKS)
    fd = _syscall(ctypes.c_long(_SYS_OPENAT2), ctypes.c_int(_AT_FDCWD), ctypes.c_char_p(os.fsencode(real)),
                  ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
    if fd >= 0:
        return fd
    code = ctypes.get_errno()
    if code == errno.ENOSYS:  # not in this kernel: not asked again
        _syscall = None
    if code in _UNAVAILABLE:
        return None
    raise OSError(code, os.strerror(code), real)


def open_real(real: str, flags: int = 0) -> int:
    """A descriptor of what the real path `real` names, opened with no link followed on the way or
    at the end, with `flags` added to OPEN_FLAGS. OSError as os.open would raise (ELOOP or Swapped
    for a link on the way, ELOOP or ENOTDIR for one at the end)."""
    fd = _openat2(real, OPEN_FLAGS | flags)
    if fd is not None:
        return fd
    if not _BY_DESCRIPTOR:
        return os.open(real, OPEN_FLAGS | flags)
    with _walk(real) as (folder, name, _, member):
        if member is not None:
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), real)
        return os.open(name, OPEN_FLAGS | flags, dir_fd=folder)


def find(real: str) -> Found:
    """What the real path `real` names: itself, or the regular file it leads on past (`/w/a.zip`
    of `/w/a.zip/docs/x`, the member `docs/x`), or the error saying there is nothing (Swapped: a
    link on the way). Nothing is opened but folders, and what is found as a place only."""
    if _LOOKUP_FLAGS & getattr(os, "O_PATH", 0):
        try:
            fd = _openat2(real, _LOOKUP_FLAGS)
        except OSError:  # the walk tells which component failed, and how
            fd = None
        if fd is not None:
            try:
                st = os.fstat(fd)
            finally:
                os.close(fd)
            if not stat.S_ISLNK(st.st_mode):  # a link at the end: a loop realpath left, or a swap
                return Found(real, st)
    try:
        if not _BY_DESCRIPTOR:
            return _find_by_path(real)
        with _walk(real) as (_, _, st, member):
            if member is None:
                return Found(real, st)
            return Found(real[:-len(member) - 1], st, member)
    except OSError as exc:
        return Found(real, None, error=exc)


def find_as_is(path: str) -> Found | None:
    """What `path` names when it is its own real path (absolute, normal, no link on the way or at
    its end), told by one openat2 call that refuses any link: realpath need not look at each of its
    folders. None where that call cannot tell (a link or nothing on the way, a path not normal, no
    openat2 here): realpath and `find` answer then."""
    if not _LOOKUP_FLAGS & getattr(os, "O_PATH", 0) or not os.path.isabs(path) or path.startswith("//") \
            or "\x00" in path or path != os.path.normpath(path):
        return None
    try:
        fd = _openat2(path, _LOOKUP_FLAGS)
    except OSError:
        return None
    if fd is None:
        return None
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return None if stat.S_ISLNK(st.st_mode) else Found(path, st)


def _find_by_path(real: str) -> Found:
    """find, where no folder can be opened as a descriptor: the real path and its parents looked
    at as they are."""
    try:
        return Found(real, os.stat(real, follow_symlinks=False))
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
            raise
        child, parent = real, os.path.dirname(real)
        while parent != child:
            try:
                st = os.stat(parent)
            except OSError:
                child, parent = parent, os.path.dirname(parent)
                continue
            if stat.S_ISREG(st.st_mode):
                return Found(parent, st, real[len(parent):].lstrip(os.sep).replace(os.sep, "/"))
            break
        raise


@contextlib.contextmanager
def _walk(real: str):
    """Yields (descriptor of the folder holding what the real path `real` names, its name there, its
    lstat, the rest past a regular file on the way or None), the folders opened one by one from `/`
    with no link followed. OSError as stat would raise; Swapped for a link on the way."""
    parts = [p for p in real.split(os.sep) if p] or [os.curdir]
    fd = os.open(os.sep, _FOLDER_FLAGS)
    try:
        for at, name in enumerate(parts[:-1]):
            try:
                inner = os.open(name, _FOLDER_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                    raise
                st = _not_link(name, fd)
                if not stat.S_ISREG(st.st_mode):
                    raise
                yield fd, name, st, "/".join(parts[at + 1:])
                return
            os.close(fd)
            fd = inner
        yield fd, parts[-1], _not_link(parts[-1], fd), None
    finally:
        os.close(fd)


def _not_link(name: str, folder: int) -> os.stat_result:
    """The lstat of `name` in the folder descriptor `folder`: Swapped if it is a link (but a loop of
    links, as realpath leaves one, is the ELOOP a stat gives)."""
    st = os.stat(name, dir_fd=folder, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        os.stat(name, dir_fd=folder)  # ELOOP for a loop
        raise Swapped(errno.ELOOP, "a link where the real path has none", name)
    return st
