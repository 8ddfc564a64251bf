"""Archives through the real server over stdio, the CLI and the MCP server: zip and tar (plain,
gzip, bzip2, xz) built here with zipfile and tarfile, listed like a directory and read member by
member, and hostile ones (bombs, lying headers, climbing and absolute names, links, a very large
member count, archives inside archives)."""

from __future__ import annotations

import base64
import io
import json
import struct
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from agentread.engine import Engine
from agentread.limits import MAX_DIR_ENTRIES, MAX_OUTPUT_BYTES
from agentread.readers import archive
from agentread.readers.archive import MAX_MEMBER_BYTES
from agentread.readers.directory import MAX_DIR_SCAN
from agentread.request import parse_request
from agentread.workspace import Workspace
from builders import build_pdf, code, notebook, png_b64, stream
from rpc import ServerProcess, body_of, serving

README = "# Bundle\n\nThe first paragraph.\nThe second line.\n"
DATE = (2024, 5, 1, 12, 30, 0)
TAR_MTIME = 1714566600  # 2024-05-01 12:30 UTC
SECRET = "API_TOKEN=do-not-show\n"
EVIL = "CLIMBED-OUT"


def _zip_entry(z: zipfile.ZipFile, name: str, data: bytes | str, date=DATE) -> None:
    z.writestr(zipfile.ZipInfo(name, date), data, zipfile.ZIP_DEFLATED)


def _tar_entry(t: tarfile.TarFile, name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = "") -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.type, info.linkname = len(data), TAR_MTIME, kind, link
    t.addfile(info, io.BytesIO(data) if data else None)


