"""Execution providers: the device table, real placement, QNN on the HTP simulator, fallback reasons.

The QNN tests run the real onnxruntime-qnn plugin (HTP backend; on x86-64 that is the simulator) with
a small fixed-shape decoder (tests/zipvoice/simple_decoder.py). They take a few seconds and run by
default; NPU_WORKER_QNN_TESTS=0 skips them. With a target SoC (`--qnn-soc`, 8gen3 on the simulator)
HTP runs fp32 graphs in fp16: tolerance QNN vs CPU is 3e-3 relative L2 (measured ≈ 1e-3).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import logging
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from npu_worker.engine import providers
from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.providers import DeviceUnavailable, RuntimeConfig
from npu_worker.engine.zipvoice import runtime
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine, create
from npu_worker.engine.zipvoice.options import ZipVoiceOptions
from npu_worker.protocol import ModelLoadError
from tests.zipvoice.conftest import engine_config
from tests.zipvoice.test_prepared_files import valid_manifest

X86 = platform.machine().lower() in providers.X86_MACHINES
HAVE_QNN = importlib.util.find_spec("onnxruntime_qnn") is not None
qnn = pytest.mark.skipif(
    not HAVE_QNN or os.environ.get("NPU_WORKER_QNN_TESTS", "1") == "0",
    reason="onnxruntime-qnn missing or NPU_WORKER_QNN_TESTS=0",
)
x86_only = pytest.mark.skipif(not X86, reason="the HTP simulator rule concerns x86-64 hosts")
TEXT = "안녕하세요. 오늘은 배터리를 봅니다."
BUCKETS = (319, 511, 767)


def decoder_feed(frames: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "t": np.array(0.3, np.float32),
        "x": rng.standard_normal((1, frames, 100), dtype=np.float32),
        "text_condition": rng.standard_normal((1, frames, 100), dtype=np.float32),
        "speech_condition": rng.standard_normal((1, frames, 100), dtype=np.float32),
        "guidance_scale": np.array(3.0, np.float32),
    }


def relative_l2(reference: np.ndarray, other: np.ndarray) -> float:
    return float(np.linalg.norm(other - reference) / np.linalg.norm(reference))


# The engines a test loaded, closed after it with their espeak children (else left running to the session's
# end).
LOADED: list[ZipVoiceEngine] = []


@pytest.fixture(autouse=True)
def engines_closed() -> Iterator[None]:
    yield
    while LOADED:
        LOADED.pop().close()


def loaded(engine: ZipVoiceEngine) -> ZipVoiceEngine:
    LOADED.append(engine)
    engine.load()
    return engine


def qnn_engine(model_dir: Path, state_dir: Path, **changes: object) -> ZipVoiceEngine:
    config = engine_config(model_dir, state_dir, allow_htp_simulator=True, **changes)
    return loaded(ZipVoiceEngine(dataclasses.replace(config, options=ZipVoiceOptions(buckets=BUCKETS))))


def test_auto_tries_qnn_then_cuda_then_cpu_and_explicit_devices_only_themselves():
    assert providers.candidates("auto") == ("qnn", "cuda", "cpu")
    assert providers.candidates("cpu") == ("cpu",)
    with pytest.raises(ModelLoadError, match="unknown device"):
        providers.candidates("tpu")


def test_session_threads_are_physical_cores_by_default_with_one_inter_op_thread():
    options = providers.session_options(RuntimeConfig())
    assert options.intra_op_num_threads == providers.physical_cores() >= 1
    assert options.inter_op_num_threads == 1
    assert providers.session_options(RuntimeConfig(threads=3)).intra_op_num_threads == 3


@x86_only
def test_auto_passes_over_the_htp_simulator_and_says_why(qnn_model_dir, tmp_path):
    engine = loaded(create(engine_config(qnn_model_dir, tmp_path, device="auto")))
    assert engine.info.device == "cpu"
    assert "simulator" in engine.info.fallback_reason
    assert "it runs only with --allow-htp-simulator" in engine.info.fallback_reason


@x86_only
def test_qnn_passed_over_is_not_said_to_be_compiling(qnn_model_dir):
    """Every ZipVoice start off the NPU (`--device auto` on x86, or without onnxruntime-qnn) logged, and
    showed as /health's load_phase, "specialising and compiling fm_decoder@… for qnn (1/5)", then at once
    "device qnn not used": nothing was compiled. The reason now comes before any such line."""
    said: list[str] = []
    with pytest.raises(DeviceUnavailable, match="simulator"):
        runtime.open_bucketed_decoder(
            qnn_model_dir / "fm_decoder.onnx", "qnn", RuntimeConfig(), BUCKETS, progress=said.append
        )
    assert said == []


@x86_only
def test_explicit_qnn_without_the_simulator_opt_in_is_a_model_load_error(qnn_model_dir, tmp_path):
    engine = create(engine_config(qnn_model_dir, tmp_path, device="qnn"))
    with pytest.raises(ModelLoadError, match="--device qnn.*simulator") as caught:
        engine.load()
    assert caught.value.fallback == "cpu"
    # asked for by name, it was "never chosen automatically": the operator had not asked automatically
    assert "automatically" not in str(caught.value) and "only with --allow-htp-simulator" in str(caught.value)


@pytest.mark.skipif(providers.cuda_reason() is None, reason="onnxruntime-gpu with CUDA is installed")
def test_explicit_cuda_without_onnxruntime_gpu_is_a_model_load_error(qnn_model_dir, tmp_path):
    engine = create(engine_config(qnn_model_dir, tmp_path, device="cuda"))
    with pytest.raises(ModelLoadError, match="onnxruntime-gpu"):
        engine.load()


@qnn
def test_qnn_decoder_on_the_htp_simulator_runs_every_node_and_matches_cpu(qnn_model_dir):
    config = RuntimeConfig(allow_htp_simulator=True)
    path = qnn_model_dir / "fm_decoder.onnx"
    on_qnn = providers.open_session(path, "qnn", config, {"N": 1, "T": 128})
    on_cpu = providers.open_session(path, "cpu", config)
    assert set(providers.placement(on_qnn)) == {"QNNExecutionProvider"}
    feed = decoder_feed(128)
    assert relative_l2(on_cpu.run(None, feed)[0], on_qnn.run(None, feed)[0]) < 3e-3


@qnn
def test_qnn_taking_only_static_scalar_nodes_of_a_dynamic_graph_is_not_running_on_qnn(qnn_model_dir):
    with pytest.raises(DeviceUnavailable, match="took only 2 of 11 nodes of fm_decoder.onnx"):
        providers.open_session(
            qnn_model_dir / "fm_decoder.onnx", "qnn", RuntimeConfig(allow_htp_simulator=True)
        )


@qnn
def test_engine_on_qnn_buckets_matches_the_cpu_engine(qnn_model_dir, tmp_path, caplog):
    caplog.set_level("INFO", logger="npu_worker.engine.zipvoice.engine")
    engine = qnn_engine(qnn_model_dir, tmp_path / "qnn", device="qnn")
    assert engine.info.device == "qnn" and engine.info.fallback_reason is None
    assert f"loading: specialising and compiling fm_decoder@{BUCKETS[-1]} for qnn" in caplog.text
    on_qnn = np.concatenate(list(engine.stream(SynthesisRequest(TEXT, seed=3))))
    frames = [trace.frames for trace in engine.traces]
    assert any(f not in BUCKETS for f in frames)  # padded up to a bucket and cut back
    cpu = qnn_engine(qnn_model_dir, tmp_path / "cpu", device="cpu", fixed_shapes=True)
    on_cpu = np.concatenate(list(cpu.stream(SynthesisRequest(TEXT, seed=3))))
    assert on_qnn.size == on_cpu.size  # same buckets, same padding, only the device differs
    assert relative_l2(on_cpu, on_qnn) < 3e-2


@qnn
def test_auto_with_the_simulator_allowed_prefers_qnn(qnn_model_dir, tmp_path):
    assert qnn_engine(qnn_model_dir, tmp_path, device="auto").info.device == "qnn"


@qnn
def test_auto_falls_back_to_cpu_when_qnn_takes_no_nodes_and_says_so(cpu_only_model_dir, tmp_path):
    engine = qnn_engine(cpu_only_model_dir, tmp_path, device="auto")
    assert engine.info.device == "cpu"
    assert "qnn: QNNExecutionProvider took no nodes of fm_decoder.onnx" in engine.info.fallback_reason
    assert sum(chunk.size for chunk in engine.stream(SynthesisRequest("안녕하세요."))) > 0


@qnn
def test_auto_does_not_take_a_decoder_qnn_runs_only_partly_and_says_how_much(partial_model_dir, tmp_path):
    engine = qnn_engine(partial_model_dir, tmp_path, device="auto")
    assert engine.info.device == "cpu"
    assert (
        "qnn: QNNExecutionProvider took only 11 of 12 nodes of fm_decoder.onnx" in engine.info.fallback_reason
    )
    assert "1 would run on the CPU" in engine.info.fallback_reason


@qnn
def test_explicit_qnn_starts_with_a_partial_decoder_and_health_shows_it(partial_model_dir, tmp_path, caplog):
    engine = qnn_engine(partial_model_dir, tmp_path, device="qnn")
    assert engine.info.device == "qnn"
    placement = engine.info.placement
    assert {placement[f"fm_decoder@{size}"]["on_device"] for size in BUCKETS} == {11}
    assert placement[f"fm_decoder@{BUCKETS[0]}"] == {"device": "qnn", "nodes": 12, "on_device": 11}
    assert placement["fm_decoder"]["device"] == "cpu"  # longer than the last bucket: the dynamic CPU session
    assert placement["text_encoder"]["device"] == "cpu" and placement["vocos_24khz"]["device"] == "cpu"
    assert "runs 11 of 12 nodes; 1 run on the CPU" in caplog.text


def test_without_the_qnn_plugin_a_prepared_directory_falls_back_to_the_cpu_and_the_log_says_so(
    tiny_model_dir, tmp_path, caplog, monkeypatch
):
    """The log said "loading 1 compiled QNN contexts" before finding that QNN is missing."""
    model = tmp_path / "prepared"
    shutil.copytree(tiny_model_dir, model)
    (model / "manifest.json").write_text(json.dumps(valid_manifest()))
    monkeypatch.setitem(sys.modules, "onnxruntime_qnn", None)  # import fails: as if not installed
    caplog.set_level(logging.INFO)
    engine = loaded(create(engine_config(model, tmp_path / "state", device="auto", allow_htp_simulator=True)))
    assert engine.info.device == "cpu"
    assert "qnn: onnxruntime-qnn is not installed" in (engine.info.fallback_reason or "")
    assert "device qnn not used: onnxruntime-qnn is not installed" in caplog.text
    assert "compiled QNN contexts" not in caplog.text


def _spinning(session) -> str:  # noqa: ANN001 - an onnxruntime InferenceSession
    options = session.get_session_options()
    try:
        return options.get_session_config_entry("session.intra_op.allow_spinning")
    except RuntimeError:  # not set: onnxruntime's default, spinning on
        return "1"


@pytest.fixture(scope="module")
def cpu_models(tiny_model_dir: Path) -> runtime.LoadedModels:
    """The three sessions on the CPU, pools of two threads (one thread has none to spin), opened once for
    the two tests below (≈ 1.7 s of CPU each; placement does not depend on the thread count)."""
    return runtime.open_models(
        tiny_model_dir / "text_encoder.onnx", tiny_model_dir / "fm_decoder.onnx",
        tiny_model_dir / "vocos_24khz.onnx", "cpu", RuntimeConfig(threads=2),
    )  # fmt: skip


def test_only_the_decoder_keeps_spinning_worker_threads(cpu_models) -> None:
    """The text encoder and vocoder run once between decoder calls: their pools must not spin after."""
    models = cpu_models
    assert _spinning(models.encoder.session) == "0"
    assert _spinning(models.vocoder_session) == "0"
    assert isinstance(models.decoder, runtime.Decoder)
    assert _spinning(models.decoder.session) == "1"


def test_every_session_on_the_cpu_is_reported_whole_on_the_cpu(cpu_models) -> None:
    models = cpu_models
    assert set(models.placement) == {"text_encoder", "fm_decoder", "vocos_24khz"}
    for where in models.placement.values():
        assert where.device == "cpu" and where.nodes == where.on_device > 0


@qnn
def test_a_reference_voice_reads_after_the_qnn_plugin_is_loaded(qnn_model_dir, tmp_path):
    """The QNN libraries bring libffi symbols of their own; soundfile must still read a wav after them
    (in a fresh process, where nothing imported soundfile before the plugin)."""
    script = (
        "import sys, pathlib\n"
        "from npu_worker.engine import providers\n"
        "config = providers.RuntimeConfig(threads=1, allow_htp_simulator=True)\n"
        "providers.open_session(pathlib.Path(sys.argv[1]), 'qnn', config, {'N': 1, 'T': 16})\n"
        "from npu_worker.audio_decode import read_wav\n"
        "print(read_wav(pathlib.Path(sys.argv[2]).read_bytes())[0].size)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, str(qnn_model_dir / "fm_decoder.onnx"), str(qnn_model_dir / "reference_ko.wav")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert int(run.stdout.split()[-1]) > 0
