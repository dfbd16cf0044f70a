"""A caller's NDJSON stream across a `kill -9` mid-batch and the restart that resumes the job: the first
stream ends with the worker, the caller re-attaches with `after=` the last seq it read, and over the two
it reads each section's `ok` exactly once, seqs only growing (the section cut by the kill runs again)."""

from __future__ import annotations

import json
import signal
import urllib.request
from typing import Any

import pytest

from tests.timing import seconds
from tests.worker_process import start_worker_process


def read_lines(response: Any, until: Any) -> list[dict[str, Any]]:
    """NDJSON events (heartbeats left out) until `until(events)` holds or the stream ends."""
    events: list[dict[str, Any]] = []
    try:
        for line in response:
            event = json.loads(line)
            if event.get("event") != "heartbeat":
                events.append(event)
            if until(events):
                break
    except (ConnectionError, OSError):  # the worker was killed under the stream
        pass
    return events


def oks(events: list[dict[str, Any]]) -> list[int]:
    return [e["idx"] for e in events if e.get("event") == "progress" and e.get("status") == "ok"]


@pytest.mark.allow_blocking
def test_a_stream_re_attached_after_a_kill_9_reads_each_sections_ok_once(tmp_path):
    state = tmp_path / "state"
    worker = start_worker_process(state, 0, delay=0.05, timeout=seconds(30), output_root=tmp_path)
    port = worker.port
    processes = [worker]
    try:
        sections = [{"idx": i, "text": f"섹션 {i} " + "가" * 30} for i in range(5)]
        body = json.dumps({"sections": sections}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/synth_batch", body, {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=seconds(30)) as response:
            # until two sections are ok and the third has begun: the kill cuts a section mid-way
            first = read_lines(
                response, lambda events: len(oks(events)) >= 2 and events[-1].get("status") == "synth"
            )
            worker.send_signal(signal.SIGKILL)
            worker.wait()
            first += read_lines(response, lambda events: False)
        cut = [e["idx"] for e in first if e.get("status") == "synth"][-1]
        assert cut not in oks(first)  # the kill came mid-section: that section runs again after it
        job_id = first[0]["job_id"]
        resumed = start_worker_process(state, port, delay=0.0, timeout=seconds(30), output_root=tmp_path)
        processes.append(resumed)
        after = first[-1]["seq"]
        url = f"http://127.0.0.1:{port}/jobs/{job_id}/events?after={after}"
        with urllib.request.urlopen(url, timeout=seconds(30)) as response:
            second = read_lines(response, lambda events: events[-1].get("event") == "done")
        seen = first + second
        assert sorted(oks(seen)) == list(range(5)), [(e["seq"], e["event"], e.get("status")) for e in seen]
        seqs = [e["seq"] for e in seen]
        assert seqs == sorted(set(seqs))  # never a seq read twice, never one going back
        assert seen[-1]["event"] == "done" and seen[-1]["ok_count"] == 5
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=seconds(10))
