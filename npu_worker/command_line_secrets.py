"""Secrets given as flags: every local user reads a process's command line (`ps`, `/proc/<pid>/cmdline`)
for as long as it runs, so such a flag hands the secret to each of them; the same value from the
environment is readable by the process's user only. `serve` (a token, a queue password) and the client
commands (`synth`, `batch`, `bench`: a token) warn with the same words. Both also read the token from a
file (`--token-file`, `-` for stdin), which no one else sees, and `bench` records its command line with
the token hidden."""

from __future__ import annotations

import argparse
import getpass
import os
import select
import stat
import sys
from collections.abc import Sequence
from typing import Any

from .bearer import holds_bearer_scheme
from .config_values import holds_password
from .file_readers import EVERYONE, acl_readers, other_readers


def secrets_on_command_line(args: argparse.Namespace) -> list[str]:
    """The flags that put a secret in the process's arguments: `--token`, and `--queue` with a password."""
    flags = []
    if getattr(args, "token", None) is not None:
        flags.append("--token")
    queue = getattr(args, "queue", None)
    if queue is not None and holds_password(queue):
        flags.append("--queue")
    return flags


def secret_flag_warning(flag: str, env: str, *, runs: str, where: str = "") -> str:
    """What to say about `flag` given on the command line: who reads it, and the variable `env` to set
    instead (`where`: how, for a service)."""
    return (
        f"{flag} was given on the command line, which every local user can read for as long as {runs} "
        f"(ps, /proc/<pid>/cmdline); give it as {env} in the environment{where} instead"
    )


TOKEN_ENV = "NPU_WORKER_TOKEN"
MAX_TOKEN_FILE_BYTES = 4096  # a bearer token is a line; a bigger file (or /dev/zero) is not one
HIDDEN = "<hidden>"


def add_token_arguments(
    parser: argparse.ArgumentParser,
    *,
    what: str = "the worker",
    token_help: str | None = None,
    token_type: Any = None,
) -> None:
    """`--token-file` (the way that shows the token to no one) before `--token` (the way `ps` shows), one
    or the other: for `serve` as for the client commands (`serve` gives its setting's help and check)."""
    given = parser.add_mutually_exclusive_group()
    given.add_argument(
        "--token-file",
        metavar="PATH",
        default=None,
        help=f"read the bearer token {what} requires from this file ('-': standard input), so no other "
        f"local user sees it [env {TOKEN_ENV} is as safe]",
    )
    given.add_argument(
        "--token",
        default=None,
        type=token_type,
        help=token_help
        or "the bearer token itself: every local user reads it in ps while the command runs; "
        "prefer --token-file or the env var",
    )


