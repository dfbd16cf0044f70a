"""ZipVoiceEngine end to end on the tiny synthetic model (real ONNX sessions, real espeak-ng, no server)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from npu_worker.audio import crossfade_join, wav_bytes
from npu_worker.audio_decode import read_wav
from npu_worker.engine.base import Engine, SynthesisRequest, Voice
from npu_worker.engine.zipvoice import synthesis
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine, create
from npu_worker.engine.zipvoice.features import trim_edge_silence
from npu_worker.engine.zipvoice.prompt import Prompt, PromptCache, PromptOptions
from npu_worker.engine.zipvoice.sampler import FEAT_SCALE
from npu_worker.engine.zipvoice.synthesis import SegmentTrace
from npu_worker.engine.zipvoice.warm_up import WARM_UP
from npu_worker.protocol import EngineError
from tests.zipvoice.conftest import engine_config

MULTI = (
    "안녕하세요. 오늘은 전기차 배터리가 어떻게 작동하는지 함께 살펴보겠습니다. 먼저 강의 순서를 소개합니다."
)


@dataclass(frozen=True)
class Loaded:
    """The module's engine and what its load() left, kept before any test's request replaces the traces."""

    engine: ZipVoiceEngine
    traces: list[SegmentTrace]
    load_phase: str | None


@pytest.fixture(scope="module")
def loaded(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loaded]:
    engine = create(engine_config(tiny_model_dir, tmp_path_factory.mktemp("state")))
    engine.load()
    yield Loaded(engine, list(engine.traces), engine.load_phase)
    engine.close()  # and its espeak child (else left running to the session's end)


@pytest.fixture(scope="module")
def engine(loaded: Loaded) -> ZipVoiceEngine:
    return loaded.engine


def synthesize(engine: ZipVoiceEngine, text: str, **fields: object) -> tuple[list[np.ndarray], np.ndarray]:
    chunks = list(engine.stream(SynthesisRequest(text, **fields)))  # type: ignore[arg-type]
    return chunks, np.concatenate(chunks)


@dataclass(frozen=True)
class Spoken:
    """MULTI streamed once at seed MULTI_SEED on the module's engine: its chunks (the empty ones too) and
    the traces that stream left."""

    chunks: list[np.ndarray]
    audio: np.ndarray
    traces: list[SegmentTrace]


MULTI_SEED = 4


@pytest.fixture(scope="module")
def spoken(engine: ZipVoiceEngine) -> Spoken:
    """Shared by the tests that only read a whole stream of MULTI (each spoke it again: four runs of
    the engine); the seed-determinism and pause tests still make their own runs to compare with it."""
    chunks, audio = synthesize(engine, MULTI, seed=MULTI_SEED)
    return Spoken(chunks, audio, list(engine.traces))


def test_engine_implements_the_contract_and_reports_what_runs(engine):
    assert isinstance(engine, Engine)
    info = engine.info
    assert (info.backend, info.device, info.precision, info.sample_rate) == (
        "zipvoice-onnx",
        "cpu",
        "fp32",
        24000,
    )
    assert info.model == "tiny-distill/fm_decoder.onnx"
    assert engine.tokenizer_name == "espeak"


@pytest.mark.parametrize("speed", [0.8, 1.0, 1.5, 2.0])
def test_segment_audio_length_matches_the_frame_count_with_the_speed_fix(engine, speed):
    audio = engine.segment_audio("반갑습니다.", speed=speed)
    trace = engine.traces[-1]
    prompt = engine.prompts.get(engine.default_voice(), "ko").first
    assert trace.prompt_frames == prompt.frames
    rate = engine.prompts.get(engine.default_voice(), "ko").frames_per_token
    assert trace.frames == prompt.frames + math.ceil(rate * trace.tokens / speed - 1e-9)
    assert audio.size == (trace.frames - prompt.frames - 1) * 256


def test_faster_speech_is_shorter(engine):
    slow = engine.segment_audio("오늘은 배터리를 봅니다.", speed=0.8)
    fast = engine.segment_audio("오늘은 배터리를 봅니다.", speed=1.6)
    assert fast.size < slow.size * 0.6


def test_same_seed_and_text_give_identical_samples(engine, spoken):
    first = spoken.audio
    _, again = synthesize(engine, MULTI, seed=MULTI_SEED)
    _, other = synthesize(engine, MULTI, seed=MULTI_SEED + 1)
    assert np.array_equal(first, again)
    assert first.size == other.size and not np.array_equal(first, other)


def test_settings_seed_is_the_default_seed(tiny_model_dir, tmp_path):
    # The voice named in the requests, not set as the default: load() skips its warm-up sentence.
    engine = create(engine_config(tiny_model_dir, tmp_path, seed=11, ref_wav=None))
    engine.load()
    try:
        voice = Voice(str(tiny_model_dir / "reference_ko.wav"))
        _, by_setting = synthesize(engine, "안녕하세요.", voice=voice)
        _, by_request = synthesize(engine, "안녕하세요.", seed=11, voice=voice)
        assert np.array_equal(by_setting, by_request)
    finally:
        engine.close()


def test_multi_sentence_text_streams_several_chunks_and_the_first_before_later_segments(engine):
    stream = engine.stream(SynthesisRequest(MULTI, seed=1))
    first_chunk = next(chunk for chunk in stream if chunk.size)  # empty ones: step boundaries
    assert first_chunk.size > 0
    assert len(engine.traces) == 1  # the first audio left before the second segment was computed
    rest = list(stream)
    assert len(rest) >= 1
    short, packed = engine.traces[0], engine.traces[1]
    assert short.text == "안녕하세요."
    assert short.frames - short.prompt_frames < (packed.frames - packed.prompt_frames) / 2
    assert len(engine.traces) == 2  # the two later sentences were packed into one segment


def test_the_stream_pauses_after_every_decoder_call_with_an_empty_chunk(spoken):
    """So the engine thread can cancel an abandoned preview, or pause a batch section, within one call."""
    boundaries, audio_before_first_boundary = 0, 0
    for chunk in spoken.chunks:
        if chunk.size == 0:
            boundaries += 1
        elif boundaries == 0:
            audio_before_first_boundary += chunk.size
    assert boundaries == sum(len(trace.step_seconds) for trace in spoken.traces) == 4 * len(spoken.traces)
    assert audio_before_first_boundary == 0


def test_stream_is_the_cross_faded_join_of_its_segments_with_edge_silence_cut(engine, spoken):
    streamed = spoken.audio
    prompt = engine.prompts.get(engine.default_voice(), "ko").rest
    rate = engine.prompts.get(engine.default_voice(), "ko").frames_per_token
    segments = engine.plan(MULTI, "ko", prompt, 1.0, True, rate)
    parts = [engine.segment_audio(text, seed=MULTI_SEED + i, first=i == 0) for i, text in enumerate(segments)]
    expected = trim_edge_silence(crossfade_join(parts, 24000, 100.0), 24000)
    assert streamed.size == expected.size
    assert np.allclose(streamed, expected, atol=1e-6)


def test_output_is_float32_within_full_scale(spoken):
    chunks, audio = spoken.chunks, spoken.audio
    assert all(c.dtype == np.float32 for c in chunks)
    assert np.abs(audio).max() <= 1.0 and np.abs(audio).max() > 0.01


def test_request_transcript_overrides_the_sidecar(engine, tiny_model_dir):
    wav = str(tiny_model_dir / "reference_ko.wav")
    whole = PromptOptions(max_seconds=30.0, first_max_seconds=2.0)  # no bound: the whole transcript counts
    prompts = PromptCache(engine.prompts.sample_rate, engine.prompts.spectrum, engine.prompts.tokenize, whole)
    sidecar = prompts.get(Voice(wav), "ko").rest
    given = prompts.get(Voice(wav, "안녕하세요, 오늘은 발표를 시작하겠습니다 여러분"), "ko").rest
    assert len(given.tokens) > len(sidecar.tokens)


def test_prompt_features_are_computed_once_per_voice(engine, tiny_model_dir, tmp_path, monkeypatch):
    wav = tmp_path / "voice.wav"
    wav.write_bytes((tiny_model_dir / "reference_ko.wav").read_bytes())
    wav.with_suffix(".txt").write_text("안녕하세요, 오늘은 발표를 시작하겠습니다.", encoding="utf-8")
    builds = []
    original = engine.prompts.build
    monkeypatch.setattr(
        engine.prompts, "build", lambda voice, lang: builds.append(voice) or original(voice, lang)
    )
    for _ in range(3):
        list(engine.stream(SynthesisRequest("네, 좋아요.", voice=Voice(str(wav)))))
    assert len(builds) == 1


def test_prompt_is_trimmed_and_bounded(engine):
    prompts = engine.prompts.get(engine.default_voice(), "ko")
    options = engine.options.prompt
    assert prompts.rest.seconds <= options.max_seconds + options.trailing_silence_s + 0.01
    assert prompts.first.frames <= prompts.rest.frames
    assert prompts.first.text[-1] in ",."


def test_distill_defaults_apply_unless_settings_override(tiny_model_dir, tmp_path):
    # No default voice: load() then skips its warm-up sentence (8 decoder steps here), which these
    # values do not depend on; they are chosen from the model's files and metadata alone.
    unvoiced = {"ref_wav": None}
    engine = create(engine_config(tiny_model_dir, tmp_path, num_steps=None, guidance_scale=None, **unvoiced))
    engine.load()
    engine.close()
    assert (engine.num_steps, engine.guidance_scale) == (8, 3.0)
    custom = create(engine_config(tiny_model_dir, tmp_path, num_steps=6, guidance_scale=2.0, **unvoiced))
    custom.load()
    custom.close()
    assert (custom.num_steps, custom.guidance_scale) == (6, 2.0)


def test_a_later_section_packs_its_sentences_into_one_segment_with_the_full_prompt(engine):
    chunks = list(engine.stream(SynthesisRequest(MULTI, seed=1, early_audio=False)))
    assert len(engine.traces) == 1
    assert engine.traces[0].prompt_frames == engine.prompts.get(engine.default_voice(), "ko").rest.frames
    assert sum(c.size for c in chunks) > 0


@pytest.mark.parametrize("speed", [0.5, 0.25])
def test_a_slow_preview_says_its_first_word_in_one_segment(engine, speed):
    """At speed 0.5 the early first segment's bound held less than "안녕하세요.": the lecture's first
    slide was planned "안녕하세" + "요. 오늘은 ...", two segments joined by a cross-fade mid-word."""
    prompts = engine.prompts.get(engine.default_voice(), "ko")
    text = "안녕하세요. 오늘은 전기차 배터리가 어떻게 작동하는지 함께 살펴보겠습니다."
    segments = engine.plan(text, "ko", prompts.rest, speed, True, prompts.frames_per_token)
    assert segments[0] == "안녕하세요."
    assert " ".join(segments).split() == text.split()


@pytest.mark.parametrize("speed", [1.0, 2.0])
def test_a_one_word_first_sentence_is_not_a_segment_of_its_own_inside_the_cross_fade(engine, speed):
    """ "네." was the whole first segment: 0.1 s of audio at speed 2, nearly all of it inside the 100 ms
    cross-fade into the next segment."""
    text = "네. 오늘은 전기차 배터리가 어떻게 작동하는지 함께 살펴보겠습니다."
    list(engine.stream(SynthesisRequest(text, seed=1, speed_factor=speed)))
    first = engine.traces[0]
    assert first.text.startswith("네. 오늘은")
    assert first.samples > 4 * engine.info.sample_rate * engine.options.crossfade_ms / 1000


def test_an_unknown_language_is_refused_before_synthesis_and_the_known_ones_are_listed(engine):
    from npu_worker.protocol import UnknownLanguage

    engine.check_language("ko")
    with pytest.raises(UnknownLanguage, match="'xx-nowhere'.*it knows: .*\\bko\\b"):
        engine.check_language("xx-nowhere")


def test_a_cut_prompt_keeps_the_voices_speaking_rate(engine):
    """The short first prompt ("안녕하세요," and a pause) once set the first segment's frame count from its
    own rate: ≈ 45 % more frames per token than the rest, slower speech and more decoder work."""
    prompts = engine.prompts.get(engine.default_voice(), "ko")
    assert prompts.first.frames < prompts.rest.frames
    per_token = {}
    for first in (True, False):
        engine.segment_audio("오늘은 전기차 배터리를 살펴보겠습니다.", first=first)
        trace = engine.traces[-1]
        per_token[first] = (trace.frames - trace.prompt_frames) / trace.tokens
    assert per_token[True] == pytest.approx(per_token[False], abs=1 / 20)
    assert per_token[False] == pytest.approx(prompts.frames_per_token, abs=1 / 20)


def test_a_softly_spoken_opening_leaves_the_first_segment_as_loud_as_the_rest(
    engine, tiny_model_dir, tmp_path
):
    """The short first prompt is the reference's opening; restored to that part's level, a reference
    whose first words are soft made the first segment ~9 dB quieter than the rest of the request."""
    samples, rate = read_wav((tiny_model_dir / "reference_ko.wav").read_bytes())
    samples = samples.copy()
    samples[: int(1.3 * rate)] *= 0.3  # "안녕하세요," softly, then the rest
    wav = tmp_path / "soft_start.wav"
    wav.write_bytes(wav_bytes(samples, rate))
    wav.with_suffix(".txt").write_text((tiny_model_dir / "reference_ko.txt").read_text("utf-8"), "utf-8")
    voice = Voice(str(wav))
    assert engine.prompts.get(voice, "ko").first.frames < engine.prompts.get(voice, "ko").rest.frames
    text = "오늘은 전기차 배터리를 살펴보겠습니다."
    level = {
        first: np.sqrt(
            np.mean(np.square(engine.segment_audio(text, voice=voice, first=first), dtype=np.float64))
        )
        for first in (True, False)
    }
    assert abs(20 * np.log10(level[True] / level[False])) < 1.5


def test_an_opening_louder_than_the_rest_is_fed_to_the_model_at_the_rests_level(
    engine, tiny_model_dir, tmp_path
):
    """The model speaks as loud as its prompt: an opening above the RMS target (left as it is) and the
    rest below it (scaled up to the target) were fed 2.6 dB apart, so the first segment came out louder."""
    samples, rate = read_wav((tiny_model_dir / "reference_ko.wav").read_bytes())
    samples = samples.copy()
    samples[: int(1.3 * rate)] *= 3.0  # "안녕하세요," loudly, then the rest softly
    samples[int(1.3 * rate) :] *= 0.5
    wav = tmp_path / "loud_start.wav"
    wav.write_bytes(wav_bytes(samples, rate))
    wav.with_suffix(".txt").write_text((tiny_model_dir / "reference_ko.txt").read_text("utf-8"), "utf-8")
    prompts = engine.prompts.get(Voice(str(wav)), "ko")
    assert prompts.first.frames < prompts.rest.frames and prompts.first.rms == prompts.rest.rms

    def fed_db(prompt):
        return 10 * np.log10(np.mean(np.exp(2 * prompt.features.astype(np.float64) / FEAT_SCALE)))

    assert abs(fed_db(prompts.first) - fed_db(prompts.rest)) < 1.0


def test_a_stream_paused_between_steps_for_another_resumes_to_the_same_samples(engine, spoken):
    """What the engine thread does when a preview arrives during a batch section: same seed, same audio."""
    alone = spoken.audio
    paused = engine.stream(SynthesisRequest(MULTI, seed=MULTI_SEED))
    parts, boundaries = [], 0
    while boundaries < 2:  # into the first segment's sampling
        chunk = next(paused)
        boundaries += chunk.size == 0
        parts.append(chunk)
    other = np.concatenate(list(engine.stream(SynthesisRequest("다른 미리 듣기 문장입니다.", seed=9))))
    parts.extend(paused)
    assert other.size > 0
    assert np.array_equal(np.concatenate(parts), alone)


def test_load_speaks_one_short_first_segment_with_the_default_voice(loaded):
    """The warm-up: the first request then finds onnxruntime's first runs and the sampler's generator
    done (benchmarks/PREVIEW_LATENCY.md: cold vs idle first audio). On the module's engine, loaded with
    this test's config (a second load of the same files cost ≈ 3 s of CPU), as load() left it."""
    lang, text = WARM_UP
    assert loaded.traces and text.startswith(loaded.traces[0].text)
    assert len(loaded.traces[0].step_seconds) == loaded.engine.num_steps
    assert loaded.load_phase.startswith("warming up")


