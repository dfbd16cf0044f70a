"""The decoder's cost per sampling step against frame count, and the segment length it makes cheapest.

One decoder call costs about `a + b·N + c·N²` for N frames (attention over all frames gives the N² term),
and every call carries the prompt's P frames, so a segment of n generated frames costs `t(P + n) / n` per
frame. That is smallest at `n* = sqrt(P² + (a + b·P) / c)`: shorter segments pay the prompt and the
fixed cost too often, longer ones pay the quadratic term. The coefficients below are least-squares fits
of the CPU time of one call of the real ZipVoice-Distill decoder structure, 2 threads
(benchmarks/decoder_cost_curve.py, benchmarks/DECODER_COST.md); only their ratios matter here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class DecoderCost:
    a: float  # seconds per call
    b: float  # seconds per frame
    c: float  # seconds per frame²

    def call_seconds(self, frames: float) -> float:
        return self.a + self.b * frames + self.c * frames * frames


# CPU seconds of one call of the decoder as the engine opens it (Swoosh guards rewritten), best of 5,
# frames 100-1800, idle VM (benchmarks/results/decoder_cost_curve_idle_2026-12-02.json; the first fit, of the file as
# exported on a loaded VM, put the cheapest int8 segment at 7.6 s for a 218-frame prompt, this one 7.8 s).
MEASURED = {
    "int8": DecoderCost(a=0.0494, b=4.65e-4, c=3.13e-7),
    "fp32": DecoderCost(a=0.0389, b=1.272e-3, c=2.66e-7),
}
MAX_SEGMENT_SECONDS = 18.0  # the largest default decoder bucket (2079 frames) holds 18 s + a 4 s prompt


def segment_count(precision: str, prompt_frames: int, frames: float, max_frames: float) -> int:
    """How many equal segments make `frames` generated frames cheapest: the k minimising
    k · t(P + frames/k), with no segment over `max_frames`. One segment unless the text is long: with
    int8, splitting pays from about 11 s of speech on with a 218-frame prompt, 13 s with 323 frames."""
    model = MEASURED.get(precision, MEASURED["int8"])
    lowest = max(1, math.ceil(frames / max_frames))
    return min(range(lowest, lowest + 16), key=lambda k: k * model.call_seconds(prompt_frames + frames / k))
