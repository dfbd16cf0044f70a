"""The sovits proxy engine's calls end when they must, on real sockets: a cancel stops the upstream call
in flight at once (or the one about to open, or its retries), a shutdown past its grace and a cluster
node's cancel too, a connect that hangs is ended, and what the upstream writes after a cancel is swept.
Upstreams whose replies misbehave are tested in `test_sovits_upstream_faults.py`."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from npu_worker.engine import sovits
from npu_worker.engine.base import Interrupted, SynthesisRequest
from npu_worker.engine.sovits import SovitsEngine
from npu_worker.engine.sovits_call import Line, Upstream
from npu_worker.jobs.runner import Runner
from npu_worker.protocol import EngineError, ModelLoadError
from tests.serve_process import ServeProcess
from tests.sovits_rogue import (
    RogueUpstream,
    raw,
    silent,
    writes_after_hang_up,
)
from tests.sovits_support import TEXT, loaded_against
from tests.sovits_support import upstream as upstream  # a fixture
from tests.test_shutdown import AT_ONCE as EXIT_AT_ONCE
from tests.test_shutdown import wait_loaded
from tests.test_sovits_engine import AT_ONCE, in_thread
from tests.timing import seconds, until


def asked(rogue: RogueUpstream) -> None:
    """Until the upstream has the engine's request (a call is in flight; 0.3 s of sleep was not always)."""
    deadline = time.monotonic() + seconds(10)
    while not rogue.asked:
        assert time.monotonic() < deadline, "the engine never called the upstream"
        time.sleep(0.01)


def test_a_cancel_stops_a_slow_upstream_call_at_once():
    with RogueUpstream(silent) as rogue:
        engine = loaded_against(rogue)
        outcome = in_thread(lambda: list(engine.stream(SynthesisRequest(TEXT))))
        asked(rogue)
        assert engine.interrupt(False) is True
        started = time.monotonic()
        assert isinstance(outcome.error(AT_ONCE), Interrupted)
        assert time.monotonic() - started < AT_ONCE  # the silent upstream never ends the call itself
        assert rogue.hung_up.wait(AT_ONCE), "the upstream connection stayed open"
        engine.close()


def test_a_wav_the_upstream_writes_after_a_cancel_is_removed_by_the_next_section():
    """The upstream goes on after a cancel (or a deadline) and writes its wav later, when the section has
    already ended: the next section sweeps it, so cancelled previews do not fill the temp dir."""
    go = threading.Event()
    with RogueUpstream(writes_after_hang_up(go)) as rogue:
        engine = loaded_against(rogue)
        work_dir = engine.work_dir
        assert work_dir is not None

        def wait_for(condition: Callable[[], object]) -> None:
            deadline = time.monotonic() + seconds(5)
            while not condition():
                assert time.monotonic() < deadline, "timed out"
                time.sleep(0.01)

        outcome = in_thread(lambda: list(engine.stream(SynthesisRequest(TEXT))))
        wait_for(lambda: rogue.asked == 1)
        engine.interrupt(False)
        assert isinstance(outcome.error(AT_ONCE), Interrupted)
        go.set()
        wait_for(lambda: any(work_dir.iterdir()))  # written after the section ended
        next_section = in_thread(lambda: list(engine.stream(SynthesisRequest(TEXT))))
        assert isinstance(next_section.error(AT_ONCE), EngineError)  # its 500
        assert list(work_dir.iterdir()) == []
        engine.close()


def test_a_cancel_is_not_a_restart_and_nothing_in_flight_is_nothing_to_stop(engine_idle):
    assert engine_idle.interrupt(True) is False
    assert engine_idle.interrupt(False) is False


@pytest.fixture
def engine_idle(upstream) -> Iterator[SovitsEngine]:
    engine = SovitsEngine(upstream.base)
    engine.load()
    yield engine
    engine.close()


def test_a_cancel_ends_the_retries():
    with RogueUpstream(raw(b"")) as rogue:
        engine = loaded_against(rogue)
        outcome = in_thread(lambda: list(engine.stream(SynthesisRequest(TEXT))))
        asked(rogue)  # the retries have begun: a cancel before the first call finds none to stop
        engine.interrupt(False)
        assert isinstance(outcome.error(AT_ONCE), Interrupted)
        engine.close()


@pytest.fixture
def held_before_the_call(monkeypatch) -> tuple[threading.Event, threading.Event]:
    """(entered, go): each section's stream holds after it started, before its upstream call opens,
    until `go` (the work dir's sweep is that point), so a cancel lands exactly there."""
    entered, go = threading.Event(), threading.Event()
    sweep = sovits._sweep

    def held(work_dir: Path) -> None:
        entered.set()
        go.wait(seconds(10))
        sweep(work_dir)

    monkeypatch.setattr(sovits, "_sweep", held)
    return entered, go


