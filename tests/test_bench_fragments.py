"""`npu-worker bench --mode fragments` against a live worker: texts streamed in like LLM tokens."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import aiohttp

from npu_worker.bench import fragments
from npu_worker.bench.cli import main as bench_main
from npu_worker.bench.fragments import FragmentConfig, fragments_of, run_fragments, sentence_fragment
from tests.timing import seconds
from tests.tone_engine import ToneEngine

TEXTS = ("첫 번째 문장입니다. 그리고 두 번째 문장이 이어집니다.", "짧은 글. 끝.")


def base_of(client) -> str:
    return f"http://127.0.0.1:{client.port}"


def test_the_first_sentence_ends_in_the_fragment_carrying_its_last_character():
    text = TEXTS[0]
    assert fragments_of("abcdefg", 3) == ["abc", "def", "g"]
    index = sentence_fragment(text, "첫 번째 문장입니다.", 3)
    assert index == (len("첫 번째 문장입니다.") - 1) // 3
    assert sentence_fragment(text, "not there", 3) is None
    assert sentence_fragment(text, "", 3) is None  # no first sentence: not the last fragment (-1)


async def test_figures_are_measured_from_the_sentence_and_from_the_first_fragment(worker):
    client = await worker(ToneEngine(chunk_seconds=0.05))
    config = FragmentConfig(base=base_of(client), texts=TEXTS, chars=3, interval=0.01)
    async with asyncio.timeout(seconds(60)):
        result = await run_fragments(config, say=lambda line: None)
    assert result["summary"]["errors"] == 0
    for record, text in zip(result["records"], TEXTS, strict=True):
        assert record["first_sentence"] == text.split(". ")[0] + "."
        assert record["sentences"] == 2 and record["audio_sec"] > 0
        # The first fragment was sent before the one that completed the sentence.
        assert 0 < record["ttfa_from_sentence_ms"] <= record["ttfa_from_first_fragment_ms"]
        assert record["server_ttfa_ms"] is not None
    assert result["summary"]["ttfa_from_sentence_ms"]["n"] == 2


async def test_the_fragments_mode_writes_its_report(worker, tmp_path, capsys):
    client = await worker()
    argv = ["bench", "--mode", "fragments", "--base", base_of(client), "--requests", "1"]
    argv += ["--fragment-interval-ms", "5", "--out", str(tmp_path / "f")]
    assert await asyncio.to_thread(bench_main, argv) == 0
    recorded = json.loads((tmp_path / "f.json").read_text())
    assert recorded["config"]["texts"] == 1 and recorded["config"]["chars"] == 3
    assert recorded["command"].startswith("npu-worker bench --mode fragments")
    assert "ttfa_from_sentence_ms" in (tmp_path / "f.md").read_text()
    assert "Streamed-text TTFA" in capsys.readouterr().out


async def test_a_socket_closed_before_session_configured_is_that_texts_error_and_the_run_goes_on():
    """A worker that answers `session.config` with a close (1013, reclaiming connections): the close
    frame's data was parsed as JSON (TypeError, a traceback); now each text records why."""
    from aiohttp import WSCloseCode, web
    from aiohttp.test_utils import TestServer

    async def health(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok", "backend": "rogue", "device": "cpu"})

    async def stream(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.receive()
        await socket.close(code=WSCloseCode.TRY_AGAIN_LATER, message=b"reclaimed")
        return socket

    app = web.Application()
    app.router.add_get("/health", health)
    app.router.add_get("/v1/audio/speech/stream", stream)
    async with TestServer(app, host="127.0.0.1") as server:
        config = FragmentConfig(base=f"http://127.0.0.1:{server.port}", texts=TEXTS, chars=3, interval=0.01)
        async with asyncio.timeout(seconds(30)):
            result = await run_fragments(config, say=lambda line: None)
    assert result["summary"]["errors"] == 2
    for record in result["records"]:
        assert "the socket closed before session.configured (CLOSE 1013)" in record["error"]


async def test_fragments_keep_their_schedule_when_the_loop_wakes_late(worker, monkeypatch):
    """Each wake-up 20 ms late: the next sleep must be shorter, not the whole `interval` again (which
    added every late wake-up and every send's time to the text's arrival)."""
    asked: list[float] = []

    async def late_sleep(delay: float) -> None:
        asked.append(delay)
        await asyncio.sleep(delay + 0.02)

    uses = ("get_running_loop", "create_task", "wait_for")
    monkeypatch.setattr(
        fragments, "asyncio", SimpleNamespace(sleep=late_sleep, **{n: getattr(asyncio, n) for n in uses})
    )
    client = await worker(ToneEngine(chunk_seconds=0.05))
    config = FragmentConfig(base=base_of(client), texts=TEXTS[:1], chars=3, interval=0.03)
    async with asyncio.timeout(seconds(60)), aiohttp.ClientSession() as session:
        record = await fragments.stream_one(session, config, 0)
    assert record.error is None and record.fragments >= 8
    # asked for what was left of each 30 ms after a 20 ms late wake-up: ~10 ms, never the whole 30 again
    assert sum(asked) <= 0.75 * 0.03 * (record.fragments - 1), asked
