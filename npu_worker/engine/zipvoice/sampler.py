"""Flow-matching sampling: the time grid, the frame count (with the speed fix) and the Euler loop.

The decoder is passed in as a callable, so this module is pure numpy and the tests pin its numbers
without any model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

from npu_worker.engine.base import Interrupted

T_SHIFT = 0.5
FEAT_SCALE = 0.1

# (t, x, text_condition, speech_condition) -> velocity, all (1, F, dim) but t.
Decoder = Callable[[float, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class SamplerDefaults:
    num_steps: int
    guidance_scale: float


# ZipVoice runs guidance inside the graph (two passes per step); Distill was trained for 3.0, one pass.
FULL_DEFAULTS = SamplerDefaults(num_steps=16, guidance_scale=1.0)
DISTILL_DEFAULTS = SamplerDefaults(num_steps=8, guidance_scale=3.0)


def time_grid(num_steps: int, t_shift: float = T_SHIFT) -> np.ndarray:
    """t_i = s·τ_i / (1 + (s − 1)·τ_i) over τ = linspace(0, 1, n + 1): small steps near noise."""
    tau = np.linspace(0.0, 1.0, num_steps + 1)
    return t_shift * tau / (1.0 + (t_shift - 1.0) * tau)


def encoder_speed(prompt_frames: int, prompt_tokens: int, target_tokens: int, speed: float) -> float:
    """The `speed` to feed the ONNX text encoder so it yields the PyTorch model's frame count.

    The exported encoder computes F = ceil(P/Np·(Np+Nt)/speed), dividing the prompt part by the speed
    too; with G = P·Nt/Np the PyTorch length is P + ceil(G/speed). Feeding speed' = (P+G)/(P+G/speed)
    makes both agree and keeps F ≥ P for any speed and any text length.
    """
    if speed == 1.0 or prompt_tokens <= 0:
        return float(speed)
    generated = prompt_frames * target_tokens / prompt_tokens
    return (prompt_frames + generated) / (prompt_frames + generated / speed)


def total_frames(prompt_frames: int, prompt_tokens: int, target_tokens: int, speed: float) -> int:
    """F (prompt included) the encoder produces when fed `encoder_speed(...)`."""
    generated = prompt_frames * target_tokens / prompt_tokens
    return prompt_frames + math.ceil(generated / speed - 1e-9)


def speed_for_frames(prompt_frames: int, prompt_tokens: int, target_tokens: int, frames: int) -> float:
    """The `speed` to feed the ONNX text encoder so it yields exactly `frames` (prompt included).

    The encoder computes ceil(P/Np·(Np+Nt)/speed); aiming at frames − 0.5 keeps float rounding in
    the graph away from the integer boundaries.
    """
    return prompt_frames * (prompt_tokens + target_tokens) / prompt_tokens / (frames - 0.5)


def naive_total_frames(prompt_frames: int, prompt_tokens: int, target_tokens: int, speed: float) -> int:
    """F of the exported encoder fed the raw speed (the quirk the fix avoids)."""
    return math.ceil(prompt_frames / prompt_tokens * (prompt_tokens + target_tokens) / speed)


def initial_noise(seed: int, frames: int, feat_dim: int) -> np.ndarray:
    """Start point x ~ N(0, 1), a pure function of the seed, frames and feat_dim."""
    return np.random.default_rng(seed).standard_normal((1, frames, feat_dim), dtype=np.float32)


def speech_condition(prompt_features: np.ndarray, frames: int) -> np.ndarray:
    """Prompt features (P, dim), already × feat_scale, zero-padded to (1, F, dim)."""
    condition = np.zeros((1, frames, prompt_features.shape[1]), dtype=np.float32)
    condition[0, : prompt_features.shape[0]] = prompt_features
    return condition


def euler_sample(*args: Any, **kwargs: Any) -> np.ndarray:
    """Integrate dx/dt = v(t, x) from noise to features; returns the generated frames (F − P, dim).
    `euler_steps` run to its end (same arguments)."""
    steps = euler_steps(*args, **kwargs)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def euler_steps(
    decoder: Decoder,
    text_condition: np.ndarray,
    prompt_features: np.ndarray,
    num_steps: int,
    seed: int,
    t_shift: float = T_SHIFT,
    on_step: Callable[[int], None] | None = None,
) -> Generator[int, None, np.ndarray]:
    """Integrate dx/dt = v(t, x) from noise to features one step at a time: yields the number of steps
    done after each decoder call (`on_step(i)` is called first) and returns the generated frames
    (F − P, dim). Between two steps the whole state (x, the step, the noise drawn at the start) lives
    in this generator, so a caller may pause it there and resume it later: same samples. A decoder
    call that raises `Interrupted` was stopped from outside: the count is yielded unchanged (a pause
    point) and the same step runs again on resumption, from the same x."""
    frames, feat_dim = text_condition.shape[1], text_condition.shape[2]
    grid = time_grid(num_steps, t_shift)
    x = initial_noise(seed, frames, feat_dim)
    condition = speech_condition(prompt_features, frames)
    step = 0
    while step < num_steps:
        try:
            velocity = decoder(float(grid[step]), x, text_condition, condition)
        except Interrupted:
            yield step
            continue
        x = x + velocity * np.float32(grid[step + 1] - grid[step])
        if on_step is not None:
            on_step(step)
        step += 1
        yield step
    return x[0, prompt_features.shape[0] :]
