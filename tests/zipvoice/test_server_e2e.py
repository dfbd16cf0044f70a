"""ZipVoice (tiny synthetic model) end to end through the worker: the server builds the engine itself.

The tests that need the default worker (its voice, CPU, dynamic shapes) share one, `default_worker`,
started once for the module on the module's event loop: each of them loaded a ZipVoice worker of its
own before (a load specialises decoders: seconds of CPU, a minute of wall under CI's load). Nothing
they do changes what the next one sees: every request names its own output, and the espeak crash
test checks that the worker speaks on. Tests that need another worker (no voice, bucket 63) start it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import wave
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import numpy as np
import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient
from blockbuster import blockbuster_ctx

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.audio_decode import read_wav
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine
from npu_worker.engine.zipvoice.options import ZipVoiceOptions
from tests.conftest import production_server, wait_until_loaded
from tests.timing import seconds, until
from tests.zipvoice.conftest import engine_config, engine_settings

on_the_module_loop = pytest.mark.asyncio(loop_scope="module")  # where `default_worker` serves


def wav_samples(path: str) -> np.ndarray:
    return read_wav(Path(path).read_bytes())[0]


async def start(worker, model_dir: Path, tmp_path: Path, engine: object = None, **changes):
    settings = engine_settings(
        model_dir, tmp_path / "state", output_roots=(str(tmp_path), str(model_dir)), **changes
    )
    overrides = {
        name: getattr(settings, name)
        for name in (
            "backend",
            "model_dir",
            "ref_wav",
            "state_dir",
            "precision",
            "device",
            "num_steps",
            "threads",
            "output_roots",
            "queue",
        )
    }
    return await worker(engine=engine, **overrides)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def default_worker(
    tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[TestClient]:
    """The worker `start(worker, tiny_model_dir, tmp_path)` gave each test, once for the module: its
    outputs may go anywhere under the session's temp root (so each test's own `tmp_path`)."""
    state = tmp_path_factory.mktemp("e2e-state")
    outputs = (str(tmp_path_factory.getbasetemp()), str(tiny_model_dir))
    settings = engine_settings(
        tiny_model_dir, state, output_roots=outputs, heartbeat_interval=10.0, cache_max_bytes=0
    )
    with blockbuster_ctx("npu_worker"):  # the start is guarded as the `worker` fixture's is
        client = TestClient(await production_server(settings, None))
        await client.start_server()
        await wait_until_loaded(client)
    yield client
    await client.close()


@on_the_module_loop
async def test_synth_wav_length_follows_the_frame_count_and_health_has_no_decoder_calls(
    default_worker, tmp_path
):
    """Also /health: every call of a dynamic-shape decoder runs on `device`, nothing to count apart (a
    test of its own loaded a worker of its own for it)."""
    client = default_worker
    assert "decoder_calls" not in await (await client.get("/health")).json()
    engine = client.app[SCHEDULER_KEY].engine
    response = await client.post(
        "/synth", json={"text": "반갑습니다.", "output_path": str(tmp_path / "a.wav")}
    )
    body = await response.json()
    assert body["status"] == "ok" and body["engine"] == "zipvoice-onnx" and body["device"] == "cpu"
    trace = engine.traces[-1]
    generated = (trace.frames - trace.prompt_frames - 1) * 256  # vocoder output before the edge trim
    with wave.open(body["wav_path"]) as wav:
        frames = wav.getnframes()
        assert wav.getframerate() == 24000
    assert 0 < frames <= generated
    assert frames >= generated - 2 * 24000 * 0.25  # at most the edge silence is cut
    assert abs(body["duration_sec"] - frames / 24000) < 0.002


@on_the_module_loop
async def test_batch_wavs_match_the_engine_output_and_frame_counts(default_worker, tmp_path):
    client = default_worker
    sections = [
        {"idx": i, "text": t, "output_path": str(tmp_path / f"s{i}.wav")}
        for i, t in enumerate(["안녕하세요.", "배터리는 화학 에너지를 전기 에너지로 바꾸는 장치입니다."])
    ]
    response = await client.post("/synth_batch", json={"sections": sections, "lang": "ko"})
    events = [json.loads(line) async for line in response.content if line.strip()]
    assert events[0]["backend"] == "zipvoice-onnx" and events[-1]["ok_count"] == 2
    oks = [e for e in events if e["event"] == "progress" and e["status"] == "ok"]
    for event in oks:
        with wave.open(event["wav_path"]) as wav:
            assert abs(wav.getnframes() / 24000 - event["duration_sec"]) < 0.002
    assert len(wav_samples(oks[1]["wav_path"])) > len(wav_samples(oks[0]["wav_path"]))


@on_the_module_loop
async def test_same_seed_gives_the_same_samples_and_another_seed_does_not(default_worker, tmp_path):
    client = default_worker
    paths = {}
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        paths[name] = str(tmp_path / f"{name}.wav")
        body = {"text": "같은 씨앗입니다.", "output_path": paths[name], "seed": seed}
        assert (await (await client.post("/synth", json=body)).json())["status"] == "ok"
    a, b, c = (wav_samples(paths[n]) for n in "abc")
    np.testing.assert_array_equal(a, b)
    assert a.size != c.size or not np.array_equal(a, c)


@on_the_module_loop
async def test_a_text_with_nothing_to_say_on_synth_is_a_200_fail_not_a_400(default_worker, tmp_path):
    """Only the engine knows that "..." has nothing speakable: found while synthesising, it is the
    synthesis failure PROTOCOL §1 answers with 200 and `status: "fail"` (docs/protocol.md said 400)."""
    client = default_worker
    response = await client.post("/synth", json={"text": "...", "output_path": str(tmp_path / "a.wav")})
    body = await response.json()
    assert response.status == 200 and body["status"] == "fail"
    assert body["error"].startswith("EmptyText: ") and body["engine"] == "zipvoice-onnx"
    assert not (tmp_path / "a.wav").exists()


async def test_without_a_default_voice_a_request_without_ref_wav_is_a_400_and_one_with_it_plays(
    worker, tiny_model_dir, tmp_path
):
    """Started without --ref-wav, ZipVoice has no voice to speak a request that names none: refused at
    submission (every section failed in the engine with a 500-class EngineError while /ready said ok).
    Nor does GET /v1/audio/voices offer `default`: it did, which then answered 400 UnknownVoice, to
    clients that pick from the list (a test of its own loaded a worker of its own for it)."""
    client = await start(worker, tiny_model_dir, tmp_path, ref_wav=None)
    listing = await (await client.get("/v1/audio/voices")).json()
    assert "default" not in listing["voices"]
    assert all(entry["name"] != "default" for entry in listing["data"])
    out = str(tmp_path / "a.wav")
    response = await client.post("/synth", json={"text": "반갑습니다.", "output_path": out})
    body = await response.json()
    assert response.status == 400 and body["error"].startswith("UnknownVoice: ")
    assert "--ref-wav" in body["error"] and not Path(out).exists()
    response = await client.post(
        "/synth_batch", json={"sections": [{"idx": 0, "text": "네."}], "stream": False}
    )
    assert response.status == 400 and (await response.json())["error"].startswith("UnknownVoice: ")
    reference = tiny_model_dir / "reference_ko.wav"
    response = await client.post(
        "/synth", json={"text": "반갑습니다.", "output_path": out, "ref_wav": str(reference)}
    )
    body = await response.json()
    assert body["status"] == "ok", body


@on_the_module_loop
async def test_a_text_that_crashes_espeak_fails_its_section_and_the_worker_speaks_on(
    default_worker, tmp_path
):
    """espeak-ng 1.52's parser overflows its stack on "s'" * 100 (and "A." * 200 in English) and aborts
    the process it runs in: the tokenizer's phonemes came from the worker's own process, so one
    request's 200 characters ended the worker. They come from a child process now."""
    client = default_worker
    for text, lang in (("s'" * 100, "ko"), ("A." * 200, "en")):
        out = str(tmp_path / "crash.wav")
        response = await client.post("/synth", json={"text": text, "lang": lang, "output_path": out})
        body = await response.json()
        assert body["status"] == "fail" and body["error"].startswith("UnparsableText: espeak-ng's process")
        response = await client.post(
            "/synth", json={"text": "반갑습니다.", "output_path": str(tmp_path / "a.wav")}
        )
        assert (await response.json())["status"] == "ok"
    assert (await client.get("/health")).status == 200


