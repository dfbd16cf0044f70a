"""The client's transport-free core, driven step by step: what it asks the transport to do next.

The sync and async clients are loops over these same plans (their real-socket tests are in
test_client*.py); here each decision is checked without any I/O.
"""

from __future__ import annotations

from typing import Any

import pytest

from npu_worker.client import errors as client_errors
from npu_worker.client.collector import BatchCollector
from npu_worker.client.common import retry_after_of
from npu_worker.client.errors import ClientError, EngineFailed, NotConnected, TransportError, WorkerHTTPError
from npu_worker.client.plans import polling_plan, streaming_plan
from npu_worker.client.retrying import Patience, backoff, poll_json
from npu_worker.client.steps import Call, Deliver, Follow, Sleep

START = {"event": "start", "job_id": "j1", "total": 2, "seq": 1}
OK0 = {"event": "progress", "idx": 0, "status": "ok", "wav_path": "/w/0.wav", "seq": 2}
OK1 = {"event": "progress", "idx": 1, "status": "ok", "wav_path": "/w/1.wav", "seq": 3}
DONE = {"event": "done", "total": 2, "ok_count": 2, "fail_count": 0, "seq": 4}
HEALTH, HEALTHY = Call("GET", "/health", at_once=True), {"status": "ok"}  # asked after a restart's signs


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Script:
    """Runs a plan, answering each I/O step from a list; records the steps.

    An answer is a list for a `Follow` (its stream's events, then what broke it, sent back), a
    ClientError (thrown in, as a driver does when a request fails), or the body a `Call` returns.
    `Sleep` and `Deliver` steps take no answer.
    """

    def __init__(self, plan: Any, clock: Clock | None = None) -> None:
        self.plan = plan
        self.clock = clock  # moved on by each Sleep
        self.steps: list[Any] = []
        self.result: Any = None

    def run(self, collector: BatchCollector, answers: list[Any]) -> None:
        pending = list(answers)
        send: Any = None
        throw: BaseException | None = None
        while True:
            try:
                step = self.plan.throw(throw) if throw is not None else self.plan.send(send)
            except StopIteration as stop:
                self.result = stop.value
                return
            self.steps.append(step)
            send, throw = None, None
            if isinstance(step, Deliver):
                collector.accept(step.event)
                continue
            if isinstance(step, Sleep):
                if self.clock is not None:
                    self.clock.now += step.seconds
                continue
            assert pending, f"the plan wanted more than the script has: {step}"
            answer = pending.pop(0)
            if isinstance(answer, list):
                *events, send = answer
                for event in events:
                    collector.accept(event)
            elif isinstance(answer, ClientError):
                throw = answer
            else:
                send = answer


def test_backoff_doubles_from_the_delay_and_is_capped():
    assert [backoff(n, 0.5) for n in range(6)] == [0.0, 0.5, 1.0, 2.0, 4.0, 5.0]


def test_a_broken_stream_is_followed_again_after_the_last_seq_each_event_once():
    delivered: list[int] = []
    collector = BatchCollector(lambda idx, event: delivered.append(event["seq"]))  # no stream_lost asked
    script = Script(streaming_plan(collector, {"sections": []}, attempts=3, delay=0.5))
    cut = ConnectionResetError("cut")
    script.run(collector, [[START, OK0, cut], [OK0, OK1, DONE, None]])  # the replay of seq 2 is dropped
    lost = {
        "event": "stream_lost",
        "job_id": "j1",
        "after": 2,
        "error": "the connection broke (ConnectionResetError: cut)",
    }
    assert script.steps == [
        Follow("POST", "/synth_batch", {"sections": []}),
        Deliver(lost),  # said before the re-attach to a caller that asks for it (`report_stream_lost`)
        Follow("GET", "/jobs/j1/events?after=2", at_once=True),  # answered at once: a short wait
    ]
    assert delivered == [1, 2, 3, 4]


def test_reattach_backs_off_while_the_worker_is_down_then_gives_up():
    """Given up, it says what it tried and for how long (the time since the stream was lost)."""
    clock = Clock()
    collector = BatchCollector(clock=clock)
    script = Script(streaming_plan(collector, {}, attempts=2, delay=0.5), clock)
    down = TransportError("connection refused")
    with pytest.raises(TransportError) as lost:
        script.run(collector, [[START, None], down, down, down])
    assert str(lost.value) == (
        "job j1: stream lost after event 1; re-attaching failed 3 times in 1.5 s: connection refused"
    )
    follows = [s for s in script.steps if isinstance(s, Follow)]
    assert [s for s in script.steps if isinstance(s, Sleep)] == [Sleep(0.5), Sleep(1.0)]
    again = Follow("GET", "/jobs/j1/events?after=1", at_once=True)
    assert follows[1:] == [again] * 3  # at once, then after each sleep


