"""Several worker processes sharing jobs through a real redis-server (no mocks): any node accepts,
any node streams, a node killed mid-section loses nothing, Redis restarts are waited out."""

from __future__ import annotations

import concurrent.futures
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster_support import call, node_starter
from tests.redis_server import RedisServer
from tests.timing import seconds
from tests.worker_process import refusing_port

pytestmark = pytest.mark.allow_blocking


@pytest.fixture
def start_node(tmp_path: Path, redis_server: RedisServer) -> Iterator[Any]:
    yield from node_starter(tmp_path, redis_server)


def events(
    url: str, stop_after_ok: int | None = None, attached: threading.Event | None = None
) -> list[dict[str, Any]]:
    """NDJSON lines of a job stream; with `stop_after_ok`, hang up after that many `ok` lines;
    `attached` is set once the first line has come."""
    lines, oks = [], 0
    deadline = time.monotonic() + seconds(30)
    with urllib.request.urlopen(url, timeout=seconds(30)) as response:
        for raw in response:
            assert time.monotonic() < deadline, f"the stream did not end: {lines[-3:]}"
            line = json.loads(raw)
            lines.append(line)
            if attached is not None:
                attached.set()
            oks += line.get("status") == "ok"
            if stop_after_ok is not None and oks >= stop_after_ok:
                break
    return lines


def batch(tmp_path: Path, sections: int, prefix: str = "slide") -> dict[str, Any]:
    """Even sections write to the caller's directory, odd ones to the accepting node's default place."""
    out = tmp_path / "out"
    return {
        "sections": [
            {
                "idx": i,
                "text": f"{prefix} {i} of the lecture",
                **({"output_path": str(out / f"{i}.wav")} if i % 2 == 0 else {}),
            }
            for i in range(sections)
        ]
    }


def wav_seconds(path: str) -> float:
    with wave.open(io.BytesIO(Path(path).read_bytes())) as reader:
        return reader.getnframes() / reader.getframerate()


def test_a_batch_accepted_by_one_node_survives_an_engine_kill_and_streams_from_others(tmp_path, start_node):
    engine_c = start_node("c", role="engine", delay=0.02)
    both_b = start_node("b", delay=0.02)
    api_a = start_node("a", role="api")
    status, refused = call("POST", f"{engine_c.base}/synth_batch", batch(tmp_path, 1))
    assert status == 501 and refused["error"].startswith("Unsupported")
    speech_batch = {"items": [{"input": "one"}, {"input": "two"}], "model": "tts-1", "voice": "default"}
    status, refused = call("POST", f"{engine_c.base}/v1/audio/speech/batch", speech_batch)
    assert status == 501 and refused["error"]["code"] == "Unsupported"  # once, not per item

    status, accepted = call("POST", f"{api_a.base}/synth_batch?async=1", batch(tmp_path, 39))
    assert status == 200
    job_id = accepted["job_id"]
    first = events(f"{both_b.base}/jobs/{job_id}/events", stop_after_ok=6)  # streamed from another node
    engine_c.kill()  # kill -9 while it holds a section (it takes about every other one)
    second = events(f"{both_b.base}/jobs/{job_id}/events?after={first[-1]['seq']}", stop_after_ok=10)
    rest = events(f"{api_a.base}/jobs/{job_id}/events?after={second[-1]['seq']}")  # re-attach elsewhere
    log = first + second + rest

    assert [line["seq"] for line in log] == list(range(1, len(log) + 1))
    oks = [line for line in log if line.get("status") == "ok"]
    assert sorted(line["idx"] for line in oks) == list(range(39))  # each section ok exactly once
    assert log[-1]["event"] == "done" and log[-1]["ok_count"] == 39 and not log[-1]["cancelled"]
    for line in oks:
        assert abs(wav_seconds(line["wav_path"]) - line["duration_sec"]) < 0.002
        assert line["wav_path"].startswith(str(tmp_path / "out")) == (line["idx"] % 2 == 0)
        if line["idx"] % 2:
            assert line["wav_path"].startswith(str(api_a.state))
    # Files land only on the accepting node: the engine nodes wrote none.
    assert not list(engine_c.state.rglob("*.wav")) and not list(both_b.state.rglob("*.wav"))
    status, wav = call("GET", f"{both_b.base}/jobs/{job_id}/sections/3/audio")
    assert status == 200 and wav == Path(oks[[o["idx"] for o in oks].index(3)]["wav_path"]).read_bytes()
    status, result = call("GET", f"{both_b.base}/jobs/{job_id}/result")
    assert status == 200 and result["ok_count"] == 39

    status, health = call("GET", f"{api_a.base}/health")
    assert health["queue_backend"] == "redis" and health["redis"] == "ok"
    assert {n["role"] for n in health["cluster"]["nodes"]} >= {"api", "both"}
    assert health["cluster"]["queue_depth"] == 0


