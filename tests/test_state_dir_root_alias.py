"""`serve` refuses an output root inside its state directory at start (every output_path under it would
be refused, one request at a time): compared by spelling, a root reached through another name of the
state dir (a bind mount, as a case-insensitive disk's other letters are: realpath leaves both as written)
passed, and each request under it was refused later. It is compared by identity, as admission does.
The bind mount is made in a mount namespace of the test's own (tests/test_path_aliases.py says how)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_path_aliases import namespace_command
from tests.timing import seconds

ROOT = Path(__file__).resolve().parents[1]

# Inside the namespace: argv[1] the state dir, argv[2] another name for it (bind-mounted here).
CHECK = r"""
import subprocess, sys
from npu_worker.cli import build_parser
from npu_worker.config_sources import load_settings

state, alias = sys.argv[1], sys.argv[2]
subprocess.run(["mount", "--bind", state, alias], check=True)
for root in (alias + "/outputs", alias, state + "/../elsewhere"):
    args = build_parser(["serve"]).parse_args(["serve", "--state-dir", state, "--output-roots", root])
    try:
        load_settings(args, environ={})
        print("started:", root)
    except SystemExit as exc:
        print("refused:", exc.code)
"""


def test_a_root_inside_the_state_dir_under_another_name_is_refused_at_start(tmp_path):
    if (namespace := namespace_command(tmp_path)) is None:
        pytest.skip("no mount namespace here (unshare refused)")
    state, alias = (tmp_path / "state").resolve(), (tmp_path / "other-name").resolve()
    state.mkdir(mode=0o700)
    alias.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [*namespace, sys.executable, "-c", CHECK, str(state), str(alias)],
        capture_output=True,
        text=True,
        env=env,
        timeout=seconds(60),
    )
    assert done.returncode == 0, done.stderr
    said = done.stdout.splitlines()
    assert said[0] == (
        f"refused: --output-roots: {alias}/outputs is inside the state directory {state}, where no caller "
        "may write; give the worker another --state-dir or another root"
    ), said
    assert said[1].startswith(f"refused: --output-roots: {alias} is inside the state directory"), said
    assert said[2] == f"started: {state}/../elsewhere", said  # beside it: no alias of it