def test_long_waits_are_given_up_in_whole_seconds_not_in_exponent_notation():
    """A first start on an NPU compiles for up to half an hour (`--wait-limit 1800`): given up, the worker
    "still answered 'Loading: ...' after 1.8e+03 s of waiting" (`:.3g`; the sum of the sleeps was said
    with `:g`, 1800), a poll was "given up after 61 tries in 1.8e+03 s", and a stream lost for 20
    minutes "re-attaching failed 251 times in 1.25e+03 s"."""
    loading = WorkerHTTPError(503, {"error": "Loading: compiling"}, retry_after=30.0)
    clock = Clock()
    collector = BatchCollector(clock=clock)
    script = Script(streaming_plan(collector, {}, attempts=0, delay=0.5, wait_limit=1800.0), clock)
    with pytest.raises(TransportError, match=r"'Loading: compiling' after 1800 s of waiting \(wait_limit\)$"):
        script.run(collector, [[START, None], *[loading] * 200])  # /health is asked too: a restart's sign
    script = Script(poll_json("/jobs/j1/status", 0, 0.5, Patience(1800.0, 0.5, clock)), clock)
    with pytest.raises(WorkerHTTPError) as polled:
        script.run(collector, [loading] * 61)
    assert str(polled.value).startswith(
        "GET /jobs/j1/status: given up after 61 tries in 1800 s, the last 1800 s answered 'not now'"
    )
    collector = BatchCollector(clock=clock)
    script = Script(streaming_plan(collector, {}, attempts=250, delay=5.0), clock)
    with pytest.raises(TransportError) as lost:
        script.run(collector, [[START, None], *[TransportError("connection refused")] * 251])
    assert "re-attaching failed 251 times in 1250 s: connection refused" in str(lost.value)


def test_streams_that_end_with_nothing_new_are_given_up_in_words():
    """A worker that answers each re-attach and hangs up at once (it crashes as it resumes the job):
    the batch was given up with "re-attaching failed 3 times: None"."""
    clock = Clock()
    collector = BatchCollector(clock=clock)
    script = Script(streaming_plan(collector, {}, attempts=2, delay=0.1), clock)
    with pytest.raises(TransportError) as lost:
        script.run(collector, [[START, None], [None], [None], [None]])
    assert str(lost.value).endswith(
        "re-attaching failed 3 times in 0.3 s: each stream ended before its done event, with nothing new"
    )


def test_a_worker_that_said_not_now_then_refuses_connections_is_asked_again():
    """A worker that answered a submission "not now" (loading) and then refused the connection (its
    load crashed, and the service manager restarts it; a shutdown) ended the batch at once: nothing
    was sent, so it is sent again after the back-off, as for a 503 without Retry-After. A first
    refused connection is no worker there: raised at once."""
    collector = BatchCollector()
    script = Script(streaming_plan(collector, {}, attempts=3, delay=0.5))
    loading = WorkerHTTPError(503, {"error": "Loading: the engine is still loading"}, retry_after=1.0)
    refused = NotConnected("POST /synth_batch: connection refused")
    script.run(collector, [loading, refused, refused, [START, OK0, OK1, DONE, None]])
    assert collector.done == DONE
    assert [step.seconds for step in script.steps if isinstance(step, Sleep)] == [1.0, 0.5, 1.0]
    collector = BatchCollector()
    script = Script(streaming_plan(collector, {}, attempts=3, delay=0.5))
    with pytest.raises(NotConnected):
        script.run(collector, [refused])
    assert not [step for step in script.steps if isinstance(step, Sleep)]
    collector = BatchCollector()
    script = Script(streaming_plan(collector, {}, attempts=1, delay=0.5))
    with pytest.raises(NotConnected):
        script.run(collector, [loading, refused, refused])


def test_a_booting_worker_is_retried_but_a_refusal_is_raised():
    collector = BatchCollector()
    script = Script(streaming_plan(collector, {}, attempts=5, delay=0.1))
    booting = WorkerHTTPError(503, {"error": "Loading: the engine is still loading"})
    script.run(collector, [[START, None], booting, HEALTHY, [DONE, None]])
    assert collector.done == DONE and script.steps[-2:] == [
        HEALTH,
        Follow("GET", "/jobs/j1/events?after=1", at_once=True),
    ]
    collector = BatchCollector()
    script = Script(streaming_plan(collector, {}, attempts=5, delay=0.1))
    with pytest.raises(WorkerHTTPError) as raised:
        script.run(collector, [[START, None], WorkerHTTPError(404, {"error": "JobNotFound: no job j1"})])
    assert raised.value.error_name == "JobNotFound"


