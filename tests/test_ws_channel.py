"""GET /ws (PROTOCOL §6) on a real socket: events, PCM framing, chunk growth, gapless audio, trimming."""

from __future__ import annotations

import numpy as np
import pytest

from npu_worker.audio import audible_onset, from_pcm16, to_pcm16
from npu_worker.engine.base import SynthesisRequest
from tests.test_ws_support import CLIENT_KINDS, Transcript, batch, connect, run_request
from tests.tone_engine import ToneEngine

RATE = 24000
TEXTS = ("첫 번째 문장입니다.", "두 번째 문장은 조금 더 깁니다, 정말로.", "세 번째.")


@pytest.mark.parametrize("kind", CLIENT_KINDS)
async def test_three_section_request_streams_events_and_pcm_per_section(worker, kind):
    client = await worker()
    ws = await connect(client, kind)
    transcript = await run_request(ws, batch(*TEXTS))
    await ws.close()

    names = [item["event"] if isinstance(item, dict) else "pcm" for item in transcript.items]
    assert names[0] == "start" and names[-1] == "done"
    assert transcript.done["ok_count"] == 3 and transcript.done["cancelled"] is False
    section_events = [(e["event"], e.get("idx"), e.get("status")) for e in transcript.events() if "idx" in e]
    expected = []
    for idx in range(3):
        expected += [("progress", idx, "synth"), ("audio_start", idx, None)]
        expected += [("first_audio", 0, None)] if idx == 0 else []
        expected += [("audio_end", idx, None), ("progress", idx, "ok")]
    assert section_events == expected
    for idx in range(3):
        start = next(e for e in transcript.events("audio_start") if e["idx"] == idx)
        assert start == {
            "event": "audio_start",
            "idx": idx,
            "sample_rate": RATE,
            "format": "pcm_s16le",
            "channels": 1,
        }


@pytest.mark.parametrize("kind", CLIENT_KINDS)
async def test_audio_end_counts_the_samples_and_frames_received(worker, kind):
    client = await worker()
    ws = await connect(client, kind)
    transcript = await run_request(ws, batch(*TEXTS))
    await ws.close()
    for end in transcript.events("audio_end"):
        frames = transcript.section_frames(end["idx"])
        assert end["samples"] == len(b"".join(frames)) // 2 > 0
        assert end["chunks"] == len(frames)


