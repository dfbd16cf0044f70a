"""What a caller can send the ZipVoice engine that once cost memory, time or silence (tiny model, real
sessions): texts without spaces, transcripts that do not fit their audio, broken or endless references,
and texts with nothing to say. Most checks stop before the decoder, so the file runs in seconds."""

from __future__ import annotations

import io
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import soundfile

from npu_worker.audio import wav_bytes
from npu_worker.engine.base import SynthesisRequest, Voice
from npu_worker.engine.zipvoice import cost
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine, create
from npu_worker.engine.zipvoice.tokenizer import add_punctuation
from npu_worker.protocol import BadRequest, EmptyText, EngineError, InvalidAudio, ModelLoadError
from tests.zipvoice.conftest import engine_config

SR = 24000


@pytest.fixture(scope="module")
def engine(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZipVoiceEngine]:
    engine = create(engine_config(tiny_model_dir, tmp_path_factory.mktemp("state")))
    engine.load()
    yield engine
    engine.close()  # and its espeak child (else left running to the session's end)


def voice_with(tmp_path: Path, samples: np.ndarray, text: str | None, name: str = "v") -> Voice:
    wav = tmp_path / f"{name}.wav"
    wav.write_bytes(wav_bytes(samples, SR))
    if text is not None:
        wav.with_suffix(".txt").write_text(text, encoding="utf-8")
    return Voice(str(wav))


def reference(tiny_model_dir: Path) -> tuple[bytes, str]:
    wav = tiny_model_dir / "reference_ko.wav"
    return wav.read_bytes(), wav.with_suffix(".txt").read_text(encoding="utf-8").strip()


def speech_like(seconds: float) -> np.ndarray:
    """A tone with a syllable-rate envelope and no pause: nothing to cut the prompt at."""
    t = np.arange(int(SR * seconds)) / SR
    return (0.2 * np.sin(2 * np.pi * 180 * t) * (0.6 + 0.4 * np.sin(2 * np.pi * 5 * t))).astype(np.float32)


@pytest.mark.parametrize(("text", "lang"), [("가" * 1999, "ko"), ("你好世界" * 100, "zh")], ids=["ko", "zh"])
def test_text_without_spaces_plans_into_segments_within_the_bound(engine, text, lang):
    """Before, "가" * 1999 was one 71 s segment (9 GB RSS) and "你好世界" * 100 one segment for which
    onnxruntime asked for 86 GB in the decoder's attention."""
    prompts = engine.prompts.get(engine.default_voice(), lang)
    seconds_per_token = prompts.frames_per_token * 256 / SR
    for early in (True, False):
        segments = engine.plan(text, lang, prompts.rest, 1.0, early, prompts.frames_per_token)
        assert "".join(segments) == text
        tokens = [len(engine._token_ids(add_punctuation(s), lang)) for s in segments]
        assert len(segments) > 1
        assert max(tokens) * seconds_per_token <= cost.MAX_SEGMENT_SECONDS


def count_tokenized(engine, monkeypatch) -> list[int]:
    """From now on, `[0]` of the list returned counts the characters the engine's tokenizer is handed."""
    tokenize = engine._token_ids
    counted = [0]

    def counting(text: str, lang: str) -> list[int]:
        counted[0] += len(text)
        return tokenize(text, lang)

    monkeypatch.setattr(engine, "_token_ids", counting)
    return counted


@pytest.mark.parametrize(
    ("unit", "lang"), [("中", "ko"), ("😀. ", "ko")], ids=["han-in-korean", "emoji-sentences"]
)
def test_planning_hands_the_tokenizer_work_linear_in_the_text(engine, monkeypatch, unit, lang):
    """A "中" * 2000 Korean request took 10 s of the engine thread's time to plan before any synthesis
    (espeak spells each Han character out: a dozen tokens), and "😀. " * 666 1.4 s: each cut counted
    the rest of the text again, each empty sentence the first segment it grew."""
    prompts = engine.prompts.get(engine.default_voice(), lang)
    counted = count_tokenized(engine, monkeypatch)
    work = []
    for repeats in (300, 600):
        counted[0] = 0
        segments = engine.plan(unit * repeats, lang, prompts.rest, 1.0, True, prompts.frames_per_token)
        assert "".join(segments).replace(" ", "") == (unit * repeats).replace(" ", "")
        work.append(counted[0])
    assert work[1] < 2.5 * work[0], work


def test_a_long_latin_run_is_planned_with_counts_of_about_its_length(engine, monkeypatch):
    """A URL- or key-like run of 2 000 characters took 1.4 s of the engine thread to plan: espeak said
    the same ~157 tokens for any long word, so each cut searched pieces of up to 1 000 characters
    (150 000 characters counted, each espeak call quadratic in its word's length)."""
    prompts = engine.prompts.get(engine.default_voice(), "ko")
    counted = count_tokenized(engine, monkeypatch)
    text = "https://a.b/" + "x" * 1988
    segments = engine.plan(text, "ko", prompts.rest, 1.0, True, prompts.frames_per_token)
    assert "".join(segments) == text
    assert counted[0] < 4 * len(text), counted[0]


