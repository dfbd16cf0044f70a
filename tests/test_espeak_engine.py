"""The embedded espeak-ng engine and its ctypes binding, on the real library from espeakng-loader."""

from __future__ import annotations

import threading
import unicodedata
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import soxr

from npu_worker.audio import audible_onset
from npu_worker.engine.base import Engine, SynthesisRequest, Voice
from npu_worker.engine.espeak import EspeakConfig, EspeakEngine, create, resample_pcm16
from npu_worker.engine.espeak_lib import BUFFER_MS, another_espeak, clause_punctuation, get_espeak
from npu_worker.protocol import EmptyText, EngineError, UnknownLanguage
from tests.timing import seconds

GREETING = "안녕하세요. 반갑습니다."
LONG_TEXT = "오늘은 인공지능 음성 합성에 대해 이야기하겠습니다. " * 8


@pytest.fixture(scope="module")
def engine() -> EspeakEngine:
    engine = EspeakEngine()
    engine.load()
    return engine


def synthesize(engine: EspeakEngine, text: str, **options) -> tuple[list[np.ndarray], np.ndarray]:
    chunks = list(engine.stream(SynthesisRequest(text, **options)))
    return chunks, np.concatenate(chunks)


def test_engine_satisfies_the_engine_contract(engine):
    assert isinstance(engine, Engine)
    assert isinstance(create(EspeakConfig()), EspeakEngine)


def test_info_reports_espeak_ng_on_cpu_at_24khz(engine):
    info = engine.info
    assert (info.backend, info.device, info.precision, info.sample_rate) == (
        "espeak-ng",
        "cpu",
        "int16",
        24000,
    )
    assert info.model == f"espeak-ng-{get_espeak().version}"
    assert get_espeak().version[0].isdigit()


def test_espeak_runs_synchronously_at_22050_hz():
    assert get_espeak().sample_rate == 22050


def test_korean_text_gives_audible_24khz_speech_of_plausible_duration(engine):
    chunks, audio = synthesize(engine, GREETING)
    assert all(chunk.dtype == np.float32 for chunk in chunks)
    assert np.abs(audio).max() <= 1.0
    assert audible_onset(audio, 24000) is not None
    assert np.sqrt(np.mean(audio**2)) > 0.01
    # Ten syllables of Korean at espeak's default rate: somewhere between one and five seconds.
    assert 1.0 < audio.size / 24000 < 5.0


@pytest.mark.parametrize(
    ("given", "composed"),
    [
        # 5.2 s against 3.7 s before (each conjoining jamo read as a letter)
        (
            unicodedata.normalize("NFD", "오늘은 인공지능 음성 합성에 대해 이야기하겠습니다."),
            "오늘은 인공지능 음성 합성에 대해 이야기하겠습니다.",
        ),
        ("１２３.", "123."),  # 7 ms of silence before: espeak has no reading for full-width digits
        (
            "\x01450S오늘은 인공지능 음성 합성입니다.",
            " 450S오늘은 인공지능 음성 합성입니다.",
        ),  # an embedded rate
    ],
    ids=["nfd-hangul", "full-width-digits", "control-character"],
)
def test_decomposed_full_width_or_control_text_sounds_as_its_readable_form(engine, given, composed):
    _, expected = synthesize(engine, composed)
    played: list[np.ndarray] = []
    engine.stream_into(SynthesisRequest(given), lambda chunk: played.append(chunk) or True)
    for audio in (synthesize(engine, given)[1], np.concatenate(played)):
        # the same speech, byte for byte (`espeak_state`: it was give or take a few samples)
        assert audio.tobytes() == expected.tobytes()


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "셀 하나의 전압은 보통 3.7V 정도입니다.",
            "셀 하나의 전압은 보통 3 점 칠 볼트 정도입니다.",
        ),  # "삼 칠 V"
        ("잔량이 80%를 넘으면 -5.5도", "잔량이 80 퍼센트를 넘으면 마이너스 5 점 오도"),  # English, sign lost
    ],
    ids=["decimal-and-unit", "percent-and-minus"],
)
def test_korean_numbers_and_symbols_sound_as_their_words(engine, written, said):
    _, expected = synthesize(engine, said)
    audio = synthesize(engine, written)[1]
    assert abs(audio.size - expected.size) < 0.01 * expected.size


