"""One benchmark request over /ws or HTTP /synth, timed the way a listener experiences it.

All times are seconds on the event loop's monotonic clock, measured from the request's *scheduled*
moment (open-loop: a late start counts against the worker's figures as it would for a real caller,
and the scheduling lag is reported on its own so that a slow load generator is visible).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import aiohttp

from npu_worker.audio import OnsetWatch, from_pcm16
from npu_worker.audio_decode import read_wav
from npu_worker.bench.bounded_body import bounded_text
from npu_worker.bench.onset import PlaybackTimeline, onset_of


@dataclass
class RequestRecord:
    """What one request measured; latencies in ms from the scheduled moment, None when not reached."""

    transport: str
    rate: float
    index: int
    text_idx: int
    scheduled_s: float
    sched_lag_ms: float | None = None
    ttfb_ms: float | None = None
    first_chunk_ms: float | None = None
    ttfa_ms: float | None = None
    leading_silence_ms: float | None = None
    e2e_ms: float | None = None
    audio_sec: float | None = None
    rtf: float | None = None
    underruns: int = 0
    underrun_ms: float = 0.0
    chunks: int = 0
    server_ttfa_ms: float | None = None
    cached: bool = False
    error: str | None = None
    timeout: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Listener:
    """Places PCM on the playback timeline as it arrives and finds its onset on the way, so that the
    work per frame stays small and nothing is left to do over the whole stream at its end: this runs
    on the event loop that timestamps every other request's frames."""

    t0: float
    sample_rate: int = 24000
    timeline: PlaybackTimeline | None = None
    watch: OnsetWatch | None = None
    chunks: int = 0
    _odd: bytes = b""  # a frame's last byte when it split a sample

    def pcm(self, arrival: float, data: bytes) -> None:
        if self.timeline is None or self.watch is None:
            self.timeline = PlaybackTimeline(self.sample_rate)
            self.watch = OnsetWatch(self.sample_rate)
        self.chunks += 1
        data = self._odd + data
        whole = len(data) - len(data) % 2
        self._odd = data[whole:]
        self.timeline.add(arrival, whole // 2)
        if self.watch.onset is None and whole:
            self.watch.feed(from_pcm16(data[:whole]))

    def finish(self, record: RequestRecord, sent_at: float, done_at: float) -> None:
        samples = self.timeline.samples if self.timeline else 0
        onset = self.watch.onset if self.watch else None
        fill_audio_figures(record, samples, onset, self.sample_rate, self.timeline, self.t0, sent_at, done_at)
        record.chunks = self.chunks


def fill_audio_figures(
    record: RequestRecord,
    samples: int,
    onset: int | None,
    sample_rate: int,
    timeline: PlaybackTimeline | None,
    t0: float,
    sent_at: float,
    done_at: float,
) -> None:
    """Figures of `samples` received, the audible onset at sample `onset` (None: none)."""
    record.e2e_ms = (done_at - t0) * 1000.0
    record.audio_sec = samples / sample_rate
    if samples:
        record.rtf = (done_at - sent_at) / record.audio_sec
    if timeline is None:
        return
    record.underruns = timeline.underruns
    record.underrun_ms = timeline.underrun_seconds * 1000.0
    if onset is not None:
        record.leading_silence_ms = onset / sample_rate * 1000.0
        record.ttfa_ms = (timeline.play_time(onset) - t0) * 1000.0


async def ws_request(
    session: aiohttp.ClientSession,
    base: str,
    text: str,
    params: dict[str, Any],
    record: RequestRecord,
    t0: float,
) -> None:
    """A preview over /ws: one connection, one `synth` message, PCM frames until `done`."""
    loop = asyncio.get_running_loop()
    listener = Listener(t0)
    over = False  # `done`, or a request-level refusal: anything else ending the stream cut it short
    async with session.ws_connect(base + "/ws", autoping=True) as ws:
        await ws.send_str(json.dumps({"type": "synth", "text": text, "audio": True, **params}))
        sent_at = loop.time()
        async for message in ws:  # ends quietly, without a message, when the worker closes the socket
            now = loop.time()
            if record.ttfb_ms is None:
                record.ttfb_ms = (now - t0) * 1000.0
            if message.type == aiohttp.WSMsgType.BINARY:
                if record.first_chunk_ms is None:
                    record.first_chunk_ms = (now - t0) * 1000.0
                listener.pcm(now, message.data)
            elif message.type == aiohttp.WSMsgType.TEXT:
                if over := _ws_event(json_object(message.data), record, listener):
                    break
            else:  # an ERROR message: the connection failed
                record.error = f"socket failed before done ({message.type.name}: {message.data})"
                break
        if not over:
            record.error = record.error or f"socket closed before done (close code {ws.close_code})"
        listener.finish(record, sent_at, loop.time())
        if not listener.chunks and record.error is None:
            record.error = "NoAudio: the request ended without any PCM frame"


def json_object(text: str) -> dict[str, Any]:
    """An event or answer from the worker; ValueError (the request's error) for anything but an object."""
    try:
        value = json.loads(text)
    except RecursionError:
        value = None
    if not isinstance(value, dict):
        raise ValueError(f"the worker sent what is not a JSON object: {text[:80]!r}")
    return value


def figure(value: Any) -> float | None:
    """A number the worker reports, or None for anything else (it would end the run's summary)."""
    number = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if number else None


def sample_rate(value: Any) -> int:
    """A rate the worker announced; ValueError unless it is one audio can have (figures divide by it)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 8000 <= value <= 192000:
        raise ValueError(f"the worker announced a sample rate of {value!r}")
    return value


def _ws_event(event: dict[str, Any], record: RequestRecord, listener: Listener) -> bool:
    """Apply one JSON event; True when the request is over (its `done`, or an `error` without `idx`:
    the worker refused the request, and waiting for a `done` would turn its error into a timeout)."""
    kind = event.get("event")
    if kind == "audio_start":
        listener.sample_rate = sample_rate(event.get("sample_rate", listener.sample_rate))
    elif kind == "first_audio":
        record.server_ttfa_ms = figure(event.get("ttfa_ms"))
    elif kind == "progress" and event.get("cached"):
        record.cached = True
    elif kind == "error":
        record.error = str(event.get("error") or "an error event without a message")  # "" read as success
        return event.get("idx") is None  # a request-level refusal: no `done` follows
    return kind == "done"


async def http_request(
    session: aiohttp.ClientSession,
    base: str,
    text: str,
    params: dict[str, Any],
    record: RequestRecord,
    t0: float,
    out_dir: str,
) -> None:
    """POST /synth into a wav under `out_dir`: the whole file is the first playable chunk, heard on arrival."""
    loop = asyncio.get_running_loop()
    path = os.path.join(out_dir, f"{record.transport}-{record.rate:g}-{record.index}.wav")
    try:
        sent_at = loop.time()
        body = {"text": text, "output_path": path, **params}
        async with session.post(base + "/synth", json=body) as response:
            record.ttfb_ms = (loop.time() - t0) * 1000.0
            answer = json_object(await bounded_text(response, "POST /synth"))
        done_at = loop.time()
        if response.status != 200 or answer.get("status") != "ok":
            record.error = str(answer.get("error") or f"HTTP {response.status}")
            return
        record.cached = bool(answer.get("cached"))
        samples, rate = await asyncio.to_thread(lambda: read_wav(Path(path).read_bytes()))
        record.first_chunk_ms = (done_at - t0) * 1000.0
        timeline = PlaybackTimeline(rate)
        timeline.add(done_at, samples.size)
        fill_audio_figures(
            record, samples.size, onset_of(samples, rate), rate, timeline, t0, sent_at, done_at
        )
        record.chunks = 1
    finally:
        await asyncio.to_thread(lambda: Path(path).unlink(missing_ok=True))