def test_a_cancel_before_the_upstream_call_opens_stops_it(held_before_the_call):
    """The cancel found no call in flight and the call then ran to its end (900 s on a silent upstream),
    the engine busy for everybody although its caller had cancelled."""
    entered, go = held_before_the_call
    with RogueUpstream(silent) as rogue:
        engine = loaded_against(rogue)
        try:
            outcome = in_thread(lambda: list(engine.stream(SynthesisRequest(TEXT))))
            assert entered.wait(seconds(5))
            assert engine.interrupt(False) is True
            go.set()
            assert isinstance(outcome.error(AT_ONCE), Interrupted)
            assert rogue.asked == 0, "the upstream was asked although the section was cancelled"
        finally:
            engine.close()


def test_a_cancel_before_a_stream_is_iterated_stops_its_call():
    """`stream()` makes its section current at once: the runner checks its cancel flag after it, so a
    cancel between the call and the first chunk asked for must reach this section's call."""
    with RogueUpstream(silent) as rogue:
        engine = loaded_against(rogue)
        try:
            section = engine.stream(SynthesisRequest(TEXT))
            assert engine.interrupt(False) is True
            assert isinstance(in_thread(lambda: list(section)).error(AT_ONCE), Interrupted)
            assert rogue.asked == 0
        finally:
            engine.close()


def test_a_cancel_of_a_section_that_has_ended_spares_the_next_one(upstream, held_before_the_call):
    """A cancel that lands after a section's call ended (its audio still being handed on) stops
    nothing, and the next section, even one already started, is made in full."""
    entered, go = held_before_the_call
    go.set()
    engine = SovitsEngine(upstream.base)
    engine.load()
    try:
        first = engine.stream(SynthesisRequest(TEXT))
        assert next(first).size > 0
        assert engine.interrupt(False) is False  # its call has ended: nothing to stop
        list(first)
        go.clear()
        entered.clear()
        outcome = in_thread(lambda: list(engine.stream(SynthesisRequest(TEXT))))
        assert entered.wait(seconds(5))
        go.set()
        assert outcome.error(seconds(5)) is None
        assert len(upstream.requests) == 2
    finally:
        engine.close()


async def test_a_cancel_before_the_runner_asks_the_engine_makes_no_upstream_call(worker, monkeypatch):
    """A DELETE that lands after the section was taken but before the runner asked the engine for
    its stream (while it checks the section: a reference read, a cache look-up) found no call to
    stop, and the call then ran on a silent upstream for 900 s, every other job waiting behind it."""
    entered, go = threading.Event(), threading.Event()
    check = Runner._check_section

    def held(self: Runner, job: Any, section: Any) -> None:
        entered.set()
        go.wait(seconds(10))
        check(self, job, section)

    monkeypatch.setattr(Runner, "_check_section", held)
    with RogueUpstream(silent) as rogue:
        client = await worker(SovitsEngine(rogue.base))
        try:
            answer = await client.post("/synth_batch?async=1", json={"sections": [{"text": TEXT}]})
            job = (await answer.json())["job_id"]
            assert await asyncio.to_thread(entered.wait, seconds(5))
            assert (await client.delete(f"/jobs/{job}")).status == 200
            go.set()
            async with asyncio.timeout(AT_ONCE):
                events = await (await client.get(f"/jobs/{job}/events")).text()
            done = json.loads(events.splitlines()[-1])
            assert done["event"] == "done" and done["cancelled"] is True
            assert rogue.asked == 0, "the upstream was asked although the section was cancelled"
        finally:
            go.set()


def test_a_close_as_a_section_starts_sweeps_nothing_outside_the_work_dir(upstream, tmp_path, monkeypatch):
    """`close()` (the shutdown, past the runner's join) landing between the section's check of the work
    dir and its sweep made that sweep `os.scandir(None)`: every file in the worker's current directory
    was deleted. Here the close lands exactly there: at the section's first read of the work dir."""
    monkeypatch.chdir(tmp_path)
    precious = tmp_path / "lecture.pptx"
    precious.write_bytes(b"slides")
    engine = SovitsEngine(upstream.base)
    engine.load()
    armed = False

    def read(self: SovitsEngine) -> Path | None:
        nonlocal armed
        value = self.__dict__["held_work_dir"]
        if armed:
            armed = False
            self.close()  # as the shutdown's thread would, right after this read
        return value

    def write(self: SovitsEngine, value: Path | None) -> None:
        self.__dict__["held_work_dir"] = value

    monkeypatch.setattr(SovitsEngine, "_work_dir", property(read, write), raising=False)
    engine._work_dir = engine.__dict__.pop("_work_dir")
    armed = True
    error = in_thread(lambda: list(engine.stream(SynthesisRequest(TEXT)))).error(AT_ONCE)
    assert precious.exists(), "the section's sweep deleted a file in the current directory"
    assert isinstance(error, EngineError) and "closing" in error.message, repr(error)