def test_a_re_attach_answered_429_with_retry_after_waits_as_a_submission_does():
    """A 429 with Retry-After (a rate-limiting proxy, a node that sheds load) on a re-attach is "not
    now" as on a submission: it ended the batch at once; one without Retry-After still does."""
    collector = BatchCollector()
    script = Script(streaming_plan(collector, {}, attempts=0, delay=0.5))
    busy = WorkerHTTPError(429, {"error": "QueueFull: busy"}, retry_after=2.0)
    script.run(collector, [[START, None], busy, HEALTHY, [OK0, OK1, DONE, None]])
    assert [s for s in script.steps if isinstance(s, Sleep)] == [Sleep(2.0)] and collector.done == DONE
    collector = BatchCollector()
    script = Script(streaming_plan(collector, {}, attempts=3, delay=0.5))
    with pytest.raises(WorkerHTTPError):
        script.run(collector, [[START, None], WorkerHTTPError(429, {"error": "QueueFull: busy"})])


def test_a_submission_refused_for_now_is_sent_again_after_retry_after():
    """429 QueueFull and 503 Loading queue nothing: the batch is sent again when the worker says (each
    wait told to on_progress first; up to the wait limit, without spending `attempts`), else after the
    back-off, at most `attempts` more times; a final refusal or a broken connection (the batch may have
    been queued) is raised at once."""
    collector = BatchCollector()
    script = Script(streaming_plan(collector, {"sections": []}, attempts=3, delay=0.5))
    full = WorkerHTTPError(429, {"error": "QueueFull: 5 sections are waiting"}, retry_after=5.0)
    loading = WorkerHTTPError(503, {"error": "Loading: the engine is still loading"})
    script.run(collector, [full, loading, [START, OK0, OK1, DONE, None]])
    submit = Follow("POST", "/synth_batch", {"sections": []})
    told = {"event": "waiting", "status": 429, "error": "QueueFull: 5 sections are waiting"}
    waiting = Deliver({**told, "retry_after": 5.0, "waited": 0.0, "wait_limit": 900.0})
    assert script.steps == [submit, waiting, Sleep(5.0), submit, Sleep(0.5), submit]
    assert script.result["ok_count"] == 2
    collector = BatchCollector()
    script = Script(streaming_plan(collector, {}, attempts=1, delay=0.5))
    with pytest.raises(WorkerHTTPError):
        script.run(collector, [full, loading, full, loading])
    assert sum(isinstance(step, Follow) for step in script.steps) == 4  # the waits spent no attempt
    for final in (WorkerHTTPError(400, {"error": "BadRequest: x"}), TransportError("reset")):
        collector = BatchCollector()
        script = Script(polling_plan(collector, {}, interval=1.0, attempts=3, delay=0.5))
        with pytest.raises(type(final)):
            script.run(collector, [final])
        assert script.steps == [Call("POST", "/synth_batch?async=1", {})]


def test_waits_the_worker_asks_for_are_bounded_by_the_wait_limit_in_a_row():
    """Each wait is the worker's Retry-After (at least the first back-off, at most 30 s, never past the
    limit); once `wait_limit` seconds are spent in a row the re-attach is given up in words, while an
    answer in between starts the count again."""
    clock = Clock()
    collector = BatchCollector(clock=clock)
    script = Script(streaming_plan(collector, {}, attempts=0, delay=0.5, wait_limit=70.0), clock)
    loading = WorkerHTTPError(503, {"error": "Loading: the engine is still loading"}, retry_after=45.0)
    now = WorkerHTTPError(503, {"error": "Loading: x"}, retry_after=0.0)
    with pytest.raises(TransportError, match=r"'Loading: the engine is still loading' after 70 s"):
        script.run(
            collector,
            [[START, None], now, now, [OK0, None], loading, now, loading, now, loading, now, loading],
        )
    sleeps = [step.seconds for step in script.steps if isinstance(step, Sleep)]
    assert sleeps == [0.5, 30.0, 30.0, 10.0]
    collector = BatchCollector(clock=clock)  # `Retry-After: 0` with no back-off: still a wait, and an end
    script = Script(streaming_plan(collector, {}, attempts=0, delay=0.0, wait_limit=0.1), clock)
    with pytest.raises(TransportError, match=r"'Loading: x' after 0.1 s"):
        script.run(collector, [[START, None], now, now, now, now, now])
    assert [step.seconds for step in script.steps if isinstance(step, Sleep)] == pytest.approx([0.05, 0.05])
    with pytest.raises(ClientError, match="wait_limit must be a finite number"):
        next(streaming_plan(BatchCollector(), {}, attempts=0, delay=0.5, wait_limit=float("nan")))