def read_token_file(path: str) -> str:
    """The token in `path` ('-': stdin; a terminal there is asked, with no echo), its surrounding
    whitespace (a final newline, CRLF) and a UTF-8 byte order mark dropped;
    ValueError saying what is wrong (unreadable, empty, too big, not text, `Bearer X`: the header's
    value, which went out as `Bearer Bearer X`)."""
    try:
        if path == "-" and sys.stdin is None:
            raise ValueError("--token-file -: the command has no standard input")
        if path == "-" and sys.stdin.isatty():  # typed: not echoed (a screen shared, a terminal's log)
            data = getpass.getpass("npu-worker: token (not echoed): ").encode()
        elif path == "-":
            data = sys.stdin.buffer.read(MAX_TOKEN_FILE_BYTES + 1)
        else:
            data = _read_path(path)
    except EOFError:  # Ctrl-D at the prompt
        raise ValueError("--token-file -: no token was typed") from None
    except OSError as exc:
        raise ValueError(f"cannot read --token-file {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_TOKEN_FILE_BYTES:
        raise ValueError(f"--token-file {path} holds more than {MAX_TOKEN_FILE_BYTES} bytes: not a token")
    try:
        token = data.decode("utf-8-sig").strip()  # the BOM Notepad writes is no part of the token
    except UnicodeDecodeError:
        raise ValueError(f"--token-file {path} is not text") from None
    if not token:
        raise ValueError(f"--token-file {path} holds no token")
    if holds_bearer_scheme(token):  # `Bearer<TAB>X` too: any white space, as a header's reader takes
        raise ValueError(
            f"--token-file {path} holds 'Bearer ' and the token: write the token alone (what follows 'Bearer ')"
        )
    return token


FIFO_QUIET_SECONDS = 0.5  # how long a FIFO may stay unwritten before the wait is said


def _read_path(path: str) -> bytes:
    """The first bytes of `path`. A FIFO no one has opened to write (`mkfifo`) is waited on as `cat`
    would, but said on stderr after a moment: the open blocked in silence, and `serve` hung at start."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # (a FIFO opens at once; a file is as without it)
    with open(fd, "rb") as file:
        if stat.S_ISFIFO(os.fstat(fd).st_mode) and not select.select([fd], [], [], FIFO_QUIET_SECONDS)[0]:
            print(
                f"npu-worker: waiting for the token to be written to --token-file {path} (a FIFO; Ctrl-C stops)",
                file=sys.stderr,
                flush=True,
            )
            select.select([fd], [], [])  # (read now, it would be the end: no writer yet)
        os.set_blocking(fd, True)  # then read as any file: to its end (a writer's close) or the limit
        return file.read(MAX_TOKEN_FILE_BYTES + 1)


def token_file_warning(path: str | None) -> str | None:
    """What to say about a --token-file every local user may read (`echo T > file` under umask 022
    makes one): the secret is then theirs as surely as a flag in `ps` would make it. Not said of one in
    a folder others cannot pass through (the file's mode alone was judged); said of one that members of
    a group can reach and read (0644 in a 0750 folder another user's group opens: it was not). Said too of one another user
    owns (or a link of theirs to it, as one left in /tmp): they read it whatever its mode, and may put a
    token of theirs in it, which the worker then requires (nothing was said)."""
    if path is None or path == "-":
        return None
    try:
        info, link = os.stat(path), os.lstat(path)
    except OSError:  # `read_token_file` says why
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    if (
        owner := next((i.st_uid for i in (link, info) if i.st_uid not in (os.geteuid(), 0)), None)
    ) is not None:
        return (
            f"--token-file {path} belongs to another user (uid {owner}), who can read it and put another "
            "token in it whatever its mode; keep the token in a file of your own (600)"
        )
    try:
        readers = other_readers(path)
    except OSError:
        return None
    if not readers and (named := acl_readers(path)):
        return (
            f"--token-file {path} has an ACL that lets {', '.join(named)} read it (getfacl {path}); "
            f"`setfacl -b {path}` keeps the token yours"
        )
    if not readers:
        return None
    if readers == [EVERYONE]:
        return (
            f"--token-file {path} can be read by every local user (mode {info.st_mode & 0o777:o}); "
            f"`chmod o-r {path}` (or 600) keeps the token yours"
        )
    shown = ", ".join(readers[:3]) + (f" and {len(readers) - 3} more" if len(readers) > 3 else "")
    return (
        f"--token-file {path} can be read by other users through their groups ({shown}; mode "
        f"{info.st_mode & 0o777:o}, and the folders on its way let them in); `chmod 600 {path}` keeps the "
        "token yours"
    )


def token_from(args: argparse.Namespace) -> str | None:
    """The token a client command sends: --token-file's, else --token's, else NPU_WORKER_TOKEN's.
    Read once per command (stdin can be read only once); ValueError from `read_token_file`."""
    if getattr(args, "token_file", None) is not None:
        return read_token_file(args.token_file)
    if flag := getattr(args, "token", None):
        return _without_scheme(flag, "--token")
    env = os.environ.get(TOKEN_ENV)
    return _without_scheme(env, TOKEN_ENV) if env else None


def _without_scheme(token: str, where: str) -> str:
    """`token`, or ValueError for `Bearer X` (a header's value pasted): sent as `Bearer Bearer X`,
    every request was a 401, as `read_token_file` and `serve` refuse it."""
    if holds_bearer_scheme(token):
        raise ValueError(
            f"{where} holds 'Bearer ' and the token: give the token alone (what follows 'Bearer ')"
        )
    return token


def without_secrets(argv: Sequence[str], args: argparse.Namespace) -> list[str]:
    """`argv` as a report may record it: the value of --token (as given, or `--token=…`, or an
    abbreviation argparse took for it) replaced by <hidden>. A recorded benchmark command line is
    published with its figures."""
    token = getattr(args, "token", None)
    if not token:
        return list(argv)
    shown = []
    for word in argv:
        if word == token:
            word = HIDDEN
        elif word.startswith("-") and word.endswith(f"={token}"):
            word = word[: -len(token)] + HIDDEN
        shown.append(word)
    return shown
