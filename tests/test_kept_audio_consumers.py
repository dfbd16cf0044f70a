"""A listen-only section keeps no chunks (`Delivery`'s `keeps`, stop 55); every section something reads in
one piece still keeps them: a `/ws` request's wav (`output_path`), the cache's entry of it and what the cache
serves again. Each file holds exactly the PCM the listener heard (the first section's trimmed samples
included), and the `ok` says its length, as before the cut: a `keeps` that forgot a consumer wrote a wav of
no samples (or cached one) while the listener heard the section whole."""

from __future__ import annotations

from pathlib import Path

from npu_worker.audio import to_pcm16
from npu_worker.audio_decode import read_wav
from tests.test_ws_support import Transcript, connect, run_request
from tests.tone_engine import ToneEngine

RATE = 24000


def request(tmp_path: Path, name: str, files: tuple[int, ...]) -> dict:
    texts = ["The first section, after some silence.", "A second one, listened to only.", "A third."]
    sections = [
        {"idx": i, "text": text, **({"output_path": str(tmp_path / f"{name}{i}.wav")} if i in files else {})}
        for i, text in enumerate(texts)
    ]
    return {"type": "synth_batch", "sections": sections}


def file_pcm(path: Path) -> bytes:
    samples, rate = read_wav(path.read_bytes())
    assert rate == RATE
    return to_pcm16(samples).tobytes()


def oks(heard: Transcript) -> dict[int, dict]:
    return {e["idx"]: e for e in heard.events("progress") if e["status"] == "ok"}


async def test_a_ws_requests_files_hold_what_its_listener_heard(worker, tmp_path) -> None:
    client = await worker(ToneEngine(chunk_seconds=0.05, leading_silence=0.3))
    ws = await connect(client)
    try:
        heard = await run_request(ws, request(tmp_path, "s", files=(0, 2)))
    finally:
        await ws.close()
    assert heard.done["ok_count"] == 3
    for idx in (0, 2):
        pcm = heard.section_pcm(idx)
        assert len(pcm) > 0.2 * RATE * 2 and file_pcm(tmp_path / f"s{idx}.wav") == pcm
        assert oks(heard)[idx]["duration_sec"] == round(len(pcm) / 2 / RATE, 3)
    assert len(heard.section_pcm(0)) < 0.3 * RATE * 2 + len(
        heard.section_pcm(1)
    )  # (trimmed: less than the silence)
    assert not (tmp_path / "s1.wav").exists() and "wav_path" not in oks(heard)[1]


async def test_the_cache_keeps_a_ws_requests_file_and_serves_it_whole_to_a_listener(worker, tmp_path) -> None:
    client = await worker(ToneEngine(chunk_seconds=0.05, leading_silence=0.3), cache_max_bytes=1 << 24)
    ws = await connect(client)
    try:
        made = await run_request(ws, request(tmp_path, "made", files=(0, 1, 2)))
        listened = await run_request(ws, request(tmp_path, "listened", files=()))
        again = await run_request(ws, request(tmp_path, "again", files=(0, 1, 2)))
    finally:
        await ws.close()
    for transcript in (made, listened, again):
        assert transcript.done["ok_count"] == 3
    for idx in range(3):
        pcm = made.section_pcm(idx)
        assert len(pcm) > 0.05 * RATE * 2 and file_pcm(tmp_path / f"made{idx}.wav") == pcm
        assert listened.section_pcm(idx) == again.section_pcm(idx) == pcm  # served from the cache, whole
        assert (tmp_path / f"again{idx}.wav").read_bytes() == (tmp_path / f"made{idx}.wav").read_bytes()
        assert oks(listened)[idx]["cached"] is True and oks(again)[idx]["cached"] is True
        durations = {oks(t)[idx]["duration_sec"] for t in (made, listened, again)}
        assert durations == {round(len(pcm) / 2 / RATE, 3)}