@pytest.mark.parametrize(
    "header, seconds", [("5", 5.0), ("0.5", 0.5), ("nan", None), ("-1", None), ("x", None)]
)
def test_retry_after_in_seconds_is_read_as_a_finite_number_of_them(header, seconds):
    assert retry_after_of(header) == seconds


ANSWERED = "Sun, 06 Nov 1994 08:49:37 GMT"


@pytest.mark.parametrize(
    "header, answered, seconds",
    [
        ("Sun, 06 Nov 1994 08:49:40 GMT", ANSWERED, 3.0),  # IMF-fixdate, from the answer's own Date
        ("Sunday, 06-Nov-94 08:50:37 GMT", ANSWERED, 60.0),  # RFC 850's obsolete form
        ("Sun Nov  6 08:49:47 1994", ANSWERED, 10.0),  # asctime's, which names no zone: GMT
        ("Sun, 06 Nov 1994 08:49:30 GMT", ANSWERED, 0.0),  # already past: at once
        ("Sun, 06 Nov 1994 08:49:40 GMT", None, 0.0),  # no Date: from now, long past
        ("Sun, 06 Nov 1994 08:49:40 GMT", "not a date", 0.0),
        ("Sun, 32 Nov 1994 08:49:40 GMT", ANSWERED, None),
        ("Sun, 999999999999999999999 Nov 1994 08:49:40 GMT", ANSWERED, None),  # was an OverflowError
        ("Sun, 06 Nov 1994 08:49:40 GMT", "Sun, 999999999999999999999 Nov 1994 08:49:37 GMT", 0.0),
    ],
)
def test_retry_after_as_an_http_date_is_the_seconds_until_it(header, answered, seconds):
    """RFC 9110 allows a date; it was read as no Retry-After, so each such "not now" spent an attempt."""
    assert retry_after_of(header, answered) == seconds


def test_a_stream_that_ends_before_start_is_a_transport_error():
    collector = BatchCollector()
    script = Script(streaming_plan(collector, {}, attempts=5, delay=0.1))
    with pytest.raises(TransportError, match="before its start event"):
        script.run(collector, [[None]])


def test_polling_returns_the_body_and_retries_only_what_may_pass():
    plan = poll_json("/jobs/j1/status", attempts=2, delay=0.25)
    assert next(plan) == Call("GET", "/jobs/j1/status", at_once=True)
    assert plan.throw(TransportError("reset")) == Sleep(0.25)
    assert next(plan) == Call("GET", "/jobs/j1/status", at_once=True)
    with pytest.raises(StopIteration) as stop:
        plan.send({"status": "running"})
    assert stop.value.value == {"status": "running"}  # a dict, in the sync and the async client alike
    plan = poll_json("/jobs/j1/status", attempts=2, delay=0.25)
    next(plan)
    with pytest.raises(WorkerHTTPError):
        plan.throw(WorkerHTTPError(401, {"error": "Unauthorized: token"}))


def test_polling_plan_reports_status_changes_then_the_result_and_done():
    seen: list[str] = []
    collector = BatchCollector(lambda idx, event: seen.append(event["event"]))
    plan = polling_plan(collector, {"sections": []}, interval=1.0, attempts=3, delay=0.5)
    steps: list[Any] = [next(plan)]
    answers = iter(
        [
            {"job_id": "j1", "total": 1},
            {"job_id": "j1", "status": "running", "done": 0, "current_idx": 0},
            {"job_id": "j1", "status": "running", "done": 0, "current_idx": 0},
            {"job_id": "j1", "status": "done", "done": 1, "current_idx": None},
            {"job_id": "j1", "status": "running", "done": 0},  # /result's 202 in a cluster that lags
            {
                "job_id": "j1",
                "status": "done",
                "total": 1,
                "sections": [{"idx": 0, "status": "ok", "wav_path": "/w/0.wav"}],
            },
        ]
    )
    try:
        while True:
            step = steps[-1]
            if isinstance(step, Deliver):
                collector.accept(step.event)
                steps.append(plan.send(None))
            elif isinstance(step, Sleep):
                steps.append(plan.send(None))
            else:
                steps.append(plan.send(next(answers)))
    except StopIteration as stop:
        result = stop.value
    # the accepted body first (its job_id, before any poll is answered); an unchanged status not repeated
    assert seen == ["status", "status", "status", "progress", "done"]
    assert [s for s in steps if isinstance(s, Sleep)] == [Sleep(1.0), Sleep(1.0), Sleep(1.0)]
    assert result["wav_paths"] == ["/w/0.wav"] and result["done"]["ok_count"] == 1


