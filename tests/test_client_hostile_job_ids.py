"""A hostile worker's job id (and its error words) in the client library's errors: written raw, an id
with an escape sequence and a line break cleared a library user's terminal and forged a line of their
log (the CLI escaped them). Now escaped as the CLI escapes them (`worker_words.one_line`)."""

from __future__ import annotations

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
