"""A batch's next section goes to the espeak child while the current one is made (`engine/espeak_ahead.py`):
the child sat idle between sections while the worker ended one and sent the next (benchmarks/
SERVER_OVERHEAD.md, 2026-12-07, stop 63). What a caller sees stays as it was: the admission still picks
(a `/synth` that comes meanwhile goes before the section sent ahead, stopped in the child as the
`/synth` is queued), a cancel writes none of it, a child
that dies with it sent ahead fails or makes again what it failed or made before, the same wavs.

A real worker with real espeak children; the engine thread's calls are recorded on their way through.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.engine import espeak_child
from npu_worker.engine.espeak_process import ChildEspeak
from npu_worker.engine.espeak_process_engine import EspeakProcessEngine
from npu_worker.jobs.cache import SynthesisCache
from npu_worker.jobs.runner import Runner
from tests.test_finisher import kinds, submit_batch
from tests.test_http_api import read_ndjson
from tests.timing import seconds, until

TEXTS = ["오늘은 음성 합성을 배웁니다.", "첫째, 문장을 읽습니다.", "둘째, 소리를 만듭니다.", "끝입니다."]
SYNTH = "미리 듣기입니다."


def batch(out: Path, name: str, texts: list[str] = TEXTS) -> dict[str, Any]:
    sections = [
        {"idx": i, "text": t, "output_path": str(out / f"{name}{i}.wav")} for i, t in enumerate(texts)
    ]
    return {"sections": sections}


async def made_alone(client: Any, out: Path) -> list[bytes]:
    """The batch's wavs made with nothing else going on (the reference)."""
    events = await read_ndjson(await client.post("/synth_batch", json=batch(out, "ref")))
    assert [e.get("status") for e in events if e["event"] == "progress"].count("ok") == len(TEXTS), events
    return [(out / f"ref{i}.wav").read_bytes() for i in range(len(TEXTS))]


def record_child(monkeypatch: Any) -> list[str]:
    """`request` for each request frame the worker writes to a child, `end` for each request's end it
    reads, in order (the texts a section's call asks: `record_asked`)."""
    order: list[str] = []
    write_frames, last_frame = espeak_child.write_frames, ChildEspeak._last_frame

    def written(fd: int, frames: list[Any]) -> None:
        order.extend("request" for kind, _ in frames if kind == espeak_child.REQUEST)
        write_frames(fd, frames)

    def ended(child: Any, kind: bytes, payload: Any) -> None:
        order.append("end")
        last_frame(child, kind, payload)

    monkeypatch.setattr(espeak_child, "write_frames", written)
    monkeypatch.setattr(ChildEspeak, "_last_frame", ended)
    return order


def record_asked(monkeypatch: Any) -> list[str]:
    """The text of each section the engine thread's child is asked for, in the admission's order."""
    asked: list[str] = []
    sent = ChildEspeak._sent

    def recorded(child: Any, request: Any, again: Any) -> Any:
        asked.append(request.text)
        return sent(child, request, again)

    monkeypatch.setattr(ChildEspeak, "_sent", recorded)
    return asked


class HeldAhead:
    """The engine thread held just after it sent the first section ahead, until `go`."""

    def __init__(self, monkeypatch: Any) -> None:
        self.sent, self.go = threading.Event(), threading.Event()
        send_ahead = EspeakProcessEngine.send_ahead

        def held(engine: Any, request: Any) -> None:
            send_ahead(engine, request)
            if not self.sent.is_set():
                self.sent.set()
                self.go.wait(seconds(30))

        monkeypatch.setattr(EspeakProcessEngine, "send_ahead", held)

    async def reached(self) -> None:
        assert await asyncio.to_thread(self.sent.wait, seconds(20)), "no section was sent ahead"


async def test_the_next_section_reaches_the_child_before_this_ones_end_is_read(worker, monkeypatch, tmp_path):
    order = record_child(monkeypatch)
    client = await worker(EspeakProcessEngine())
    reference = await made_alone(client, tmp_path)
    order.clear()
    events = await read_ndjson(await client.post("/synth_batch", json=batch(tmp_path, "s")))
    assert kinds(events) == [
        ("start", None, None),
        *[(e, i, s) for i in range(len(TEXTS)) for e, s in (("progress", "synth"), ("progress", "ok"))],
        ("done", None, None),
    ]
    assert [(tmp_path / f"s{i}.wav").read_bytes() for i in range(len(TEXTS))] == reference
    assert order.count("request") == order.count("end") == len(TEXTS), order
    for section in range(len(TEXTS) - 1):  # section + 2 requests written before section's end was read
        ends = [i for i, what in enumerate(order) if what == "end"]
        assert order[: ends[section]].count("request") == section + 2, order


