"""The HTP-simulator work of test_prepare_qdq.py and test_prepare.py, run in background processes from the
start of the session.

Preparing an a16w8 decoder on the simulator (calibrate, quantise, compile, one held-out call) and
speaking one sentence with it take ≈ 3.5 + 3 minutes per fixture, mostly on one core; run after the
rest of the suite, that was 15 of its 25 minutes. So `tests/conftest.py` starts this module (`python -m
tests.zipvoice.qdq_background ROOT JOB`, one process per job) once the session has collected
test_prepare_qdq.py, and the tests wait for what they need: per fixture, a source model directory, the
prepared directory (`npu-worker prepare`, the real CLI) and the sentence the real engine spoke on QNN
from it. Job `fp32-five` is test_prepare.py's: the small export prepared in fp32 at all five default
buckets (≈ 2 minutes in the foreground, most of it on one core). The same code runs as it would in the
test process; only the process differs. Stages are marked by files `<ROOT>/<job>/<stage>.ready`; a
failure writes `<stage>.failed` with the traceback, and the waiting test fails with it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

FP32_FIVE = "fp32-five"  # test_prepare.py's job
# The one bucket: it keeps the checked sentence in one segment (331 frames with the reference voice's
# 218-frame prompt, on the small export and the generated tiny model alike), with 20 frames of room; the
# calibration sentences split to fit (20 decoder calls, as at 383). It was 383: the simulated calls at
# BUCKET are the chain's costliest piece, and the held-out call took 254 s of wall at 383 against 186 s
# at 351 under the same load (benchmarks/QNN_PREPARE.md).
BUCKET = 351
# The two sentences' 8 decoder calls at BUCKET, all kept: the first 7 calibrate, the last is held out to
# check the compiled bucket against fp32 (the manifest's accuracy). It was 6 + 2: the second held-out
# call checked the same thing again on the simulator, ≈ 45 s of CPU at 383 frames, the bucket then
# (six simulated calls were ≈ 87 % of the chain's ≈ 353 s); the call still checked is the last of those two.
CALIBRATION_CALLS, CHECK_CALLS = 7, 1
SENTENCES = [
    {"text": "안녕하세요. 오늘은 행렬의 곱셈을 배웁니다.", "lang": "ko"},
    {"text": "질문이 있으면 손을 들어 주세요.", "lang": "ko"},
]
CHECKED = "오늘은 맑습니다."
# The checked sentence's steps, alike on QNN and on both CPU references: each step is one decoder call,
# and on the simulator one call at BUCKET frames is the chain's costliest piece. It was the suite's 4,
# then 2; the comparison (a16w8 against the CPU's int8 files, both from fp32) needs the same steps in
# all three, not many: at 1 the bound holds by 2.0x, as at 2 (figures for 4, 2 and 1 in
# benchmarks/QNN_PREPARE.md).
SENTENCE_STEPS = 1
REPO = Path(__file__).resolve().parents[2]
SHARED_REAL_STRUCTURE = REPO.parent / "shared" / "data" / "zipvoice_small_structure"
# The a16w8 chain runs on one real-layer-count model: the small export where it is beside the repo (as in
# CI), else the generated tiny model. Each chain is ≈ 300 s of CPU (six simulated decoder calls, the
# quantiser's graph editing); running both doubled the suite's heaviest work for the same code path.
FIXTURES = ("shared",) if SHARED_REAL_STRUCTURE.is_dir() else ("generated",)
# The espeak child's start deadline in this process (`run`): the product's 10 s, with room for a loaded machine.
START_SECONDS = 120.0


def speak(model_dir: Path, state_dir: Path, buckets: tuple[int, ...] = (), **changes: object):  # noqa: ANN201
    """The checked sentence (one segment: SENTENCE_STEPS decoder calls) by a freshly loaded engine; (audio, engine).
    `buckets`: the CPU's fixed-shape buckets (the prepared directory's own, BUCKET, as on the NPU: each
    further one was another decoder specialised at load, ≈ 9 s of CPU a load on the small export)."""
    import dataclasses

    from npu_worker.engine.base import SynthesisRequest
    from npu_worker.engine.zipvoice.engine import create
    from tests.zipvoice.conftest import engine_config

    config = engine_config(model_dir, state_dir, **{"num_steps": SENTENCE_STEPS, **changes})
    if buckets:
        config = dataclasses.replace(config, options=dataclasses.replace(config.options, buckets=buckets))
    engine = create(config)
    engine.load()
    request = SynthesisRequest(CHECKED, "ko", seed=1, early_audio=False)
    return np.concatenate([c for c in engine.stream(request) if c.size]), engine


def prepare_args(source: Path, out: Path, texts: Path) -> list[str]:
    return [
        "prepare", "--model-dir", str(source), "--out", str(out), "--precision", "a16w8",
        "--buckets", str(BUCKET), "--optimization", "fast", "--calibration-texts", str(texts),
        "--calibration-calls", str(CALIBRATION_CALLS), "--check-calls", str(CHECK_CALLS),
        "--num-steps", "4",
    ]  # fmt: skip


def _source(root: Path, fixture: str) -> Path:
    """The generated tiny model (real layer counts), or the small export beside the repo with the tiny
    model's reference voice (written alone: building the tiny model for it was ≈ 6.5 s of CPU per job,
    ahead of the chain's simulator work); marked ready at once, so tests that need no simulator can start."""
    from npu_worker.testing.zipvoice_model import build_model_dir, write_reference_voice

    if fixture == "generated":
        source = build_model_dir(root / fixture / "generated-source", "tiny", ("fp32", "int8"))
    else:  # "shared", FP32_FIVE
        source = root / fixture / "source"
        shutil.copytree(SHARED_REAL_STRUCTURE, source)
        for path in source.iterdir():
            path.chmod(0o644)
        write_reference_voice(source)
    _mark(root, fixture, "source", source)
    return source


