"""Reference voice → prompt: cleaned audio, its features and its transcript's tokens, cached per voice.

The prompt's frames are part of every decoder call (all steps, all segments), so its length is the
main cost lever after the text itself: silences are trimmed, long pauses shortened, and the prompt is
bounded in length by cutting it at a pause that lines up with a word boundary of the transcript (the
transcript must still match the audio). The first segment may use a shorter bound than the others so
that first audio comes early.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from npu_worker.audio import read_wav, resample
from npu_worker.engine.base import Voice
from npu_worker.engine.zipvoice import features as feat
from npu_worker.engine.zipvoice.sampler import FEAT_SCALE
from npu_worker.engine.zipvoice.tokenizer import PUNCTUATION, add_punctuation
from npu_worker.files import TooLarge, read_regular
from npu_worker.protocol import MAX_REFERENCE_BYTES, EngineError, InvalidAudio

MAX_TRANSCRIPT_BYTES = 64 * 1024
REFERENCE_SIZE_HINT = "a reference voice is a few seconds of speech"


@dataclass(frozen=True)
class PromptOptions:
    target_rms: float = 0.1
    max_pause_s: float = 0.4  # internal pauses are shortened to this (official: 1 s)
    trailing_silence_s: float = 0.2  # keeps the prompt from leaking into the generated speech
    max_seconds: float = 3.0  # bound of the prompt (ZipVoice's own inference recommends 1-3 s prompts)
    first_max_seconds: float = 2.0  # bound for an early first segment (first audio comes sooner)
    min_seconds: float = 1.0  # never cut shorter than this
    alignment_tolerance_s: float = 0.35


@dataclass(frozen=True)
class Prompt:
    features: np.ndarray  # (P, num_mels), already × feat_scale
    tokens: list[int]
    text: str
    rms: float
    seconds: float

    @property
    def frames(self) -> int:
        return int(self.features.shape[0])


@dataclass(frozen=True)
class VoicePrompts:
    first: Prompt
    rest: Prompt
    frames_per_token: float  # the voice's speaking rate, from the whole cleaned reference (not the cut)


def transcript_for(voice: Voice) -> str:
    """The voice's transcript: `ref_text`, else the sidecar `<name>.txt` beside the wav."""
    if voice.ref_text and voice.ref_text.strip():
        return voice.ref_text.strip()
    assert voice.ref_wav is not None
    sidecar = Path(voice.ref_wav).with_suffix(".txt")
    read = voice.read or read_regular
    try:
        text = read(str(sidecar), MAX_TRANSCRIPT_BYTES).decode("utf-8").strip()
    except TooLarge as exc:
        raise EngineError(f"transcript {exc}") from None
    except UnicodeDecodeError:
        raise EngineError(f"transcript {sidecar} is not UTF-8 text") from None
    except OSError as exc:
        raise EngineError(
            f"reference {voice.ref_wav} has no transcript: put it in {sidecar.name} beside the wav "
            "or pass ref_text"
        ) from exc
    if not text:
        raise EngineError(f"transcript {sidecar} is empty")
    return text


def load_reference(
    path: str, sample_rate: int, read: Callable[[str, int], bytes] | None = None
) -> np.ndarray:
    """The reference's samples at `sample_rate`, read by `read` (the voice's: no link followed beneath
    the allowed roots; default a plain bounded read); a file that is not audio, or one larger than any
    voice prompt needs (`MAX_REFERENCE_BYTES`), is the caller's mistake."""
    try:
        data = (read or read_regular)(path, MAX_REFERENCE_BYTES)
    except TooLarge as exc:
        raise InvalidAudio(f"reference wav {exc}: {REFERENCE_SIZE_HINT}") from None
    except OSError as exc:
        raise EngineError(f"cannot read reference wav {path}: {exc}") from exc
    try:
        samples, rate = read_wav(data)
    except (ValueError, EOFError) as exc:
        raise InvalidAudio(f"cannot read reference wav {path}: {exc}") from exc
    return resample(samples, rate, sample_rate)


def clean_reference(samples: np.ndarray, sample_rate: int, options: PromptOptions) -> np.ndarray:
    samples = feat.trim_edge_silence(samples, sample_rate)
    if samples.size < sample_rate * 0.1:
        raise EngineError("the reference wav holds no audible speech")
    return feat.shorten_pauses(samples, sample_rate, options.max_pause_s)


