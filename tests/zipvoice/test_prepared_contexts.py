"""A prepared folder whose compiled files were damaged on their way to the device (a copy cut short,
bytes changed): `serve --device qnn` names the file at fault and what to do; onnxruntime's words named
the EPContext model beside a broken binary, never the binary."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from npu_worker import cli
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine
from npu_worker.protocol import ModelLoadError
from tests.zipvoice.conftest import engine_config
from tests.zipvoice.test_providers import qnn

pytestmark = qnn
CONTEXT, BINARY = "qnn/fm_decoder@63_ctx.onnx", "qnn/fm_decoder@63_ctx_qnn.bin"


@pytest.fixture(scope="module")
def prepared_dir(qnn_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("prepared") / "out"
    command = ["prepare", "--buckets", "63", "--optimization", "fast", "--model-dir", str(qnn_model_dir)]
    assert cli.main([*command, "--out", str(out)]) == 0
    return out


def load_refusal(folder: Path, state: Path) -> str:
    config = engine_config(folder, state, device="qnn", allow_htp_simulator=True, ref_wav=None)
    with pytest.raises(ModelLoadError) as refused:
        ZipVoiceEngine(config).load()
    return str(refused.value)


def damaged(prepared_dir: Path, tmp_path: Path, name: str, how: str) -> Path:
    """A copy of the prepared folder with its file `name` cut to half or overwritten with other bytes."""
    copy = tmp_path / "copy"
    shutil.copytree(prepared_dir, copy)
    path = copy / name
    size = path.stat().st_size
    if how == "cut short":
        os.truncate(path, size // 2)
    else:
        path.write_bytes(bytes((byte * 7 + 1) % 256 for byte in range(size)))
    return copy


@pytest.mark.parametrize("name", [CONTEXT, BINARY])
def test_a_compiled_file_cut_short_by_a_copy_is_named_with_its_sizes(prepared_dir, tmp_path, name):
    copy = damaged(prepared_dir, tmp_path, name, "cut short")
    size = (prepared_dir / name).stat().st_size
    assert load_refusal(copy, tmp_path / "state") == (
        f"ModelLoadError: {copy / name} is {size // 2} bytes, the prepare wrote {size} (cut short by a copy "
        "that did not finish, or another prepare's file); copy the prepared folder again whole, or run "
        f"`npu-worker prepare` again for {copy}"
    )


def test_a_context_binary_of_other_bytes_is_named_not_the_model_beside_it(prepared_dir, tmp_path):
    """It was "cannot load the compiled context .../fm_decoder@63_ctx.onnx ([ONNXRuntimeError] : 10 :
    INVALID_GRAPH : Failed to load from EpContext model. Failed to get context binary info.)"."""
    copy = damaged(prepared_dir, tmp_path, BINARY, "other bytes")
    assert load_refusal(copy, tmp_path / "state") == (
        f"ModelLoadError: QNN cannot read the context binary {copy / BINARY} (damaged, or not the one this "
        f"prepare wrote); copy the prepared folder again whole, or run `npu-worker prepare` again for {copy}"
    )


def test_a_context_model_of_other_bytes_is_said_to_be_no_onnx_file(prepared_dir, tmp_path):
    copy = damaged(prepared_dir, tmp_path, CONTEXT, "other bytes")
    assert load_refusal(copy, tmp_path / "state") == (
        f"ModelLoadError: the compiled context {copy / CONTEXT} is no ONNX file onnxruntime can read "
        "(damaged or cut short); copy the prepared folder again whole, or run `npu-worker prepare` again "
        f"for {copy}"
    )


def test_a_context_prepare_cannot_load_for_its_check_names_the_file_at_fault(prepared_dir, tmp_path):
    """The held-out check of a quantised prepare loads each context QNN just wrote: one it could not read
    was "cannot load the compiled context ..._ctx.onnx to check it: [ONNXRuntimeError] : 10 : ...". Here
    the binary is damaged between the compile and the check, as a failing disk would."""
    from npu_worker.engine import providers
    from npu_worker.engine.zipvoice.bucket_compile import _check_bucket

    copy = damaged(prepared_dir, tmp_path, BINARY, "other bytes")
    config = providers.RuntimeConfig(allow_htp_simulator=True)
    with pytest.raises(ModelLoadError) as refused:
        _check_bucket(copy / CONTEXT, config, providers.qnn_devices(config), None, [])
    assert str(refused.value) == (
        f"ModelLoadError: QNN cannot read the context binary {copy / BINARY} (damaged, or not the one this "
        "prepare wrote), checking it against the fp32 decoder; run prepare again (--check-calls 0 prepares "
        "without this check)"
    )


@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("fm_decoder.onnx", "the decoder {copy} was prepared from"),
        (
            "text_encoder.onnx",
            "the text encoder {copy} was prepared from (the compiled decoder was trained with that one)",
        ),
        (
            "vocos_24khz.onnx",
            "the vocoder {copy} was prepared from (the compiled decoder's features are that one's input)",
        ),
    ],
)
def test_a_model_file_cut_short_by_a_copy_is_said_with_its_sizes(prepared_dir, tmp_path, name, what):
    """It was only "DIR/fm_decoder.onnx is not the decoder DIR was prepared from", as for another model's."""
    copy = damaged(prepared_dir, tmp_path, name, "cut short")
    size = (prepared_dir / name).stat().st_size
    fix = "" if name == "fm_decoder.onnx" else "put it back, or "
    assert load_refusal(copy, tmp_path / "state") == (
        f"ModelLoadError: {copy / name} is not {what.format(copy=copy)}; it is {size // 2} bytes where the "
        f"prepare copied {size} (a copy cut short, or another file); {fix}run `npu-worker prepare` again for {copy}"
    )