def _mark(root: Path, fixture: str, stage: str, value: Path) -> None:
    marker = root / fixture / f"{stage}.ready"
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(str(value), encoding="utf-8")


def _fail(root: Path, fixture: str, stage: str) -> None:
    marker = root / fixture / f"{stage}.failed"
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(traceback.format_exc(), encoding="utf-8")


def run(root: Path, job: str) -> None:
    """One job's stages in order: source, prepared, and for the a16w8 fixtures sentence (FP32_FIVE: the
    small export prepared in fp32 at the default buckets)."""
    from npu_worker import cli
    from npu_worker.engine import espeak_process

    # This process runs at nice 5 beside a busy suite: under load (≈ 20) its espeak child missed the
    # 10 s start deadline, and the job failed before any simulator work. Its start is not what the
    # waiting tests check (test_espeak_child_start_deadline.py is), so it gets room here.
    espeak_process.START_SECONDS = max(espeak_process.START_SECONDS, START_SECONDS)
    stage = "source"
    try:
        source = _source(root, job)
        if job == FP32_FIVE:
            prepared = root / job / "fp32"
            args = ["prepare", "--model-dir", str(source), "--out", str(prepared), "--optimization", "fast"]
        else:
            texts = root / job / "calibration.json"
            texts.write_text(json.dumps(SENTENCES, ensure_ascii=False), encoding="utf-8")
            prepared = root / job / "a16w8"
            args = prepare_args(source, prepared, texts)
        stage = "prepared"
        if cli.main(args) != 0:
            raise RuntimeError("npu-worker prepare failed (its message is in the log)")
        sys.stdout.flush()  # its printed serve line in the log before the stage is marked (`printed`)
        _mark(root, job, stage, prepared)
        if job == FP32_FIVE:
            return
        stage = "sentence"
        audio, _ = speak(prepared, root / job / "state", device="qnn", allow_htp_simulator=True)
        np.save(root / job / "npu.npy", audio)
        _mark(root, job, stage, root / job / "npu.npy")
    except Exception:
        _fail(root, job, stage)
        raise


# -- the test process's side ----------------------------------------------------------------------

_job: dict[str, Any] = {}


def start(root: Path, jobs: tuple[str, ...]) -> None:
    """Start one background process per job (a fixture of FIXTURES, or FP32_FIVE), once per session
    (`root`: an empty directory of its own); on a 2-core machine each takes what the suite leaves."""
    if _job:
        return
    root.mkdir(parents=True, exist_ok=True)
    shared = SHARED_REAL_STRUCTURE.is_dir()
    processes, logs = {}, []
    for fixture in [job for job in jobs if shared or job not in ("shared", FP32_FIVE)]:
        logs.append((root / f"{fixture}.log").open("wb"))
        processes[fixture] = subprocess.Popen(  # noqa: S603 - this interpreter, this module
            [sys.executable, "-m", "tests.zipvoice.qdq_background", str(root), fixture],
            cwd=REPO,
            stdout=logs[-1],
            stderr=subprocess.STDOUT,
            preexec_fn=lambda: os.nice(5),  # the suite's own timing-sensitive tests keep the first claim
        )
        (root / f"{fixture}.pid").write_text(str(processes[fixture].pid))
    _job.update(root=root, processes=processes, logs=logs)


# Under pytest-xdist the controller starts the jobs (once, not once per worker) into this directory,
# named in the environment the workers inherit; a worker's tests find them there (`wait`).
ROOT_VARIABLE = "NPU_WORKER_QDQ_ROOT"


def _ended(root: Path, fixture: str) -> int | None:
    """The job's exit status if its process has ended (None while it runs), however this process
    knows it: its own child's status, or, started by another process (the xdist controller), as None
    until /proc no longer shows it running (-1 then)."""
    if "processes" in _job:
        return _job["processes"][fixture].poll()
    pid = (root / f"{fixture}.pid").read_text()
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return -1
    return -1 if state in ("Z", "X") else None


def stop() -> None:
    """End the background processes (the session is over) and remove what they made."""
    for process in _job.get("processes", {}).values():
        if process.poll() is None:
            process.kill()
            process.wait()
    for log in _job.get("logs", []):
        log.close()
    if "root" in _job:
        shutil.rmtree(_job["root"], ignore_errors=True)
    _job.clear()


def wait(fixture: str, stage: str, timeout: float) -> Path:
    """What the background process made at `stage` for `fixture`; fails the test with its traceback."""
    root = _job["root"] if _job else Path(os.environ[ROOT_VARIABLE])
    ready, failed = root / fixture / f"{stage}.ready", root / fixture / f"{stage}.failed"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready.exists():
            return Path(ready.read_text(encoding="utf-8"))
        if failed.exists():
            raise AssertionError(f"background {stage} of {fixture} failed:\n{failed.read_text()}")
        if (status := _ended(root, fixture)) is not None and not ready.exists():
            tail = (root / f"{fixture}.log").read_text(errors="replace")[-4000:]
            raise AssertionError(f"the background process ended ({status}) before {stage}:\n{tail}")
        time.sleep(0.5)
    raise AssertionError(f"background {stage} of {fixture} not ready after {timeout:.0f} s")


def printed(fixture: str) -> str:
    """What the background process for `fixture` has printed so far (its log)."""
    root = _job["root"] if _job else Path(os.environ[ROOT_VARIABLE])
    return (root / f"{fixture}.log").read_text(encoding="utf-8", errors="replace")


if __name__ == "__main__":
    run(Path(sys.argv[1]), sys.argv[2])