def test_a_long_korean_passage_without_punctuation_is_said_whole(engine):
    """espeak-ng dropped what a clause held past ~150 characters of Korean: 60 words of the lecture
    without their marks were 20.4 s instead of 33.0 s."""
    words = (
        "리튬 이온 배터리는 양극 음극 분리막 그리고 전해질 이렇게 네 가지 핵심 요소로 이루어져 있습니다 " * 5
    ).split()
    with_commas = ", ".join(" ".join(words[i : i + 10]) for i in range(0, len(words), 10))
    plain = synthesize(engine, " ".join(words))[1]
    assert plain.size > 0.9 * synthesize(engine, with_commas)[1].size


@pytest.mark.parametrize(
    "text", ["😀", "...!!!", "\u200b\u200b", "[[(("], ids=["emoji", "marks", "zero-width", "brackets"]
)
def test_a_text_espeak_says_nothing_for_is_empty_text_and_hands_out_nothing(engine, text):
    """It was an `ok` with 7 ms of digital silence (ZipVoice: EmptyText), a wav the lecture kept."""
    with pytest.raises(EmptyText, match="gives no speech"):
        list(engine.stream(SynthesisRequest(text)))
    played: list[np.ndarray] = []
    with pytest.raises(EmptyText, match="gives no speech"):
        engine.stream_into(SynthesisRequest(text), lambda chunk: played.append(chunk) or True)
    assert played == []


def test_leading_silence_is_held_until_the_speech_and_kept(engine):
    _, streamed = synthesize(engine, "..., 안녕하세요.")
    played: list[np.ndarray] = []
    engine.stream_into(SynthesisRequest("..., 안녕하세요."), lambda chunk: played.append(chunk) or True)
    assert audible_onset(np.concatenate(played), 24000) == audible_onset(streamed, 24000)


def test_long_sentence_streams_in_many_chunks(engine):
    chunks, audio = synthesize(engine, LONG_TEXT)
    assert len(chunks) > 10
    assert audio.size / 24000 > 10.0


def test_resampled_chunks_join_exactly_like_a_one_shot_resample():
    pcm = list(get_espeak().synthesize(LONG_TEXT, voice="ko"))
    assert len(pcm) > 10
    streamed = np.concatenate(list(resample_pcm16(pcm, 22050, 24000)))
    whole = soxr.resample(np.concatenate(pcm).astype(np.float32) / 32768.0, 22050, 24000, quality="HQ")
    assert streamed.size == whole.size
    np.testing.assert_allclose(streamed, whole, atol=1e-5)


def test_speed_two_is_clearly_shorter_than_speed_one(engine):
    _, normal = synthesize(engine, LONG_TEXT, speed_factor=1.0)
    _, fast = synthesize(engine, LONG_TEXT, speed_factor=2.0)
    assert fast.size < 0.65 * normal.size


def test_closing_a_stream_early_stops_espeak_promptly():
    library = get_espeak()
    full = sum(chunk.size for chunk in library.synthesize(LONG_TEXT, voice="ko"))
    stream = library.synthesize(LONG_TEXT, voice="ko")
    next(stream)
    stream.close()
    # The channel holds at most a second of audio ahead of the reader: espeak stopped long before the end.
    assert stream.produced_samples < 0.25 * full
    assert list(stream) == []


def test_synthesis_after_an_early_close_works(engine):
    _, expected = synthesize(engine, GREETING)
    stream = engine.stream(SynthesisRequest(LONG_TEXT))
    next(stream)
    stream.close()
    _, again = synthesize(engine, GREETING)
    assert audible_onset(again, 24000) is not None
    # espeak varies a little between runs; nothing of the aborted text may leak into this one.
    assert abs(again.size - expected.size) < 0.05 * expected.size


def test_calls_from_two_threads_take_turns_and_both_work(engine):
    library = get_espeak()

    def speak() -> int:
        return sum(chunk.size for chunk in engine.stream(SynthesisRequest(LONG_TEXT)))

    def speak_here() -> int:
        made: list[int] = []
        engine.stream_into(SynthesisRequest(LONG_TEXT), lambda chunk: made.append(chunk.size) is None)
        return sum(made)

    def phonemes() -> str:
        return library.phonemize(LONG_TEXT, "ko")

    with ThreadPoolExecutor(max_workers=3) as pool:
        samples, here, ipa = pool.submit(speak), pool.submit(speak_here), pool.submit(phonemes)
        assert samples.result(timeout=seconds(30)) / 24000 > 10.0
        assert abs(here.result(timeout=seconds(30)) - samples.result()) < 0.05 * samples.result()
        assert len(ipa.result(timeout=seconds(30))) > 50
    assert library.streaming_thread is not None and library.streaming_thread.is_alive()


