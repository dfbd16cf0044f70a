"""The voice library on its own: names that can never be paths, lookups, and v1 ref_wav resolution."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from npu_worker.protocol import (
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


def test_inline_voices_of_different_audio_and_transcript_are_different_voices(tmp_path):
    """The name hashed `data + b"\\0" + transcript`: a wav with `\\0가` after it and the transcript `나`
    was the same voice as that wav with `가\\0나`, so the second caller got the first's audio and
    transcript (a voice cache one caller could fill for another)."""
    library = VoiceLibrary(tmp_path / "voices")
    limits = UploadLimits(max_bytes=1 << 20, max_seconds=10.0)
    wav = tone_wav(seconds_long=1.0)
    first = library.store_inline(wav + b"\0" + "가".encode(), "나", limits)
    second = library.store_inline(wav, "가\0나", limits)
    assert first != second
    voice = library.find(second)
    assert voice is not None and voice.text == "가\0나"