def _inner_zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("inside.txt", "inside the inner archive\n")
    return out.getvalue()


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ws")
    with zipfile.ZipFile(root / "bundle.zip", "w", zipfile.ZIP_DEFLATED) as z:
        _zip_entry(z, "docs/", b"")
        _zip_entry(z, "docs/readme.md", README)
        _zip_entry(z, "docs/report.pdf", build_pdf(["alpha page text", "beta page text", "gamma page text"]))
        _zip_entry(z, "data.csv", "name,value\nx,1\ny,2\n")
        _zip_entry(z, "analysis.ipynb", notebook(code("print('hi')", stream("hi\n"))))
        _zip_entry(z, ".env", SECRET)
        _zip_entry(z, "img/plot.png", base64.b64decode(png_b64(64, 48)))
        _zip_entry(z, "../evil.txt", EVIL)
        _zip_entry(z, "/etc/passwd.txt", EVIL)
        _zip_entry(z, "nested/inner.zip", _inner_zip())
        link = zipfile.ZipInfo("docs/latest", DATE)
        link.create_system, link.external_attr = 3, 0o120777 << 16  # a Unix symbolic link, as zip -y stores one
        z.writestr(link, "readme.md")
    for mode, suffix in (("w:gz", "tar.gz"), ("w:bz2", "tar.bz2"), ("w:xz", "tar.xz"), ("w", "tar")):
        with tarfile.open(root / f"src.{suffix}", mode) as t:
            _tar_entry(t, "./src/", kind=tarfile.DIRTYPE)
            _tar_entry(t, "./src/main.py", b"print('main')\n")
            _tar_entry(t, "./src/util.py", b"def util():\n    return 2\n")
            _tar_entry(t, "./src/passwd", kind=tarfile.SYMTYPE, link="/etc/passwd")
            _tar_entry(t, "./src/copy.py", kind=tarfile.LNKTYPE, link="./src/main.py")
            _tar_entry(t, "../../escape.txt", EVIL.encode())
    (root / "notes.txt").write_text("plain text\n")
    with zipfile.ZipFile(root / "backup.pem", "w") as z:  # a sensitive name, whatever the file holds
        _zip_entry(z, "readme.txt", "nothing secret in here\n")
    plain = io.BytesIO()
    with zipfile.ZipFile(plain, "w") as z:
        _zip_entry(z, "notes.txt", "some notes\n" * 100)
    (root / "broken.zip").write_bytes(plain.getvalue()[:len(plain.getvalue()) // 2])  # its directory cut off
    return root


@pytest.fixture(scope="module")
def server(ws: Path):
    yield from serving(ws)


def entries(result: dict) -> list[str]:
    return [line for line in body_of(result).splitlines()[1:] if not line.startswith("[")]


def test_a_zip_is_listed_in_archive_order_with_sizes_and_dates(server: ServerProcess, ws: Path):
    result = server.read(path="bundle.zip")
    assert result["kind"] == "archive" and not result["isError"] and not result["truncated"]
    text = body_of(result)
    assert text.splitlines()[0] == f"Archive {ws / 'bundle.zip'} (zip, 11 members, in archive order):"
    lines = entries(result)
    assert lines[:2] == ["docs/", f"docs/readme.md  ({len(README)} B, 2024-05-01 12:30)"]
    assert "docs/latest  (symbolic link, not followed)" in lines
    assert "[Read a member by its path inside the archive, e.g. bundle.zip/docs/readme.md.]" in text
    assert result["shown"] == {"entries": [1, 11]}


def test_a_markdown_member_reads_as_numbered_text(server: ServerProcess, ws: Path):
    result = server.read(path="bundle.zip/docs/readme.md")
    assert result["kind"] == "text" and result["path"] == str(ws / "bundle.zip" / "docs" / "readme.md")
    assert body_of(result) == "     1\t# Bundle\n     2\t\n     3\tThe first paragraph.\n     4\tThe second line."
    assert result["totalLines"] == 4
    window = server.read(path="bundle.zip/docs/readme.md", offset=3, limit=1)
    assert body_of(window).startswith("     3\tThe first paragraph.\n") and window["next"] == {"offset": 4}


def test_a_pdf_member_reads_by_pages(server: ServerProcess):
    result = server.read(path="bundle.zip/docs/report.pdf", pages="2")
    assert result["kind"] == "pdf" and result["totalPages"] == 3
    assert "--- Page 2 ---" in body_of(result) and "beta page text" in body_of(result)
    assert "alpha page text" not in body_of(result)


def test_members_read_as_their_own_kind(server: ServerProcess):
    csv = server.read(path="bundle.zip/data.csv", offset=2)
    assert body_of(csv).startswith("[Header row (line 1): name,value]")
    nb = server.read(path="bundle.zip/analysis.ipynb")
    assert nb["kind"] == "notebook" and "print('hi')" in body_of(nb)
    image = server.read(path="bundle.zip/img/plot.png")
    parts = [p for p in image["content"] if p["type"] == "image"]
    assert image["kind"] == "image" and len(parts) == 1 and (parts[0]["width"], parts[0]["height"]) == (64, 48)


def test_find_in_a_member_searches_the_member_as_its_own_kind(server: ServerProcess, ws: Path):
    result = server.read(path="bundle.zip/docs/readme.md", find="second")
    assert not result["isError"] and result["path"] == str(ws / "bundle.zip" / "docs" / "readme.md")
    assert "line 4, column 5: The second line." in body_of(result) and "first paragraph" not in body_of(result)
    pdf = server.read(path="bundle.zip/docs/report.pdf", find="gamma")
    assert not pdf["isError"] and "1 hit" in body_of(pdf) and "page 3" in body_of(pdf) and "alpha" not in body_of(pdf)
    tar = server.read(path="src.tar.gz/src/util.py", find="return")
    assert not tar["isError"] and "line 2, column 5:" in body_of(tar)
    listing = server.read(path="bundle.zip", find="readme")
    assert listing["isError"] and listing["error"]["code"] == "find_unsupported"
    assert listing["error"]["message"] == (
        "bundle.zip is an archive (zip); find searches one member at a time. Search a member by its path inside the "
        "archive, e.g. bundle.zip/docs/readme.md, or read bundle.zip first to list its members.")
    tar = server.read(path="src.tar.xz", find="util")
    assert tar["error"]["code"] == "find_unsupported" and "e.g. src.tar.xz/src/main.py," in tar["error"]["message"]
    folder = server.read(path="bundle.zip/docs", find="second")  # a folder inside: not its listing as an answer
    assert folder["isError"] and folder["error"]["code"] == "find_in_directory"
    assert "e.g. bundle.zip/docs/readme.md" in folder["error"]["message"]


@pytest.mark.parametrize("suffix, form", [("tar.gz", "tar, gzip-compressed"), ("tar.bz2", "tar, bzip2-compressed"),
                                          ("tar.xz", "tar, xz-compressed"), ("tar", "tar")])
def test_tars_plain_and_compressed_list_and_read(server: ServerProcess, ws: Path, suffix: str, form: str):
    listing = server.read(path=f"src.{suffix}")
    assert listing["kind"] == "archive"
    assert body_of(listing).splitlines()[0] == f"Archive {ws / f'src.{suffix}'} ({form}, 6 members, in archive order):"
    assert entries(listing) == ["src/", "src/main.py  (14 B, 2024-05-01 12:30)",
                                "src/util.py  (25 B, 2024-05-01 12:30)",
                                "src/passwd -> /etc/passwd  (symbolic link, not followed)",
                                "src/copy.py -> ./src/main.py  (hard link, not followed)",
                                "../../escape.txt  (11 B, 2024-05-01 12:30, unsafe name, not read)"]
    member = server.read(path=f"src.{suffix}/src/util.py")  # named without the archive's ./ prefix
    assert body_of(member) == "     1\tdef util():\n     2\t    return 2"


def test_a_folder_inside_an_archive_lists_what_is_under_it(server: ServerProcess, ws: Path):
    result = server.read(path="src.tar.gz/src")
    assert result["kind"] == "archive"
    assert body_of(result).splitlines()[0].startswith(f"Archive {ws / 'src.tar.gz'}, folder src/ (tar, gzip")
    assert "src/main.py  (14 B, 2024-05-01 12:30)" in entries(result)
    assert all(line.startswith("src/") for line in entries(result))


def test_links_in_archives_are_listed_never_followed(server: ServerProcess):
    for path in ("src.tar.gz/src/passwd", "src.tar/src/copy.py", "bundle.zip/docs/latest"):
        result = server.read(path=path)
        assert result["isError"] and result["error"]["code"] == "unsafe_member", path
        assert "not followed" in result["error"]["message"] and "root:" not in body_of(result)


def test_climbing_and_absolute_member_names_are_never_read(server: ServerProcess, ws: Path):
    for path in ("bundle.zip/../evil.txt", "bundle.zip//etc/passwd.txt", "src.tar.gz/../../escape.txt"):
        result = server.read(path=path)  # the path leads where `..` leads, never to the member
        assert result["isError"] and result["error"]["code"] in ("not_found", "outside_workspace"), path
        assert EVIL not in json.dumps(result)
    assert "../evil.txt  (11 B, 2024-05-01 12:30, unsafe name, not read)" in entries(server.read(path="bundle.zip"))
    assert "/etc/passwd.txt  (11 B, 2024-05-01 12:30, unsafe name, not read)" in entries(server.read(path="bundle.zip"))


def test_a_missing_member_says_how_to_list_the_archive(server: ServerProcess):
    result = server.read(path="bundle.zip/docs/missing.md")
    assert result["error"]["code"] == "not_found"
    assert result["error"]["message"] == ("bundle.zip holds no member docs/missing.md. Read bundle.zip to list its "
                                          "members (their paths are what follows the archive's path).")


def test_a_path_past_a_file_that_is_no_archive_is_not_found(server: ServerProcess, ws: Path):
    result = server.read(path="notes.txt/inside")
    assert result["error"]["code"] == "not_found"
    assert f"{ws / 'notes.txt'} is a file (text/plain), not a folder or an archive" in result["error"]["message"]


def test_archives_inside_archives_are_not_opened(server: ServerProcess):
    inner = server.read(path="bundle.zip/nested/inner.zip")
    assert inner["error"]["code"] == "nested_archive" and "archives inside archives are not opened" in body_of(inner)
    deeper = server.read(path="bundle.zip/nested/inner.zip/inside.txt")
    assert deeper["error"]["code"] == "nested_archive" and "inside the inner archive" not in body_of(deeper)


def test_a_sensitive_member_needs_consent_as_a_file_does(server: ServerProcess):
    refused = server.read(path="bundle.zip/.env")
    assert refused["error"]["code"] == "sensitive_file" and "do-not-show" not in json.dumps(refused)
    checks = server.request("agentread/check", {"paths": ["bundle.zip/.env", "bundle.zip/docs/readme.md"]})
    assert [c["reasons"] for c in checks["result"]["checks"]] == [["sensitive_file"], []]
    approved = server.read(path="bundle.zip/.env", consent=True)
    assert body_of(approved) == "     1\t" + SECRET.strip()
    inside = server.read(path="backup.pem/readme.txt")  # the archive's own name counts too
    assert inside["error"]["code"] == "sensitive_file" and "nothing secret" not in json.dumps(inside)


def test_a_damaged_archive_is_an_error_the_model_can_act_on(server: ServerProcess):
    result = server.read(path="broken.zip")
    assert result["error"]["code"] == "damaged_archive" and "ask the user to extract it" in body_of(result)


def test_an_archive_reached_through_a_link_outside_the_workspace_needs_consent(tmp_path: Path):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    with zipfile.ZipFile(outside / "far.zip", "w") as z:
        z.writestr("far.txt", "far away\n")
    (ws / "far.zip").symlink_to(outside / "far.zip")
    proc = ServerProcess(workspace=ws)
    try:
        result = proc.read(path="far.zip/far.txt")
        assert result["error"]["code"] == "outside_workspace" and "far away" not in json.dumps(result)
        assert body_of(proc.read(path="far.zip/far.txt", consent=True)) == "     1\tfar away"
    finally:
        proc.close()


def _bomb(path: Path, unpacked: int) -> None:
    """A zip of one member of `unpacked` zero bytes, deflated to a thousandth of that."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("zeros.txt", "w", force_zip64=True) as f:
            for _ in range(unpacked >> 20):
                f.write(bytes(1 << 20))


def _lie_about_size(path: Path, declared: int) -> None:
    """The zip's one member declares `declared` bytes unpacked in both of its headers."""
    data = bytearray(path.read_bytes())
    struct.pack_into("<I", data, 22, declared)  # the local header's uncompressed size
    struct.pack_into("<I", data, data.rfind(b"PK\x01\x02") + 24, declared)  # the central directory's
    path.write_bytes(bytes(data))


def test_a_password_protected_member_is_refused(tmp_path: Path):
    with zipfile.ZipFile(tmp_path / "locked.zip", "w") as z:
        _zip_entry(z, "locked.txt", "locked away\n")
    data = bytearray((tmp_path / "locked.zip").read_bytes())
    for flags in (6, data.rfind(b"PK\x01\x02") + 8):  # bit 0 of the general purpose flags: encrypted
        data[flags] |= 1
    (tmp_path / "locked.zip").write_bytes(bytes(data))
    proc = ServerProcess(workspace=tmp_path)
    try:
        assert "locked.txt  (12 B, 2024-05-01 12:30, encrypted)" in entries(proc.read(path="locked.zip"))
        result = proc.read(path="locked.zip/locked.txt")
        assert result["error"]["code"] == "encrypted_archive" and "needs a password" in result["error"]["message"]
    finally:
        proc.close()


def test_zip_bombs_are_refused_without_unpacking_past_the_cap(tmp_path: Path):
    _bomb(tmp_path / "bomb.zip", MAX_MEMBER_BYTES + (1 << 20))
    with zipfile.ZipFile(tmp_path / "liar.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.txt", b"a" * (MAX_MEMBER_BYTES + (1 << 20)))
    _lie_about_size(tmp_path / "liar.zip", 10)
    proc = ServerProcess(workspace=tmp_path)
    try:
        listing = proc.read(path="bomb.zip")
        assert entries(listing)[0].startswith("zeros.txt  (101.0 MB, ")
        bomb = proc.read(path="bomb.zip/zeros.txt")
        assert bomb["error"]["code"] == "file_too_large"
        assert f"declares {MAX_MEMBER_BYTES + (1 << 20):,} bytes unpacked" in bomb["error"]["message"]
        liar = proc.read(path="liar.zip/a.txt")  # unpacked only as far as its header says: then the check fails
        assert liar["error"]["code"] == "damaged_archive" and "Bad CRC-32" in liar["error"]["message"]
    finally:
        proc.close()


def test_a_large_zip_is_paged_like_a_directory(tmp_path: Path):
    with zipfile.ZipFile(tmp_path / "many.zip", "w") as z:
        for i in range(1, 1201):
            _zip_entry(z, f"f/{i:04d}.txt", b"")
    proc = ServerProcess(workspace=tmp_path)
    try:
        first = proc.read(path="many.zip")
        assert len(entries(first)) == MAX_DIR_ENTRIES and first["next"] == {"offset": MAX_DIR_ENTRIES + 1}
        assert "700 more members not listed. Read on with offset=501" in body_of(first)
        last = proc.read(path="many.zip", offset=1001)
        assert entries(last)[0].startswith("f/1001.txt") and entries(last)[-1].startswith("f/1200.txt")
        assert last["shown"] == {"entries": [1001, 1200]} and not last["truncated"]
    finally:
        proc.close()


def test_a_tar_of_very_many_members_gives_a_bounded_listing(tmp_path: Path):
    with tarfile.open(tmp_path / "huge.tar.gz", "w:gz", compresslevel=1) as t:
        for i in range(MAX_DIR_SCAN + 10):
            _tar_entry(t, f"m/{i}")
    proc = ServerProcess(workspace=tmp_path)
    try:
        result = proc.read(path="huge.tar.gz")
        text = body_of(result)
        assert f"more than {MAX_DIR_SCAN:,} members" in text.splitlines()[0]
        assert len(entries(result)) == MAX_DIR_ENTRIES and len(text.encode()) < MAX_OUTPUT_BYTES
        assert result["truncated"] and result["next"] == {"offset": MAX_DIR_ENTRIES + 1}
        assert body_of(proc.read(path=f"huge.tar.gz/m/{MAX_DIR_SCAN + 5}")) == "[The file is empty: 0 lines.]"
    finally:
        proc.close()


def test_the_cli_lists_and_reads_members(ws: Path):
    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "agentread", "read", *args], cwd=ws, capture_output=True,
                              text=True, timeout=60)

    listing = cli("src.tar.xz")
    assert listing.returncode == 0 and "src/main.py  (14 B, 2024-05-01 12:30)" in listing.stdout
    member = cli("src.tar.xz/src/main.py")
    assert member.returncode == 0 and member.stdout.startswith("     1\tprint('main')\n[version ")
    refused = cli("bundle.zip/nested/inner.zip")
    assert refused.returncode == 1 and refused.stdout.startswith("Error:") and "inner archive" not in refused.stdout


