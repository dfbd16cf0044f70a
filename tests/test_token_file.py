"""A token that no other local user sees: `--token-file` (a file, or `-` for stdin) for the client
commands and the benchmark, and a benchmark report that never records the token given as `--token`."""

from __future__ import annotations

import asyncio
import contextlib
import grp
import io
import json
import os
import pwd
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from npu_worker.bench.cli import main as bench_main
from npu_worker.cli_client import main as client_main
from npu_worker.command_line_secrets import read_token_file, token_file_warning
from tests.timing import seconds

ROOT = Path(__file__).resolve().parents[1]

TOKEN = "a-token-of-some-length-0123456789"
NOBODY = 65534  # a user id of no one here


def base_of(test_client: Any) -> str:
    return f"http://127.0.0.1:{test_client.port}"


def synth_argv(server: Any, tmp_path: Path) -> list[str]:
    return ["synth", "안녕하세요", "-o", str(tmp_path / "a.wav"), "--base", base_of(server)]


def bench_argv(server: Any, tmp_path: Path) -> list[str]:
    argv = ["bench", "--base", base_of(server), "--rps", "3", "--duration", "1", "--requests", "1"]
    return [*argv, "--transports", "http", "--wav-dir", str(tmp_path), "--out", str(tmp_path / "r")]


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder every local user may pass through, as a home folder often is (pytest's tmp_path sits
    in one only its user may enter, where no file is readable by others)."""
    folder = Path(tempfile.mkdtemp(prefix="token-file-"))
    folder.chmod(0o755)
    for above in folder.parents:
        if not os.stat(above).st_mode & 0o001:
            shutil.rmtree(folder)
            pytest.skip(f"{above} is closed to other users: no file under it is readable by them")
    yield folder
    shutil.rmtree(folder)


@pytest.fixture(autouse=True)
def no_token_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NPU_WORKER_TOKEN", raising=False)


@pytest.mark.parametrize(
    "written",
    [TOKEN + "\n", TOKEN + "\r\n", "\ufeff" + TOKEN + "\r\n"],
    ids=["echo", "crlf", "bom"],  # as `echo`, a Windows editor, Notepad's "UTF-8 with BOM" leave it
)
async def test_synth_reads_its_token_from_a_file_and_warns_of_nothing(worker, tmp_path, capsys, written):
    server = await worker(token=TOKEN)
    secret = tmp_path / "token"
    secret.write_bytes(written.encode("utf-8"))
    secret.chmod(0o600)
    code = await asyncio.to_thread(client_main, [*synth_argv(server, tmp_path), "--token-file", str(secret)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert (tmp_path / "a.wav").exists() and "warning" not in err


async def test_synth_reads_its_token_from_standard_input(worker, tmp_path, capsys, monkeypatch):
    server = await worker(token=TOKEN)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(TOKEN.encode())))
    code = await asyncio.to_thread(client_main, [*synth_argv(server, tmp_path), "--token-file", "-"])
    assert code == 0, capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "cannot read --token-file {path}: No such file or directory"),
        ("\n", "--token-file {path} holds no token"),
        ("x" * 5000, "--token-file {path} holds more than 4096 bytes: not a token"),
        (  # the header's value copied whole: it went out as `Bearer Bearer ...`, refused as a wrong token
            f"Bearer {TOKEN}\n",
            "--token-file {path} holds 'Bearer ' and the token: write the token alone (what follows 'Bearer ')",
        ),
        (f"bearer  {TOKEN}", "--token-file {path} holds 'Bearer ' and the token: write the token alone"),
        (f"Bearer\t{TOKEN}", "--token-file {path} holds 'Bearer ' and the token: write the token alone"),
    ],
)
def test_a_token_file_that_holds_no_token_is_one_line_and_exit_two(tmp_path, capsys, content, problem):
    path = tmp_path / "token"
    if content is not None:
        path.write_text(content, encoding="utf-8")
        path.chmod(0o600)
    argv = ["synth", "x", "-o", str(tmp_path / "a.wav"), "--base", "http://127.0.0.1:9"]
    assert client_main([*argv, "--token-file", str(path)]) == 2
    assert capsys.readouterr().err.startswith(f"npu-worker synth: {problem.format(path=path)}")


def test_a_token_and_a_token_file_together_are_refused(tmp_path, capsys):
    argv = ["synth", "x", "-o", str(tmp_path / "a.wav"), "--token", TOKEN, "--token-file", "-"]
    with pytest.raises(SystemExit) as stop:
        client_main(argv)
    assert stop.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("mode", "folder_mode", "warned"),
    [
        (0o644, 0o755, True),
        (0o644, 0o711, True),
        (0o640, 0o755, False),
        (0o600, 0o755, False),
        (0o644, 0o700, False),
    ],
)
async def test_a_token_file_every_local_user_can_read_is_warned_about(
    worker, tmp_path, open_folder, capsys, mode, folder_mode, warned
):
    """`echo T > token` under umask 022 makes a file every local user reads: as open as the flag. Not in
    a folder others cannot pass through (`chmod 700 ~/secrets`): it was warned about all the same."""
    server = await worker(token=TOKEN)
    secret = open_folder / "secrets" / "token"
    secret.parent.mkdir()
    secret.write_text(TOKEN, encoding="utf-8")
    secret.chmod(mode)
    secret.parent.chmod(folder_mode)
    argv = [*synth_argv(server, tmp_path), "--token-file", str(secret)]
    assert await asyncio.to_thread(client_main, argv) == 0
    err = capsys.readouterr().err
    expected = (
        f"npu-worker synth: warning: --token-file {secret} can be read by every local user (mode {mode:o}); "
        f"`chmod o-r {secret}` (or 600) keeps the token yours"
    )
    assert (expected in err.splitlines()) is warned, err
    assert ("warning" in err) is warned


async def test_the_bench_reads_its_token_from_a_file(worker, tmp_path, capsys):
    server = await worker(token=TOKEN)
    secret = tmp_path / "token"
    secret.write_text(TOKEN, encoding="utf-8")
    code = await asyncio.to_thread(bench_main, [*bench_argv(server, tmp_path), "--token-file", str(secret)])
    assert code == 0, capsys.readouterr().err
    recorded = json.loads((tmp_path / "r.json").read_text())
    assert [record["error"] for record in recorded["records"]] == [None]


@pytest.mark.parametrize("given", [["--token", TOKEN], [f"--token={TOKEN}"]])
async def test_the_bench_report_never_records_a_token_given_as_a_flag(worker, tmp_path, capsys, given):
    """The report's command line is published with its figures (benchmarks/): it held the token."""
    server = await worker(token=TOKEN)
    code = await asyncio.to_thread(bench_main, [*bench_argv(server, tmp_path), *given])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "npu-worker bench: warning: --token was given on the command line" in err
    for report in (tmp_path / "r.json", tmp_path / "r.md"):
        text = report.read_text(encoding="utf-8")
        assert TOKEN not in text and "<hidden>" in text, report