def _one_segment(engine: ZipVoiceEngine, text: str, tokens: list[int], prompt: Prompt) -> SegmentTrace:
    """synthesis.segment_pieces run to its end on the loaded engine's own sessions; its trace."""
    trace = SegmentTrace(text, len(tokens), prompt.frames, 0)
    args = (engine.options, text, tokens, prompt, 1.0, 0, engine.num_steps, None, trace)
    list(synthesis.segment_pieces(engine.models, engine.vocoder, *args))
    return trace


def test_a_segment_whose_decoder_gives_non_finite_features_is_an_engine_error_naming_it(engine):
    """NaN in the prompt's features come out of the decoder: the segment ends in EngineError naming its
    text once the sampler has run its steps, never in NaN audio."""
    prompt = engine.prompts.get(engine.default_voice(), "ko").rest
    poisoned = dataclasses.replace(prompt, features=np.full_like(prompt.features, np.nan))
    with pytest.raises(EngineError, match="the decoder gave non-finite features for '독이 든 목소리'$"):
        _one_segment(engine, "독이 든 목소리", list(prompt.tokens), poisoned)


def test_a_segment_the_encoder_fails_on_is_an_engine_error_with_the_runtimes_words(engine):
    """A token id past the encoder's table (onnxruntime's Gather refuses it): EngineError naming the
    text and saying onnxruntime's words, not the runtime's own exception."""
    prompt = engine.prompts.get(engine.default_voice(), "ko").rest
    with pytest.raises(EngineError, match=r"synthesis of '없는 토큰' failed: .*Gather"):
        _one_segment(engine, "없는 토큰", [10**6], prompt)