async def test_a_synth_that_comes_meanwhile_goes_before_the_section_sent_ahead(worker, monkeypatch, tmp_path):
    client = await worker(EspeakProcessEngine(), preview_lanes=1)  # (the /synth is the engine thread's)
    reference = await made_alone(client, tmp_path)
    alone = await (
        await client.post("/synth", json={"text": SYNTH, "output_path": str(tmp_path / "a.wav")})
    ).json()
    assert alone["status"] == "ok", alone
    runner = client.app[SCHEDULER_KEY].runner
    pid = runner.engine.child.pid
    held, asked = HeldAhead(monkeypatch), record_asked(monkeypatch)
    try:
        job_id = await submit_batch(client, batch(tmp_path, "s"))
        await held.reached()  # section 0 in hand, section 1 sent ahead
        synth = asyncio.create_task(
            client.post("/synth", json={"text": SYNTH, "output_path": str(tmp_path / "p.wav")})
        )
        admission = client.app[SCHEDULER_KEY].admission
        await until(lambda: len(admission.live_jobs()) == 2, "the /synth queued behind section 0")
        child = runner.engine.child
        ahead = child._ahead
        assert ahead is not None and child._ahead_stopped == ahead.id  # stopped as the /synth was queued
    finally:
        held.go.set()
    async with asyncio.timeout(seconds(30)):
        answer = await (await synth).json()
    assert answer["status"] == "ok", answer
    events = await read_ndjson(await client.get(f"/jobs/{job_id}/events"))
    assert events[-1]["event"] == "done" and not events[-1].get("cancelled"), events
    assert asked == [TEXTS[0], SYNTH, *TEXTS[1:]]  # the admission's pick, as before
    assert (tmp_path / "p.wav").read_bytes() == (tmp_path / "a.wav").read_bytes()
    assert [(tmp_path / f"s{i}.wav").read_bytes() for i in range(len(TEXTS))] == reference
    assert runner.engine.child.pid == pid  # stopped and read away, the child not started again


async def test_a_synth_a_preview_lane_takes_leaves_the_section_sent_ahead(worker, monkeypatch, tmp_path):
    """A `/synth` queued behind a batch section while a preview lane waits is the lane's: the section
    sent ahead is the engine thread's next pick still, not stopped (and made again) for it."""
    client = await worker(EspeakProcessEngine(), preview_lanes=2)
    reference = await made_alone(client, tmp_path)
    scheduler = client.app[SCHEDULER_KEY]
    admission, runner = scheduler.admission, scheduler.runner
    await until(lambda: admission._lanes_waiting == 1, "the preview lane waiting for a preview")
    dropped: list[int] = []
    drop = ChildEspeak._drop
    monkeypatch.setattr(
        ChildEspeak, "_drop", lambda child, ahead: (dropped.append(ahead), drop(child, ahead))
    )
    held = HeldAhead(monkeypatch)
    try:
        job_id = await submit_batch(client, batch(tmp_path, "s"))
        await held.reached()  # section 0 in hand, section 1 sent ahead
        child = runner.engine.child
        ahead = child._ahead
        synth = await client.post("/synth", json={"text": SYNTH, "output_path": str(tmp_path / "p.wav")})
        answer = await synth.json()  # (made by the lane while the engine thread is held)
        assert answer["status"] == "ok", answer
        assert ahead is not None and child._ahead is ahead and child._ahead_stopped != ahead.id
    finally:
        held.go.set()
    events = await read_ndjson(await client.get(f"/jobs/{job_id}/events"))
    assert events[-1]["event"] == "done" and not events[-1].get("cancelled"), events
    assert [(tmp_path / f"s{i}.wav").read_bytes() for i in range(len(TEXTS))] == reference
    assert dropped == []  # every section sent ahead was taken as sent


