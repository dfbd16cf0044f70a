"""`prepare`'s calibration engine (cli_prepare_calibration.record_calibration) is closed once it has
recorded: its espeak-ng phonemizer child ran on beside the minutes of quantising and compiling that
follow, until the command's exit. Real engine, real espeak child, the tiny model."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from npu_worker.cli_prepare_calibration import record_calibration
from npu_worker.engine.providers import RuntimeConfig
from npu_worker.protocol import ModelLoadError


def _children() -> set[int]:
    """This process's live child processes (every thread's)."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        try:
            found.update(int(pid) for pid in (task / "children").read_text().split())
        except FileNotFoundError:  # a thread that ended while read
            continue
    return found


def _args(tmp_path: Path, **changes: object) -> argparse.Namespace:
    texts = tmp_path / "texts.json"
    texts.write_text(json.dumps([{"text": "안녕하세요.", "lang": "ko"}]), encoding="utf-8")
    values: dict[str, object] = {
        "ref_wav": None,
        "ref_text": None,
        "calibration_texts": str(texts),
        "calibration_calls": 1,
        "check_calls": 0,
        "num_steps": 1,
        "vocoder": None,
        "buckets": [383],
    }
    values.update(changes)
    return argparse.Namespace(**values)


def test_the_calibration_engine_leaves_no_phonemizer_child_running(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    before = _children()
    recording, about = record_calibration(
        _args(tmp_path), tiny_model_dir, RuntimeConfig(threads=1), lambda _: None
    )
    assert recording.texts == 1 and about["calls_per_bucket"] == 1  # it did record, through the engine
    left = {pid for pid in _children() - before if Path(f"/proc/{pid}").exists()}
    assert not left, f"calibration left child processes running: {sorted(left)}"


def test_a_calibration_that_fails_part_way_leaves_no_phonemizer_child_running(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    """A bucket no call reaches (63 frames: less than the reference voice's prompt) fails the recording
    after the engine has phonemized: its child was left running with the refusal said."""
    before = _children()
    with pytest.raises(ValueError, match=r"no decoder call reached bucket\(s\) \[63\]"):
        record_calibration(_args(tmp_path, buckets=[63]), tiny_model_dir, RuntimeConfig(threads=1), print)
    left = {pid for pid in _children() - before if Path(f"/proc/{pid}").exists()}
    assert not left, f"calibration left child processes running: {sorted(left)}"


def test_a_bad_configuration_is_a_model_load_error_in_its_words(tiny_model_dir: Path, tmp_path: Path) -> None:
    """Refused before an engine is made or loaded: nothing started, the configuration's own words."""
    before = _children()
    with pytest.raises(
        ModelLoadError,
        match=r"^ModelLoadError: invalid ZipVoice configuration: num_steps \(--num-steps\) must be in 1\.\.64, got 99$",
    ):
        record_calibration(_args(tmp_path, num_steps=99), tiny_model_dir, RuntimeConfig(threads=1), print)
    assert _children() <= before
