"""Reference voice → prompt: cleaned audio, its features and its transcript's tokens, cached per voice.

The prompt's frames are part of every decoder call (all steps, all segments), so its length is the
main cost lever after the text itself: silences are trimmed, long pauses shortened, and the prompt is
bounded in length by cutting it at a pause that lines up with a word boundary of the transcript (the
transcript must still match the audio). The first segment may use a shorter bound than the others so
that first audio comes early.

The reference and its transcript are the caller's (a request's `ref_wav`/`ref_text`, a sidecar file, the
operator's --ref-text), so they are checked before anything is encoded: a transcript whose token count
does not fit the audio's length (`MIN_TOKENS_PER_SECOND`..`MAX_TOKENS_PER_SECOND`) would set an absurd
speaking rate and, when long, an encoder input quadratic in memory; a recording with no pause to cut at
is cut hard at an estimated word boundary, so a prompt never runs far past its bound.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from npu_worker.audio_decode import SPEECH_RATES, read_wav
from npu_worker.engine.base import Voice, language_code
from npu_worker.engine.zipvoice import features as feat
from npu_worker.engine.zipvoice.sampler import FEAT_SCALE
from npu_worker.engine.zipvoice.segmenter import is_cjk
from npu_worker.engine.zipvoice.tokenizer import PUNCTUATION, add_punctuation
from npu_worker.files import TooLarge, read_regular
from npu_worker.protocol import (
    MAX_REFERENCE_BYTES,
    BadRequest,
    EngineError,
    InvalidAudio,
    RefWavNotAllowed,
)
from npu_worker.reference_reads import CallersFileGone

MAX_TRANSCRIPT_BYTES = 64 * 1024
REFERENCE_SIZE_HINT = "a reference voice is a few seconds of speech"
# Longest reference recording read (before cleaning): twice the longest voice upload. Only a few seconds
# are used; a longer file cost memory and time for nothing (64 MiB of 8 kHz audio is 70 minutes).
MAX_REFERENCE_SECONDS = 60.0
# Model tokens per second of cleaned reference speech (pauses ≤ 0.4 s and 0.2 s of trailing silence
# included) that a transcript may give. Read speech runs at about 4-9 syllables per second across
# languages (Pellegrino et al. 2011; Coupé et al. 2019); the tokenizers give about 2 tokens per syllable
# (emilia pinyin), 3.7 (espeak Korean, the bundled lecture), 4.5 (espeak English) and 5 per Chinese
# character (espeak): 8-45 tokens per second. The project's voice has 18.6. The bounds leave a factor of
# two below (slow speech, a one-word recording) and a third above; outside them the transcript does not
# belong to the audio (docs/zipvoice.md, "Checks on the reference voice").
MIN_TOKENS_PER_SECOND = 4.0
MAX_TOKENS_PER_SECOND = 60.0
# A cheap bound before tokenising: characters per second of speech (fast English is ≈ 25, with spaces).
MAX_CHARS_PER_SECOND = 40.0
# How far a prompt may run past --prompt-max-seconds (a transcript of one long word cannot be cut).
PROMPT_SLACK_S = 1.0


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
    rms: float  # the level generated audio is restored to: the voice's (the full prompt's) for both
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
        return _utf8_transcript(voice.ref_text.strip())
    assert voice.ref_wav is not None
    sidecar = Path(voice.ref_wav).with_suffix(".txt")
    read = voice.read or read_regular
    try:
        text = read(str(sidecar), MAX_TRANSCRIPT_BYTES).decode("utf-8").strip()
    except TooLarge as exc:  # the caller's file, as an empty one: it was an EngineError, a 500 on /v1/
        raise BadRequest(
            f"transcript {exc}: a transcript is what the reference says (pass ref_text)", param="ref_text"
        ) from None
    except UnicodeDecodeError:
        raise BadRequest(f"transcript {sidecar} is not UTF-8 text", param="ref_text") from None
    except FileNotFoundError:  # the caller's omission (a link, FIFO or unreadable file: RefWavNotAllowed)
        raise BadRequest(
            f"reference {voice.ref_wav} has no transcript: put it in {sidecar.name} beside the wav "
            "or pass ref_text",
            param="ref_text",
        ) from None
    except OSError as exc:
        raise EngineError(
            f"reference {voice.ref_wav} has no transcript: put it in {sidecar.name} beside the wav "
            "or pass ref_text"
        ) from exc
    if not text:
        raise BadRequest(f"transcript {sidecar} is empty", param="ref_text")
    return text


def _utf8_transcript(text: str) -> str:
    """`text`, refused where it holds what UTF-8 cannot carry: an operator's `--ref-text` with a byte
    that is not UTF-8 comes as a lone surrogate, and its load failed as a bare codec error
    ("'utf-8' codec can't encode character '\\udcff'") that named no flag. (A caller's JSON carries none.)"""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadRequest(
            f"ref_text is not UTF-8 text: {exc.object[exc.start : exc.end]!r} at character {exc.start}",
            param="ref_text",
        ) from None
    return text


