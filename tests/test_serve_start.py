"""`npu-worker serve` that cannot start says why in one line instead of a traceback: exit 1 for the
machine (an address already taken, a state directory that cannot be one), 2 for a setting."""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from npu_worker import other_writers
from tests.log_drain import LoggedProcess
from tests.timing import seconds
from tests.worker_process import refusing_port

REPO = Path(__file__).resolve().parents[1]


def serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "npu_worker.cli", "serve", *args]
    environ = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run(command, env=environ, capture_output=True, text=True, timeout=seconds(60))


# beyond loopback: its warning said "listening on '0.0.0.0'" before the bind was refused
@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_a_port_already_taken_is_one_line_and_exit_1(tmp_path, host):
    with socket.socket() as taken:
        taken.bind((host, 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = serve("--host", host, "--port", str(port), "--state-dir", str(tmp_path / "state"))
    assert done.returncode == 1, done.stderr
    assert f"npu-worker serve: cannot listen on {host}:{port}: " in done.stderr
    assert "address already in use" in done.stderr.lower() and "Traceback" not in done.stderr
    assert "engine ready" not in done.stderr  # said before the engine loads and jobs resume
    assert "listening on" not in done.stderr  # its start line said so before the bind was refused


def test_a_state_directory_that_is_a_file_or_cannot_be_made_is_one_line_and_exit_1(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("not a directory")
    for state, reason in ((a_file, "Not a directory"), (a_file / "state", "Not a directory")):
        done = serve("--port", "0", "--state-dir", str(state))
        assert done.returncode == 1, done.stderr
        assert f"npu-worker serve: cannot use the state directory {state}: {reason}" in done.stderr
        assert "Traceback" not in done.stderr


def test_a_state_directory_others_can_write_in_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    done = serve("--port", "0", "--state-dir", str(shared))
    assert done.returncode == 1, done.stderr
    assert f"cannot use the state directory {shared}: others can write in it (mode 777)" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_state_directory_of_another_user_is_refused(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("giving a directory to another user needs root")
    planted = tmp_path / "planted"
    planted.mkdir(mode=0o700)
    os.chown(planted, 65534, 65534)
    done = serve("--port", "0", "--state-dir", str(planted))
    assert done.returncode == 1, done.stderr
    assert "belongs to another user (uid 65534)" in done.stderr and "Traceback" not in done.stderr


def test_a_state_directory_another_user_could_replace_is_refused(tmp_path):
    """Whoever owns a folder above the state dir (or a link on the way), or may write in one that is not
    sticky, could swap the state dir while the worker runs: its cache and job logs would be theirs."""
    if os.geteuid() != 0:
        pytest.skip("giving a directory to another user needs root")
    theirs = tmp_path / "theirs"
    (theirs / "state").mkdir(parents=True, mode=0o700)
    os.chown(theirs, 65534, 65534)
    open_to_all = tmp_path / "open"
    (open_to_all / "state").mkdir(parents=True, mode=0o700)
    open_to_all.chmod(0o777)
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    (sticky / "target").mkdir(mode=0o700)
    (sticky / "link").symlink_to(sticky / "target")
    os.lchown(sticky / "link", 65534, 65534)
    refusals = {
        theirs / "state": f"{theirs} belongs to another user (uid 65534)",
        open_to_all / "state": f"others can write in {open_to_all} (mode 777, not sticky)",
        sticky / "link": f"{sticky / 'link'} belongs to another user (uid 65534)",
    }
    for state, reason in refusals.items():
        done = serve("--port", "0", "--state-dir", str(state))
        assert done.returncode == 1, done.stderr
        assert f"cannot use the state directory {state}: {reason}" in done.stderr, done.stderr
    mine = sticky / "mine"  # a folder of its own in a sticky one (the temp dir) is fine
    mine.mkdir(mode=0o700)
    assert other_writers.replaceable_by_others(mine) is None


def test_a_state_directory_an_acl_lets_another_user_write_in_is_refused(tmp_path):
    """`drwxrwx---+ root root` with `user:nobody:rwx`: root's group counts as the owner, so the group bits
    (the ACL's mask) passed, and nobody could plant job records and cache entries."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    undefined = 0xFFFFFFFF
    entries = [(0x01, 7, undefined), (0x02, 7, 65534), (0x04, 0, undefined), (0x10, 7, undefined)]
    entries.append((0x20, 0, undefined))  # owner rwx, user nobody rwx, group ---, mask rwx, other ---
    acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *entry) for entry in entries)
    try:
        os.setxattr(state, "system.posix_acl_access", acl)
    except OSError as exc:
        pytest.skip(f"no POSIX ACLs here: {exc}")
    done = serve("--port", "0", "--state-dir", str(state))
    assert done.returncode == 1, done.stderr
    assert f"cannot use the state directory {state}: others can write in it (mode 770)" in done.stderr


def test_a_state_directory_another_worker_serves_from_is_refused(tmp_path):
    """Two workers on one state dir would both resume the same interrupted jobs into one log."""
    state = tmp_path / "state"
    first = LoggedProcess(
        [sys.executable, "-m", "npu_worker.cli", "serve", "--port", "0", "--state-dir", str(state)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:  # the first one holds the directory once it says where it listens
        first.log_until("listening on", seconds(30))
        done = serve("--port", "0", "--state-dir", str(state))
        assert done.returncode == 1, done.stderr
        assert done.stderr.strip() == (
            f"npu-worker serve: the state directory {state} is in use by another npu-worker serve "
            "(each worker, and each node of a cluster, needs its own --state-dir)"
        )
        # its stop is a drain (exit 0) once it serves: a SIGTERM before `run` sets its handlers kills it,
        # and the refusal came before the first's app was built (the lock is taken before that import)
        first.log_until("--port 0: listening on port", seconds(30))
    finally:
        first.terminate()
        first.wait(timeout=seconds(30))
    assert first.returncode == 0


def test_a_state_directory_the_worker_cannot_write_in_is_refused(tmp_path):
    """One that is read-only was accepted: /ready said ready while every batch got 503 StateUnavailable."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    if subprocess.run(["chattr", "+i", str(state)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i (an immutable folder, unwritable even for root) is not available here")
    try:
        done = serve("--port", "0", "--state-dir", str(state))
    finally:
        subprocess.run(["chattr", "-i", str(state)], check=True)
    assert done.returncode == 1, done.stderr
    assert f"cannot use the state directory {state}: the worker cannot write in it" in done.stderr


def test_a_queue_password_in_the_query_is_not_shown_when_the_queue_is_refused(tmp_path):
    """redis-py takes `?password=`; the refusal (and the node's start line) showed it as given."""
    with refusing_port() as port:
        queue = f"redis://127.0.0.1:{port}/0?password=s3cret"
        done = serve("--port", "0", "--state-dir", str(tmp_path / "state"), "--queue", queue)
    assert done.returncode == 1, done.stderr
    assert f"cannot use the queue redis://127.0.0.1:{port}/0?password=***" in done.stderr
    assert "s3cret" not in done.stderr


def test_a_queue_it_cannot_use_is_its_one_line_and_exit_1(tmp_path):
    """As every other refusal of `serve`: one line that begins `npu-worker serve:`; an unreachable queue's
    began `npu-worker:`, and a node without the redis package said none."""
    with refusing_port() as port:
        queue = f"redis://127.0.0.1:{port}/0"
        done = serve("--port", "0", "--state-dir", str(tmp_path / "state"), "--queue", queue)
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"npu-worker serve: cannot use the queue {queue}: "), line


def test_a_queue_without_the_redis_package_is_one_line_naming_the_env_var(tmp_path):
    """A node installed without the `redis` extra, its queue from the service's env file."""
    (tmp_path / "no_redis" / "redis").mkdir(parents=True)  # an installation whose redis cannot import
    (tmp_path / "no_redis" / "redis" / "__init__.py").write_text('raise ImportError("no redis here")\n')
    with refusing_port() as port:
        queue = f"redis://127.0.0.1:{port}/0"
        env = {"NPU_WORKER_QUEUE": queue, "PYTHONPATH": f"{tmp_path / 'no_redis'}{os.pathsep}{REPO}"}
        done = serve("--port", "0", "--state-dir", str(tmp_path / "state"), env=env)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        f"npu-worker serve: NPU_WORKER_QUEUE {queue} needs the redis package: pip install '.[redis]' in the "
        "npu-worker checkout (no redis here)"
    ]


def test_a_state_directory_on_a_full_filesystem_is_refused(tmp_path):
    """A full disk still makes the empty file the start-up check made: the worker started, /ready said
    ready, and every batch got 503 StateUnavailable."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)]).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root")
    try:
        state = disk / "state"
        state.mkdir(mode=0o700)
        with contextlib.suppress(OSError), open(disk / "filler", "wb") as filler:
            while True:
                filler.write(b"\0" * 4096)
                filler.flush()
        done = serve("--port", "0", "--state-dir", str(state))
    finally:
        subprocess.run(["umount", str(disk)], check=True)
    assert done.returncode == 1, done.stderr
    assert (
        f"cannot use the state directory {state}: the worker cannot write in it (No space left" in done.stderr
    )


@pytest.mark.parametrize(
    ("args", "env", "line"),
    [
        (["--port", "70000"], {}, "argument --port: must be a whole number from 0 to 65535, not '70000'"),
        (["--prot", "7768"], {}, "unrecognized arguments: --prot 7768"),
        (["--shutdown-grace", "1e10"], {}, "argument --shutdown-grace: must be seconds from 0 s to 1 day"),
        ([], {"NPU_WORKER_HEADER_TIMEOUT": "1e-9"}, "NPU_WORKER_HEADER_TIMEOUT: must be seconds from 0.1 s"),
        ([], {"NPU_WORKER_TOKEN": ""}, "NPU_WORKER_TOKEN: set but empty: unset it to run without a token"),
        ([], {"NPU_WORKER_TOKN": "s3cret"}, "NPU_WORKER_TOKN is not a setting (NPU_WORKER_TOKEN?)"),
        (["--role", "engine"], {}, "--role engine needs a shared queue (--queue redis://HOST:PORT/DB)"),
        # found once the flags are read: they came after the start's line and its warnings
        (["--chunk-schedule-ms", "0.01"], {}, "chunk sizes must be at least one sample, got (0.01,) ms"),
        (
            ["--backend", "zipvoice-onnx", "--model-dir", "/nonexistent-model"],
            {"NPU_WORKER_NUM_STEPS": "0"},
            "invalid ZipVoice configuration: num_steps (NPU_WORKER_NUM_STEPS) must be in 1..64, got 0",
        ),
    ],
)
def test_a_refused_setting_is_one_line_naming_it_and_exit_2(tmp_path, args, env, line):
    """README's promise, for a flag argparse refuses (no usage text first) and an env var alike; before,
    `--shutdown-grace 1e10` and the empty token started a worker (the first then crashed at SIGTERM)."""
    done = serve("--port", "0", "--state-dir", str(tmp_path / "state"), *args, env=env)
    assert done.returncode == 2, done.stderr
    [shown] = done.stderr.splitlines()
    assert shown.startswith(f"npu-worker serve: {line}"), shown


LONG_TOKEN = "Ig7s2Hd-0kQwXbV9rT4uLmN1pYcZeA8f"  # as secrets.token_urlsafe(24) makes: no warning


def test_a_short_token_warns_at_start(tmp_path):
    """Not refused, but said: failed tries are not limited, so a short token may be guessed (nothing was
    said of `--token s3cret` before)."""
    process, log = start(tmp_path, env={"NPU_WORKER_TOKEN": "s3cret"})
    log += stop(process)
    warnings = warned(log)
    assert len(warnings) == 1 and "the token has 6 characters: anyone who can reach" in warnings[0], log


def test_a_token_on_the_command_line_warns_at_start(tmp_path):
    """`--token` puts the secret in the worker's arguments, which every local user reads (`ps`): said at
    start, naming the env var to use instead, without the token itself (nothing was said before)."""
    process, log = start(tmp_path, "--token", LONG_TOKEN)
    try:
        arguments = Path(f"/proc/{process.pid}/cmdline").read_bytes().split(b"\0")
        assert LONG_TOKEN.encode() in arguments  # what any local user sees, hence the warning
    finally:
        log += stop(process)
    [warning] = warned(log)
    assert "--token was given on the command line, which every local user can read" in warning, log
    assert "give it as NPU_WORKER_TOKEN in the environment" in warning and LONG_TOKEN not in log


def test_a_queue_password_on_the_command_line_is_named_as_a_secret():
    """`--queue redis://:pw@host` shows the password to every local user as `--token` does; a queue URL
    without one is no secret."""
    from npu_worker.command_line_secrets import secrets_on_command_line

    def flags(**given: str) -> list[str]:
        return secrets_on_command_line(argparse.Namespace(**{"token": None, "queue": None, **given}))

    assert flags(queue="redis://:s3cret@127.0.0.1:6379/0") == ["--queue"]
    assert flags(queue="redis://127.0.0.1:6379/0?password=s3cret") == ["--queue"]
    assert flags(queue="redis://127.0.0.1:6379/0") == [] and flags() == []
    assert flags(queue="rediss://127.0.0.1:6380/0?ssl_password=s3cret") == ["--queue"]  # the TLS key's
    assert flags(queue="redis://:Ab/cd@127.0.0.1:6379/0") == ["--queue"]  # a base64 one, unencoded
    # No secret, only spelt otherwise once parsed (a scheme in capitals, a bare `?`): no warning
    assert flags(queue="Redis://127.0.0.1:6379/0") == flags(queue="redis://127.0.0.1:6379/0?") == []
    assert flags(queue="redis://user@127.0.0.1:6379/0?client_name=a%40b") == []
    assert flags(queue="redis://[::1]:6379/0?client_name=a@b") == []  # an IPv6 host's `:` is no password's
    assert secrets_on_command_line(argparse.Namespace()) == []  # a command without these flags


def test_a_token_in_the_environment_is_no_warning_and_silences_the_open_address_and_every_origin(tmp_path):
    """NPU_WORKER_TOKEN is the way the `--token` warning names; with it, neither `--host 0.0.0.0` nor
    `--allowed-origins *` is said (each warns without a token, above). One start for the three."""
    with_token, log = start(
        tmp_path, "--host", "0.0.0.0", "--allowed-origins", "*", env={"NPU_WORKER_TOKEN": LONG_TOKEN}
    )
    log += stop(with_token)
    assert not warned(log), log
    assert "npu-worker stopped" in log, log


def test_an_output_root_not_made_yet_warns_at_start(tmp_path):
    """Whoever makes it first (in /tmp, any local user) owns every wav written under it: said at start
    (it was accepted silently)."""
    missing = tmp_path / "not-yet"
    process, log = start(tmp_path, "--output-roots", str(missing))
    log += stop(process)
    [warning] = warned(log)
    assert f"output root {missing} is not a folder (yet): whoever makes it owns" in warning, log


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to make another user's folder"
)
def test_an_output_root_another_user_owns_warns_at_start(tmp_path):
    """Its owner may rename the worker's wavs away and put their own audio in their place (the walk at
    write time refuses links, not an owner's renames): said at start; the worker's own root is not."""
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    theirs.mkdir()
    ours.mkdir()
    os.chown(theirs, 65534, 65534)
    process, log = start(tmp_path, "--output-roots", f"{theirs}{os.pathsep}{ours}")
    log += stop(process)
    [warning] = warned(log)
    assert f"output root {theirs}: {theirs} belongs to another user (uid 65534)" in warning, log


def warned(log: str) -> list[str]:
    """The WARNING lines of a start-up log, but the one for root (tests may run as root)."""
    return [line for line in log.splitlines() if " WARNING " in line and "running as root" not in line]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs to run as root")
def test_serving_as_root_warns_at_start(tmp_path):
    """Not refused (a container may have no other user), but said: root passes every permission check,
    so the owner checks on output paths and ref_wav protect nothing (nothing was said before)."""
    process, log = start(tmp_path)
    log += stop(process)
    [warning] = [line for line in log.splitlines() if " WARNING " in line]
    assert "running as root: root passes every permission check" in warning, log


def test_serving_beyond_loopback_without_a_token_warns_at_start(tmp_path):
    """Not refused (a proxy may stand in front), but said: anyone who reaches the address may use it."""
    open_to_all, log = start(tmp_path, "--host", "0.0.0.0")
    log += stop(open_to_all)
    warnings = warned(log)
    assert len(warnings) == 1 and "--host '0.0.0.0' is beyond loopback and there is no --token" in warnings[0]


def test_allowing_every_origin_without_a_token_warns_at_start(tmp_path):
    """`*` lets every web page a local browser opens call the worker (no Host check either): said at start."""
    every_page, log = start(tmp_path, "--allowed-origins", "*")
    log += stop(every_page)
    warnings = warned(log)
    assert len(warnings) == 1 and "--allowed-origins * without --token" in warnings[0], log


def test_port_0_says_which_port_it_listens_on_and_the_longest_grace_still_ends_on_sigterm(tmp_path):
    """The start line said `:0`, a port no one listens on, and the port the system chose was written
    nowhere (callers could not find it): the start line says the port is chosen, the next one which.
    With the longest shutdown grace taken, 1 day, a SIGTERM drains and exits 0 (past
    threading.TIMEOUT_MAX it overflowed). One start for both: a start is seconds of CPU."""
    process, log = start(tmp_path, "--shutdown-grace", "86400")
    try:
        [first] = [line for line in log.splitlines() if "npu_worker: npu-worker " in line]
        # the first it logs (the app is built before it, to refuse a bad setting alone: its formats
        # line came first, a journal's start no longer the version's)
        assert log.splitlines()[0] == first, log
        assert "127.0.0.1:0" not in first, first
        assert first.endswith(
            "starting on http://127.0.0.1, on the port the system chooses (said once it listens)"
        )
        [line] = [line for line in log.splitlines() if "--port 0: listening on port " in line]
        port = int(line.rpartition(" ")[2])
        deadline = time.monotonic() + seconds(30)  # (a 503 Loading while the kept jobs are still read,
        while True:  # after "engine ready": on a busy CI worker, 2026-12-06)
            with socket.create_connection(("127.0.0.1", port), timeout=seconds(10)) as connection:
                connection.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                head = connection.recv(64)
            if not head.startswith(b"HTTP/1.1 503") or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert head.startswith(b"HTTP/1.1 200")
    finally:
        log = stop(process)
    assert process.returncode == 0, f"a SIGTERM with --shutdown-grace 86400 did not exit 0: {log}"
    assert "Traceback" not in log and "npu-worker stopped" in log, log


def test_the_port_line_comes_once_the_socket_takes_connections(tmp_path):
    """The port was said once bound, before the app's setup and the socket's `listen`: a caller that
    connected as soon as it read the line was refused (for 50-100 ms)."""
    from tests.serve_process import ServeProcess

    process = ServeProcess(
        ["--state-dir", str(tmp_path / "state")], env={**os.environ, "PYTHONPATH": str(REPO)}
    )
    try:
        port = process.port  # at once, as the line comes (read on a thread)
        with socket.create_connection(("127.0.0.1", port), timeout=seconds(10)):
            pass  # accepted: a refusal raises ConnectionRefusedError
    finally:
        process.terminate_and_log(seconds(30))


def start(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[LoggedProcess, str]:
    """`serve` on a free port, once its engine is ready, and what it logged up to then. espeak in the
    worker's own process (`--no-espeak-process`): what these tests read is said before the engine loads,
    and the child (its own interpreter, numpy, the Korean reader) was ≈ 0.7 s of CPU a start, 9 starts
    here; the child's start is test_espeak_early.py's."""
    command = [sys.executable, "-m", "npu_worker.cli", "serve", "--port", "0", "--no-espeak-process", *args]
    command += ["--state-dir", str(tmp_path / "state")]
    environ = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    process = LoggedProcess(command, env=environ)
    try:  # "engine ready": after the start-up lines, the warning among them
        return process, process.log_until("engine ready", seconds(30))
    except BaseException:
        process.kill()
        raise


def stop(process: LoggedProcess) -> str:
    """SIGTERM; what it logged after `start` returned."""
    head = len(process.log_until("engine ready", 0))
    try:
        return process.terminate_and_log(seconds(30))[head:]
    finally:
        process.kill()
