"""Globs of a read of many files: a bounded walk of the file system that does not loop through
links, sorted so that a walk cut short is the same each time, inside the workspace only: a glob is
never approved, so it looks at nothing a read outside the workspace would need approval for (a
folder there is not opened, a link leading there is not followed), and says only how many of its
steps led there."""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field

from agentread.cancel import checkpoint
from agentread.linkfree import open_real
from agentread.result import ReadError
from agentread.workspace import Workspace

# Matches of one glob looked at: a `**` over a huge tree (node_modules) must answer quickly; past
# this the reply says the listing stopped.
MAX_GLOB_MATCHES = 10_000
# Folders one glob's walk opens, for the same reason: a `**` over node_modules stops here and says
# so. And how deep it goes: each level is a Python call, and the interpreter allows 1,000.
MAX_GLOB_DIRS = 10_000
MAX_GLOB_DEPTH = 200
# Entries of one folder between two cancellation checks: a folder of a million files must still
# stop when asked.
SCAN_CHECK_EVERY = 4096



@dataclass(frozen=True)
class _Entry:
    """One entry of a folder the walk listed, looked at while the folder was open."""
    name: str
    is_dir: bool  # a folder, or a link to one
    is_link: bool
    # Where it lies, from the real path of the folder listed: a match is judged by the folder it was
    # listed from, not by where its name leads once that folder has changed.
    real: str


@dataclass
class _Walk:
    """One glob's walk over the file system, by os.scandir: what it matched and what it passed by. A
    `**` does not enter links to folders (a link back into its own folder would loop forever); a
    link matched by a plain wildcard is followed, the pattern's depth bounding it."""
    base: str  # what a relative pattern is taken from
    workspace: Workspace  # whose roots the walk keeps inside
    matches: list[str] = field(default_factory=list)  # as the pattern spells them
    outside: set[str] = field(default_factory=set)  # steps (links, `..`, a folder named) leading out of the roots
    reals: dict[str, str] = field(default_factory=dict)  # where the matches a listing gave lie (_Entry.real)
    dirs: int = 0  # folders opened
    links: int = 0  # links to folders a `**` passed by
    stopped: bool = False  # a cap was reached
    last: tuple[str, list[_Entry]] | None = None  # the folder scanned last: `**` looks at it twice

    def match(self, folder: str, parts: list[str]) -> None:
        """The paths under `folder` that `parts` (the pattern's components still to match) name."""
        part, rest = parts[0], parts[1:]
        if self.stopped:
            return
        if not _magic(part):
            name = os.path.join(folder, part)
            if (part == os.pardir or os.path.islink(os.path.join(self.base, name))) and self.leads_out(name):
                return
            if rest and os.path.isdir(os.path.join(self.base, name)):
                self.match(name, rest)
            elif not rest and os.path.lexists(os.path.join(self.base, name)):
                self.add(name)
            return
        entries = self.scan(folder)
        if part == "**":  # no folder, then each folder below, recursively
            if rest:
                self.match(folder, rest)
            else:
                for entry in entries:
                    if not entry.name.startswith(".") and self.within(folder, entry) and not entry.is_dir:
                        self.add(os.path.join(folder, entry.name), entry.real)
            for entry in entries:
                if entry.name.startswith(".") or not self.within(folder, entry) or not entry.is_dir:
                    continue
                if entry.is_link:
                    self.links += 1
                else:
                    self.match(os.path.join(folder, entry.name), parts)
            return
        pattern = re.compile(fnmatch.translate(part))
        for entry in entries:
            if ((entry.name.startswith(".") and not part.startswith(".")) or not pattern.match(entry.name)
                    or not self.within(folder, entry)):
                continue
            if rest and entry.is_dir:
                self.match(os.path.join(folder, entry.name), rest)
            elif not rest:
                self.add(os.path.join(folder, entry.name), entry.real)

    def leads_out(self, name: str) -> bool:
        """Whether `name` leads outside the roots (then it is counted, and nothing past it is
        looked at: not even whether it exists)."""
        if name in self.outside:
            return True
        try:
            real = os.path.realpath(os.path.join(self.base, name) or os.curdir)
        except OSError:  # a link on the way renamed or removed as it was resolved: nothing there to walk
            return True
        if self.workspace.contains(real):
            return False
        self.outside.add(name)
        return True

    def within(self, folder: str, entry: _Entry) -> bool:
        """Whether the walk may look at what `entry` of `folder` (a folder inside the roots) leads
        to: anything but a link leading outside them."""
        return not entry.is_link or not self.leads_out(os.path.join(folder, entry.name))

    def scan(self, folder: str) -> list[_Entry]:
        """The entries of `folder`, sorted (so that a walk cut short is the same each time)."""
        if self.last is not None and self.last[0] == folder:
            return self.last[1]
        if self.dirs >= MAX_GLOB_DIRS or folder.count(os.sep) >= MAX_GLOB_DEPTH:
            self.stopped = True
            return []
        self.dirs += 1
        checkpoint()
        entries = []
        try:
            # Listed from the folder its real path names, opened with no link followed: a folder
            # swapped for a link since realpath looked is not listed, nor what the link leads to.
            real = os.path.realpath(os.path.join(self.base, folder) or ".")
            fd = open_real(real, os.O_DIRECTORY)
            try:
                with os.scandir(fd) as it:
                    for entry in it:
                        entries.append(_entry(entry, real))
                        if len(entries) % SCAN_CHECK_EVERY == 0:
                            checkpoint()
            finally:
                os.close(fd)
        except OSError:  # unreadable, gone or swapped: nothing matches in it
            entries = []
        self.last = (folder, sorted(entries, key=lambda e: e.name))
        return self.last[1]

    def add(self, name: str, real: str | None = None) -> None:
        """A match: `real` where a listing found it, None for a name the pattern spells."""
        self.matches.append(name)
        if real is not None:
            self.reals[name] = real
        if len(self.matches) >= MAX_GLOB_MATCHES:
            self.stopped = True


