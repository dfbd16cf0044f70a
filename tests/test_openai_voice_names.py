"""A voice's name as every route reads it: the name an upload was given deletes it too."""

from __future__ import annotations

import openai
import pytest

from tests.openai_support import async_sdk, tone_wav
from tests.tone_engine import ToneEngine

pytestmark = pytest.mark.usefixtures("openai_sdks_closed")


async def test_a_name_an_upload_took_with_blanks_around_it_deletes_it_as_given(worker):
    """The upload and the speech routes drop the blanks around a name (`" narrator "`, from a form
    field) and store or speak `narrator`; the delete read it as given and refused the same name as
    not allowed (400), so the SDK caller's `voices.delete(name)` failed on the name `create` took."""
    engine = ToneEngine()
    client = await worker(engine)
    sdk = async_sdk(client)
    if not hasattr(sdk.audio, "voices"):
        pytest.skip(f"openai {openai.__version__} has no audio.voices")
    sample = ("voice.wav", tone_wav(), "audio/wav")
    given = " narrator "
    voice = await sdk.audio.voices.create(
        audio_sample=sample, consent="c", name=given, extra_body={"ref_text": "안녕하세요"}
    )
    assert voice.id == "narrator"
    await sdk.audio.speech.create(model="tts-1", input="하나.", voice=given, response_format="pcm")
    assert engine.requests[-1].voice.ref_wav.endswith("voices/narrator.wav")
    deleted = await sdk.audio.voices.delete(given)
    assert (deleted.id, deleted.deleted) == ("narrator", True)
    async with client.get("/v1/audio/voices") as listing:
        assert "narrator" not in (await listing.json())["voices"]
    with pytest.raises(openai.NotFoundError):  # gone: a second delete is OpenAI's 404
        await sdk.audio.voices.delete(given)


async def test_a_name_no_upload_could_take_is_still_refused_on_delete(worker):
    client = await worker()
    async with client.delete("/v1/audio/voices/%20..%20") as answer:
        assert answer.status == 400
        error = (await answer.json())["error"]
        assert (error["code"], error["param"]) == ("BadRequest", None)
        assert "is not allowed" in error["message"]
