"""Voice uploads refused: bad audio, limits, names, malformed forms, a full disk, a cut upload."""

from __future__ import annotations

import asyncio
from pathlib import Path

import openai
import pytest
import soundfile

from npu_worker.app_keys import SCHEDULER_KEY
from tests.disk_full import disk_full_past
from tests.openai_support import async_sdk, files_under, tone_wav
from tests.test_openai_voices import skip_without_voices_api, upload, upload_form
from tests.timing import seconds, until

pytestmark = pytest.mark.usefixtures("openai_sdks_closed")


def long_wav(seconds_long: float) -> bytes:
    return tone_wav(seconds_long=seconds_long, rate=8000)


@pytest.mark.parametrize(
    ("name", "audio", "status", "code", "param"),
    [
        ("notaudio", b"RIFF....WAVEfmt this is not audio" * 10, 400, "InvalidAudio", "audio_sample"),
        ("toolong", long_wav(31.0), 400, "InvalidAudio", "audio_sample"),
        ("tooshort", long_wav(0.2), 400, "InvalidAudio", "audio_sample"),
        ("../escape", long_wav(2.0), 400, "BadRequest", "name"),
        ("a/b", long_wav(2.0), 400, "BadRequest", "name"),
        (".hidden", long_wav(2.0), 400, "BadRequest", "name"),
        ("default", long_wav(2.0), 409, "VoiceExists", "name"),
        ("inline-x", long_wav(2.0), 400, "BadRequest", "name"),
    ],
)
async def test_a_bad_upload_is_refused_and_writes_nothing(worker, tmp_path, name, audio, status, code, param):
    client = await worker()
    before = files_under(tmp_path)
    response = await upload(client, name, audio)
    assert response.status == status
    error = (await response.json())["error"]
    assert (error["code"], error["param"]) == (code, param)
    assert files_under(tmp_path) == before


async def test_an_unreadable_upload_says_libsndfiles_reason_and_nothing_of_the_worker(worker):
    client = await worker()
    response = await upload(client, "notaudio", b"this is not audio at all" * 10)
    assert response.status == 400
    message = (await response.json())["error"]["message"]
    assert message == "the upload is not a readable audio file (Format not recognised.)", message


async def test_an_upload_over_the_size_limit_is_refused_before_it_is_buffered(worker, tmp_path):
    client = await worker(voice_max_bytes=10_000)
    response = await upload(client, "big", tone_wav(seconds_long=2.0))
    assert response.status == 400
    error = (await response.json())["error"]
    assert (error["code"], error["param"]) == ("InvalidAudio", "audio_sample")


async def test_an_upload_without_a_transcript_or_as_json_is_refused(worker):
    client = await worker()
    response = await upload(client, "quiet", tone_wav(), ref_text=None)
    assert response.status == 400 and (await response.json())["error"]["param"] == "ref_text"
    async with client.post("/v1/audio/voices", json={"name": "x"}) as response:
        assert response.status == 400


async def test_the_sdks_call_without_a_transcript_is_told_how_to_send_one(worker):
    """`voices.create(audio_sample=..., consent=..., name=...)`, OpenAI's call as its SDK documents
    it, has no argument for the transcript: the refusal said `ref_text is required`, naming a field
    the caller could find in no signature of the SDK."""
    sdk = async_sdk(await worker())
    skip_without_voices_api(sdk)
    with pytest.raises(openai.BadRequestError) as caught:
        await sdk.audio.voices.create(
            audio_sample=("v.wav", tone_wav(), "audio/wav"), consent="c", name="quiet"
        )
    assert caught.value.body["param"] == "ref_text"  # type: ignore[index]
    message = caught.value.body["message"]  # type: ignore[index]
    assert "transcript" in message and "extra_body" in message, message


async def test_a_name_in_hangul_is_told_which_letters_a_name_takes(worker):
    """`use 1-64 letters` refused `나레이터`, letters to a Korean caller: the rule is ASCII's."""
    response = await upload(await worker(), "나레이터", tone_wav())
    error = (await response.json())["error"]
    assert (response.status, error["param"]) == (400, "name")
    assert "A-Z" in error["message"], error["message"]


