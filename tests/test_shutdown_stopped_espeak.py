"""SIGTERM on a real worker whose espeak children have stopped answering (SIGSTOP, a hung host) under
running sections: the drain's stop past the grace reaches every running child (the preview lanes' too),
and a child that does not answer its `STOP` within `STOP_SECONDS` is killed, so the exit stays bounded.
It took ≈ 33 s with a 1 s grace (the grace, the engine thread's 30 s join, the close's 2 s kill); with
the engine thread's child stopped, a stopped lane's held the join as long, and was left stopped after
the exit, holding the worker's stderr open (the log read to its end: 91 s, the test's 60 s limit)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import struct
import termios
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from tests.serve_process import ServeProcess
from tests.test_shutdown import terminate, wait_loaded
from tests.timing import seconds

pytestmark = pytest.mark.allow_blocking
REPO = Path(__file__).resolve().parents[1]
# Well short of the 30 s join the worker waited on, well above the grace (1 s), a `STOP`'s 2 s and the
# close's: not a figure of speed.
BOUNDED = seconds(20.0)


def espeak_children(pid: int) -> list[int]:
    """The worker's espeak-ng children (the engine thread's, each preview lane's), from /proc."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(FileNotFoundError), open(f"/proc/{pid}/task/{task}/children") as listed:
            for child in listed.read().split():
                with contextlib.suppress(FileNotFoundError), open(f"/proc/{child}/cmdline", "rb") as line:
                    if b"npu_worker.engine.espeak_child" in line.read():
                        found.append(int(child))
    return found


def unread_request_bytes(child: int) -> int:
    """What the worker wrote to a stopped child's stdin (its requests) that the child has not read."""
    requests = os.open(f"/proc/{child}/fd/0", os.O_RDONLY | os.O_NONBLOCK)  # the pipe's read end again
    try:
        return struct.unpack("i", fcntl.ioctl(requests, termios.FIONREAD, b"\0" * 4))[0]
    finally:
        os.close(requests)


def synth(base: str, text: str, output: Path) -> None:
    """A `/synth` that waits on a stopped child: its answer (or a closed connection) is not the test's."""
    body = json.dumps({"text": text, "lang": "ko", "output_path": str(output)}).encode()
    request = urllib.request.Request(base + "/synth", body, {"Content-Type": "application/json"})
    with contextlib.suppress(OSError), urllib.request.urlopen(request, timeout=seconds(60)) as answer:
        answer.read()


def test_a_stopped_espeak_child_under_a_running_section_does_not_hold_the_exit(tmp_path):
    """Two lanes: the engine thread's child and a lane's, both stopped, both killed (one lane, the
    engine thread's alone, was a second worker's start and exit, ≈ 8 s, for half of what this checks)."""
    lanes = 2
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = ServeProcess(
        ["--state-dir", str(tmp_path / "state"), "--cache-max-bytes", "0", "--shutdown-grace", "1"]
        + ["--preview-lanes", str(lanes)],
        env,
    )
    children: list[int] = []
    try:
        wait_loaded(process.base, process)
        if lanes > 1:  # the lanes load on their own (a child stopped before it is ready is not this test's)
            process.log_until(f"preview lanes: {lanes} engine instances", seconds(30))
        children = espeak_children(process.pid)
        assert len(children) == lanes, children
        for child in children:
            os.kill(child, signal.SIGSTOP)
        assert not any(map(unread_request_bytes, children)), "a child had a request before any was sent"
        for number in range(lanes):  # one a lane: a lane takes a preview while the engine thread is busy
            threading.Thread(
                target=synth,
                args=(process.base, f"{number}번 문장입니다.", tmp_path / f"{number}.wav"),
                daemon=True,
            ).start()
        # each request written to its child (a section still queued at the SIGTERM fails the test): a
        # sleep of 0.5 s after /health's `jobs_running` stood for that, which a loaded box can outlast
        deadline = time.monotonic() + seconds(30)
        while not all(map(unread_request_bytes, children)):
            assert time.monotonic() < deadline, f"the requests never reached the children: {process.log()}"
            time.sleep(0.02)
        elapsed, log = terminate(process)
    finally:
        process.kill()
        for child in children:  # stopped, they would outlive the worker (and the test)
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
    print(f"SIGTERM to exit with {lanes} stopped espeak children: {elapsed:.1f} s")  # the figure (-s)
    assert process.returncode == 0, log
    assert elapsed < BOUNDED, f"SIGTERM to exit took {elapsed:.1f} s with stopped espeak children: {log}"
    assert log.count("did not answer a stop of its request") == lanes, log