def read_screen(leader: int, screen: bytes, enough: bytes, limit: float) -> bytes:
    """What the terminal shows, read until it holds `enough`, the child has gone, or `limit` s passed."""
    deadline = time.monotonic() + limit
    while enough not in screen and (left := deadline - time.monotonic()) > 0:
        if not select.select([leader], [], [], left)[0]:
            break
        try:
            piece = os.read(leader, 1024)
        except OSError:  # the child has gone: the terminal is closed
            break
        if not piece:
            break
        screen += piece
    return screen


@pytest.mark.allow_blocking
@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_a_token_typed_at_a_terminal_is_asked_for_and_not_echoed(tmp_path):
    """`--token-file -` at a terminal waited, with no word, for keys it echoed: the token stood on the
    screen. It asks, and reads the token with echo off."""
    leader, follower = os.openpty()
    code = "from npu_worker.command_line_secrets import read_token_file; print(len(read_token_file('-')))"
    child = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        start_new_session=True,  # the pty is its controlling terminal: getpass asks there
    )
    os.close(follower)
    try:
        screen = read_screen(leader, b"", b"token", seconds(10))
        assert b"token (not echoed)" in screen, screen  # asked before anything is typed
        os.write(leader, TOKEN.encode() + b"\n")
        screen = read_screen(leader, screen, str(len(TOKEN)).encode(), seconds(30))
    finally:
        os.close(leader)
        child.kill()
        child.wait()
    assert TOKEN.encode() not in screen and str(len(TOKEN)).encode() in screen, screen


@pytest.mark.skipif(os.geteuid() != 0, reason="a file of another user's is made by root only")
@pytest.mark.parametrize("linked", [False, True])
def test_a_token_file_another_user_owns_is_warned_about(tmp_path, linked):
    """Its owner reads it whatever its mode and may put a token of theirs in it (as one left in /tmp):
    a 600 file of theirs, or a link of theirs to a file of ours, passed in silence."""
    secret = tmp_path / "token"
    secret.write_text(TOKEN, encoding="utf-8")
    secret.chmod(0o600)
    given = secret
    if linked:
        given = tmp_path / "link"
        given.symlink_to(secret)
        os.chown(given, NOBODY, NOBODY, follow_symlinks=False)
    else:
        os.chown(secret, NOBODY, NOBODY)
    assert token_file_warning(str(given)) == (
        f"--token-file {given} belongs to another user (uid {NOBODY}), who can read it and put another "
        "token in it whatever its mode; keep the token in a file of your own (600)"
    )
    os.chown(given, os.geteuid(), os.getegid(), follow_symlinks=False)
    os.chown(secret, os.geteuid(), os.getegid())
    assert token_file_warning(str(given)) is None  # ours, 600: nothing to say


