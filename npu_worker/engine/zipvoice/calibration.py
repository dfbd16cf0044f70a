"""The decoder inputs a static-quantised (QDQ) NPU decoder is calibrated on: what the engine really feeds it.

A QDQ graph fixes every activation's range before it runs, so the ranges must come from real calls: the
decoder sees pure noise at the first step and nearly finished speech at the last, with the reference
voice's features in `speech_condition`; random tensors give other ranges. So the engine itself, on the
CPU with the fp32 files and the configured reference voice, synthesises a text set, and the inputs of
every decoder call are kept, padded to their bucket exactly as the NPU's sessions get them
(`decoders.BucketedDecoder`). A seeded reservoir keeps at most `per_bucket` calls per bucket, so memory
and calibration time stay bounded however long the text set is; a bucket no text reached gets the calls
of the nearest smaller bucket padded up to it (more prompt copies in front, as the engine itself pads).
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.zipvoice import decoders
from npu_worker.engine.zipvoice.qdq import Feed
from npu_worker.protocol import WorkerError

log = logging.getLogger(__name__)

LECTURE = Path(__file__).resolve().parents[2] / "bench" / "lecture_ko_39.json"
# A few sentences per language the tokenizers speak, besides the Korean lecture: a text in a language
# the model or tokenizer cannot speak is skipped (and counted in the manifest), not fatal.
SENTENCES: tuple[tuple[str, str], ...] = (
    ("ko", "안녕하세요. 오늘은 날씨가 맑고 바람이 조금 붑니다."),
    ("ko", "질문이 있으시면 언제든지 손을 들어 주세요!"),
    ("ko", "3장에서는 행렬의 곱셈과 그 계산 비용을 살펴보겠습니다."),
    ("en", "Good morning. Today we look at how a neural network learns from data."),
    ("en", "Is the result correct? Let us check it step by step, with a small example."),
    ("zh", "大家好，今天我们来学习线性代数的基本概念。"),
    ("ja", "こんにちは。今日は機械学習の基礎について話します。"),
)


@dataclass(frozen=True)
class CalibrationText:
    text: str
    lang: str


def default_texts() -> list[CalibrationText]:
    """The bundled 39-section Korean lecture, then the sentences above."""
    return read_texts(LECTURE) + [CalibrationText(text, lang) for lang, text in SENTENCES]


def read_texts(path: Path) -> list[CalibrationText]:
    """A lecture file (`{"lang": ..., "sections": [{"text": ...}, ...]}`) or a list of
    `{"text": ..., "lang": ...}`; ValueError naming what is wrong."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read calibration texts {path}: {exc}") from exc
    except RecursionError:  # json's answer to `[[[[…` 200 000 deep: a traceback from `prepare`
        raise ValueError(f"cannot read calibration texts {path}: nested too deeply") from None
    if isinstance(data, dict) and isinstance(data.get("sections"), list):
        lang, items = data.get("lang", "ko"), data["sections"]
    elif isinstance(data, list):
        lang, items = "ko", data
    else:
        raise ValueError(f"{path}: expected a list of {{text, lang}} or a lecture with sections")
    texts = []
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"].strip():
            raise ValueError(f"{path}: item {index} has no text")
        item_lang = item.get("lang", lang)
        if not isinstance(item_lang, str):
            raise ValueError(f"{path}: item {index} has a lang that is not a string")
        if not _utf8(item["text"]) or not _utf8(item_lang):
            raise ValueError(
                f"{path}: item {index} holds a character UTF-8 cannot carry (a lone surrogate: JSON's \\ud800)"
            )
        texts.append(CalibrationText(item["text"], item_lang))
    if not texts:
        raise ValueError(f"{path}: no texts")
    return texts


def _utf8(text: str) -> bool:
    """Whether UTF-8 carries `text`: JSON's `\\ud800` escape reads as a lone surrogate, which espeak's
    child is never given (the text skipped after its minutes) and the manifest's digest failed on, a
    bare codec error from `prepare` once the whole calibration had run."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def texts_digest(texts: Iterable[CalibrationText]) -> str:
    digest = hashlib.sha256()
    for item in texts:
        digest.update(f"{item.lang}\0{item.text}\0".encode())
    return digest.hexdigest()


@dataclass
class Reservoir:
    """At most `limit` items, each seen item kept with equal probability (seeded: reproducible)."""

    limit: int
    rng: random.Random
    items: list[Feed] = field(default_factory=list)
    seen: int = 0

    def offer(self, item: Feed) -> None:
        self.seen += 1
        if len(self.items) < self.limit:
            self.items.append(item)
            return
        slot = self.rng.randrange(self.seen)
        if slot < self.limit:
            self.items[slot] = item


class RecordingDecoder(decoders.Decoder):
    """A bucket's decoder that keeps a copy of what it is fed (already padded to the bucket)."""

    def __init__(self, session: Any, guidance_scale: float, reservoir: Reservoir) -> None:
        super().__init__(session, guidance_scale)
        self.reservoir = reservoir

    def __call__(self, t: float, x: np.ndarray, text: np.ndarray, speech: np.ndarray) -> np.ndarray:
        feed = self.feed(t, x, text, speech)
        self.reservoir.offer({name: np.array(value, copy=True) for name, value in feed.items()})
        return self.session.run(None, feed)[0]


