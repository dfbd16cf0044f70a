"""Engines are built from explicit configs, validated once at start-up with a message naming the value."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.config import Settings
from npu_worker.engine.espeak import EspeakConfig, EspeakEngine
from npu_worker.engine.factory import create_engine
from npu_worker.engine.sovits import SovitsConfig
from npu_worker.engine.zipvoice.options import ZipVoiceConfig, ZipVoiceOptions
from npu_worker.engine.zipvoice.prompt import PromptOptions
from npu_worker.engine_options import build_engine, zipvoice_config
from tests.timing import seconds
from tests.tone_engine import ToneEngine


def zipvoice(**changes: object) -> Settings:
    return Settings(backend="zipvoice-onnx", model_dir="/models/zipvoice").replace(**changes)


def test_the_server_settings_map_onto_the_zipvoice_config():
    config = zipvoice_config(
        zipvoice(
            precision="fp32", threads=3, num_steps=6, seed=5, prompt_max_seconds=2.5, segment_seconds=9.0
        )
    )
    assert isinstance(config, ZipVoiceConfig)
    assert (config.model_dir, config.precision, config.runtime.threads) == ("/models/zipvoice", "fp32", 3)
    assert (config.num_steps, config.seed) == (6, 5)
    assert (config.options.prompt.max_seconds, config.options.segment_seconds) == (2.5, 9.0)
    config.validate()  # nothing is opened: the directory need not exist yet


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"tokenizer": "pinyin"}, "unknown tokenizer 'pinyin'"),
        ({"num_steps": 0}, "num_steps (--num-steps) must be in 1..64"),
        ({"guidance_scale": -1.0}, "guidance_scale (--guidance-scale) must be"),
        ({"qnn_soc": "sm9999"}, "unknown --qnn-soc 'sm9999'"),
        ({"first_prompt_max_seconds": 5.0}, "first_max_seconds (--first-prompt-max-seconds)"),
        (
            {"segment_seconds": 1.0},
            "first_segment_seconds (--first-segment-seconds) <= segment_seconds (--segment",
        ),
        # each named by the flag that sets it: `serve --first-segment-seconds 0` named only fields
        (
            {"first_segment_seconds": 0.0},
            "first_segment_seconds (--first-segment-seconds) must be above 0, got 0.0",
        ),
        ({"first_segment_steps": 99}, "first_segment_steps (--first-segment-steps) must be in 1..64"),
        ({"segment_seconds": float("inf")}, "segment_seconds (--segment-seconds) must be from 0"),
        ({"segment_seconds": 60.0}, "segment_seconds (--segment-seconds) must be from 0"),
        ({"prompt_max_seconds": float("inf")}, "--prompt-max-seconds must be at most 30"),
        ({"prompt_max_pause_seconds": float("nan")}, "--prompt-max-pause-seconds must be above 0"),
        ({"model_dir": None}, "--model-dir"),
    ],
)
def test_a_bad_zipvoice_setting_is_refused_before_any_model_is_opened(changes, named):
    with pytest.raises(ValueError, match="invalid ZipVoice configuration") as caught:
        build_engine(zipvoice(**changes))
    assert named in str(caught.value)


def test_every_problem_is_listed_at_once():
    options = ZipVoiceOptions(crossfade_ms=-1, prompt=PromptOptions(max_seconds=0.5))
    config = ZipVoiceConfig("/m", precision="int4", options=options)
    with pytest.raises(ValueError) as caught:
        config.validate()
    message = str(caught.value)
    assert "precision" in message and "crossfade_ms" in message and "prompt bounds" in message


def test_other_backends_take_their_own_configs():
    assert isinstance(create_engine("espeak", EspeakConfig()), EspeakEngine)
    with pytest.raises(ValueError, match="base URL"):
        create_engine("sovits", SovitsConfig("ftp://somewhere"))
    with pytest.raises(ValueError, match="unknown backend 'piper'"):
        create_engine("piper", EspeakConfig())


@pytest.mark.parametrize(
    ("base", "named"),
    [
        ("http://user:hunter2@127.0.0.1:7766", "must not carry a user or password"),
        ("http://hunter2@127.0.0.1:7766", "must not carry a user or password"),
        ("http://127.0.0.1:abc", "port must be 1-65535"),
        ("http://127.0.0.1:99999", "port must be 1-65535"),
        ("http://127.0.0.1:0", "port must be 1-65535"),
        ("http://127.0.0.1:7766/?x=1", "query or fragment"),
        ("http://127.0.0.1:7766/#top", "query or fragment"),
        ("http://:7766", "http(s)://host:port"),
    ],
)
def test_a_sovits_base_that_cannot_work_is_refused_naming_why(base, named):
    with pytest.raises(ValueError) as caught:
        SovitsConfig(base).validate()
    assert named in str(caught.value)
    assert "hunter2" not in str(caught.value)  # a refusal goes to the log: never the password


def test_a_sovits_base_with_a_path_prefix_is_accepted():
    SovitsConfig("https://[::1]:8443/tts/").validate()


def test_serve_with_credentials_in_the_sovits_base_exits_2_without_showing_them(tmp_path):
    command = [sys.executable, "-m", "npu_worker.cli", "serve", "--backend", "sovits",
               "--sovits-base", "http://user:hunter2@127.0.0.1:7766", "--state-dir", str(tmp_path)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds(60))
    assert done.returncode == 2
    assert "must not carry a user or password" in done.stderr and "Traceback" not in done.stderr
    assert "hunter2" not in done.stderr


def test_serve_with_a_bad_setting_exits_2_naming_it_instead_of_a_traceback(tmp_path):
    command = [sys.executable, "-m", "npu_worker.cli", "serve", "--backend", "zipvoice-onnx",
               "--model-dir", str(tmp_path), "--tokenizer", "pinyin", "--state-dir", str(tmp_path)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds(60))
    assert done.returncode == 2
    assert "unknown tokenizer 'pinyin'" in done.stderr and "Traceback" not in done.stderr


def test_serve_with_a_chunk_under_one_sample_exits_2_naming_it_instead_of_a_traceback(tmp_path):
    command = [sys.executable, "-m", "npu_worker.cli", "serve", "--chunk-schedule-ms", "0.01",
               "--state-dir", str(tmp_path)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds(60))
    assert done.returncode == 2, done.stderr
    assert "npu-worker serve: chunk sizes must be at least one sample, got (0.01,) ms" in done.stderr
    assert "Traceback" not in done.stderr


async def test_a_chunk_schedule_is_checked_at_the_engines_real_sample_rate(worker):
    # 0.05 ms is one sample at 24 kHz (accepted when the app is built) but none at 8 kHz.
    client = await worker(ToneEngine(sample_rate=8000), wait_loaded=False, chunk_schedule_ms=(0.05,))
    scheduler = client.app[SCHEDULER_KEY]
    async with asyncio.timeout(seconds(10)):
        while scheduler.load_error is None:
            await asyncio.sleep(0.01)
    assert "8000 Hz" in scheduler.load_error.message and "at least one sample" in scheduler.load_error.message
    response = await client.get("/ready")
    assert response.status == 503


@pytest.mark.parametrize(
    ("flags", "env", "named"),
    [
        ((), {"NPU_WORKER_NUM_STEPS": "0"}, "num_steps (NPU_WORKER_NUM_STEPS) must be in 1..64, got 0"),
        (
            ("--num-steps", "0"),
            {"NPU_WORKER_NUM_STEPS": "8"},
            "num_steps (--num-steps) must be in 1..64, got 0",
        ),
        (
            (),
            {"NPU_WORKER_FIRST_SEGMENT_SECONDS": "0"},
            "first_segment_seconds (NPU_WORKER_FIRST_SEGMENT_SECONDS) must be above 0, got 0.0",
        ),
        (
            ("--first-segment-seconds", "0"),
            {},
            "first_segment_seconds (--first-segment-seconds) must be above 0",
        ),
    ],
)
def test_serve_names_a_bad_engine_setting_as_it_was_given(tmp_path, flags, env, named):
    """A setting from the env (the service's EnvironmentFile=) is named by its env var, as a value the
    env var's parser refuses already was: it was named by a flag no command line held (a flag wins)."""
    command = [sys.executable, "-m", "npu_worker.cli", "serve", "--backend", "zipvoice-onnx",
               "--model-dir", str(tmp_path), "--state-dir", str(tmp_path / "state"), *flags]  # fmt: skip
    environ = {k: v for k, v in os.environ.items() if not k.startswith("NPU_WORKER_")} | env
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds(60), env=environ)
    assert done.returncode == 2, done.stderr
    assert named in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "first_segment_min_seconds" not in done.stderr  # (serve derives it: no caller sets it)
