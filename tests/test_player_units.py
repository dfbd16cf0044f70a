"""The player's pure modules (sections, model) and fetchHealth under node's built-in test runner.

The tests themselves are `tests/js/*.test.mjs` (`node --test`); this runs them in the Python suite so CI
runs them too. The browser-level behaviour is in the other test_player_*.py.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.timing import seconds

pytestmark = pytest.mark.allow_blocking
JS_TESTS = sorted((Path(__file__).resolve().parent / "js").glob("*.test.mjs"))


def test_the_player_modules_pass_their_node_tests():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (Debian package `nodejs`, installed by .ci/run)")
    assert JS_TESTS, "no tests/js/*.test.mjs found"
    done = subprocess.run(
        [node, "--test", *map(str, JS_TESTS)], capture_output=True, text=True, timeout=seconds(120)
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout
