"""SIGTERM on a real worker process: it stops accepting, lets the running section finish (bounded),
logs what it did and exits; an idle worker exits at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.log_drain import LoggedProcess
from tests.serve_process import ServeProcess
from tests.timing import seconds
from tests.worker_process import refusing_port, start_worker_process

pytestmark = pytest.mark.allow_blocking
REPO = Path(__file__).resolve().parents[1]
# "At once" in these tests: well short of every wait the worker could have made instead (the slow
# section's 20 s, the engine thread's 30 s join, the default 30 s grace, aiohttp's 60 s for open
# connections), not a figure of speed. An idle worker's SIGTERM to exit took 1.9–3.6 s in 10 of 10 runs
# beside two busy loops on the shared 2-core VM (a 1 s bound failed them all), 0.12–0.26 s calm.
AT_ONCE = seconds(10.0)


def get(base: str, path: str) -> dict:
    with urllib.request.urlopen(base + path, timeout=seconds(10)) as response:
        return json.loads(response.read())


def post(base: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(
        base + path, json.dumps(body).encode(), {"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=seconds(10)) as response:
        return json.loads(response.read())


def wait_loaded(base: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + seconds(30)
    while time.monotonic() < deadline:
        assert process.poll() is None, "the worker exited while starting"
        try:
            if get(base, "/health")["loaded"]:
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("worker did not load")


def wait_running(base: str, job_id: str) -> None:
    deadline = time.monotonic() + seconds(10)
    while get(base, f"/jobs/{job_id}/status")["status"] != "running":
        assert time.monotonic() < deadline, "the job never started"
        time.sleep(0.01)


def terminate(process: LoggedProcess) -> tuple[float, str]:
    """SIGTERM; seconds until the process is gone, and what it logged."""
    started = time.monotonic()
    log = process.terminate_and_log(seconds(60))
    return time.monotonic() - started, log


def serve(*args: str, without: str | None = None) -> ServeProcess:
    """`npu-worker serve --port 0 ARGS` from this checkout (`without`: an environment variable unset)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return ServeProcess(args, {name: value for name, value in env.items() if name != without})


def test_an_idle_worker_exits_at_once(tmp_path):
    process = serve("--state-dir", str(tmp_path / "state"), "--cache-max-bytes", "0")
    try:
        wait_loaded(process.base, process)
        # The lanes load after /health says loaded; one that loads once the shutdown began is closed
        # unsaid, so the stop waits for the line (on a loaded box it came after the SIGTERM).
        process.log_until("preview lanes: 2 engine instances", seconds(60))
        elapsed, log = terminate(process)
    finally:
        process.kill()
    assert process.returncode == 0, log
    assert elapsed < AT_ONCE, f"an idle worker took {elapsed:.2f} s to exit"
    assert "shutdown: no longer accepting connections" in log
    assert "shutdown: no section was being synthesised" in log
    assert "preview lanes: 2 engine instances" in log  # espeak's preview lane opened, and ended
    assert "npu-worker stopped" in log


def running_batch(state: Path) -> tuple[LoggedProcess, str, str]:
    """A worker process running a 3-section batch (100 characters each → 2 s of tone in 40 chunks of
    50 ms, each 20 ms late: about 0.8 s per section): (process, base URL, job id)."""
    process = start_worker_process(state, 0, delay=0.02, logged=True)
    base = f"http://127.0.0.1:{process.port}"
    try:
        sections = [{"idx": i, "text": "가" * 100} for i in range(3)]
        job = post(base, "/synth_batch?async=1", {"sections": sections})["job_id"]
        wait_running(base, job)
    except BaseException:
        process.kill()
        raise
    return process, base, job


def test_the_running_section_finishes_and_the_rest_stays_queued(tmp_path):
    state = tmp_path / "state"
    process, _, job = running_batch(state)
    try:
        elapsed, log = terminate(process)
    finally:
        process.kill()
    assert process.returncode == 0, log
    assert f"shutdown: let section 0 of job {job} finish" in log
    assert "shutdown: 2 queued sections left; batch jobs resume on restart" in log
    assert (state / "outputs" / job / "s00.wav").is_file()  # the section that ran was completed
    events = [json.loads(line) for line in (state / "jobs" / job / "events.ndjson").read_text().splitlines()]
    assert [e["event"] for e in events if e.get("event") in ("done", "error")] == []  # nothing cancelled