def test_stream_into_runs_on_the_calling_thread_and_equals_the_stream(engine):
    request = SynthesisRequest(LONG_TEXT, speed_factor=1.3)
    threads: set[int] = set()
    chunks: list[np.ndarray] = []

    def sink(chunk: np.ndarray) -> bool:
        threads.add(threading.get_ident())
        chunks.append(chunk)
        return True

    engine.stream_into(request, sink)
    assert threads == {threading.get_ident()}  # espeak called back on this thread: no hand-off
    assert len(chunks) > 10 and all(chunk.dtype == np.float32 for chunk in chunks)
    _, streamed = synthesize(engine, LONG_TEXT, speed_factor=1.3)
    # the same speech, byte for byte (`espeak_state`: it was give or take a few samples)
    assert np.concatenate(chunks).tobytes() == streamed.tobytes()


def test_stream_into_hands_the_first_audio_at_once_then_gathers_it(engine):
    sizes: list[int] = []
    engine.stream_into(SynthesisRequest(LONG_TEXT), lambda chunk: sizes.append(chunk.size) is None)
    one_buffer = (BUFFER_MS / 1000 + 0.01) * 24000
    assert sizes[0] <= one_buffer  # one espeak buffer: the first frame waits for nothing
    assert min(sizes[5:-2]) >= 0.5 * 24000  # later, espeak's buffers go ~0.6 s at a time
    assert len(sizes) < sum(sizes) / 24000 / 0.5 + 6  # a few hand-offs per sentence, not one per buffer


def test_each_callback_brings_buffer_ms_of_audio_and_the_size_changes_no_sample():
    """Fewer, larger buffers mean fewer GIL hand-offs per sentence; the audio itself is espeak's own.
    Two fresh instances: one that has synthesised before (and been stopped midway) may differ a little."""
    library, sixty = another_espeak(), another_espeak(buffer_ms=60)
    assert library.buffer_ms == get_espeak().buffer_ms == BUFFER_MS
    ours: list[np.ndarray] = []
    theirs: list[np.ndarray] = []
    library.synthesize_into(LONG_TEXT, lambda chunk: ours.append(chunk.copy()) is None, voice="ko")
    sixty.synthesize_into(LONG_TEXT, lambda chunk: theirs.append(chunk.copy()) is None, voice="ko")
    buffer = library.sample_rate * BUFFER_MS // 1000
    assert abs(int(np.median([c.size for c in ours])) - buffer) <= 2  # full buffers, but for clause ends
    assert len(theirs) > 2.5 * len(ours)
    assert np.array_equal(np.concatenate(ours), np.concatenate(theirs))


def test_a_sink_saying_no_stops_espeak_at_once():
    library = get_espeak()
    full = library.synthesize_into(LONG_TEXT, lambda chunk: True, voice="ko")
    taken: list[np.ndarray] = []
    made = library.synthesize_into(LONG_TEXT, lambda chunk: taken.append(chunk) or len(taken) < 2)
    assert len(taken) == 2
    assert made == sum(chunk.size for chunk in taken) < 0.1 * full
    assert library.synthesize_into(GREETING, lambda chunk: True) > 0  # and it speaks again


def test_what_a_sink_raises_comes_out_after_espeak_stopped():
    library = get_espeak()

    def failing(chunk: np.ndarray) -> bool:
        raise ValueError("the sink broke")

    with pytest.raises(ValueError, match="the sink broke"):
        library.synthesize_into(LONG_TEXT, failing)
    assert library.synthesize_into(GREETING, lambda chunk: True) > 0


def test_espeak_cannot_be_called_from_its_own_callback():
    library = get_espeak()
    with pytest.raises(RuntimeError, match="own synth callback"):
        library.synthesize_into(GREETING, lambda chunk: bool(library.phonemize("안녕", "ko")))


def test_phonemize_korean_gives_ipa():
    ipa = get_espeak().phonemize("안녕하세요", "ko")
    assert ipa
    assert not any("\uac00" <= char <= "\ud7a3" for char in ipa)  # no Hangul left
    assert "ɐ" in ipa or "ʌ" in ipa


