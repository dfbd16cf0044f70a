"""A `/synth` whose caller hung up before the answer, on a real socket behind the connection guard: its
synthesis stops (`HangUpWatch`), and `/metrics` and the access log count it as the hang-up it was, a 499
(nginx's "client closed request", as every other route's hang-up), not the 200 no caller read."""

from __future__ import annotations

import asyncio
import json
import logging

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_metrics import value
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine

HEAD = (
    b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
)


async def scrape(port: int) -> dict:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{port}/metrics") as response:
            text = await response.text()
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def synth_counts(samples: dict) -> dict[str, float]:
    return {
        dict(labels)["status"]: count
        for (name, labels), count in samples.items()
        if name == "npu_worker_http_requests_total" and dict(labels).get("route") == "/synth"
    }


@pytest.mark.parametrize("leaving", ["close", "half-close"])
async def test_a_synth_whose_caller_left_is_counted_499(served, tmp_path, caplog, leaving):
    caplog.set_level(logging.INFO, logger="aiohttp.access")
    engine = ToneEngine(delay_per_chunk=0.05)  # 2 000 characters: 400 chunks, 20 s
    listener = await served(engine)
    scheduler = listener.runner.app[SCHEDULER_KEY]
    body = json.dumps({"text": "가" * 2000, "output_path": str(tmp_path / "never.wav")}).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(HEAD % len(body) + body)
    await writer.drain()
    await until(lambda: scheduler.jobs_running() == 1, "the /synth's job")
    if leaving == "close":
        writer.close()
    else:  # a FIN: a hang-up too (docs/protocol.md); the caller still reads what comes
        writer.write_eof()
        async with asyncio.timeout(seconds(20)):
            answer = await reader.read()
        writer.close()
        assert b" 200 " in answer.split(b"\r\n", 1)[0] and b'"Cancelled: ' in answer, answer
    counts: dict[str, float] = {}

    async def counted() -> bool:
        counts.update(synth_counts(await scrape(listener.port)))
        return bool(counts)

    async with asyncio.timeout(seconds(20)):
        while not await counted():
            await asyncio.sleep(0.05)
    assert counts == {"499": 1.0}, counts
    samples = await scrape(listener.port)  # a hang-up is no error (as on every other route): the job's
    assert value(samples, "npu_worker_errors_total", name="Cancelled") == 0  # cancel is counted once
    assert value(samples, "npu_worker_jobs_total", kind="preview", outcome="cancelled") == 1
    assert scheduler.jobs_running() == 0  # its synthesis stopped
    await until(lambda: any("/synth" in r.getMessage() for r in caplog.records), "the access line")
    (line,) = [r.getMessage() for r in caplog.records if "/synth" in r.getMessage()]
    assert '"POST /synth HTTP/1.1" 499 ' in line, line


async def test_a_synth_answered_is_still_counted_200(served, tmp_path):
    listener = await served(ToneEngine())
    async with aiohttp.ClientSession() as session:
        answer = await session.post(
            f"http://127.0.0.1:{listener.port}/synth",
            json={"text": "안녕하세요.", "output_path": str(tmp_path / "a.wav")},
        )
        assert answer.status == 200 and (await answer.json())["status"] == "ok"
    samples = await scrape(listener.port)
    assert value(samples, "npu_worker_http_requests_total", method="POST", route="/synth", status="200") == 1
    assert synth_counts(samples) == {"200": 1.0}