def test_a_fifo_no_one_writes_yet_is_waited_on_and_said(tmp_path, capsys):
    """`mkfifo token`: the open blocked in silence (`serve` hung at start); the wait is said on stderr, and
    what is then written is the token."""
    fifo = tmp_path / "token"
    os.mkfifo(fifo)
    read: list[str] = []
    reader = threading.Thread(target=lambda: read.append(read_token_file(str(fifo))), daemon=True)
    reader.start()
    said = ""
    try:
        deadline = time.monotonic() + seconds(10)
        while "waiting" not in said and time.monotonic() < deadline:
            time.sleep(0.05)
            said += capsys.readouterr().err
    finally:
        with contextlib.suppress(OSError):  # (ENXIO: the reader has gone, having read no token)
            writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.write(writer, (TOKEN + "\n").encode())
            os.close(writer)
        reader.join(seconds(10))
    assert said == (
        f"npu-worker: waiting for the token to be written to --token-file {fifo} (a FIFO; Ctrl-C stops)\n"
    )
    assert read == [TOKEN]


def shared_group() -> tuple[int, str]:
    """A group this process may give its files (root: any) with a member besides it: its gid and that
    member's name (a member by the group's list or by a user's own group)."""
    mine = {os.geteuid(), 0}
    allowed = None if os.geteuid() == 0 else {os.getegid(), *os.getgroups()}
    for group in grp.getgrall():
        if allowed is not None and group.gr_gid not in allowed:
            continue
        users = [u.pw_name for u in pwd.getpwall() if u.pw_uid not in mine and u.pw_gid == group.gr_gid]
        users += [name for name in group.gr_mem if pwd.getpwnam(name).pw_uid not in mine]
        if users:
            return group.gr_gid, users[0]
    pytest.skip("no group this user may give a file has another member")


@pytest.mark.parametrize(
    ("mode", "folder_mode", "file_in_group", "warned"),
    [
        (0o644, 0o750, False, True),  # the folder's group enters, and reads by the file's others' bit
        (0o640, 0o755, True, True),
        (0o640, 0o710, True, True),
        (0o604, 0o750, True, False),  # the group's bits (none) are theirs, not the others'
        (0o644, 0o700, False, False),
        (0o600, 0o750, True, False),
    ],
)
def test_a_token_file_another_users_group_can_read_is_warned_about(
    open_folder, mode, folder_mode, file_in_group, warned
):
    """Only every local user's reach was judged: a 0644 token in a 0750 folder of a shared group (or a
    0640 one of that group) passed as private, though each member of the group could read it."""
    gid, member = shared_group()
    secret = open_folder / "secrets" / "token"
    secret.parent.mkdir()
    secret.write_text(TOKEN, encoding="utf-8")
    os.chown(secret.parent, -1, gid)
    if file_in_group:
        os.chown(secret, -1, gid)
    secret.chmod(mode)
    secret.parent.chmod(folder_mode)
    said = token_file_warning(str(secret))
    assert (said is not None) is warned, said
    if warned:
        assert said is not None and said.startswith(
            f"--token-file {secret} can be read by other users through their groups ({member}"
        ), said
        assert f"mode {mode:o}" in said and f"`chmod 600 {secret}`" in said, said


def set_acl(path: Path, named: list[tuple[int, int, int]], mask: int) -> None:
    """`path`'s POSIX access ACL, as `setfacl` writes it (owner rw, group and others none), with the
    `named` entries (tag, permissions, id) and `mask`; skips where the file system takes none."""
    entries = [
        (0x01, 6, 0xFFFFFFFF),
        *named,
        (0x04, 0, 0xFFFFFFFF),
        (0x10, mask, 0xFFFFFFFF),
        (0x20, 0, 0xFFFFFFFF),
    ]
    blob = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *entry) for entry in sorted(entries))
    try:
        os.setxattr(path, "system.posix_acl_access", blob)
    except (OSError, AttributeError) as exc:
        pytest.skip(f"no POSIX ACLs here: {exc}")