async def test_chunk_sizes_grow_over_the_request_not_per_section(worker):
    client = await worker(ToneEngine(chunk_seconds=0.05), chunk_schedule_ms=(40.0, 80.0, 160.0, 320.0))
    ws = await connect(client)
    transcript = await run_request(ws, batch("가" * 40, "나" * 40, "다" * 40))
    await ws.close()
    sizes = [len(frame) // 2 for frame in transcript.frames()]
    assert sizes[:4] == [960, 1920, 3840, 7680]
    # Every frame is a full 320 ms frame afterwards, except the one that ends a section.
    section_ends = {
        len(transcript.section_frames(0)) - 1,
        len(transcript.section_frames(0)) + len(transcript.section_frames(1)) - 1,
    }
    assert all(
        size == 7680
        for i, size in enumerate(sizes[4:], start=4)
        if i not in section_ends and i != len(sizes) - 1
    )
    first_of_second_section = len(transcript.section_frames(0))
    assert sizes[first_of_second_section] > sizes[0]


async def test_each_section_is_exactly_the_engine_audio_without_gaps(worker):
    engine = ToneEngine(chunk_seconds=0.037)
    client = await worker(engine)
    ws = await connect(client, "websockets")
    transcript = await run_request(ws, batch(*TEXTS))
    await ws.close()
    for idx, text in enumerate(TEXTS):
        expected = to_pcm16(engine.render(SynthesisRequest(text))).astype("<i2").tobytes()
        assert transcript.section_pcm(idx) == expected


@pytest.mark.parametrize("kind", CLIENT_KINDS)
async def test_leading_silence_is_trimmed_to_at_most_10_ms(worker, kind):
    engine = ToneEngine(leading_silence=0.5)
    client = await worker(engine)
    ws = await connect(client, kind)
    transcript = await run_request(ws, batch("무음 뒤에 소리.", "둘째 문장."))
    await ws.close()
    first = transcript.section_audio(0)
    onset = audible_onset(first, RATE)
    assert onset is not None and onset * 1000 / RATE <= 10.0
    # Trimming only cuts the front: what is left is the tail of the engine's audio, sample for sample.
    engine_pcm = to_pcm16(engine.render(SynthesisRequest("무음 뒤에 소리."))).astype("<i2").tobytes()
    assert engine_pcm.endswith(transcript.section_pcm(0))
    # Later sections are not trimmed.
    second = to_pcm16(engine.render(SynthesisRequest("둘째 문장."))).astype("<i2").tobytes()
    assert transcript.section_pcm(1) == second


async def test_first_audio_is_sent_once_the_onset_is_known_and_times_the_frame_that_carries_it(worker):
    client = await worker(ToneEngine(leading_silence=0.3, chunk_seconds=0.01))
    ws = await connect(client)
    transcript = await run_request(ws, batch("소리.", "또 소리."))
    await ws.close()
    [first_audio] = transcript.events("first_audio")
    position = transcript.items.index(first_audio)
    assert isinstance(transcript.items[position - 1], bytes)
    sent_before = [i for i in transcript.items[:position] if isinstance(i, bytes)]
    # The engine thread found the onset once; `first_audio` follows the frame that carries it, which
    # is the first frame (leading silence trimmed to <= 10 ms) and the frame `ttfa_ms` times.
    onset = audible_onset(from_pcm16(transcript.section_pcm(0)), RATE)
    assert onset is not None and onset < len(sent_before[0]) // 2
    assert len(sent_before) == 1
    assert first_audio["idx"] == 0 and first_audio["ttfa_ms"] > 0


async def test_first_audio_waits_for_the_first_section_with_sound(worker):
    client = await worker(ToneEngine(leading_silence=0.2))
    ws = await connect(client)
    # Section 0 has no audio (an empty text is a section error); only section 1 is audible, and its
    # leading silence is not trimmed (trimming applies to the request's first section only).
    transcript = await run_request(ws, batch("   ", "들리는 문장."))
    await ws.close()
    [first_audio] = transcript.events("first_audio")
    assert first_audio["idx"] == 1
    position = transcript.items.index(first_audio)
    sent_before = b"".join(i for i in transcript.items[:position] if isinstance(i, bytes))
    assert len(sent_before) // 2 > 0.2 * RATE


async def test_audio_false_sends_events_only(worker):
    client = await worker()
    ws = await connect(client)
    transcript = await run_request(ws, {**batch(*TEXTS), "audio": False})
    await ws.close()
    assert transcript.frames() == []
    assert not transcript.events("audio_start") and not transcript.events("first_audio")
    assert transcript.done["ok_count"] == 3


async def test_synth_shorthand_is_a_batch_of_one_section(worker):
    client = await worker()
    ws = await connect(client)
    transcript = await run_request(ws, {"type": "synth", "text": "하나."})
    await ws.close()
    assert [e["idx"] for e in transcript.events("audio_end")] == [0]
    assert transcript.done["total"] == 1 and transcript.done["ok_count"] == 1


async def test_a_failing_section_is_an_error_event_and_the_request_goes_on(worker):
    client = await worker(ToneEngine(fail_on="BOOM"))
    ws = await connect(client)
    transcript: Transcript = await run_request(ws, batch("좋아.", "BOOM", "좋아 다시."))
    await ws.close()
    [error] = transcript.events("error")
    assert error["idx"] == 1 and error["error"].startswith("EngineError:")
    assert transcript.done["ok_count"] == 2 and transcript.done["fail_count"] == 1
    assert np.asarray([len(transcript.section_pcm(i)) for i in (0, 2)]).min() > 0