def test_sighup_drains_like_sigterm(tmp_path):
    """A closed terminal or a supervisor's SIGHUP killed the worker outright (no drain, no line)."""
    state = tmp_path / "state"
    process, _, job = running_batch(state)
    try:
        process.send_signal(signal.SIGHUP)
        time.sleep(0.3)
        process.send_signal(signal.SIGHUP)  # a closed terminal often sends two: still the drain
        log = process.log_at_exit(seconds(60))
    finally:
        process.kill()
    assert process.returncode == 0, log
    assert "SIGHUP: shutting down" in log and f"shutdown: let section 0 of job {job} finish" in log


def slow_section(state: Path, grace: float) -> tuple[LoggedProcess, str]:
    """A worker process running one section of 40 chunks, each 0.5 s late (20 s): (process, job id)."""
    process = start_worker_process(state, 0, delay=0.5, grace=grace, logged=True)
    base = f"http://127.0.0.1:{process.port}"
    try:
        job = post(base, "/synth_batch?async=1", {"sections": [{"idx": 0, "text": "가" * 100}]})["job_id"]
        wait_running(base, job)
    except BaseException:
        process.kill()
        raise
    return process, job


def test_a_second_signal_exits_at_once_without_waiting_for_the_drain(tmp_path):
    process, _ = slow_section(tmp_path / "state", grace=60)  # the grace would let the section finish
    try:
        process.send_signal(signal.SIGTERM)
        process.log_until("SIGTERM: shutting down", seconds(10))  # the drain has begun
        assert process.poll() is None
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        log = process.log_at_exit(seconds(30))
    finally:
        process.kill()
    assert process.returncode == 1 and time.monotonic() - started < AT_ONCE, log
    assert "SIGINT again: exiting now, without waiting for the drain" in log


def test_sigterm_sent_twice_at_once_as_timeout_sends_it_still_drains(tmp_path):
    """`timeout 3600 npu-worker serve` ended it without the drain: coreutils `timeout` sends its SIGTERM to
    the worker and then to its process group, so the worker got two at once, took the second for an
    operator's "now" and exited 1 (`SIGTERM again: exiting now`). A repeat that soon is the same stop."""
    process, job = slow_section(tmp_path / "state", grace=0.3)
    try:
        os.kill(process.pid, signal.SIGTERM)  # what timeout(1) does: the process, then its group
        time.sleep(0.2)  # two deliveries (one still pending when the next comes would be one signal)
        os.kill(process.pid, signal.SIGTERM)
        log = process.log_at_exit(seconds(30))
    finally:
        process.kill()
    assert process.returncode == 0, log
    assert "exiting now" not in log
    assert f"shutdown: section 0 of job {job} ran past 0.3 s; cancelled" in log


def test_a_section_running_past_the_grace_is_cancelled(tmp_path):
    process, job = slow_section(tmp_path / "state", grace=0.3)
    try:
        elapsed, log = terminate(process)
    finally:
        process.kill()
    assert process.returncode == 0, log
    assert f"shutdown: section 0 of job {job} ran past 0.3 s; cancelled" in log
    assert elapsed < AT_ONCE


def test_an_open_ndjson_stream_ends_whole_after_the_drain_not_cut(tmp_path):
    """A client following a batch gets every line the log holds and a properly ended response (it then
    re-attaches with `after=` after the restart), not a connection cut when aiohttp's timeout runs out."""
    state = tmp_path / "state"
    process, base, job = running_batch(state)
    try:
        with urllib.request.urlopen(f"{base}/jobs/{job}/events", timeout=seconds(30)) as stream:
            first = json.loads(stream.readline())
            elapsed, log = terminate(process)
            rest = stream.read()  # http.client raises IncompleteRead on a cut chunked response
    finally:
        process.kill()
    assert process.returncode == 0, log
    lines = [first] + [json.loads(line) for line in rest.splitlines() if line]
    logged = [json.loads(line) for line in (state / "jobs" / job / "events.ndjson").read_text().splitlines()]
    *entries, last = lines
    assert [line["seq"] for line in entries] == [entry["seq"] for entry in logged]
    # the last line says the stream ended before `done` and where to re-attach: a line loop such as the
    # user's `for line in resp` read the clean end as the whole job
    assert last == {
        "event": "error",
        "idx": None,
        "error": f"ShuttingDown: the worker is shutting down; job {job} goes on when it starts again: "
        f"re-attach with GET /jobs/{job}/events?after={logged[-1]['seq']}",
        "status": "fail",
    }, last
    assert "shutdown: ended 1 NDJSON streams" in log