def _magic(part: str) -> bool:
    return any(c in part for c in "*?[")


def _entry(entry: os.DirEntry, folder: str) -> _Entry:
    """What the walk needs of an entry of the real folder `folder`, looked at while it is open (an
    entry of a listing by descriptor looks itself up in that folder)."""
    is_link = entry.is_symlink()
    real = os.path.join(folder, entry.name)
    return _Entry(entry.name, _is_dir(entry), is_link, os.path.realpath(real) if is_link else real)


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def expand_glob(workspace, pattern: str, notes: list[str]) -> list[str]:
    """The regular files `pattern` matches inside the roots, sorted, by the path as the pattern
    spells it (from the first root when relative). Matches that lead outside the roots (through a
    link) are left out and counted."""
    spelled = os.path.expanduser(pattern)
    absolute = os.path.isabs(spelled)
    parts = [p for p in spelled.split(os.sep) if p and p != "."]
    parts = [p for i, p in enumerate(parts) if not (p == "**" and i and parts[i - 1] == "**")]  # `**/**` is `**`
    literal = next(i for i, p in enumerate(parts) if _magic(p) or i == len(parts) - 1)
    walk = _Walk(base="" if absolute else workspace.absolute("."), workspace=workspace)
    start = os.path.join(os.sep if absolute else "", *parts[:literal])
    if not walk.leads_out(start):
        walk.match(start, parts[literal:])
    if len(walk.matches) >= MAX_GLOB_MATCHES:
        notes.append(f"`{pattern}` matched {MAX_GLOB_MATCHES:,} paths, where the walk stopped; later ones were not "
                     "looked at. Narrow the glob.")
    elif walk.stopped:
        notes.append(f"`{pattern}`: the walk stopped after {walk.dirs:,} folders (it opens at most "
                     f"{MAX_GLOB_DIRS:,}, {MAX_GLOB_DEPTH} deep); files past them were not looked at. Narrow the glob.")
    if walk.links:
        notes.append(f"`{pattern}`: `**` passed by {walk.links:,} links to folders without entering them (a link "
                     "can lead back into its own folder). To glob through one, name it: `link/**/*.py`.")
    files = []
    for name in walk.matches:
        real = walk.reals.get(name) or real_path(workspace, name)
        if not workspace.contains(real):  # changed since the walk looked
            walk.outside.add(name)
        elif os.path.isfile(real):
            files.append(name)
    if walk.outside:
        notes.append(f"`{pattern}`: {len(walk.outside):,} of the paths it reaches lead outside the workspace (a "
                     "folder it names, `..` or a link); a glob neither looks nor reads there. To read a file outside "
                     "the workspace, name it as a path: the user is asked.")
    return sorted(files)


def real_path(workspace, path: str) -> str:
    try:
        return os.path.realpath(workspace.absolute(path))
    except (ReadError, ValueError, OSError):  # an invalid path, or one changing: its read reports it
        return path
