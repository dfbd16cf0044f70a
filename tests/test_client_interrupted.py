"""A pipeline (a Python script on the sync client) stopped by Ctrl-C as its batch runs: the job runs on and
writes its wavs, and the `KeyboardInterrupt`'s traceback named no job, so the caller could not stop it (the
`npu-worker batch` command cancels its own). Its note now names the job and how to cancel it. Against a
real in-process worker, its engine held so that the job is still running."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator

import pytest

from tests.rogue_worker import RogueWorker, ndjson, reply
from tests.signal_scripts import run_client
from tests.tone_engine import ToneEngine

# The pipeline: a batch whose `on_progress` sends the process a Ctrl-C at its MOMENT's event (of STATUS,
# if given: a polled status's word).
PIPELINE = """
import os, signal, sys
from npu_worker import client
base, out, moment, *status = sys.argv[1:]
def progress(idx, event):
    if event["event"] == moment and (not status or event.get("status") == status[0]):
        os.kill(os.getpid(), signal.SIGINT)
sections = [{"idx": i, "text": "가나다.", "output_path": f"{out}/s{i:02d}.wav"} for i in range(2)]
call = client.synth_batch_polling if moment == "status" else client.synth_batch_streaming
call(sections, progress, base=base)
"""


@pytest.mark.allow_blocking
@pytest.mark.parametrize("moment", ["start", "status"], ids=["stream", "poll"])
async def test_a_ctrl_c_in_a_pipeline_names_the_job_it_leaves_running(worker, tmp_path, moment):
    engine = ToneEngine()
    engine.gate = threading.Event()  # the job runs until the test ends
    server = await worker(engine)
    try:
        base = f"http://127.0.0.1:{server.port}"
        run = await asyncio.to_thread(run_client, PIPELINE, base, str(tmp_path), moment)
        jobs = (await (await server.get("/jobs")).json())["jobs"]
    finally:
        engine.gate.set()
    assert run.returncode != 0 and "KeyboardInterrupt" in run.stderr, run.stderr
    job = jobs[0]["job_id"]
    assert run.stderr.splitlines()[-1] == (
        f"npu_worker.client: job {job!r} was left running (it writes its wavs on): cancel_job({job!r}),"
        f" DELETE /jobs/{job}, stops it"
    ), run.stderr


@pytest.mark.allow_blocking
async def test_a_ctrl_c_once_a_poll_said_the_job_ended_names_its_result_not_a_job_left_running(
    worker, tmp_path
):
    """Stopped after the polled status said `done`, before the result was fetched: the note said the job
    "was left running (it writes its wavs on)" and that cancel_job stops it, of a job that had ended."""
    server = await worker(ToneEngine())
    base = f"http://127.0.0.1:{server.port}"
    run = await asyncio.to_thread(run_client, PIPELINE, base, str(tmp_path), "status", "done")
    jobs = (await (await server.get("/jobs")).json())["jobs"]
    assert run.returncode != 0 and "KeyboardInterrupt" in run.stderr, run.stderr
    job = jobs[0]["job_id"]
    assert run.stderr.splitlines()[-1] == (
        f"npu_worker.client: job {job!r} had ended (done) before its result was fetched:"
        f" GET /jobs/{job}/result has it"
    ), run.stderr


ESCAPES = "j\x1b[2J\nTraceback (most recent call last):"
ESCAPES_PATH = "/jobs/j%1B%5B2J%0ATraceback%20%28most%20recent%20call%20last%29%3A"


@pytest.mark.allow_blocking
@pytest.mark.parametrize(
    ("hostile", "sent"),
    [(ESCAPES, ESCAPES_PATH), ("j\ud800", "/jobs/j%ED%A0%80")],
    ids=["escapes", "surrogate"],
)
async def test_a_hostile_workers_job_id_puts_no_control_character_in_the_note(tmp_path, hostile, sent):
    """The note said the worker's job id raw, three times: an id with an escape sequence and a line break
    cleared the caller's terminal and forged a line of the traceback. Now quoted as `repr` says it, and
    percent-encoded in the path, as the client sends it. An id with a lone surrogate (JSON's `\\ud800`)
    made the note's percent-encoding raise UnicodeEncodeError in place of the caller's KeyboardInterrupt."""
    never = asyncio.Event()

    async def stream(method: str, path: str) -> AsyncIterator[bytes]:
        yield ndjson({"event": "start", "seq": 1, "job_id": hostile, "total": 2})
        await never.wait()

    async with RogueWorker(stream) as rogue:
        try:
            run = await asyncio.to_thread(run_client, PIPELINE, rogue.base, str(tmp_path), "start")
        finally:
            never.set()
    assert "KeyboardInterrupt" in run.stderr, run.stderr
    note = run.stderr.splitlines()[-1]
    assert note == (
        f"npu_worker.client: job {hostile!r} was left running (it writes its wavs on):"
        f" cancel_job({hostile!r}), DELETE {sent}, stops it"
    ), run.stderr
    assert "\x1b" not in run.stderr


@pytest.mark.allow_blocking
@pytest.mark.parametrize("status", [["queued"], {"queued": 1}], ids=["list", "object"])
async def test_a_ctrl_c_after_an_accepted_body_whose_status_is_no_word_stays_a_keyboard_interrupt(
    tmp_path, status
):
    """A worker that accepted the batch with a `status` that is no word (a list, an object): the note's
    check of whether the job had ended raised `TypeError: unhashable type` in place of the caller's
    KeyboardInterrupt (a script's `except KeyboardInterrupt` missed it; `batch --poll` was a traceback)."""

    def script(method: str, path: str) -> bytes:
        return reply(202, json.dumps({"job_id": "j1", "status": status, "total": 2}).encode())

    async with RogueWorker(script) as rogue:
        run = await asyncio.to_thread(run_client, PIPELINE, rogue.base, str(tmp_path), "status")
    assert "TypeError" not in run.stderr, run.stderr
    assert run.stderr.splitlines()[-2:] == [
        "KeyboardInterrupt",
        "npu_worker.client: job 'j1' was left running (it writes its wavs on): cancel_job('j1'),"
        " DELETE /jobs/j1, stops it",
    ], run.stderr


async def test_batch_poll_stopped_after_an_accepted_body_whose_status_is_no_word_cancels_its_job(tmp_path):
    """`npu-worker batch --poll` so stopped: the client's TypeError was a traceback and exit 1 ("some
    sections failed"), the job neither cancelled nor named; now it is cancelled, as any, exit 130."""
    from tests.test_cli_client import write_lecture
    from tests.test_cli_client_ctrl_c import LOADING, batch_interrupted_once

    def script(method: str, path: str) -> bytes:
        if method == "POST":
            return reply(202, json.dumps({"job_id": "j1", "status": ["queued"], "total": 2}).encode())
        if method == "DELETE":
            cancelled = {
                "job_id": "j1",
                "status": "cancelled",
                "done": 0,
                "total": 2,
                "cancel_requested": True,
            }
            return reply(200, json.dumps(cancelled).encode())
        return LOADING

    lecture = write_lecture(tmp_path / "lecture.json", ["one.", "two."])
    async with RogueWorker(script) as rogue:
        argv = [str(lecture), "--out-dir", str(tmp_path / "out"), "--base", rogue.base, "--poll"]
        code, err = await batch_interrupted_once(argv, b"waiting for the worker: Loading: x")
    assert code == 130 and ("DELETE", "/jobs/j1") in rogue.requests, err
    assert err.decode().splitlines()[-1] == (
        "npu-worker batch: interrupted; job j1 cancelled, 0 of 2 sections done (their wavs are kept)"
    ), err