def load_reference(
    path: str, sample_rate: int, read: Callable[[str, int], bytes] | None = None
) -> np.ndarray:
    """The reference's samples at `sample_rate`, read by `read` (the voice's: no link followed beneath
    the allowed roots; default a plain bounded read); a file that is not audio, or one larger than any
    voice prompt needs (`MAX_REFERENCE_BYTES`), or at a rate no recording of speech has, is the caller's
    mistake; so is a caller's file removed after admission checked it (`CallersFileGone`)."""
    try:
        data = (read or read_regular)(path, MAX_REFERENCE_BYTES)
    except TooLarge as exc:
        raise InvalidAudio(f"reference wav {exc}: {REFERENCE_SIZE_HINT}") from None
    except OSError as exc:
        if isinstance(exc, CallersFileGone):  # (not a stored voice's: the operator's or the store's)
            # a caller's, removed after admission checked it: their 400, as at admission (it was a 500)
            raise RefWavNotAllowed(f"{path} does not exist or is not a file") from None
        raise EngineError(f"cannot read reference wav {path}: {exc}") from exc
    try:
        # the bounds of a voice upload; resampled as decoded, never held whole at its own rate
        samples, _rate = read_wav(data, MAX_REFERENCE_SECONDS, SPEECH_RATES, to_rate=sample_rate)
    except (ValueError, EOFError) as exc:
        raise InvalidAudio(f"cannot read reference wav {path}: {exc}") from exc
    return samples


def clean_reference(samples: np.ndarray, sample_rate: int, options: PromptOptions) -> np.ndarray:
    """Edges trimmed, long pauses shortened. Non-finite samples (NaN flows through every later step
    and the output is trimmed to nothing) and a reference without 0.1 s of sound are the caller's.
    Silence is measured without the recording's DC offset (`centred`): at -34 dBFS of it nothing was
    quiet, the edges and pauses stayed, and the speaking rate taken from the length was 1.8x too slow."""
    if not np.all(np.isfinite(samples)):
        raise InvalidAudio("the reference wav holds non-finite samples (NaN or infinity)")
    samples = feat.trim_edge_silence(samples, sample_rate, centred=True)
    if samples.size < sample_rate * 0.1:
        raise InvalidAudio("the reference wav holds no audible speech (under 0.1 s above -50 dBFS)")
    return feat.shorten_pauses(samples, sample_rate, options.max_pause_s, centred=True)


def check_transcript_length(text: str, seconds: float) -> None:
    """Refuse, before tokenising, a transcript far longer than `seconds` of speech can carry."""
    most = int(MAX_CHARS_PER_SECOND * seconds) + 20
    if len(text) > most:
        raise BadRequest(
            f"the reference transcript has {len(text)} characters, more than {seconds:.1f} s of reference "
            f"speech can hold (at most {most}): it must be the words spoken in the reference wav",
            param="ref_text",
        )