def test_a_restarted_engine_node_finishes_the_section_it_held(tmp_path, start_node):
    """The claim timeout is far away: only the node itself (same id after restart) can finish it."""
    engine = start_node("engine", role="engine", delay=0.03, claim_timeout=600)
    api = start_node("api", role="api")
    _, accepted = call("POST", f"{api.base}/synth_batch?async=1", batch(tmp_path, 6))
    seen = events(f"{api.base}/jobs/{accepted['job_id']}/events", stop_after_ok=2)
    engine.kill()
    start_node("engine", role="engine", delay=0.0, claim_timeout=600)
    log = seen + events(f"{api.base}/jobs/{accepted['job_id']}/events?after={seen[-1]['seq']}")
    assert sorted(line["idx"] for line in log if line.get("status") == "ok") == list(range(6))


def test_a_stopped_engine_node_gives_back_the_sections_it_held(tmp_path, start_node):
    """SIGTERM with a short grace cuts the running section; it and any item claimed but not started
    go back to the queue at once (the claim timeout is far away), so the other node finishes the job."""
    stays = start_node("stays", delay=0.01, claim_timeout=600).base
    leaving = start_node("leaves", role="engine", delay=0.05, claim_timeout=600, grace=0.1)
    _, accepted = call("POST", f"{stays}/synth_batch?async=1", batch(tmp_path, 12, "long slide"))
    seen = events(f"{stays}/jobs/{accepted['job_id']}/events", stop_after_ok=3)
    leaving.process.send_signal(signal.SIGTERM)
    assert leaving.process.wait(timeout=seconds(20)) == 0
    log = seen + events(f"{stays}/jobs/{accepted['job_id']}/events?after={seen[-1]['seq']}")
    assert sorted(line["idx"] for line in log if line.get("status") == "ok") == list(range(12))


def test_cancel_stops_the_job_on_every_node(tmp_path, start_node):
    one, two = start_node("one", delay=0.05), start_node("two", delay=0.05)
    status, accepted = call("POST", f"{one.base}/synth_batch?async=1", batch(tmp_path, 30, "long"))
    job_id = accepted["job_id"]
    seen = events(f"{two.base}/jobs/{job_id}/events", stop_after_ok=2)
    status, body = call("DELETE", f"{two.base}/jobs/{job_id}")
    assert status == 200 and body["cancel_requested"] is True
    log = seen + events(f"{one.base}/jobs/{job_id}/events?after={seen[-1]['seq']}")
    assert log[-1]["event"] == "done" and log[-1]["cancelled"] is True
    oks = [line["idx"] for line in log if line.get("status") == "ok"]
    assert len(oks) == len(set(oks)) < 30
    time.sleep(0.5)  # anything still running would log past `done`: the log must not grow
    again = events(f"{one.base}/jobs/{job_id}/events")
    assert len(again) == len(log)
    _, health = call("GET", f"{one.base}/health")
    assert health["cluster"]["queue_depth"] == 0