@dataclass
class Recording:
    """Calibration feeds per bucket plus what they came from (for the manifest)."""

    feeds: dict[int, list[Feed]]
    calls: dict[int, int]  # decoder calls seen per bucket
    texts: int
    skipped: list[str]
    seconds: float
    borrowed: dict[int, int] = field(default_factory=dict)  # bucket → the smaller bucket it was filled from

    def summary(self) -> dict[str, Any]:
        return {
            "texts": self.texts,
            "skipped": self.skipped,
            "decoder_calls": {str(size): count for size, count in self.calls.items()},
            "kept": {str(size): len(feeds) for size, feeds in self.feeds.items()},
            "filled_from_smaller_bucket": {str(size): src for size, src in self.borrowed.items()},
            "seconds": round(self.seconds, 1),
        }


def record(
    engine: Any,
    buckets: tuple[int, ...],
    texts: list[CalibrationText],
    per_bucket: int,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> Recording:
    """Synthesise `texts` with a loaded CPU `engine` (dynamic decoder) and keep each bucket's decoder
    inputs; the engine's decoder is bucketed for the run (so frame counts align as on the NPU)."""
    models = engine.models
    dynamic = models.decoder
    if not isinstance(dynamic, decoders.Decoder):
        raise ValueError("calibration records through a dynamic CPU decoder")
    rng = random.Random(seed)
    reservoirs = {size: Reservoir(per_bucket, rng) for size in buckets}
    bucketed = decoders.BucketedDecoder({size: dynamic.session for size in buckets}, dynamic)
    bucketed.decoders = {
        size: RecordingDecoder(dynamic.session, engine.guidance_scale, reservoirs[size]) for size in buckets
    }
    bucketed.set_guidance_scale(engine.guidance_scale)
    models.decoder = bucketed
    started = time.monotonic()
    skipped = []
    try:
        for index, item in enumerate(texts):
            request = SynthesisRequest(text=item.text, lang=item.lang, seed=seed + index)
            try:
                for _ in engine.stream(request):
                    pass
            except WorkerError as exc:  # a language the tokenizer or model cannot speak
                skipped.append(f"{item.lang}: {exc}")
                log.info("calibration text %d skipped: %s", index, exc)
            if progress is not None and (index + 1 == len(texts) or (index + 1) % 5 == 0):
                done = time.monotonic() - started
                left = done / (index + 1) * (len(texts) - index - 1)
                progress(f"calibration: {index + 1}/{len(texts)} texts synthesised; about {left:.0f} s left")
    finally:
        models.decoder = dynamic
    feeds = {size: reservoirs[size].items for size in buckets}
    recording = Recording(
        feeds,
        {size: reservoirs[size].seen for size in buckets},
        len(texts),
        skipped,
        time.monotonic() - started,
    )
    _fill_empty_buckets(recording, buckets)
    return recording


def _fill_empty_buckets(recording: Recording, buckets: tuple[int, ...]) -> None:
    """A bucket no call reached takes the nearest smaller bucket's calls, padded up to its size."""
    for index, size in enumerate(buckets):
        if recording.feeds[size]:
            continue
        donors = [smaller for smaller in reversed(buckets[:index]) if recording.feeds[smaller]]
        if not donors:
            continue
        donor = donors[0]
        recording.feeds[size] = [_pad_feed(feed, size) for feed in recording.feeds[donor]]
        recording.borrowed[size] = donor
    empty = [size for size in buckets if not recording.feeds[size]]
    if empty:
        raise ValueError(
            f"no decoder call reached bucket(s) {empty} or a smaller one: the calibration texts are "
            "too short or unspeakable for this model"
        )


def _pad_feed(feed: Feed, size: int) -> Feed:
    padded = {}
    for name, value in feed.items():
        if value.ndim == 3:
            front, back = decoders.padding(value.shape[1], size)
            value = decoders.pad_frames(value, front, back)
        padded[name] = value
    return padded
