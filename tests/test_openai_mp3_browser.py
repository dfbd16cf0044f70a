"""A page in Chromium reads the default mp3 as it now streams (constant-bitrate, its first frame never
filled with the length): Web Audio decodes all of it, and an `<audio>` element states its whole
length (the same stream written VBR, its length frame unfilled, was stated 1.95 s of its 2.09)."""

from __future__ import annotations

from typing import Any

import pytest

from npu_worker.config import Settings
from npu_worker.openai_compat.formats import available_formats
from tests.browser_support import chromium, require_chromium, serve_worker
from tests.openai_support import RATE
from tests.test_dns_rebinding import until_loaded
from tests.tone_engine import ToneEngine

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif("mp3" not in available_formats(), reason="this libsndfile has no mp3"),
]

SPOKEN_SECONDS = 2.0  # "가" × 100 at the tone engine's 0.02 s a character
# What a stream keeps past the spoken audio: the encoder's delay and padding and the unfilled first
# frame, a few 576-sample frames (test_openai_mp3_stream.py).
EXTRA_SECONDS = 6 * 576 / RATE

READ = """async ([body, rate]) => {
    const response = await fetch('/v1/audio/speech', {
        method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)});
    const data = await response.arrayBuffer();
    const decoded = await new OfflineAudioContext(1, 1, rate).decodeAudioData(data.slice(0));
    let peak = 0;
    for (const sample of decoded.getChannelData(0)) peak = Math.max(peak, Math.abs(sample));
    const element = new Audio(URL.createObjectURL(new Blob([data], {type: 'audio/mpeg'})));
    const stated = await new Promise((resolve, reject) => {
        element.onloadedmetadata = () => resolve(element.duration);
        element.onerror = () => reject(new Error('the <audio> element refused it'));
    });
    return {status: response.status, type: response.headers.get('content-type'),
            decoded: decoded.duration, peak, stated};
}"""


def test_a_page_reads_the_whole_streamed_mp3(settings: Settings) -> None:
    require_chromium()
    with serve_worker(settings, ToneEngine()) as worker, chromium() as browser:
        until_loaded(worker)
        page = browser.new_page()
        page.goto(f"{worker.url}health")  # a page of the worker's own origin
        read: dict[str, Any] = page.evaluate(READ, [{"input": "가" * 100, "voice": "default"}, RATE])
    assert (read["status"], read["type"]) == (200, "audio/mpeg"), read
    for length in (read["decoded"], read["stated"]):
        assert SPOKEN_SECONDS - 0.01 <= length <= SPOKEN_SECONDS + EXTRA_SECONDS + 0.05, read
    assert read["peak"] > 0.1, read