def test_phonemize_keeps_clause_and_sentence_punctuation():
    ipa = get_espeak().phonemize("안녕하세요, 여러분. 반갑습니다!", "ko")
    assert ", " in ipa
    assert "." in ipa
    assert ipa.endswith("!")


def test_phonemize_drops_language_switch_markers():
    ipa = get_espeak().phonemize("Hello 여러분", "ko")
    assert "(" not in ipa and ")" not in ipa


def test_clause_punctuation_is_the_mark_espeak_stopped_at():
    assert clause_punctuation("안녕하세요, 여", final=False) == ","
    assert clause_punctuation("할까요? 좋", final=False) == "?"
    assert clause_punctuation("첫 문장입니다。 둘", final=False) == "."
    assert clause_punctuation("3.5 percent", final=True) == ""
    assert clause_punctuation("끝!  ", final=True) == "!"


def test_unknown_voice_is_a_named_error():
    with pytest.raises(EngineError, match="xx-nowhere"):
        get_espeak().phonemize("안녕", "xx-nowhere")
    with pytest.raises(EngineError, match="xx-nowhere"):
        get_espeak().synthesize("안녕", voice="xx-nowhere")


def test_voices_lists_korean():
    assert any("ko" in voice.languages for voice in get_espeak().voices())


@pytest.mark.parametrize(
    ("lang", "voice"),
    [("ko", "ko"), ("ko-KR", "ko"), ("ko_kr", "ko"), ("en", "gmw/en-US"), ("zh", "sit/cmn")],
)
def test_common_language_codes_map_to_espeak_voices(engine, lang, voice):
    assert engine.voice_for(lang) == voice


def test_the_voice_map_holds_voices_not_every_spelling_a_caller_sends():
    """Each distinct `lang` string ("ko-x1", "ko-x2", " KO  ", ...) stayed in the map for good."""
    engine = EspeakEngine()
    engine.load()
    korean = engine.voice_for("ko")
    for i in range(300):
        assert engine.voice_for(f"ko-x{i}") == engine.voice_for(" KO" + " " * (i % 30)) == korean
    assert engine.voice_for("en_US") == engine.voice_for("en-us")
    assert len(engine._voices) <= 3  # "ko", "en-us" and "en"


def test_a_synthesis_looks_its_voice_up_once_not_at_every_request(engine, monkeypatch):
    """Every synthesis asked the library for the voice its engine had already resolved, and the
    library compared it with the voice list again (≈ 70 of 141 voices, 16–41 µs a request, in the espeak
    child for every preview). An identifier found once names itself after; other names are still
    looked up, and an unknown one is still refused."""
    from npu_worker.engine import espeak_lib

    looked_up: list[str] = []
    find = espeak_lib.find_voice
    monkeypatch.setattr(
        espeak_lib, "find_voice", lambda voices, name: looked_up.append(name) or find(voices, name)
    )
    for lang in ("ko", "en", "ko", "en", "ko"):
        engine.stream_into(SynthesisRequest("가나", lang), lambda chunk: True)
    assert looked_up.count("ko") <= 1 and looked_up.count("gmw/en-US") <= 1, looked_up
    assert get_espeak().require_voice("Korean") == "ko" and looked_up[-1] == "Korean"
    with pytest.raises(EngineError, match="xx-nowhere"):
        get_espeak().require_voice("xx-nowhere")


def test_unknown_language_is_a_client_error_naming_it_and_the_known_ones(engine):
    with pytest.raises(UnknownLanguage, match="xx-nowhere") as raised:
        list(engine.stream(SynthesisRequest("안녕하세요", lang="xx-nowhere")))
    assert raised.value.http_status == 400
    assert "ko" in raised.value.message.split("it knows: ")[1].split(", ")
    with pytest.raises(UnknownLanguage):
        engine.check_language("xx-nowhere")
    engine.check_language("ko-KR")  # known: returns quietly


def test_english_text_speaks_with_the_english_voice(engine):
    _, audio = synthesize(engine, "Hello, this is a test.", lang="en")
    assert audible_onset(audio, 24000) is not None


def test_reference_voice_is_ignored(engine, tmp_path):
    _, audio = synthesize(engine, GREETING, voice=Voice(ref_wav=str(tmp_path / "missing.wav")))
    assert audible_onset(audio, 24000) is not None
