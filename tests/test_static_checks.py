"""ruff (lint + format) and mypy on the package run with the suite, so CI enforces them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests import static_background
from tests.timing import seconds

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("npu_worker", "tests", "benchmarks")


def run(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *arguments], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


@pytest.mark.allow_blocking
def test_ruff_lint_and_format_are_clean():
    lint = run("ruff", "check", *SOURCES)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    formatted = run("ruff", "format", "--check", *SOURCES)
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr


@pytest.mark.allow_blocking
def test_mypy_on_the_package_is_clean():
    """mypy's run from the session's start (tests/static_background.py), else one of its own."""
    ran = static_background.answer(static_background.MYPY[0], seconds(600))
    if ran is None:
        checked = run("mypy", "npu_worker")
        ran = checked.returncode, checked.stdout + checked.stderr
    status, said = ran
    assert status == 0, said