async def test_two_batches_taking_turns_send_no_section_ahead_for_the_other_ones_pick(
    worker, monkeypatch, tmp_path
):
    """Batches take turns, a section each: a section sent ahead while another batch waited was never the
    next pick, and every pick stopped and read one away (the child making a part of it for nothing)."""
    client = await worker(EspeakProcessEngine())
    reference = await made_alone(client, tmp_path)
    dropped: list[int] = []
    drop = ChildEspeak._drop
    monkeypatch.setattr(
        ChildEspeak, "_drop", lambda child, ahead: (dropped.append(ahead), drop(child, ahead))
    )
    held = HeldAhead(monkeypatch)
    try:
        first = await submit_batch(client, batch(tmp_path, "a"))
        await held.reached()  # its section 0 in hand, its section 1 sent ahead (it was alone)
        second = await submit_batch(client, batch(tmp_path, "b"))
        admission = client.app[SCHEDULER_KEY].admission
        await until(lambda: len(admission.live_jobs()) == 2, "the second batch queued behind section 0")
    finally:
        held.go.set()
    for job_id in (first, second):
        events = await read_ndjson(await client.get(f"/jobs/{job_id}/events"))
        assert [e["idx"] for e in events if e.get("status") == "ok"] == [0, 1, 2, 3], events
    for name in "ab":
        assert [(tmp_path / f"{name}{i}.wav").read_bytes() for i in range(len(TEXTS))] == reference
    assert len(dropped) <= 1, dropped  # (the one sent ahead before the second batch came)


async def first_ok(client: Any, job_id: str) -> dict[str, Any]:
    """The job's first `ok`, read from its live event stream as it comes."""
    response = await client.get(f"/jobs/{job_id}/events")
    while line := await response.content.readline():
        event = json.loads(line)
        if event.get("status") == "ok" or event["event"] == "done":
            response.close()
            return dict(event)
    raise AssertionError("the event stream ended with no ok")


async def test_a_batch_sections_ok_does_not_wait_for_the_drop_of_the_one_sent_ahead(
    worker, monkeypatch, tmp_path
):
    """Another batch queued behind a section, whose next was sent ahead: the pick (the other batch's, they
    take turns) reads the one sent ahead away first, and the first batch's `ok`, held until the next
    request goes, waited for that drop (≈ 5 ms at the median, 23 ms at the p90 at load 17; stop 63)."""
    client = await worker(EspeakProcessEngine())
    reference = await made_alone(client, tmp_path)
    dropping, go = threading.Event(), threading.Event()
    drop = ChildEspeak._drop

    def gated(child: Any, ahead: int) -> None:
        dropping.set()
        go.wait(seconds(30))
        drop(child, ahead)

    monkeypatch.setattr(ChildEspeak, "_drop", gated)
    held = HeldAhead(monkeypatch)
    try:
        first = await submit_batch(client, batch(tmp_path, "a"))
        await held.reached()  # its section 0 in hand, its section 1 sent ahead (it was alone)
        second = await submit_batch(client, batch(tmp_path, "b"))
        admission = client.app[SCHEDULER_KEY].admission
        await until(lambda: len(admission.live_jobs()) == 2, "the second batch queued behind section 0")
        held.go.set()
        assert await asyncio.to_thread(dropping.wait, seconds(20)), "the one sent ahead was not dropped"
        try:
            async with asyncio.timeout(seconds(10)):
                ok = await first_ok(client, first)
        except TimeoutError:
            raise AssertionError("the first batch's ok waited for the drop") from None
        assert (ok["idx"], ok["status"]) == (0, "ok"), ok
    finally:
        held.go.set()
        go.set()
    for job_id in (first, second):
        events = await read_ndjson(await client.get(f"/jobs/{job_id}/events"))
        assert [e["idx"] for e in events if e.get("status") == "ok"] == [0, 1, 2, 3], events
    for name in "ab":
        assert [(tmp_path / f"{name}{i}.wav").read_bytes() for i in range(len(TEXTS))] == reference


async def test_a_next_section_the_cache_holds_is_not_sent_ahead(worker, monkeypatch, tmp_path):
    """A batch made again (a lecture with one slide changed): its sections in the cache are read from
    it at their turn, and each one sent ahead behind a changed one was made by the child for nothing."""
    client = await worker(EspeakProcessEngine(), cache_max_bytes=10_000_000)
    reference = await made_alone(client, tmp_path)  # (every section now in the cache)
    dropped: list[int] = []
    drop = ChildEspeak._drop
    monkeypatch.setattr(
        ChildEspeak, "_drop", lambda child, ahead: (dropped.append(ahead), drop(child, ahead))
    )
    events = await read_ndjson(
        await client.post("/synth_batch", json=batch(tmp_path, "s", [SYNTH, TEXTS[1]]))
    )
    oks = [e for e in events if e.get("status") == "ok"]
    assert [(e["idx"], bool(e.get("cached"))) for e in oks] == [(0, False), (1, True)], events
    assert (tmp_path / "s1.wav").read_bytes() == reference[1]
    assert dropped == []  # section 1 was never sent to the child