def test_a_worker_waiting_for_its_sovits_upstream_exits_at_once(tmp_path):
    """--backend sovits with nothing at --sovits-base: the worker says it is loading (it waits for the
    upstream to come up) and SIGTERM still ends it at once, not after the engine thread's 30 s join."""
    with refusing_port() as dead:
        process = serve("--backend", "sovits", "--sovits-base", f"http://127.0.0.1:{dead}",
                        "--state-dir", str(tmp_path / "state"))  # fmt: skip
        log = waited_then_terminated(process)
    assert process.returncode == 0, log
    assert f"sovits_worker at http://127.0.0.1:{dead} is unreachable: connection refused" in log
    assert "engine load stopped by the shutdown" in log and "Traceback" not in log


def waited_then_terminated(process: ServeProcess) -> str:
    """The log of a worker whose sovits upstream refuses it, stopped (SIGTERM) once it said it waits."""
    try:
        base, health = process.base, None
        deadline = time.monotonic() + seconds(30)
        while health is None or "waiting for sovits_worker" not in str(health.get("load_phase")):
            assert process.poll() is None and time.monotonic() < deadline, "the worker never waited"
            try:
                urllib.request.urlopen(base + "/health", timeout=seconds(5))
            except urllib.error.HTTPError as answer:  # 503 while loading
                health = json.loads(answer.read())
            except OSError:
                time.sleep(0.05)
        assert health["status"] == "loading" and "connection refused" in health["load_phase"]
        elapsed, log = terminate(process)
    finally:
        process.kill()
    assert elapsed < AT_ONCE, f"the worker took {elapsed:.2f} s to exit"
    return log


def test_a_batch_cut_past_the_grace_resumes_after_the_restart_not_cancelled(tmp_path):
    """The shutdown stops a section that runs past the grace, but nobody cancelled the job: it must not
    end with `done` (`cancelled: true`, its other sections lost), it resumes at the next start."""
    state = tmp_path / "state"
    process = start_worker_process(state, 0, delay=0.5, grace=0.3, logged=True)
    base = f"http://127.0.0.1:{process.port}"
    try:
        sections = [{"idx": i, "text": "가" * 100} for i in range(2)]
        job = post(base, "/synth_batch?async=1", {"sections": sections})["job_id"]
        wait_running(base, job)
        _, log = terminate(process)
    finally:
        process.kill()
    assert f"shutdown: section 0 of job {job} ran past 0.3 s; cancelled" in log
    logged = [json.loads(line) for line in (state / "jobs" / job / "events.ndjson").read_text().splitlines()]
    assert [e["event"] for e in logged if e["event"] in ("done", "error")] == []
    # on a port of its own choosing: the one just closed may have been taken meanwhile
    process = start_worker_process(state, 0, delay=0.0, logged=True)
    base = f"http://127.0.0.1:{process.port}"
    try:
        deadline = time.monotonic() + seconds(30)
        while (status := get(base, f"/jobs/{job}/status"))["status"] not in ("done", "cancelled"):
            assert time.monotonic() < deadline, status
            time.sleep(0.05)
        result = get(base, f"/jobs/{job}/result")
    finally:
        process.kill()
        process.log_at_exit(seconds(30))
    assert result["status"] == "done" and result["ok_count"] == 2, result


def test_a_text_that_crashes_espeak_fails_one_section_of_a_default_worker_which_speaks_on(tmp_path):
    """espeak-ng 1.52 overflows its stack on "s'" * 100 and "A." * 200 (en) and aborts the process it
    parses them in: with espeak on the engine thread (the default until 2026-12-05) that process was
    the worker, ended by 200 characters from any caller. The default now runs espeak in a child."""
    state = str(tmp_path / "state")
    process = serve("--state-dir", state, "--cache-max-bytes", "0", without="NPU_WORKER_ESPEAK_PROCESS")
    base = process.base
    try:
        wait_loaded(base, process)
        for text, lang in (("s'" * 100, "ko"), ("A." * 200, "en")):
            failed = post(
                base, "/synth", {"text": text, "lang": lang, "output_path": str(tmp_path / "x.wav")}
            )
            assert failed["status"] == "fail", failed
            assert failed["error"].startswith("UnparsableText: espeak-ng's process failed"), failed
            spoken = {"text": "반갑습니다.", "lang": "ko", "output_path": str(tmp_path / "a.wav")}
            assert post(base, "/synth", spoken)["status"] == "ok"
        assert process.poll() is None and get(base, "/health")["status"] == "ok"
    finally:
        process.kill()
        process.log_at_exit(seconds(30))
