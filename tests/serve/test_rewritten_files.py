"""A file rewritten in place, keeping its inode and size, with its mtime set back (as `cp -p`,
`rsync --inplace -t` and `touch -r` leave it), is read anew through the server: what a reader keeps
between reads (an archive's records and members, a text file's line positions) is never answered
for its new content."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

from rpc import body_of

# Lines of the big text file: enough that its lines are far past the quick path's size and that a
# read deep into it jumps by the line positions kept from the read before.
TEXT_LINES = 300_000
DEEP_LINE = 250_000
WINDOW = 5

# A stored (uncompressed) member keeps the archive's size when its text keeps its length.
MEMBER = "docs/notes.txt"


def rewrite_in_place(path: Path, data: bytes) -> None:
    """`data` written over the file's bytes (same inode), its times set back to what they were."""
    before = path.stat()
    assert len(data) == before.st_size
    with open(path, "r+b") as f:
        f.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)


def zipped(text: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(zipfile.ZipInfo(MEMBER, date_time=(2020, 1, 1, 0, 0, 0)), text)
    return out.getvalue()


def test_a_zip_member_rewritten_in_place_is_read_anew(server, tmp_path):
    bundle = tmp_path / "bundle.zip"
    bundle.write_bytes(zipped("the old text of the notes\n"))
    first = server.read(path=f"bundle.zip/{MEMBER}")
    assert "the old text" in body_of(first)
    assert "docs/notes.txt" in body_of(server.read(path="bundle.zip"))  # its records kept too
    rewrite_in_place(bundle, zipped("the NEW text of the notes\n"))
    again = server.read(path=f"bundle.zip/{MEMBER}")
    assert "the NEW text" in body_of(again) and "old" not in body_of(again)
    assert again["version"] != first["version"]


def lines_before() -> list[bytes]:
    return [b"L%06d:%s\n" % (n, b"a" * (n % 5)) for n in range(1, TEXT_LINES + 1)]


def lines_after(before: list[bytes]) -> list[bytes]:
    """The same bytes in all, the same number of lines, each line from the second on moved: the
    first line becomes two, 6 bytes shorter in all; two lines near the end become one, 6 bytes
    longer."""
    after = [b"X\n", b"Y\n", *before[1:]]
    merged = after[-3].rstrip(b"\n") + b"#" + after[-2].rstrip(b"\n") + b"######\n"
    after[-3:-1] = [merged]
    assert len(after) == len(before) and sum(map(len, after)) == sum(map(len, before))
    return after


def window_lines(result: dict) -> list[str]:
    return [line for line in body_of(result).split("\n") if line[:6].strip().isdigit()]


def test_a_big_text_file_rewritten_in_place_shows_its_new_lines_by_their_numbers(server, tmp_path):
    before = lines_before()
    log = tmp_path / "big.log"
    log.write_bytes(b"".join(before))
    first = server.read(path="big.log", offset=DEEP_LINE, limit=WINDOW)
    assert window_lines(first) == [f"{n:6d}\t{before[n - 1].decode().rstrip()}"
                                   for n in range(DEEP_LINE, DEEP_LINE + WINDOW)]
    after = lines_after(before)
    rewrite_in_place(log, b"".join(after))
    again = server.read(path="big.log", offset=DEEP_LINE, limit=WINDOW)
    assert window_lines(again) == [f"{n:6d}\t{after[n - 1].decode().rstrip()}"
                                   for n in range(DEEP_LINE, DEEP_LINE + WINDOW)]
    assert again["totalLines"] == TEXT_LINES
