"""Every request ends, whatever mix arrives at a real `npu-worker serve` (espeak, three engine threads):
the engine threads waiting for work are woken only when one of them would find some
(`Admission._wake_if_work`), and a wake-up lost on any path (an arrival, a section's start or end
freeing a lane or the job's next section, a cancel, the shutdown) would leave a request waiting for
ever. Each wave ends with nothing arriving after its last request, so no later arrival can rescue a
lost wake-up; its requests are bounded by generous timeouts (a hang, not a speed, fails them)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.serve_process import ServeProcess
from tests.timing import seconds

pytestmark = pytest.mark.allow_blocking  # the worker runs in its own process; waits here are the test's
REPO = Path(__file__).resolve().parents[1]
ENDS = seconds(60)  # a request, or a wave, that has not ended by then waits for a wake-up that never came
WORDS = ("하나", "둘", "셋", "넷", "다섯", "여섯", "일곱", "여덟")


def text(number: int, part: int = 0) -> str:
    """A short sentence of its own (the synthesis cache is off anyway): a few engine chunks."""
    return f"{WORDS[number % 8]} {WORDS[part % 8]} {number}."


def long_text(number: int, part: int, sentences: int) -> str:
    """`sentences` short ones in one section."""
    return " ".join(text(number, part * sentences + n) for n in range(sentences))


async def ws_preview(
    session: aiohttp.ClientSession,
    base: str,
    number: int,
    *,
    audio: bool,
    cancel: bool,
    count: int = 3,
    sentences: int = 1,
) -> str:
    """A `/ws` request of `count` sections of `sentences` each, listened to (`audio`) or not,
    cancelled after its first event past `start` when `cancel`; what its `done` said, or its
    request-level error (one waited for a `done` after it until ENDS ran out, saying nothing)."""
    async with session.ws_connect(base + "/ws") as ws:
        sections = [{"idx": i, "text": long_text(number, i, sentences)} for i in range(count)]
        await ws.send_str(json.dumps({"type": "synth_batch", "sections": sections, "audio": audio}))
        cancelled = False
        while True:
            message = await ws.receive(timeout=ENDS)
            if message.type == aiohttp.WSMsgType.BINARY:
                continue
            assert message.type == aiohttp.WSMsgType.TEXT, (number, message)
            event = json.loads(message.data)
            if event["event"] == "done":
                return "cancelled" if event["cancelled"] else f"{event['ok_count']}/{event['total']}"
            if (
                event["event"] == "error"
                and event["idx"] is None
                and not event["error"].startswith("NotRunning")
            ):
                return event["error"]  # the request refused or its stream failed: no `done` follows
            if cancel and not cancelled and event["event"] != "start":
                await ws.send_str(json.dumps({"type": "cancel"}))
                cancelled = True


async def synth(session: aiohttp.ClientSession, base: str, out: Path, number: int) -> str:
    body = {"text": text(number), "output_path": str(out / f"synth{number}.wav")}
    async with session.post(base + "/synth", json=body) as answer:
        return (await answer.json())["status"]


async def streamed_batch(
    session: aiohttp.ClientSession, base: str, out: Path, number: int, texts: list[str] | None = None
) -> str:
    """A `/synth_batch` (four short sections, or `texts`), its NDJSON stream read to `done`."""
    texts = texts or [text(number, i) for i in range(4)]
    sections = [
        {"idx": i, "text": said, "output_path": str(out / f"b{number}_{i}.wav")}
        for i, said in enumerate(texts)
    ]
    async with session.post(base + "/synth_batch", json={"sections": sections}) as answer:
        lines = [json.loads(line) for line in (await answer.text()).splitlines() if line]
    done = lines[-1]
    assert done["event"] == "done", lines
    return f"{done['ok_count']}/{done['total']}"


async def cancelled_batch(session: aiohttp.ClientSession, base: str, out: Path, number: int) -> str:
    """An async batch of six sections, cancelled at once (queued or running), polled to its end."""
    sections = [
        {"idx": i, "text": text(number, i), "output_path": str(out / f"c{number}_{i}.wav")} for i in range(6)
    ]
    async with session.post(base + "/synth_batch?async=1", json={"sections": sections}) as answer:
        job = (await answer.json())["job_id"]
    async with session.delete(f"{base}/jobs/{job}") as answer:
        assert answer.status == 200
    while (end := await status(session, base, job)) in ("queued", "running"):
        await asyncio.sleep(0.02)
    return end


def wave(session: aiohttp.ClientSession, base: str, out: Path, first: int) -> list[tuple[Any, set[str]]]:
    """One wave's requests, all sent at once, each with the ends it may have: listened previews (two
    cancelled), previews without audio, `/synth` calls, a streamed batch, and a batch cancelled while
    queued or running."""
    requests: list[tuple[Any, set[str]]] = []
    for n in range(first, first + 4):
        cancel = n % 2 == 0  # (a cancel may come after the last section: then it ends whole)
        requests.append(
            (
                ws_preview(session, base, n, audio=True, cancel=cancel),
                {"cancelled", "3/3"} if cancel else {"3/3"},
            )
        )
        requests.append((ws_preview(session, base, n + 100, audio=False, cancel=False), {"3/3"}))
        requests.append((synth(session, base, out, n), {"ok"}))
    requests.append((streamed_batch(session, base, out, first), {"4/4"}))
    requests.append((cancelled_batch(session, base, out, first), {"cancelled", "done"}))
    return requests


async def beside(session: aiohttp.ClientSession, base: str, out: Path, number: int) -> None:
    """A batch's section on the engine thread, then a listened preview of six sections, each half as
    long, beside it on a preview lane: the batch section ends while one of the preview's runs there
    (most often), the engine thread waits, and the preview's next section is its to take (the lanes
    leave streaming previews to an idle engine thread), so the end of the preview's section must
    wake it."""
    long = long_text(number, 0, 24)
    body = {"sections": [{"idx": 0, "text": long, "output_path": str(out / f"long{number}.wav")}]}
    async with asyncio.timeout(ENDS):
        async with session.post(base + "/synth_batch?async=1", json=body) as answer:
            job = (await answer.json())["job_id"]
        while await status(session, base, job) == "queued":
            await asyncio.sleep(0.005)
        assert (
            await ws_preview(session, base, number, audio=True, cancel=False, count=6, sentences=12) == "6/6"
        )
        while (end := await status(session, base, job)) == "running":
            await asyncio.sleep(0.01)
    assert end == "done"


async def status(session: aiohttp.ClientSession, base: str, job: str) -> str:
    async with session.get(f"{base}/jobs/{job}/status") as answer:
        return (await answer.json())["status"]


async def ended(requests: list[tuple[Any, set[str]]]) -> None:
    """Run `requests` at once; each ends, as one of the ends it may have."""
    async with asyncio.timeout(ENDS):
        ends = await asyncio.gather(*(request for request, _ in requests))
    assert all(end in allowed for end, (_, allowed) in zip(ends, requests, strict=True)), ends


async def health(session: aiohttp.ClientSession, base: str) -> dict[str, Any]:
    async with session.get(base + "/health") as answer:
        return await answer.json()


async def loaded(session: aiohttp.ClientSession, process: ServeProcess) -> str:
    base = process.base
    async with asyncio.timeout(ENDS):
        while True:
            assert process.poll() is None, process.log()
            try:
                if (await health(session, base)).get("loaded"):
                    return base
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.05)


async def test_every_request_of_a_mixed_flood_ends_and_so_does_a_shutdown_amid_one(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    args = ["--state-dir", str(tmp_path / "state"), "--output-roots", str(out), "--cache-max-bytes", "0"]
    process = ServeProcess([*args, "--preview-lanes", "3"], {**os.environ, "PYTHONPATH": str(REPO)})
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=ENDS)) as session:
            base = await loaded(session, process)
            for first in (0, 10, 20):  # each wave ends before the next: nothing rescues a lost wake-up
                await ended(wave(session, base, out, first))
            for number in range(200, 204):
                await beside(session, base, out, number)
            assert (await health(session, base))["queue"] == 0
            # A shutdown amid a wave: every request still ends (answered, refused or its connection closed).
            requests = [asyncio.ensure_future(request) for request, _ in wave(session, base, out, 30)]
            await asyncio.sleep(0.05)
            process.send_signal(signal.SIGTERM)
            async with asyncio.timeout(ENDS):
                await asyncio.gather(*requests, return_exceptions=True)
        log = process.log_at_exit(ENDS)
    finally:
        process.kill()
    assert process.returncode == 0, log
    assert "npu-worker stopped" in log and "Traceback" not in log