@pytest.mark.parametrize(
    ("named", "mask", "said"),
    [
        ([(0x02, 4, 65534)], 4, "user {user}"),  # setfacl -m u:nobody:r
        ([(0x08, 4, 65534)], 4, "group {group}"),  # setfacl -m g:nogroup:r
        ([(0x02, 4, 65534)], 0, None),  # the mask takes the read away
        ([(0x02, 2, 65534)], 6, None),  # write only
    ],
)
def test_a_token_file_an_acl_lets_another_user_read_is_warned_about(tmp_path, named, mask, said):
    """A 0600 file that `setfacl -m u:bob:r` opened to bob passed as private: only the mode was read."""
    secret = tmp_path / "token"
    secret.write_text(TOKEN, encoding="utf-8")
    secret.chmod(0o600)
    set_acl(secret, named, mask)
    warning = token_file_warning(str(secret))
    if said is None:
        assert warning is None, warning
        return
    who = said.format(
        user=pwd.getpwuid(65534).pw_name if said.startswith("user") else "",
        group=grp.getgrgid(65534).gr_name if said.startswith("group") else "",
    )
    assert warning == (
        f"--token-file {secret} has an ACL that lets {who} read it (getfacl {secret}); "
        f"`setfacl -b {secret}` keeps the token yours"
    )


def test_a_private_token_file_is_judged_without_the_account_lists(tmp_path):
    """Every token file made the worker list all users and all groups (getpwall, getgrall), even a 0600
    one no one else may read: where they come from a directory service that is slow or unreachable, the
    command hung at start. Here /etc/passwd and /etc/group are FIFOs no one writes (a mount namespace of
    the child's own): reading either would block."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare here")
    secret = tmp_path / "token"
    secret.write_text(TOKEN, encoding="utf-8")
    secret.chmod(0o600)
    blocking = tmp_path / "no-writer"
    os.mkfifo(blocking)
    binds = f"mount --bind {blocking} /etc/passwd && mount --bind {blocking} /etc/group"
    probe = subprocess.run(["unshare", "-m", "sh", "-c", binds], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"no mount namespace here: {probe.stderr.decode(errors='replace').strip()}")
    judge = (
        "from npu_worker.command_line_secrets import token_file_warning; "
        f"print(token_file_warning({str(secret)!r}))"
    )
    try:
        done = subprocess.run(
            ["unshare", "-m", "sh", "-c", f'{binds} && exec "$0" -c "$1"', sys.executable, judge],
            capture_output=True,
            text=True,
            timeout=seconds(30),
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError("judging a 0600 token file read the account lists (it hung)") from None
    assert (done.returncode, done.stdout) == (0, "None\n"), done.stderr


def test_an_acl_mask_is_not_read_as_the_owning_groups_bits(open_folder):
    """With an ACL, a file's group bits are its mask: `setfacl -m u:nobody:r` on a 600 token file of a
    shared group shows 640, and the group's members were named as its readers (their own entry gives
    them nothing) while the user the ACL lets read it was not."""
    gid, _ = shared_group()
    secret = open_folder / "secrets" / "token"
    secret.parent.mkdir()
    secret.write_text(TOKEN, encoding="utf-8")
    os.chown(secret, -1, gid)
    secret.chmod(0o600)
    set_acl(secret, [(0x02, 4, 65534)], 4)
    assert os.stat(secret).st_mode & 0o777 == 0o640
    assert token_file_warning(str(secret)) == (
        f"--token-file {secret} has an ACL that lets user {pwd.getpwuid(65534).pw_name} read it "
        f"(getfacl {secret}); `setfacl -b {secret}` keeps the token yours"
    )


@pytest.mark.parametrize("command", ["synth", "batch"])
@pytest.mark.parametrize("given", [None, "not-the-token"], ids=["none", "wrong"])
async def test_a_refused_token_is_said_in_the_commands_own_flags(worker, tmp_path, capsys, command, given):
    """`synth` and `batch` relayed the worker's 401 alone, which names `Authorization: Bearer` and
    `?token=`: neither is anything their caller sets (`bench` named --token-file already)."""
    server = await worker(token=TOKEN)
    if command == "synth":
        argv = synth_argv(server, tmp_path)
    else:
        lecture = tmp_path / "lecture.json"
        lecture.write_text(json.dumps({"sections": [{"text": "안녕하세요."}]}), encoding="utf-8")
        argv = ["batch", str(lecture), "--out-dir", str(tmp_path / "out"), "--base", base_of(server)]
    if given is not None:
        secret = tmp_path / "token"
        secret.write_text(given, encoding="utf-8")
        secret.chmod(0o600)
        argv += ["--token-file", str(secret)]
    code = await asyncio.to_thread(client_main, argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[0].startswith(f"npu-worker {command}: HTTP 401: Unauthorized: ")
    if given is None:
        assert err[0].endswith("; the worker wants a token: give --token-file PATH or NPU_WORKER_TOKEN")
    else:
        assert err[0].endswith(
            "; the worker refused the token given: check it (--token-file, NPU_WORKER_TOKEN or --token)"
        )