def test_redis_restart_mid_job_is_waited_out(tmp_path, start_node, redis_server):
    one, two = start_node("one", delay=0.02), start_node("two", delay=0.02)
    _, accepted = call("POST", f"{one.base}/synth_batch?async=1", batch(tmp_path, 16))
    job_id = accepted["job_id"]
    seen = events(f"{two.base}/jobs/{job_id}/events", stop_after_ok=3)
    redis_server.stop(save=True)  # an operator restarts Redis (its snapshot keeps the jobs)
    status, health = call("GET", f"{one.base}/health")
    assert status == 503 and health["redis"] == "unreachable" and "QueueUnavailable" in health["error"]
    assert health["status"] == "fail" and health["traceback"] is None and health["fallback"] is None
    with pytest.raises(urllib.error.HTTPError) as polled:  # a poller is told when to ask again
        urllib.request.urlopen(f"{one.base}/health", timeout=seconds(20))
    assert (polled.value.code, polled.value.headers.get("Retry-After")) == (503, "1")
    status, refused = call("POST", f"{one.base}/synth_batch?async=1", batch(tmp_path, 2))
    assert status == 503 and refused["error"].startswith("QueueUnavailable: Redis is unreachable (")
    port = str(redis_server.port)  # the queue's address is the operator's, not for callers or /health
    assert port not in refused["error"] and port not in health["error"]
    status, refused = call("GET", f"{two.base}/jobs/{job_id}/status")
    assert status == 503
    redis_server.start()
    deadline = time.monotonic() + seconds(10)
    while call("GET", f"{two.base}/health")[0] != 200:
        assert time.monotonic() < deadline, "the node did not recover by itself"
        time.sleep(0.1)
    log = seen + events(f"{two.base}/jobs/{job_id}/events?after={seen[-1]['seq']}")
    oks = sorted(line["idx"] for line in log if line.get("status") == "ok")
    assert oks == list(range(16)) and log[-1]["event"] == "done"


def test_a_redis_that_lost_its_data_is_rejoined(tmp_path, start_node, redis_server):
    """Without persistence a restart forgets jobs and the queue's groups: nodes make them again."""
    node = start_node("solo", delay=0.05)
    _, lost = call("POST", f"{node.base}/synth_batch?async=1", batch(tmp_path, 20, "a long slide"))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        attached = threading.Event()
        streamed = pool.submit(events, f"{node.base}/jobs/{lost['job_id']}/events", attached=attached)
        assert attached.wait(seconds(20)), streamed.result()  # the stream is under way before Redis goes
        redis_server.stop()
        redis_server.start()
        lines = streamed.result(timeout=seconds(20))  # the stream ends: its job is gone
    assert lines[-1]["event"] != "done"
    deadline = time.monotonic() + seconds(15)
    while True:
        status, accepted = call("POST", f"{node.base}/synth_batch?async=1", batch(tmp_path, 3))
        if status == 200:
            break
        assert status == 503 and time.monotonic() < deadline, accepted
        time.sleep(0.1)
    log = events(f"{node.base}/jobs/{accepted['job_id']}/events")
    assert log[-1]["event"] == "done" and log[-1]["ok_count"] == 3
    status, body = call("GET", f"{node.base}/jobs/{lost['job_id']}/status")
    assert status == 404 and body["error"].startswith("JobNotFound")


def test_an_engine_and_api_pair_serves_no_audio_for_a_failed_write_and_answers_a_stalled_synth(
    tmp_path, start_node
):
    """One engine node and one api node for two checks in turn (each its own job): starting the pair and
    its Redis once instead of twice. The stall comes last: it stops the engine for a while."""
    engine = start_node("engine", role="engine")
    api = start_node("api", role="api")
    check_a_section_whose_file_could_not_be_written_has_no_audio(tmp_path, api)
    check_a_synth_that_outlives_its_engines_view_still_answers_whole(tmp_path, engine, api)


