"""What `serve` warns of as it starts, each a WARNING of its own: nothing here is refused, but an operator
should know (no token beyond loopback or for any origin, a short token, a secret on the command line or
a token file others can read, output roots others could make or replace, model settings the backend
does not read, running as root)."""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
from typing import TYPE_CHECKING

from .access import ANY_ORIGIN, loopback_bind
from .command_line_secrets import secret_flag_warning, secrets_on_command_line, token_file_warning
from .config_sources import env_name, named_as_given
from .engine_options import unused_model_settings
from .other_writers import replaceable_by_others

if TYPE_CHECKING:
    from .config import Settings


def warn_at_start(args: argparse.Namespace, settings: Settings) -> None:
    """What `serve` starts with, not refused, but an operator should know: each a WARNING of its own."""
    if settings.token is None and not loopback_bind(settings.host):
        # Not refused: a deployment may put an authenticating proxy in front (docs/deploy.md).
        logging.getLogger("npu_worker").warning(
            # (not "listening on": said before the bind, which may yet be refused; `server.listen` says it)
            "--host %r is beyond loopback and there is no --token (NPU_WORKER_TOKEN): anyone who can reach "
            "this address can synthesise, write wavs under the output roots and read the jobs",
            settings.host,
        )
    if settings.token is None and ANY_ORIGIN in settings.allowed_origins:
        # Not refused either (a page on a LAN name, say), but every web page is then a caller.
        logging.getLogger("npu_worker").warning(
            "--allowed-origins * without --token (NPU_WORKER_TOKEN): any web page opened in a browser that "
            "can reach this worker can synthesise, write wavs under the output roots and read the jobs"
        )
    if settings.token is not None and len(settings.token) < MIN_TOKEN_CHARS:
        # Not refused (a loopback worker on a one-user machine needs little), but failed tries have no
        # limit: one connection makes about 1 600 a second (docs/security.md).
        logging.getLogger("npu_worker").warning(
            "the token has %d characters: anyone who can reach the worker may guess it (failed tries are "
            "not limited); use at least %d random ones, as python -c 'import secrets; "
            "print(secrets.token_urlsafe(32))' makes",
            len(settings.token),
            MIN_TOKEN_CHARS,
        )
    for flag in secrets_on_command_line(args):
        # Not refused (a one-user machine may not care), but the flag defeats the secret on a shared one.
        env = env_name(flag.removeprefix("--").replace("-", "_"))
        where = " (the systemd unit's EnvironmentFile=)"
        logging.getLogger("npu_worker").warning(
            secret_flag_warning(flag, env, runs="the worker runs", where=where)
        )
    if (readable := token_file_warning(getattr(args, "token_file", None))) is not None:
        logging.getLogger("npu_worker").warning(readable)
    for warning in output_root_warnings(settings):
        logging.getLogger("npu_worker").warning(warning)
    for warning in unused_model_settings(settings):
        logging.getLogger("npu_worker").warning(named_as_given(warning, args))
    if running_as_root():
        # Not refused (a container may have no other user), but every check that protects another
        # user's files, and root's own, passes for root.
        logging.getLogger("npu_worker").warning(ROOT_WARNING)


MIN_TOKEN_CHARS = 16  # shorter tokens are warned about at start


ROOT_WARNING = (
    "running as root: root passes every permission check, so a caller may have the worker replace root's "
    "files under the output roots and read any user's file there as a ref_wav; run it as its own user "
    "(docs/security.md, Running as an unprivileged user)"
)


def output_root_warnings(settings: Settings) -> list[str]:
    """Roots someone else could make or replace: every caller's wav under one is theirs to swap for
    their own audio, or to read (the write-time walk stops links, not an owner renaming files)."""
    warnings = []
    for root in settings.output_roots or (tempfile.gettempdir(),):
        folder = os.path.expanduser(root)
        if not os.path.isdir(folder):
            warnings.append(
                f"output root {folder} is not a folder (yet): whoever makes it owns every wav written "
                "under it; make it before starting the worker"
            )
            continue
        why = replaceable_by_others(folder)
        if why is not None:
            warnings.append(
                f"output root {folder}: {why}, who could swap the wavs written under it for their own"
            )
    return warnings


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0
