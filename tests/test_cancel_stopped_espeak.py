"""A DELETE of a batch whose running section's espeak child has stopped answering (SIGSTOP, a hung
host): the cancel's `STOP` goes unanswered, the child is killed after `STOP_SECONDS` and the section's
read fails (`EngineError`). The cancel stopped that section, so the job ends cancelled; it ended `done`
(`cancelled: false`, the section counted failed) once a too-late cancel was told by every section having
an end: the error of the section the cancel had cut counted as one of its own."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import time
import urllib.request

import pytest

from tests.serve_process import ServeProcess
from tests.signal_scripts import tokenless_env
from tests.test_shutdown_stopped_espeak import REPO, espeak_children, unread_request_bytes
from tests.timing import seconds

pytestmark = pytest.mark.allow_blocking


def call(base: str, method: str, path: str, body: object = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data, {"Content-Type": "application/json"}, method=method)
    with urllib.request.urlopen(request, timeout=seconds(30)) as answer:
        return json.loads(answer.read())


def events_to_done(base: str, job_id: str) -> list[dict]:
    """The job's events, the stream read to its end (it follows the job to its `done`)."""
    with urllib.request.urlopen(f"{base}/jobs/{job_id}/events", timeout=seconds(60)) as answer:
        return [json.loads(line) for line in answer.read().splitlines() if line.strip()]


def test_a_delete_that_a_stopped_child_failed_to_answer_ends_the_batch_cancelled(tmp_path):
    env = {**tokenless_env(), "PYTHONPATH": str(REPO)}
    state = ["--state-dir", str(tmp_path / "state"), "--cache-max-bytes", "0", "--preview-lanes", "1"]
    process = ServeProcess(state, env)
    children: list[int] = []
    try:
        base = process.wait_ready()
        children = espeak_children(process.pid)
        assert len(children) == 1, children
        os.kill(children[0], signal.SIGSTOP)
        section = {"idx": 0, "text": "멈춘 자식 프로세스입니다.", "output_path": str(tmp_path / "a.wav")}
        job_id = call(base, "POST", "/synth_batch?async=1", {"sections": [section]})["job_id"]
        deadline = time.monotonic() + seconds(30)  # (no event says the request reached the child)
        while not unread_request_bytes(children[0]):
            assert time.monotonic() < deadline, f"the request never reached the child: {process.log()}"
            time.sleep(0.02)
        assert call(base, "DELETE", f"/jobs/{job_id}")["cancel_requested"] is True
        (done,) = [event for event in events_to_done(base, job_id) if event.get("event") == "done"]
        status = call(base, "GET", f"/jobs/{job_id}/status")
    finally:
        process.kill()
        for child in children:  # stopped, it would outlive the worker (and the test)
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
    assert done["cancelled"] is True, (done, process.log())
    assert status["status"] == "cancelled", status


def test_a_delete_during_the_drain_that_a_stopped_child_failed_to_answer_is_said_to_stop_it(tmp_path):
    """The same cut during the shutdown's drain: the drain said it let the section finish, its job's
    cancel too late to stop it, of a section the cancel had stopped (its child killed, its wav not
    written), and the job ended cancelled."""
    env = {**tokenless_env(), "PYTHONPATH": str(REPO)}
    state = ["--state-dir", str(tmp_path / "state"), "--cache-max-bytes", "0", "--preview-lanes", "1"]
    process = ServeProcess([*state, "--shutdown-grace", "60"], env)
    children: list[int] = []
    try:
        base = process.wait_ready()
        children = espeak_children(process.pid)
        os.kill(children[0], signal.SIGSTOP)
        kept = http.client.HTTPConnection("127.0.0.1", process.port, timeout=seconds(30))  # (kept alive)
        body = json.dumps({"sections": [{"idx": 0, "text": "멈춘 자식 프로세스입니다."}]})
        kept.request("POST", "/synth_batch?async=1", body, {"Content-Type": "application/json"})
        job_id = json.loads(kept.getresponse().read())["job_id"]
        deadline = time.monotonic() + seconds(30)  # (no event says the request reached the child)
        while not unread_request_bytes(children[0]):
            assert time.monotonic() < deadline, f"the request never reached the child: {process.log()}"
            time.sleep(0.02)
        process.terminate()
        process.log_until("SIGTERM: shutting down", seconds(30))
        kept.request("DELETE", f"/jobs/{job_id}")
        assert json.loads(kept.getresponse().read())["cancel_requested"] is True
        kept.close()
        log = process.log_at_exit(seconds(60))
    finally:
        process.kill()
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
    assert base
    said = [line for line in log.splitlines() if "shutdown:" in line and f"job {job_id}" in line]
    assert any("stopped" in line and "its wav not written" in line for line in said), log
    assert not any("too late" in line for line in said), said
