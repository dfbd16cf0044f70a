"""The synthesis cache across restarts with other ZipVoice settings: a cached section is served only to
a worker that would have made the same audio (steps, guidance, default voice, the model's files)."""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient
from blockbuster import blockbuster_ctx

from npu_worker.app import build_app
from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.audio import wav_bytes
from npu_worker.audio_decode import read_wav
from tests.conftest import ServedAsInProduction, wait_until_loaded
from tests.zipvoice.conftest import engine_settings

TEXT = {"text": "반갑습니다.", "seed": 7}
CACHE = {"cache_max_bytes": 10**7}


@dataclass(frozen=True)
class FirstRun:
    """What the first worker (the settings every test restarts from) answered, and the state it left."""

    state: Path
    first: dict
    again: dict
    model: str


@pytest.fixture(scope="module")
def first_run(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> FirstRun:
    """Run once for the module: every test started this same worker first (an engine load and a warm-up
    each, four times over); each now restarts on its own copy of the state it left."""
    root = tmp_path_factory.mktemp("first-run")
    loop = asyncio.new_event_loop()
    try:
        with blockbuster_ctx("npu_worker"):  # the guard the tests' own workers run under
            return loop.run_until_complete(run_first(tiny_model_dir, root))
    finally:
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()


async def run_first(model_dir: Path, root: Path) -> FirstRun:
    settings = engine_settings(model_dir, root / "state", output_roots=(str(root),)).replace(**CACHE)
    app = await asyncio.to_thread(build_app, settings, None)
    async with TestClient(ServedAsInProduction(app)) as client:
        await wait_until_loaded(client)
        first = await synth(client, root / "a.wav")
        again = await synth(client, root / "b.wav")
        return FirstRun(root / "state", first, again, client_engine_model(client))


async def restart(worker, first_run: FirstRun, model_dir: Path, tmp_path: Path, **changes):
    """A ZipVoice worker with the cache on, on a copy of the first run's state dir."""
    shutil.copytree(first_run.state, tmp_path / "state", symlinks=True)
    return await start(worker, model_dir, tmp_path, **changes)


async def start(worker, model_dir: Path, tmp_path: Path, **changes):
    """A ZipVoice worker with the cache on, on `tmp_path`'s state dir (the same for every start)."""
    settings = engine_settings(model_dir, tmp_path / "state", output_roots=(str(tmp_path),), **changes)
    names = ("backend", "model_dir", "ref_wav", "state_dir", "precision", "device", "num_steps", "threads")
    overrides = {name: getattr(settings, name) for name in names}
    return await worker(engine=None, output_roots=(str(tmp_path),), **CACHE, **overrides)


async def synth(client, path: Path) -> dict:
    return await (await client.post("/synth", json={**TEXT, "output_path": str(path)})).json()


def test_the_first_run_caches_its_section(first_run):
    """The state every test restarts on holds the section: its second request was served from it."""
    assert "cached" not in first_run.first and first_run.first["status"] == "ok", first_run.first
    assert first_run.again["cached"] is True


async def test_a_restart_with_other_steps_is_not_served_the_old_audio(
    worker, first_run, tiny_model_dir, tmp_path
):
    """The key named the model by its folder and decoder file only: `--num-steps 2` after a run with 4
    was answered `cached` with the first run's audio."""
    fewer_steps = await restart(worker, first_run, tiny_model_dir, tmp_path, num_steps=2)
    assert "cached" not in await synth(fewer_steps, tmp_path / "c.wav")


async def test_a_restart_with_another_default_voice_is_not_served_the_old_audio(
    worker, first_run, tiny_model_dir, tmp_path
):
    """A request that names no voice speaks with `--ref-wav`: its key said only `default`."""
    other_voice = tmp_path / "other.wav"
    samples, rate = read_wav((tiny_model_dir / "reference_ko.wav").read_bytes())
    other_voice.write_bytes(wav_bytes(samples[::-1] * 0.5, rate))
    shutil.copy(tiny_model_dir / "reference_ko.txt", tmp_path / "other.txt")
    revoiced = await restart(worker, first_run, tiny_model_dir, tmp_path, ref_wav=str(other_voice))
    answer = await synth(revoiced, tmp_path / "d.wav")
    assert answer["status"] == "ok" and "cached" not in answer, answer


async def test_a_model_folder_of_the_same_name_elsewhere_is_another_model(
    worker, first_run, tiny_model_dir, tmp_path, tmp_path_factory
):
    """Two exports both called `tiny-distill` (another checkout, a re-export): the key was the same."""
    copy = tmp_path_factory.mktemp("elsewhere") / tiny_model_dir.name
    shutil.copytree(tiny_model_dir, copy)
    decoder = copy / "fm_decoder.onnx"
    decoder.write_bytes(decoder.read_bytes())  # a re-exported decoder: same name, new file
    # the same default voice file: only the model differs (the copy's own reference_ko.wav was another
    # voice path, and alone made the key differ)
    moved = await restart(worker, first_run, copy, tmp_path, ref_wav=str(tiny_model_dir / "reference_ko.wav"))
    assert client_engine_model(moved) == first_run.model  # /health names it the same
    assert "cached" not in await synth(moved, tmp_path / "b.wav")


def client_engine_model(client) -> str:
    return client.app[SCHEDULER_KEY].info.model


async def test_an_upgrade_that_changes_the_audio_is_not_served_the_old_audio(
    worker, first_run, tiny_model_dir, tmp_path, monkeypatch
):
    """A fix that changes what the engine makes (the first segment's level, say) left entries made before
    it answering `cached` with the old audio after an upgrade: the key holds AUDIO_REVISION."""
    from npu_worker.engine.zipvoice import audio_identity

    again = await restart(worker, first_run, tiny_model_dir, tmp_path)
    assert (await synth(again, tmp_path / "b.wav"))["cached"] is True  # the entry outlives a restart
    await again.close()
    monkeypatch.setattr(audio_identity, "AUDIO_REVISION", audio_identity.AUDIO_REVISION + 1)
    upgraded = await start(worker, tiny_model_dir, tmp_path)
    assert "cached" not in await synth(upgraded, tmp_path / "c.wav")
