"""A long section's wav handed over by its engine node over a link too slow to carry it in one command within
the command timeout (a real redis-server behind a real TCP proxy that never passes a request with an
argument past a size: one command's, not the connection's). MADE (and MADE_OK, a `both` node's own file)
sent the whole wav as one argument: each try timed out, and the engine thread's journal retried it for ever;
the section never ended. Now the wav goes in pieces (SETRANGE into a staging key), each a command within the
timeout, and the script moves it in place: the section is `ok`, its file whole."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from npu_worker.jobs.cluster import wav_upload, writer
from tests.redis_proxy import redis_through
from tests.timing import seconds

HELD_PAST = 128 * 1024  # a request with an argument past this many bytes never gets through
TEXT = "a long section " * 40  # the tone engine: ≈ 0.6 MB of wav


class Held(Exception):
    """A request too long for the link: it never arrives."""


def command_end(data: bytes | bytearray) -> int | None:
    """Where the first whole RESP command in `data` ends, None if it is not whole yet; `Held` as soon as
    one of its arguments is longer than the link carries."""
    line = data.find(b"\r\n")
    if line < 0:
        return None
    position = line + 2
    for _ in range(int(data[1:line])):
        line = data.find(b"\r\n", position)
        if line < 0:
            return None
        length = int(data[position + 1 : line])
        if length > HELD_PAST:
            raise Held
        position = line + 2 + length + 2
        if position > len(data):
            return None
    return position


async def _proxy(client_in: Any, client_out: Any, redis_port: int, pumps: set[asyncio.Task[None]]) -> None:
    redis_in, redis_out = await asyncio.open_connection("127.0.0.1", redis_port)

    async def requests() -> None:
        waiting = bytearray()
        with contextlib.suppress(OSError, Held):
            while data := await client_in.read(65536):
                waiting += data
                while (end := command_end(waiting)) is not None:
                    redis_out.write(bytes(waiting[:end]))
                    del waiting[:end]
                await redis_out.drain()
        redis_out.close()

    async def replies() -> None:
        with contextlib.suppress(OSError):
            while data := await redis_in.read(65536):
                client_out.write(data)
                await client_out.drain()
        client_out.close()

    for pump in (requests(), replies()):
        pumps.add(asyncio.create_task(pump))


@pytest.fixture
async def slow_link(redis_server: Any) -> AsyncIterator[str]:
    """A Redis URL through the proxy (set up before the worker: it outlives the node's stop)."""
    async with redis_through(_proxy, redis_server.port) as url:
        yield url


async def _finals(node: Any) -> tuple[list[dict[str, Any]], str]:
    answer = await node.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": TEXT}]})
    job_id = (await answer.json())["job_id"]
    async with asyncio.timeout(seconds(60)):
        events = [json.loads(line) async for line in (await node.get(f"/jobs/{job_id}/events")).content]
    return [e for e in events if e.get("status") in ("ok", "fail") or e["event"] == "done"], job_id


@pytest.mark.parametrize(
    "script", ["MADE (an engine node: the accepting node writes)", "MADE_OK (a both node)"]
)
async def test_a_wav_too_long_for_one_command_within_the_timeout_is_handed_over_whole(
    slow_link: str, worker: Any, redis_server: Any, tmp_path: Path, monkeypatch: Any, script: str
) -> None:
    monkeypatch.setattr(wav_upload, "WAV_PIECE", 64 * 1024)  # (1 MiB in production)
    monkeypatch.setattr(writer, "WAV_PIECE", 64 * 1024)
    if script.startswith("MADE_OK"):
        node = await worker(role="both", state_dir=str(tmp_path / "both"), queue=slow_link)
    else:
        await worker(role="engine", state_dir=str(tmp_path / "engine"), queue=slow_link)
        node = await worker(role="api", state_dir=str(tmp_path / "api"), queue=redis_server.url)
    finals, job_id = await _finals(node)
    assert [(e["event"], e.get("status")) for e in finals] == [("progress", "ok"), ("done", None)], finals
    wav = Path(finals[0]["wav_path"]).read_bytes()
    assert wav.startswith(b"RIFF") and len(wav) > 3 * HELD_PAST
    audio = await node.get(f"/jobs/{job_id}/sections/0/audio")
    assert audio.status == 200 and await audio.read() == wav
