"""The voice library on its own: names that can never be paths, lookups, and v1 ref_wav resolution."""

from __future__ import annotations

import io
import os
import struct
import threading
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import soundfile

from npu_worker.audio import resample
from npu_worker.audio_decode import read_wav
from npu_worker.protocol import (
    InvalidAudio,
    RefWavNotAllowed,
    StateUnavailable,
    SynthParams,
    UnknownVoice,
    VoiceExists,
    VoiceNotFound,
)
from npu_worker.voices import (
    INLINE_IN_USE_FACTOR,
    UploadLimits,
    VoiceLibrary,
    decode_upload,
    is_voice_name,
)
from tests.openai_support import tone_wav

pytestmark = pytest.mark.allow_blocking  # plain filesystem calls, no event loop


@pytest.mark.parametrize("name", ["teacher", "ko-female_2", "v1.2", "A"])
def test_plain_names_are_voice_names(name):
    assert is_voice_name(name)


@pytest.mark.parametrize(
    "name",
    ["", "../x", "a/b", "a\\b", ".hidden", "..", "a..b", "x" * 65, "with space", "선생님", "a\x00b", "-x"],
)
def test_anything_path_like_is_not_a_voice_name(name):
    assert not is_voice_name(name)


def library_with_teacher(tmp_path: Path) -> VoiceLibrary:
    store = tmp_path / "voices"
    store.mkdir()
    tone_wav(store / "teacher.wav")
    (store / "teacher.txt").write_text("선생님 목소리\n", encoding="utf-8")
    return VoiceLibrary(store, default_wav=None)


def test_a_voice_name_resolves_to_its_files_and_a_given_transcript_wins(tmp_path):
    library = library_with_teacher(tmp_path)
    resolved = library.resolve_params(SynthParams(ref_wav="teacher"), roots=())
    assert resolved.ref_wav == str((tmp_path / "voices" / "teacher.wav").resolve())
    assert resolved.ref_text == "선생님 목소리"
    assert (
        library.resolve_params(SynthParams(ref_wav="teacher", ref_text="다른 말"), roots=()).ref_text
        == "다른 말"
    )


def test_a_path_is_still_checked_against_the_allowed_roots(tmp_path):
    library = library_with_teacher(tmp_path)
    outside = tmp_path / "elsewhere.wav"
    tone_wav(outside)
    with pytest.raises(RefWavNotAllowed):
        library.resolve_params(SynthParams(ref_wav=str(outside)), roots=(str(tmp_path / "voices"),))
    inside = library.resolve_params(SynthParams(ref_wav=str(outside)), roots=(str(tmp_path),))
    assert inside.ref_wav == str(outside.resolve())


def test_default_is_the_worker_reference_and_unknown_names_are_named_in_the_error(tmp_path):
    library = VoiceLibrary(tmp_path / "voices", default_wav="/srv/ref.wav", default_text="기준")
    default = library.require("default")
    assert (default.wav_path, default.text, default.source) == ("/srv/ref.wav", "기준", "default")
    with pytest.raises(UnknownVoice, match="nobody"):
        library.require("nobody")
    assert [voice.name for voice in library.all()] == ["default"]  # no voices directory yet


def test_only_the_most_recently_used_inline_voices_are_kept(tmp_path):
    library = VoiceLibrary(tmp_path / "voices", inline_keep=2)
    limits = UploadLimits(max_bytes=1 << 20, max_seconds=10.0)
    first = library.store_inline(tone_wav(seconds_long=1.0), "하나", limits)
    second = library.store_inline(tone_wav(seconds_long=1.1), "둘", limits)
    stamp = (tmp_path / "voices" / "inline" / f"{first}.txt").stat().st_mtime_ns
    old = stamp - 600 * 10**9  # used ten minutes ago: past INLINE_IN_USE_SECONDS
    os.utime(tmp_path / "voices" / "inline" / f"{second}.txt", ns=(old, old))
    wav_before = (tmp_path / "voices" / "inline" / f"{first}.wav").stat().st_mtime_ns
    assert library.store_inline(tone_wav(seconds_long=1.0), "하나", limits) == first  # reused: marked used
    assert (tmp_path / "voices" / "inline" / f"{first}.wav").stat().st_mtime_ns == wav_before
    third = library.store_inline(tone_wav(seconds_long=1.2), "셋", limits)
    assert library.find(second) is None  # the least recently used one went
    assert library.find(first) is not None and library.find(third) is not None


