"""Shared pieces of the `bench` command's tests."""

from __future__ import annotations

from pathlib import Path


def engine_baseline_argv(tmp_path: Path, baseline: Path) -> list[str]:
    """`bench --engine-baseline B` against a port nothing listens on: what is refused is refused before the run."""
    return [
        "bench",
        "--base",
        "http://127.0.0.1:9",
        "--out",
        str(tmp_path / "r"),
        "--engine-baseline",
        str(baseline),
    ]
