"""A caller's `on_reading` that raises, and a cut that meets a broken read, against a rogue worker on a
real socket: the sync client said a caller's `OSError` as `AnswerCut "POST …/synth: <its words>"` (the
hook runs inside urllib's open, whose errors are the worker's), the async one left the answer's
connection held (one per failure: a session's pool ran dry), the sync one too for what is no Exception
(a KeyboardInterrupt in the hook: its socket open while the caller held the traceback), and the async
one said a cut that came as the read broke as the connection's error where the sync one says the
command stopped it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from npu_worker import client
from npu_worker.client.errors import AnswerCut
from tests.rogue_worker import RogueWorker, reply
from tests.test_client_on_answer import ANSWER, synth_with
from tests.timing import seconds

CUT_SHORT = reply(200, b'{"status": "ok", "wav_path": "/w/a.wav"', length=100)  # then the close


class CallersOwn(OSError):
    """The caller's own error, an OSError as a hook that writes a file or a socket may raise."""


def raising(cut: Any) -> None:
    raise CallersOwn("the caller's own")


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_a_callers_on_reading_that_raises_an_oserror_comes_out_as_itself(use_async):
    async with RogueWorker(lambda method, path: ANSWER) as rogue:
        with pytest.raises(CallersOwn) as raised:
            await synth_with(use_async, rogue.base, on_reading=raising)
    assert str(raised.value) == "the caller's own"


async def test_the_async_clients_answer_is_let_go_when_on_reading_raises():
    """A session whose pool holds one connection: the answer left unreleased by the raising hook (its
    body still coming) held it, and the next call on that session waited for it for ever."""
    never = asyncio.Event()
    calls = [0]

    async def script(method: str, path: str) -> AsyncIterator[bytes]:
        calls[0] += 1
        if calls[0] == 1:
            yield reply(200, b'{"status": "ok"', length=100)  # a body still coming
            await never.wait()
        else:
            yield ANSWER

    async with RogueWorker(script) as rogue:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1)) as session:
            with pytest.raises(CallersOwn) as raised:  # kept, as a caller that logs it later keeps it
                await client.aio.synth(
                    "가.", "/w/a.wav", base=rogue.base, session=session, on_reading=raising
                )
            try:
                async with asyncio.timeout(seconds(20)):
                    body = await client.aio.synth("가.", "/w/a.wav", base=rogue.base, session=session)
            finally:
                never.set()
    assert body["wav_path"] == "/w/a.wav"
    assert str(raised.value) == "the caller's own"


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_a_cut_as_the_read_breaks_says_the_command_stopped_it(use_async):
    """`cut()` at once from `on_reading`, the worker's body cut short and its connection closed: the
    async client said the connection's error (`ClientPayloadError(...)`), the sync one the stop."""
    async with RogueWorker(lambda method, path: CUT_SHORT) as rogue:
        with pytest.raises(AnswerCut) as raised:
            await synth_with(use_async, rogue.base, on_reading=lambda cut: cut())
    assert str(raised.value) == f"POST {rogue.base}/synth: its read was cut short as the command stopped"


class CallersStop(BaseException):
    """A caller's stop that is no Exception (as KeyboardInterrupt or SystemExit are, which asyncio
    itself would not pass on from a thread's future)."""


def stopping(cut: Any) -> None:
    raise CallersStop


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_the_answer_is_let_go_when_on_reading_raises_a_base_exception(use_async):
    """The sync client closed the answer for an Exception only: one that is not (a KeyboardInterrupt in the
    hook) left its socket open for as long as the caller held the exception (its traceback holds the
    answer), so the worker saw no hang-up and wrote on. Here the worker's hang-up is awaited."""
    hung_up = asyncio.Event()

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).lower()
        await reader.readexactly(int(head.split(b"content-length:")[1].split(b"\r\n")[0]))
        writer.write(reply(200, b'{"status": "ok"', length=100))  # a body still coming
        await writer.drain()
        if not await reader.read(1):  # the client's close
            hung_up.set()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    try:
        with pytest.raises(CallersStop) as raised:  # kept, as a caller that logs it later keeps it
            await synth_with(use_async, base, on_reading=stopping)
        async with asyncio.timeout(seconds(20)):
            await hung_up.wait()
        assert raised.value is not None
    finally:
        server.close()


def raising_while_handling(cut: Any) -> None:
    try:
        {}["state"]
    except KeyError:
        raise CallersOwn("the caller's own, as it handled a KeyError")  # noqa: B904 (its context kept)


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_a_callers_error_keeps_the_error_it_was_raised_in(use_async):
    """The sync client raised the caller's error again inside its own `except`, with `from` its cause:
    the error it came from as the hook handled another (`__context__`, "During handling of the above
    exception") was lost, replaced by the client's carrier and hidden. Now it is as the hook raised it."""
    async with RogueWorker(lambda method, path: ANSWER) as rogue:
        with pytest.raises(CallersOwn) as raised:
            await synth_with(use_async, rogue.base, on_reading=raising_while_handling)
    assert isinstance(raised.value.__context__, KeyError)
    assert (raised.value.__cause__, raised.value.__suppress_context__) == (None, False)
