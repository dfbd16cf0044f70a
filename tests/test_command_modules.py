"""What the command line loads for each command: the benchmark's modules (aiohttp, numpy) and `prepare`'s
options (the ZipVoice runtime, numpy) loaded for every command but `serve`, most of the CPU a `synth`
or a `batch` took before it sent its request. Now each loads with its own command alone; `-h` still
lists both with their lines, and their own `-h` still shows every option."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("aiohttp", "numpy", "npu_worker.bench.cli", "npu_worker.engine.zipvoice.runtime")

LOADED_BY = """
import json, sys
from npu_worker.cli import build_parser
heavy = json.loads(sys.argv[1])
build_parser(sys.argv[2:])
print(json.dumps([name for name in heavy if name in sys.modules]))
"""


def loaded_by(*argv: str) -> list[str]:
    """The HEAVY modules a fresh interpreter holds once the command line for `argv` is built."""
    done = subprocess.run(
        [sys.executable, "-c", LOADED_BY, json.dumps(HEAVY), *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        timeout=60,
    )
    return json.loads(done.stdout)


def test_the_client_commands_load_neither_the_benchmark_nor_prepares_runtime():
    for argv in (("synth", "가.", "-o", "a.wav"), ("batch", "lecture.json"), ("-h",)):
        assert loaded_by(*argv) == [], argv


def test_bench_and_prepare_load_their_own_modules_and_options():
    assert {"aiohttp", "npu_worker.bench.cli"} <= set(loaded_by("bench", "--rps", "1"))
    assert "npu_worker.engine.zipvoice.runtime" in loaded_by("prepare", "--model-dir", "m", "--out", "o")


def test_every_command_is_listed_with_its_line_and_its_own_help_has_its_options():
    from npu_worker.cli import build_parser

    [commands_action] = build_parser(["-h"])._subparsers._group_actions  # type: ignore[union-attr]
    lines = {action.dest: action.help for action in commands_action._choices_actions}
    assert lines["bench"] == "open-loop TTFA/load benchmark against a running worker on this machine"
    assert lines["prepare"].startswith("compile the decoder for the NPU ahead of time")
    commands = build_parser(["bench"])._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert "--rps" in commands["bench"].format_help()
    commands = build_parser(["prepare"])._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert "--buckets" in commands["prepare"].format_help()


def test_a_parser_built_with_no_command_line_parses_every_commands_options():
    """`build_parser()` with no `argv` gave `bench`, `prepare` and `make-test-model` placeholders with
    their help line alone: a caller that built it so and parsed `bench --rps 1` later was refused,
    `unrecognized arguments`. With no command line to go by, each command comes whole."""
    from npu_worker.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["bench", "--rps", "1"]).rps == "1"
    prepared = parser.parse_args(["prepare", "--model-dir", "m", "--out", "o", "--buckets", "7"])
    assert (prepared.out, prepared.buckets, prepared.hears_stops) == ("o", [7], True)
    assert parser.parse_args(["make-test-model", "d", "--size", "full"]).size == "full"
