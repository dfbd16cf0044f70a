"""The model's sessions as the engine calls them: the text encoder, the decoder with dynamic shapes, and
the decoder as fixed-shape sessions, one per frame-count bucket (`BucketedDecoder`: inputs padded up to
the bucket, the output cut back), which QNN needs. runtime.py opens them on the chosen device.
"""

from __future__ import annotations

import bisect
from typing import Any

import numpy as np

from npu_worker.engine.base import DecoderCalls
from npu_worker.protocol import ModelLoadError

# Five graphs: the lecture's segments (≈ 200-2000 frames) cost 1.22x their frames in the decoder (1.21x
# with the eight buckets used before); padding within 0.5 % depends on the model (benchmarks/PADDING.md).
# 2079 covers an 18 s segment with a 4 s prompt; the planner cuts segments to fit the largest bucket
# (engine.bucket_tokens): only a prompt that leaves it less than a shortest segment (0.8 s) sends calls
# to the CPU overflow decoder.
DEFAULT_BUCKETS = (383, 767, 1151, 1535, 2079)
PHASE = 4  # 2x and 4x downsampling stacks: front padding in multiples of 4 keeps every frame's group
# The largest bucket: the positional encoding has no length limit, but every attention layer holds
# heads × T × T scores (268 MB per layer in fp32 at 4095 frames with the real model's 4 heads) and
# compiling a bucket runs the whole graph on a zero input of that length; 4095 frames (43.7 s) is twice
# the largest default bucket. Larger values (`--buckets 999999999`) only ran the machine out of memory.
MAX_BUCKET = 4095


def _scalar(session_input: Any, value: float | int, dtype: type) -> np.ndarray:
    """Scalars as rank-0 or shape-[1] tensors, whichever the graph declares."""
    shape = session_input.shape
    return np.array([value] if shape and len(shape) == 1 else value, dtype=dtype)


class TextEncoder:
    def __init__(self, session: Any) -> None:
        self.session = session
        self.inputs = session.get_inputs()

    def __call__(
        self, tokens: list[int], prompt_tokens: list[int], prompt_frames: int, speed: float
    ) -> np.ndarray:
        feed = {
            self.inputs[0].name: np.array([tokens], dtype=np.int64),
            self.inputs[1].name: np.array([prompt_tokens], dtype=np.int64),
            self.inputs[2].name: _scalar(self.inputs[2], prompt_frames, np.int64),
            self.inputs[3].name: _scalar(self.inputs[3], speed, np.float32),
        }
        return self.session.run(None, feed)[0]


class Decoder:
    """One dynamic-shape decoder session: v = decoder(t, x, text_condition, speech_condition)."""

    def __init__(self, session: Any, guidance_scale: float = 1.0) -> None:
        self.session = session
        self.inputs = session.get_inputs()
        self.guidance_scale = guidance_scale

    def set_guidance_scale(self, value: float) -> None:
        self.guidance_scale = value

    def feed(self, t: float, x: np.ndarray, text: np.ndarray, speech: np.ndarray) -> dict[str, np.ndarray]:
        """The session's inputs for one call (also what calibration records: calibration.py)."""
        return {
            self.inputs[0].name: _scalar(self.inputs[0], t, np.float32),
            self.inputs[1].name: x,
            self.inputs[2].name: text,
            self.inputs[3].name: speech,
            self.inputs[4].name: _scalar(self.inputs[4], self.guidance_scale, np.float32),
        }

    def __call__(self, t: float, x: np.ndarray, text: np.ndarray, speech: np.ndarray) -> np.ndarray:
        return self.session.run(None, self.feed(t, x, text, speech))[0]

    def aligned_frames(self, frames: int) -> int:
        """The frame count to generate for a segment of `frames` (any count suits a dynamic session)."""
        return frames


