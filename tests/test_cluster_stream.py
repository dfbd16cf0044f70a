"""Streamed audio on a Redis queue: a `/ws` preview or an OpenAI speech request accepted by an `api` node
gets the PCM an engine node (another process) makes, as it is made, framed as on a local queue; closing
the socket stops the engine; an engine killed mid-section is taken over and the listener hears one
coherent section; the PCM streams in Redis are bounded and go away."""

from __future__ import annotations

import asyncio
import json
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import numpy as np
import pytest
import redis

from npu_worker.audio import from_pcm16
from npu_worker.jobs.cluster.keys import pcm_key
from npu_worker.jobs.cluster.pcm_follow import PcmFollow
from npu_worker.jobs.cluster.pcm_stream import PcmEntry, PcmPublisher
from npu_worker.jobs.cluster.store import RedisJobs
from npu_worker.jobs.model import AudioChunk, Job, LogEntry, Section
from npu_worker.protocol import Progress, SynthParams
from tests.cluster_support import Node, call, node_starter
from tests.redis_server import RedisServer
from tests.test_ws_support import AiohttpWs, Transcript, receive_until_done
from tests.timing import seconds
from tests.tone_engine import ToneEngine

pytestmark = pytest.mark.allow_blocking

RATE = 24000
SIZES = (960, 1920, 3840, 7680)  # the default schedule (40, 80, 160, 320 ms)


@pytest.fixture
def start_node(tmp_path: Path, redis_server: RedisServer) -> Iterator[Any]:
    yield from node_starter(tmp_path, redis_server)


def tone(text: str) -> np.ndarray:
    """What the worker processes' tone engine makes for `text`."""
    return ToneEngine().render(types.SimpleNamespace(text=text, speed_factor=1.0))  # type: ignore[arg-type]


def assert_heard(heard: np.ndarray, text: str) -> None:
    """One coherent section: the tone of `text` with only its leading silence trimmed (no part twice)."""
    made = tone(text)
    assert 0 < heard.size <= made.size and made.size - heard.size < RATE // 100
    assert np.abs(heard - made[made.size - heard.size :]).max() < 2e-4