async def test_a_name_with_two_dots_is_told_the_rule_it_breaks(worker):
    """`v1..2` keeps every rule the 400 stated (ASCII letters, digits, '.', the first a digit): the
    words left out the one it breaks, `..`."""
    response = await upload(await worker(), "v1..2", tone_wav())
    error = (await response.json())["error"]
    assert (response.status, error["param"]) == (400, "name")
    assert "'..'" in error["message"], error["message"]


async def test_a_name_no_delete_can_free_is_refused_without_saying_delete_it(worker, tmp_path):
    """`default` and a --voices-dir voice cannot be deleted over HTTP (404): an upload under their
    name said "delete it first", which no caller can do."""
    extra = tmp_path / "shared-voices"
    extra.mkdir()
    tone_wav(extra / "narrator.wav", seconds_long=1.5)
    (extra / "narrator.txt").write_text("해설자의 목소리", encoding="utf-8")
    client = await worker(voices_dir=(str(extra),))
    for name, says in (("default", "--ref-wav"), ("narrator", "--voices-dir")):
        response = await upload(client, name, tone_wav())
        message = (await response.json())["error"]["message"]
        assert response.status == 409 and "delete" not in message and says in message, message
    assert (await upload(client, "teacher", tone_wav())).status == 201
    response = await upload(client, "teacher", tone_wav())
    assert "delete it first" in (await response.json())["error"]["message"]  # an upload can be


async def test_a_second_upload_under_the_same_name_is_a_conflict(worker):
    client = await worker()
    assert (await upload(client, "teacher", tone_wav())).status == 201
    response = await upload(client, "teacher", tone_wav(seconds_long=3.0))
    assert response.status == 409 and (await response.json())["error"]["param"] == "name"
    stored = await asyncio.to_thread(client.app[SCHEDULER_KEY].voices.find, "teacher")
    assert soundfile.info(stored.wav_path).duration == 2.0  # the first upload was kept


async def test_the_voice_store_is_bounded_in_count(worker):
    """Uploads had no count bound: 5 MiB per new name, kept for ever, until the state disk was full."""
    client = await worker(max_voices=2)
    assert [(await upload(client, name, tone_wav())).status for name in ("a", "b")] == [201, 201]
    response = await upload(client, "c", tone_wav())
    error = (await response.json())["error"]
    assert response.status == 409 and error["code"] == "TooManyVoices", error
    assert error["type"] == "invalid_request_error" and "2 voices" in error["message"]
    assert await asyncio.to_thread(client.app[SCHEDULER_KEY].voices.find, "c") is None
    assert (await client.delete("/v1/audio/voices/a")).status == 200  # room again
    assert (await upload(client, "c", tone_wav())).status == 201


async def test_a_store_bounded_at_one_voice_says_so_in_the_singular(worker):
    """With `--max-voices 1` the refusal said "1 voices are stored"."""
    client = await worker(max_voices=1)
    assert (await upload(client, "a", tone_wav())).status == 201
    error = (await (await upload(client, "b", tone_wav())).json())["error"]
    assert (error["code"], error["message"]) == ("TooManyVoices", "1 voice is stored; delete one first")


@pytest.mark.parametrize("name", ["en", "en-us", "ko"])
async def test_an_upload_cannot_take_an_engine_voices_name(worker, name):
    """Stored voices are looked up first: an upload named `en` made every caller's English Korean."""
    client = await worker(engine=None)  # espeak-ng: its voices are its languages
    response = await upload(client, name, tone_wav())
    assert response.status == 409
    error = (await response.json())["error"]
    assert (error["code"], error["param"]) == ("VoiceExists", "name")
    assert await asyncio.to_thread(client.app[SCHEDULER_KEY].voices.find, name) is None


