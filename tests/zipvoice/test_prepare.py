"""`npu-worker prepare` on the real layer counts (the small real-structure export), and `serve` loading it.

Preparing compiles all five default buckets on the HTP simulator (≈ 100 s with `--optimization fast`),
in a background process from the session's start (qdq_background.py). The accuracy of a compiled decoder against the CPU is checked at a small bucket in
test_qnn_real_structure.py (a simulated call at 383 frames takes ≈ 45 s; benchmarks/QNN_PREPARE.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from npu_worker.engine.zipvoice import prepared, prepared_sessions
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine, create
from npu_worker.engine.zipvoice.runtime import DEFAULT_BUCKETS
from npu_worker.protocol import ModelLoadError
from tests.timing import seconds
from tests.zipvoice import qdq_background
from tests.zipvoice.conftest import engine_config
from tests.zipvoice.test_providers import qnn

SMALL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "zipvoice_small_structure"
pytestmark = [
    qnn,
    pytest.mark.skipif(not SMALL.is_dir(), reason="the small real-structure export is not beside the repo"),
]


@pytest.fixture(scope="module")
def prepared_dir() -> Path:
    """`npu-worker prepare --model-dir SMALL+voice --out DIR --optimization fast`, made by a background
    process from the session's start (qdq_background.py)."""
    return qdq_background.wait(qdq_background.FP32_FIVE, "prepared", seconds(1800))


def qnn_settings(model_dir: Path, state_dir: Path, **changes: object):  # noqa: ANN201
    return engine_config(model_dir, state_dir, device="qnn", allow_htp_simulator=True, **changes)


def test_every_decoder_node_is_on_qnn_at_every_default_bucket(prepared_dir: Path):
    manifest = json.loads((prepared_dir / "manifest.json").read_text())
    assert manifest["buckets"] == list(DEFAULT_BUCKETS) and manifest["precision"] == "fp32"
    for size in DEFAULT_BUCKETS:
        placement = manifest["contexts"][str(size)]["placement"]
        assert placement["on_device"] == placement["nodes"] > 2000, (size, placement)
        assert (prepared_dir / manifest["contexts"][str(size)]["file"]).is_file()
    assert manifest["source"]["fm_decoder.onnx"] == prepared.file_hash(prepared_dir / "fm_decoder.onnx")
    assert manifest["target"]["provider_options"] == {"soc_model": "57", "htp_arch": "75"}
    assert manifest["runtime"] == prepared.runtime_versions()
    assert manifest["weight_sharing"] is False  # on x86 the simulator cannot load a shared binary
    assert sum(manifest["sizes"]["compiled"].values()) > 0


def test_serve_loads_the_prepared_buckets_without_specialising_or_compiling(prepared_dir: Path, tmp_path):
    engine = ZipVoiceEngine(qnn_settings(prepared_dir, tmp_path))
    engine.load()
    try:  # closed: its espeak child with it (else left running to the session's end)
        assert engine.info.device == "qnn"
        for size in DEFAULT_BUCKETS:
            session = engine.models.decoder.decoders[size].session
            graphs = session.get_provider_graph_assignment_info()
            ops = {node.op_type for sub in graphs for node in sub.get_nodes()}
            assert ops == {"EPContext"}
            where = engine.info.placement[f"fm_decoder@{size}"]
            assert where["device"] == "qnn" and where["on_device"] == where["nodes"] > 2000
    finally:
        engine.close()
    assert not list(tmp_path.rglob("specialise-*")) and not list(prepared_dir.rglob("specialise-*"))


def test_a_prepared_directory_whose_decoder_changed_is_refused_with_the_fix(prepared_dir: Path, tmp_path):
    changed = tmp_path / "changed"
    shutil.copytree(prepared_dir, changed)
    (changed / "fm_decoder.onnx").unlink()
    shutil.copy(SMALL / "fm_decoder.onnx", changed / "fm_decoder.onnx")
    with (changed / "fm_decoder.onnx").open("ab") as decoder:
        decoder.write(b"\0")  # another file, same name
    with pytest.raises(ModelLoadError, match="run `npu-worker prepare` again"):
        create(qnn_settings(changed, tmp_path / "state")).load()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"qnn_soc": "8gen2"}, "prepared for QNN target"),
        ({"precision": "int8"}, "serve with --precision fp32"),
    ],
)
def test_a_prepared_directory_for_another_target_or_precision_is_refused(
    prepared_dir, tmp_path, changes, message
):
    with pytest.raises(ModelLoadError, match=message):
        create(qnn_settings(prepared_dir, tmp_path, **changes)).load()


def test_a_prepared_directory_made_by_another_runtime_is_refused(prepared_dir: Path, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(prepared_dir, other)
    manifest = json.loads((other / "manifest.json").read_text())
    manifest["runtime"]["onnxruntime-qnn"] = "0.0.1"
    (other / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelLoadError, match="was prepared with"):
        create(qnn_settings(other, tmp_path / "state")).load()


def test_a_context_listed_under_another_bucket_is_refused_at_load(prepared_dir: Path, tmp_path):
    """Each bucket's context must take that bucket's frames: one under another bucket's name loaded,
    and every call it got failed (a 767-frame graph fed 383 frames)."""
    swapped = tmp_path / "swapped"
    shutil.copytree(prepared_dir, swapped)
    manifest = json.loads((swapped / "manifest.json").read_text())
    contexts = manifest["contexts"]
    contexts["383"]["file"], contexts["767"]["file"] = contexts["767"]["file"], contexts["383"]["file"]
    (swapped / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelLoadError, match="takes 767 frames, not 383"):
        create(qnn_settings(swapped, tmp_path / "state")).load()


def test_the_cpu_serves_a_prepared_directory_as_a_plain_model_directory(prepared_dir: Path, tmp_path):
    engine = create(engine_config(prepared_dir, tmp_path, device="cpu"))
    engine.load()
    try:
        assert engine.info.device == "cpu"
    finally:
        engine.close()


def test_a_weight_shared_directory_is_refused_on_the_x86_simulator(prepared_dir: Path, tmp_path):
    shared = tmp_path / "shared"
    shutil.copytree(prepared_dir, shared)
    manifest = json.loads((shared / "manifest.json").read_text())
    manifest["weight_sharing"] = True
    (shared / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelLoadError, match="--weight-sharing off"):
        create(qnn_settings(shared, tmp_path / "state")).load()


def test_a_context_the_npu_has_no_memory_for_says_what_helps_instead_of_preparing_again(prepared_dir: Path):
    """Five full-size fp16 contexts (1.9 GB) exceed the simulator's memory at the fifth
    (QNN_COMMON_ERROR_MEM_ALLOC, benchmarks/QNN_PREPARE.md): the message must not send the user to
    `prepare` the same directory again."""
    made = prepared.find(prepared_dir)
    assert made is not None
    error = RuntimeError("contextCreateFromBinary failed. Error: QNN_COMMON_ERROR_MEM_ALLOC")
    message = prepared_sessions.load_failure(made, 2079, {383: None, 767: None}, error)
    held = (made.context_bytes(383) + made.context_bytes(767)) / 1e6
    assert f"after 2 others ({held:.0f} MB of contexts)" in message and held > 1
    assert "--buckets" in message and "--precision a16w8" in message and "again" not in message
    other = prepared_sessions.load_failure(made, 2079, {}, RuntimeError("INVALID_GRAPH"))
    assert "run `npu-worker prepare` again" in other
