"""`client.synth(on_answer=)`: called once, when the worker's answer has been read whole, not for the
`Loading` answers it waited through (`npu-worker synth` holds its stops from that call: a call at a
"not now" would have held a Ctrl-C through the whole wait), nor for an answer cut short."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from npu_worker import client
from tests.rogue_worker import RogueWorker, reply
from tests.test_client_rogue_waits import LOADING

ANSWER = reply(200, b'{"status": "ok", "wav_path": "/w/a.wav", "duration_sec": 0.5}')


async def test_on_answer_is_called_once_the_answer_is_in_not_at_the_waits_before_it():
    said: list[str] = []
    loading = [2]

    def script(method: str, path: str) -> bytes:
        if loading[0]:
            loading[0] -= 1
            return LOADING
        return ANSWER

    def progress(idx: int, event: dict[str, Any]) -> None:
        said.append(event["event"])

    async with RogueWorker(script) as rogue:
        body = await asyncio.to_thread(
            client.synth, "가.", "/w/a.wav", base=rogue.base, on_progress=progress,
            on_answer=lambda: said.append("answer"),
        )  # fmt: skip
    assert body["wav_path"] == "/w/a.wav"
    assert said == ["waiting", "waiting", "answer"]


async def test_on_answer_is_not_called_for_an_answer_cut_short():
    called: list[bool] = []
    cut = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"status"'

    async with RogueWorker(lambda method, path: cut) as rogue:
        with pytest.raises(client.ClientError):
            await asyncio.to_thread(
                client.synth, "가.", "/w/a.wav", base=rogue.base, on_answer=lambda: called.append(True)
            )
    assert called == []


async def test_the_async_client_calls_on_answer_as_the_sync_one_does():
    """`client.aio` has the sync client's calls: its `synth` put `on_answer` into the request as a
    field ("the request holds a value JSON cannot carry") and sent nothing."""
    said: list[str] = []
    loading = [1]

    def script(method: str, path: str) -> bytes:
        if loading[0]:
            loading[0] -= 1
            return LOADING
        return ANSWER

    async with RogueWorker(script) as rogue:
        body = await client.aio.synth(
            "가.", "/w/a.wav", base=rogue.base, on_progress=lambda idx, event: said.append(event["event"]),
            on_answer=lambda: said.append("answer"),
        )  # fmt: skip
    assert body["wav_path"] == "/w/a.wav"
    assert said == ["waiting", "answer"]
