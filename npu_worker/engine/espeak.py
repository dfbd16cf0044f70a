"""The embedded default voice: espeak-ng (GPL-3.0, loaded as a shared library), Korean out of the box.

It needs no model files, so a fresh install speaks at once. espeak makes 22050 Hz int16; the engine
resamples to 24 kHz with one soxr streaming resampler per request, so chunk joins are seamless (the
chunks together equal a one-shot resample of the whole utterance).

Two ways to run it: `stream` (the `Engine` iterator; espeak runs on its streaming thread and every
buffer, `espeak_lib.BUFFER_MS` of audio, crosses a thread) and `stream_into`, which the engine thread
uses: espeak runs on the calling thread and hands resampled chunks to a sink from inside its callback
(no thread hop at all), buffer by buffer at first and then gathered (benchmarks/SERVER_OVERHEAD.md has
the measurements).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import soxr

from npu_worker.engine.base import EngineInfo, SynthesisRequest, language_code
from npu_worker.engine.espeak_lib import EspeakLibrary, another_espeak, get_espeak
from npu_worker.engine.espeak_revision import AUDIO_REVISION  # raised by a change that makes other audio
from npu_worker.engine.spoken_languages import espeak_spoken
from npu_worker.engine.text_form import espeak_pieces
from npu_worker.protocol import DEFAULT_LANG, EmptyText, EngineError, UnknownLanguage, WorkerError

OUTPUT_RATE = 24000
READER_WARM_UP = "3.7V"  # what `warm_up_reader` reads: a number's and a unit's patterns (`lazy_re`)
PROMPT_SECONDS = 0.2  # `stream_into` hands the first audio on buffer by buffer (trim, first frames)...
GATHER_SECONDS = 0.6  # ...then this much at a time: espeak makes 200 ms buffers back to back

# Request language codes whose espeak-ng voice is not found by the code itself.
LANGUAGE_ALIASES = {
    **dict.fromkeys(("korean", "kor"), "ko"),
    **dict.fromkeys(("en", "eng", "english"), "en-us"),
    **dict.fromkeys(("zh", "zh-cn", "zh-hans", "zho", "chinese"), "cmn"),
    "zh-hk": "yue",
    **dict.fromkeys(("japanese", "jpn"), "ja"),
    **dict.fromkeys(("fr", "fra"), "fr-fr"),
    **dict.fromkeys(("deu", "ger"), "de"),
    "spa": "es",
}


def voice_names(code: str) -> dict[str, str]:
    """The espeak-ng voice names to look for, in order, for a `language_code`: its own (or its alias's),
    then its language's ("ko-kr": ko), each keyed by the code it is for."""
    return {key: LANGUAGE_ALIASES.get(key, key) for key in (code, code.split("-", 1)[0])}


class EspeakEngine:
    """espeak-ng speech at 24 kHz float32.

    `lang` picks the espeak voice (ko, en, ja, zh, ... and any espeak voice or language name);
    `speed_factor` scales espeak's words-per-minute rate (espeak floors it at 80 wpm, so factors below
    about 0.46 sound like 0.46). Reference voices (`ref_wav`) are ignored: espeak has one voice per
    language. The library is shared by the process; this engine owns no espeak state of its own.
    """

    def __init__(self, library_factory: Callable[[], EspeakLibrary] = get_espeak) -> None:
        self._library_factory = library_factory
        self._library: EspeakLibrary | None = None
        self._voices: dict[str, str] = {}
        self._spoken: list[str] | None = None  # `spoken_languages`, made once: ≈ 8 000 comparisons

    @property
    def info(self) -> EngineInfo:
        version = self._library.version if self._library is not None else "unloaded"
        return EngineInfo(
            backend="espeak-ng",
            device="cpu",
            precision="int16",
            sample_rate=OUTPUT_RATE,
            model=f"espeak-ng-{version}",
            audio_settings=f"revision {AUDIO_REVISION}",
        )

    def load(self) -> None:
        """Load and initialise the library (raises protocol.ModelLoadError), then speak one syllable in
        the default language: an instance's first synthesis loads its voice (first chunk 3.8 ms
        against 0.26 ms after), which no request should pay; and read a number (`warm_up_reader`)."""
        self._library = self._library_factory()
        self.warm_up_reader()
        self.stream_into(SynthesisRequest("가", DEFAULT_LANG), lambda _: True)

    def warm_up_reader(self) -> None:
        """The reader's patterns a lecture's texts use compile now (`lazy_re`; 121 of 286 at d69ca74), not at a request."""
        espeak_text(SynthesisRequest(READER_WARM_UP, DEFAULT_LANG))

    @property
    def library(self) -> EspeakLibrary:
        if self._library is None:
            raise EngineError("espeak engine used before load()")
        return self._library

    def voice_for(self, lang: str) -> str:
        """espeak voice identifier for a request language; EngineError naming an unknown one. Only codes
        that name a voice are kept (normalised): keyed by the caller's spelling (" Ko\t", "ko-x1",
        "ko-x2", ...), the map grew by one entry per spelling, without bound."""
        for key, name in voice_names(language_code(lang)).items():
            if key not in self._voices:
                voice = self.library.find_voice(name)
                if voice is None:
                    continue
                self._voices[key] = voice.identifier
            return self._voices[key]
        raise UnknownLanguage(
            f"espeak-ng has no voice for lang {lang!r}; it knows: {', '.join(self.languages())}"
        )

    def languages(self) -> list[str]:
        """The language codes espeak-ng has voices for."""
        return sorted({voice.languages[0] for voice in self.library.voices() if voice.languages})

    def check_language(self, lang: str) -> None:
        """UnknownLanguage (a 400 before the request queues) when espeak-ng has no voice for `lang`."""
        self.voice_for(lang)

    def spoken_languages(self) -> list[str]:
        """What /health lists (`spoken_languages.espeak_spoken`): every voice's codes and the aliases."""
        if self._spoken is None:
            self._spoken = espeak_spoken(self.library.voices(), LANGUAGE_ALIASES)
        return self._spoken

    def rate_for(self, speed_factor: float) -> int:
        return max(1, round(self.library.default_rate * speed_factor))

    def stream(self, request: SynthesisRequest) -> Iterator[np.ndarray]:
        """Yield float32 chunks at 24 kHz as espeak makes them; closing the iterator stops espeak."""
        library = self.library
        voice = self.voice_for(request.lang)
        pcm = library.synthesize(
            espeak_text(request), voice=voice, rate_wpm=self.rate_for(request.speed_factor)
        )
        try:
            yield from resample_pcm16(_audible(pcm, request), library.sample_rate, OUTPUT_RATE)
        finally:
            pcm.close()

    def stream_into(self, request: SynthesisRequest, sink: Callable[[np.ndarray], bool]) -> None:
        """The same audio as `stream`, handed to `sink` on this thread as espeak makes it.

        The first `PROMPT_SECONDS` go buffer by buffer (the first frame waits for nothing); then
        espeak's buffers, which it makes back to back, go `GATHER_SECONDS` at a time, so the caller
        handles a few chunks per sentence instead of one per espeak buffer. `sink` returning False stops
        espeak at once (a cancel); what it raises is raised here. Nothing crosses a thread.
        """
        library = self.library
        voice = self.voice_for(request.lang)
        gathering = _Gathering(library.sample_rate, sink)
        library.synthesize_into(
            espeak_text(request), gathering.feed, voice=voice, rate_wpm=self.rate_for(request.speed_factor)
        )
        if not gathering.heard:
            raise _nothing_to_say(request)
        gathering.finish()

    def lane(self) -> EspeakEngine:
        """Another engine that can synthesise at the same time as this one (a second espeak-ng
        instance): the job core runs previews on it while this one is busy."""
        return EspeakEngine(another_espeak)

    def close(self) -> None:
        """Nothing to release: the espeak library lives as long as the process."""
        self._voices.clear()


def espeak_text(request: SynthesisRequest) -> str:
    """What espeak reads: Korean numbers, units and symbols as words (it read "3.7V" as "삼 칠 V"), and a
    comma where a run without one would outgrow what espeak reads whole (`text_form.espeak_pieces`:
    it dropped the rest of a long Korean clause, a third of a passage without punctuation). The reader
    loads at an engine's load (`warm_up_reader`): in `serve`'s espeak child, never in the worker."""
    from npu_worker.engine.korean_reading import spoken_form

    pieces = espeak_pieces(spoken_form(request.text, request.lang))
    return pieces[0] if len(pieces) == 1 else ", ".join(piece.rstrip() for piece in pieces)


def _nothing_to_say(request: SynthesisRequest) -> WorkerError:
    """Text espeak made no sound for ("😀", "...", zero-width characters): EmptyText, as ZipVoice says,
    where it was an `ok` with 7 ms of digital silence."""
    return EmptyText(f"the text gives no speech for lang {request.lang!r}: {request.text[:40]!r}")


def _audible(chunks: Iterable[np.ndarray], request: SynthesisRequest) -> Iterator[np.ndarray]:
    """espeak's chunks, those of digital silence held until a sound comes; EmptyText if none does."""
    held: list[np.ndarray] = []
    heard = False
    for chunk in chunks:
        heard = heard or bool(chunk.any())
        if not heard:
            held.append(chunk)
            continue
        if held:
            yield from held
            held = []
        yield chunk
    if not heard:
        raise _nothing_to_say(request)


class Pcm16Resampler:
    """int16 chunks → float32 chunks at `to_rate` through one soxr stream, so joins are seamless."""

    def __init__(self, from_rate: int, to_rate: int) -> None:
        self._stream = soxr.ResampleStream(from_rate, to_rate, 1, dtype="float32", quality="HQ")

    def feed(self, chunk: np.ndarray) -> np.ndarray:
        samples = chunk.astype(np.float32)
        samples *= 1.0 / 32768.0
        return self._stream.resample_chunk(samples)

    def flush(self) -> np.ndarray:
        return self._stream.resample_chunk(np.zeros(0, dtype=np.float32), last=True)


class _Gathering:
    """espeak's int16 buffers → resampled float32 chunks for a sink: one by one at first, then
    gathered (fewer resampler calls, and a few hand-offs per sentence downstream). Buffers of digital
    silence are held until a sound comes (`heard`): a text espeak says nothing for hands out nothing."""

    def __init__(self, rate: int, sink: Callable[[np.ndarray], bool]) -> None:
        self._resampler = Pcm16Resampler(rate, OUTPUT_RATE)
        self._sink = sink
        self._prompt, self._gather = int(PROMPT_SECONDS * rate), int(GATHER_SECONDS * rate)
        self._passed = 0  # input samples handed on
        self._held: list[np.ndarray] = []
        self._held_samples = 0
        self.taking = True
        self.heard = False  # a sample other than 0 came

    def feed(self, chunk: np.ndarray) -> bool:
        self._held.append(chunk)
        self._held_samples += chunk.size
        self.heard = self.heard or bool(chunk.any())
        if not self.heard or self._passed >= self._prompt and self._held_samples < self._gather:
            return True
        return self._hand()

    def finish(self) -> None:
        """espeak is done: what is held, then the resampler's tail (not after a refusal)."""
        if self.taking and self._held:
            self._hand()
        if self.taking:
            tail = self._resampler.flush()
            if tail.size:
                self._sink(tail)

    def _hand(self) -> bool:
        held = self._held[0] if len(self._held) == 1 else np.concatenate(self._held)
        self._passed += held.size
        self._held, self._held_samples = [], 0
        out = self._resampler.feed(held)
        if out.size:
            self.taking = self._sink(out)
        return self.taking


def resample_pcm16(chunks: Iterable[np.ndarray], from_rate: int, to_rate: int) -> Iterator[np.ndarray]:
    """int16 chunks → float32 chunks at `to_rate` (one `Pcm16Resampler`), empty outputs skipped."""
    resampler = Pcm16Resampler(from_rate, to_rate)
    for chunk in chunks:
        out = resampler.feed(chunk)
        if out.size:
            yield out
    tail = resampler.flush()
    if tail.size:
        yield tail


@dataclass(frozen=True)
class EspeakConfig:
    """espeak-ng's one option: where it runs (the library itself is found at load time). `process`:
    in a child process per engine lane, off the server's GIL (espeak_process.py, espeak_process_engine.py)."""

    process: bool = False

    def validate(self) -> None:
        return None


def create(config: EspeakConfig) -> EspeakEngine:
    """The engine for `--backend espeak`."""
    config.validate()
    if config.process:
        from .espeak_process_engine import EspeakProcessEngine

        return EspeakProcessEngine()
    return EspeakEngine()
