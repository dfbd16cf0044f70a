"""Named voices: list, use (OpenAI route, v1 ref_wav, /ws), persist, delete, the SDK's own voice calls."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os

import aiohttp
import openai
import pytest
import soundfile

from tests.openai_support import async_sdk, kept, tone_wav
from tests.test_ws_support import batch, connect, run_request
from tests.timing import seconds
from tests.tone_engine import ToneEngine

pytestmark = pytest.mark.usefixtures("openai_sdks_closed")


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
    sdk = kept(
        openai.AsyncOpenAI(base_url=str(client.make_url("/v1")), api_key="unused", timeout=seconds(30))
    )
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