def test_a_member_through_mcp(ws: Path):
    from mcp_client import run, texts

    async def calls(client):
        return [await client.call_tool("read", {"path": p}) for p in ("bundle.zip", "bundle.zip/docs/readme.md")]

    listing, member = run({}, "--root", str(ws), calls=calls)
    assert not listing.is_error and "docs/readme.md  (" in texts(listing)
    assert not member.is_error and texts(member).startswith("     1\t# Bundle\n")


def test_the_unchanged_stub_tells_members_of_one_archive_apart(ws: Path):
    proc = ServerProcess(workspace=ws, init_options={"unchangedStub": True})
    try:
        first = proc.read(path="src.tar/src/main.py")
        other = proc.read(path="src.tar/src/util.py")
        again = proc.read(path="src.tar/src/main.py")
        assert body_of(first) == "     1\tprint('main')" and not first.get("unchanged")
        assert body_of(other).startswith("     1\tdef util():") and not other.get("unchanged")
        assert again.get("unchanged") is True
    finally:
        proc.close()


def test_one_member_is_one_member(tmp_path: Path):
    with zipfile.ZipFile(tmp_path / "one.zip", "w") as z:
        _zip_entry(z, "only/one.txt", "one\n")
    proc = ServerProcess(workspace=tmp_path)
    try:
        heading = body_of(proc.read(path="one.zip")).splitlines()[0]
        assert heading == f"Archive {tmp_path / 'one.zip'} (zip, 1 member, in archive order):"
        folder = body_of(proc.read(path="one.zip/only")).splitlines()[0]
        assert folder == f"Archive {tmp_path / 'one.zip'}, folder only/ (zip, 1 member in it, in archive order):"
    finally:
        proc.close()


