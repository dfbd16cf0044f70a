"""`ZipVoiceEngine`: ZipVoice (or ZipVoice-Distill) ONNX on QNN / CUDA / CPU, streamed per segment.

One request: plan segments (short first one, then packed sentences), then for each segment run the
text encoder (frame count with the speed fix), the seeded Euler sampler over the decoder, and the
vocoder in pieces; pieces pass through a cross-fading, edge-trimming joiner and are yielded as soon as
they are final (one request's work: `request_stream.py`; one segment's: `synthesis.py`). Same seed +
text + voice → identical samples.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from functools import lru_cache

import numpy as np

from npu_worker.engine.base import DecoderCalls, EngineInfo, SynthesisRequest, Voice
from npu_worker.engine.espeak_phonemizer import ChildPhonemizer
from npu_worker.engine.interruptible import Calls
from npu_worker.engine.spoken_languages import tokenizer_languages
from npu_worker.engine.zipvoice import (
    decoders,
    model_files,
    prepared,
    request_stream,
    runtime,
    segment_sizes,
    synthesis,
)
from npu_worker.engine.zipvoice.audio_identity import audio_settings
from npu_worker.engine.zipvoice.decoder_settings import decoder_settings
from npu_worker.engine.zipvoice.options import ZipVoiceConfig
from npu_worker.engine.zipvoice.prompt import Prompt, PromptCache
from npu_worker.engine.zipvoice.synthesis import SegmentTrace
from npu_worker.engine.zipvoice.tokenizer import (
    PUNCTUATION,
    Phonemize,
    TokenTable,
    add_punctuation,
    choose_tokenizer,
    espeak_languages,
    make_tokenizer,
)
from npu_worker.engine.zipvoice.vocoder import Vocoder, spectrum_config
from npu_worker.engine.zipvoice.warm_up import warm_up
from npu_worker.protocol import (
    EngineError,
    ModelLoadError,
    UnknownLanguage,
    UnknownVoice,
    WorkerError,
)

BACKEND = "zipvoice-onnx"
log = logging.getLogger(__name__)


class ZipVoiceEngine:
    """The Engine protocol for ZipVoice ONNX models (see npu_worker/engine/base.py)."""

    # `stream()` yields an empty chunk after each decoder call and keeps all its state in the generator:
    # the engine thread may cancel there, or pause the section, run another, and resume it (runner.py).
    preemptible = True

    def __init__(self, config: ZipVoiceConfig, phonemize: Phonemize | None = None) -> None:
        self.config = config
        self.options = config.options
        # The espeak child the tokenizer reads phonemes from is this engine's, closed with it (a
        # tokenizer has no close; a child shared by every engine of the process was never closed)
        self._own_phonemizer = ChildPhonemizer() if phonemize is None else None
        self._phonemize = phonemize or self._own_phonemizer
        self._info: EngineInfo | None = None
        self.num_steps = 0
        self.guidance_scale = 0.0
        self.tokenizer_name = ""
        self.traces: list[SegmentTrace] = []  # segments of the last request
        self.load_phase: str | None = None  # what load() is doing (a first QNN start compiles for minutes)
        self.calls: Calls | None = None  # every onnxruntime run, stoppable from another thread (after load)
        self._prompt_overflow_said = False  # a prompt that fills the largest bucket is logged once

    @property
    def info(self) -> EngineInfo:
        if self._info is None:
            raise EngineError("the ZipVoice engine is not loaded")
        return self._info

    def default_voice(self) -> Voice:
        return self.config.default_voice

    @property
    def decoder_calls(self) -> DecoderCalls | None:
        """/health's `decoder_calls`: a bucketed decoder's calls and those the CPU overflow decoder ran
        (None for a dynamic decoder, whose calls all run on `device`, and before the load)."""
        decoder = getattr(getattr(self, "models", None), "decoder", None)
        return decoder.call_counts() if isinstance(decoder, decoders.BucketedDecoder) else None

    def check_voice(self, ref_wav: str | None) -> None:
        """UnknownVoice (a 400 before the request queues) for the default voice when the worker was
        started without one: every section would otherwise fail in the engine, after `/ready` said ok."""
        if ref_wav is None and not self.config.default_voice.ref_wav:
            raise UnknownVoice(
                "this worker has no default voice (it was started without --ref-wav): pass ref_wav, "
                "a stored voice's name or a reference wav",
                param="ref_wav",
            )

    def _locate_files(self) -> model_files.ModelFiles:
        """The model's files; where one is missing because a prepare into the folder was killed before
        it copied them, that unfinished prepare is what the user is told, not the missing file."""
        config = self.config
        try:
            return model_files.locate(config.model_dir, config.precision, config.vocoder)
        except ModelLoadError:
            if config.model_dir:  # (no folder there: no lock in it either)
                prepared.refuse_unfinished(model_files.home_expanded(config.model_dir))
            raise

    def load(self) -> None:
        config = self.config
        try:
            config.validate()
        except ValueError as exc:
            raise ModelLoadError(str(exc)) from None
        files = self._locate_files()
        models = runtime.open_models(
            files.encoder,
            files.decoder,
            files.vocoder,
            config.device,
            config.runtime,
            self.options.buckets,
            fixed_shapes=config.fixed_shapes,
            ready=prepared.find(files.directory),
            progress=self._report_phase,
            files=config.precision,
        )
        self.calls = Calls()
        runtime.guard_sessions(models, self.calls)
        self.load_phase = "loading the reference voice"
        settings = decoder_settings(models.decoder_metadata, files, config)
        self.feat_dim, self.num_steps = settings.feat_dim, settings.num_steps
        self.guidance_scale = settings.guidance_scale
        models.decoder.set_guidance_scale(self.guidance_scale)
        spectrum = settings.spectrum
        sample_rate = spectrum.sample_rate
        self.table = TokenTable.load(files.tokens)
        self.tokenizer_name = choose_tokenizer(config.tokenizer, models.encoder_metadata, self.table)
        self.tokenizer = make_tokenizer(self.tokenizer_name, self._phonemize, explicit=bool(config.tokenizer))
        self.models = models
        self.spectrum = spectrum
        self.vocoder = Vocoder(models.vocoder_session, spectrum_config(models.vocoder_metadata, sample_rate))
        self.prompts = PromptCache(
            sample_rate, spectrum, self._token_ids, self.options.prompt, speakable=self._speakable_tokens
        )
        self._info = self._engine_info(models, files, sample_rate)
        if config.default_voice.ref_wav:
            try:
                self.prompts.get(self.default_voice(), "ko")
            except WorkerError as exc:  # the operator's voice: BadRequest or InvalidAudio are theirs too
                raise ModelLoadError(f"default reference voice: {exc.message}") from exc
        warm_up(self)

    def _engine_info(
        self, models: runtime.LoadedModels, files: model_files.ModelFiles, sample_rate: int
    ) -> EngineInfo:
        """What /health and the cache keys say of the loaded engine."""
        return EngineInfo(
            BACKEND,
            models.device,
            models.precision,
            sample_rate,
            files.model_id(),
            models.fallback_reason,
            {name: where.to_dict() for name, where in models.placement.items()},
            audio_settings(
                files,
                self.num_steps,
                self.guidance_scale,
                self.tokenizer_name,
                self.config.fixed_shapes,
                self.options,
            ),
        )

    def interrupt(self, restart: bool) -> bool:
        """Stop the onnxruntime call in flight (any thread): for a cancel (`restart` False) any call; to
        let a waiting preview in (True), a decoder call early enough that redoing it is cheap. The
        stream then raises `Interrupted` (a cancel) or runs the step again after its boundary."""
        return self.calls is not None and self.calls.interrupt(restart)

    def _report_phase(self, phase: str) -> None:
        log.info("loading: %s", phase)
        self.load_phase = phase

    def check_language(self, lang: str) -> None:
        """UnknownLanguage (a 400 before the request queues) when the tokenizer cannot phonemize `lang`."""
        if not self.tokenizer.knows_language(lang):
            known = ", ".join(espeak_languages())
            raise UnknownLanguage(
                f"the {self.tokenizer_name} tokenizer has no phonemes for lang {lang!r}; it knows: {known}"
            )

    def spoken_languages(self) -> list[str] | None:
        """What /health lists: espeak-ng's languages and the tokenizer's own; None for `simple` (any)."""
        return tokenizer_languages(self.tokenizer)

    def _token_ids(self, text: str, lang: str) -> list[int]:
        return self.table.to_ids(self.tokenizer.symbols(text, lang))

    def _speakable_symbols(self, text: str, lang: str) -> list[str]:
        """The text's symbols the model knows, or none when all of them are punctuation or space."""
        symbols = [s for s in self.tokenizer.symbols(text, lang) if s in self.table.ids]
        return [] if all(s in PUNCTUATION or s.isspace() for s in symbols) else symbols

    def _speakable_tokens(self, text: str, lang: str) -> int:
        return sum(s not in PUNCTUATION and not s.isspace() for s in self._speakable_symbols(text, lang))

    def stream(self, request: SynthesisRequest) -> Iterator[np.ndarray]:
        """Yield audio per segment as it is final (one request's work: `request_stream.py`).

        `request.early_audio` (default True) asks for a short first segment with the short prompt, so
        the first audio comes early; a section whose first audio nobody waits for (a later section of
        a batch) packs its text into as few segments as possible, which is cheaper overall.
        """
        yield from request_stream.stream(self, request)

    def plan(
        self,
        text: str,
        lang: str,
        prompt: Prompt,
        speed: float,
        early: bool = True,
        frames_per_token: float | None = None,
    ) -> list[str]:
        """Segments of a text, sized in tokens from the voice's speaking rate (default: the prompt's):
        `segment_sizes.py`, with this engine's options, hop and bucket bound read now."""
        count = lru_cache(maxsize=256)(lambda piece: len(self._token_ids(add_punctuation(piece), lang)))
        return segment_sizes.plan_text(
            text,
            count,
            prompt,
            speed,
            early,
            frames_per_token,
            hop_seconds=self.spectrum.hop_length / self.info.sample_rate,
            options=self.options,
            precision=self.config.precision,
            bucket_tokens=self.bucket_tokens,
        )

    def bucket_tokens(self, prompt: Prompt, frames_per_token: float) -> int:
        """Most tokens whose frames fit the largest bucket of a bucketed decoder with the prompt's (a
        longer segment runs on the CPU's overflow decoder: with fewer buckets prepared for the NPU,
        every long one did); no bound for a dynamic decoder, or when the prompt leaves the bucket less
        than the shortest segment the planner makes (`first_segment_min_seconds`): a prompt 20 frames
        short of it cut a lecture into segments of two or three tokens, each a decoder call of the
        whole bucket and a join, where the overflow decoder runs segments of the usual length."""
        decoder = self.models.decoder
        if not isinstance(decoder, decoders.BucketedDecoder):
            return sys.maxsize
        room = decoder.buckets[-1] - prompt.frames
        hop_seconds = self.spectrum.hop_length / self.info.sample_rate
        if room * hop_seconds >= self.options.first_segment_min_seconds:
            return max(1, int(room / frames_per_token))
        if not self._prompt_overflow_said:  # /health names the NPU; the work is the CPU's
            self._prompt_overflow_said = True
            log.warning(
                "a prompt of %d frames leaves too little room in the largest decoder bucket (%d) for a "
                "segment of %g s: its segments run on the CPU overflow decoder; use a shorter reference "
                "voice, lower --prompt-max-seconds or prepare a larger bucket",
                prompt.frames,
                decoder.buckets[-1],
                self.options.first_segment_min_seconds,
            )
        return sys.maxsize

    def segment_audio(
        self,
        text: str,
        lang: str = "ko",
        voice: Voice | None = None,
        speed: float = 1.0,
        seed: int = 0,
        first: bool = True,
        steps: int | None = None,
    ) -> np.ndarray:
        """Raw audio of one segment, not joined or trimmed: what `stream()` builds its output from
        (`steps`: sampling steps, default the engine's)."""
        prompts = self.prompts.get(voice or self.default_voice(), lang)
        prompt = prompts.first if first else prompts.rest
        pieces = list(self.segment_pieces(text, lang, prompt, speed, seed, steps, prompts.frames_per_token))
        pieces = [piece for piece in pieces if piece.size]
        return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.float32)

    def segment_pieces(
        self,
        text: str,
        lang: str,
        prompt: Prompt,
        speed: float,
        seed: int,
        steps: int | None = None,
        frames_per_token: float | None = None,
        traces: list[SegmentTrace] | None = None,
    ) -> Iterator[np.ndarray]:
        """Encoder → sampler → vocoder for one segment, yielding vocoder pieces and, after each decoder
        call, an empty array (a step boundary); traced in `traces` (default `self.traces`).

        `steps`: sampling steps (default the engine's). `frames_per_token`: the voice's speaking rate; a
        prompt cut short (a bound, the first segment's short prompt) keeps the rate of the whole voice
        instead of its own (one word and a pause would slow the speech down). Default: the prompt's.
        """
        symbols = self._speakable_symbols(add_punctuation(text), lang)
        if not symbols:
            log.info("segment %r gives no speakable tokens for lang %s; skipped", text, lang)
            return
        tokens = self.table.to_ids(symbols)
        trace = SegmentTrace(text, len(tokens), prompt.frames, 0)
        (self.traces if traces is None else traces).append(trace)
        yield from synthesis.segment_pieces(
            self.models,
            self.vocoder,
            self.options,
            text,
            tokens,
            prompt,
            speed,
            seed,
            steps or self.num_steps,
            frames_per_token,
            trace,
        )

    def close(self) -> None:
        self.models = None  # type: ignore[assignment]
        self._info = None
        if self._own_phonemizer is not None:
            self._own_phonemizer.close()


def create(config: ZipVoiceConfig) -> ZipVoiceEngine:
    """The engine for `--backend zipvoice-onnx`, its options checked now (call `load()` before use)."""
    config.validate()
    return ZipVoiceEngine(config)
