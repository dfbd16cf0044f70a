"""`npu-worker prepare --precision a16w8`: a statically quantised decoder, calibrated on the engine's own
decoder calls, compiled for HTP, served, and measured against fp32 on the CPU.

Both real-layer-count fixtures (the generated tiny model and the small export), one bucket each (383
frames) and two short calibration sentences, to keep the simulator's share of the suite small; the
full-size figures are benchmarks/qnn_quantise.py's.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from npu_worker import cli
from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.zipvoice import calibration, qdq
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine, create
from npu_worker.protocol import ModelLoadError
from tests.zipvoice.conftest import SHARED_REAL_STRUCTURE, engine_config, small_export_with_voice
from tests.zipvoice.test_providers import qnn

pytestmark = [qnn]
BUCKET = 383
SENTENCES = [
    {"text": "안녕하세요. 오늘은 행렬의 곱셈을 배웁니다.", "lang": "ko"},
    {"text": "질문이 있으면 손을 들어 주세요.", "lang": "ko"},
]
CHECKED = "오늘은 맑습니다."


@pytest.fixture(scope="module", params=["generated", "shared"])
def source_dir(request, tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real-layer-count model with fp32 and int8 files and a reference voice."""
    if request.param == "generated":
        return tiny_model_dir
    if not SHARED_REAL_STRUCTURE.is_dir():
        pytest.skip("the small real-structure export is not beside the repo")
    return small_export_with_voice(tiny_model_dir, tmp_path_factory)


@pytest.fixture(scope="module")
def quantised_dir(source_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    texts = tmp_path_factory.mktemp("texts") / "calibration.json"
    texts.write_text(json.dumps(SENTENCES, ensure_ascii=False), encoding="utf-8")
    out = tmp_path_factory.mktemp("prepared") / "a16w8"
    args = [
        "prepare", "--model-dir", str(source_dir), "--out", str(out), "--precision", "a16w8",
        "--buckets", str(BUCKET), "--optimization", "fast", "--calibration-texts", str(texts),
        "--calibration-calls", "6", "--check-calls", "2", "--num-steps", "4",
    ]  # fmt: skip
    assert cli.main(args) == 0
    return out


def test_the_manifest_says_what_was_calibrated_and_how_far_each_bucket_is_from_fp32(quantised_dir: Path):
    manifest = json.loads((quantised_dir / "manifest.json").read_text())
    assert (manifest["precision"], manifest["files"], manifest["runs_as"]) == ("a16w8", "fp32", "a16w8")
    made = manifest["calibration"]
    assert made["texts"] == 2 and made["texts_sha256"] == calibration.texts_digest(
        [calibration.CalibrationText(**item) for item in SENTENCES]
    )
    assert made["voice"]["file"] == "reference_ko.wav" and len(made["voice"]["sha256"]) == 64
    assert made["decoder_calls"][str(BUCKET)] >= 8 and made["kept"][str(BUCKET)] == 8  # 6 + 2 held out
    record = manifest["contexts"][str(BUCKET)]
    assert record["calibration_calls"] == 6 and record["quantise_seconds"] > 0
    placement = record["placement"]
    # every node on QNN except the float↔fixed conversions of x, text_condition, speech_condition and v
    assert placement["boundary"] == 4 and placement["on_device"] + 4 == placement["nodes"] > 2000
    assert record["kept_in_float"] > 0  # the time and guidance embeddings, the Swoosh softplus
    accuracy = record["accuracy"]
    # measured 0.28-0.47 % on HTP (generated model), as the same QDQ graph on the CPU
    assert accuracy["calls"] == 2 and 0 < accuracy["max_relative_l2"] < 0.02, accuracy
    assert max(accuracy["same_graph_on_cpu_relative_l2"]) < 0.02, accuracy


def test_serve_loads_the_quantised_buckets_and_health_says_a16w8(quantised_dir: Path, tmp_path):
    engine = ZipVoiceEngine(engine_config(quantised_dir, tmp_path, device="qnn", allow_htp_simulator=True))
    engine.load()
    assert (engine.info.device, engine.info.precision) == ("qnn", "a16w8")
    where = engine.info.placement[f"fm_decoder@{BUCKET}"]
    assert where["boundary"] == 4 and where["on_device"] + 4 == where["nodes"]


def test_a_sentence_is_no_farther_from_fp32_than_the_cpu_int8_files_are(
    source_dir: Path, quantised_dir: Path, tmp_path
):
    """The CPU runs fixed shapes too (`--fixed-shapes`: the same padding to the bucket as the NPU), so the
    distance is the arithmetic's, not the padding's (dynamic vs padded alone is ≈ 0.39 on this model)."""

    def sentence(model_dir: Path, **changes: object) -> tuple[np.ndarray, ZipVoiceEngine]:
        engine = create(engine_config(model_dir, tmp_path / str(len(changes)), **changes))
        engine.load()
        request = SynthesisRequest(CHECKED, "ko", seed=1, early_audio=False)  # one segment: 4 calls
        return np.concatenate([c for c in engine.stream(request) if c.size]), engine

    reference, engine = sentence(source_dir, fixed_shapes=True)  # fp32 on the CPU
    assert max(trace.frames for trace in engine.traces) <= BUCKET  # the NPU's one bucket, no overflow
    int8, _ = sentence(source_dir, precision="int8", fixed_shapes=True)
    npu, _ = sentence(quantised_dir, device="qnn", allow_htp_simulator=True)
    cpu_int8 = qdq.log_mel_distance(reference, int8, engine.spectrum)
    a16w8 = qdq.log_mel_distance(reference, npu, engine.spectrum)
    print(f"log-mel distance from fp32: CPU int8 {cpu_int8:.4f}, NPU a16w8 {a16w8:.4f}")
    assert 0 < a16w8 <= cpu_int8, (a16w8, cpu_int8)


def test_a_quantised_directory_is_refused_by_a_worker_serving_the_int8_files(quantised_dir: Path, tmp_path):
    config = engine_config(quantised_dir, tmp_path, device="qnn", allow_htp_simulator=True, precision="int8")
    with pytest.raises(ModelLoadError, match="serve with --precision fp32"):
        create(config).load()


def test_calibration_texts_that_are_not_a_list_of_texts_are_refused(tiny_model_dir: Path, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"lang": "ko"}]))
    with pytest.raises(ValueError, match="item 0 has no text"):
        calibration.read_texts(bad)
    args = ["prepare", "--model-dir", str(tiny_model_dir), "--out", str(tmp_path / "out"),
            "--precision", "a16w8", "--calibration-texts", str(bad)]  # fmt: skip
    assert cli.main(args) == 2
    assert "item 0 has no text" in capsys.readouterr().err
    assert not (tmp_path / "out" / "manifest.json").exists()
