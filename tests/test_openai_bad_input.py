"""Every mistake on the OpenAI routes is a clear 4xx in OpenAI's error shape, and writes nothing."""

from __future__ import annotations

import base64

import openai
import pytest

from npu_worker.protocol import UnknownVoice
from tests.openai_support import async_sdk, files_under, kept
from tests.timing import seconds
from tests.tone_engine import ToneEngine

pytestmark = pytest.mark.usefixtures("openai_sdks_closed")

GOOD = {"model": "tts-1", "input": "안녕하세요.", "voice": "default"}
NOT_AUDIO = "data:audio/wav;base64," + base64.b64encode(b"this is not a wav file at all" * 20).decode()


def assert_openai_error(body: dict, code: str, param: str | None) -> None:
    assert set(body) == {"error"}
    error = body["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error"
    assert error["code"] == code and error["param"] == param
    assert error["message"]


@pytest.mark.parametrize(
    ("change", "code", "param"),
    [
        ({"voice": "nobody"}, "UnknownVoice", "voice"),
        ({"voice": "../../etc/passwd"}, "UnknownVoice", "voice"),
        ({"voice": 7}, "BadRequest", "voice"),
        ({"response_format": "aac"}, "UnsupportedFormat", "response_format"),
        ({"speed": 5.0}, "BadRequest", "speed"),
        ({"speed": 0.1}, "BadRequest", "speed"),
        ({"speed": "fast"}, "BadRequest", "speed"),
        ({"speed": True}, "BadRequest", "speed"),
        ({"input": ""}, "EmptyText", "input"),
        ({"input": "   \n"}, "EmptyText", "input"),
        ({"input": None}, "BadRequest", "input"),
        ({"input": "가" * 2001}, "TextTooLong", "input"),
        ({"stream_format": "video"}, "BadRequest", "stream_format"),
        ({"language": 3}, "BadRequest", "language"),
        ({"model": "whisper-1"}, "BadRequest", "model"),
        ({"ref_audio": "/etc/passwd"}, "RefWavNotAllowed", "ref_audio"),
        ({"ref_audio": ""}, "BadRequest", "ref_audio"),
        ({"ref_audio": "   "}, "BadRequest", "ref_audio"),
        ({"input": "\ud800"}, "BadRequest", "input"),
        ({"ref_audio": "data:audio/wav;base64,@@@", "ref_text": "x"}, "BadRequest", "ref_audio"),
        ({"ref_audio": "data:audio/wav,plain", "ref_text": "x"}, "BadRequest", "ref_audio"),
        ({"ref_audio": NOT_AUDIO, "ref_text": "hello"}, "InvalidAudio", "ref_audio"),
        ({"ref_audio": NOT_AUDIO}, "BadRequest", "ref_text"),
        ({"seed": -5}, "BadRequest", "seed"),
        ({"seed": 2**32}, "BadRequest", "seed"),
        ({"ref_audio": NOT_AUDIO, "ref_text": "가" * 1001}, "BadRequest", "ref_text"),
    ],
)
async def test_bad_speech_request_is_a_4xx_in_openai_shape_and_writes_nothing(
    worker, tmp_path, change, code, param
):
    client = await worker()
    before = files_under(tmp_path)
    async with client.post("/v1/audio/speech", json={**GOOD, **change}) as response:
        assert response.status == 400
        assert_openai_error(await response.json(), code, param)
    assert files_under(tmp_path) == before


async def test_inline_audio_that_does_not_decode_is_named_as_what_was_sent(worker):
    """It said "the upload is not a readable audio file" where no upload was sent."""
    client = await worker()
    async with client.post(
        "/v1/audio/speech", json={**GOOD, "ref_audio": NOT_AUDIO, "ref_text": "가"}
    ) as response:
        assert response.status == 400
        error = (await response.json())["error"]
    assert (error["code"], error["param"]) == ("InvalidAudio", "ref_audio")
    assert error["message"] == "the inline ref_audio is not a readable audio file (Format not recognised.)"


async def test_a_language_espeak_lacks_names_the_language_field(worker):
    client = await worker(None)  # espeak-ng: it refuses an unknown language at submission
    async with client.post("/v1/audio/speech", json={**GOOD, "language": "zz"}) as response:
        assert response.status == 400
        assert_openai_error(await response.json(), "UnknownLanguage", "language")


async def test_the_unsupported_format_error_names_the_formats_that_work(worker):
    client = await worker()
    async with client.post("/v1/audio/speech", json={**GOOD, "response_format": "aac"}) as response:
        message = (await response.json())["error"]["message"]
    for name in ("wav", "pcm", "flac", "mp3", "opus"):
        assert name in message


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b"\xff\xfe"])
async def test_a_body_that_is_not_a_json_object_is_a_400(worker, raw):
    client = await worker()
    async with client.post("/v1/audio/speech", data=raw) as response:
        assert response.status == 400
        assert (await response.json())["error"]["code"] == "BadRequest"


