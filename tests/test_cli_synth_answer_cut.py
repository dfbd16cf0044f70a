"""`npu-worker synth` whose answer was cut said only what broke (`POST …/synth: Remote end closed
connection without response`), as if nothing had been done: the caller could not tell whether the wav
was written. It now says the answer was cut off, that the wav may or may not have been written, and
to run it again to be sure."""

from __future__ import annotations

import asyncio

import pytest

from npu_worker.cli_client import main
from npu_worker.client import aio
from npu_worker.client.errors import AnswerCut
from tests.cut_proxy import CuttableProxy
from tests.rogue_worker import RogueWorker
from tests.test_ws_support import ChunkGate
from tests.timing import seconds
from tests.tone_engine import ToneEngine


async def test_a_cut_answer_says_the_wav_may_not_be_written(worker, tmp_path, capsys):
    gate = ChunkGate()
    engine = ToneEngine()
    engine.gate = gate  # type: ignore[assignment]
    server = await worker(engine)
    proxy = await CuttableProxy(server.port).start()
    out = tmp_path / "cut.wav"
    try:
        running = asyncio.create_task(
            asyncio.to_thread(
                main, ["synth", "가나다라마바사아자차. " * 5, "-o", str(out), "--base", proxy.base]
            )
        )
        gate.allow(1)
        async with asyncio.timeout(seconds(20)):  # the engine has made a chunk: the synthesis runs
            while gate.passed < 1:
                await asyncio.sleep(0.01)
        proxy.cut()
        code = await running
    finally:
        gate.open()
        await proxy.close()
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"the answer was cut off, so {out} may or may not have been written" in err
    assert "run synth again to be sure" in err


async def test_an_answer_cut_inside_its_head_is_said_as_cut(tmp_path, capsys):
    """A head cut before its blank line (`Content-Type: appl`, then the close) was read by http.client as
    a whole head and an empty body: `HTTP 200 with a body that is no JSON object (Content-Type: appl)`."""
    out = tmp_path / "cut.wav"
    async with RogueWorker(lambda method, path: b"HTTP/1.1 200 OK\r\nContent-Type: appl") as rogue:
        code = await asyncio.to_thread(main, ["synth", "가나다.", "-o", str(out), "--base", rogue.base])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "the answer broke off in its head" in err and "no JSON object" not in err
    assert f"the answer was cut off, so {out} may or may not have been written" in err


async def test_an_answer_cut_inside_its_status_line_is_said_as_cut(tmp_path, capsys):
    """A status line cut short (`HTTP/1.1 `, then the close) was http.client's BadStatusLine, quoted bare:
    `POST …/synth: HTTP/1.1 `, which says nothing of what happened."""
    out = tmp_path / "cut.wav"
    async with RogueWorker(lambda method, path: b"HTTP/1.1 ") as rogue:
        code = await asyncio.to_thread(main, ["synth", "가나다.", "-o", str(out), "--base", rogue.base])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "the answer broke off in its head (its status line 'HTTP/1.1 ')" in err


async def test_the_async_client_says_a_cut_head_in_words(tmp_path):
    """aiohttp's ServerDisconnectedError for a head cut short was quoted as its repr, the parser's
    half-read message with it: `ServerDisconnectedError(<RawResponseMessage(version=…, code=200, …`."""
    for cut in (b"HTTP/1.1 ", b"HTTP/1.1 200 OK\r\nContent-Type: appl"):
        async with RogueWorker(lambda method, path, cut=cut: cut) as rogue:
            with pytest.raises(AnswerCut) as caught:
                await aio.synth("가나다.", tmp_path / "cut.wav", base=rogue.base)
        said = str(caught.value)
        assert said.endswith("/synth: the answer broke off in its head"), said
        assert "RawResponseMessage" not in said
