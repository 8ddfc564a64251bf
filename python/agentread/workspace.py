"""Where a path really leads, and whether the agent may read it without asking the user.

Where a path leads is decided by realpath, against the workspace roots (themselves realpath'd, so a
workspace that is a symlink is not mistaken for outside). What is then looked at and opened is found
along that real path with no link followed on it (linkfree.py): a folder swapped for a link since
realpath looked is refused, never followed, and every later open of the file is checked to be the
very file vetted. Special files are refused from `stat` alone, never opened.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import functools
import os
import re
import stat
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

from agentread.linkfree import Found, Swapped, find, find_as_is, open_real
from agentread.result import ReadError

# Files that hold secrets: reading one needs the user's consent even inside the workspace. A pattern
# matches a path when it matches its last component, or its last few (`.ssh/*` matches every file
# under any `.ssh` folder, at any depth), without regard to case; see `sensitive_pattern`.
DEFAULT_SENSITIVE_PATTERNS = (
    ".env", ".env.*", "*.env", ".envrc",
    "*.pem", "*.key", "*.p12", "*.pfx", "*.keystore", "*.jks", "*.ppk", "*.kdbx",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "id_xmss*",
    ".netrc", "_netrc", ".pgpass", ".git-credentials", ".npmrc", ".pypirc", ".htpasswd", ".vault-token",
    "credentials", "credentials.json", "credentials.toml", "*.credentials", "service-account*.json",
    ".ssh/*", ".gnupg/*", ".aws/*", ".azure/*", ".kube/*", ".docker/*", ".password-store/*",
    ".config/gcloud/*", ".config/gh/*", ".terraform.d/credentials*",
)

# Secrets whatever the patterns say (a user's list replaces the defaults, not these): what a process
# was started with, its environment and its command line, as the kernel shows them.
ALWAYS_SENSITIVE_PATTERNS = ("/proc/*/environ", "/proc/*/cmdline")
# Expressions kept made, by the patterns they find: a workspace's combined one and each pattern's
# own, for several workspaces' lists (a client's settings and the defaults).
PATTERN_REGEXES = 256

# What an editor or a copy adds to a file's name, taken away before the patterns are matched: a
# copy of a secret holds the same secret (`.env~`, `.env.bak`, vim's `.id_rsa.swp`, emacs's
# `#.env#`). Trailing spaces and dots too: `.env ` looks like `.env` in a listing.
BACKUP_SUFFIXES = (".bak", ".backup", ".orig", ".old", ".save", ".sav", ".swp", ".swo", ".swn", ".tmp",
                   ".copy", ".prev", "~")

# Why a hard-linked file needs consent: its other names may be outside the workspace or secret, and
# nothing tells where they are.
HARD_LINK = "a hard link (st_nlink > 1)"

# A path longer than this is refused before touching the file system (PATH_MAX on Linux).
MAX_PATH_CHARS = 4096

# Why a read may need the user's approval: the error codes a read refused for lack of it answers.
OUTSIDE = "outside_workspace"
SENSITIVE = "sensitive_file"
CONSENT_REASONS = frozenset({OUTSIDE, SENSITIVE})


@dataclass(frozen=True)
class Refusal:
    """What would refuse a read of a path without the user's approval: the one rule every
    client asks."""
    path: str  # as asked
    real: str  # where it leads, symlinks resolved
    reasons: frozenset  # of CONSENT_REASONS
    pattern: str | None = None  # the sensitive pattern it matches, if one does; HARD_LINK for a hard link


@dataclass(frozen=True)
class Resolved:
    path: str  # the real path, symlinks resolved
    st: os.stat_result
    inside: bool  # within a workspace root
    # A path that leads on past a regular file (`bundle.zip/docs/readme.md`): `path` is that file,
    # and this the rest, which the engine reads as an archive's member (or refuses).
    member: str | None = None

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.st.st_mode)


class Workspace:
    def __init__(self, roots: list[str] | None = None, sensitive_patterns: list[str] | None = None):
        self.roots: list[str] = []
        self.set_roots(roots or [])
        self.sensitive_patterns = tuple(sensitive_patterns if sensitive_patterns is not None
                                        else DEFAULT_SENSITIVE_PATTERNS)

    def set_roots(self, roots: list[str]) -> None:
        self.roots = [os.path.realpath(r) for r in roots if r]

    def absolute(self, raw: str) -> str:
        """`raw` as an absolute path, a relative one taken from the first root; ReadError if it
        names no file."""
        path = _as_path(raw)
        if not os.path.isabs(path):
            base = self.roots[0] if self.roots else os.getcwd()
            path = os.path.join(base, path)
        return path

    def is_glob(self, raw: str) -> bool:
        """Whether `raw` is a glob to expand (many/glob.py): it has glob characters and names no
        file as it is."""
        if not any(c in raw for c in "*?["):
            return False
        try:
            return not os.path.lexists(self.absolute(raw))  # a file may hold "[" in its name
        except ReadError:  # an invalid path is read, and refused, as a path
            return False

    def refusal(self, raw: str) -> Refusal:
        """Why a read of `raw` needs the user's approval (no reasons: it does not). ReadError for a
        path that names no file (it is refused for that, whatever the user says)."""
        return self._vetted(raw)[0]

    def _vetted(self, raw: str) -> tuple[Refusal, Found]:
        """The refusal of `raw`, and what the walk of its real path found (what the refusal
        judged)."""
        path = self.absolute(raw)
        found = find_as_is(path)  # most paths hold no link: one call tells so
        if found is not None:
            real = path
        else:
            try:
                real = os.path.realpath(path)
            except OSError:  # a link it met was gone when it read it: swapped meanwhile
                raise _changed(raw) from None
            found = find(real)
        reasons = set() if self.contains(real) else {OUTSIDE}
        st = found.st if found.member is None else None
        pattern = None if st and stat.S_ISDIR(st.st_mode) else self.sensitive_pattern(path, real)
        if found.member is not None:  # a member of an archive: the archive's own name counts too, and its links
            pattern = pattern or self.sensitive_pattern(found.path, found.path)
            st = found.st
        if pattern is None and st is not None and stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            pattern = HARD_LINK
        if pattern is not None:
            reasons.add(SENSITIVE)
        return Refusal(raw, real, frozenset(reasons), pattern), found

    def resolve(self, raw: str, consent: frozenset = frozenset()) -> Resolved:
        """The real path behind `raw`, or a ReadError saying why it may not or cannot be read.
        `consent`: the reasons the user approved the read despite (CONSENT_REASONS)."""
        refusal, found = self._vetted(raw)
        refused = refusal.reasons - consent
        if OUTSIDE in refused:
            where = f"the workspace ({', '.join(self.roots)})" if self.roots else "any open workspace folder"
            # Where it leads is not said: the model has no consent to learn names outside.
            raise ReadError(OUTSIDE, f"{raw} leads outside {where}. The user must approve reading it: ask "
                            "them, or read a file inside the workspace.")
        if found.error is not None:
            raise _stat_error(raw, found.error)
        st = found.st
        if SENSITIVE in refused and not stat.S_ISDIR(st.st_mode):
            why = ("is a hard link: the same file has other names, which may be outside the workspace or "
                   "hold secrets," if refusal.pattern == HARD_LINK else "looks like a file holding secrets "
                   "(credentials, keys or environment settings),")
            raise ReadError(SENSITIVE, f"{raw} {why} so it is not read without the user's approval. Ask the "
                            "user to approve this read, or work without its contents.")
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            raise ReadError("special_file", f"{raw} is a {_file_type(st.st_mode)}, not a regular file; reading "
                            "it could block or never end, so it is refused. Read a regular file instead.")
        return Resolved(found.path, st, OUTSIDE not in refusal.reasons, found.member)

    def contains(self, real: str) -> bool:
        """Whether the real path `real` is a root or lies under one."""
        return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in self.roots)

    def relative(self, real: str) -> str | None:
        """`real` from the first root it lies under. Both are real paths: what follows the root is
        the answer (os.path.relpath normalises both again, a tenth of a small read)."""
        for root in self.roots:
            prefix = root.rstrip(os.sep) + os.sep
            if real.startswith(prefix):
                return real[len(prefix):]
        return None

    @property
    def sensitive_patterns(self) -> tuple[str, ...]:
        return self._sensitive_patterns

    @sensitive_patterns.setter
    def sensitive_patterns(self, patterns: tuple[str, ...]) -> None:
        # One regular expression for all of them: every read is checked, and an fnmatch call per
        # pattern and name cost a large share of a small read. A pattern matches from the start of
        # any component, past one leading dot (a hidden copy of a secret holds the same secret).
        # Each pattern's own expression, to name the one matched, is made when one is.
        self._sensitive_patterns = patterns
        self._every = (*patterns, *ALWAYS_SENSITIVE_PATTERNS)
        self._sensitive = _pattern_regex(*self._every)

    def sensitive_pattern(self, path: str, real: str) -> str | None:
        """The sensitive pattern the requested absolute path or the real path it leads to matches,
        if any: matched, without regard to case, against each as it is and with the marks of a copy
        (BACKUP_SUFFIXES, trailing spaces and dots) taken off each of its components."""
        spelled = {p.replace(os.sep, "/") for p in (path, real)}
        spelled.update([_unmarked(p) for p in spelled])
        if not any(self._sensitive.search(p) for p in spelled):
            return None
        return next(p for p in self._every if any(_pattern_regex(p).search(s) for s in spelled))


@functools.lru_cache(maxsize=PATTERN_REGEXES)
def _pattern_regex(*patterns: str) -> re.Pattern:
    """A regular expression finding any of `patterns` (fnmatch's, `*` crossing `/`) at the end of a
    path, in any case: one that is absolute or starts with `*` from the path's start, any other from
    the start of any of its components, past one leading dot."""
    def either(group: list[str]) -> str:
        return "|".join(fnmatch.translate(p) for p in group) or "(?!)"
    whole = [p for p in patterns if p.startswith(("/", "*"))]
    tail = [p for p in patterns if not p.startswith(("/", "*"))]
    return re.compile(rf"^(?:{either(whole)})|(?:^|/)\.?(?:{either(tail)})", re.IGNORECASE)


# What a copy or an editor adds to the end of a component (BACKUP_SUFFIXES, trailing spaces and
# dots), and emacs's `#name#`.
_MARKS = re.compile("(?:" + "|".join(re.escape(s) for s in (*BACKUP_SUFFIXES, " ", ".")) + r")+(?=/|\Z)",
                    re.IGNORECASE)
_AUTOSAVE = re.compile(r"(?<![^/])#([^/]+)#(?=/|\Z)")


def _unmarked(path: str) -> str:
    """`path` with what a copy or an editor adds to a name taken off each component."""
    return _MARKS.sub("", _AUTOSAVE.sub(r"\1", path) if "#" in path else path)


def _as_path(raw: str) -> str:
    if "\x00" in raw:
        raise ReadError("invalid_path", "the path contains a NUL byte, which no file name can hold. "
                        "Check the path and call again.")
    if len(raw) > MAX_PATH_CHARS:
        raise ReadError("invalid_path", f"the path is {len(raw):,} characters long, over the system limit of "
                        f"{MAX_PATH_CHARS}. Check the path and call again.")
    try:
        os.fsencode(raw)
    except UnicodeEncodeError:  # a lone UTF-16 surrogate, which JSON can carry
        raise ReadError("invalid_path", "the path holds a character no file name can (a lone surrogate). "
                        "Check the path and call again.") from None
    if raw.startswith("file://"):
        try:
            parsed = urlparse(raw)
        except ValueError:  # a bracket in the host part ("file://[x]/a"), read as a malformed IPv6 address
            raise ReadError("invalid_path", f"{raw} is not a valid file URI. Give a plain path, or a file:/// "
                            "URI of a local file.") from None
        if parsed.netloc not in ("", "localhost"):
            raise ReadError("invalid_path", f"{raw} names a file on another host ({parsed.netloc}); only local "
                            "files can be read.")
        raw = unquote(parsed.path)
        if "\x00" in raw:
            raise ReadError("invalid_path", "the URI decodes to a path with a NUL byte; no file has that name.")
    return os.path.expanduser(raw)


def _stat_error(raw: str, exc: OSError) -> ReadError:
    if isinstance(exc, Swapped):
        return _changed(raw)
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return ReadError("not_found", f"{raw} does not exist. Check the spelling, or read the parent "
                         "directory to see what is there.")
    if exc.errno == errno.ELOOP:
        return ReadError("invalid_path", f"{raw} is a symbolic link loop and leads to no file.")
    if exc.errno == errno.EACCES:
        return ReadError("permission_denied", f"{raw} cannot be read: permission denied.")
    if exc.errno == errno.ENAMETOOLONG:
        return ReadError("invalid_path", f"{raw} has a name too long for the file system.")
    return ReadError("invalid_path", f"{raw} cannot be accessed: {exc.strerror or exc}.")


def _file_type(mode: int) -> str:
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISFIFO(mode):
        return "named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"


def file_version(st: os.stat_result) -> tuple:
    """What tells one content of a file from another without reading it, the key of every cache
    of what was read from a file: device, inode, size, mtime, and the change time, which every
    write sets (a rewrite in place that keeps the size and sets the mtime back, as `cp -p` and
    `touch -r` do, keeps the rest)."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def path_version(path: str) -> tuple | None:
    """The file_version of the regular file `path` leads to; None for anything else."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return file_version(st) if stat.S_ISREG(st.st_mode) else None


def _changed(path: str) -> ReadError:
    return ReadError("file_changed", f"{path} was replaced while it was being read. Call again.")


def _open_checked(resolved: Resolved, flags: int = 0) -> int:
    """A descriptor of the resolved file or folder, opened by the walk of its real path and checked
    to be the very one resolve vetted (same device, inode and type): nothing swapped in since."""
    try:
        fd = open_real(resolved.path, flags)
    except OSError as exc:
        # A folder on the way that is now a file, or a link at the end (O_NOFOLLOW): replaced.
        raise (_changed(resolved.path) if exc.errno in (errno.ENOTDIR, errno.ELOOP)
               else _stat_error(resolved.path, exc)) from None
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino, stat.S_IFMT(st.st_mode)) != (resolved.st.st_dev, resolved.st.st_ino,
                                                           stat.S_IFMT(resolved.st.st_mode)):
        os.close(fd)
        raise _changed(resolved.path)
    return fd


def open_verified(resolved: Resolved):
    """The resolved regular file, open to read (see _open_checked)."""
    if not stat.S_ISREG(resolved.st.st_mode):
        raise _changed(resolved.path)
    fd = _open_checked(resolved)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


@contextlib.contextmanager
def open_folder(resolved: Resolved):
    """A descriptor of the resolved folder, to list with os.scandir (see _open_checked)."""
    fd = _open_checked(resolved, os.O_DIRECTORY)
    try:
        yield fd
    finally:
        os.close(fd)
