"""The embedded default voice: espeak-ng (GPL-3.0, loaded as a shared library), Korean out of the box.

It needs no model files, so a fresh install speaks at once. espeak makes 22050 Hz int16; the engine
resamples to 24 kHz with one soxr streaming resampler per request, so chunk joins are seamless (the
chunks together equal a one-shot resample of the whole utterance).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np
import soxr

from npu_worker.config import Settings
from npu_worker.engine.base import EngineInfo, SynthesisRequest
from npu_worker.engine.espeak_lib import EspeakLibrary, get_espeak
from npu_worker.protocol import EngineError, UnknownLanguage

OUTPUT_RATE = 24000

# Request language codes whose espeak-ng voice is not found by the code itself.
LANGUAGE_ALIASES = {
    "korean": "ko",
    "kor": "ko",
    "en": "en-us",
    "eng": "en-us",
    "english": "en-us",
    "zh": "cmn",
    "zh-cn": "cmn",
    "zh-hans": "cmn",
    "zho": "cmn",
    "chinese": "cmn",
    "zh-hk": "yue",
    "japanese": "ja",
    "jpn": "ja",
    "fr": "fr-fr",
    "fra": "fr-fr",
    "deu": "de",
    "ger": "de",
    "spa": "es",
}


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

    @property
    def info(self) -> EngineInfo:
        version = self._library.version if self._library is not None else "unloaded"
        return EngineInfo(
            backend="espeak-ng",
            device="cpu",
            precision="int16",
            sample_rate=OUTPUT_RATE,
            model=f"espeak-ng-{version}",
        )

    def load(self) -> None:
        """Load and initialise the shared library (raises protocol.ModelLoadError)."""
        self._library = self._library_factory()

    @property
    def library(self) -> EspeakLibrary:
        if self._library is None:
            raise EngineError("espeak engine used before load()")
        return self._library

    def voice_for(self, lang: str) -> str:
        """espeak voice identifier for a request language; EngineError naming an unknown one."""
        if lang not in self._voices:
            code = lang.strip().lower().replace("_", "-")
            primary = code.split("-", 1)[0]
            for candidate in (LANGUAGE_ALIASES.get(code, code), LANGUAGE_ALIASES.get(primary, primary)):
                voice = self.library.find_voice(candidate)
                if voice is not None:
                    self._voices[lang] = voice.identifier
                    break
            else:
                raise UnknownLanguage(
                    f"espeak-ng has no voice for lang {lang!r}; it knows: {', '.join(self.languages())}"
                )
        return self._voices[lang]

    def languages(self) -> list[str]:
        """The language codes espeak-ng has voices for."""
        return sorted({voice.languages[0] for voice in self.library.voices() if voice.languages})

    def check_language(self, lang: str) -> None:
        """UnknownLanguage (a 400 before the request queues) when espeak-ng has no voice for `lang`."""
        self.voice_for(lang)

    def rate_for(self, speed_factor: float) -> int:
        return max(1, round(self.library.default_rate * speed_factor))

    def stream(self, request: SynthesisRequest) -> Iterator[np.ndarray]:
        """Yield float32 chunks at 24 kHz as espeak makes them; closing the iterator stops espeak."""
        library = self.library
        voice = self.voice_for(request.lang)
        pcm = library.synthesize(request.text, voice=voice, rate_wpm=self.rate_for(request.speed_factor))
        try:
            yield from resample_pcm16(pcm, library.sample_rate, OUTPUT_RATE)
        finally:
            pcm.close()

    def close(self) -> None:
        """Nothing to release: the espeak library lives as long as the process."""
        self._voices.clear()


def resample_pcm16(chunks: Iterable[np.ndarray], from_rate: int, to_rate: int) -> Iterator[np.ndarray]:
    """int16 chunks → float32 chunks at `to_rate` through one soxr stream, so joins are seamless."""
    resampler = soxr.ResampleStream(from_rate, to_rate, 1, dtype="float32", quality="HQ")
    for chunk in chunks:
        out = resampler.resample_chunk(chunk.astype(np.float32) / 32768.0)
        if out.size:
            yield out
    tail = resampler.resample_chunk(np.zeros(0, dtype=np.float32), last=True)
    if tail.size:
        yield tail


def create(settings: Settings) -> EspeakEngine:
    """The engine for `--backend espeak` (it has no settings of its own)."""
    return EspeakEngine()
