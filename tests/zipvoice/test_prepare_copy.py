"""`prepare`'s copy of a model file: the size it records is the copied file's, and a copy the kernel
will not make (`copy_file_range` refused) is made by reading and writing."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from npu_worker.engine.zipvoice.prepare_out import _copy_model_files
from npu_worker.protocol import ModelLoadError

pytestmark = pytest.mark.allow_blocking  # plain filesystem calls, no event loop

SHARED_MEMORY = Path("/dev/shm")


def test_a_model_file_replaced_while_it_is_copied_is_recorded_at_the_size_copied(tmp_path):
    """The size was read by name after the copy: a model re-exported meanwhile (written aside, renamed
    in) recorded the new file's size beside the old file's bytes, and `serve` then refused the prepared
    folder. Now the size is the opened file's, whose bytes are the ones copied."""
    source, out, aside = tmp_path / "model", tmp_path / "out", tmp_path / "aside"
    for folder in (source, out, aside):
        folder.mkdir()
    versions = [b"a" * 1_000, b"b" * 50_000]
    decoder = source / "fm_decoder.onnx"
    decoder.write_bytes(versions[0])
    done = threading.Event()

    def re_export() -> None:
        turn = 0
        while not done.is_set():
            turn += 1
            written = aside / f"{turn}.onnx"
            written.write_bytes(versions[turn % 2])
            os.replace(written, decoder)

    exporter = threading.Thread(target=re_export)
    exporter.start()
    try:
        for _ in range(300):
            sizes = _copy_model_files(source, out)
            copied = (out / "fm_decoder.onnx").read_bytes()
            assert copied in versions
            assert sizes == {"fm_decoder.onnx": len(copied)}
    finally:
        done.set()
        exporter.join()


@pytest.mark.skipif(not SHARED_MEMORY.is_dir(), reason="no /dev/shm")
def test_a_model_file_on_another_filesystem_is_copied_by_reading_and_writing(tmp_path):
    """copy_file_range between filesystems is EXDEV (tmpfs to the test's folder): the copy falls back."""
    if os.stat(SHARED_MEMORY).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("/dev/shm is on the test folder's filesystem")
    out = tmp_path / "out"
    out.mkdir()
    vocoder = SHARED_MEMORY / f"npu-worker-test-vocoder-{os.getpid()}.onnx"
    body = os.urandom(3 << 20)
    vocoder.write_bytes(body)
    try:
        with open(vocoder, "rb") as probe, open(out / "probe", "wb") as target:
            with pytest.raises(OSError):  # the kernel refuses: this copy must fall back
                os.copy_file_range(probe.fileno(), target.fileno(), 1 << 20)
        empty = tmp_path / "empty-model"
        empty.mkdir()
        sizes = _copy_model_files(empty, out, extra={"vocos_24khz.onnx": vocoder})
    finally:
        vocoder.unlink()
    assert sizes == {"vocos_24khz.onnx": len(body)}
    assert (out / "vocos_24khz.onnx").read_bytes() == body


def test_a_model_file_that_gives_other_bytes_than_its_size_is_refused_not_recorded_wrong(tmp_path):
    """A file whose size (0 for /proc's, or one written in place while it was copied) is not what it
    gave was recorded at a size the prepared file did not have: `serve` then refused the folder."""
    out, empty = tmp_path / "out", tmp_path / "empty-model"
    out.mkdir()
    empty.mkdir()
    with pytest.raises(ModelLoadError, match=r"gave \d+ bytes where it said 0 \(written while it was"):
        _copy_model_files(empty, out, extra={"vocos_24khz.onnx": Path("/proc/self/status")})
    assert os.listdir(out) == []  # the part copied is gone