async def test_a_next_section_saying_the_one_in_hand_again_is_not_sent_ahead(worker, monkeypatch, tmp_path):
    """A batch that says a text twice in a row: the second is served at its turn from the first, made
    (`_unkept`), and the one sent ahead for it was made by the child for nothing, then stopped and read
    away before the next section's request went."""
    client = await worker(EspeakProcessEngine(), cache_max_bytes=10_000_000)
    dropped: list[int] = []
    drop = ChildEspeak._drop
    monkeypatch.setattr(
        ChildEspeak, "_drop", lambda child, ahead: (dropped.append(ahead), drop(child, ahead))
    )
    order = record_child(monkeypatch)
    texts = [SYNTH, SYNTH, TEXTS[1]]
    events = await read_ndjson(await client.post("/synth_batch", json=batch(tmp_path, "s", texts)))
    oks = [e for e in events if e.get("status") == "ok"]
    assert [(e["idx"], bool(e.get("cached"))) for e in oks] == [(0, False), (1, True), (2, False)], events
    assert (tmp_path / "s1.wav").read_bytes() == (tmp_path / "s0.wav").read_bytes()
    assert dropped == [], dropped  # section 1 was never sent to the child
    assert order.count("request") == 2, order  # sections 0 and 2


def record_built(monkeypatch: Any) -> list[tuple[str, str]]:
    """("request", text) for each request the runner builds, ("check", text) for each text it checks."""
    built: list[tuple[str, str]] = []
    request = Runner._request
    monkeypatch.setattr(
        Runner,
        "_request",
        lambda runner, job, s: (built.append(("request", s.text)), request(runner, job, s))[1],
    )
    for name in ("npu_worker.jobs.runner", "npu_worker.jobs.runner_ahead"):
        module = sys.modules.get(name)
        check = getattr(module, "check_text", None)
        if check is not None:  # (the runner's own checks, wherever they live)
            monkeypatch.setattr(
                module,
                "check_text",
                lambda text, limits, c=check: (built.append(("check", text)), c(text, limits))[1],
            )
    return built


async def test_a_section_sent_ahead_is_built_checked_and_keyed_once(worker, monkeypatch, tmp_path):
    """Its request, text check and cache key made as it goes ahead are its pick's: they were made twice,
    ahead and again at the pick (benchmarks/SERVER_OVERHEAD.md, 2026-12-08, stop 64)."""
    order = record_child(monkeypatch)
    client = await worker(
        EspeakProcessEngine(), cache_max_bytes=10_000_000
    )  # (a key is a JSON dump and a hash)
    warm = await read_ndjson(await client.post("/synth_batch", json=batch(tmp_path, "w", [SYNTH])))
    assert warm[-1]["event"] == "done", warm
    order.clear()
    built = record_built(monkeypatch)
    keys: list[str] = []
    key_for = SynthesisCache.key_for
    monkeypatch.setattr(
        SynthesisCache, "key_for", lambda cache, *a: (keys.append(key := key_for(cache, *a)), key)[1]
    )
    events = await read_ndjson(await client.post("/synth_batch", json=batch(tmp_path, "s")))
    assert [e["idx"] for e in events if e.get("status") == "ok"] == [0, 1, 2, 3], events
    ends = [i for i, what in enumerate(order) if what == "end"]
    assert order[: ends[0]].count("request") == 2, order  # (section 1 went ahead: the case counted)
    assert sorted(built) == sorted([("check", t) for t in TEXTS] + [("request", t) for t in TEXTS]), built
    assert len(keys) == len(set(keys)) == len(TEXTS), keys


async def test_a_cancel_writes_nothing_of_the_section_sent_ahead(worker, monkeypatch, tmp_path):
    client = await worker(EspeakProcessEngine())
    alone = await (
        await client.post("/synth", json={"text": SYNTH, "output_path": str(tmp_path / "a.wav")})
    ).json()
    assert alone["status"] == "ok", alone
    runner = client.app[SCHEDULER_KEY].runner
    pid = runner.engine.child.pid
    held = HeldAhead(monkeypatch)
    try:
        job_id = await submit_batch(client, batch(tmp_path, "s"))
        await held.reached()
        assert (await client.delete(f"/jobs/{job_id}")).status == 200
    finally:
        held.go.set()
    events = await read_ndjson(await client.get(f"/jobs/{job_id}/events"))
    assert events[-1]["event"] == "done" and events[-1]["cancelled"] is True, events
    assert [e for e in events if e.get("idx", 0) >= 1] == [], events  # section 1 never began
    assert not any((tmp_path / f"s{i}.wav").exists() for i in range(1, len(TEXTS)))
    # the child answers the next request with its own audio (the one sent ahead read away), unrestarted
    after = await (
        await client.post("/synth", json={"text": SYNTH, "output_path": str(tmp_path / "b.wav")})
    ).json()
    assert after["status"] == "ok", after
    assert (tmp_path / "b.wav").read_bytes() == (tmp_path / "a.wav").read_bytes()
    assert runner.engine.child.pid == pid


