"""Confinement and refusals: nothing outside the workspace or holding secrets is read without
consent, and no special file (device, FIFO, socket) is ever opened. Real files in a temp workspace,
the real engine and server.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import threading
from pathlib import Path

import pytest

from agentread.engine import Engine
from agentread.request import parse_request
from agentread.result import ReadResult
from agentread.workspace import CONSENT_REASONS, Workspace
from rpc import ServerProcess, text_of

SECRET = "the-secret-value-42"
# How long an in-process read may take before it counts as stuck (waiting on a special file it
# opened): only a read that is stuck takes this long.
STUCK_AFTER = 60.0


@pytest.fixture
def layout(tmp_path: Path):
    """tmp/ws (the workspace, with a.txt) and tmp/outside (with secret.txt), realpath'd."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (ws / "a.txt").write_text("inside line\n")
    (outside / "secret.txt").write_text(SECRET + "\n")
    return ws.resolve(), outside.resolve()


def read(engine: Engine, **params):
    return engine.read(parse_request(params))


def assert_refused(result, code: str):
    assert result.is_error, result.text()
    assert result.kind == "error" and result.error.code == code, result.text()
    assert result.text().startswith("Error:")
    assert SECRET not in result.text()


# --- outside the workspace
# --------------------------------------------------------------------------------

@pytest.mark.parametrize("spelled", ["/{ws}/a.txt", "{ws}/./a.txt", "{ws}//a.txt", "{ws}/../ws/a.txt",
                                     "{ws}/sub/../secret.txt", "{ws}/sub/../../ws/a.txt"])
def test_a_path_spelled_oddly_leads_where_its_links_and_dots_do(layout, spelled: str):
    """A path is its own real path only when normal and free of links; any other spelling is
    resolved, `..` after any link on the way."""
    ws, outside = layout
    (ws / "sub").symlink_to(outside / "deep", target_is_directory=True)
    (outside / "deep").mkdir()
    path = spelled.format(ws=ws)
    resolved = Workspace([str(ws)]).resolve(path, CONSENT_REASONS)
    assert resolved.path == os.path.realpath(path)
    assert resolved.inside == resolved.path.startswith(str(ws) + os.sep)


def test_symlinked_file_pointing_outside_is_refused(layout):
    ws, outside = layout
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    engine = Engine(Workspace([str(ws)]))
    assert_refused(read(engine, path="link.txt"), "outside_workspace")
    assert_refused(read(engine, path=str(ws / "link.txt")), "outside_workspace")


def test_symlinked_directory_pointing_outside_is_refused(layout):
    ws, outside = layout
    (ws / "linkdir").symlink_to(outside, target_is_directory=True)
    engine = Engine(Workspace([str(ws)]))
    assert_refused(read(engine, path="linkdir/secret.txt"), "outside_workspace")
    result = read(engine, path="linkdir")
    assert_refused(result, "outside_workspace")
    assert "secret.txt" not in result.text()  # not even the listing


def test_dotdot_escape_is_refused(layout):
    ws, _ = layout
    engine = Engine(Workspace([str(ws)]))
    assert_refused(read(engine, path="../outside/secret.txt"), "outside_workspace")
    assert_refused(read(engine, path="sub/../../outside/secret.txt"), "outside_workspace")
    assert_refused(read(engine, path=".."), "outside_workspace")


def test_absolute_path_outside_is_refused(layout):
    ws, outside = layout
    engine = Engine(Workspace([str(ws)]))
    assert_refused(read(engine, path=str(outside / "secret.txt")), "outside_workspace")
    assert_refused(read(engine, path="/etc/passwd"), "outside_workspace")