def test_bench_takes_the_base_url_as_the_client_does(monkeypatch):
    import argparse

    from npu_worker.bench.cli import _config, add_bench_command
    from npu_worker.client import resolve_base

    parser = argparse.ArgumentParser()
    add_bench_command(parser.add_subparsers(dest="command"))
    monkeypatch.setenv("TTS_WORKER_BASE", "http://127.0.0.1:9999/")
    assert _config(parser.parse_args(["bench"])).base == resolve_base() == "http://127.0.0.1:9999"
    given = parser.parse_args(["bench", "--base", "http://localhost:7000/"])
    assert _config(given).base == resolve_base("http://localhost:7000/") == "http://localhost:7000"


def test_the_stall_bound_counts_from_the_last_progress_only():
    """New logged events, a changed polled status and a `waiting` are progress; a heartbeat or a replay
    is not. No bound unless asked for (an honest section may take minutes)."""
    clock = Clock()
    collector = BatchCollector(stall_limit=5.0, clock=clock)
    collector.accept(START)
    clock.now += 4.9
    assert collector.stalled() is None
    for event in ({"event": "heartbeat"}, START):  # START again: a replay
        collector.accept(event)
    clock.now += 0.1
    stalled = collector.stalled()
    assert stalled is not None and str(stalled) == (
        "job j1: no progress for 5 s (stall_limit) after event 1, while the worker kept it running"
    )
    for event in (OK0, {"event": "status", "done": 1}, {"event": "waiting"}):
        clock.now += 4.9
        collector.accept(event)
        clock.now += 4.9
        assert collector.stalled() is None
    clock.now += 1e6
    assert BatchCollector(clock=clock).stalled() is None
    for limit in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ClientError, match="stall_limit must be a finite number of seconds > 0"):
            BatchCollector(stall_limit=limit)


def test_after_a_restarts_signs_the_health_decides_whether_the_engine_failed():
    """A refused re-attach or a polled `interrupted` sends the client to /health: its 500 `fail` ends the
    run (the worker runs no job, though it streams heartbeats and says `interrupted` for ever); an
    unreachable /health, or a loading one, is no verdict."""
    failed = WorkerHTTPError(500, {"status": "fail", "error": "ModelLoadError: gone"})
    refused = NotConnected("GET: connection refused")
    collector = BatchCollector()
    script = Script(streaming_plan(collector, {}, attempts=5, delay=0.1))
    with pytest.raises(EngineFailed, match=r"job j1: the worker failed to start \(ModelLoadError: gone\)"):
        script.run(collector, [[START, None], refused, TransportError("reset"), refused, failed])
    assert [step for step in script.steps if isinstance(step, Call)] == [HEALTH, HEALTH]
    collector = BatchCollector()
    script = Script(polling_plan(collector, {}, interval=1.0, attempts=3, delay=0.5))
    interrupted = {"job_id": "j1", "status": "interrupted", "done": 0}
    accepted = {"job_id": "j1", "status": "queued"}
    with pytest.raises(EngineFailed):
        script.run(collector, [accepted, interrupted, HEALTHY, interrupted, failed])


def test_a_result_that_never_comes_after_the_status_said_done_is_bounded_by_the_stall_limit():
    """In polling, `/result` answers 202 until the result is there (a cluster's may lag its status): a
    result that never came was polled for ever, `stall_limit` or not."""
    clock = Clock()

    def ticking() -> float:  # each look at the clock finds it a second later
        clock.now += 1.0
        return clock.now

    collector = BatchCollector(stall_limit=5.0, clock=ticking)
    script = Script(polling_plan(collector, {}, interval=1.0, attempts=3, delay=0.5))
    done = {"job_id": "j1", "status": "done", "done": 2}
    lagging = {"job_id": "j1", "status": "running", "done": 2}
    with pytest.raises(client_errors.Stalled, match="no progress for 5 s"):
        script.run(collector, [{"job_id": "j1", "status": "queued"}, done, *[lagging] * 10])
    assert sum(step == Call("GET", "/jobs/j1/result", at_once=True) for step in script.steps) < 10