def assert_schedule(transcript: Transcript, idxs: list[int]) -> None:
    """Frames follow the growing schedule over the request; a section's last frame may be shorter."""
    position = 0
    for idx in idxs:
        frames = [len(f) // 2 for f in transcript.section_frames(idx)]
        assert frames, f"section {idx} had no audio"
        for number, size in enumerate(frames):
            target = SIZES[min(position, len(SIZES) - 1)]
            assert size == target or (number == len(frames) - 1 and 0 < size < target), (idx, frames)
            position += 1


def section_ok(transcript: Transcript, idx: int) -> dict[str, Any]:
    return next(e for e in transcript.events("progress") if e["idx"] == idx and e["status"] == "ok")


async def open_ws(session: aiohttp.ClientSession, node: Node) -> AiohttpWs:
    return AiohttpWs(await session.ws_connect(f"ws://127.0.0.1:{node.port}/ws", autoclose=False))


async def receive_frames(ws: AiohttpWs, count: int, transcript: Transcript) -> None:
    while len(transcript.frames()) < count:
        transcript.items.append(await ws.receive())


def engines_running(*nodes: Node) -> list[Node]:
    return [node for node in nodes if call("GET", f"{node.base}/health")[1]["jobs_running"]]


def log_of(url: str, job_id: str) -> list[dict[str, Any]]:
    client = redis.Redis.from_url(url)
    try:
        return [json.loads(fields[b"e"]) for _, fields in client.xrange(f"npu:log:{job_id}")]
    finally:
        client.close()


async def test_a_ws_preview_through_an_api_node_streams_the_engine_nodes_pcm_as_it_is_made(start_node):
    start_node("engine", role="engine", delay=0.02)
    api = start_node("api", role="api")
    texts = ["the first section is a little longer than the rest of them", "second one", "third"]
    async with aiohttp.ClientSession() as session:
        ws = await open_ws(session, api)
        await ws.send_json(
            {"type": "synth_batch", "sections": [{"idx": i, "text": t} for i, t in enumerate(texts)]}
        )
        transcript, arrived = Transcript(), {}
        while not transcript.events("done"):
            item = await ws.receive()
            transcript.items.append(item)
            kind = "frame" if isinstance(item, bytes) else item["event"] + str(item.get("status", ""))
            arrived.setdefault(kind, time.monotonic())
        await ws.close()
    assert transcript.events("first_audio") and transcript.done["ok_count"] == 3
    assert arrived["progressok"] - arrived["frame"] > 0.3  # the first frame came while the engine worked
    assert_schedule(transcript, [0, 1, 2])
    for idx, text in enumerate(texts):
        heard = transcript.section_audio(idx)
        ok = section_ok(transcript, idx)
        assert abs(heard.size - ok["duration_sec"] * RATE) <= RATE // 2000  # ok's duration is in ms
        (end,) = [e for e in transcript.events("audio_end") if e["idx"] == idx]
        assert end["samples"] == heard.size
        assert_heard(heard, text)
    order = [(i["event"], i.get("idx"), i.get("status")) for i in transcript.items if isinstance(i, dict)]
    for idx in range(3):  # a section's audio, then its ok, then the next section, as on a local queue
        assert order.index(("audio_end", idx, None)) < order.index(("progress", idx, "ok"))
        if idx:
            assert order.index(("progress", idx - 1, "ok")) < order.index(("progress", idx, "synth"))
    status, body = call("GET", f"{api.base}/health")
    assert body["cluster"]["queue_depth"] == 0


async def test_the_openai_routes_speak_through_an_api_node(start_node):
    """One engine node and one api node for both OpenAI routes in turn (each its own request): the pair
    and its Redis are started once, not once per route."""
    start_node("engine", role="engine", delay=0.01)
    api = start_node("api", role="api")
    await check_the_openai_speech_route_streams_through_an_api_node(api)
    await check_the_openai_stream_socket_speaks_sentence_by_sentence_through_an_api_node(api)


async def check_the_openai_speech_route_streams_through_an_api_node(api: Any) -> None:
    text = "hello from the engine node"
    body = {"model": "tts-1", "input": text, "voice": "default", "response_format": "pcm"}
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{api.base}/v1/audio/speech", json=body) as response:
            assert response.status == 200, f"/v1/audio/speech through the api node: {response.status}"
            pcm = await response.read()
    assert_heard(from_pcm16(pcm), text)


async def check_the_openai_stream_socket_speaks_sentence_by_sentence_through_an_api_node(api: Any) -> None:
    sentences = ["The first sentence is here.", "A second one follows!", "End"]
    async with aiohttp.ClientSession() as session:
        ws = AiohttpWs(await session.ws_connect(f"ws://127.0.0.1:{api.port}/v1/audio/speech/stream"))
        for sentence in sentences:
            await ws.send_json({"type": "input.text", "text": sentence + " "})
        await ws.send_json({"type": "input.done"})
        items: list[dict[str, Any] | bytes] = []
        while not items or not (isinstance(items[-1], dict) and items[-1]["type"] == "session.done"):
            items.append(await ws.receive())
        await ws.close()
    events = [i for i in items if isinstance(i, dict)]
    assert [e["type"] for e in events if e["type"] in ("first_audio", "session.done")] == [
        "first_audio",
        "session.done",
    ], f"the stream socket's events: {events}"
    done = [e for e in events if e["type"] == "audio.done"]
    assert [e["sentence_index"] for e in done] == [0, 1, 2] and not any(e["error"] for e in done), done
    pcm, current = {}, None
    for item in items:
        if isinstance(item, bytes):
            pcm[current] += item
        elif item["type"] == "audio.start":
            current = item["sentence_index"]
            pcm[current] = b""
    for index, sentence in enumerate(sentences):
        assert len(pcm[index]) == done[index]["total_bytes"]
        assert_heard(from_pcm16(pcm[index]), sentence)


async def test_a_closed_socket_stops_its_section_and_a_finished_ones_pcm_stream_expires(
    start_node, redis_server
):
    """One engine node (50 ms a chunk) and one api node for two checks in turn (each its own job): the pair
    is started once, not once per check. The closed socket comes first; its job is cancelled, not left."""
    engine = start_node("engine", role="engine", delay=0.05)
    api = start_node("api", role="api")
    await check_closing_the_socket_mid_section_stops_it_on_the_engine_node(engine, api, redis_server)
    await check_pcm_streams_in_redis_expire_and_are_gone_after_done(api, redis_server)


async def check_closing_the_socket_mid_section_stops_it_on_the_engine_node(
    engine: Any, api: Any, redis_server: RedisServer
) -> None:
    async with aiohttp.ClientSession() as session:
        ws = await open_ws(session, api)
        await ws.send_json({"type": "synth", "text": "a long section " * 60})  # 18 s of audio, 360 chunks
        transcript = Transcript()
        await receive_frames(ws, 2, transcript)
        job_id = transcript.events("start")[0]["job_id"]
        assert engines_running(engine), "the engine node was not making the section"
        await ws.close()
    deadline = time.monotonic() + seconds(10)
    while engines_running(engine):
        assert time.monotonic() < deadline, "the engine node kept making the section"
        await asyncio.sleep(0.05)
    log = log_of(redis_server.url, job_id)
    assert log[-1]["event"] == "done" and log[-1]["cancelled"] is True, f"the closed socket's job: {log[-3:]}"
    assert not [e for e in log if e.get("status") == "ok"], (
        "the closed section was made whole"
    )  # stopped mid-section


async def test_a_ws_request_whose_job_redis_lost_is_told_so_not_left_silent(start_node, redis_server):
    """FLUSHALL (or an evicted key) mid-preview: the listener is let go without a `done`; the client
    gets `JobNotFound` and a 1011 close (the stream is no longer whole), not heartbeats forever."""
    start_node("engine", role="engine", delay=0.05)
    api = start_node("api", role="api")
    async with aiohttp.ClientSession() as session:
        ws = await session.ws_connect(f"ws://127.0.0.1:{api.port}/ws", autoclose=False)
        await ws.send_json({"type": "synth", "text": "a long section " * 12})  # 3.6 s of work
        async with asyncio.timeout(seconds(10)):
            while (message := await ws.receive()).type != aiohttp.WSMsgType.BINARY:
                pass
        assert redis_server.command("FLUSHALL").startswith(b"+OK")
        events = []
        async with asyncio.timeout(seconds(25)):  # the section's end on the engine, then a follower read
            while (message := await ws.receive()).type != aiohttp.WSMsgType.CLOSE:
                if message.type == aiohttp.WSMsgType.TEXT:
                    events.append(json.loads(message.data))
        assert message.data == aiohttp.WSCloseCode.INTERNAL_ERROR
        assert events[-1]["event"] == "error" and events[-1]["error"].startswith("JobNotFound: ")
        assert not [e for e in events if e["event"] == "done"]


async def test_an_engine_killed_mid_section_is_taken_over_and_the_listener_hears_one_section(start_node):
    first = start_node("one", role="engine", delay=0.04, claim_timeout=1.0)
    second = start_node("two", role="engine", delay=0.04, claim_timeout=1.0)
    api = start_node("api", role="api", claim_timeout=1.0)
    text = "a section that is cut by a crash " * 2  # 1.6 s of audio, 32 chunks of 40 ms work each
    async with aiohttp.ClientSession() as session:
        ws = await open_ws(session, api)
        await ws.send_json(
            {"type": "synth_batch", "sections": [{"idx": 0, "text": text}, {"idx": 1, "text": "after"}]}
        )
        transcript = Transcript()
        await receive_frames(ws, 3, transcript)
        (holder,) = engines_running(first, second)
        holder.kill()  # kill -9 mid-section
        await receive_until_done(ws, transcript)
        await ws.close()
    assert transcript.done["ok_count"] == 2 and not transcript.events("error")
    assert [e["idx"] for e in transcript.events("audio_start")] == [0, 1]
    assert len(transcript.events("first_audio")) == 1
    heard = transcript.section_audio(0)
    assert_heard(heard, text)
    assert abs(heard.size - section_ok(transcript, 0)["duration_sec"] * RATE) <= RATE // 2000
    assert_heard(transcript.section_audio(1), "after")
    assert_schedule(transcript, [0, 1])


async def check_pcm_streams_in_redis_expire_and_are_gone_after_done(
    api: Any, redis_server: RedisServer
) -> None:
    client = redis.Redis.from_url(redis_server.url)
    async with aiohttp.ClientSession() as session:
        ws = await open_ws(session, api)
        await ws.send_json({"type": "synth", "text": "a section to look at " * 3})
        transcript = Transcript()
        await receive_frames(ws, 1, transcript)
        key = pcm_key(transcript.events("start")[0]["job_id"])
        assert 0 < client.ttl(key) <= 300, f"the PCM stream's TTL: {client.ttl(key)}"
        await receive_until_done(ws, transcript)
        await ws.close()
    deadline = time.monotonic() + seconds(5)
    while client.exists(key):
        assert time.monotonic() < deadline, "the listener's node left the PCM stream behind"
        await asyncio.sleep(0.05)
    client.close()


async def test_a_pcm_stream_is_trimmed_to_its_bound(redis_server):
    jobs = RedisJobs(redis_server.url)
    publisher = PcmPublisher(jobs, maxlen=50, ttl=30)
    sender = publisher.start()
    chunk = AudioChunk(0, np.zeros(10, dtype=np.float32))
    for _ in range(1000):
        publisher.put(("bounded", 0, "attempt", chunk))
    await publisher.flushed()
    length = await jobs.redis.xlen(pcm_key("bounded"))
    assert 50 <= length < 200  # approximate trimming: whole nodes of the stream go
    assert 0 < await jobs.redis.ttl(pcm_key("bounded")) <= 30
    sender.cancel()
    await jobs.close()


# -- the listener's rules, without Redis -------------------------------------------------------------


def entry(number: int, idx: int, attempt: str, samples: np.ndarray | None, entry_id: int) -> PcmEntry:
    return PcmEntry(f"1-{entry_id}", idx, attempt, number, samples, None)


def job_of(sections: int) -> Job:
    return Job("j", SynthParams(), [Section(i, "x", None) for i in range(sections)])


def test_a_new_attempt_continues_where_the_lost_one_stopped_and_the_old_one_is_ignored():
    audio = np.arange(100, dtype=np.float32)
    follow = PcmFollow(job_of(2))
    out = follow.feed([entry(0, 0, "a", audio[:30], 1), entry(1, 0, "a", audio[30:60], 2)])
    out += follow.feed(
        [
            entry(0, 0, "b", audio[:40], 3),  # taken over: its first 60 samples were heard already
            entry(2, 0, "a", audio[60:90], 4),  # the old attempt, still talking: ignored
            entry(1, 0, "b", audio[40:100], 5),
            entry(2, 0, "b", None, 6),
        ]
    )
    assert np.array_equal(np.concatenate([c.samples for c in out]), audio)
    assert follow.open_pos == 1 and follow.closed_at == "1-6"


def test_repeated_entries_are_dropped_and_a_gap_is_reported_as_lost():
    follow = PcmFollow(job_of(1))
    one = np.ones(5, dtype=np.float32)
    assert len(follow.feed([entry(0, 0, "a", one, 1), entry(0, 0, "a", one, 2)])) == 1
    assert follow.feed([entry(3, 0, "a", one, 3)]) == [] and follow.lost


def test_a_sections_events_wait_for_its_audio():
    follow = PcmFollow(job_of(2))
    ok0, synth1 = LogEntry(3, Progress(0, "ok")), LogEntry(4, Progress(1, "synth"))
    assert follow.ready(LogEntry(2, Progress(0, "synth")))
    assert not follow.ready(ok0) and not follow.ready(synth1)
    follow.feed([entry(0, 0, "a", np.ones(4, dtype=np.float32), 1), entry(1, 0, "a", None, 2)])
    assert follow.ready(ok0) and follow.ready(synth1) and not follow.ready(LogEntry(5, Progress(1, "ok")))


# -- a `both` node's own listener: its engine's PCM without the Redis round trip --------------------


class Listener:
    """A subscriber as `Subscription` is one: what the follower publishes, in order."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.changed = asyncio.Event()

    def push(self, entry: LogEntry) -> None:
        self.items.append(entry.event.to_dict())
        self.changed.set()

    def push_audio(self, chunk: AudioChunk) -> None:
        self.items.append(np.array(chunk.samples))
        self.changed.set()

    def close(self) -> None:
        pass

    async def until(self, test: Any) -> None:
        while not test(self.items):
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), timeout=seconds(10))


async def test_a_listener_on_the_engines_own_node_has_each_chunk_before_redis_does_and_once(redis_server):
    from npu_worker.jobs.cluster.follower import Followers
    from npu_worker.protocol import Start

    jobs = RedisJobs(redis_server.url)
    job = Job("local1", SynthParams(), [Section(0, "x", None)], preview=True, stream_audio=True)
    await jobs.create(job, "n", Start(1, "b", "cpu", job.id, RATE), max_queue=100, window=0)
    job.next_seq = 2
    followers, listener = Followers(jobs, block_ms=200), Listener()
    job.subscribers.append(listener)
    followers.attach(job, audio=True)
    publisher = PcmPublisher(jobs)  # its sender is not started yet: nothing reaches Redis
    publisher.local = followers.local_pcm
    audio = np.arange(1, 301, dtype=np.float32)
    publisher.put((job.id, 0, "a", AudioChunk(0, audio[:100])))  # before `synth`: left to the stream
    assert listener.items == []
    await jobs.append(job.id, Progress(0, "synth"))
    await listener.until(lambda items: len(items) == 1)
    publisher.put((job.id, 0, "a", AudioChunk(0, audio[100:200])))  # not the next one: left too
    assert len(listener.items) == 1
    sender = publisher.start()  # the stream brings the first two; then the rest comes at once
    await listener.until(lambda items: len(items) == 3)
    publisher.put((job.id, 0, "a", AudioChunk(0, audio[200:])))
    assert len(listener.items) == 4 and await jobs.redis.xlen(pcm_key(job.id)) == 2
    publisher.put((job.id, 0, "a", None))
    await publisher.flushed()
    await jobs.final(job.id, 0, Progress(0, "ok"), ok=True, node="n", advance=False)
    await listener.until(lambda items: any(isinstance(i, dict) and i["event"] == "done" for i in items))
    heard = [i for i in listener.items if isinstance(i, np.ndarray)]
    assert np.array_equal(np.concatenate(heard), audio)  # every sample once, in order
    events = [(i["event"], i.get("status")) for i in listener.items if isinstance(i, dict)]
    assert events == [("progress", "synth"), ("progress", "ok"), ("done", None)]
    assert isinstance(listener.items[-3], np.ndarray)  # the audio, then its `ok`
    sender.cancel()
    await followers.close()
    await jobs.close()


def test_a_local_entry_is_taken_only_where_it_continues_what_was_passed_on():
    follow = PcmFollow(job_of(2))
    one = np.ones(5, dtype=np.float32)
    local = [PcmEntry("", 0, "a", n, one if n < 2 else None, None) for n in range(3)]
    assert follow.feed_local(PcmEntry("", 1, "a", 0, one, None)) == []  # not the open section
    assert follow.feed_local(local[1]) == []  # not the next number
    assert len(follow.feed_local(local[0])) == 1 and follow.cursor == "0-0"
    copies = [entry(0, 0, "a", one, 1), entry(1, 0, "a", one, 2)]
    assert follow.feed(copies[:1]) == [] and follow.cursor == "1-1"  # the copy: already passed on
    assert len(follow.feed(copies[1:])) == 1  # the stream went ahead: it decides
    assert follow.feed_local(local[1]) == [] and follow.feed_local(local[2]) == []
    assert follow.open_pos == 1 and follow.closed_at is None
    assert follow.feed_local(PcmEntry("", 1, "b", 0, one, None)) != [] and follow.open_pos == 1
    assert follow.feed([entry(2, 0, "a", None, 3)]) == [] and follow.closed_at == "1-3"
    assert not follow.lost