def check_speaking_rate(tokens: int, speakable: int, seconds: float) -> None:
    """Refuse a transcript whose token count does not fit `seconds` of reference speech: the voice's
    speaking rate is taken from it (one token for 4 s made 92 s of audio from a short sentence)."""
    if speakable == 0:
        raise BadRequest("the reference transcript has no speakable words", param="ref_text")
    rate = tokens / max(seconds, 1e-3)
    if not MIN_TOKENS_PER_SECOND <= rate <= MAX_TOKENS_PER_SECOND:
        fault = "too few" if rate < MIN_TOKENS_PER_SECOND else "too many"
        raise BadRequest(
            f"the reference transcript does not fit the reference wav: {tokens} tokens for {seconds:.1f} s "
            f"of speech is {rate:.1f} per second, {fault} for speech ({MIN_TOKENS_PER_SECOND:g}-"
            f"{MAX_TOKENS_PER_SECOND:g}); the transcript must be exactly the words spoken in the wav",
            param="ref_text",
        )


def _text_units(text: str) -> tuple[list[str], str]:
    """The transcript's words and the text that joins them; a text of one run without spaces (Chinese,
    Japanese) is taken per character, punctuation kept with the character before it."""
    words = text.split()
    if len(words) >= 2 or not text:
        return words, " "
    units: list[str] = []
    for char in words[0] if words else "":
        if units and (char in PUNCTUATION or not char.isalnum() and not is_cjk(char)):
            units[-1] += char
        else:
            units.append(char)
    return units, ""


def cut_at_word_pause(
    samples: np.ndarray,
    sample_rate: int,
    text: str,
    max_seconds: float,
    options: PromptOptions,
    hard: bool = True,
) -> tuple[np.ndarray, str]:
    """The longest prefix ≤ max_seconds that ends in a pause aligned with a word boundary.

    Alignment assumes an even speaking rate over the letters: a pause at 40 % of the audio should
    sit near the word boundary at 40 % of the letters. Without such a pause the prompt is cut hard
    (`_hard_cut`): kept whole, a 60 s recording was paid at every decoder call (93 s for a sentence);
    `hard=False` keeps it whole instead (the caller has a cut prompt to use). A transcript of one word
    is kept whole with its audio (the caller bounds the result).
    """
    duration = samples.size / sample_rate
    if duration <= max_seconds:
        return samples, text
    words, glue = _text_units(text)
    letters = np.cumsum([len(w) for w in words], dtype=np.float64)
    if len(words) < 2 or letters[-1] == 0:
        return samples, text
    best: tuple[int, str] | None = None
    for start, end in feat.pause_spans(samples, sample_rate, 0.08, centred=True):
        cut = (start + end) // 2
        seconds = cut / sample_rate
        if not options.min_seconds <= seconds <= max_seconds:
            continue
        fraction = seconds / duration
        k = int(np.argmin(np.abs(letters[:-1] / letters[-1] - fraction)))
        if abs(letters[k] / letters[-1] - fraction) * duration <= options.alignment_tolerance_s:
            if best is None or cut > best[0]:
                best = (cut, _with_pause_mark(glue.join(words[: k + 1])))
    if best is None and not hard:
        return samples, text
    if best is None:
        return _hard_cut(samples, sample_rate, text, words, glue, letters, max_seconds, options)
    return samples[: best[0]], best[1]


