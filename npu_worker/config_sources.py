"""`Settings` from where an operator gives them: flags win over `NPU_WORKER_*` env vars, env vars over
the defaults; the checks across settings that no one field can make; the README's table of them all."""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import os
import re
from collections.abc import Mapping
from typing import Any

from .config import ENV_PREFIX, Settings
from .config_values import bearer_token, parse_bool


def _converter(f: dataclasses.Field[Any]) -> Any:
    kind = f.metadata.get("kind")
    if kind is not None:
        return kind
    type_name = str(f.type)
    if type_name.startswith("int"):
        return int
    if type_name.startswith("float"):
        return float
    return str


def _flag_type(f: dataclasses.Field[Any]) -> Any:
    """The flag's converter; a setting's own check speaks in its own words (argparse shows a
    ValueError only as "invalid convert value: '5'", an ArgumentTypeError as its message)."""
    convert = _converter(f)
    if f.metadata.get("kind") is None:
        return convert

    def parse(text: str) -> Any:
        try:
            return convert(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def env_name(name: str) -> str:
    return ENV_PREFIX + name.upper()


FLAG = re.compile(r"--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


def named_as_given(
    message: str, args: argparse.Namespace | None, environ: Mapping[str, str] | None = None
) -> str:
    """`message` (a refusal naming settings by flag) with each setting that came from its env var named
    by that var, as `load_settings`'s own refusals name it: `NPU_WORKER_NUM_STEPS=0` in the service's
    env file was refused as "num_steps (--num-steps) must be in 1..64", a flag no command line held."""
    environ = os.environ if environ is None else environ
    fields = {f.name for f in dataclasses.fields(Settings)}

    def as_given(flag: re.Match[str]) -> str:
        name = flag.group(0)[2:].replace("-", "_")
        if name in fields and getattr(args, name, None) is None and environ.get(env_name(name)):
            return env_name(name)
        return flag.group(0)

    return FLAG.sub(as_given, message)


def add_settings_arguments(parser: argparse.ArgumentParser) -> None:
    """One `--flag` per Settings field; unset flags stay None so env/defaults apply. The token may come
    from a file instead (`--token-file`, which `ps` does not show), not with `--token` too."""
    from .command_line_secrets import add_token_arguments

    for f in dataclasses.fields(Settings):
        default = f.default
        shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
        help_words = f"{f.metadata['help']} [env {env_name(f.name)}; default {shown!s}]"
        if f.name == "token":  # with --token-file, as the client commands take them
            add_token_arguments(parser, token_help=help_words, token_type=_flag_type(f))
            continue
        if f.metadata.get("kind") is parse_bool:
            parser.add_argument(
                "--" + f.name.replace("_", "-"),
                dest=f.name,
                default=None,
                action=argparse.BooleanOptionalAction,
                help=help_words,
            )
            continue
        parser.add_argument(
            "--" + f.name.replace("_", "-"),
            dest=f.name,
            default=None,
            type=_flag_type(f),
            choices=f.metadata.get("choices"),
            help=help_words,
        )


def load_settings(
    args: argparse.Namespace | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """Flags win over env vars, env vars over defaults; an env var set to "" counts as unset (but a
    token's). A refusal is SystemExit with one line naming the env var (a flag's is argparse's)."""
    environ = os.environ if environ is None else environ
    values, given = _given_values(args, environ)
    _refuse_misspelt(environ)
    settings = Settings(**values)
    _refuse_contradictions(settings, given)
    return settings


def _given_values(
    args: argparse.Namespace | None, environ: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """Each setting given by a flag or an env var, and where it came from (to name it in a refusal)."""
    values: dict[str, Any] = {}
    given: dict[str, str] = {}
    token_file = getattr(args, "token_file", None) if args is not None else None
    for f in dataclasses.fields(Settings):
        flag_value = getattr(args, f.name, None) if args is not None else None
        if f.name == "token" and token_file is not None:
            flag_value = _token_in_file(token_file)
        if flag_value is not None:
            values[f.name] = flag_value
            given[f.name] = "--" + f.name.replace("_", "-")
            continue
        raw = environ.get(env_name(f.name))
        if raw == "" and f.metadata.get("empty_env"):
            raise SystemExit(f"{env_name(f.name)}: {f.metadata['empty_env']}")
        if raw is not None and raw != "":
            given[f.name] = env_name(f.name)
            try:
                values[f.name] = _converter(f)(raw)
            except ValueError as exc:
                raise SystemExit(f"{env_name(f.name)}: {exc}") from exc
            choices = f.metadata.get("choices")
            if choices and values[f.name] not in choices:
                raise SystemExit(f"{env_name(f.name)} must be one of {', '.join(choices)}")
    return values, given


def _refuse_contradictions(settings: Settings, given: dict[str, str]) -> None:
    """Settings each valid alone that together would leave callers refused for ever: one line each."""
    if settings.role != "both" and settings.queue == "local":
        # Else ignored: the local queue's one process always serves callers and runs the engine.
        raise SystemExit(
            f"{given['role']}{'=' if given['role'].startswith(ENV_PREFIX) else ' '}{settings.role} needs a shared queue (--queue redis://HOST:PORT/DB): "
            "with the local queue the one process is both the API and the engine"
        )
    if settings.body_budget_bytes < (largest := max(settings.max_body_bytes, settings.voice_max_bytes)):
        # Else a body of the largest allowed size never finds room: 503 BodyBudgetFull, retried for ever.
        raise SystemExit(
            f"{given.get('body_budget_bytes', '--body-budget-bytes')} {settings.body_budget_bytes} is less "
            f"than the largest body a caller may send ({largest} bytes: --max-body-bytes, --voice-max-bytes)"
        )
    if 0 < settings.jobs_max_bytes < settings.max_body_bytes:
        # Else a batch of the largest allowed body is refused (503 StateUnavailable) whatever ends.
        raise SystemExit(
            f"{given.get('jobs_max_bytes', '--jobs-max-bytes')} {settings.jobs_max_bytes} is less than the "
            f"largest body a caller may send ({settings.max_body_bytes} bytes: --max-body-bytes), whose job's "
            "record (its texts) would never fit"
        )
    if (inside := _root_inside_state_dir(settings)) is not None:
        # Else every output_path there is refused, one request at a time (OutputPathNotAllowed).
        where = given.get("output_roots", "the default output root (the temp dir)")
        raise SystemExit(
            f"{where}: {inside} is inside the state directory {settings.resolved_state_dir()}, where no "
            "caller may write; give the worker another --state-dir or another root"
        )


def _token_in_file(path: str) -> str:
    """--token-file's token, as a caller must present it; SystemExit saying why it cannot be one."""
    from .command_line_secrets import read_token_file

    try:
        token = read_token_file(path)  # (stripped: a token a caller can present, as `bearer_token` wants)
    except ValueError as exc:  # its words name --token-file and the path
        raise SystemExit(str(exc)) from None
    try:
        return bearer_token(token)  # a second line, a control or non-ASCII character: none is a token
    except ValueError as exc:
        raise SystemExit(f"--token-file {path}: {exc}") from None


def _refuse_misspelt(environ: Mapping[str, str]) -> None:
    """SystemExit for an env var spelt like a setting but none (`NPU_WORKER_TOKN`: the worker ran without
    a token, unseen). Others with the prefix pass: tests and tools have their own."""
    known = [env_name(f.name) for f in dataclasses.fields(Settings)]
    for name in sorted(environ):
        if name.startswith(ENV_PREFIX) and name not in known:
            close = difflib.get_close_matches(name, known, 1, 0.85)
            if close:
                raise SystemExit(f"{name} is not a setting ({close[0]}?): rename or unset it")


def _root_inside_state_dir(settings: Settings) -> str | None:
    """The first output root lying inside the state directory (or being it), or None. By spelling and by
    identity, as a request's path is admitted (`paths.alias_under`): a root reached through a bind mount
    of the state dir, or spelt in other letters on a case-insensitive disk, passed this check and then
    refused every output_path under it, one request at a time."""
    from .paths import alias_under

    state = os.path.realpath(settings.resolved_state_dir())
    for root in settings.resolved_output_roots():
        if os.path.commonpath([root, state]) == state or alias_under(root, (state,)) is not None:
            return root
    return None


def settings_table() -> str:
    """Markdown table of every setting (used to keep README's configuration section true)."""
    rows = ["| flag | env | default | meaning |", "|---|---|---|---|"]
    for f in dataclasses.fields(Settings):
        default = f.default
        shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
        rows.append(
            f"| `--{f.name.replace('_', '-')}` | `{env_name(f.name)}` | `{shown}` | {f.metadata['help']} |"
        )
        if f.name == "token":
            rows.append(TOKEN_FILE_ROW)
    return "\n".join(rows)


TOKEN_FILE_ROW = (  # no setting of its own: another way to give --token's, which `ps` does not show
    "| `--token-file PATH` | (`NPU_WORKER_TOKEN`) | — | read the token from this file (`-`: standard input), "
    "which no other local user sees; not with `--token`; one line of printable ASCII (a second line is refused at start) |"
)
