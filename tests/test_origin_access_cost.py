"""A browser's request (an `Origin` header) costs no parse of an origin the worker has seen, on the event
loop: the CORS headers and the access check both asked `origin_allowed` (real worker, real socket)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from npu_worker import access
from npu_worker.access import origin_allowed


async def test_a_browsers_synth_parses_no_origin_it_has_seen_on_the_loop(worker, tmp_path):
    """Every request from a page (the player's, a page's `fetch`) sends its `Origin`: it was split and
    normalised on the loop twice a request, and each listed origin with it."""
    for allowed in ((), ("https://tts.example", "http://127.0.0.1:1")):
        client = await worker(allowed_origins=allowed)
        origin = f"http://127.0.0.1:{client.port}" if not allowed else "https://tts.example"
        body = {"text": "한 번에.", "output_path": str(tmp_path / "warm.wav")}
        warm = await client.post("/synth", json=body, headers={"Origin": origin})
        assert (await warm.json())["status"] == "ok"
        assert await origin_parses_in_three_synths(client, origin, tmp_path) == []


async def origin_parses_in_three_synths(client: Any, origin: str, tmp_path: Path) -> list[str]:
    """The origin parses on the loop (this thread's profile) while three `/synth` calls from `origin` run."""
    parsed: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_name in ("normalize_origin", "is_loopback_origin"):
            parsed.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        for call in range(3):
            body = {"text": f"한 번에 {call}.", "output_path": str(tmp_path / f"{call}.wav")}
            answer = await client.post("/synth", json=body, headers={"Origin": origin})
            assert (await answer.json())["status"] == "ok"
            assert answer.headers["Access-Control-Allow-Origin"] == origin
    finally:
        sys.setprofile(None)
    return parsed


async def test_an_origin_refused_once_is_refused_again(worker):
    """The kept answer is the answer: another page's origin is refused 403 on every request and its
    preflight too, a listed one let in every time."""
    client = await worker(allowed_origins=("https://tts.example",))
    for _ in range(3):
        refused = await client.get("/jobs", headers={"Origin": "https://evil.example"})
        assert refused.status == 403 and "Access-Control-Allow-Origin" not in refused.headers
        assert (await refused.json())["error"].startswith("OriginNotAllowed: origin 'https://evil.example'")
        preflight = {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
        assert (await client.options("/synth", headers=preflight)).status == 403
        allowed = await client.get("/jobs", headers={"Origin": "https://TTS.example:443"})
        assert allowed.status == 200
        assert allowed.headers["Access-Control-Allow-Origin"] == "https://TTS.example:443"


def test_the_kept_origin_answers_follow_the_allowed_list_and_stay_bounded():
    """One origin's answer under one list is not another list's; a caller naming a new origin every
    request keeps at most `ORIGINS_REMEMBERED` of them."""
    for _ in range(2):
        assert origin_allowed("http://localhost:3000", ())
        assert not origin_allowed("http://localhost:3000", ("https://tts.example",))
        assert origin_allowed("https://tts.example", ("https://tts.example",))
        assert origin_allowed("https://tts.example", ("*",))
        assert not origin_allowed("https://tts.example", ())
        assert not origin_allowed("null", ())
        assert origin_allowed(None, ("https://tts.example",))
    for number in range(access.ORIGINS_REMEMBERED * 3):
        assert not origin_allowed(f"https://h{number}.example", ())
    assert access._origin_answer.cache_info().currsize <= access.ORIGINS_REMEMBERED
