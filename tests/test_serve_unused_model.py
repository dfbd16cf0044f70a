"""`npu-worker serve` given a ZipVoice model without `--backend zipvoice-onnx`: it serves the backend it was
given (espeak by default) and says in its log that the model is not loaded."""

from __future__ import annotations

import os
from pathlib import Path

from npu_worker.config import Settings
from npu_worker.engine_options import unused_voice_settings
from tests.serve_process import ServeProcess
from tests.timing import seconds

REPO = Path(__file__).resolve().parents[1]


def logged(args: list[str], env: dict[str, str], words: str) -> str:
    """The last line of `serve ARGS`'s log up to the first that holds `words`, the server then stopped;
    `env` added to this environment with the repository importable."""
    worker = ServeProcess(args, {**os.environ, "PYTHONPATH": str(REPO), **env})
    try:
        return worker.log_until(words, seconds(30)).splitlines()[-1]
    finally:
        worker.terminate_and_log(seconds(30))


def test_a_model_dir_given_to_the_espeak_backend_is_warned_about_as_not_loaded(tmp_path):
    """`serve --model-dir M` (the backend flag forgotten) served espeak without a word: the operator heard
    espeak's voice and took it for the model's."""
    model = tmp_path / "model"
    model.mkdir()
    args = ["--state-dir", str(tmp_path / "state"), "--model-dir", str(model)]
    said = logged(args, {}, "is not loaded")
    assert said.endswith(
        f"WARNING npu_worker: --model-dir {model} is not loaded: --backend is espeak "
        "(the model files are for --backend zipvoice-onnx)"
    )


def test_a_model_dir_from_the_environment_is_named_by_its_variable(tmp_path):
    """From the service's env file it is named as given there, not as a flag no command line held."""
    model = tmp_path / "model"
    model.mkdir()
    args = ["--state-dir", str(tmp_path / "state"), "--backend", "espeak"]
    said = logged(args, {"NPU_WORKER_MODEL_DIR": str(model)}, "is not loaded")
    assert f"WARNING npu_worker: NPU_WORKER_MODEL_DIR {model} is not loaded: --backend is espeak " in said


def test_zipvoice_settings_given_to_the_espeak_backend_are_warned_about_as_not_used(tmp_path):
    """`--num-steps 0` (out of range), a SoC no one makes, the trim turned off: espeak ran on without a
    word, as it did for `--model-dir` (each named as given: flag or env var)."""
    args = ["--state-dir", str(tmp_path / "state"), "--num-steps", "0", "--no-trim-edge-silence"]
    said = logged(args, {"NPU_WORKER_QNN_SOC": "bogus"}, "not used")
    assert said.endswith(
        "WARNING npu_worker: NPU_WORKER_QNN_SOC bogus, --num-steps 0, --trim-edge-silence off: not used, "
        "--backend is espeak (ZipVoice's settings, for --backend zipvoice-onnx; not checked either)"
    )


def test_a_reference_voice_given_to_the_espeak_backend_is_warned_about_as_not_used(tmp_path):
    """`--ref-wav`/`--ref-text` with espeak: it speaks its own voices, yet the start said nothing of them
    while it warned of every ZipVoice setting (the transcript named as given, never shown)."""
    voice = tmp_path / "voice.wav"
    voice.write_bytes(b"RIFF")  # never read: espeak takes no reference wav
    args = ["--state-dir", str(tmp_path / "state"), "--ref-wav", str(voice)]
    said = logged(args, {"NPU_WORKER_REF_TEXT": "--num-steps 9, a long transcript"}, "not used")
    assert said.endswith(
        f"WARNING npu_worker: --ref-wav {voice}, NPU_WORKER_REF_TEXT: not used, --backend is espeak (it "
        "speaks its own voices, never a reference wav; --ref-wav is still kept from callers' output_path)"
    )


def test_a_reference_voice_given_to_an_api_node_is_not_warned_about(tmp_path):
    """An api node loads no engine (its `--backend` is left at espeak): its `--ref-wav` is the voice
    `default` that a request's `ref_wav: "default"` is made and sent to its engine nodes (ZipVoice) as,
    yet its log said `not used, --backend is espeak`, and the operator who believed it took the voice away."""
    voice = tmp_path / "voice.wav"
    settings = Settings(role="api", queue="redis://127.0.0.1:1/0", ref_wav=str(voice), ref_text="words")
    assert unused_voice_settings(settings) == []
    both = unused_voice_settings(settings.replace(role="both"))  # an espeak engine on this node: warned
    assert both == [
        f"--ref-wav {voice}, --ref-text: not used, --backend is espeak (it speaks its own voices, never a "
        "reference wav; --ref-wav is still kept from callers' output_path)"
    ]