async def test_a_body_over_the_size_limit_is_a_413_in_openai_shape(worker):
    client = await worker(max_body_bytes=1024)
    async with client.post("/v1/audio/speech", json={**GOOD, "input": "가" * 2000}) as response:
        assert response.status == 413
        assert (await response.json())["error"]["code"] == "BodyTooLarge"


async def test_the_sdk_raises_its_bad_request_error_with_our_message(worker):
    client = await worker()
    with pytest.raises(openai.BadRequestError) as caught:
        await async_sdk(client).audio.speech.create(model="tts-1", input="hi", voice="default", speed=9.0)
    assert "speed must be between 0.25 and 4.0" in str(caught.value)


async def test_the_v1_routes_keep_their_own_error_body(worker):
    client = await worker()
    async with client.post("/synth", json={"text": ""}) as response:
        body = await response.json()
    assert body["status"] == "fail" and "error" in body and not isinstance(body["error"], dict)


async def test_a_batch_default_of_the_wrong_kind_is_a_400_and_a_bad_item_only_its_own_error(worker):
    client = await worker()
    async with client.post(
        "/v1/audio/speech/batch", json={"items": [{"input": "hi"}], "speed": 9}
    ) as response:
        assert response.status == 400
        assert_openai_error(await response.json(), "BadRequest", "speed")
    items = [{"input": "hi", "speed": 9}, {"input": "hi"}, 7]
    async with client.post(
        "/v1/audio/speech/batch", json={"items": items, "voice": {"id": "default"}}
    ) as response:
        body = await response.json()
    assert response.status == 200 and [r["status"] for r in body["results"]] == ["error", "success", "error"]
    assert (
        body["results"][0]["error"]["param"] == "speed"
        and body["results"][2]["error"]["code"] == "BadRequest"
    )


