"""A page on an allowed origin calling the worker as the OpenAI SDK does in a browser: the preflight must
allow every header the SDK sends (the Fetch standard's CORS check: a header the answer does not name
blocks the request), and the answer must expose the headers the SDK acts on."""

from __future__ import annotations

import aiohttp

from tests.openai_support import tone_wav

PAGE = "http://localhost:5173"  # a loopback origin: allowed by default
# What openai-node (dangerouslyAllowBrowser) sends with every call, besides the body's Content-Type.
SDK_HEADERS = (
    "authorization, content-type, x-stainless-arch, x-stainless-lang, x-stainless-os, "
    "x-stainless-package-version, x-stainless-retry-count, x-stainless-runtime, "
    "x-stainless-runtime-version, x-stainless-timeout"
)


def _names(value: str) -> set[str]:
    return {name.strip().lower() for name in value.split(",") if name.strip()}


async def test_a_preflight_allows_every_header_the_browser_sdk_asks_for(worker):
    client = await worker(token="s3cret-s3cret-s3cret")  # a preflight carries no token
    for path in ("/v1/audio/speech", "/v1/audio/voices", "/synth_batch"):
        answer = await client.options(
            path,
            headers={
                "Origin": PAGE,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": SDK_HEADERS,
            },
        )
        assert answer.status == 204, path
        assert answer.headers["Access-Control-Allow-Origin"] == PAGE
        assert _names(SDK_HEADERS) <= _names(answer.headers["Access-Control-Allow-Headers"]), path
        assert "access-control-request-headers" in _names(answer.headers["Vary"])


async def test_a_preflight_echoes_only_well_formed_names(worker):
    client = await worker()
    asked = "x-good, bad name, (x), " + ", ".join(f"x-{i}" for i in range(100))
    answer = await client.options(
        "/v1/audio/speech",
        headers={
            "Origin": PAGE,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": asked,
        },
    )
    allowed = _names(answer.headers["Access-Control-Allow-Headers"])
    assert {"authorization", "content-type", "x-good"} <= allowed
    assert not {"bad name", "(x)"} & allowed
    assert len(allowed) <= 2 + 32  # a bounded list, whatever the page asks for


async def test_the_page_can_read_the_answer_that_says_do_not_retry(worker):
    """A refused upload says `x-should-retry: false` so the SDK does not send its audio again; a header
    the answer does not expose is invisible to the page, and the SDK in it retried."""
    client = await worker()
    form = aiohttp.FormData()
    form.add_field("audio_sample", tone_wav(), filename="v.wav", content_type="audio/wav")
    form.add_field("name", "default")  # the worker's own voice: 409 VoiceExists
    form.add_field("ref_text", "하나")
    answer = await client.post("/v1/audio/voices", data=form, headers={"Origin": PAGE})
    assert answer.status == 409
    assert answer.headers["x-should-retry"] == "false"
    exposed = _names(answer.headers["Access-Control-Expose-Headers"])
    assert {"x-should-retry", "retry-after"} <= exposed


async def test_the_page_can_read_the_request_id_of_an_openai_answer(worker):
    """`x-request-id` names an OpenAI route's answer (its job's id for speech): the SDK in a page read
    null, the header not exposed to it."""
    client = await worker()
    for method, path in (("GET", "/v1/models"), ("DELETE", "/v1/audio/voices/nobody")):
        async with client.request(method, path, headers={"Origin": PAGE}) as answer:
            await answer.read()
            assert answer.headers.get("x-request-id"), (method, path)
            assert "x-request-id" in _names(answer.headers["Access-Control-Expose-Headers"]), path
