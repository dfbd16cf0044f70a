"""`npu-worker serve --token-file PATH`: the worker's token from a file, which no other local user sees
(`--token` stood in `ps` for as long as the worker ran, and `serve` had no other flag for it; the env
var still works). Not with `--token` too; a file that holds no token is the one-line refusal, exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.serve_process import ServeProcess
from tests.timing import seconds

REPO = Path(__file__).resolve().parents[1]
TOKEN = "Ig7s2Hd-0kQwXbV9rT4uLmN1pYcZeA8f"  # as secrets.token_urlsafe(24) makes: no warning


def environment() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("NPU_WORKER_TOKEN", None)
    return env


def status_of(url: str, token: str | None) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=seconds(10)) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return refused.code


@pytest.mark.allow_blocking
def test_serve_requires_the_token_its_file_holds_and_ps_does_not_show_it(tmp_path):
    secret = tmp_path / "token"
    secret.write_text(TOKEN + "\n", encoding="utf-8")
    secret.chmod(0o600)
    args = ["--token-file", str(secret), "--state-dir", str(tmp_path / "state")]
    process = ServeProcess(args, environment())
    try:
        # ready, not /health answering (a 503 too): /jobs is a 503 Loading while the kept jobs are read
        base = process.wait_ready()
        arguments = Path(f"/proc/{process.pid}/cmdline").read_bytes()
        assert TOKEN.encode() not in arguments  # what every local user reads
        assert status_of(f"{base}/jobs", None) == 401
        assert status_of(f"{base}/jobs", "not-" + TOKEN) == 401
        assert status_of(f"{base}/jobs", TOKEN) == 200
    finally:
        log = process.terminate_and_log(seconds(30))
    warnings = [line for line in log.splitlines() if "WARNING" in line and "running as root" not in line]
    assert not warnings and TOKEN not in log, log


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "npu_worker.cli", "serve", "--port", "0", *args]
    return subprocess.run(command, env=environment(), capture_output=True, text=True, timeout=seconds(60))


@pytest.mark.parametrize(
    ("content", "line"),
    [
        (None, "cannot read --token-file {path}: No such file or directory"),
        ("\n", "--token-file {path} holds no token"),
        (f"Bearer {TOKEN}", "--token-file {path} holds 'Bearer ' and the token: write the token alone"),
        (f"Bearer\t{TOKEN}", "--token-file {path} holds 'Bearer ' and the token: write the token alone"),
        # a `pass show` entry's second line: the worker required a token of two lines, which no header carries
        (
            f"{TOKEN}\nlogin: me\n",
            "--token-file {path}: the token must be printable ASCII, with no line break",
        ),
        (f"{TOKEN}é", "--token-file {path}: the token must be printable ASCII, with no line break"),
    ],
)
def test_a_token_file_that_holds_no_token_is_one_line_and_exit_2(tmp_path, content, line):
    path = tmp_path / "token"
    if content is not None:
        path.write_text(content, encoding="utf-8")
        path.chmod(0o600)
    done = serve("--state-dir", str(tmp_path / "state"), "--token-file", str(path))
    assert done.returncode == 2, done.stderr
    [shown] = done.stderr.splitlines()
    assert shown.startswith(f"npu-worker serve: {line.format(path=path)}"), shown


def test_a_token_and_a_token_file_together_are_refused(tmp_path):
    done = serve("--state-dir", str(tmp_path / "state"), "--token", TOKEN, "--token-file", "-")
    assert done.returncode == 2, done.stderr
    [shown] = done.stderr.splitlines()
    assert "not allowed with argument --token" in shown, shown


def test_serves_help_names_the_token_file():
    done = subprocess.run(
        [sys.executable, "-m", "npu_worker.cli", "serve", "--help"],
        env=environment(),
        capture_output=True,
        text=True,
        timeout=seconds(60),
    )
    assert "--token-file PATH" in done.stdout and "[--token-file PATH | --token TOKEN]" in " ".join(
        done.stdout.split()
    ), done.stdout


def token_options(command: str) -> list[tuple[tuple[str, ...], str | None, str | None]]:
    """`command`'s token flags as argparse holds them: names, metavar, and --token-file's help."""
    from npu_worker.cli import build_parser

    parser = build_parser([command])._subparsers._group_actions[0].choices[command]
    [group] = [
        g for g in parser._mutually_exclusive_groups if "--token" in g._group_actions[-1].option_strings
    ]
    return [
        (tuple(action.option_strings), action.metavar, action.help if action.dest == "token_file" else None)
        for action in group._group_actions
    ]


def test_serve_takes_its_token_flags_as_the_client_commands_do():
    """`serve` had its own copy of `--token-file`/`--token` (other words, kept in step by hand): it takes
    the client commands' (`command_line_secrets.add_token_arguments`), its `--token` help its setting's."""
    assert token_options("serve") == token_options("synth") == token_options("bench")