def _write(path: Path, members: dict[str, bytes]) -> None:
    """A zip or a tar.gz (by `path`'s name) of `members`, in that order."""
    if path.suffix == ".zip":
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data in members.items():
                _zip_entry(z, name, data)
    else:
        with tarfile.open(path, "w:gz") as t:
            for name, data in members.items():
                _tar_entry(t, name, data)


def _paged(proc: ServerProcess, path: str) -> tuple[list[str], list[dict]]:
    """Every line a read of `path` shows, following `next` to its end, and the replies."""
    lines, replies, args = [], [], {}
    while True:
        reply = proc.read(path=path, **args)
        assert not reply["isError"], reply
        replies.append(reply)
        lines += [line for line in body_of(reply).splitlines()[1 if reply["kind"] == "archive" else 0:]
                  if not line.startswith("[")]
        if not reply.get("next"):
            return lines, replies
        args = reply["next"]


@pytest.mark.parametrize("name", ["pages.zip", "pages.tar.gz"])
def test_paging_an_archive_and_a_member_to_their_ends_gives_exactly_what_they_hold(tmp_path: Path, name: str):
    log = "".join(f"line {n} of the log\n" for n in range(1, 6001)).encode()
    members = {f"f/{n:04d}.txt": f"file {n}\n".encode() for n in range(1, 1301)} | {"logs/app.log": log}
    _write(tmp_path / name, members)
    proc = ServerProcess(workspace=tmp_path)
    try:
        # A member first: a tar is walked only as far as it, then on for the listing.
        assert body_of(proc.read(path=f"{name}/f/0002.txt")) == "     1\tfile 2"
        listed, replies = _paged(proc, name)
        assert [line.split("  (")[0] for line in listed] == list(members) and len(replies) == 3
        assert [r["shown"]["entries"] for r in replies] == [[1, 500], [501, 1000], [1001, 1301]]
        read, replies = _paged(proc, f"{name}/logs/app.log")
        assert len(replies) > 1 and [line.split("\t", 1)[1] for line in read] == log.decode().splitlines()
        assert body_of(proc.read(path=f"{name}/f/1300.txt")) == "     1\tfile 1300"
        missing = proc.read(path=f"{name}/f/9999.txt")
        assert missing["error"]["code"] == "not_found" and "holds no member f/9999.txt." in body_of(missing)
        assert len(entries(proc.read(path=f"{name}/f", offset=1201))) == 100
    finally:
        proc.close()


