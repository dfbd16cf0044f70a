"""`npu-worker prepare --precision a16w8`: a statically quantised decoder, calibrated on the engine's own
decoder calls, compiled for HTP, served, and measured against fp32 on the CPU.

One real-layer-count model (the small export where it is beside the repo, else the generated tiny
model: qdq_background.FIXTURES), one bucket (351 frames: qdq_background.BUCKET) and two short calibration sentences. The
simulator's share (prepare, and the sentence spoken on QNN) runs in a background process from the start
of the session (qdq_background.py); the tests here wait for it and check what it made. The full-size figures are benchmarks/qnn_prepare.py's.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import numpy as np
import pytest

from npu_worker import cli
from npu_worker.engine.zipvoice import calibration, qdq
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine, create
from npu_worker.protocol import ModelLoadError
from tests.timing import seconds
from tests.zipvoice import qdq_background
from tests.zipvoice.conftest import engine_config
from tests.zipvoice.qdq_background import BUCKET, CALIBRATION_CALLS, CHECK_CALLS, SENTENCES, speak
from tests.zipvoice.test_providers import qnn

pytestmark = [qnn]
WAIT = seconds(1800)  # the background process's whole run on a busy 2-core machine, with room


@pytest.fixture(scope="module", params=qdq_background.FIXTURES)
def fixture_name(request) -> str:  # noqa: ANN001
    return request.param


@pytest.fixture(scope="module")
def source_dir(fixture_name: str) -> Path:
    """A real-layer-count model with fp32 and int8 files and a reference voice."""
    return qdq_background.wait(fixture_name, "source", WAIT)


@pytest.fixture(scope="module")
def quantised_dir(fixture_name: str) -> Path:
    """`npu-worker prepare --precision a16w8 --buckets 351 ...` of `source_dir` (qdq_background.prepare_args)."""
    return qdq_background.wait(fixture_name, "prepared", WAIT)


def test_the_printed_serve_line_names_the_prepared_folders_copy_of_the_voice(
    fixture_name: str, source_dir: Path, quantised_dir: Path
):
    """A real a16w8 prepare without --ref-wav: its serve line's --ref-wav named the source folder's voice
    (and then said it was not copied: it is, with the folder's other files), so the prepared folder
    served after the source was deleted had no voice; now it names the prepared folder's copy."""
    line = next(
        line for line in qdq_background.printed(fixture_name).splitlines() if "serve it with: " in line
    )
    command = line.split("serve it with: ")[1]
    words = shlex.split(command)
    voice = Path(words[words.index("--ref-wav") + 1])
    assert voice == (quantised_dir / "reference_ko.wav").absolute()
    assert voice.read_bytes() == (source_dir / "reference_ko.wav").read_bytes()
    assert words[words.index("--model-dir") + 1] == str(quantised_dir)


def test_the_manifest_says_what_was_calibrated_and_how_far_each_bucket_is_from_fp32(quantised_dir: Path):
    manifest = json.loads((quantised_dir / "manifest.json").read_text())
    assert (manifest["precision"], manifest["files"], manifest["runs_as"]) == ("a16w8", "fp32", "a16w8")
    made = manifest["calibration"]
    assert made["texts"] == 2 and made["texts_sha256"] == calibration.texts_digest(
        [calibration.CalibrationText(**item) for item in SENTENCES]
    )
    assert made["voice"]["file"] == "reference_ko.wav" and len(made["voice"]["sha256"]) == 64
    kept = CALIBRATION_CALLS + CHECK_CALLS  # 7 + 1 held out
    assert made["decoder_calls"][str(BUCKET)] >= kept == 8 and made["kept"][str(BUCKET)] == kept
    assert made["held_out"] == CHECK_CALLS
    record = manifest["contexts"][str(BUCKET)]
    assert record["calibration_calls"] == CALIBRATION_CALLS and record["quantise_seconds"] > 0
    placement = record["placement"]
    # every node on QNN except the float↔fixed conversions of x, text_condition, speech_condition and v
    assert placement["boundary"] == 4 and placement["on_device"] + 4 == placement["nodes"] > 2000
    assert record["kept_in_float"] > 0  # the time and guidance embeddings, the Swoosh softplus
    accuracy = record["accuracy"]
    # measured 0.28-0.47 % on HTP (generated model), as the same QDQ graph on the CPU
    assert accuracy["calls"] == CHECK_CALLS and 0 < accuracy["max_relative_l2"] < 0.02, accuracy
    assert max(accuracy["same_graph_on_cpu_relative_l2"]) < 0.02, accuracy


def test_serve_loads_the_quantised_buckets_and_health_says_a16w8(quantised_dir: Path, tmp_path):
    engine = ZipVoiceEngine(engine_config(quantised_dir, tmp_path, device="qnn", allow_htp_simulator=True))
    engine.load()
    try:  # closed: its espeak child with it (else left running to the session's end)
        assert (engine.info.device, engine.info.precision) == ("qnn", "a16w8")
        where = engine.info.placement[f"fm_decoder@{BUCKET}"]
        assert where["boundary"] == 4 and where["on_device"] + 4 == where["nodes"]
    finally:
        engine.close()


def test_a_sentence_is_no_farther_from_fp32_than_the_cpu_int8_files_are(
    fixture_name: str, source_dir: Path, tmp_path
):
    """The CPU runs fixed shapes too (`--fixed-shapes`: the same padding to the bucket as the NPU), so the
    distance is the arithmetic's, not the padding's (dynamic vs padded alone is ≈ 0.39 on this model).
    The NPU's sentence was spoken by the same `speak` on QNN in the background process, all three with
    qdq_background.SENTENCE_STEPS (1) step: measured 0.0050 against 0.0102 at bucket 351 (0.0052 against
    0.0093 with 2 steps; small export, 2026-12-07)."""
    on_cpu = {"fixed_shapes": True, "buckets": (BUCKET,)}  # the NPU's one bucket, its padding
    reference, engine = speak(source_dir, tmp_path / "fp32", **on_cpu)  # fp32 on the CPU
    engine.close()  # its espeak child with it (both engines' children ran on to the session's end)
    assert max(trace.frames for trace in engine.traces) <= BUCKET  # in that bucket, no overflow
    int8, int8_engine = speak(source_dir, tmp_path / "int8", precision="int8", **on_cpu)
    int8_engine.close()
    npu = np.load(qdq_background.wait(fixture_name, "sentence", WAIT))
    cpu_int8 = qdq.log_mel_distance(reference, int8, engine.spectrum)
    a16w8 = qdq.log_mel_distance(reference, npu, engine.spectrum)
    print(f"log-mel distance from fp32: CPU int8 {cpu_int8:.4f}, NPU a16w8 {a16w8:.4f}")
    assert 0 < a16w8 <= cpu_int8, (a16w8, cpu_int8)


def test_a_quantised_directory_is_refused_by_a_worker_serving_the_int8_files(quantised_dir: Path, tmp_path):
    config = engine_config(quantised_dir, tmp_path, device="qnn", allow_htp_simulator=True, precision="int8")
    with pytest.raises(ModelLoadError, match="serve with --precision fp32"):
        create(config).load()


def test_calibration_texts_nested_too_deeply_are_refused_not_a_traceback(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(ValueError, match="nested too deeply"):
        calibration.read_texts(deep)


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


def test_calibration_texts_with_a_lone_surrogate_are_refused_by_item_before_calibrating(
    tiny_model_dir: Path, tmp_path, capsys
):
    """JSON's `\\ud800` escape reads as a lone surrogate: the text was skipped by the calibration and the
    manifest's digest then failed, a bare "'utf-8' codec can't encode character" after the calibration."""
    bad = tmp_path / "bad.json"
    bad.write_text('[{"text": "안녕하세요."}, {"text": "안녕\\ud800하세요."}]', encoding="utf-8")
    with pytest.raises(ValueError, match=r"item 1 holds a character UTF-8 cannot carry"):
        calibration.read_texts(bad)
    args = ["prepare", "--model-dir", str(tiny_model_dir), "--out", str(tmp_path / "out"),
            "--precision", "a16w8", "--calibration-texts", str(bad)]  # fmt: skip
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert "item 1 holds a character UTF-8 cannot carry" in err
    assert "calibration: synthesising" not in err
    assert not (tmp_path / "out" / "manifest.json").exists()
