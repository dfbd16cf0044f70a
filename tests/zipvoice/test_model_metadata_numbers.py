"""A model whose ONNX metadata gives a number that is none (`sample_rate=24k`, `n_fft=0`) is refused at load
with a ModelLoadError naming the file's role and the field: `int()`'s bare ValueError failed the load with no
word of which file or field, and a zero went on to divide by it."""

from __future__ import annotations

import shutil
from pathlib import Path

import onnx
import pytest

from npu_worker.engine.zipvoice.engine import create
from npu_worker.engine.zipvoice.model_files import metadata_int
from npu_worker.protocol import ModelLoadError
from tests.zipvoice.conftest import engine_config


def with_metadata(model: Path, file: str, key: str, value: str) -> None:
    graph = onnx.load(str(model / file))
    for prop in graph.metadata_props:
        if prop.key == key:
            prop.value = value
            break
    else:
        graph.metadata_props.add(key=key, value=value)
    onnx.save(graph, str(model / file))


@pytest.mark.parametrize(
    ("file", "key", "value", "said"),
    [
        ("fm_decoder.onnx", "sample_rate", "24k", "the decoder's metadata gives sample_rate='24k'"),
        ("fm_decoder.onnx", "feat_dim", "-100", "the decoder's metadata gives feat_dim='-100'"),
        ("vocos_24khz.onnx", "n_fft", "0", "the vocoder's metadata gives n_fft='0'"),
    ],
)
def test_a_metadata_number_that_is_none_is_a_model_load_error_naming_it(
    tiny_model_dir: Path, tmp_path: Path, file: str, key: str, value: str, said: str
) -> None:
    model = tmp_path / "model"
    shutil.copytree(tiny_model_dir, model)
    with_metadata(model, file, key, value)
    engine = create(engine_config(model, tmp_path / "state"))
    with pytest.raises(ModelLoadError) as refused:
        engine.load()
    assert said in refused.value.message, refused.value.message


def test_a_metadata_number_is_read_whole_and_bounded() -> None:
    assert metadata_int({}, "n_fft", 1024, "vocoder") == 1024
    assert metadata_int({"n_fft": "2048"}, "n_fft", 1024, "vocoder") == 2048
    for bad in ("", "1e3", "2048.0", str(1 << 21), "０"):
        with pytest.raises(ModelLoadError):
            metadata_int({"n_fft": bad}, "n_fft", 1024, "vocoder")