@pytest.mark.parametrize(
    ("transcript", "match"),
    [
        ("안녕하세요 " * 200, "1199 characters, more than"),  # 1 200 characters: 330 MB, 0.01 s of audio
        ("가나다 라마바 사아자 차카타 파하 " * 5, "too many for speech"),  # under the character bound
        (".", "no speakable words"),  # 92 s of audio for a short sentence
        ("...", "no speakable words"),
        ("아", "too few for speech"),  # one syllable for 3 s of speech
    ],
    ids=["1200-characters", "too-many-tokens", "full-stop", "dots", "one-syllable"],
)
def test_a_transcript_that_does_not_fit_the_reference_is_refused_before_anything_is_encoded(
    engine, tiny_model_dir, transcript, match
):
    wav = str(tiny_model_dir / "reference_ko.wav")
    with pytest.raises(BadRequest, match=match) as caught:
        engine.prompts.build(Voice(wav, transcript), "ko")
    assert caught.value.param == "ref_text"


def test_a_long_reference_without_pauses_gives_a_prompt_within_its_bound(engine, tmp_path):
    """Kept whole, a 60 s reference with no pause made one sentence take 93 s (RSS 9.9 GB)."""
    words = "오늘은 날씨가 맑고 바람이 조금 붑니다"
    voice = voice_with(tmp_path, speech_like(50.0), " ".join([words] * 24))
    prompts = engine.prompts.get(voice, "ko")
    bound = engine.options.prompt.max_seconds + engine.options.prompt.trailing_silence_s
    assert prompts.rest.seconds <= bound + 0.01
    assert prompts.first.seconds <= prompts.rest.seconds
    assert 0 < len(prompts.rest.tokens) < len(engine._token_ids(words, "ko")) * 24 / 10


def test_a_reference_longer_than_a_minute_is_refused_before_it_is_decoded(engine, tmp_path):
    wav = tmp_path / "long.wav"
    wav.write_bytes(wav_bytes(np.zeros(8000 * 61, dtype=np.float32), 8000))
    with pytest.raises(InvalidAudio, match="61.0 s long, the limit is 60 s"):
        engine.prompts.build(Voice(str(wav), "안녕하세요."), "ko")


def test_a_reference_with_nan_samples_is_invalid_audio_not_zero_samples_of_ok(
    engine, tiny_model_dir, tmp_path
):
    """NaN flowed through the RMS scaling into the decoder; the trim then dropped all of the output."""
    data, text = reference(tiny_model_dir)
    samples, rate = soundfile.read(io.BytesIO(data), dtype="float32")
    samples[1000:1010] = np.nan
    wav = tmp_path / "nan.wav"
    soundfile.write(wav, samples, rate, subtype="FLOAT")
    wav.with_suffix(".txt").write_text(text, encoding="utf-8")
    with pytest.raises(InvalidAudio, match="10 of .* samples are not finite numbers"):
        list(engine.stream(SynthesisRequest("안녕하세요.", voice=Voice(str(wav)))))


@pytest.mark.parametrize("text", ["...!!!", "😀", "\u200b\u200b\u200d"], ids=["marks", "emoji", "zero-width"])
def test_a_text_with_nothing_to_say_is_empty_text(engine, text):
    with pytest.raises(EmptyText, match="no speakable tokens"):
        list(engine.stream(SynthesisRequest(text)))


def test_a_silent_reference_is_invalid_audio(engine, tmp_path):
    voice = voice_with(tmp_path, np.zeros(SR * 2, dtype=np.float32), "안녕하세요.")
    with pytest.raises(InvalidAudio, match="no audible speech"):
        list(engine.stream(SynthesisRequest("안녕하세요.", voice=voice)))


def test_a_reference_without_a_transcript_is_a_bad_request_about_ref_text(engine, tiny_model_dir, tmp_path):
    data, _ = reference(tiny_model_dir)
    wav = tmp_path / "no_text.wav"
    wav.write_bytes(data)
    with pytest.raises(BadRequest, match="no_text.txt") as caught:
        list(engine.stream(SynthesisRequest("안녕하세요.", voice=Voice(str(wav)))))
    assert caught.value.param == "ref_text"


def test_a_text_whose_audio_is_all_trimmed_is_an_engine_error_never_an_ok_without_samples(engine):
    """The tiny model's random network says "네." as 0.2 s at -92 dBFS, which the edge trim removes
    whole: the section was `ok` with no samples."""
    assert np.abs(engine.segment_audio("네.")).max() < 1e-3  # what the model makes of it
    with pytest.raises(EngineError, match="gave no audible audio"):
        list(engine.stream(SynthesisRequest("네.")))


