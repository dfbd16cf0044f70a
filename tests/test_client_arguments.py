"""What the pipeline client (sync and async) is given: what no request can carry (a base URL that is no
http(s) URL or holds a query or a fragment, a token no header can carry, nan, a value JSON has no form
for) is refused in words before anything is sent; a `pathlib.Path` is sent as its string."""

from __future__ import annotations

import asyncio
import socket

import pytest

from npu_worker import client
from npu_worker.client import aio
from tests.test_client import base_of
from tests.timing import seconds


@pytest.mark.parametrize(
    ("call", "problem"),
    [
        ({"speed_factor": float("nan")}, "speed_factor must be a finite number, not nan"),
        (
            {"seed": float("inf")},
            "the request holds a number JSON cannot carry",
        ),  # json.dumps wrote `Infinity`
        ({"token": "bad\ntoken"}, "the token must be printable ASCII"),  # http.client's ValueError
        ({"token": "pässword"}, "the token must be printable ASCII"),
        (
            {"seed": object()},
            "the request holds a value JSON cannot carry: Object of type object",
        ),  # TypeError
    ],
)
async def test_what_no_request_can_carry_is_refused_before_anything_is_sent(tmp_path, call, problem):
    """Both clients raise InvalidArgument (a ClientError and a ValueError) in words; a socket that would
    take the request never sees a connection (nan used to go out as `NaN`, which is not JSON)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        base = f"http://127.0.0.1:{listener.getsockname()[1]}"
        wav = str(tmp_path / "x.wav")
        with pytest.raises(client.InvalidArgument, match=problem):
            await asyncio.to_thread(client.synth, "a", wav, base=base, timeout=1, **call)
        with pytest.raises(client.InvalidArgument, match=problem):
            await aio.synth("a", wav, base=base, timeout=1, **call)
        sections = [{"text": "a", "output_path": wav}]
        with pytest.raises(client.InvalidArgument, match=problem):
            await asyncio.to_thread(client.synth_batch_streaming, sections, base=base, **call)
        with pytest.raises(BlockingIOError):
            listener.accept()


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_output_paths_may_be_path_objects(worker, tmp_path, use_async):
    """A pipeline that builds its paths with pathlib had a TypeError from json.dumps (not a ClientError)."""
    base = base_of(await worker())
    sections = [{"idx": i, "text": f"섹션 {i}.", "output_path": tmp_path / f"s{i:02d}.wav"} for i in range(2)]
    async with asyncio.timeout(seconds(20)):
        if use_async:
            result = await aio.synth_batch_streaming(sections, base=base)
            one = await aio.synth("하나.", tmp_path / "one.wav", base=base)
        else:
            result = await asyncio.to_thread(client.synth_batch_streaming, sections, base=base)
            one = await asyncio.to_thread(client.synth, "하나.", tmp_path / "one.wav", base=base)
    assert result["wav_paths"] == [str(tmp_path / "s00.wav"), str(tmp_path / "s01.wav")]
    assert one["status"] == "ok" and (tmp_path / "one.wav").stat().st_size > 44


@pytest.mark.parametrize("base", ["notaurl", "ftp://127.0.0.1:7768", "http://127.0.0.1:port", "http://"])
async def test_a_base_that_is_no_http_url_is_refused_in_words(base):
    """urllib raised `ValueError: unknown url type`, aiohttp an InvalidURL, from deep inside."""
    with pytest.raises(client.InvalidArgument, match="the worker URL must be http"):
        await asyncio.to_thread(client.health, base=base)
    with pytest.raises(client.InvalidArgument, match="the worker URL must be http"):
        await aio.health(base=base)


@pytest.mark.parametrize("tail", ["?x=1", "#top", "?", "/v1?token=abc"])
async def test_a_base_with_a_query_or_a_fragment_is_refused_in_words(worker, tmp_path, tail):
    """The paths went after the query (`/?x=1/synth`) or into the fragment, which is not sent, so the
    worker was asked for `/`: `HTTP 405: BadRequest: POST is not allowed on /`, and in polling mode each
    status poll was its index page."""
    base = base_of(await worker()) + tail
    wav = str(tmp_path / "x.wav")
    with pytest.raises(client.InvalidArgument, match=r"no \?query or #fragment"):
        await asyncio.to_thread(client.synth, "a", wav, base=base)
    with pytest.raises(client.InvalidArgument, match=r"no \?query or #fragment"):
        await aio.synth_batch_polling([{"text": "a", "output_path": wav}], base=base)
