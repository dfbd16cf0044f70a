"""CORS: a browser page on an allowed origin may call the JSON API (preflight answered), others not."""

from __future__ import annotations

import json

PREFLIGHT = {
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization,content-type",
}


async def preflight(client, origin: str, path: str = "/synth_batch"):
    return await client.options(path, headers={"Origin": origin, **PREFLIGHT})


async def test_preflight_from_an_allowed_origin_is_answered_without_a_token(worker):
    client = await worker(token="s3cret")  # browsers send no credentials on a preflight
    response = await preflight(client, "http://localhost:5173")
    assert response.status == 204
    assert response.headers["Access-Control-Allow-Origin"] == "http://localhost:5173"
    assert "POST" in response.headers["Access-Control-Allow-Methods"]
    allowed = {h.strip().lower() for h in response.headers["Access-Control-Allow-Headers"].split(",")}
    assert {"authorization", "content-type"} <= allowed
    assert response.headers["Vary"].split(",")[0] == "Origin"


async def test_other_origins_are_refused_with_no_cors_headers(worker):
    client = await worker()
    response = await preflight(client, "http://evil.example")
    assert response.status == 403
    assert "Access-Control-Allow-Origin" not in response.headers
    assert (await response.json())["error"].startswith("OriginNotAllowed: ")
    real = await client.get("/jobs", headers={"Origin": "http://evil.example"})
    assert real.status == 403 and "Access-Control-Allow-Origin" not in real.headers


async def test_configured_origins_replace_the_loopback_default(worker):
    client = await worker(allowed_origins=("https://slides.example",))
    assert (await preflight(client, "https://slides.example")).status == 204
    assert (await preflight(client, "http://localhost:5173")).status == 403


async def test_real_answers_carry_the_origin_even_when_streamed(worker, tmp_path):
    client = await worker(allowed_origins=("https://slides.example",))
    origin = {"Origin": "https://slides.example"}
    health = await client.get("/health", headers=origin)
    assert health.headers["Access-Control-Allow-Origin"] == "https://slides.example"
    stream = await client.post("/synth_batch", json={"sections": [{"text": "a."}]}, headers=origin)
    assert stream.headers["Content-Type"].startswith("application/x-ndjson")
    assert stream.headers["Access-Control-Allow-Origin"] == "https://slides.example"
    lines = [json.loads(line) for line in (await stream.text()).splitlines() if line.strip()]
    assert lines[-1]["event"] == "done"
    refused = await client.post(
        "/synth_batch", json={"sections": [{"text": "a."}]}, headers={"Origin": "http://x.example"}
    )
    assert refused.status == 403


async def test_every_answer_varies_on_the_origin_for_caches(worker):
    """The answer to an allowed origin echoes it, so a cache must key every answer on Origin: one kept
    from a request without Origin (a navigation) and served to the page's fetch lacks the header, and the
    browser blocks it (the Fetch standard's advice). Those answers said no `Vary`."""
    client = await worker()
    for headers in ({}, {"Origin": "http://evil.example"}, {"Origin": "http://localhost:5173"}):
        answer = await client.get("/v1/audio/voices", headers=headers)
        assert "origin" in _vary(answer), (headers, answer.status)
    refused = await preflight(client, "http://evil.example")
    assert refused.status == 403 and "origin" in _vary(refused)


def test_a_vary_already_there_is_kept():
    """A pre-compressed player file says `Vary: Accept-Encoding` (aiohttp): it was replaced."""
    from aiohttp import web

    from npu_worker.http_compat.cors import vary_on

    answer = web.Response(headers={"Vary": "Accept-Encoding"})
    vary_on(answer, "Origin")
    vary_on(answer, "origin")  # once
    assert answer.headers["Vary"] == "Accept-Encoding, Origin"


def _vary(answer) -> set[str]:
    return {name.strip().lower() for name in answer.headers.get("Vary", "").split(",") if name.strip()}


async def test_a_refused_preflight_under_v1_is_in_openais_shape(worker):
    """Every other refusal under `/v1/` is OpenAI's error object; a refused preflight was the v1 body."""
    client = await worker()
    refused = await preflight(client, "http://evil.example", "/v1/audio/speech")
    error = (await refused.json())["error"]
    assert refused.status == 403 and "Access-Control-Allow-Origin" not in refused.headers
    assert (error["type"], error["code"]) == ("permission_error", "OriginNotAllowed"), error
