"""Jobs survive a real `kill -9` of the worker process: finished ones still answer, unfinished ones resume."""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.request
import wave
from pathlib import Path

import pytest

from tests.timing import seconds
from tests.worker_process import start_worker_process

ROOT = Path(__file__).resolve().parents[1]


def get(base: str, path: str) -> dict:
    with urllib.request.urlopen(base + path, timeout=seconds(10)) as response:
        return json.loads(response.read())


def post(base: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(
        base + path, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=seconds(10)) as response:
        return json.loads(response.read())


def wait_for(predicate, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


@pytest.mark.allow_blocking
def test_jobs_survive_kill_9_and_resume_without_losing_or_redoing_sections(tmp_path):
    state = tmp_path / "state"
    processes: list[subprocess.Popen] = []
    first = start_worker_process(state, 0, timeout=seconds(30), delay=0.0)
    base = f"http://127.0.0.1:{first.port}"
    processes.append(first)
    try:
        finished = post(base, "/synth_batch?async=1", {"sections": [{"idx": 0, "text": "끝난 작업."}]})[
            "job_id"
        ]
        wait_for(lambda: get(base, f"/jobs/{finished}/status")["status"] == "done", seconds(10))
        first.send_signal(signal.SIGKILL)
        first.wait()
        slow = start_worker_process(state, 0, timeout=seconds(30), delay=0.05)
        base = f"http://127.0.0.1:{slow.port}"  # a port of its own: the killed worker's may be taken by now
        processes.append(slow)
        sections = [{"idx": i, "text": f"섹션 {i} " + "가" * 30} for i in range(6)]
        job = post(base, "/synth_batch?async=1", {"sections": sections})["job_id"]
        wait_for(lambda: get(base, f"/jobs/{job}/status")["done"] >= 2, seconds(30))
        done_before_kill = get(base, f"/jobs/{job}/result")  # 202 body: status so far
        slow.send_signal(signal.SIGKILL)
        slow.wait()
        ok_before = get_log_oks(state / "jobs" / job / "events.ndjson")
        resumed = start_worker_process(state, 0, timeout=seconds(30), delay=0.0)
        base = f"http://127.0.0.1:{resumed.port}"
        processes.append(resumed)
        wait_for(lambda: get(base, f"/jobs/{job}/status")["status"] == "done", seconds(30))
        result = get(base, f"/jobs/{job}/result")
        assert result["ok_count"] == 6 and len(result["wav_paths"]) == 6
        for path in result["wav_paths"]:
            with wave.open(path) as wav:
                assert wav.getnframes() > 0
        events = [
            json.loads(line) for line in (state / "jobs" / job / "events.ndjson").read_text().splitlines()
        ]
        oks = [e["idx"] for e in events if e["event"] == "progress" and e["status"] == "ok"]
        assert sorted(oks) == list(range(6))  # every section exactly once: none lost, none twice
        for idx in ok_before:
            synths = [
                e for e in events if e["event"] == "progress" and e["status"] == "synth" and e["idx"] == idx
            ]
            assert len(synths) == 1, f"section {idx} was finished before the kill and ran again"
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        assert not list((state / "outputs" / job).glob("*.part"))
        old = get(base, f"/jobs/{finished}/result")
        assert old["status"] == "done" and old["ok_count"] == 1
        assert done_before_kill["done"] >= 2
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=seconds(10))


def get_log_oks(path: Path) -> list[int]:
    oks = []
    for line in path.read_text().splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event["event"] == "progress" and event["status"] == "ok":
            oks.append(event["idx"])
    return oks


@pytest.mark.allow_blocking
def test_a_job_cancelled_while_its_section_ran_is_not_resumed_after_a_kill_9(tmp_path):
    """A DELETE of a running job logs `done` only when the section stops; a worker killed before that
    (an engine call that does not return) must not start the job again at its next start."""
    state = tmp_path / "state"
    stuck = start_worker_process(state, 0, timeout=seconds(30), delay=5.0)  # one chunk: 5 s
    base = f"http://127.0.0.1:{stuck.port}"
    resumed = None
    try:
        sections = [{"idx": i, "text": f"섹션 {i} " + "가" * 30} for i in range(3)]
        job = post(base, "/synth_batch?async=1", {"sections": sections})["job_id"]
        wait_for(lambda: get(base, f"/jobs/{job}/status")["status"] == "running", seconds(10))
        request = urllib.request.Request(f"{base}/jobs/{job}", method="DELETE")
        with urllib.request.urlopen(request, timeout=seconds(10)) as response:
            assert json.loads(response.read())["cancel_requested"] is True
        stuck.send_signal(signal.SIGKILL)  # before the section's next chunk: no `done` yet
        stuck.wait()
        log = (state / "jobs" / job / "events.ndjson").read_text()
        assert '"done"' not in log
        resumed = start_worker_process(state, 0, timeout=seconds(30), delay=0.0)
        base = f"http://127.0.0.1:{resumed.port}"
        wait_for(lambda: get(base, f"/jobs/{job}/status")["status"] == "cancelled", seconds(10))
        events = [
            json.loads(line) for line in (state / "jobs" / job / "events.ndjson").read_text().splitlines()
        ]
        assert events[-1]["event"] == "done" and events[-1]["cancelled"] is True
        assert not [e for e in events if e["event"] == "progress" and e.get("status") == "ok"]
    finally:
        for process in (stuck, resumed):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()


@pytest.mark.allow_blocking
def test_a_job_killed_between_its_last_ok_and_its_done_ends_at_the_next_start(tmp_path):
    """Every section is final in the log but `done` is not (a `kill -9` while it was written, its line
    cut): the job has nothing left to resume and must end, not stay `interrupted` for good."""
    state = tmp_path / "state"
    worker = start_worker_process(state, 0, delay=0.0)
    base = f"http://127.0.0.1:{worker.port}"
    try:
        job = post(base, "/synth_batch?async=1", {"sections": [{"idx": 0, "text": "하나."}]})["job_id"]
        wait_for(lambda: get(base, f"/jobs/{job}/status")["status"] == "done", seconds(10))
    finally:
        worker.kill()
        worker.wait()
    path = state / "jobs" / job / "events.ndjson"
    path.write_bytes(path.read_bytes()[:-10])  # the `done` line cut short
    worker = start_worker_process(state, 0, delay=0.0)
    base = f"http://127.0.0.1:{worker.port}"
    try:
        wait_for(lambda: get(base, f"/jobs/{job}/status")["status"] == "done", seconds(10))
        result = get(base, f"/jobs/{job}/result")
        with urllib.request.urlopen(f"{base}/jobs/{job}/events?after=0", timeout=seconds(10)) as stream:
            lines = [json.loads(line) for line in stream.read().splitlines()]
    finally:
        worker.kill()
        worker.wait()
    assert result["ok_count"] == 1 and result["status"] == "done"
    assert [line["event"] for line in lines][-1] == "done" and [line["seq"] for line in lines] == [1, 2, 3, 4]


@pytest.mark.allow_blocking
def test_a_job_killed_between_its_job_json_and_its_start_resumes_with_its_start_first(tmp_path):
    """`job.json` is written, then `start` logged: a `kill -9` between the two (or a full disk that kept
    the line back, then a kill) left a job that resumed without any `start` in its log."""
    state = tmp_path / "state"
    worker = start_worker_process(state, 0, delay=5.0)  # the first job holds the engine
    base = f"http://127.0.0.1:{worker.port}"
    try:
        post(base, "/synth_batch?async=1", {"sections": [{"idx": 0, "text": "먼저."}]})
        sections = [{"idx": i, "text": f"섹션 {i}."} for i in range(3)]
        job = post(base, "/synth_batch?async=1", {"sections": sections})["job_id"]
        health = get(base, "/health")
    finally:
        worker.kill()
        worker.wait()
    (state / "jobs" / job / "events.ndjson").unlink()  # as if killed before its `start` was written
    worker = start_worker_process(state, 0, delay=0.0)
    base = f"http://127.0.0.1:{worker.port}"
    try:
        wait_for(lambda: get(base, f"/jobs/{job}/status")["status"] == "done", seconds(30))
        with urllib.request.urlopen(f"{base}/jobs/{job}/events", timeout=seconds(10)) as stream:
            lines = [json.loads(line) for line in stream.read().splitlines()]
    finally:
        worker.kill()
        worker.wait()
    backend, device, rate = health["backend"], health["device"], health["sample_rate"]
    start = {"event": "start", "total": 3, "backend": backend, "device": device, "job_id": job}
    assert lines[0] == {**start, "sample_rate": rate, "seq": 1}
    assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))
    assert [line["event"] for line in lines].count("start") == 1 and lines[-1]["event"] == "done"
    assert lines[-1]["ok_count"] == 3