def check_a_synth_that_outlives_its_engines_view_still_answers_whole(
    tmp_path: Path, engine: Any, api: Any
) -> None:
    """Engines that stall past the api node's 5 s view window drop out of it for a moment; a /synth
    that ends in that moment is still answered (it was a 500 AssertionError after the file was written)."""
    out = tmp_path / "out" / "stalled.wav"
    os.kill(engine.process.pid, signal.SIGSTOP)
    try:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            answer = pool.submit(
                call, "POST", f"{api.base}/synth", {"text": "stalled", "output_path": str(out)}
            )
            deadline = time.monotonic() + seconds(20)  # past the 5 s window, seen by the api node's
            while call("GET", f"{api.base}/health")[1]["cluster"]["engines_alive"]:  # beat (was 6.5 s slept)
                assert time.monotonic() < deadline, "the stopped engine stayed in the api node's view"
                time.sleep(0.1)
            os.kill(engine.process.pid, signal.SIGCONT)
            status, body = answer.result(timeout=seconds(20))
    finally:
        os.kill(engine.process.pid, signal.SIGCONT)
    assert (status, body["status"]) == (200, "ok"), f"the stalled synth was not answered whole: {body}"
    assert out.is_file(), "the stalled synth's file was not written"


def check_a_section_whose_file_could_not_be_written_has_no_audio(tmp_path: Path, api: Any) -> None:
    """Its wav waits in Redis for the accepting node's writer and stays after the write failed: only an
    `ok` section's audio is served, as on a local queue."""
    (tmp_path / "theirs.wav").write_text("another user's")  # refused at its write, not at admission
    os.chown(tmp_path / "theirs.wav", 65534, 65534)  # (a path under a file is, since walk10)
    sections = [{"idx": 0, "text": "fails", "output_path": str(tmp_path / "theirs.wav")}]
    _, accepted = call("POST", f"{api.base}/synth_batch?async=1", {"sections": sections})
    lines = events(f"{api.base}/jobs/{accepted['job_id']}/events")
    assert [line["event"] for line in lines][-2:] == ["error", "done"], f"the failed write: {lines[-3:]}"
    status, body = call("GET", f"{api.base}/jobs/{accepted['job_id']}/sections/0/audio")
    assert status == 404 and body["error"].startswith("AudioNotFound"), f"a failed write's audio: {body}"
    status, body = call("GET", f"{api.base}/jobs/{accepted['job_id']}/sections/7/audio")  # no such section
    assert (status, body["error"]) == (404, f"AudioNotFound: job {accepted['job_id']} has no section 7")


@pytest.mark.parametrize(
    "queue, message",
    [
        ("redis://127.0.0.1:{closed}/0", "cannot use the queue"),
        ("redis://127.0.0.1:notaport/0", "bad port"),
        ("memcached://127.0.0.1:11211", "queue must be 'local' or redis://"),
    ],
)
def test_bad_or_unreachable_redis_urls_stop_the_worker_at_start_up(tmp_path, queue, message):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    command = [sys.executable, "-m", "npu_worker.cli", "serve", "--state-dir", str(tmp_path), "--port", "0"]
    with refusing_port() as closed:
        env["NPU_WORKER_QUEUE"] = queue.format(closed=closed)
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=seconds(30))
    assert done.returncode != 0 and message in done.stderr


def test_an_api_node_stops_on_sigterm_after_serving_a_batch(tmp_path, start_node):
    """Its loops end when cancelled even when redis-py retried away the cancellation inside a read."""
    start_node("engine-1", role="engine", delay=0.0)
    start_node("engine-2", role="engine", delay=0.0)
    api = start_node("api", role="api")
    _, accepted = call("POST", f"{api.base}/synth_batch?async=1", batch(tmp_path, 20))
    assert events(f"{api.base}/jobs/{accepted['job_id']}/events")[-1]["event"] == "done"
    api.process.send_signal(signal.SIGTERM)
    assert api.process.wait(timeout=seconds(15)) == 0