def cut_at_word_pause(
    samples: np.ndarray, sample_rate: int, text: str, max_seconds: float, options: PromptOptions
) -> tuple[np.ndarray, str]:
    """The longest prefix ≤ max_seconds that ends in a pause aligned with a word boundary.

    Alignment assumes an even speaking rate over the letters: a pause at 40 % of the audio should
    sit near the word boundary at 40 % of the letters. Without such a pause the whole prompt is kept
    (a cut whose transcript does not match the audio would spoil the voice).
    """
    duration = samples.size / sample_rate
    if duration <= max_seconds:
        return samples, text
    words = text.split()
    letters = np.cumsum([len(w) for w in words], dtype=np.float64)
    if len(words) < 2 or letters[-1] == 0:
        return samples, text
    best: tuple[int, str] | None = None
    for start, end in feat.pause_spans(samples, sample_rate, 0.08):
        cut = (start + end) // 2
        seconds = cut / sample_rate
        if not options.min_seconds <= seconds <= max_seconds:
            continue
        fraction = seconds / duration
        k = int(np.argmin(np.abs(letters[:-1] / letters[-1] - fraction)))
        if abs(letters[k] / letters[-1] - fraction) * duration <= options.alignment_tolerance_s:
            if best is None or cut > best[0]:
                best = (cut, _with_pause_mark(" ".join(words[: k + 1])))
    if best is None:
        return samples, text
    return samples[: best[0]], best[1]


def _with_pause_mark(text: str) -> str:
    """A prefix cut at a pause mid-sentence ends in a comma (not the full stop of a sentence end)."""
    return text if text[-1:] in PUNCTUATION else text + ","


class PromptCache:
    """Prompt features per (voice, language), computed once; bounded LRU, thread-safe."""

    def __init__(
        self,
        sample_rate: int,
        spectrum: feat.SpectrumConfig,
        tokenize: Callable[[str, str], list[int]],
        options: PromptOptions = PromptOptions(),
        capacity: int = 16,
    ) -> None:
        self.sample_rate = sample_rate
        self.spectrum = spectrum
        self.tokenize = tokenize
        self.options = options
        self.capacity = capacity
        self._entries: OrderedDict[tuple[str, str], VoicePrompts] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, voice: Voice, lang: str) -> VoicePrompts:
        key = (voice.identity(), lang)
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        prompts = self.build(voice, lang)
        with self._lock:
            self._entries[key] = prompts
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
        return prompts

    def build(self, voice: Voice, lang: str) -> VoicePrompts:
        if voice.ref_wav is None:
            raise EngineError("no reference voice: start the worker with --ref-wav or pass ref_wav")
        raw = load_reference(voice.ref_wav, self.sample_rate, voice.read)
        text = transcript_for(voice)
        samples = clean_reference(raw, self.sample_rate, self.options)
        options = self.options
        rest_samples, rest_text = cut_at_word_pause(
            samples, self.sample_rate, text, options.max_seconds, options
        )
        rest = self._prompt(rest_samples, rest_text, lang)
        whole = samples.size + int(self.sample_rate * options.trailing_silence_s)
        whole_tokens = len(self.tokenize(add_punctuation(text), lang)) or len(rest.tokens)
        frames_per_token = feat.frame_count(whole, self.spectrum.hop_length) / whole_tokens
        first_bound = min(options.first_max_seconds, options.max_seconds)
        first_samples, first_text = cut_at_word_pause(samples, self.sample_rate, text, first_bound, options)
        if first_samples.size == rest_samples.size:
            first = rest
        else:
            first = self._prompt(first_samples, first_text, lang)
        return VoicePrompts(first=first, rest=rest, frames_per_token=frames_per_token)

    def _prompt(self, samples: np.ndarray, text: str, lang: str) -> Prompt:
        samples = feat.trim_edge_silence(samples, self.sample_rate)
        silence = np.zeros(int(self.sample_rate * self.options.trailing_silence_s), dtype=np.float32)
        samples = np.concatenate([samples, silence])
        samples, level = feat.rms_normalise(samples, self.options.target_rms)
        features = feat.log_mel(samples, self.spectrum) * FEAT_SCALE
        text = add_punctuation(text)
        tokens = self.tokenize(text, lang)
        if not tokens:
            raise EngineError(f"the reference transcript gives no tokens for lang {lang!r}: {text!r}")
        return Prompt(
            features=features, tokens=tokens, text=text, rms=level, seconds=samples.size / self.sample_rate
        )