def _hard_cut(
    samples: np.ndarray,
    sample_rate: int,
    text: str,
    words: list[str],
    glue: str,
    letters: np.ndarray,
    max_seconds: float,
    options: PromptOptions,
) -> tuple[np.ndarray, str]:
    """No aligned pause: cut after the last word whose end, estimated from the letters, lies within
    the bound, at the quietest 10 ms of the audio within the alignment tolerance around it (a gap
    between words is quieter than a vowel). The transcript is the words before the cut; the estimate
    may be a syllable off, which costs less than a prompt of any length. No word ending in the bound
    (one long word): kept whole."""
    duration = samples.size / sample_rate
    ends = letters[:-1] / letters[-1] * duration
    fits = np.flatnonzero(ends <= max_seconds)
    if fits.size == 0:
        return samples, text
    k = int(fits[-1])
    low = max(0.0, ends[k] - options.alignment_tolerance_s)
    high = min(max_seconds, ends[k] + options.alignment_tolerance_s)
    chunk = max(1, int(round(sample_rate * feat.SILENCE_CHUNK_S)))
    first = int(low * sample_rate) // chunk
    last = max(first + 1, int(high * sample_rate) // chunk)
    levels = feat.chunk_levels_db(samples[first * chunk : last * chunk], sample_rate, centred=True)
    quietest = first + (int(np.argmin(levels)) if levels.size else 0)
    cut = min(samples.size, quietest * chunk + chunk // 2)
    return samples[:cut], _with_pause_mark(glue.join(words[: k + 1]))


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
        speakable: Callable[[str, str], int] | None = None,
    ) -> None:
        """`speakable(text, lang)`: how many of the text's tokens are not punctuation or space (default:
        all of them); a transcript with none ("...") is refused."""
        self.sample_rate = sample_rate
        self.spectrum = spectrum
        self.tokenize = tokenize
        self.speakable = speakable or (lambda text, lang: len(tokenize(text, lang)))
        self.options = options
        self.capacity = capacity
        self._entries: OrderedDict[tuple[str, str], VoicePrompts] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, voice: Voice, lang: str) -> VoicePrompts:
        """The voice's prompts for `lang`, keyed by the code as the tokenizers read it: by the caller's
        spelling (" ko", "KO ", ...), each variant rebuilt the prompts (≈ 0.1 s) and evicted another's."""
        key = (voice.identity(), language_code(lang))
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
        seconds = samples.size / self.sample_rate
        check_transcript_length(text, seconds)
        whole_tokens = len(self.tokenize(add_punctuation(text), lang))
        check_speaking_rate(whole_tokens, self.speakable(text, lang), seconds)
        rest_samples, rest_text = cut_at_word_pause(
            samples, self.sample_rate, text, options.max_seconds, options
        )
        longest = options.max_seconds + PROMPT_SLACK_S
        if rest_samples.size > longest * self.sample_rate:
            raise InvalidAudio(
                f"the reference wav holds {seconds:.1f} s of speech and its transcript gives no word "
                f"boundary to cut it at within {options.max_seconds:g} s (--prompt-max-seconds): use a "
                "shorter recording, or a transcript with its words"
            )
        rest = self._prompt(rest_samples, rest_text, lang)
        whole = samples.size + int(self.sample_rate * options.trailing_silence_s)
        frames_per_token = feat.frame_count(whole, self.spectrum.hop_length) / max(1, whole_tokens)
        first_bound = min(options.first_max_seconds, options.max_seconds)
        first_samples, first_text = cut_at_word_pause(
            samples, self.sample_rate, text, first_bound, options, hard=False
        )
        if first_samples.size >= rest_samples.size:  # no aligned pause within the first bound
            first = rest
        else:  # at the rest's level: a softly spoken opening made the first segment ~9 dB quieter
            first = self._prompt(first_samples, first_text, lang, like=rest)
        return VoicePrompts(first=first, rest=rest, frames_per_token=frames_per_token)

    def _prompt(self, samples: np.ndarray, text: str, lang: str, like: Prompt | None = None) -> Prompt:
        """`like`: a prompt of the same voice whose loudness this one takes (fed to the model at the level
        `like` is fed at, restored as `like` is), so every segment of a request comes out equally loud."""
        samples = feat.trim_edge_silence(samples, self.sample_rate, centred=True)
        speech_seconds = samples.size / self.sample_rate
        silence = np.zeros(int(self.sample_rate * self.options.trailing_silence_s), dtype=np.float32)
        samples = np.concatenate([samples, silence])
        if like is None:
            samples, level = feat.rms_normalise(samples, self.options.target_rms)
        else:
            fed = max(like.rms, self.options.target_rms)
            samples, level = (samples * (fed / max(feat.rms(samples), 1e-9))).astype(np.float32), like.rms
        features = feat.log_mel(samples, self.spectrum) * FEAT_SCALE
        text = add_punctuation(text)
        tokens = self.tokenize(text, lang)
        if not tokens:
            raise BadRequest(
                f"the reference transcript gives no tokens for lang {lang!r}: {text!r}", param="ref_text"
            )
        if len(tokens) > 2 * MAX_TOKENS_PER_SECOND * speech_seconds + 4:  # a cut far off its words
            raise BadRequest(
                f"the reference transcript's part {text[:40]!r} gives {len(tokens)} tokens for "
                f"{speech_seconds:.1f} s of the reference wav: it does not match the audio",
                param="ref_text",
            )
        return Prompt(
            features=features, tokens=tokens, text=text, rms=level, seconds=samples.size / self.sample_rate
        )
