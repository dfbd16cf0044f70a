"""benchmarks/README.md's table of maintained benchmarks: every command it names exists and answers `--help`."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests import static_background
from tests.timing import seconds

ROOT = Path(__file__).resolve().parents[1]
INDEX = ROOT / "benchmarks" / "README.md"


def table_commands() -> list[str]:
    """The code spans of the "Maintained benchmarks" section that are commands (`python …`, `npu-worker …`)."""
    text = INDEX.read_text(encoding="utf-8")
    section = text.split("## Maintained benchmarks", 1)[1].split("\n## ", 1)[0]
    spans = re.findall(r"`([^`]+)`", section)
    return [span for span in spans if span.startswith(("python ", "npu-worker "))]


def help_argv(command: str) -> list[str]:
    """The command's program with `--help`: a script by path, or an `npu-worker` subcommand."""
    words = shlex.split(command)
    if words[0] == "python":
        return [sys.executable, str(ROOT / words[1]), "--help"]
    subcommand = [w for w in words[1:2] if not w.startswith("-")]
    return [sys.executable, "-m", "npu_worker.cli", *subcommand, "--help"]


def subcommand_help(argv: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """`python -m npu_worker.cli SUBCOMMAND --help` answered in this process, as the command would."""
    from npu_worker.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.raises(SystemExit) as ended:
        main(list(argv[3:]))
    return subprocess.CompletedProcess(argv, ended.value.code or 0, out.getvalue(), err.getvalue())


def script_programs() -> list[tuple[str, ...]]:
    """The table's programs that are scripts, each once, with `--help`."""
    programs = dict.fromkeys(tuple(help_argv(command)) for command in table_commands())
    return [argv for argv in programs if argv[1:3] != ("-m", "npu_worker.cli")]


def test_the_index_names_the_maintained_benchmarks():
    commands = table_commands()
    scripts = {shlex.split(c)[1] for c in commands if c.startswith("python ")}
    assert "benchmarks/engine_rtf.py" in scripts
    assert len(commands) >= 10


@pytest.mark.allow_blocking
def test_every_benchmark_command_in_the_index_exists_and_answers_help():
    commands = table_commands()
    for command in commands:
        words = shlex.split(command)
        if words[0] == "python":
            assert (ROOT / words[1]).is_file(), f"{words[1]} (named in benchmarks/README.md) does not exist"

    # Several rows run one program with other options: its --help is asked once (51 commands, 31 programs),
    # by a background process from the session's start (tests/static_background.py), else here.
    programs = list(dict.fromkeys(tuple(help_argv(command)) for command in commands))
    asked = static_background.answer(static_background.HELPS[0], seconds(600))
    if asked is None:
        done_by_program = static_background.helps_asked(script_programs())
    else:
        done_by_program = {
            tuple(argv): subprocess.CompletedProcess(argv, status, out, err)
            for argv, status, out, err in asked
        }
    # An `npu-worker` subcommand's --help is its parser's, asked here: a process each cost ≈ 1 s of
    # imports (the suite's own `serve` and `prepare` tests start the command as a process).
    done_by_program |= {argv: subcommand_help(argv) for argv in programs if argv not in done_by_program}
    answers = [(command, done_by_program[tuple(help_argv(command))]) for command in commands]
    failed = [
        f"{command}: rc {done.returncode}\n{done.stderr[-800:]}"
        for command, done in answers
        if done.returncode
    ]
    assert not failed, "\n\n".join(failed)
    assert all("usage:" in done.stdout for _, done in answers)
