"""`client.synth(on_answer=)` (and `on_reading=`, once the answer's head is in): called once, when the worker's answer has been read whole, not for the
`Loading` answers it waited through (`npu-worker synth` holds its stops from that call: a call at a
"not now" would have held a Ctrl-C through the whole wait), nor for an answer cut short."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from npu_worker import client
from npu_worker.client.errors import AnswerCut
from tests.rogue_worker import RogueWorker, reply
from tests.test_client_rogue_waits import LOADING
from tests.timing import seconds

ANSWER = reply(200, b'{"status": "ok", "wav_path": "/w/a.wav", "duration_sec": 0.5}')


def answer_after_loading(times: int) -> Callable[[str, str], bytes]:
    """A worker's script: `Loading` to the first `times` requests, then ANSWER."""
    loading = [times]

    def script(method: str, path: str) -> bytes:
        if loading[0]:
            loading[0] -= 1
            return LOADING
        return ANSWER

    return script


async def test_on_answer_is_called_once_the_answer_is_in_not_at_the_waits_before_it():
    said: list[str] = []

    def progress(idx: int, event: dict[str, Any]) -> None:
        said.append(event["event"])

    async with RogueWorker(answer_after_loading(2)) as rogue:
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

    async with RogueWorker(answer_after_loading(1)) as rogue:
        body = await client.aio.synth(
            "가.", "/w/a.wav", base=rogue.base, on_progress=lambda idx, event: said.append(event["event"]),
            on_answer=lambda: said.append("answer"),
        )  # fmt: skip
    assert body["wav_path"] == "/w/a.wav"
    assert said == ["waiting", "answer"]


async def synth_with(use_async: bool, base: str, **hooks: Any) -> dict[str, Any]:
    if use_async:
        return await client.aio.synth("가.", "/w/a.wav", base=base, **hooks)
    return await asyncio.to_thread(client.synth, "가.", "/w/a.wav", base=base, **hooks)


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_on_reading_is_called_once_the_head_is_in_not_at_the_waits_before_it(use_async):
    """`on_reading(cut)` once the answer's head is in, before `on_answer`; a `cut()` once the body is whole
    changes nothing. The async client had no `on_reading`: it went into the request as a field."""
    said: list[str] = []
    cuts: list[Any] = []

    def reading(cut: Any) -> None:
        said.append("reading")
        cuts.append(cut)

    async with RogueWorker(answer_after_loading(1)) as rogue:
        body = await synth_with(
            use_async, rogue.base, on_progress=lambda idx, event: said.append(event["event"]),
            on_reading=reading, on_answer=lambda: (said.append("answer"), cuts[0]()),
        )  # fmt: skip
    assert body["wav_path"] == "/w/a.wav"
    assert said == ["waiting", "reading", "answer"]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_on_readings_cut_ends_a_stalled_answers_read_at_once(use_async):
    """A body that never comes whole (the client's own bound is 600 s): `cut()`, from another thread as a
    signal handler's would come, ends its read with `AnswerCut`."""
    never, head_in = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()
    cuts: list[Any] = []

    async def head_then_stall(method: str, path: str):  # noqa: ANN202
        yield reply(200, b'{"status": "ok", "wav_path": "/w/a.wav"', length=100)
        await never.wait()

    def reading(cut: Any) -> None:
        cuts.append(cut)
        loop.call_soon_threadsafe(head_in.set)

    async with RogueWorker(head_then_stall) as rogue, asyncio.timeout(seconds(30)):
        synthesis = asyncio.ensure_future(synth_with(use_async, rogue.base, on_reading=reading))
        await asyncio.wait((synthesis, asyncio.ensure_future(head_in.wait())), return_when="FIRST_COMPLETED")
        assert cuts, synthesis.exception()  # (a synthesis over before its head was told: how it ended)
        await asyncio.to_thread(cuts[0])
        with pytest.raises(AnswerCut) as raised:
            await synthesis
    assert str(raised.value) == f"POST {rogue.base}/synth: its read was cut short as the command stopped"
