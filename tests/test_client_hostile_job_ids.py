"""A hostile worker's job id (and its error words) in the client library's errors: written raw, an id
with an escape sequence and a line break cleared a library user's terminal and forged a line of their
log (the CLI escaped them). Now escaped as the CLI escapes them (`worker_words.one_line`)."""

from __future__ import annotations

import asyncio
import json

import pytest

from npu_worker import client
from npu_worker.worker_words import one_line
from tests.rogue_worker import RogueWorker, ndjson, reply

HOSTILE = "j\x1b[2J\nTraceback (most recent call last):\u202e"
SECTIONS = [{"idx": 0, "text": "가나다.", "output_path": "/tmp/never.wav"}]


async def test_a_lost_streams_error_writes_the_workers_job_id_escaped():
    def script(method: str, path: str) -> bytes:
        if method == "POST":  # the start, then the stream ends
            return ndjson({"event": "start", "seq": 1, "job_id": HOSTILE, "total": 1})
        return ndjson()  # a re-attach whose stream ends at once

    async with RogueWorker(script) as rogue:
        with pytest.raises(client.ClientError) as failed:
            await client.async_synth_batch_streaming(
                SECTIONS, base=rogue.base, reattach_attempts=1, reattach_delay=0
            )
    said = str(failed.value)
    assert said.startswith(f"job {one_line(HOSTILE)}: "), said
    assert "\x1b" not in said and "\n" not in said and "\u202e" not in said, said


async def test_a_refusals_error_words_are_escaped():
    def script(method: str, path: str) -> bytes:
        return reply(400, json.dumps({"error": f"BadRequest: {HOSTILE}"}).encode())

    async with RogueWorker(script) as rogue:
        with pytest.raises(client.WorkerHTTPError) as refused:
            await client.async_synth_batch_streaming(SECTIONS, base=rogue.base)
    assert str(refused.value) == f"HTTP 400: BadRequest: {one_line(HOSTILE)}"
    assert refused.value.error_name == "BadRequest" and refused.value.body["error"].endswith(HOSTILE)


async def test_a_poll_answered_about_another_job_writes_the_accepted_job_id_escaped():
    """A polled status that is no status of the accepted job (a proxy's page, a hostile worker) is a
    WorkerProtocolError naming the job: its id, the worker's word, went into it raw."""

    def script(method: str, path: str) -> bytes:
        if method == "POST":  # accepted under a hostile id
            return reply(202, json.dumps({"job_id": HOSTILE, "status": "queued", "total": 1}).encode())
        return reply(200, json.dumps({"job_id": "another", "status": "running"}).encode())

    async with RogueWorker(script) as rogue:
        with pytest.raises(client.WorkerProtocolError) as failed:
            await client.async_synth_batch_polling(SECTIONS, base=rogue.base, poll_interval=0)
    said = str(failed.value)
    assert said.startswith(f"the worker answered no status of job {one_line(HOSTILE)}: "), said
    assert "\x1b" not in said and "\n" not in said and "\u202e" not in said, said


async def test_the_sync_clients_error_for_a_status_line_of_garbage_writes_it_escaped():
    """http.client's BadStatusLine holds the worker's whole line, and the sync client's error said it
    as it came: an escape sequence and a line break of the worker's in a library user's log."""
    garbage = "j\x1b[2J forged\u202e\r\n\r\n".encode()
    async with RogueWorker(lambda method, path: garbage) as rogue:
        with pytest.raises(client.TransportError) as failed:
            await asyncio.to_thread(client.synth_batch_streaming, SECTIONS, base=rogue.base)
    said = str(failed.value)
    assert "/synth_batch: j\\x1b[2J forged" in said, said
    assert all(char.isprintable() for char in said), said


@pytest.mark.parametrize("synchronous", [True, False], ids=["sync", "async"])
async def test_a_body_that_is_no_json_says_its_content_type_escaped(synchronous: bool):
    """The Content-Type of an answer whose body is no JSON object was said as the worker sent it."""
    answer = b"HTTP/1.1 200 OK\r\nContent-Type: text/\x1b[2J\xe2\x80\xae\r\nContent-Length: 3\r\n\r\nabc"
    async with RogueWorker(lambda method, path: answer) as rogue:
        with pytest.raises(client.WorkerProtocolError) as failed:
            if synchronous:
                await asyncio.to_thread(client.health, base=rogue.base)
            else:
                await client.async_health(base=rogue.base)
    said = str(failed.value)
    assert "with a body that is no JSON object (Content-Type: text/\\x1b[2J" in said, said
    assert all(char.isprintable() for char in said), said
