"""A `/ws` preview's first audio behind a long preview someone else asked for, beside a lecture batch.

Against a running worker (`--url`): the 39-slide `/synth_batch` runs (NDJSON, read to its first `ok`),
then (1) a long `/ws` preview (12 lecture sentences) whose reader takes its first frame and reads no
more (a paused tab), and 3 short `/ws` previews one after another; (2) a long `/synth` and a long
OpenAI speech request (read to its end), and 3 short `/ws` previews. Each line: the seconds from the
`synth` message to the first binary PCM frame. The batch is cancelled at the end (DELETE /jobs/ID),
its sections so far all `ok`. Run it against the worker before and after a change, one at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

import aiohttp

LECTURE = json.loads(
    (Path(__file__).parent.parent / "npu_worker/bench/lecture_ko_39.json").read_text("utf-8")
)
SENTENCES = [section["text"] for section in LECTURE["sections"]]
LONG_TEXT = " ".join(SENTENCES[:12])


async def first_audio(session: aiohttp.ClientSession, ws_url: str, text: str) -> float:
    """Seconds from the `synth` message to the first PCM frame; the preview then read to its `done`."""
    async with session.ws_connect(ws_url) as ws:
        started = time.monotonic()
        await ws.send_json({"type": "synth", "text": text, "lang": "ko", "audio": True})
        heard = None
        async for message in ws:
            if message.type == aiohttp.WSMsgType.BINARY and heard is None:
                heard = time.monotonic() - started
            elif message.type == aiohttp.WSMsgType.TEXT and json.loads(message.data).get("event") == "done":
                break
        return float("nan") if heard is None else heard


async def batch_running(session: aiohttp.ClientSession, url: str, oks: list[int]) -> None:
    """The lecture batch, its `ok` sections counted (the job's id first)."""
    body = {"sections": LECTURE["sections"], "lang": "ko", "stream": True}
    async with session.post(url + "/synth_batch", json=body) as answer:
        async for line in answer.content:
            event = json.loads(line)
            if event.get("event") == "start":
                oks.insert(0, event["job_id"])
            if event.get("status") == "ok":
                oks.append(event["idx"])


async def behind_a_paused_tab(session: aiohttp.ClientSession, ws_url: str, previews: int) -> list[float]:
    paused = await session.ws_connect(ws_url)
    await paused.send_json({"type": "synth", "text": LONG_TEXT, "lang": "ko", "audio": True})
    while (await paused.receive()).type != aiohttp.WSMsgType.BINARY:
        pass  # its first frame; then it reads nothing more
    times = [await first_audio(session, ws_url, SENTENCES[13 + i]) for i in range(previews)]
    await paused.close()
    return times


async def behind_a_long_synth(
    session: aiohttp.ClientSession, url: str, ws_url: str, previews: int
) -> list[float]:
    synth = asyncio.ensure_future(session.post(url + "/synth", json={"text": LONG_TEXT, "lang": "ko"}))
    speech_body = {"model": "tts-1", "input": LONG_TEXT, "voice": "alloy", "response_format": "pcm"}
    speech = asyncio.ensure_future(session.post(url + "/v1/audio/speech", json=speech_body))
    answer = await speech
    read_whole = asyncio.ensure_future(answer.read())
    times = [await first_audio(session, ws_url, SENTENCES[20 + i]) for i in range(previews)]
    await read_whole
    (await synth).release()
    return times


async def main(args: argparse.Namespace) -> None:
    ws_url = args.url.replace("http", "ws", 1) + "/ws"
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as session:
        oks: list = []
        batch = asyncio.ensure_future(batch_running(session, args.url, oks))
        while len(oks) < 2:
            await asyncio.sleep(0.05)
        for name, times in (
            ("behind a paused tab's long /ws", await behind_a_paused_tab(session, ws_url, args.previews)),
            (
                "behind a long /synth + OpenAI",
                await behind_a_long_synth(session, args.url, ws_url, args.previews),
            ),
        ):
            print(f"{name:34s} first audio s: " + " ".join(f"{t:6.2f}" for t in times), flush=True)
        await session.delete(f"{args.url}/jobs/{oks[0]}")
        await batch
        print(f"batch sections ok before its cancel: {len(oks) - 1}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:7768", help="the worker to measure")
    parser.add_argument("--previews", type=int, default=3, help="short /ws previews in each situation")
    asyncio.run(main(parser.parse_args()))