def test_an_inline_voice_used_a_moment_ago_is_kept_past_the_bound(tmp_path):
    """Its request is still to read it when its section runs: pruning it then made a 400 or a 500."""
    library = VoiceLibrary(tmp_path / "voices", inline_keep=1)
    limits = UploadLimits(max_bytes=1 << 20, max_seconds=10.0)
    names = [library.store_inline(tone_wav(seconds_long=1.0 + n / 10), f"{n}", limits) for n in range(3)]
    assert all(library.find(name) is not None for name in names)


def test_speaking_with_an_inline_voice_is_a_use_that_keeps_it(tmp_path):
    """A stream socket stores its session's inline voice once, then each sentence is a job that names
    it: only the store counted as a use, so a session past 2 minutes lost its voice to others' audio
    (UnknownVoice mid-conversation), though speaking with it is its use."""
    library = VoiceLibrary(tmp_path / "voices", inline_keep=1)
    limits = UploadLimits(max_bytes=1 << 20, max_seconds=10.0)
    session = library.store_inline(tone_wav(seconds_long=1.0), "하나", limits)
    transcript = tmp_path / "voices" / "inline" / f"{session}.txt"
    old = transcript.stat().st_mtime_ns - 600 * 10**9  # stored ten minutes ago
    os.utime(transcript, ns=(old, old))
    resolved = library.resolve_params(SynthParams(ref_wav=session), [str(tmp_path)])  # a sentence
    assert resolved.ref_wav is not None and resolved.ref_text == "하나"
    others = [library.store_inline(tone_wav(seconds_long=1.1 + n / 10), f"{n}", limits) for n in range(2)]
    assert library.find(session) is not None and all(library.find(name) for name in others)


def test_inline_voices_used_a_moment_ago_are_kept_only_up_to_a_bound(tmp_path):
    """Every inline voice of the last 2 minutes was kept: new audio in each request (a stream socket's
    session.config stores one without queuing anything) wrote 19 MB/s to the state dir, unbounded."""
    library = VoiceLibrary(tmp_path / "voices", inline_keep=1)
    limits = UploadLimits(max_bytes=1 << 20, max_seconds=10.0)
    count = INLINE_IN_USE_FACTOR + 3
    names = [library.store_inline(tone_wav(seconds_long=1.0), f"{n}", limits) for n in range(count)]
    kept = [name for name in names if library.find(name) is not None]
    assert len(kept) == INLINE_IN_USE_FACTOR and names[-1] in kept
    assert len(list((tmp_path / "voices" / "inline").iterdir())) == 2 * INLINE_IN_USE_FACTOR


