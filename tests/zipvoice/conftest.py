"""Model directories for the ZipVoice tests, built once per session.

Needs from npu_worker/testing/zipvoice_model.py: `build_model_dir(path, "tiny")` with both precisions,
`layout="sherpa"`, and reference_ko.wav + reference_ko.txt in the directory.
The QNN tests swap in tests/zipvoice/simple_decoder.py's graph: the real-structure decoder does not compile
on the HTP simulator of onnxruntime-qnn 2.7.0 with the provider options used here (fixed N=1, T=64:
QNN_COMMON_ERROR_MEM_ALLOC when finalising the graph), and these tests are about the QNN plumbing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from npu_worker.config import Settings
from npu_worker.testing.zipvoice_model import build_model_dir
from tests.zipvoice.simple_decoder import write_simple_decoder


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_model_dir(tmp_path_factory.mktemp("models") / "tiny-distill", "tiny", ("fp32", "int8"))


@pytest.fixture(scope="session")
def qnn_model_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with a decoder the HTP simulator compiles (fp32 files only)."""
    target = tmp_path_factory.mktemp("models") / "qnn-distill"
    shutil.copytree(tiny_model_dir, target)
    write_simple_decoder(target / "fm_decoder.onnx")
    return target


@pytest.fixture(scope="session")
def cpu_only_model_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with a decoder QNN takes no node of."""
    target = tmp_path_factory.mktemp("models") / "cpu-only-distill"
    shutil.copytree(tiny_model_dir, target)
    write_simple_decoder(target / "fm_decoder.onnx", cpu_only=True)
    return target


def engine_settings(model_dir: Path, state_dir: Path, **changes: object) -> Settings:
    base = Settings(
        backend="zipvoice-onnx",
        model_dir=str(model_dir),
        ref_wav=str(model_dir / "reference_ko.wav"),
        state_dir=str(state_dir),
        precision="fp32",
        device="cpu",
        num_steps=4,
        threads=1,
    )
    return base.replace(**changes)