async def test_health_counts_the_decoder_calls_the_cpu_overflow_decoder_ran(worker, tiny_model_dir, tmp_path):
    """A prompt that fills the largest bucket sends every segment to the CPU overflow decoder while
    `device` names the bucketed one (the NPU on QNN): only a one-time log line said so."""
    config = engine_config(tiny_model_dir, tmp_path / "state", fixed_shapes=True)
    engine = ZipVoiceEngine(dataclasses.replace(config, options=ZipVoiceOptions(buckets=(63,))))
    client = await start(worker, tiny_model_dir, tmp_path, engine=engine)
    before = (await (await client.get("/health")).json())["decoder_calls"]  # the warm-up sentence's
    assert before["cpu_overflow"] == before["total"]
    response = await client.post(
        "/synth", json={"text": "반갑습니다.", "output_path": str(tmp_path / "a.wav")}
    )
    assert (await response.json())["status"] == "ok"
    after = (await (await client.get("/health")).json())["decoder_calls"]
    assert after["total"] > before["total"] and after["cpu_overflow"] == after["total"], after


async def test_a_nodes_heartbeat_carries_its_decoder_calls(worker, tiny_model_dir, tmp_path, redis_server):
    """With `--queue redis` an api node's /health shows the engine nodes by their heartbeats
    (`cluster.nodes`): backend, device, precision, but not the calls their CPU overflow decoder ran
    while `device` said the NPU; only the engine node's own /health had them."""
    config = engine_config(tiny_model_dir, tmp_path / "state", fixed_shapes=True)
    engine = ZipVoiceEngine(dataclasses.replace(config, options=ZipVoiceOptions(buckets=(63,))))
    client = await start(worker, tiny_model_dir, tmp_path, engine=engine, queue=redis_server.url)
    response = await client.post(
        "/synth", json={"text": "반갑습니다.", "output_path": str(tmp_path / "a.wav")}
    )
    assert (await response.json())["status"] == "ok"
    async with asyncio.timeout(seconds(10)):  # the next beat (one a second) carries the new count
        while True:
            health = await (await client.get("/health")).json()
            (node,) = health["cluster"]["nodes"]
            if node.get("decoder_calls") == health["decoder_calls"]:
                break
            await asyncio.sleep(0.1)
    assert health["decoder_calls"]["total"] > 0
    assert health["decoder_calls"]["cpu_overflow"] == health["decoder_calls"]["total"]  # (bucket 63)
    assert list(node)[:9] == [
        "role", "claim_timeout", "backend", "device", "precision", "sample_rate", "model", "seed", "decoder_calls",
    ]  # fmt: skip


