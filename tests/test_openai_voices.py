"""Named voices: upload, list, use (OpenAI route, v1 ref_wav, /ws), persist, delete; bad uploads refused."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
from pathlib import Path

import aiohttp
import openai
import pytest
import soundfile

from npu_worker.app_keys import SCHEDULER_KEY
from tests.disk_full import disk_full_past
from tests.openai_support import async_sdk, files_under, tone_wav
from tests.test_ws_support import batch, connect, run_request
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


def skip_without_voices_api(sdk: openai.AsyncOpenAI) -> None:
    """`client.audio.voices` (OpenAI's custom voices) is in newer SDKs than pyproject's lower bound."""
    if not hasattr(sdk.audio, "voices"):
        pytest.skip(f"openai {openai.__version__} has no audio.voices")


def upload_form(name: str, audio: bytes, ref_text: str | None = "안녕하세요 여러분") -> aiohttp.FormData:
    form = aiohttp.FormData()
    form.add_field("name", name)
    if ref_text is not None:
        form.add_field("ref_text", ref_text)
    form.add_field("audio_sample", audio, filename="voice.wav", content_type="audio/wav")
    return form


async def upload(client, name: str, audio: bytes, **kwargs) -> aiohttp.ClientResponse:
    response = await client.post("/v1/audio/voices", data=upload_form(name, audio, **kwargs))
    await response.read()
    return response


async def test_an_uploaded_voice_is_listed_with_duration_and_sample_rate(worker):
    client = await worker()
    response = await upload(client, "teacher", tone_wav(seconds_long=2.5, rate=16000))
    assert response.status == 201
    created = await response.json()
    assert (created["name"], created["duration_sec"], created["sample_rate"]) == ("teacher", 2.5, 16000)
    async with client.get("/v1/audio/voices") as listing:
        body = await listing.json()
    assert body["voices"][:2] == ["default", "teacher"]
    teacher = next(v for v in body["data"] if v["name"] == "teacher")
    assert teacher == {
        "name": "teacher",
        "source": "uploaded",
        "ref_text": "안녕하세요 여러분",
        "duration_sec": 2.5,
        "sample_rate": 16000,
    }


async def test_a_named_voice_reaches_the_engine_as_its_stored_wav_and_transcript(worker, settings):
    engine = ToneEngine()
    client = await worker(engine)
    await upload(client, "teacher", tone_wav())
    await async_sdk(client).audio.speech.create(model="tts-1", input="수업을 시작합니다.", voice="teacher")
    voice = engine.requests[-1].voice
    assert voice.ref_wav is not None and voice.ref_wav.endswith("voices/teacher.wav")
    assert voice.ref_text == "안녕하세요 여러분"
    stored, rate = soundfile.read(voice.ref_wav)
    assert (stored.size, rate) == (32000, 16000)


async def test_the_default_voice_is_the_worker_reference(worker, tmp_path):
    reference = tmp_path / "ref.wav"
    tone_wav(reference)
    engine = ToneEngine()
    client = await worker(engine, ref_wav=str(reference), ref_text="기준 음성")
    await async_sdk(client).audio.speech.create(model="tts-1", input="하나.", voice="default")
    assert engine.requests[-1].voice.ref_wav is None  # the engine's own default voice: --ref-wav
    async with client.get("/v1/audio/voices") as listing:
        default = (await listing.json())["data"][0]
    assert (default["name"], default["ref_text"], default["duration_sec"]) == ("default", "기준 음성", 2.0)


async def test_the_default_voices_transcript_beside_its_wav_is_listed(worker, tmp_path):
    reference = tmp_path / "ref.wav"
    tone_wav(reference)
    reference.with_suffix(".txt").write_text("옆에 둔 대본\n", encoding="utf-8")  # no --ref-text
    client = await worker(ToneEngine(), ref_wav=str(reference))
    async with client.get("/v1/audio/voices") as listing:
        default = (await listing.json())["data"][0]
    assert (default["name"], default["ref_text"]) == ("default", "옆에 둔 대본")


async def test_v1_ref_wav_and_ws_accept_a_voice_name(worker, tmp_path):
    engine = ToneEngine()
    client = await worker(engine)
    await upload(client, "teacher", tone_wav())
    body = {"text": "하나.", "output_path": str(tmp_path / "one.wav"), "ref_wav": "teacher"}
    async with client.post("/synth", json=body) as response:
        assert (await response.json())["status"] == "ok"
    assert engine.requests[-1].voice.ref_text == "안녕하세요 여러분"
    body = {"sections": [{"idx": 0, "text": "둘."}], "ref_wav": "teacher", "stream": False}
    async with client.post("/synth_batch", json=body) as response:
        assert response.status == 200
    assert engine.requests[-1].voice.ref_wav.endswith("voices/teacher.wav")
    ws = await connect(client)
    transcript = await run_request(ws, batch("셋.", ref_wav="teacher"))
    await ws.close()
    assert transcript.done["ok_count"] == 1
    assert engine.requests[-1].voice.ref_wav.endswith("voices/teacher.wav")


async def test_voices_persist_across_a_restart_and_can_be_deleted(worker, settings):
    client = await worker()
    await upload(client, "teacher", tone_wav())
    restarted = await worker()  # a second worker on the same state directory
    async with restarted.get("/v1/audio/voices") as listing:
        assert "teacher" in (await listing.json())["voices"]
    async with restarted.delete("/v1/audio/voices/teacher") as response:
        assert response.status == 200
    async with restarted.get("/v1/audio/voices") as listing:
        assert "teacher" not in (await listing.json())["voices"]
    async with restarted.delete("/v1/audio/voices/teacher") as response:
        assert response.status == 404
        assert (await response.json())["error"]["code"] == "VoiceNotFound"


async def test_extra_voice_directories_are_listed_and_usable(worker, tmp_path):
    extra = tmp_path / "shared-voices"
    extra.mkdir()
    tone_wav(extra / "narrator.wav", seconds_long=1.5)
    (extra / "narrator.txt").write_text("해설자의 목소리", encoding="utf-8")
    engine = ToneEngine()
    client = await worker(engine, voices_dir=(str(extra),))
    async with client.get("/v1/audio/voices") as listing:
        narrator = next(v for v in (await listing.json())["data"] if v["name"] == "narrator")
    assert (narrator["source"], narrator["duration_sec"]) == ("directory", 1.5)
    await async_sdk(client).audio.speech.create(model="tts-1", input="하나.", voice="narrator")
    assert engine.requests[-1].voice.ref_text == "해설자의 목소리"
    async with client.delete("/v1/audio/voices/narrator") as response:
        assert response.status == 404  # read-only directory voices are not deleted over HTTP
    assert (extra / "narrator.wav").exists()


async def test_inline_ref_audio_becomes_one_content_named_voice(worker, tmp_path):
    engine = ToneEngine()
    client = await worker(engine)
    data_url = "data:audio/wav;base64," + base64.b64encode(tone_wav()).decode()
    sdk = async_sdk(client)
    for _ in range(2):
        await sdk.audio.speech.create(
            model="tts-1",
            input="하나.",
            voice="default",
            extra_body={"ref_audio": data_url, "ref_text": "참조"},
        )
    first, second = engine.requests[-2].voice, engine.requests[-1].voice
    assert first == second  # same file and transcript: the engine's prompt cache computes it once
    assert "/voices/inline/inline-" in first.ref_wav and first.ref_text == "참조"
    async with client.get("/v1/audio/voices") as listing:
        assert not any(name.startswith("inline-") for name in (await listing.json())["voices"])


async def test_ref_audio_may_be_a_local_path_inside_the_allowed_roots(worker, tmp_path):
    reference = tmp_path / "mine.wav"
    tone_wav(reference)
    engine = ToneEngine()
    client = await worker(engine)
    await async_sdk(client).audio.speech.create(
        model="tts-1",
        input="하나.",
        voice="default",
        extra_body={"ref_audio": str(reference), "ref_text": "내 목소리"},
    )
    assert engine.requests[-1].voice.ref_wav == str(reference.resolve())


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


async def test_with_espeak_the_voices_are_its_languages(worker):
    client = await worker(engine=None)  # the configured default backend: espeak-ng
    async with client.get("/v1/audio/voices") as listing:
        names = (await listing.json())["voices"]
    assert {"default", "ko", "en-us"} <= set(names)
    sdk = async_sdk(client)
    english = await sdk.audio.speech.create(
        model="tts-1", input="Hello there.", voice="en-us", response_format="pcm"
    )
    assert len(english.content) > 24000  # more than half a second of speech
    with pytest.raises(openai.BadRequestError):
        await sdk.audio.speech.create(model="tts-1", input="Hello.", voice="qq-nothing")


@pytest.mark.parametrize("name", ["en", "en-us", "ko"])
async def test_an_upload_cannot_take_an_engine_voices_name(worker, name):
    """Stored voices are looked up first: an upload named `en` made every caller's English Korean."""
    client = await worker(engine=None)  # espeak-ng: its voices are its languages
    response = await upload(client, name, tone_wav())
    assert response.status == 409
    error = (await response.json())["error"]
    assert (error["code"], error["param"]) == ("VoiceExists", "name")
    assert await asyncio.to_thread(client.app[SCHEDULER_KEY].voices.find, name) is None


async def test_deleting_a_path_like_name_is_refused_and_touches_nothing(worker, tmp_path):
    client = await worker()
    victim = tmp_path / "state" / "keep.wav"
    victim.parent.mkdir(parents=True, exist_ok=True)
    victim.write_bytes(b"keep")
    async with client.delete("/v1/audio/voices/..%2Fkeep") as response:
        assert response.status == 400
        assert (await response.json())["error"]["code"] == "BadRequest"
    assert victim.read_bytes() == b"keep"


async def test_openai_voice_names_speak_as_default_unless_stored(worker):
    engine = ToneEngine()
    client = await worker(engine)
    sdk = async_sdk(client)
    await sdk.audio.speech.create(model="tts-1", input="하나.", voice="alloy", response_format="pcm")
    assert engine.requests[-1].voice.ref_wav is None  # the default voice
    await upload(client, "nova", tone_wav())
    await sdk.audio.speech.create(model="tts-1", input="둘.", voice="nova", response_format="pcm")
    assert engine.requests[-1].voice.ref_wav.endswith("voices/nova.wav")


@pytest.mark.parametrize("name", ["marin", "cedar"])
async def test_every_builtin_voice_the_sdk_names_speaks_as_default(worker, name):
    """The SDK's voice list has `marin` and `cedar` (OpenAI's newest, the ones its docs recommend):
    a client that hard-codes them got 400 UnknownVoice."""
    engine = ToneEngine()
    client = await worker(engine)
    await async_sdk(client).audio.speech.create(
        model="tts-1", input="하나.", voice=name, response_format="pcm"
    )
    assert engine.requests[-1].voice.ref_wav is None  # the default voice


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


async def test_a_transcript_beside_the_default_voice_in_a_shared_folder_is_not_listed(worker, tmp_path):
    """With --ref-wav in /tmp, anyone could put a link named like its transcript there: the listing
    would show callers any file the worker can read."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    secret = tmp_path / "secret.env"
    secret.write_text("NPU_WORKER_TOKEN=s3cret")
    reference = shared / "ref.wav"
    tone_wav(reference)
    reference.with_suffix(".txt").symlink_to(secret)
    client = await worker(ToneEngine(), ref_wav=str(reference))
    async with client.get("/v1/audio/voices") as listing:
        default = (await listing.json())["data"][0]
    assert default["name"] == "default" and default["ref_text"] is None


async def test_a_default_voice_swapped_for_a_fifo_is_listed_without_waiting_on_it(worker, tmp_path):
    """The listing opened --ref-wav to read its length: a FIFO put in its place (in /tmp anyone may)
    held each listing for ever, and with it a thread of the worker's executor; after six of them every
    upload, voice lookup and batch of the worker waited too."""
    reference = tmp_path / "ref.wav"
    tone_wav(reference)
    client = await worker(ToneEngine(), ref_wav=str(reference), ref_text="기준 음성")
    await asyncio.to_thread(reference.unlink)
    await asyncio.to_thread(os.mkfifo, reference)
    try:
        async with asyncio.timeout(seconds(5)), client.get("/v1/audio/voices") as listing:
            default = (await listing.json())["data"][0]
        assert (default["name"], default["duration_sec"], default["sample_rate"]) == ("default", None, None)
    finally:  # a reader still waiting on the FIFO is let go (else the test's executor never ends)
        with contextlib.suppress(OSError):
            os.close(os.open(reference, os.O_WRONLY | os.O_NONBLOCK))


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
    from npu_worker.files import locked_directory

    voices = Path(settings.state_dir) / "voices"
    voices.mkdir(parents=True)
    writing = voices / ".teacher.wav.x1y2z3.part"
    writing.write_bytes(b"RIFF")
    lock = locked_directory(voices)
    lock.__enter__()  # an upload between its temp file and its rename
    try:
        client = await worker(wait_loaded=False)
        scheduler = client.app[SCHEDULER_KEY]
        await asyncio.sleep(seconds(0.5))
        assert scheduler.recovery.running and writing.exists()
    finally:
        lock.__exit__(None, None, None)
    await until(lambda: not scheduler.recovery.running, "the end of start-up")
    assert not writing.exists()  # never renamed: a leftover


async def test_a_voices_path_that_is_no_folder_does_not_stop_the_start(worker, settings):
    Path(settings.state_dir).mkdir(parents=True, exist_ok=True)
    (Path(settings.state_dir) / "voices").write_bytes(b"")
    client = await worker()
    assert (await client.get("/health")).status == 200


async def test_the_sdks_own_voice_calls_create_use_and_delete_a_voice(worker):
    """openai's `audio.voices.create` sends `consent` (a consent recording's id) beside `audio_sample`
    and `name`: the upload refused it as an unexpected field, so the SDK could not make a voice at all;
    its `Voice` and `VoiceDeleted` read `id` and `object`, which the answers lacked."""
    engine = ToneEngine()
    client = await worker(engine)
    sdk = async_sdk(client)
    skip_without_voices_api(sdk)
    sample = ("voice.wav", tone_wav(), "audio/wav")
    voice = await sdk.audio.voices.create(
        audio_sample=sample, consent="cons_1234", name="teacher", extra_body={"ref_text": "안녕하세요 여러분"}
    )
    assert (voice.id, voice.name, voice.object) == ("teacher", "teacher", "audio.voice")
    assert voice.type == "audio_sample"
    assert voice.created_at > 0
    await sdk.audio.speech.create(model="tts-1", input="하나.", voice={"id": voice.id}, response_format="pcm")
    assert engine.requests[-1].voice.ref_wav.endswith("voices/teacher.wav")
    deleted = await sdk.audio.voices.delete(voice.id)
    assert (deleted.id, deleted.deleted, deleted.object) == ("teacher", True, "audio.voice.deleted")
    with pytest.raises(openai.BadRequestError) as caught:  # no transcript: what ZipVoice needs is named
        await sdk.audio.voices.create(audio_sample=sample, consent="cons_1234", name="quiet")
    assert caught.value.body["param"] == "ref_text"
    with pytest.raises(openai.BadRequestError) as caught:  # a voice from a text prompt is not made here
        await sdk.audio.voices.create(name="bright", prompt="a bright voice", type="prompt")
    assert caught.value.body["param"] == "type"


async def test_the_sdk_does_not_resend_an_upload_no_retry_can_store(worker):
    """OpenAI's SDK retries every 409 twice unless the answer says `x-should-retry: false`: an upload
    under a name in use, or into a full store, was sent three times (each with its whole audio sample)
    to be refused three times."""
    from tests.test_metrics import scrape, value

    client = await worker(max_voices=1)
    sdk = openai.AsyncOpenAI(base_url=str(client.make_url("/v1")), api_key="unused", timeout=seconds(30))
    skip_without_voices_api(sdk)
    assert sdk.max_retries == 2  # the SDK's default
    sample = ("voice.wav", tone_wav(), "audio/wav")
    await sdk.audio.voices.create(audio_sample=sample, consent="c", name="a", extra_body={"ref_text": "하나"})
    for name, code in (("a", "VoiceExists"), ("b", "TooManyVoices")):
        with pytest.raises(openai.ConflictError) as caught:
            await sdk.audio.voices.create(
                audio_sample=sample, consent="c", name=name, extra_body={"ref_text": "하나"}
            )
        assert caught.value.code == code
    samples = await scrape(client)
    refused = value(
        samples, "npu_worker_http_requests_total", method="POST", route="/v1/audio/voices", status="409"
    )
    assert refused == 2
