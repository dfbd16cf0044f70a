"""The client commands stopped once the worker had done the work, before the command had its result,
against a real `serve --port 0` (espeak): `batch --poll` stopped between the poll that said its job had
ended and the fetch of its result sent a DELETE for the ended job and said `terminated`, 143 and "job …
had already ended", with no word of the wavs made."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve_process import ServeProcess
from tests.signal_scripts import ROOT, console_script, run_script
from tests.timing import seconds

# SIGNAL sent by the process to itself the moment the client asks for PATH's last part (`result`):
# each poll of the status has been answered, the last saying the job had ended.
SIGNALLED_ASKING_FOR = console_script("""
last, signame = sys.argv.pop(1), sys.argv.pop(1)
def hook(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "json" and str(frame.f_locals.get("path")).endswith(last):
        sys.setprofile(None)
        os.kill(os.getpid(), getattr(signal, signame))
sys.setprofile(hook)
""")
STOPS = [("SIGTERM", "terminated"), ("SIGHUP", "hung up"), ("SIGINT", "interrupted")]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    state = tmp_path_factory.mktemp("state")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("NPU_WORKER_TOKEN", None)
    worker = ServeProcess(["--state-dir", str(state)], env)
    try:
        yield worker.base
    finally:
        worker.terminate_and_log(seconds(30))


def client(script: str, *words: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("NPU_WORKER_TOKEN", None)
    return run_script(script, *words, timeout=seconds(60), env=env)


def lecture(tmp_path: Path, *texts: str) -> Path:
    path = tmp_path / "lecture.json"
    path.write_text(json.dumps({"lang": "ko", "sections": [{"text": text} for text in texts]}))
    return path


@pytest.mark.allow_blocking
@pytest.mark.parametrize(("signame", "word"), STOPS)
def test_batch_poll_stopped_before_it_fetched_its_ended_jobs_result_cancels_nothing(
    tmp_path, base, signame, word
):
    out = tmp_path / "out"
    done = client(
        SIGNALLED_ASKING_FOR, "/result", signame, "batch", str(lecture(tmp_path, "가나다.", "라.")),
        "--out-dir", str(out), "--base", base, "--poll",
    )  # fmt: skip
    said = done.stderr.splitlines()[-1:]
    assert done.returncode == 0, done.stderr
    assert len(said) == 1 and said[0].startswith(
        f"npu-worker batch: {word} as it fetched its result; job "
    ), said
    job = said[0].split("; job ", 1)[1].split(" ", 1)[0]
    assert said == [
        f"npu-worker batch: {word} as it fetched its result; job {job} had done; the work was done:"
        f" 2/2 sections ok, their wavs in {out} (GET /jobs/{job}/result has its result)"
    ]
    assert "cancel" not in done.stderr and sorted(path.name for path in out.glob("*.wav")) == [
        "s00.wav",
        "s01.wav",
    ]