@pytest.mark.parametrize("name", ["changing.zip", "changing.tar.gz"])
def test_an_archive_rewritten_between_reads_is_read_anew(tmp_path: Path, name: str):
    def shown(reply: dict) -> list[str]:  # without the notes (the second reads say the file changed)
        return [line.split("  (")[0] for line in body_of(reply).splitlines() if not line.startswith(("[", "Archive "))]

    path = tmp_path / name
    _write(path, {"a.txt": b"first version\n", "old.txt": b"going\n"})
    proc = ServerProcess(workspace=tmp_path)
    try:
        assert shown(proc.read(path=name)) == ["a.txt", "old.txt"]
        assert shown(proc.read(path=f"{name}/a.txt")) == ["     1\tfirst version"]
        _write(path, {"a.txt": b"second version, longer\n", "new.txt": b"came\n"})  # the same path, rewritten
        listing = proc.read(path=name)
        assert listing["changed"] and shown(listing) == ["a.txt", "new.txt"]
        assert shown(proc.read(path=f"{name}/a.txt")) == ["     1\tsecond version, longer"]
        assert proc.read(path=f"{name}/old.txt")["error"]["code"] == "not_found"
        assert shown(proc.read(path=f"{name}/new.txt")) == ["     1\tcame"]
    finally:
        proc.close()


