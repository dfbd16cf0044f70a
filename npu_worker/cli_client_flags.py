"""What `synth` and `batch` share from the command line: the worker's address, token, language and
voice flags, the waits' bounds, and what the caller typed made ready once at the start (the token read
once, with a warning for `--token` in `ps`; numbers no request can carry refused by their flags; a 401
said in these flags' terms); the exit codes of a request made or not."""

from __future__ import annotations

import argparse
import math

from npu_worker.cli_flag_values import language
from npu_worker.cli_progress import say
from npu_worker.client import BASE_ENV, DEFAULT_BASE, ClientError, WorkerHTTPError
from npu_worker.client.common import check_seconds
from npu_worker.client.errors import InvalidArgument
from npu_worker.client.retrying import WAIT_LIMIT
from npu_worker.command_line_secrets import (
    TOKEN_ENV,
    add_token_arguments,
    secret_flag_warning,
    secrets_on_command_line,
    token_file_warning,
    token_from,
)

EXIT_OK, EXIT_SECTIONS_FAILED, EXIT_REQUEST_FAILED = 0, 1, 2


def add_connection_arguments(parser: argparse.ArgumentParser, lang_default: str) -> None:
    parser.add_argument("--base", default=None, help=f"worker URL [env {BASE_ENV}; default {DEFAULT_BASE}]")
    add_token_arguments(parser)
    parser.add_argument(
        "--lang",
        type=language,
        default=None,
        help=f"language: a code, or a voice name or identifier the worker lists in /health's languages (default: {lang_default})",
    )
    parser.add_argument("--speed", type=float, default=1.0, help="speed factor (default 1.0)")
    parser.add_argument("--ref-wav", default=None, help="reference voice wav on the worker's machine")


def add_wait_limit(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wait-limit",
        type=float,
        default=WAIT_LIMIT,
        help="seconds in a row to wait for a worker that answers 'not now' with a Retry-After"
        f" (loading, compiling for an NPU, its queue full; default {WAIT_LIMIT:g})",
    )


def taken_token(args: argparse.Namespace) -> str | None:
    """The token `take_token` read at the start."""
    token: str | None = args.token_taken
    return token


def take_token(command: str, args: argparse.Namespace) -> str | None:
    """Once, at the start: the token read (from --token-file, which may be stdin, only once), and a
    warning for a `--token` flag, which is in `ps` for every local user for as long as the command runs
    (a lecture batch: many minutes); NPU_WORKER_TOKEN or --token-file are not. None, or why the token
    cannot be read."""
    for flag in secrets_on_command_line(args):
        warning = secret_flag_warning(
            flag, TOKEN_ENV, runs="the command runs", where=" (or --token-file PATH)"
        )
        say(f"npu-worker {command}: warning: {warning}")
    if (readable := token_file_warning(args.token_file)) is not None:
        say(f"npu-worker {command}: warning: {readable}")
    try:
        args.token_taken = token_from(args)
    except ValueError as exc:
        return str(exc)
    return None


def token_hint(error: ClientError, args: argparse.Namespace) -> str:
    """A 401 said in the command's terms: the worker's words name a header and a query parameter,
    neither of which a caller of `synth` or `batch` sets (`bench` says so already)."""
    if not (isinstance(error, WorkerHTTPError) and error.error_name == "Unauthorized"):
        return ""
    if taken_token(args) is None:
        return f"; the worker wants a token: give --token-file PATH or {TOKEN_ENV}"
    return f"; the worker refused the token given: check it (--token-file, {TOKEN_ENV} or --token)"


def bad_numbers(args: argparse.Namespace) -> str | None:
    """`--speed nan` (or inf) is refused here: JSON has no such number, and json.dumps would send `NaN`.
    `--wait-limit` and `--stall-limit` too, by their flags (`-1` was refused as the client's
    `wait_limit`, a name the caller never typed)."""
    if not math.isfinite(args.speed):
        return f"--speed must be a finite number, not {args.speed}"
    for flag, zero_allowed in (("--wait-limit", True), ("--stall-limit", False)):
        value = getattr(args, flag[2:].replace("-", "_"), None)
        try:
            if value is not None:
                check_seconds(flag, value, zero_allowed)
        except InvalidArgument as exc:
            return str(exc)
    return None