async def test_a_form_with_a_field_twice_or_an_unknown_field_is_refused(worker, tmp_path):
    client = await worker()
    before = files_under(tmp_path)
    form = upload_form("teacher", tone_wav())
    form.add_field("name", "other")
    response = await client.post("/v1/audio/voices", data=form)
    assert response.status == 400 and (await response.json())["error"]["param"] == "name"
    form = upload_form("teacher", tone_wav())
    form.add_field("extra", "x")
    response = await client.post("/v1/audio/voices", data=form)
    assert response.status == 400
    assert files_under(tmp_path) == before


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("multipart/form-data", b"no boundary was given"),
        (
            "multipart/form-data; boundary=XyZ",
            b'--XyZ\r\nContent-Disposition: form-data; name="name"; x="'
            + b"a" * 100_000
            + b'"\r\n\r\nv\r\n--XyZ--\r\n',
        ),
        ("multipart/form-data; boundary=XyZ", b"--XyZ\r\nno blank line ends these headers"),
    ],
    ids=["no-boundary", "part-header-too-long", "truncated-part"],
)
async def test_a_form_the_multipart_reader_cannot_parse_is_a_400(worker, tmp_path, content_type, body):
    client = await worker()
    before = files_under(tmp_path)
    response = await client.post("/v1/audio/voices", data=body, headers={"Content-Type": content_type})
    assert response.status == 400
    error = (await response.json())["error"]
    assert error["code"] == "BadRequest" and error["message"].startswith("the multipart body cannot be read")
    assert files_under(tmp_path) == before


async def test_an_upload_the_state_disk_cannot_keep_is_a_named_503_and_leaves_nothing(worker, settings):
    """A full state disk takes the transcript, not the wav: the worker's trouble, not an internal error,
    and no half voice (a transcript without its wav) is left."""
    client = await worker()
    audio = tone_wav()
    with disk_full_past(4096):
        response = await upload(client, "teacher", audio)
    assert response.status == 503, await response.text()
    body = await response.json()
    assert body["error"]["code"] == "StateUnavailable" and "retry later" in body["error"]["message"]
    assert list((Path(settings.state_dir) / "voices").iterdir()) == []
    assert (await upload(client, "teacher", audio)).status == 201  # room again


async def test_an_upload_a_kill_9_cut_leaves_no_temp_file_after_the_next_start(worker, settings):
    voices = Path(settings.state_dir) / "voices"
    (voices / "inline").mkdir(parents=True)
    cut = [voices / ".teacher.wav.x1y2z3.part", voices / "inline" / ".inline-0a1b.wav.q9r8.part"]
    for path in cut:
        path.write_bytes(b"RIFF")
    await worker()
    assert not any(path.exists() for path in cut)


async def test_start_up_leaves_the_temp_file_of_an_upload_in_progress(worker, settings):
    """The kept jobs (and crash leftovers) are read while the socket serves: the sweep removed the temp
    file of an upload being written meanwhile, here or by a worker sharing the folder (its rename then
    failed). It waits for the upload's lock; what is still there after it is a leftover."""
    from npu_worker.folder_lock import locked_directory

    voices = Path(settings.state_dir) / "voices"
    voices.mkdir(parents=True)
    writing = voices / ".teacher.wav.x1y2z3.part"
    writing.write_bytes(b"RIFF")
    lock = locked_directory(voices)
    await asyncio.to_thread(lock.__enter__)  # an upload between its temp file and its rename
    try:
        client = await worker(wait_loaded=False)
        scheduler = client.app[SCHEDULER_KEY]
        await asyncio.sleep(seconds(0.5))
        assert scheduler.recovery.running and writing.exists()
    finally:
        await asyncio.to_thread(lock.__exit__, None, None, None)
    await until(lambda: not scheduler.recovery.running, "the end of start-up")
    assert not writing.exists()  # never renamed: a leftover


async def test_a_voices_path_that_is_no_folder_does_not_stop_the_start(worker, settings):
    Path(settings.state_dir).mkdir(parents=True, exist_ok=True)
    (Path(settings.state_dir) / "voices").write_bytes(b"")
    client = await worker()
    assert (await client.get("/health")).status == 200
