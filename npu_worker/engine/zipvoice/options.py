"""What a ZipVoice engine is built from: model files, runtime choice and synthesis options, checked once.

Like sherpa-onnx's `OfflineTtsZipvoiceModelConfig` + `validate()`: the engine takes this one object,
never the server's settings, and `validate()` refuses a bad value with a message naming it before any
model is opened. The server maps its settings onto it (npu_worker/engine_options.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from npu_worker.engine import qnn_targets
from npu_worker.engine.base import Voice
from npu_worker.engine.providers import DEVICES, RuntimeConfig
from npu_worker.engine.zipvoice.cost import MAX_SEGMENT_SECONDS
from npu_worker.engine.zipvoice.prompt import PromptOptions
from npu_worker.engine.zipvoice.runtime import DEFAULT_BUCKETS
from npu_worker.engine.zipvoice.sampler import T_SHIFT
from npu_worker.engine.zipvoice.tokenizer import TOKENIZERS

MAX_PROMPT_SECONDS = 30.0  # ZipVoice recommends 1-3 s; a reference over 60 s is refused anyway

PRECISIONS = ("fp32", "int8")


@dataclass(frozen=True)
class ZipVoiceOptions:
    """Synthesis knobs; the defaults are the ones chosen from the decoder's cost curve
    (benchmarks/DECODER_COST.md) and used by the benchmarks."""

    t_shift: float = T_SHIFT
    first_segment_seconds: float = 1.6  # generated audio of an early first segment, at most
    first_segment_min_seconds: float = 0.8  # a shorter first sentence takes the next one along
    segment_seconds: float = 0.0  # generated audio of the other segments, at most (0: from cost.py's curve)
    first_segment_steps: int | None = None  # sampling steps of an early first segment (None: all)
    crossfade_ms: float = 100.0
    trim_edge_silence: bool = True  # cut quiet 10 ms chunks at the start and end of a request's audio
    vocoder_piece_frames: int = 188  # ≈ 2 s of audio per vocoder call
    buckets: tuple[int, ...] = DEFAULT_BUCKETS  # decoder frame buckets (QNN, --fixed-shapes)
    prompt: PromptOptions = field(default_factory=PromptOptions)

    def problems(self) -> list[str]:
        """Every value that cannot work, each as one sentence naming it."""
        found = []
        if not 0.0 < self.t_shift <= 1.0:
            found.append(f"t_shift must be in (0, 1], got {self.t_shift}")
        return found + self._segment_problems() + self._stitch_problems() + _prompt_problems(self.prompt)

    def _segment_problems(self) -> list[str]:
        """The segment lengths and the first segment's steps, each named by what sets it: `serve
        --first-segment-seconds 0` was told of the internal first_segment_min_seconds, which serve
        derives from it and no caller sets."""
        found = []
        later = self.segment_seconds or self.first_segment_seconds
        if not 0.0 < self.first_segment_seconds:  # NaN fails too
            found.append(
                f"first_segment_seconds (--first-segment-seconds) must be above 0, got {self.first_segment_seconds}"
            )
        elif not self.first_segment_seconds <= later:
            found.append(
                "segment lengths must satisfy first_segment_seconds (--first-segment-seconds) <= segment_seconds "
                f"(--segment-seconds; 0: from the cost curve), got {self.first_segment_seconds}, {self.segment_seconds}"
            )
        elif not 0.0 < self.first_segment_min_seconds <= self.first_segment_seconds:
            found.append(
                "first_segment_min_seconds must be in (0, first_segment_seconds], "
                f"got {self.first_segment_min_seconds}, {self.first_segment_seconds}"
            )
        if not 0 <= self.segment_seconds <= MAX_SEGMENT_SECONDS:  # NaN fails too
            found.append(
                f"segment_seconds (--segment-seconds) must be from 0 (from the cost curve) to {MAX_SEGMENT_SECONDS:g} (the "
                f"largest decoder bucket), got {self.segment_seconds}"
            )
        if not self.first_segment_seconds <= MAX_SEGMENT_SECONDS:
            found.append(
                f"first_segment_seconds (--first-segment-seconds) must be at most {MAX_SEGMENT_SECONDS:g}, "
                f"got {self.first_segment_seconds}"
            )
        if self.first_segment_steps is not None and not 1 <= self.first_segment_steps <= 64:
            found.append(
                f"first_segment_steps (--first-segment-steps) must be in 1..64, got {self.first_segment_steps}"
            )
        return found

    def _stitch_problems(self) -> list[str]:
        """How the segments' audio is joined and vocoded, and the decoder's frame buckets."""
        found = []
        if self.crossfade_ms < 0:
            found.append(f"crossfade_ms must be >= 0, got {self.crossfade_ms}")
        if self.vocoder_piece_frames < 1:
            found.append(f"vocoder_piece_frames must be >= 1, got {self.vocoder_piece_frames}")
        if not self.buckets or list(self.buckets) != sorted(set(self.buckets)) or self.buckets[0] < 1:
            found.append(f"buckets must be positive and ascending, got {self.buckets}")
        return found


def _prompt_problems(prompt: PromptOptions) -> list[str]:
    """The reference voice's bounds: the prompt is cut to them, so each must be finite and ordered."""
    found = []
    if not 0.0 < prompt.min_seconds <= prompt.first_max_seconds <= prompt.max_seconds:
        found.append(
            "prompt bounds must satisfy 0 < min_seconds <= first_max_seconds (--first-prompt-max-seconds)"
            f" <= max_seconds (--prompt-max-seconds), got {prompt.min_seconds}, "
            f"{prompt.first_max_seconds}, {prompt.max_seconds}"
        )
    if not prompt.max_seconds <= MAX_PROMPT_SECONDS:  # infinity (and NaN) too: the prompt is bounded
        found.append(f"--prompt-max-seconds must be at most {MAX_PROMPT_SECONDS:g}, got {prompt.max_seconds}")
    if not 0 < prompt.max_pause_s <= MAX_PROMPT_SECONDS:
        found.append(f"--prompt-max-pause-seconds must be above 0 and at most {MAX_PROMPT_SECONDS:g}")
    if prompt.max_pause_s <= 0 or prompt.trailing_silence_s < 0 or prompt.target_rms <= 0:
        found.append("prompt pause, trailing silence and target rms must be positive")
    return found


@dataclass(frozen=True)
class ZipVoiceConfig:
    """Everything a ZipVoiceEngine needs: which files, where they run, how they synthesise."""

    model_dir: str
    precision: str = "int8"
    vocoder: str | None = None  # default: vocos_24khz.onnx in or beside the model dir
    device: str = "auto"  # auto | qnn | cuda | cpu
    runtime: RuntimeConfig = field(default_factory=RuntimeConfig)
    fixed_shapes: bool = False  # bucketed decoder on any device, as on the NPU
    tokenizer: str | None = None  # default: from the model's metadata
    num_steps: int | None = None  # default: 8 for Distill, 16 for ZipVoice
    guidance_scale: float | None = None  # default: 3.0 for Distill, 1.0 for ZipVoice
    seed: int = 0
    default_voice: Voice = field(default_factory=Voice)
    options: ZipVoiceOptions = field(default_factory=ZipVoiceOptions)

    def validate(self) -> None:
        """ValueError listing every bad value; nothing is opened or read here except the SoC table."""
        found = []
        if not self.model_dir:
            found.append("a model directory is needed (--model-dir)")
        if self.precision not in PRECISIONS:
            found.append(f"precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}")
        if self.device not in ("auto", *DEVICES):
            found.append(f"device must be auto or one of {', '.join(DEVICES)}, got {self.device!r}")
        if self.tokenizer is not None and self.tokenizer not in TOKENIZERS:
            found.append(f"unknown tokenizer {self.tokenizer!r}; use one of {', '.join(TOKENIZERS)}")
        if self.num_steps is not None and not 1 <= self.num_steps <= 64:
            found.append(f"num_steps (--num-steps) must be in 1..64, got {self.num_steps}")
        if self.guidance_scale is not None and not 0.0 <= self.guidance_scale <= 20.0:
            found.append(f"guidance_scale (--guidance-scale) must be in 0..20, got {self.guidance_scale}")
        if self.runtime.threads < 0:
            found.append(f"threads must be >= 0, got {self.runtime.threads}")
        try:
            qnn_targets.resolve(self.runtime.qnn_soc)
        except ValueError as exc:
            found.append(str(exc))
        found += self.options.problems()
        if found:
            raise ValueError("invalid ZipVoice configuration: " + "; ".join(found))
