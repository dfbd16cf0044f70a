"""A text espeak-ng says nothing for ("😀", "...", zero-width characters) is `EmptyText` on every route,
as with ZipVoice: it was an `ok` with 7 ms of digital silence (a wav kept for the slide, a PCM frame to
a listener), on the real engine in the worker's process and in its child process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_ws_support import batch, connect, run_request

where = pytest.mark.parametrize("espeak_process", [False, True], ids=["in-process", "child-process"])
NOTHING = "😀 ...!!! \u200b"


@where
async def test_a_text_espeak_says_nothing_for_is_empty_text_on_every_route(
    worker, tmp_path: Path, espeak_process
):
    client = await worker(engine=None, backend="espeak", espeak_process=espeak_process)
    out = tmp_path / "a.wav"

    response = await client.post("/synth", json={"text": NOTHING, "output_path": str(out)})
    body = await response.json()
    assert response.status == 200 and body["status"] == "fail"  # as ZipVoice (docs/protocol.md)
    assert body["error"].startswith("EmptyText: ") and not out.exists()

    response = await client.post("/synth_batch", json={"sections": [{"text": NOTHING}, {"text": "안녕."}]})
    events = [json.loads(line) for line in (await response.text()).splitlines()]
    [error] = [e for e in events if e["event"] == "error"]
    assert error["idx"] == 0 and error["error"].startswith("EmptyText: ")
    assert [e["idx"] for e in events if e.get("status") == "ok"] == [1]

    ws = await connect(client)
    transcript = await run_request(ws, batch(NOTHING))
    assert transcript.frames() == [] and transcript.events("audio_start") == []
    [error] = transcript.events("error")
    assert error["error"].startswith("EmptyText: ")
    await ws.close()

    response = await client.post("/v1/audio/speech", json={"input": NOTHING, "voice": "default"})
    assert response.status == 400 and (await response.json())["error"]["code"] == "EmptyText"

    async with client.ws_connect("/v1/audio/speech/stream") as stream:
        await stream.send_json({"type": "input.text", "text": NOTHING})
        await stream.send_json({"type": "input.done"})
        messages = []
        async for message in stream:
            assert isinstance(message.data, str)  # no PCM
            messages.append(json.loads(message.data))
            if messages[-1]["type"] == "session.done":
                break
    codes = [m["code"] for m in messages if m["type"] == "error"]  # one per sentence of the text
    assert codes and set(codes) == {"EmptyText"}