def test_decomposed_korean_is_spoken_as_the_composed_text(engine):
    """Text arrives in NFD (macOS, some PDFs): espeak read conjoining jamo as letters, and a cut between
    characters could part a syllable's jamo."""
    composed = "안녕하세요. 오늘은 배터리를 봅니다."
    decomposed = unicodedata.normalize("NFD", composed)
    audio = [
        np.concatenate(list(engine.stream(SynthesisRequest(t, "ko", seed=3)))) for t in (decomposed, composed)
    ]
    assert np.array_equal(audio[0], audio[1])


def test_spellings_of_one_language_share_the_voices_prompts(engine):
    """Each spelling of `lang` (" ko", "KO ", ...) built the prompts again (≈ 0.1 s on the tiny model) and
    pushed another voice's out of the 16 kept."""
    voice = engine.default_voice()
    prompts = engine.prompts.get(voice, "ko")
    assert all(engine.prompts.get(voice, spelling) is prompts for spelling in (" ko", "KO", "Ko\t", " kO  "))


def a_take(tiny_model_dir: Path, offset: float) -> tuple[np.ndarray, str]:
    """The test voice as a microphone records it: 0.8 s of room before and after, a 1.2 s pause in the
    middle, a faint hiss, and a constant `offset` (a cheap input's DC)."""
    data, text = reference(tiny_model_dir)
    voice, _ = soundfile.read(io.BytesIO(data), dtype="float32")
    room = np.zeros(int(SR * 0.8), dtype=np.float32)
    half = voice.size // 2
    take = np.concatenate([room, voice[:half], np.zeros(int(SR * 1.2), np.float32), voice[half:], room])
    hiss = 1e-4 * np.random.default_rng(0).standard_normal(take.size).astype(np.float32)
    return take + hiss + np.float32(offset), text


def test_a_recordings_dc_offset_is_not_taken_for_sound(engine, tiny_model_dir, tmp_path):
    """Silence was measured with the offset in it: at -34 dBFS of DC (0.02) no chunk of the take was quiet,
    so its edges and long pause stayed, and the voice's speaking rate, taken from the cleaned length, was
    1.8 times too slow (every segment as long); a take of nothing but that offset was "speech"."""
    rates = []
    for offset in (0.0, 0.02):
        samples, text = a_take(tiny_model_dir, offset)
        rates.append(engine.prompts.build(voice_with(tmp_path, samples, text, f"dc{offset}"), "ko"))
    clean, offset = rates
    assert offset.frames_per_token == pytest.approx(clean.frames_per_token, rel=0.02)
    assert offset.rest.frames == pytest.approx(clean.rest.frames, abs=2)
    silent = voice_with(tmp_path, np.full(SR * 3, 0.02, dtype=np.float32), "안녕하세요.", "dc_only")
    with pytest.raises(InvalidAudio, match="no audible speech"):
        engine.prompts.build(silent, "ko")


@pytest.mark.parametrize("rate", [1000, 655_350], ids=["1kHz", "655kHz"])
def test_a_reference_at_a_rate_no_recording_has_is_invalid_audio_before_it_is_decoded(engine, tmp_path, rate):
    """Uploads were held to 8-192 kHz, a ref_wav by path to nothing: at 1 kHz a hum of 500 Hz band became
    the voice; a 140 KB FLAC of 59 s at 655 kHz took 1.4 s and 370 MB to decode and resample to silence."""
    wav = tmp_path / "odd_rate.flac"
    soundfile.write(wav, speech_like(2.0)[: rate * 2], rate, format="FLAC")
    wav.with_suffix(".txt").write_text("안녕하세요, 오늘은 발표를 시작하겠습니다.", encoding="utf-8")
    with pytest.raises(InvalidAudio, match=f"the sample rate is {rate} Hz; a voice needs 8000-192000 Hz"):
        engine.prompts.build(Voice(str(wav)), "ko")


def test_a_text_espeak_cannot_be_given_is_the_engines_error_and_the_next_text_is_spoken(engine):
    """`_planned`'s own failure: a lone surrogate (the engine takes any str; a caller's JSON never
    carries one, msgspec refuses it) cannot be encoded for espeak's child. It is the engine's error in
    words, not a bare UnicodeEncodeError, and the phonemizer speaks the next text."""
    with pytest.raises(
        EngineError, match=r"^EngineError: preparing the text failed: 'utf-8' codec can't encode"
    ):
        list(engine.stream(SynthesisRequest("안녕\ud800하세요.")))
    assert sum(chunk.size for chunk in engine.stream(SynthesisRequest("안녕하세요."))) > 0


def test_an_operators_transcript_with_a_byte_that_is_not_utf8_is_refused_by_name(tiny_model_dir, tmp_path):
    """`--ref-text` with a byte that is not UTF-8 comes as a lone surrogate (Python's argv): the load
    failed as a bare "'utf-8' codec can't encode character '\\udcff'", naming neither the flag nor voice."""
    engine = create(engine_config(tiny_model_dir, tmp_path, ref_text="안녕\udcff하세요."))
    try:
        with pytest.raises(
            ModelLoadError, match=r"^ModelLoadError: default reference voice: ref_text is not UTF-8"
        ):
            engine.load()
    finally:
        engine.close()
