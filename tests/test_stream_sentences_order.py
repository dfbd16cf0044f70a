"""A stream socket's later sentences are ordered as work whose caller already hears audio: a new
preview (a browser's `/ws` request) goes before them, not behind every sentence the socket queued.

Before this, each sentence was a fresh preview waiting for its first audio, so a preview sent while a
stream socket had 4 sentences queued waited for all of them (6.2 s on the small ZipVoice model on CPU).
"""

from __future__ import annotations

import json

import websockets

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_openai_stream_ws import receive_until, stream_url
from tests.test_ws_support import ChunkGate, connect, receive_until_done
from tests.timing import until
from tests.tone_engine import ToneEngine

SENTENCES = ["첫 번째 문장입니다.", "두 번째 문장입니다.", "세 번째 문장입니다."]
PREVIEW = "미리 듣기"


async def test_a_new_preview_goes_before_a_stream_sockets_later_sentences(worker):
    engine = ToneEngine(chunk_seconds=0.1)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    async with websockets.connect(stream_url(client), max_size=None) as stream:
        await stream.send(json.dumps({"type": "input.text", "text": " ".join(SENTENCES)}))
        await stream.send(json.dumps({"type": "input.done"}))
        await until(lambda: len(engine.calls) == 1 and scheduler.queue_size() == 3, "sentences queued")
        preview = await connect(client)
        await preview.send_json({"type": "synth", "text": PREVIEW})
        await until(lambda: scheduler.queue_size() == 4, "the preview queued")
        gate.open()
        done = (await receive_until_done(preview)).items[-1]
        assert isinstance(done, dict) and done["ok_count"] == 1
        await receive_until(stream, "session.done")
        await preview.close()
    assert engine.calls == [SENTENCES[0], PREVIEW, *SENTENCES[1:]]  # before: the preview came last
