"""Secrets given as flags: every local user reads a process's command line (`ps`, `/proc/<pid>/cmdline`)
for as long as it runs, so such a flag hands the secret to each of them; the same value from the
environment is readable by the process's user only. `serve` (a token, a queue password) and the client
commands (`synth`, `batch`: a token) warn with the same words."""

from __future__ import annotations

import argparse

from .config_values import holds_password


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
