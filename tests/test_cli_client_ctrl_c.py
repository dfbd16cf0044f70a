"""`npu-worker batch` stopped by Ctrl-C against a worker that waits, says loading or lost the job
(tests/rogue_worker.py): the job it started is cancelled once the worker lets it, or the command says
what became of it; split out of test_cli_client_rogue_worker.py."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import pytest

from tests.rogue_worker import RogueWorker, ndjson
from tests.test_cli_client import ROOT, write_lecture
from tests.test_cli_client_rogue_worker import GONE, LOADING, OK0, START, body
from tests.timing import seconds


async def batch_interrupted_once(argv: list[str], waited_for: bytes) -> tuple[int | None, bytes]:
    """`npu-worker batch argv` as a process, sent Ctrl-C once a line of its stderr begins with
    `waited_for`: its exit code and the stderr after that line."""
    process = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "npu_worker.cli_client", "batch", *argv],
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        async with asyncio.timeout(seconds(20)):
            assert process.stderr is not None
            while not (line := await process.stderr.readline()).startswith(waited_for):
                assert line, "the batch ended before it waited"
            process.send_signal(signal.SIGINT)
            _, err = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return process.returncode, err


async def test_ctrl_c_while_a_polled_job_waits_for_the_worker_cancels_that_job(tmp_path):
    """In polling mode `batch` learnt its job's id from the first status poll answered: Ctrl-C while the
    worker still said `Loading` (after a restart: up to --wait-limit) said "the worker had named no job
    yet" and cancelled nothing, so the job ran on, unattended, once the worker had loaded."""
    cancelled = body({"job_id": "j1", "status": "cancelled", "done": 0, "total": 2, "cancel_requested": True})

    def script(method: str, path: str) -> bytes:
        if method == "POST":
            return body({"job_id": "j1", "status": "queued", "total": 2})
        return cancelled if method == "DELETE" else LOADING

    lecture = write_lecture(tmp_path / "lecture.json", ["one.", "two."])
    async with RogueWorker(script) as rogue:
        argv = [str(lecture), "--out-dir", str(tmp_path / "out"), "--base", rogue.base, "--poll"]
        code, err = await batch_interrupted_once(argv, b"waiting for the worker: Loading: x")
    assert code == 130 and ("DELETE", "/jobs/j1") in rogue.requests, err
    assert err.decode().splitlines()[-1] == (
        "npu-worker batch: interrupted; job j1 cancelled, 0 of 2 sections done (their wavs are kept)"
    )


@pytest.mark.parametrize("poll", [False, True], ids=["stream", "poll"])
async def test_ctrl_c_while_the_worker_says_loading_cancels_the_job_once_it_lets_it(tmp_path, poll: bool):
    """The worker restarted mid-batch and answers every `/jobs` request `Loading` until it has loaded
    (minutes on an NPU): Ctrl-C's DELETE was refused once, `batch` said "may still be running" and the
    job ran on, unattended, once the worker was up. Now the DELETE waits as the worker asks, saying so."""
    cancelled = body({"job_id": "j1", "status": "cancelled", "done": 1, "total": 2, "cancel_requested": True})
    deletes = [LOADING, LOADING, cancelled]

    def script(method: str, path: str) -> bytes:
        if method == "POST":
            return body({"job_id": "j1", "status": "queued", "total": 2}) if poll else ndjson(START, OK0)
        return deletes.pop(0) if method == "DELETE" else LOADING

    lecture = write_lecture(tmp_path / "lecture.json", ["one.", "two."])
    async with RogueWorker(script) as rogue:
        argv = [
            str(lecture),
            "--out-dir",
            str(tmp_path / "out"),
            "--base",
            rogue.base,
            *(["--poll"] if poll else []),
        ]
        code, err = await batch_interrupted_once(argv, b"waiting for the worker")
    said = err.decode().splitlines()
    assert code == 130 and deletes == [], said
    assert [request for request in rogue.requests if request[0] == "DELETE"] == [("DELETE", "/jobs/j1")] * 3
    told = said.index(
        "npu-worker batch: cancelling job j1 when the worker lets it (Ctrl-C again: let it run)"
    )
    assert said[told + 1].startswith("waiting for the worker: Loading: x (again in 0.5 s; waited 0:00 of")
    assert said[-1] == (
        "npu-worker batch: interrupted; job j1 cancelled, 1 of 2 sections done (their wavs are kept)"
    )


@pytest.mark.parametrize("poll", [False, True], ids=["stream", "poll"])
async def test_ctrl_c_once_the_worker_has_lost_the_job_says_so(tmp_path, poll: bool):
    """The worker restarted mid-batch without its state (it says `Loading`, then knows no job j1): Ctrl-C's
    DELETE answered 404 `JobNotFound` was "job j1 may still be running: cancelling it failed (…); DELETE
    /jobs/j1 stops it", of a job that no longer exists and will never finish its sections."""

    def script(method: str, path: str) -> bytes:
        if method == "POST":
            return body({"job_id": "j1", "status": "queued", "total": 2}) if poll else ndjson(START, OK0)
        return GONE if method == "DELETE" else LOADING  # (its answer once loaded: JobNotFound too)

    lecture = write_lecture(tmp_path / "lecture.json", ["one.", "two."])
    async with RogueWorker(script) as rogue:
        argv = [str(lecture), "--out-dir", str(tmp_path / "out"), "--base", rogue.base, *(["--poll"] * poll)]
        code, err = await batch_interrupted_once(argv, b"waiting for the worker")
    said = err.decode().splitlines()
    assert code == 130 and ("DELETE", "/jobs/j1") in rogue.requests, said
    assert said[-1] == (
        "npu-worker batch: interrupted; nothing to cancel: the worker no longer knows job j1 (restarted"
        " without its state dir, its queue's Redis restarted without its data, or the job expired):"
        f" {0 if poll else 1} of 2 sections had finished; send the others again"
    ), said
