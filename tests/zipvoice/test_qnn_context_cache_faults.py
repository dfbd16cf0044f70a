"""The QNN context cache's fault paths (`qnn_cache.qnn_session`): a cached context onnxruntime cannot
load (a foreign or damaged file) is dropped and compiled again, and a context whose placement record
cannot be written is not kept (loaded without it, it would report its EPContext nodes only), and a
folder where the cache would remove a file is left in place (its unlink raised out of the start). The real
plugin on the HTP simulator, on tests/zipvoice/simple_decoder.py's graph (compiles in a second)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from npu_worker.engine import qnn_cache
from npu_worker.engine.providers import RuntimeConfig
from tests.zipvoice.test_providers import qnn

DIMS = {"N": 1, "T": 127}


@pytest.fixture
def decoder(qnn_model_dir: Path) -> Path:
    return qnn_model_dir / "fm_decoder.onnx"


def _config(cache: Path) -> RuntimeConfig:
    return RuntimeConfig(allow_htp_simulator=True, cache_dir=cache)


@qnn
def test_a_cached_context_that_does_not_load_is_compiled_again_in_its_place(decoder, tmp_path, caplog):
    config = _config(tmp_path / "qnn-cache")
    context = qnn_cache.context_cache_path(config, decoder, DIMS)
    assert context is not None
    context.parent.mkdir(mode=0o700)
    context.write_bytes(b"not an ONNX context")  # damaged, or another runtime's
    with caplog.at_level(logging.WARNING, logger="npu_worker.engine.qnn_cache"):
        _, placed = qnn_cache.qnn_session(decoder, config, DIMS)
    assert placed.device == "qnn" and placed.on_device == placed.nodes > 0
    assert f"ignoring QNN context cache {context}" in caplog.text
    assert context.read_bytes() != b"not an ONNX context"  # the compiled one, cached
    assert qnn_cache.placement_record_path(context).is_file()
    _, again = qnn_cache.qnn_session(decoder, config, DIMS)  # and loaded from the cache next time
    assert again == placed


@qnn
def test_a_context_whose_placement_cannot_be_written_is_not_kept(decoder, tmp_path, caplog):
    config = _config(tmp_path / "qnn-cache")
    context = qnn_cache.context_cache_path(config, decoder, DIMS)
    assert context is not None
    context.parent.mkdir(mode=0o700)
    record = qnn_cache.placement_record_path(context)
    record.symlink_to(tmp_path / "gone" / "placement.json")  # its write fails: ENOENT, as a full disk's
    with caplog.at_level(logging.WARNING, logger="npu_worker.engine.qnn_cache"):
        _, placed = qnn_cache.qnn_session(decoder, config, DIMS)
    assert placed.device == "qnn" and placed.on_device == placed.nodes > 0  # on the NPU all the same
    assert f"QNN context {context} not cached: its placement could not be written" in caplog.text
    assert not context.exists() and not record.is_symlink()  # the context and its record, not kept


@qnn
def test_a_folder_in_the_placement_records_place_is_left_and_the_session_still_opens(
    decoder, tmp_path, caplog
):
    config = _config(tmp_path / "qnn-cache")
    context = qnn_cache.context_cache_path(config, decoder, DIMS)
    assert context is not None
    context.parent.mkdir(mode=0o700)
    record = qnn_cache.placement_record_path(context)
    record.mkdir()  # its write fails (IsADirectoryError), and so did the unlink that followed
    (record / "inside").write_text("kept")
    with caplog.at_level(logging.WARNING, logger="npu_worker.engine.qnn_cache"):
        _, placed = qnn_cache.qnn_session(decoder, config, DIMS)
    assert placed.device == "qnn" and placed.on_device == placed.nodes > 0  # on the NPU all the same
    assert f"QNN context {context} not cached: its placement could not be written" in caplog.text
    assert (
        f"QNN context cache: {record} is a folder, not a file the worker wrote: left in place" in caplog.text
    )
    assert not context.exists() and (record / "inside").read_text() == "kept"


@qnn
def test_a_folder_named_like_an_older_context_is_left_and_the_new_context_kept(decoder, tmp_path, caplog):
    config = _config(tmp_path / "qnn-cache")
    context = qnn_cache.context_cache_path(config, decoder, DIMS)
    assert context is not None
    context.parent.mkdir(mode=0o700)
    older = context.with_name(f"{context.name.rsplit('-', 1)[0]}-0123456789abcdef_ctx.onnx")
    older.mkdir()  # in the slot of this model at this shape: the drop of older contexts unlinked it
    with caplog.at_level(logging.WARNING, logger="npu_worker.engine.qnn_cache"):
        _, placed = qnn_cache.qnn_session(decoder, config, DIMS)
    assert placed.device == "qnn" and placed.on_device == placed.nodes > 0
    assert context.is_file() and qnn_cache.placement_record_path(context).is_file()  # kept
    assert older.is_dir() and f"QNN context cache: {older} is a folder" in caplog.text
