"""Two quantised prepares into one --out: the first holds the folder's lock from before its calibration
to its end, so the second is refused at once. The lock was only probed before calibrating: both
calibrated for minutes (hours at full size), and the second was refused only when it came to compile."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from npu_worker.engine.zipvoice import prepared
from tests.timing import seconds
from tests.zipvoice.test_providers import qnn

pytestmark = qnn


def lines_until(process: subprocess.Popen[str], wanted: str, deadline: float) -> list[str]:
    """`process`'s stderr lines up to the first holding `wanted` or its end, within `deadline` seconds."""
    assert process.stderr is not None
    said: list[str] = []
    with selectors.DefaultSelector() as waiting:
        waiting.register(process.stderr, selectors.EVENT_READ)
        ends = time.monotonic() + deadline
        while not said or wanted not in said[-1]:
            assert waiting.select(max(0.0, ends - time.monotonic())), f"no {wanted!r} in time: {said}"
            line = process.stderr.readline()
            if not line:
                break
            said.append(line.rstrip("\n"))
    return said


def test_a_second_quantised_prepare_into_a_folder_being_calibrated_for_is_refused_at_once(
    qnn_model_dir: Path, tmp_path: Path
):
    texts, out = tmp_path / "texts.json", tmp_path / "out"
    texts.write_text(json.dumps([{"text": "안녕하세요.", "lang": "ko"}]), encoding="utf-8")
    command = [sys.executable, "-m", "npu_worker.cli", "prepare", "--model-dir", str(qnn_model_dir)]
    command += ["--out", str(out), "--buckets", "63", "--optimization", "fast", "--precision", "a16w8"]
    command += ["--calibration-texts", str(texts), "--calibration-calls", "1", "--check-calls", "0"]
    first = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        assert lines_until(first, "model files (fp32)", seconds(120))[-1].startswith("model files (fp32)")
        os.kill(first.pid, signal.SIGSTOP)  # calibrating: held there while the second one starts
        second = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        try:
            said = lines_until(second, "calibration:", seconds(120))
        finally:
            second.kill()
            second.wait()
        assert said == [
            f"npu-worker prepare: ModelLoadError: --out {out}: another prepare is writing this folder (it "
            f"holds {prepared.LOCK}); wait for it to end or give another --out"
        ]
        assert second.returncode == 2
        os.kill(first.pid, signal.SIGCONT)
        first.terminate()  # (its calibration is what held the lock; its compile is other tests')
        assert first.wait(timeout=seconds(60)) == 143
    finally:
        if first.poll() is None:  # (a failed assertion above: the stopped one is ended, not left)
            os.kill(first.pid, signal.SIGCONT)
            first.kill()
        first.wait()
    # The first made --out, and stopped in its calibration with nothing in it but the lock, removed it.
    assert not out.exists(), sorted(out.iterdir())


@pytest.mark.parametrize("found", ["new", "empty"])
def test_a_quantised_prepare_refused_in_its_calibration_leaves_out_as_it_found_it(
    qnn_model_dir: Path, tmp_path: Path, found: str
):
    """The lock taken before the calibration made --out (and its lock file) first: a calibration refused
    (texts that are no JSON, say), stopped or failed left a new --out holding only `.prepare.lock`, where
    the same refusal had left none before. The folder made, or the lock file made in an empty one, is
    removed again."""
    texts, out = tmp_path / "texts.json", tmp_path / "out"
    texts.write_text("no json", encoding="utf-8")
    if found == "empty":
        out.mkdir()
    command = ["prepare", "--model-dir", str(qnn_model_dir), "--out", str(out), "--buckets", "63"]
    command += ["--precision", "a16w8", "--calibration-texts", str(texts), "--check-calls", "0"]
    done = subprocess.run(
        [sys.executable, "-m", "npu_worker.cli", *command],
        capture_output=True,
        text=True,
        timeout=seconds(300),
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1].startswith(
        f"npu-worker prepare: cannot read calibration texts {texts}: "
    )
    if found == "new":
        assert not out.exists(), sorted(out.iterdir())
    else:
        assert list(out.iterdir()) == []
