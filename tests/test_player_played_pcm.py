"""What the player page plays, sample for sample, against `/synth`'s wav of the same text.

A real `npu-worker serve --port 0` (espeak) streams two Korean lecture sections to the page in headless
Chromium; a ScriptProcessor tapped onto the player's worklet output records what reaches the speakers.
A gap or a click at a chunk join (a dropped, repeated or reordered chunk, a join faded or padded) would
make that recording differ from the concatenated wavs `/synth` writes for the same texts.
"""

from __future__ import annotations

import base64
import json
import os
import urllib.request
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.player_support import LECTURE, choose_sections
from tests.serve_process import ServeProcess
from tests.timing import seconds

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = "window.npuPlayer.snapshot()"

# Every AudioWorkletNode the page connects to the speakers is also connected to a recorder.
TAP = """
window.playedChunks = [];
const connect = AudioNode.prototype.connect;
AudioNode.prototype.connect = function (target, ...rest) {
  if (target instanceof AudioDestinationNode && this instanceof AudioWorkletNode && !this.tapped) {
    this.tapped = true;
    const recorder = this.context.createScriptProcessor(4096, 1, 1);
    recorder.onaudioprocess = (e) => window.playedChunks.push(e.inputBuffer.getChannelData(0).slice());
    connect.call(this, recorder);
    connect.call(recorder, this.context.destination);
  }
  return connect.call(this, target, ...rest);
};
"""
# What was recorded, as the base64 of its float32 samples: handed over as a list of numbers (one JSON
# number a sample, ≈ 250 000 of them) it took 4.1 s of the test's wall (load 16-18, 2026-12-07). The
# recorder keeps each buffer as a Float32Array copy, not an Array of numbers made on the audio callback.
PLAYED = """() => {
  const all = new Float32Array(window.playedChunks.reduce((n, chunk) => n + chunk.length, 0));
  let at = 0;
  for (const chunk of window.playedChunks) { all.set(chunk, at); at += chunk.length; }
  const bytes = new Uint8Array(all.buffer);
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}"""


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[ServeProcess]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("NPU_WORKER_TOKEN", None)
    # No cache: /synth makes its wav anew rather than handing back the preview's audio.
    process = ServeProcess(
        ["--state-dir", str(tmp_path / "state"), "--output-roots", str(tmp_path), "--cache-max-bytes", "0"],
        env,
    )
    try:
        yield process
    finally:
        process.terminate_and_log(seconds(30))


def synth_wav(base: str, text: str, path: Path) -> np.ndarray:
    body = json.dumps({"text": text, "lang": "ko", "output_path": str(path)}).encode()
    request = urllib.request.Request(f"{base}/synth", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=seconds(60)) as response:
        assert json.loads(response.read())["status"] == "ok"
    with wave.open(str(path)) as wav:
        assert wav.getframerate() == 24000
        return np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2").astype(np.float32) / 32768


def test_two_korean_sections_play_exactly_as_synth_writes_them(
    browser: Any, worker: ServeProcess, tmp_path: Path
) -> None:
    # Sections 11 and 13 (a question, then two sentences in one section: 2.8 + 6.5 s of sound), their
    # chunk joins and the join between them. The page plays in real time: with sections 2-3 (149
    # characters) this test took 51.5 s of wall, with these 38.1 s (load 8-10, 2 cores, 2026-12-07);
    # its recording handed back as base64 (PLAYED), 38.2-38.5 → 28.6-32.0 s (load 14-18, same day).
    lecture = json.loads(LECTURE.read_text("utf-8"))["sections"]
    texts = [lecture[11]["text"], lecture[13]["text"]]
    context = browser.new_context()
    try:
        page = context.new_page()
        page.add_init_script(TAP)
        page.goto(f"{worker.base}/?rate=24000")  # a context at the stream's rate: no resampling
        page.wait_for_function(f"() => {SNAPSHOT}.worker.state === 'ready'")
        choose_sections(page, LECTURE, "11,13", 2)
        page.click("#play")
        page.wait_for_function(
            f"() => {{ const s = {SNAPSHOT}; return s.run && s.run.audioDrained; }}",
            timeout=seconds(90) * 1000,
        )
        # The recorder (a double-buffered ScriptProcessor of 4096 frames) hands the drain's last sample
        # to the page at most two buffers after it: three more, awaited, not a 500 ms sleep that a
        # loaded page's main thread can outlast (the context runs on after the drain: no pause).
        recorded = page.evaluate("window.playedChunks.length")
        page.wait_for_function(
            f"() => window.playedChunks.length >= {recorded + 3}", timeout=seconds(30) * 1000
        )
        state = page.evaluate(SNAPSHOT)
        played = np.frombuffer(base64.b64decode(page.evaluate(PLAYED)), dtype="<f4")
    finally:
        context.close()

    assert [s["state"] for s in state["sections"]] == ["done", "done"]
    wavs = [synth_wav(worker.base, text, tmp_path / f"s{i}.wav") for i, text in enumerate(texts)]
    expected = np.concatenate(wavs)
    # The stream's first section has its leading silence trimmed (to the audible onset's rule, docs/
    # protocol.md), never a sample of its sound; the rest of both sections is the wav's, sample for sample.
    lead_in = int(np.flatnonzero(wavs[0])[0])
    trimmed = len(expected) - state["run"]["receivedSamples"]
    assert 0 <= trimmed <= lead_in, f"{trimmed} samples fewer than the wavs, {lead_in} of lead-in"
    from_sound = expected[lead_in:]
    first_played = int(np.flatnonzero(played)[0])
    heard = played[first_played : first_played + len(from_sound)]
    assert len(heard) == len(from_sound), f"{len(from_sound) - len(heard)} samples never reached the output"
    differing = np.flatnonzero(np.abs(heard - from_sound) > 1 / 32768)
    assert differing.size == 0, (
        f"{differing.size} samples differ, the first at {differing[:5]} of {len(from_sound)}"
    )
    assert not np.any(played[first_played + len(from_sound) :]), "sound after the last section"
