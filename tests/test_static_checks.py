"""ruff (lint + format) and mypy on the package run with the suite, so CI enforces them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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
    checked = run("mypy", "npu_worker")
    assert checked.returncode == 0, checked.stdout + checked.stderr