class BucketedDecoder:
    """Fixed-shape decoder sessions (one per bucket of frames), padding inputs and cutting outputs.

    The exported decoder has no padding mask, so pad frames take part in attention and convolutions.
    Padding goes mostly in front, in multiples of `phase` (4: the largest downsampling factor, which the
    others divide), as copies of the first frames, i.e. of the prompt: every real frame keeps its place in the
    downsampling groups and the model sees what looks like a longer prompt. The remainder (< `phase`)
    goes behind as copies of the last frame, which is what the downsampling itself pads with; the
    engine avoids it by generating up to phase − 1 more frames (`aligned_frames`), since a frame
    behind the segment can change its last downsampled group. Frames beyond the largest bucket go to `overflow` (a dynamic CPU decoder).
    """

    def __init__(
        self,
        sessions: dict[int, Any],
        overflow: Decoder | None,
        guidance_scale: float = 1.0,
        phase: int = PHASE,
    ) -> None:
        check_buckets(tuple(sessions))
        self.buckets = sorted(sessions)
        self.decoders = {size: Decoder(s, guidance_scale) for size, s in sessions.items()}
        self.overflow = overflow
        self.phase = phase
        # calls finished (a stopped one is redone), read by /health from another thread: total first
        self.calls_run = 0
        self.overflow_calls_run = 0

    def set_guidance_scale(self, value: float) -> None:
        for decoder in [*self.decoders.values(), *([self.overflow] if self.overflow else [])]:
            decoder.set_guidance_scale(value)

    def bucket_for(self, frames: int) -> int | None:
        index = bisect.bisect_left(self.buckets, frames)
        return self.buckets[index] if index < len(self.buckets) else None

    def aligned_frames(self, frames: int) -> int:
        """`frames` rounded up so that all padding to its bucket goes in front (≤ phase − 1 more)."""
        size = self.bucket_for(frames)
        return frames if size is None else frames + padding(frames, size, self.phase)[1]

    def __call__(self, t: float, x: np.ndarray, text: np.ndarray, speech: np.ndarray) -> np.ndarray:
        frames = x.shape[1]
        size = self.bucket_for(frames)
        if size is None:
            if self.overflow is None:
                raise ModelLoadError(f"{frames} frames exceed the largest bucket {self.buckets[-1]}")
            velocity = self.overflow(t, x, text, speech)
            self.calls_run += 1
            self.overflow_calls_run += 1
            return velocity
        front, back = padding(frames, size, self.phase)
        inputs = [pad_frames(a, front, back) for a in (x, text, speech)]
        velocity = self.decoders[size](t, *inputs)[:, front : front + frames]
        self.calls_run += 1
        return velocity

    def call_counts(self) -> DecoderCalls:
        """The counts as another thread may read them: the overflow's first, so it never exceeds the total."""
        cpu_overflow = self.overflow_calls_run
        return DecoderCalls(self.calls_run, cpu_overflow)


def padding(frames: int, size: int, phase: int = PHASE) -> tuple[int, int]:
    """(front, back) pad frames taking `frames` to `size`: front a multiple of `phase`, back < phase."""
    extra = size - frames
    back = extra % phase if phase > 1 else extra
    return extra - back, back


def pad_frames(values: np.ndarray, front: int, back: int) -> np.ndarray:
    """(1, F, dim) → (1, front + F + back, dim): copies of the first frames before, of the last after."""
    if not front and not back:
        return values
    frames = values.shape[1]
    index = np.concatenate([np.arange(front) % frames, np.arange(frames), np.full(back, frames - 1)])
    return np.ascontiguousarray(values[:, index])


def check_buckets(buckets: tuple[int, ...]) -> tuple[int, ...]:
    """Buckets must be odd: at an even frame count the 2x/4x downsampling pads zero rows, and those
    empty tensors are folded wrongly (onnxruntime's ExpandElimination, onnxslim at full size) or
    rejected (QNN); at odd counts every stack pads at least one row. At most MAX_BUCKET frames."""
    even = [size for size in buckets if size % 2 == 0]
    if not buckets or even or min(buckets) < 1 or max(buckets) > MAX_BUCKET:
        raise ModelLoadError(
            f"decoder buckets must be odd positive frame counts up to {MAX_BUCKET}, got {list(buckets)}"
        )
    return tuple(sorted(buckets))