def test_unpacked_members_are_kept_within_the_byte_budget(tmp_path: Path, monkeypatch):
    members = {"small.txt": b"s" * 300 + b"\n", "other.txt": b"o" * 400 + b"\n", "large.txt": b"l" * 900 + b"\n"}
    _write(tmp_path / "kept.zip", members)
    monkeypatch.setattr(archive, "CACHE", archive._Cache(archive.ARCHIVE_CACHE_ARCHIVES,
                                                          archive.ARCHIVE_CACHE_RECORD_BYTES, 800))
    engine = Engine(Workspace([str(tmp_path)]))

    def read(member: str) -> str:
        return engine.read(parse_request({"path": f"kept.zip/{member}"})).content[0].text

    def kept() -> set[str]:
        return {member for (_, member) in archive.CACHE._data}

    assert read("large.txt") == "     1\t" + "l" * 900 and kept() == set()  # over the budget: not kept
    assert read("small.txt") == "     1\t" + "s" * 300 and kept() == {"small.txt"}
    assert read("other.txt") == "     1\t" + "o" * 400 and kept() == {"small.txt", "other.txt"}
    assert read("large.txt").endswith("l" * 900) and kept() == {"small.txt", "other.txt"}
    read("small.txt")  # used last: the other goes first
    _write(tmp_path / "kept.zip", {"small.txt": b"S" * 300 + b"\n", "other.txt": b"O" * 450 + b"\n"})
    assert read("other.txt") == "     1\t" + "O" * 450 and kept() == {"other.txt"}  # the old version's are dropped
    assert archive.CACHE.held_bytes == 451 <= archive.CACHE.max_bytes