def test_two_uploads_under_one_name_store_one_voice_and_refuse_the_other(tmp_path):
    library = VoiceLibrary(tmp_path / "voices")
    limits = UploadLimits(max_bytes=1 << 20, max_seconds=10.0)
    audio = {n: tone_wav(seconds_long=1.0 + n / 10) for n in range(8)}
    outcomes: list[str] = []

    def upload(number: int) -> None:
        try:
            library.add("race", audio[number], f"text {number}", limits)
            outcomes.append(f"text {number}")
        except VoiceExists:
            outcomes.append("409")

    threads = [threading.Thread(target=upload, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stored = [o for o in outcomes if o != "409"]
    assert len(stored) == 1 and outcomes.count("409") == 7
    voice = library.find("race")
    assert voice is not None and voice.text == stored[0]


def test_a_voices_directory_that_is_not_there_is_a_warning_and_found_once_it_is(tmp_path, caplog):
    later = tmp_path / "mounted-later"
    library = VoiceLibrary(tmp_path / "voices", extra_dirs=[str(later)])
    assert f"voices directory {later} is not a directory (yet)" in caplog.text
    assert library.find("lecturer") is None
    later.mkdir()
    (later / "lecturer.wav").write_bytes(b"RIFF")  # looked up by name; read only when used
    (later / "lecturer.txt").write_text("안녕하세요.", encoding="utf-8")
    found = library.find("lecturer")
    assert found is not None and found.text == "안녕하세요." and found.source == "directory"


def test_a_voices_directory_others_can_change_is_ignored(tmp_path, caplog):
    """A local user who can write there could list any file the worker reads as a transcript (a link
    named `<voice>.txt`) or hang every lookup on a FIFO."""
    secret = tmp_path / "secret.env"
    secret.write_text("TOKEN=s3cret")
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "leak.wav").write_bytes(b"RIFF")
    (shared / "leak.txt").symlink_to(secret)
    shared.chmod(0o777)
    library = VoiceLibrary(tmp_path / "voices", extra_dirs=[str(shared)])
    assert library.find("leak") is None and [v.name for v in library.all()] == ["default"]
    assert f"voices directory {shared} is ignored: others can write in {shared} (mode 777)" in caplog.text
    shared.chmod(0o755)  # the operator's own again: found
    found = library.find("leak")
    assert found is not None and found.text == "TOKEN=s3cret"


def test_a_transcript_that_is_a_fifo_or_huge_is_no_transcript_and_never_waited_on(tmp_path):
    store = tmp_path / "voices"
    store.mkdir()
    (store / "piped.wav").write_bytes(b"RIFF")
    os.mkfifo(store / "piped.txt")
    (store / "big.wav").write_bytes(b"RIFF")
    (store / "big.txt").write_bytes(b"a" * 100_000)
    library = VoiceLibrary(store)
    done = threading.Event()

    def look() -> None:
        assert library.find("piped").text is None and library.find("big").text is None
        done.set()

    threading.Thread(target=look, daemon=True).start()
    assert done.wait(10)


def encoded(samples, rate: int, audio_format: str) -> bytes:
    buffer = io.BytesIO()
    soundfile.write(buffer, samples, rate, format=audio_format, subtype="PCM_16")
    return buffer.getvalue()


LIMITS = UploadLimits(max_bytes=5 << 20, max_seconds=30.0)
SQUARE = 0.25 * np.sign(np.sin(np.arange(96_000, dtype=np.float32) * np.pi / 48_000 + 0.1))  # 0.5 s


def decoded_with_peak(data: bytes) -> tuple[tuple[np.ndarray, int], int]:
    """decode_upload's result and the most memory Python held while it ran (tracemalloc's peak)."""
    tracemalloc.start()
    try:
        decoded = decode_upload(data, LIMITS)
        return decoded, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_small_many_channel_upload_is_decoded_without_holding_every_channel():
    """A 1.9 MB FLAC (8 channels at 192 kHz, 29 s of a square wave) decoded to 178 MB of float32 at
    once, 0.6 GB at 655 kHz: a few concurrent uploads took gigabytes. Only the mono samples are held."""
    frames = int(29 * 192_000)
    square = 0.25 * np.sign(np.sin(np.arange(frames, dtype=np.float32) / 4000))  # compresses to nothing
    channels = np.tile(square[:, None], (1, 8))
    data = encoded(channels, 192_000, "FLAC")
    del channels
    assert len(data) < LIMITS.max_bytes
    (samples, rate), peak = decoded_with_peak(data)
    mono_bytes = frames * 4
    assert peak < 3 * mono_bytes, f"{peak / 1e6:.0f} MB held to decode {mono_bytes / 1e6:.0f} MB"
    assert rate == 48_000 and samples.size == frames // 4


def test_a_voice_recorded_above_48_khz_is_stored_at_48_khz(tmp_path):
    """Stored at its own rate, 30 s at 192 kHz was an 11 MB wav, more than the 5 MiB upload limit, for
    each of --max-voices (1000) voices; the engines speak at 24 kHz."""
    library = VoiceLibrary(tmp_path / "voices")
    voice = library.add("studio", encoded(np.tile(SQUARE, 60), 192_000, "FLAC"), "안녕하세요", LIMITS)
    assert soundfile.info(voice.wav_path).samplerate == 48_000
    assert os.path.getsize(voice.wav_path) < 48_000 * 2 * 30 + 1000


def test_a_many_channel_upload_is_decoded_a_bounded_block_at_a_time():
    """Blocks of 65 536 frames were 17 MB each for 64 channels (67 MB for 255, Ogg's most): 43 MB
    held for this 5 MB file, 3.5 MB now."""
    frames = 80_000  # 64 channels of 8-bit: 5 MB
    channels = np.tile(SQUARE[:frames, None], (1, 64))
    buffer = io.BytesIO()
    soundfile.write(buffer, channels, 8000, format="WAV", subtype="PCM_U8")
    data = buffer.getvalue()
    (samples, _rate), peak = decoded_with_peak(data)
    assert samples.size == frames and peak < 6e6, f"{peak / 1e6:.1f} MB held"


@pytest.mark.parametrize(("rate", "audio_format"), [(1, "WAV"), (4000, "WAV"), (655_350, "FLAC")])
def test_a_sample_rate_no_voice_is_recorded_at_is_refused(rate, audio_format):
    """1 Hz made a 10-sample file a stored '10 s voice' (resampled to 240 000 samples of nothing);
    655 kHz is the memory case above."""
    samples = 0.25 * np.sin(np.arange(max(rate, 10), dtype=np.float32))
    with pytest.raises(InvalidAudio, match=f"sample rate is {rate} Hz; a voice needs 8000-192000 Hz"):
        decode_upload(encoded(samples, rate, audio_format), LIMITS)


@pytest.mark.parametrize("rate", [16_000, 96_000, 192_000])
def test_a_constant_level_is_silent_however_loud(rate):
    """Float samples of 1e30 were clipped to a full-scale constant and stored as a voice. Above 48 kHz
    the level is judged as read, not after resampling, whose edges ring."""
    with pytest.raises(InvalidAudio, match="the audio is silent"):
        decode_upload(encoded(np.full(rate, 0.9, dtype=np.float32), rate, "WAV"), LIMITS)


def test_a_voice_above_48_khz_is_resampled_as_it_is_read_never_held_at_its_own_rate():
    """29 s of stereo at 192 kHz held 25 MB (the mono samples at 192 kHz, then resampled) to keep
    5.6 MB at 48 kHz (9.4 MB now); resampled block by block, the samples are those of resampling
    the whole."""
    frames = int(29 * 192_000)
    tone = (0.3 * np.sin(np.arange(frames) * (2 * np.pi * 220 / 192_000))).astype(np.float32)
    data = encoded(np.tile(tone[:, None], (1, 2)), 192_000, "FLAC")
    (samples, rate), peak = decoded_with_peak(data)
    whole = resample(soundfile.read(io.BytesIO(data), dtype="float32")[0].mean(axis=1), 192_000, 48_000)
    assert rate == 48_000 and np.array_equal(samples, whole)
    assert peak < 2 * samples.nbytes, f"{peak / 1e6:.1f} MB held to keep {samples.nbytes / 1e6:.1f} MB"


@pytest.mark.parametrize("linked", ["voices", "voices/inline"])
def test_a_voice_folder_that_is_a_symbolic_link_is_never_written_or_removed_through(tmp_path, linked):
    """A link planted at `voices` (or `voices/inline`) made uploads write there, a delete remove
    `<name>.wav` there and the inline prune empty it: each is now a 503 that leaves the target as it was."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    tone_wav(elsewhere / "teacher.wav")
    if linked != "voices":
        (tmp_path / "voices").mkdir()
    (tmp_path / linked).symlink_to(elsewhere, target_is_directory=True)
    library = VoiceLibrary(tmp_path / "voices", inline_keep=0)
    limits = UploadLimits(max_bytes=1 << 20, max_seconds=10.0)
    before = sorted(os.listdir(elsewhere))
    if linked == "voices":  # a linked `inline` leaves named uploads alone: they are not written there
        with pytest.raises(StateUnavailable, match="symbolic link"):
            library.add("planted", tone_wav(seconds_long=1.0), "text", limits)
    with pytest.raises(StateUnavailable, match="symbolic link"):
        library.store_inline(tone_wav(seconds_long=1.0), "text", limits)
    with pytest.raises((StateUnavailable, VoiceNotFound)):
        library.delete("teacher")
    assert library.remove_crash_leftovers() == 0
    assert sorted(os.listdir(elsewhere)) == before


def flac_of_no_stated_length() -> bytes:
    """A FLAC whose STREAMINFO gives 0 total samples ("unknown"), as an encoder writing to a pipe leaves it."""
    buffer = io.BytesIO()
    soundfile.write(buffer, 0.3 * np.sin(np.arange(32_000) / 3.0), 16_000, format="FLAC")
    data = bytearray(buffer.getvalue())
    assert data[:4] == b"fLaC" and data[4] & 0x7F == 0  # STREAMINFO first, from byte 8
    data[21] &= 0xF0  # the 36-bit total-samples field: the low 4 bits of byte 21, then 22-25
    data[22:26] = bytes(4)
    return bytes(data)


def test_an_upload_that_does_not_say_its_length_is_refused_as_such_not_as_aeons_long():
    """libsndfile gives 2^63 - 1 frames for it: refused as "576460752303423.5 s long"."""
    limits = UploadLimits(max_bytes=1 << 20, max_seconds=30.0)
    with pytest.raises(InvalidAudio, match="does not say how long it is") as refused:
        decode_upload(flac_of_no_stated_length(), limits)
    assert " s long" not in str(refused.value)
    with pytest.raises(ValueError, match="does not say how long it is"):
        read_wav(flac_of_no_stated_length(), max_seconds=30.0)


@pytest.mark.parametrize("rate", [0, 0xFFFFFFFF])
def test_a_header_with_a_sample_rate_of_0_is_refused_as_the_files_fault(rate):
    """libsndfile's words were "Internal error : SF_INFO struct incomplete.": the caller's header read
    as the worker's bug."""
    pcm = (0.3 * 32767 * np.sin(np.arange(16_000) / 5.0)).astype("<i2").tobytes()
    fmt = struct.pack("<HHIIHH", 1, 1, rate, (rate * 2) & 0xFFFFFFFF, 2, 16)
    body = b"WAVEfmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(pcm)) + pcm
    with pytest.raises(InvalidAudio, match="no usable sample rate") as refused:
        decode_upload(b"RIFF" + struct.pack("<I", len(body)) + body, LIMITS)
    assert "Internal error" not in str(refused.value)


def test_a_voice_folder_that_is_a_file_is_a_named_503_not_an_internal_error(tmp_path):
    """`<state>/voices` as a plain file made each upload, inline voice and delete a 500."""
    (tmp_path / "voices").write_bytes(b"")
    library = VoiceLibrary(tmp_path / "voices")
    limits = UploadLimits(max_bytes=1 << 20, max_seconds=10.0)
    with pytest.raises(StateUnavailable, match="voice folder cannot be used"):
        library.add("teacher", tone_wav(seconds_long=1.0), "text", limits)
    with pytest.raises(StateUnavailable, match="voice folder cannot be used"):
        library.store_inline(tone_wav(seconds_long=1.0), "text", limits)
    with pytest.raises(StateUnavailable, match="voice folder cannot be used"):
        library.delete("teacher")
    assert (tmp_path / "voices").read_bytes() == b""


def swap_for_link(folder: Path, elsewhere: Path) -> None:
    """`folder` moved aside and a link to `elsewhere` put at its name, as a local user with write access
    to the state dir's parent could at any moment."""
    folder.rename(folder.with_name(folder.name + ".moved"))
    folder.symlink_to(elsewhere, target_is_directory=True)


def test_a_link_planted_at_the_voice_folder_while_an_upload_is_stored_is_not_written_through(
    tmp_path, monkeypatch
):
    """The folder was looked at for a link, then written by path: a link planted in between (here just before
    its files are written, inside the change) got the upload's files."""
    import npu_worker.voices as voices

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "voices").mkdir()
    library = VoiceLibrary(tmp_path / "voices")
    store = voices._store

    def plant_then_store(*args):
        swap_for_link(tmp_path / "voices", elsewhere)
        return store(*args)

    monkeypatch.setattr(voices, "_store", plant_then_store)
    with pytest.raises(StateUnavailable, match="changed while the voice was stored"):
        library.add("planted", tone_wav(seconds_long=1.0), "text", UploadLimits(1 << 20, 10.0))
    assert os.listdir(elsewhere) == []
    assert sorted(os.listdir(tmp_path / "voices.moved")) == ["planted.txt", "planted.wav"]