@on_the_module_loop
async def test_a_ws_preview_is_heard_before_a_long_synth_ahead_of_it_ends(default_worker, tmp_path):
    """A `/synth`'s caller hears nothing until its end: a `/ws` preview sent while it runs takes the engine
    at its next decoder step (`jobs/lending.py`); it waited for the whole of it before. The /synth reads
    the lecture's first 6 sections (358 characters; 12 before, 683: 46 s of the test's wall at load 14,
    2026-12-07): a preview lent the engine is heard after the decoder step it waits for and its own,
    while one not lent it waits for every segment of all 6."""
    client = default_worker
    admission = client.app[SCHEDULER_KEY].admission
    lecture = json.loads(
        (Path(__file__).parents[2] / "npu_worker/bench/lecture_ko_39.json").read_text("utf-8")
    )
    long_text = " ".join(section["text"] for section in lecture["sections"][:6])
    body = {"text": long_text, "output_path": str(tmp_path / "long.wav")}
    synth = asyncio.ensure_future(client.post("/synth", json=body))
    await until(lambda: any(job.sections[0].taken for job in admission.live_jobs()), "the /synth running")
    async with client.ws_connect("/ws") as ws:
        await ws.send_json({"type": "synth", "text": "안녕하세요.", "audio": True})
        while (await ws.receive(timeout=seconds(60))).type != aiohttp.WSMsgType.BINARY:
            pass
        heard_while_running = not synth.done()
    assert (await (await synth).json())["status"] == "ok"
    assert heard_while_running