async def test_a_cancel_on_a_cluster_node_stops_the_upstream_call_at_once(worker, redis_server):
    """With `--queue redis://`, a DELETE only flagged the job, a flag the engine sees between chunks:
    the section's upstream call ran on (900 s on a silent upstream), the node's engine busy for all."""
    from npu_worker.app_keys import SCHEDULER_KEY

    with RogueUpstream(silent) as rogue:
        client = await worker(SovitsEngine(rogue.base), queue=redis_server.url, claim_timeout=1.0)
        node = client.app[SCHEDULER_KEY].engine_node
        answer = await client.post("/synth_batch?async=1", json={"sections": [{"text": TEXT}]})
        job = (await answer.json())["job_id"]
        await until(lambda: rogue.asked >= 1, "the section's call to the upstream")
        assert (await client.delete(f"/jobs/{job}")).status == 200
        async with asyncio.timeout(AT_ONCE):
            while node.running is not None:
                await asyncio.sleep(0.02)
        assert rogue.hung_up.wait(AT_ONCE), "the upstream connection stayed open"


@pytest.fixture
def full_accept_queue() -> Iterator[str]:
    """The base of a listener that never accepts and whose accept queue is full: a connect to it hangs
    (its SYN is dropped), as to an overloaded upstream or a host behind a dropping firewall."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=0)
    held: list[socket.socket] = []
    try:
        while True:
            filler = socket.socket()
            held.append(filler)
            filler.settimeout(0.2)
            try:
                filler.connect(listener.getsockname())
            except TimeoutError:
                break
            assert len(held) < 16, "the accept queue never filled"
        host, port = listener.getsockname()[:2]
        yield f"http://{host}:{port}"
    finally:
        for filler in held:
            filler.close()
        listener.close()


def test_a_shutdown_while_load_connects_ends_it_at_once(full_accept_queue):
    """`cancel_load()` (a shutdown) while /health's connect hangs: the connect was not interruptible,
    and the shutdown waited out its 10 s connect timeout."""
    engine = SovitsEngine(full_accept_queue)
    loading = in_thread(engine.load)
    time.sleep(0.2)  # into its connect (if not yet there, it ends at once all the same)
    engine.cancel_load()
    assert isinstance(loading.error(AT_ONCE), ModelLoadError)
    engine.close()


def test_a_cancel_while_the_call_connects_ends_it_at_once(full_accept_queue):
    line = Line(60.0)
    outcome = in_thread(lambda: Upstream.of(full_accept_queue).attempt(line, "POST", "/synth", b"{}"))
    time.sleep(0.2)  # into its connect
    line.end("interrupted")
    assert isinstance(outcome.error(AT_ONCE), Interrupted)


def test_a_shutdown_past_its_grace_stops_the_upstream_call_at_once(tmp_path):
    """SIGTERM with a section in flight on a silent upstream: past the grace the job was flagged
    cancelled, a flag the engine sees only between chunks, so the worker waited 30 s more (its runner
    join) and then closed the engine under the call; the grace's end now interrupts the call."""
    with RogueUpstream(silent) as rogue:
        args = ["--backend", "sovits", "--sovits-base", rogue.base, "--shutdown-grace", "0.3"]
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        process = ServeProcess([*args, "--state-dir", str(tmp_path)], env)
        try:
            base = process.base
            wait_loaded(base, process)
            request = urllib.request.Request(
                base + "/synth_batch?async=1", data=json.dumps({"sections": [{"text": TEXT}]}).encode()
            )
            with urllib.request.urlopen(request, timeout=10) as answer:
                job = json.load(answer)["job_id"]
            deadline = time.monotonic() + seconds(10)
            while rogue.asked < 1:
                assert time.monotonic() < deadline, "the section never reached the upstream"
                time.sleep(0.02)
            started = time.monotonic()
            log = process.terminate_and_log(seconds(60))
        finally:
            process.kill()
        assert process.returncode == 0, log
        assert time.monotonic() - started < EXIT_AT_ONCE, log
        assert rogue.hung_up.is_set()
    # The section is left to run again at the next start, not failed ("the engine is closing" was its
    # error, logged once the engine closed under it: a slide lost to a restart).
    events = (tmp_path / "jobs" / job / "events.ndjson").read_text()
    assert '"error"' not in events and f"job {job} left to resume at the next start" in log