def test_workspace_prefix_sibling_is_outside(tmp_path: Path):
    """/tmp/x/ws-evil is not inside /tmp/x/ws although the string starts the same."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws-evil").mkdir()
    (tmp_path / "ws-evil" / "f.txt").write_text(SECRET)
    engine = Engine(Workspace([str(tmp_path / "ws")]))
    assert_refused(read(engine, path=str(tmp_path / "ws-evil" / "f.txt")), "outside_workspace")
    assert_refused(read(engine, path="../ws-evil/f.txt"), "outside_workspace")


def test_missing_file_outside_does_not_reveal_existence(layout):
    ws, outside = layout
    engine = Engine(Workspace([str(ws)]))
    missing = read(engine, path=str(outside / "no-such-file.txt"))
    present = read(engine, path=str(outside / "secret.txt"))
    assert_refused(missing, "outside_workspace")
    assert_refused(present, "outside_workspace")
    assert "exist" not in missing.text().lower()


def test_symlinked_workspace_root_is_not_outside(layout, tmp_path: Path):
    ws, _ = layout
    alias = tmp_path / "alias"
    alias.symlink_to(ws, target_is_directory=True)
    engine = Engine(Workspace([str(alias)]))  # the folder as the editor names it: a symlink path
    for path in ("a.txt", str(alias / "a.txt"), str(ws / "a.txt")):
        result = read(engine, path=path)
        assert not result.is_error, result.text()
        assert "inside line" in result.text()
    assert read(engine, path=str(alias)).kind == "directory"


def test_consent_allows_reading_outside(layout):
    ws, outside = layout
    engine = Engine(Workspace([str(ws)]))
    result = read(engine, path=str(outside / "secret.txt"), consent=True)
    assert not result.is_error and SECRET in result.text()
    assert read(engine, path="../outside", consent=True).kind == "directory"


def test_no_workspace_means_everything_needs_consent(layout):
    _, outside = layout
    engine = Engine(Workspace([]))
    assert_refused(read(engine, path=str(outside / "secret.txt")), "outside_workspace")


# --- sensitive files
# --------------------------------------------------------------------------------------

SENSITIVE = [".env", "id_rsa", "server.pem", ".aws/credentials", "config/.env.production", ".ssh/id_ed25519"]


@pytest.mark.parametrize("name", SENSITIVE)
def test_sensitive_file_needs_consent(layout, name: str):
    ws, _ = layout
    target = ws / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(SECRET + "\n")
    engine = Engine(Workspace([str(ws)]))
    assert_refused(read(engine, path=name), "sensitive_file")
    assert_refused(read(engine, path=str(target)), "sensitive_file")
    allowed = read(engine, path=name, consent=True)
    assert not allowed.is_error and SECRET in allowed.text()


def test_innocent_name_linking_to_a_secret_is_still_sensitive(layout):
    ws, _ = layout
    (ws / ".env").write_text(SECRET)
    (ws / "settings.txt").symlink_to(ws / ".env")
    engine = Engine(Workspace([str(ws)]))
    assert_refused(read(engine, path="settings.txt"), "sensitive_file")


def test_ordinary_names_are_not_sensitive(layout):
    ws, _ = layout
    for name in ("environment.md", "pem_notes.txt", "credentials_howto.txt", "keys.py"):
        (ws / name).write_text("ok\n")
    engine = Engine(Workspace([str(ws)]))
    for name in ("environment.md", "pem_notes.txt", "credentials_howto.txt", "keys.py"):
        assert not read(engine, path=name).is_error, name


def test_custom_sensitive_patterns_from_initialization_options(tmp_path: Path):
    (tmp_path / "notes.secret").write_text(SECRET)
    (tmp_path / ".env").write_text("PLAIN=1\n")
    server = ServerProcess(workspace=tmp_path, init_options={"sensitivePatterns": ["*.secret"]})
    try:
        refused = server.read(path="notes.secret")
        assert refused["isError"] and refused["error"]["code"] == "sensitive_file"
        assert SECRET not in text_of(refused)
        assert SECRET in text_of(server.read(path="notes.secret", consent=True))
        replaced = server.read(path=".env")  # the user's list replaces the defaults
        assert not replaced["isError"] and "PLAIN=1" in text_of(replaced)
    finally:
        server.close()


def test_an_empty_pattern_list_makes_no_file_sensitive(layout):
    ws, _ = layout
    (ws / ".env").write_text("PLAIN=1\n")
    engine = Engine(Workspace([str(ws)], sensitive_patterns=[]))
    assert "PLAIN=1" in read(engine, path=".env").text()


# --- malformed paths
# --------------------------------------------------------------------------------------

def test_nul_byte_in_path_is_refused(layout, server):
    ws, _ = layout
    engine = Engine(Workspace([str(ws)]))
    assert_refused(read(engine, path="a.txt\x00.png"), "invalid_path")
    result = server.read(path="a\x00b.txt")
    assert result["isError"] and result["error"]["code"] == "invalid_path"


def test_file_uri_is_confined_like_a_path(layout):
    ws, outside = layout
    engine = Engine(Workspace([str(ws)]))
    inside = read(engine, path=(ws / "a.txt").as_uri())
    assert not inside.is_error and "inside line" in inside.text()
    assert_refused(read(engine, path=(outside / "secret.txt").as_uri()), "outside_workspace")
    assert_refused(read(engine, path="file://" + str(ws) + "/../outside/secret.txt"), "outside_workspace")
    assert_refused(read(engine, path="file://otherhost" + str(ws / "a.txt")), "invalid_path")
    assert_refused(read(engine, path="file://[" + str(ws / "a.txt")), "invalid_path")  # urlparse's ValueError


def test_tilde_expands_and_is_confined(layout, monkeypatch):
    ws, outside = layout
    engine = Engine(Workspace([str(ws)]))
    monkeypatch.setenv("HOME", str(ws))
    assert "inside line" in read(engine, path="~/a.txt").text()
    monkeypatch.setenv("HOME", str(outside))
    assert_refused(read(engine, path="~/secret.txt"), "outside_workspace")


def test_paths_with_a_lone_surrogate_are_refused_cleanly(layout):
    ws, _ = layout
    engine = Engine(Workspace([str(ws)]))
    for path in ("\ud800.txt", "~\ud800/x", "file:///\ud800"):  # JSON can carry one; no file name can
        assert_refused(read(engine, path=path), "invalid_path")


def test_very_long_paths_are_refused_cleanly(layout):
    ws, _ = layout
    engine = Engine(Workspace([str(ws)]))
    assert_refused(read(engine, path="a" * 100_000), "invalid_path")
    long_component = read(engine, path="x" * 300 + ".txt")  # under PATH_MAX, over NAME_MAX
    assert long_component.is_error and long_component.error.code in {"invalid_path", "not_found"}


def test_symlink_loop_is_refused(layout):
    ws, _ = layout
    (ws / "loop1").symlink_to(ws / "loop2")
    (ws / "loop2").symlink_to(ws / "loop1")
    (ws / "self").symlink_to(ws / "self")
    engine = Engine(Workspace([str(ws)]))
    for name in ("loop1", "self", "self/x.txt"):
        result = read(engine, path=name)
        assert result.is_error and result.error.code in {"invalid_path", "not_found"}, result.text()


# --- special files
# ----------------------------------------------------------------------------------------

def _timed(server: ServerProcess, **params) -> dict:
    """A read through the server. A refusal comes from stat alone: a read that opened a device
    or a pipe would wait on it, to be answered `timeout` at the deadline if at all, never with
    the refusal."""
    return server.read(**params)


def _unblocked(engine: Engine, fifo: Path, **params) -> ReadResult:
    """A read in this process, which must not wait on the FIFO at `fifo`: one that opened it to read
    would wait for a writer forever. Fails if it is stuck (after releasing it with a writer)."""
    results: list = []

    def run() -> None:
        try:
            results.append(read(engine, **params))
        except BaseException as exc:  # noqa: BLE001 - raised again on the test's thread
            results.append(exc)

    reader = threading.Thread(target=run, daemon=True)
    reader.start()
    reader.join(STUCK_AFTER)
    if reader.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # a writer comes and goes: the reader sees the end
        raise AssertionError("the read waited on the FIFO")
    if isinstance(results[0], BaseException):
        raise results[0]
    return results[0]


def test_device_files_are_refused_quickly(tmp_path: Path, server):
    for device in ("/dev/zero", "/dev/random", "/dev/urandom", "/dev/null"):
        assert stat.S_ISCHR(os.stat(device).st_mode)
        outside = _timed(server, path=device)
        assert outside["isError"] and outside["error"]["code"] == "outside_workspace", device
        approved = _timed(server, path=device, consent=True)  # even with consent: never opened
        assert approved["isError"] and approved["error"]["code"] == "special_file", device
        assert "character device" in text_of(approved)
    (tmp_path / "ok.txt").write_text("still here\n")  # the server's workspace
    assert "still here" in text_of(_timed(server, path="ok.txt"))


def test_device_node_inside_the_workspace_is_refused(tmp_path: Path, server):
    node = tmp_path / "zero"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 5))  # the /dev/zero device, inside the workspace
    except PermissionError:
        pytest.skip("creating a device node needs root")
    result = _timed(server, path="zero")
    assert result["isError"] and result["error"]["code"] == "special_file"
    assert _timed(server, path=".")["kind"] == "directory"


def test_fifo_is_refused_and_never_opened(tmp_path: Path, server):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for params in ({"path": "pipe"}, {"path": str(fifo), "consent": True}, {"path": "pipe", "offset": 5}):
        result = _timed(server, **params)
        assert result["isError"] and result["error"]["code"] == "special_file"
        assert "FIFO" in text_of(result)
    # A writer that opens without blocking finds no reader: nobody ever opened (or still
    # holds) the pipe.
    with pytest.raises(OSError) as excinfo:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert excinfo.value.errno == errno.ENXIO
    (tmp_path / "after.txt").write_text("answers\n")
    assert "answers" in text_of(_timed(server, path="after.txt"))


def test_fifo_refused_in_process_without_blocking(tmp_path: Path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    engine = Engine(Workspace([str(tmp_path)]))
    assert_refused(_unblocked(engine, fifo, path="pipe"), "special_file")


def test_unix_socket_is_refused(tmp_path: Path, server):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(tmp_path / "s.sock"))
        sock.listen(1)
        result = _timed(server, path="s.sock")
        assert result["isError"] and result["error"]["code"] == "special_file"
        assert "socket" in text_of(result)
    finally:
        sock.close()
    (tmp_path / "after.txt").write_text("answers\n")
    assert "answers" in text_of(_timed(server, path="after.txt"))


def test_symlink_to_device_is_outside_and_refused(tmp_path: Path):
    (tmp_path / "z").symlink_to("/dev/zero")
    engine = Engine(Workspace([str(tmp_path)]))
    assert_refused(read(engine, path="z"), "outside_workspace")
    assert_refused(read(engine, path="z", consent=True), "special_file")


def test_symlink_within_the_workspace_is_followed(layout):
    ws, _ = layout
    (ws / "docs").mkdir()
    (ws / "docs" / "alias.txt").symlink_to(ws / "a.txt")
    engine = Engine(Workspace([str(ws)]))
    result = read(engine, path="docs/alias.txt")
    assert not result.is_error and "inside line" in result.text()


def test_every_workspace_root_is_inside(layout, tmp_path: Path):
    ws, _ = layout
    second = tmp_path / "second"
    second.mkdir()
    (second / "b.txt").write_text("second root\n")
    engine = Engine(Workspace([str(ws), str(second)]))
    assert "second root" in read(engine, path=str(second / "b.txt")).text()
    assert "inside line" in read(engine, path="a.txt").text()  # relative paths: the first root
    assert_refused(read(engine, path="b.txt"), "not_found")


def test_symlink_to_a_fifo_inside_is_refused_without_opening(tmp_path: Path):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "notes.txt").symlink_to(tmp_path / "pipe")
    engine = Engine(Workspace([str(tmp_path)]))
    assert_refused(_unblocked(engine, tmp_path / "pipe", path="notes.txt"), "special_file")
    with pytest.raises(OSError) as excinfo:
        os.close(os.open(tmp_path / "pipe", os.O_WRONLY | os.O_NONBLOCK))
    assert excinfo.value.errno == errno.ENXIO


def test_percent_encoded_uri_is_decoded_then_confined(layout):
    ws, outside = layout
    (ws / "with space.txt").write_text("spaced\n")
    engine = Engine(Workspace([str(ws)]))
    assert "spaced" in read(engine, path=(ws / "with space.txt").as_uri()).text()  # file:///…/with%20space.txt
    escape = "file://" + str(ws) + "/%2E%2E/outside/secret.txt"  # %2E%2E is ..
    assert_refused(read(engine, path=escape), "outside_workspace")
    # In a plain path, % is an ordinary character: no decoding, so no escape through it.
    assert_refused(read(engine, path="%2E%2E/outside/secret.txt"), "not_found")


def test_a_file_replaced_between_the_check_and_the_open_is_refused(layout):
    from agentread.result import ReadError
    from agentread.workspace import open_verified

    ws, outside = layout
    workspace = Workspace([str(ws)])
    resolved = workspace.resolve("a.txt")
    os.replace(outside / "secret.txt", ws / "a.txt")  # swapped in after the vetting
    with pytest.raises(ReadError) as err:
        open_verified(resolved)
    assert err.value.code == "file_changed"


def test_proc_files_are_outside_and_unreadable_ones_are_a_clear_error(layout):
    ws, _ = layout
    engine = Engine(Workspace([str(ws)]))
    assert_refused(read(engine, path="/proc/self/environ"), "outside_workspace")
    assert_refused(read(engine, path="/proc/self/mem"), "outside_workspace")
    # Even with consent, /proc/self/mem (a "regular" file that fails on read) is an error result,
    # not a crash.
    result = read(engine, path="/proc/self/mem", consent=True)
    assert result.is_error and result.error.code in ("read_failed", "special_file"), result.text()


# --- what a refusal or a glob tells of outside the workspace
# -------------------------------------------------------------

# A folder outside the workspace whose name the model was never given.
UNSEEN = "unseen-folder-name"
# Globs over the files of a folder outside: each answer must be the same, or they bisect its names.
BISECTING = ("id_[n-z]*", "id_[a-m]*", "*", "no-such-name-*")


@pytest.fixture
def keys(tmp_path: Path) -> tuple[Path, Path]:
    """tmp/ws (with a.txt, sub/, and `linked` a link to the folder outside) and tmp/UNSEEN/keys
    holding id_rsa."""
    ws, keys = tmp_path / "ws", tmp_path / UNSEEN / "keys"
    (ws / "sub").mkdir(parents=True)
    keys.mkdir(parents=True)
    (ws / "a.txt").write_text("inside line\n")
    (keys / "id_rsa").write_text(SECRET + "\n")
    (ws / "linked").symlink_to(keys, target_is_directory=True)
    return ws.resolve(), keys.resolve()


def _bisecting_globs(keys: Path) -> list[list[str]]:
    """For each way to reach the folder outside, the globs of BISECTING under it."""
    return [[f"{folder}/{glob}" for glob in BISECTING] for folder in (keys, "linked", f"sub/../../{UNSEEN}/keys")]


def _same_answer(globs: list[str], answers: list[str]) -> None:
    """Each glob's answer, the glob itself taken out, is the same: none tells the folder's names."""
    unspelled = [answer.replace(glob, "GLOB") for glob, answer in zip(globs, answers)]
    assert len(set(unspelled)) == 1, unspelled
    assert SECRET not in unspelled[0] and "id_rsa" not in unspelled[0], unspelled[0]


def test_a_glob_through_the_server_tells_nothing_of_a_folder_outside(keys):
    ws, folder = keys
    server = ServerProcess(ws)
    try:
        for globs in _bisecting_globs(folder):
            _same_answer(globs, [text_of(server.request("agentread/readMany", {"paths": [glob]})["result"])
                                 for glob in globs])
        assert "inside line" in text_of(server.read(path="a.txt"))
    finally:
        server.close()


def test_a_glob_through_mcp_tells_nothing_of_a_folder_outside(keys):
    from mcp_client import run, texts

    ws, folder = keys
    every = _bisecting_globs(folder)

    async def calls(client):
        answers = [[texts(await client.call_tool("read_many", {"paths": [glob]})) for glob in globs]
                   for globs in every]
        return answers, texts(await client.call_tool("read", {"path": "a.txt"}))

    answers, after = run({}, "--root", str(ws), calls=calls)
    for globs, texts_ in zip(every, answers):
        _same_answer(globs, texts_)
    assert "inside line" in after


def test_a_refusal_does_not_say_where_a_link_outside_leads(keys):
    ws, folder = keys
    (ws / "notes.txt").symlink_to(folder / "id_rsa")
    server = ServerProcess(ws)
    try:
        for path in ("notes.txt", "linked/id_rsa", "linked"):
            refused = server.read(path=path)
            assert refused["error"]["code"] == "outside_workspace", refused
            assert UNSEEN not in text_of(refused) and "outside the workspace" in text_of(refused)
        many = server.request("agentread/readMany", {"paths": ["notes.txt", "a.txt"]})["result"]
        assert UNSEEN not in text_of(many) and "inside line" in text_of(many)
        # The client, not the model, learns where it leads: to put it to the user.
        check = server.request("agentread/check", {"paths": ["notes.txt"]})["result"]["checks"][0]
        assert check["real"] == str(folder / "id_rsa") and "outside_workspace" in check["reasons"]
    finally:
        server.close()


# --- the secret rule
# ----------------------------------------------------------------------------------------

# Names of secrets, each as a copy, an editor or another spelling leaves them.
SECRET_NAMES = [".ENV", ".env ", ".env.", ".env~", "#.env#", ".Env.swp", ".git-credentials.bak", "id_ed25519_sk",
                "id_rsa.old", "work.ppk", ".htpasswd", ".netrc.orig", ".pgpass", "home/.ssh/keys/work",
                "home/.SSH.bak/config", "home/.gnupg/private-keys-v1.d/k.key", "home/.aws/sso/cache/t.json",
                "home/.config/gh/hosts.yml", "home/.docker/contexts/meta.json", "home/.password-store/mail.gpg"]


def test_secrets_spelled_any_way_need_consent_through_the_server(tmp_path: Path):
    for name in SECRET_NAMES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(SECRET + "\n")
    (tmp_path / "a.txt").write_text("inside line\n")
    server = ServerProcess(tmp_path)
    try:
        for name in SECRET_NAMES:
            refused = server.read(path=name)
            assert refused["isError"] and refused["error"]["code"] == "sensitive_file", (name, refused)
            assert SECRET not in text_of(refused)
            assert SECRET in text_of(server.read(path=name, consent=True)), name
        assert "inside line" in text_of(server.read(path="a.txt"))
    finally:
        server.close()


def test_an_archive_member_is_matched_by_the_same_rule_through_the_cli(tmp_path: Path):
    import subprocess
    import sys
    import zipfile

    with zipfile.ZipFile(tmp_path / "bundle.zip", "w") as bundle:
        for member in ("x/.ENV", "x/.env ", "x/id_ed25519_sk", "x/readme.txt"):
            bundle.writestr(member, SECRET + "\n" if member != "x/readme.txt" else "plain\n")

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "agentread", "read", *args, "--root", str(tmp_path)],
                              capture_output=True, text=True, timeout=60)

    for member in ("x/.ENV", "x/.env ", "x/id_ed25519_sk"):
        refused = cli(f"bundle.zip/{member}")
        assert refused.returncode == 1 and "secrets" in refused.stdout and SECRET not in refused.stdout, member
        assert SECRET in cli(f"bundle.zip/{member}", "--consent").stdout, member
    assert "plain" in cli("bundle.zip/x/readme.txt").stdout


def test_allowing_outside_reads_lifts_only_that_refusal_through_mcp(tmp_path: Path, monkeypatch):
    from mcp_client import run, texts

    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    (ws / "a.txt").write_text("inside line\n")
    names = ["~/.ssh/keys/work", "~/.config/gcloud/application_default_credentials.json", "~/.config/gh/hosts.yml"]
    for name in names:
        path = home / name[2:]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SECRET + "\n")
    (ws / "env.txt").symlink_to("/proc/self/environ")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AGENTREAD_TEST_SECRET", SECRET)  # in the server's environment
    paths = [*names, "/proc/self/environ", "/proc/self/cmdline", "env.txt"]

    def reading(listed: list[str]):
        async def calls(client):
            return [await client.call_tool("read", {"path": path}) for path in listed]
        return calls

    *refused, after = run({}, "--root", str(ws), "--allow-outside-roots", calls=reading([*paths, "a.txt"]))
    for path, answer in zip(paths, refused):
        assert answer.is_error and "secrets" in texts(answer) and SECRET not in texts(answer), (path, texts(answer))
    assert "inside line" in texts(after)
    allowed = run({}, "--root", str(ws), "--allow-outside-roots", "--allow-sensitive", calls=reading(names))
    for path, answer in zip(names, allowed):
        assert SECRET in texts(answer), path


def test_a_hard_link_needs_consent_through_the_server(layout):
    ws, outside = layout
    (ws / ".env").write_text(SECRET + "\n")
    os.link(outside / "secret.txt", ws / "notes.txt")  # another name of a file outside
    os.link(ws / ".env", ws / "settings.txt")  # another name of a secret
    server = ServerProcess(ws)
    try:
        for name in ("notes.txt", "settings.txt"):
            refused = server.read(path=name)
            assert refused["isError"] and refused["error"]["code"] == "sensitive_file", refused
            assert "hard link" in text_of(refused) and SECRET not in text_of(refused)
            assert SECRET in text_of(server.read(path=name, consent=True))
        many = server.request("agentread/readMany", {"paths": ["*.txt"]})["result"]
        states = {f["path"]: f["state"] for f in many["files"]}
        assert states == {"a.txt": "whole", "notes.txt": "error", "settings.txt": "error"}
        assert SECRET not in text_of(many)
        check = server.request("agentread/check", {"paths": ["notes.txt", "a.txt"]})["result"]["checks"]
        assert [c["reasons"] for c in check] == [["sensitive_file"], []]
    finally:
        server.close()


def test_the_default_sensitive_patterns_are_what_package_json_gives_vs_code():
    """The extension sends its setting's list, which replaces the server's: one default list."""
    import json

    from agentread.workspace import DEFAULT_SENSITIVE_PATTERNS

    manifest = json.loads((Path(__file__).resolve().parents[1] / "package.json").read_text())
    setting = manifest["contributes"]["configuration"]["properties"]["agentread.sensitiveFiles"]
    assert tuple(setting["default"]) == DEFAULT_SENSITIVE_PATTERNS