def test_a_both_node_writes_the_files_of_jobs_it_accepted_itself_with_no_writer_hop(
    tmp_path, start_node, redis_server
):
    """Its engine thread writes the file, then logs `ok` (one MADE_OK), as a local worker does; a write
    failure is the section's error and the batch goes on; its ready stream (the writer's) stays unused."""
    import redis

    (tmp_path / "theirs.wav").write_text("another user's")  # refused at its write, not at admission
    os.chown(tmp_path / "theirs.wav", 65534, 65534)  # (a path under a file is, since walk10)
    node = start_node("solo", delay=0.01)
    sections = [
        {"idx": 0, "text": "a", "output_path": str(tmp_path / "theirs.wav")},
        {"idx": 1, "text": "b", "output_path": str(tmp_path / "fine.wav")},
        {"idx": 2, "text": "c"},  # the node's default output
    ]
    status, result = call("POST", f"{node.base}/synth_batch", {"sections": sections, "stream": False})
    assert status == 200 and result["fail_count"] == 1 and result["ok_count"] == 2
    assert "theirs.wav belongs to another user" in result["sections"][0]["error"]
    assert (tmp_path / "theirs.wav").read_text() == "another user's"
    written = [s["wav_path"] for s in result["sections"][1:]]
    assert written[0] == str(tmp_path / "fine.wav") and written[1].startswith(str(node.state))
    for path in written:
        assert wav_seconds(path) > 0
    name = call("GET", f"{node.base}/health")[1]["node"]
    client = redis.Redis.from_url(redis_server.url)
    try:
        assert client.xinfo_stream(f"npu:ready:{name}")["entries-added"] == 0
    finally:
        client.close()


def test_a_batchs_spec_is_read_once_per_node_not_once_per_section(tmp_path, start_node, redis_server):
    """The spec holds every section's text: the writer and the engine node read it once per job and
    then only whether the job has ended (a thousand-section batch read it two thousand times)."""
    import threading

    import redis

    engine = start_node("e", role="engine", delay=0.01)
    api = start_node("a", role="api")
    seen: list[str] = []
    watching = threading.Event()

    def watch() -> None:
        client = redis.Redis.from_url(redis_server.url)
        with client.monitor() as monitor:
            watching.set()
            for command in monitor.listen():
                seen.append(command["command"])
                if "STOP-WATCHING" in command["command"]:
                    break
        client.close()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    assert watching.wait(seconds(10))
    status, result = call("POST", f"{api.base}/synth_batch", {**batch(tmp_path, 20), "stream": False})
    assert status == 200 and result["ok_count"] == 20
    with redis.Redis.from_url(redis_server.url) as client:
        client.echo("STOP-WATCHING")
    watcher.join(seconds(10))
    spec_reads = [c for c in seen if c.split()[0].upper() in ("HMGET", "HGET") and " spec" in c]
    assert 1 <= len(spec_reads) <= 4, spec_reads
    assert engine.process.poll() is None


def test_a_node_with_a_shorter_claim_timeout_does_not_take_sections_from_a_live_peer(tmp_path, start_node):
    """Nodes started with different --claim-timeout values: a live node touches its section every third
    of its own timeout, so a peer with a shorter one waits the longest live timeout before taking over
    (it took every section of the patient node that ran past its own 1 s: each ran twice)."""
    patient = start_node("patient", role="engine", delay=0.05, claim_timeout=30)
    deadline = time.monotonic() + seconds(10)
    while not any(
        n.get("claim_timeout") == 30 for n in call("GET", f"{patient.base}/health")[1]["cluster"]["nodes"]
    ):
        assert time.monotonic() < deadline, "the patient node's heartbeat never reached Redis"
        time.sleep(0.05)  # its heartbeat is in the view before the eager node starts
    start_node("eager", role="engine", delay=0.05, claim_timeout=1)
    api = start_node("api", role="api")
    body = {"sections": [{"idx": i, "text": "x" * 100} for i in range(4)]}  # 2 s per section
    _, accepted = call("POST", f"{api.base}/synth_batch?async=1", body)
    log = events(f"{api.base}/jobs/{accepted['job_id']}/events")
    runs = [line["idx"] for line in log if line.get("status") == "synth"]
    assert sorted(runs) == [0, 1, 2, 3], f"sections run more than once: {runs}"
    assert log[-1]["event"] == "done" and log[-1]["ok_count"] == 4
