"""The engine contract: a text in, float32 audio chunks out, streamed as they are made.

Engines are driven from one thread (the scheduler's worker thread); they may block. The scheduler checks
for cancellation between chunks and closes the iterator, so engines should yield often (per espeak
callback, per ZipVoice segment or vocoder piece) and release what they hold in `finally`. An empty chunk
is a pause point without audio (ZipVoice yields one after each decoder call). An engine whose streams
keep all their state in the generator, so that another stream may run while one is paused, says so with
a class attribute `preemptible = True`: the engine thread then runs waiting previews at those points.
An engine that can stop its work in flight from another thread has `interrupt(restart)`: the runner
calls it when the running section is cancelled (its stream may then raise `Interrupted`) or, on a
preemptible engine, when a preview starts waiting (a stopped step is redone after the pause). The runner
checks for cancellation after `stream()` returns, before the first chunk: an engine that makes the
section current in `stream()` itself (sovits) never misses a cancel that lands before its call opens.
An engine whose `load()` may wait long on something outside (sovits waits for its upstream) has
`cancel_load()`: a shutdown calls it from another thread and the load ends at once with ModelLoadError.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np


class Interrupted(Exception):
    """An engine call stopped by `interrupt()` before it finished (the runner asked: a cancel)."""


@dataclass(frozen=True)
class EngineInfo:
    """What really runs: `device` is the device after fallback, never merely the one asked for."""

    backend: str
    device: str
    precision: str
    sample_rate: int
    model: str
    fallback_reason: str | None = None
    # ONNX engines: for every session opened, {"device", "nodes", "on_device"} (see /health)
    placement: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # What else shapes the audio that `model` does not name (ZipVoice: its files' paths, sizes, content digests,
    # steps, guidance, options), so a restart with other settings is never served the old audio.
    audio_settings: str = ""

    def identity(self) -> str:
        """Everything about the engine that changes the audio (cache key part)."""
        engine = f"{self.backend}|{self.model}|{self.device}|{self.precision}|{self.sample_rate}"
        return f"{engine}|{self.audio_settings}"


@dataclass(frozen=True)
class DecoderCalls:
    """Decoder calls since the engine loaded, and how many of them ran on the CPU overflow decoder
    (a bucketed decoder's segment longer than its largest bucket: `device` says the NPU, the CPU did it)."""

    total: int
    cpu_overflow: int


@dataclass(frozen=True)
class Voice:
    """A reference voice; `ref_wav=None` means the engine's default voice."""

    ref_wav: str | None = None
    ref_text: str | None = None
    # How the reference and its transcript are read (`PathPolicy.read_reference`: no link followed
    # beneath the allowed roots); None: a plain bounded read (the operator's own files, tests).
    read: Callable[[str, int], bytes] | None = field(default=None, compare=False, repr=False)

    def identity(self) -> str:
        """Path plus size, mtime, inode and ctime, so an edited or replaced reference file is a different
        voice (another recording of the same length with a fixed mtime, from an image or `cp -p`, too);
        the transcript, or without one the same stamp of the sidecar `<name>.txt` it is read from."""
        if self.ref_wav is None:
            return "default"
        if self.ref_text and self.ref_text.strip():
            text = hashlib.sha256(self.ref_text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        else:
            text = _stamp(os.path.splitext(self.ref_wav)[0] + ".txt")
        return f"{self.ref_wav}|{_stamp(self.ref_wav)}|{text}"


def _stamp(path: str) -> str:
    try:
        stat = os.stat(path)
    except OSError:
        return "missing"
    return f"{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ino}:{stat.st_ctime_ns}"


@dataclass(frozen=True)
class SynthesisRequest:
    text: str
    lang: str = "ko"
    speed_factor: float = 1.0
    voice: Voice = Voice()
    seed: int | None = None
    # Someone listens to this section's audio as it is made (a preview): engines may spend a little
    # throughput (e.g. a short first ZipVoice segment) to get the first sound out sooner.
    early_audio: bool = True


@runtime_checkable
class Engine(Protocol):
    """Implemented by espeak, sovits and zipvoice-onnx engines."""

    @property
    def info(self) -> EngineInfo:
        """Valid after `load()`."""
        ...

    def load(self) -> None:
        """Load models (slow). Raises protocol.ModelLoadError with the file at fault."""
        ...

    def stream(self, request: SynthesisRequest) -> Iterator[np.ndarray]:
        """Yield mono float32 chunks in [-1, 1] at `info.sample_rate`; raise EngineError on failure."""
        ...

    def close(self) -> None: ...


def language_code(lang: str) -> str:
    """A request's `lang` in one spelling (" KO_kr " → "ko-kr"): what engines and caches compare."""
    return lang.strip().lower().replace("_", "-")


def check_language(engine: object, lang: str) -> None:
    """Raise UnknownLanguage if the engine can tell it has no voice for `lang`.

    `check_language(lang)` is an optional engine method: espeak and ZipVoice know their languages; a
    proxy (sovits) does not, and its server answers for itself.
    """
    check = getattr(engine, "check_language", None)
    if callable(check):
        check(lang)


def check_voice(engine: object, ref_wav: str | None) -> None:
    """Raise UnknownVoice if the engine can tell it cannot speak with this voice (`None`: the default).

    `check_voice(ref_wav)` is optional like `check_language`: ZipVoice needs a reference voice and
    has none by default without --ref-wav; espeak ignores voices and sovits' server answers for itself.
    """
    check = getattr(engine, "check_voice", None)
    if callable(check):
        check(ref_wav)