async def test_a_child_that_dies_with_a_section_sent_ahead_fails_only_the_one_in_hand(
    worker, monkeypatch, tmp_path
):
    client = await worker(EspeakProcessEngine())
    reference = await made_alone(client, tmp_path)
    child = client.app[SCHEDULER_KEY].runner.engine.child
    held = HeldAhead(monkeypatch)
    try:
        # section 0 long (its audio fills the child's pipe): still being made when the kill comes
        job_id = await submit_batch(client, batch(tmp_path, "s", [TEXTS[0] * 40, *TEXTS[1:]]))
        await held.reached()
        os.kill(child.pid, signal.SIGKILL)  # mid-section 0, section 1 in its pipe
        await asyncio.to_thread(child._process.wait, seconds(10))
    finally:
        held.go.set()
    events = await read_ndjson(await client.get(f"/jobs/{job_id}/events"))
    failed = [e for e in events if e.get("status") == "fail"]
    oks = [e["idx"] for e in events if e.get("status") == "ok"]
    if failed:  # (as a death mid-section does today)
        assert [e["idx"] for e in failed] == [0] and "espeak-ng's process failed" in failed[0]["error"], (
            events
        )
        assert oks == [1, 2, 3]
    else:  # it had ended section 0 (its audio in the pipe, read whole): section 1 made again
        assert oks == [0, 1, 2, 3], events
    assert [(tmp_path / f"s{i}.wav").read_bytes() for i in range(1, len(TEXTS))] == reference[1:]


async def test_a_child_found_dead_as_the_section_sent_ahead_comes_makes_it_again(
    worker, monkeypatch, tmp_path
):
    client = await worker(EspeakProcessEngine())
    reference = await made_alone(client, tmp_path)
    adopt_ahead, killed = ChildEspeak.adopt_ahead, []

    def dead_first(child: Any, request: Any) -> Any:
        if child._ahead is not None and not killed:  # section 0 read to its end, section 1 sent ahead
            killed.append(child.pid)
            os.kill(child.pid, signal.SIGKILL)
            child._process.wait(seconds(10))
        return adopt_ahead(child, request)

    monkeypatch.setattr(ChildEspeak, "adopt_ahead", dead_first)
    events = await read_ndjson(await client.post("/synth_batch", json=batch(tmp_path, "s")))
    assert killed, "no section was sent ahead"
    assert [e["idx"] for e in events if e.get("status") == "ok"] == [0, 1, 2, 3], events  # made again
    assert [(tmp_path / f"s{i}.wav").read_bytes() for i in range(len(TEXTS))] == reference


async def test_a_child_found_dead_as_the_section_sent_ahead_is_dropped_makes_the_pick(
    worker, monkeypatch, tmp_path
):
    """The pick is another batch's section (batches take turns): the drop of the one sent ahead (long:
    still being made) finds the child dead, and the pick goes to another child, as a request's write
    that finds a child dead has it (it failed with "its pipe: closed")."""
    client = await worker(EspeakProcessEngine())
    adopt_ahead, killed = ChildEspeak.adopt_ahead, []

    def dead_first(child: Any, request: Any) -> Any:
        if child._ahead is not None and not killed:
            killed.append(child.pid)
            os.kill(child.pid, signal.SIGKILL)
            child._process.wait(seconds(10))
        return adopt_ahead(child, request)

    monkeypatch.setattr(ChildEspeak, "adopt_ahead", dead_first)
    held = HeldAhead(monkeypatch)
    try:
        first = await submit_batch(client, batch(tmp_path, "a", [TEXTS[0], TEXTS[1] * 40]))
        await held.reached()  # its section 0 in hand, its long section 1 sent ahead
        other = await submit_batch(client, batch(tmp_path, "b", [SYNTH]))
        admission = client.app[SCHEDULER_KEY].admission
        await until(lambda: len(admission.live_jobs()) == 2, "the other batch queued behind section 0")
    finally:
        held.go.set()
    picked = await read_ndjson(await client.get(f"/jobs/{other}/events"))
    assert killed, "no section was sent ahead"
    assert [e.get("status") for e in picked if e["event"] == "progress"] == ["synth", "ok"], picked
    events = await read_ndjson(await client.get(f"/jobs/{first}/events"))
    assert [e["idx"] for e in events if e.get("status") == "ok"] == [0, 1], events
