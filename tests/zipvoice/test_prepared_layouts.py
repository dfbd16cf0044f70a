"""A user's own folder layouts through `npu-worker prepare` and `serve`: a vocoder kept elsewhere, and a
prepared folder moved to another path (as it is when copied onto the device)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from npu_worker.engine.zipvoice import model_files, prepared
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine
from tests.zipvoice.conftest import engine_config
from tests.zipvoice.test_providers import qnn

PREPARE = [sys.executable, "-m", "npu_worker.cli", "prepare", "--buckets", "63", "--optimization", "fast"]


@qnn
def test_a_vocoder_kept_elsewhere_is_prepared_with_vocoder_and_the_moved_folder_serves_alone(
    qnn_model_dir: Path, tmp_path: Path
):
    """The vocoder in a folder of its own (one vocoder for several models): prepare said "pass --vocoder"
    and then refused `--vocoder` as an unknown argument, so such a model could not be prepared at all.
    It is copied in under the name serve looks for first, and the folder, moved, loads on QNN as it is."""
    model = tmp_path / "models" / "mine"
    shutil.copytree(qnn_model_dir, model)
    vocoder = tmp_path / "vocoders" / "my-vocos.onnx"
    vocoder.parent.mkdir()
    (model / "vocos_24khz.onnx").rename(vocoder)
    out = tmp_path / "prepared"

    refused = subprocess.run(
        [*PREPARE, "--model-dir", str(model), "--out", str(out)], capture_output=True, text=True, timeout=120
    )
    assert refused.returncode == 2 and "pass --vocoder" in refused.stderr, refused.stderr
    done = subprocess.run(
        [*PREPARE, "--model-dir", str(model), "--out", str(out), "--vocoder", str(vocoder)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr

    moved = tmp_path / "device" / "mine-prepared"
    moved.parent.mkdir()
    out.rename(moved)
    assert model_files.locate(str(moved), "fp32").vocoder == moved / "vocos_24khz.onnx"
    assert (moved / "vocos_24khz.onnx").read_bytes() == vocoder.read_bytes()
    assert prepared.find(moved).manifest["source"]["vocos_24khz.onnx"] == prepared.file_hash(vocoder)
    engine = ZipVoiceEngine(
        engine_config(
            moved,
            tmp_path / "state",
            device="qnn",
            allow_htp_simulator=True,
            ref_wav=str(model / "reference_ko.wav"),
        )
    )
    engine.load()
    try:
        session = engine.models.decoder.decoders[63].session
        ops = {
            node.op_type for sub in session.get_provider_graph_assignment_info() for node in sub.get_nodes()
        }
        assert ops == {"EPContext"}  # the compiled context, found beside the moved manifest
        assert not (tmp_path / "state" / "qnn-cache").exists()  # nothing compiled again
    finally:
        engine.close()
