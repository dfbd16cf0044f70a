"""An OpenAI SDK whose base_url lacks `/v1` (`http://host:port`, the commonest setup mistake) is told
where the routes are, in OpenAI's error shape, so the SDK's exception carries the words."""

from __future__ import annotations

import openai
import pytest
from openai import AsyncOpenAI

from tests.openai_support import TEXT, kept
from tests.timing import seconds

pytestmark = pytest.mark.usefixtures("openai_sdks_closed")


def sdk_without_v1(client, api_key: str = "unused") -> AsyncOpenAI:  # type: ignore[no-untyped-def]
    return kept(
        AsyncOpenAI(base_url=str(client.make_url("/")), api_key=api_key, timeout=seconds(30), max_retries=0)
    )


async def test_speech_and_models_without_v1_say_where_the_routes_are(worker):
    """The v1 body's `error` is a string, which the SDK drops: its exception said `Error code: 404`
    and nothing else."""
    sdk = sdk_without_v1(await worker())
    calls = [
        lambda: sdk.audio.speech.create(model="tts-1", voice="alloy", input=TEXT),
        sdk.models.list,
        lambda: sdk.models.retrieve("tts-1"),
    ]
    if hasattr(sdk.audio, "voices"):  # (newer SDKs than pyproject's lower bound, openai 1.60)
        calls.append(lambda: sdk.audio.voices.delete("narrator"))
    for call in calls:
        with pytest.raises(openai.NotFoundError) as caught:
            await call()
        error = caught.value.body
        assert isinstance(error, dict) and error["type"] == "not_found_error", error
        assert "no such endpoint" in caught.value.message and "base_url" in caught.value.message
        assert "/v1" in error["message"], error


async def test_a_token_refusal_without_v1_reaches_the_sdk_in_words(worker):
    sdk = sdk_without_v1(await worker(token="s3cret"), api_key="wrong")
    with pytest.raises(openai.AuthenticationError) as caught:
        await sdk.audio.speech.create(model="tts-1", voice="alloy", input=TEXT)
    assert caught.value.body["type"] == "authentication_error"  # type: ignore[index]
    assert "token" in caught.value.message, caught.value.message


async def test_a_v1_route_and_a_native_path_keep_their_own_answers(worker):
    """Only the paths an SDK reaches without `/v1` change shape: a native route's 404 is v1's."""
    client = await worker()
    async with client.get("/jobs/nope/status") as native:
        assert native.status == 404 and isinstance((await native.json())["error"], str)
    async with client.get("/nothing-here") as unknown:
        assert isinstance((await unknown.json())["error"], str)
    async with client.get("/v1/nothing-here") as openai_unknown:
        error = (await openai_unknown.json())["error"]
        assert openai_unknown.status == 404 and "base_url" not in error["message"], error


async def test_a_player_file_named_models_keeps_the_native_404(worker):
    """`/models` is the SDK's path alone: `/models.json` (the player's file namespace, open without the
    token) and `/modelsX` were told, in OpenAI's shape, that the OpenAI routes are under /v1/."""
    client = await worker(token="s3cret")
    bearer = {"Authorization": "Bearer s3cret"}
    for path, headers in (("/models.json", {}), ("/models-old", bearer)):
        async with client.get(path, headers=headers) as answer:
            body = await answer.json()
            assert answer.status == 404 and isinstance(body["error"], str), (path, body)
    for path in ("/models", "/models/tts-1"):  # what the SDK calls still says where its routes are
        async with client.get(path, headers=bearer) as answer:
            assert "/v1/" in (await answer.json())["error"]["message"], path
