"""Model directories for the ZipVoice tests, built once per session.

Needs from npu_worker/testing/zipvoice_model.py: `build_model_dir(path, "tiny")` with both precisions,
`layout="sherpa"`, and reference_ko.wav + reference_ko.txt in the directory.
The QNN plumbing tests (test_providers.py, test_qnn_context_cache.py) swap in
tests/zipvoice/simple_decoder.py's graph, which compiles in a second; the real-structure decoder on the
HTP simulator (specialised per bucket, ≈ 10-20 s) is tested in test_qnn_real_structure.py on
`real_structure_dir`.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

import pytest

from npu_worker.config import Settings
from npu_worker.engine.zipvoice.options import ZipVoiceConfig
from npu_worker.engine_options import zipvoice_config
from npu_worker.testing.zipvoice_model import build_model_dir
from tests.zipvoice.simple_decoder import write_simple_decoder


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once per session: pytest-xdist's workers share their session's temp root, and the first to
    take the lock builds it (≈ 2.5 s of CPU for `make-test-model --size tiny`, benchmarks/QNN_PREPARE.md; built again by every worker before). Tests copy it to change it."""
    root = tmp_path_factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:
        root = root.parent  # <session>/popen-gwN -> <session>: this session's, never a stale one
    target, built = root / "tiny-distill", root / "tiny-distill.built"
    with open(root / "tiny-distill.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not built.is_file():
            shutil.rmtree(target, ignore_errors=True)  # a worker that failed half-way
            build_model_dir(target, "tiny", ("fp32", "int8"))
            built.touch()
    return target


def with_simple_decoder(base: Path, factory: pytest.TempPathFactory, name: str, **decoder: bool) -> Path:
    """A copy of `base` whose decoder is tests/zipvoice/simple_decoder.py's graph (`decoder`: its options)."""
    target = factory.mktemp("models") / name
    shutil.copytree(base, target)
    write_simple_decoder(target / "fm_decoder.onnx", **decoder)
    return target


@pytest.fixture(scope="session")
def qnn_model_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with a decoder the HTP simulator compiles (fp32 files only)."""
    return with_simple_decoder(tiny_model_dir, tmp_path_factory, "qnn-distill")


@pytest.fixture(scope="session")
def cpu_only_model_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with a decoder QNN takes no node of."""
    return with_simple_decoder(tiny_model_dir, tmp_path_factory, "cpu-only-distill", cpu_only=True)


@pytest.fixture(scope="session")
def partial_model_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with a decoder QNN takes only partly (one op it has no kernel for, in the middle)."""
    return with_simple_decoder(tiny_model_dir, tmp_path_factory, "partial-distill", partial=True)


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


def engine_config(model_dir: Path, state_dir: Path, **changes: object) -> ZipVoiceConfig:
    """The engine's config as the server builds it from `engine_settings(...)`."""
    return zipvoice_config(engine_settings(model_dir, state_dir, **changes))


SHARED_REAL_STRUCTURE = (
    Path(__file__).resolve().parents[2].parent / "shared" / "data" / "zipvoice_small_structure"
)


@pytest.fixture(scope="session", params=["generated", "shared"])
def real_structure_dir(request: pytest.FixtureRequest, tiny_model_dir: Path) -> Path:
    """A small model with the real ZipVoice-Distill op structure (Zipformer stacks, 2x/4x downsampling)
    and the real layer counts (decoder 2, 2, 4, 4, 4; text encoder 4), only the widths small.

    `generated`: the project's own tiny model (always there). `shared`: a random-weight export of the
    real architecture beside the checkout, as in CI (skipped where it is absent).
    """
    if request.param == "generated":
        return tiny_model_dir
    path = SHARED_REAL_STRUCTURE.resolve()
    if not (path / "fm_decoder.onnx").is_file():
        pytest.skip(f"no real-structure export at {path}")
    return path


@pytest.fixture(scope="session")
def one_real_structure_dir(tiny_model_dir: Path) -> Path:
    """The small export where it is beside the repo (as in CI), else the generated model: for the
    heaviest checks of one code path on the real structure (the HTP simulator, whole bucketed sampling
    runs), which on both fixtures ran the same code twice on graphs of the same ops and layer counts
    (test_real_structure.py checks that the generated graph keeps the reference export's)."""
    shared = SHARED_REAL_STRUCTURE.resolve()
    return shared if (shared / "fm_decoder_int8.onnx").is_file() else tiny_model_dir