def test_a_link_planted_at_the_voice_folder_while_a_voice_is_deleted_removes_nothing_there(tmp_path):
    """A link planted once the delete had looked made it remove `<name>.wav` in the folder it named."""
    library = library_with_teacher(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    tone_wav(elsewhere / "teacher.wav")

    def nobody_but_plant(wav_path: str) -> None:
        swap_for_link(tmp_path / "voices", elsewhere)
        return None

    library.delete("teacher", user=nobody_but_plant)
    assert os.listdir(elsewhere) == ["teacher.wav"]
    assert os.listdir(tmp_path / "voices.moved") == []


def test_a_link_planted_at_the_inline_folder_while_it_is_pruned_empties_nothing_there(tmp_path):
    """The inline prune asks who speaks with each voice it would remove: a link planted meanwhile made
    it remove the files of that name in the folder the link named."""
    library = VoiceLibrary(tmp_path / "voices", inline_keep=1)
    limits = UploadLimits(max_bytes=1 << 20, max_seconds=10.0)
    kept = library.store_inline(tone_wav(seconds_long=1.0), "first", limits)
    long_ago = os.stat(tmp_path / "voices" / "inline" / f"{kept}.txt").st_mtime - 1000
    os.utime(tmp_path / "voices" / "inline" / f"{kept}.txt", (long_ago, long_ago))  # not in use: pruned next
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for suffix in (".wav", ".txt"):
        (elsewhere / f"{kept}{suffix}").write_bytes(b"theirs")
    planted = []

    def plant_once(wav_path: str) -> None:
        if not planted:
            planted.append(wav_path)
            swap_for_link(tmp_path / "voices" / "inline", elsewhere)
        return None

    library.store_inline(tone_wav(seconds_long=1.5), "second", limits, user=plant_once)
    assert planted and sorted(os.listdir(elsewhere)) == [f"{kept}.txt", f"{kept}.wav"]
