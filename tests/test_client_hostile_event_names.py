"""A hostile worker's event name in the client library's errors: an event without its `seq` was
refused as `the worker sent a <name> event without its seq`, its name written raw (an escape sequence
and a line break of the worker's in a library user's log), where the job id and error words beside it
were escaped (`worker_words.one_line`, `tests/test_client_hostile_job_ids.py`)."""

from __future__ import annotations

import asyncio

import pytest

from npu_worker import client
from npu_worker.worker_words import one_line
from tests.rogue_worker import RogueWorker, ndjson

HOSTILE = "ok\x1b[2J\nTraceback (most recent call last):\u202e"
SECTIONS = [{"idx": 0, "text": "가나다.", "output_path": "/tmp/never.wav"}]


@pytest.mark.parametrize("synchronous", [True, False], ids=["sync", "async"])
async def test_an_event_without_its_seq_writes_its_name_escaped(synchronous: bool):
    def script(method: str, path: str) -> bytes:
        return ndjson({"event": "start", "seq": 1, "job_id": "j1", "total": 1}, {"event": HOSTILE, "idx": 0})

    async with RogueWorker(script) as rogue:
        with pytest.raises(client.WorkerProtocolError) as failed:
            if synchronous:
                await asyncio.to_thread(client.synth_batch_streaming, SECTIONS, base=rogue.base)
            else:
                await client.async_synth_batch_streaming(SECTIONS, base=rogue.base)
    said = str(failed.value)
    assert said.startswith(f"the worker sent a {one_line(HOSTILE)} event without its seq: "), said
    assert all(char.isprintable() for char in said), said