@pytest.mark.parametrize(
    "method, path, status",
    [
        ("GET", "/v1/audio/speech", 405),
        ("POST", "/v1/models", 405),
        ("GET", "/v1/nothing", 404),
        ("GET", "/v1/audio/speech/stream", 400),  # no WebSocket upgrade: aiohttp's refusal, v1's body
    ],
)
async def test_an_unknown_path_or_method_under_v1_answers_in_openais_shape(worker, method, path, status):
    client = await worker()
    response = await client.request(method, path)
    assert response.status == status
    error = (await response.json())["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["code"] == "BadRequest"
    assert error["type"] == ("not_found_error" if status == 404 else "invalid_request_error")
    v1 = await client.get("/synth")  # the v1 routes keep their own body
    assert v1.status == 405 and (await v1.json())["status"] == "fail"


@pytest.mark.parametrize(
    "defaults, param", [({"model": "nope"}, "model"), ({"response_format": "aac"}, "response_format")]
)
async def test_a_batch_default_every_item_would_fail_on_is_one_400(worker, defaults, param):
    client = await worker()
    body = {"items": [{"input": "a."}, {"input": "b."}], **defaults}
    response = await client.post("/v1/audio/speech/batch", json=body)
    assert response.status == 400
    assert (await response.json())["error"]["param"] == param


async def test_a_batch_default_voice_no_item_could_speak_with_is_one_400(worker):
    client = await worker()
    body = {"items": [{"input": "a."}, {"input": "b."}], "voice": {"id": "nobody"}}
    response = await client.post("/v1/audio/speech/batch", json=body)
    assert response.status == 400
    assert_openai_error(await response.json(), "UnknownVoice", "voice")
    # items that all bring their own voice never use the default: each is answered
    body = {
        "items": [{"input": "a.", "voice": "default"}, {"input": "b.", "voice": "alloy"}],
        "voice": "nobody",
    }
    response = await client.post("/v1/audio/speech/batch", json=body)
    assert response.status == 200
    results = (await response.json())["results"]
    assert [r["status"] for r in results] == ["success", "success"], results[0].get("error")


@pytest.mark.parametrize("stream_format", ["audio", "sse"])
async def test_a_text_that_crashes_espeaks_parser_is_a_400_naming_input(worker, stream_format):
    """espeak-ng 1.52 aborts on "s'" * 100 (in its child process: the worker speaks on). The OpenAI
    route answered 500 EngineError, so an SDK, which retries a 5xx, sent the same text twice more and
    crashed the child each time; the text is the caller's to change, as EmptyText is."""
    client = await worker(None)
    sdk = async_sdk(client)
    with pytest.raises(openai.BadRequestError) as caught:
        await sdk.audio.speech.create(
            model="tts-1",
            input="s'" * 100,
            voice="default",
            response_format="wav",
            stream_format=stream_format,
        )
    body = {"error": caught.value.body}  # the SDK keeps the inner object
    assert_openai_error(body, "UnparsableText", "input")
    spoken = await sdk.audio.speech.create(
        model="tts-1", input="반갑습니다.", voice="default", response_format="pcm"
    )
    assert len(spoken.content) > 0


def test_the_phonemizers_crash_on_a_text_is_the_texts_fault_and_a_kill_is_not():
    """ZipVoice's phonemizer runs in the same child: its crash on a text is UnparsableText (400); a child
    killed from outside while it reads a text is the worker's EngineError (500)."""
    import os
    import signal

    from npu_worker.engine.espeak_process import ChildEspeak
    from npu_worker.errors import EngineError, UnparsableText

    child = ChildEspeak()
    try:
        with pytest.raises(UnparsableText):
            child.phonemize("s'" * 100, "ko")
    finally:
        child.close()
    child = ChildEspeak()
    try:
        os.kill(child.pid, signal.SIGKILL)
        with pytest.raises(EngineError) as caught:
            child.phonemize("안녕하세요.", "ko")
        assert not isinstance(caught.value, UnparsableText)
    finally:
        child.close()


async def test_a_token_or_origin_refusal_under_v1_is_in_openais_shape(worker):
    """A wrong `api_key` was answered in the v1 body: the SDK raised AuthenticationError with `body`
    the bare string "Unauthorized: ..." and `code`/`type` None (a caller reading `body["message"]`
    failed with a TypeError); the v1 routes keep theirs."""
    client = await worker(token="s3cret")
    sdk = kept(openai.AsyncOpenAI(base_url=str(client.make_url("/v1")), api_key="wrong", max_retries=0))
    with pytest.raises(openai.AuthenticationError) as caught:
        await sdk.audio.speech.create(model="tts-1", input="hi", voice="default")
    assert (caught.value.code, caught.value.type) == ("Unauthorized", "authentication_error")
    assert caught.value.body["message"].startswith("a valid token is required")
    headers = {"Authorization": "Bearer s3cret", "Origin": "https://evil.example"}
    async with client.post("/v1/audio/speech", json=GOOD, headers=headers) as response:
        assert response.status == 403
        body = await response.json()
    assert (body["error"]["code"], body["error"]["type"]) == ("OriginNotAllowed", "permission_error")
    async with client.post("/v1/audio/speech", json=GOOD, headers={"Expect": "100-continue"}) as response:
        assert response.status == 401 and (await response.json())["error"]["code"] == "Unauthorized"
        assert response.headers["WWW-Authenticate"] == 'Bearer realm="npu-worker"'
    async with client.post("/synth", json={"text": "hi"}) as response:
        assert response.status == 401 and (await response.json())["status"] == "fail"


async def test_a_ref_audio_that_is_neither_a_path_nor_a_stored_voice_names_ref_audio(worker, tmp_path):
    """`ref_audio: "voice.wav"` (a relative path, or a voice name nobody stored) was refused with
    `param: null` and a message about `ref_wav`, a field of the v1 routes this caller never sent."""
    client = await worker()
    before = files_under(tmp_path)
    async with client.post("/v1/audio/speech", json={**GOOD, "ref_audio": "voice.wav"}) as response:
        assert response.status == 400
        body = await response.json()
    assert_openai_error(body, "UnknownVoice", "ref_audio")
    assert "ref_audio" in body["error"]["message"] and "ref_wav" not in body["error"]["message"]
    assert files_under(tmp_path) == before
    async with client.ws_connect("/v1/audio/speech/stream") as ws:
        await ws.send_json({"type": "session.config", "ref_audio": "voice.wav", "ref_text": "안녕"})
        refused = await ws.receive_json(timeout=seconds(5))
    assert (refused["type"], refused["code"], refused["param"]) == ("error", "UnknownVoice", "ref_audio")


@pytest.mark.parametrize(
    ("ref_audio", "words"),
    [
        ("/tmp/a\x00b.wav", "ref_audio contains a NUL byte"),
        ("/tmp/" + "a" * 300, "ref_audio has a component"),
    ],
)
async def test_a_refused_reference_path_is_told_in_ref_audio_words(worker, ref_audio, words):
    """A `ref_audio` path refused at admission (a NUL byte, a name too long, a link planted in a shared
    folder) was told as `ref_wav contains a NUL byte`: v1's field, which this caller never sent."""
    client = await worker()
    body = {**GOOD, "ref_audio": ref_audio, "ref_text": "안녕"}
    async with client.post("/v1/audio/speech", json=body) as response:
        assert response.status == 400
        answer = await response.json()
    assert_openai_error(answer, "RefWavNotAllowed", "ref_audio")
    assert answer["error"]["message"].startswith(words) and "ref_wav" not in answer["error"]["message"]
    async with client.ws_connect("/v1/audio/speech/stream") as ws:
        await ws.send_json({"type": "session.config", "ref_audio": ref_audio, "ref_text": "안녕"})
        refused = await ws.receive_json(timeout=seconds(5))
    assert (refused["code"], refused["param"]) == ("RefWavNotAllowed", "ref_audio")
    assert refused["message"].startswith(words)


class NoDefaultVoice(ToneEngine):
    """As ZipVoice started without --ref-wav: no default voice (its refusal names v1's `ref_wav`)."""

    def check_voice(self, ref_wav: str | None) -> None:
        if ref_wav is None:
            raise UnknownVoice("this worker has no default voice: pass ref_wav", param="ref_wav")


async def test_a_worker_without_a_default_voice_names_the_voice_field_in_openai_words(worker):
    """ZipVoice without --ref-wav refused every OpenAI request that named no stored voice with
    `param: "ref_wav"` and "pass ref_wav": a field of the v1 routes this caller cannot send."""
    client = await worker(NoDefaultVoice())
    for voice in ("alloy", "default", None):
        async with client.post("/v1/audio/speech", json={**GOOD, "voice": voice}) as response:
            assert response.status == 400
            body = await response.json()
        assert_openai_error(body, "UnknownVoice", "voice")
        assert "ref_wav" not in body["error"]["message"] and "ref_audio" in body["error"]["message"]
    async with client.post("/v1/audio/speech/batch", json={"items": [{"input": "안녕"}]}) as response:
        assert response.status == 400  # the default every item would fail on: one refusal
        body = await response.json()
    assert_openai_error(body, "UnknownVoice", "voice")
    assert "ref_wav" not in body["error"]["message"]
    async with client.ws_connect("/v1/audio/speech/stream") as ws:
        await ws.send_json({"type": "session.config", "voice": "alloy"})
        refused = await ws.receive_json(timeout=seconds(5))
        assert (refused["code"], refused["param"]) == ("UnknownVoice", "voice")
        await ws.send_json({"type": "input.text", "text": "안녕하세요. "})  # no configuration: the default
        refused = await ws.receive_json(timeout=seconds(5))
    assert (refused["code"], refused["param"], refused["sentence_index"]) == ("UnknownVoice", "voice", 0)
    assert "ref_wav" not in refused["message"]