def test_the_records_kept_are_bounded_by_their_bytes(tmp_path: Path, monkeypatch):
    """Ten ordinary records' worth: three small archives fit two at a time, and neither an archive
    of eleven members nor a tar whose one member carries a large pax header is kept."""
    bound = 10 * (archive.RECORD_BYTES + len("0.txt"))
    monkeypatch.setattr(archive, "CACHE", archive._Cache(2, bound, archive.MEMBER_CACHE_BYTES))
    for name, count in (("a.zip", 4), ("b.zip", 4), ("c.zip", 4), ("big.zip", 11)):
        _write(tmp_path / name, {f"{n}.txt": b"x\n" for n in range(count)})
    with tarfile.open(tmp_path / "pax.tar", "w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("0.txt")
        info.size, info.pax_headers = 2, {"comment": "c" * bound}
        tar.addfile(info, io.BytesIO(b"x\n"))
    engine = Engine(Workspace([str(tmp_path)]))
    for name in ("a.zip", "b.zip", "c.zip", "big.zip", "pax.tar"):
        listing = engine.read(parse_request({"path": name}))
        assert not listing.is_error and listing.content[0].text.count(".txt  (") in (1, 4, 11)
        assert len(archive.CACHE._indexes) <= 2 and archive.CACHE.held_records <= bound
    assert [key[0] for key in archive.CACHE._indexes] == [str(tmp_path / "b.zip"), str(tmp_path / "c.zip")]


@pytest.mark.parametrize("name", ["members.zip", "members.tar.gz"])
def test_a_members_version_size_and_date_are_its_own(tmp_path: Path, name: str):
    """Another member's change leaves a member's version as it was: a read `since` it answers
    unchanged, through the server and through the command line."""
    path, readme = tmp_path / name, b"# Read me\n\nA line.\n"
    _write(path, {"README.md": readme, "a.txt": b"a\n", "c.txt": b"c\n"})
    date = "2024-05-01T12:30:00" + ("Z" if name.endswith(".tar.gz") else "")  # a zip stores a local time

    def cli(*args: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "agentread", "read", "--json", *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)
        return json.loads(done.stdout)

    proc = ServerProcess(workspace=tmp_path)
    try:
        whole = proc.read(path=name)
        first, other = proc.read(path=f"{name}/README.md"), proc.read(path=f"{name}/a.txt")
        assert (first["size"], first["mtime"], other["size"]) == (len(readme), date, 2)
        assert len({whole["version"], first["version"], other["version"]}) == 3
        from_cli = cli(f"{name}/README.md")
        assert from_cli["version"] == first["version"] and from_cli["size"] == len(readme)
        _write(path, {"README.md": readme, "a.txt": b"another a\n", "c.txt": b"c\n"})
        again = proc.read(path=f"{name}/README.md", since=first["version"])
        assert again["unchanged"] and body_of(again) == f"[Unchanged: {tmp_path / name}/README.md is still at " \
            f"version {first['version']}; what that read showed still holds.]"
        changed = proc.read(path=f"{name}/a.txt", since=other["version"])
        assert changed["changed"] and changed["size"] == 10 and "another a" in body_of(changed)
        assert proc.read(path=name)["version"] != whole["version"]
    finally:
        proc.close()
    assert cli(f"{name}/README.md", "--since", first["version"])["unchanged"]
