"""Compiling for the NPU on a filesystem out of inodes or space (prepare's output, serve's state dir):
what ran out and where, never "QNN runs none of the nodes".

onnxruntime's Python session retried a QNN compile that could not write its context on the CPU, so a
disk out of inodes read as a decoder HTP has no kernel for; a context that could not even be opened
("Failed to open context cache file") failed a cold start that a full disk ("could not write") survives.
The filesystems are real tmpfs mounts (root only: skipped elsewhere), their inodes used up by empty files.
"""

from __future__ import annotations

import contextlib
import errno
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from npu_worker.engine import providers, ran_out
from npu_worker.engine.providers import RuntimeConfig
from npu_worker.engine.zipvoice.bucket_compile import Bucket, compile_bucket
from npu_worker.engine.zipvoice.prepare_out import _copy_model_files
from npu_worker.engine.zipvoice.runtime import bucket_dims
from npu_worker.protocol import ModelLoadError
from tests.zipvoice.test_providers import qnn

FAST = {**providers.QNN_OPTIONS, "htp_graph_finalization_optimization_mode": "1"}


@contextlib.contextmanager
def small_disk(where: Path, free_inodes: int | None = None, free_bytes: int | None = None) -> Iterator[Path]:
    """A tmpfs at `where` with only `free_inodes` inodes or about `free_bytes` bytes left (a folder
    `work` in it made first); skipped where mounting needs a root this test is not."""
    where.mkdir()
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=32m,nr_inodes=200", "tmpfs", str(where)]
    ).returncode:
        pytest.skip("mounting a small tmpfs needs root")
    try:
        (where / "work").mkdir()
        fill = where / "fill"
        fill.mkdir()
        if free_inodes is not None:
            made = 0
            with contextlib.suppress(OSError):
                while True:
                    (fill / str(made)).touch()
                    made += 1
            for name in range(free_inodes):
                (fill / str(name)).unlink()
        if free_bytes is not None:
            with contextlib.suppress(OSError), open(fill / "bytes", "wb") as filler:
                while True:
                    filler.write(b"\0" * 65536)
                    filler.flush()
            size = (fill / "bytes").stat().st_size
            with open(fill / "bytes", "r+b") as filler:
                filler.truncate(size - free_bytes)
        yield where / "work"
    finally:
        subprocess.run(["umount", str(where)], check=True)


def compile_one(decoder: Path, contexts: Path, shown: Path | None = None) -> dict:
    config = RuntimeConfig(allow_htp_simulator=True, qnn_options=FAST)
    bucket = Bucket(decoder, 383, bucket_dims(decoder, (383,))[383], "fp32", [], [])
    devices = providers.qnn_devices(config)
    return compile_bucket(bucket, contexts, config, devices, None, False, True, shown_dir=shown)


@qnn
@pytest.mark.parametrize("free", [2, 3])  # 2: the context cannot be opened; 3: the binary was made first
def test_a_prepare_out_of_inodes_says_so_not_that_qnn_runs_none_of_the_nodes(qnn_model_dir, tmp_path, free):
    disk = tmp_path / "disk"
    with small_disk(disk, free_inodes=free) as contexts:  # (named by the folder prepare was told: --out)
        with pytest.raises(ModelLoadError) as refused:
            compile_one(qnn_model_dir / "fm_decoder.onnx", contexts, shown=disk)
    said = str(refused.value)
    assert "runs none" not in said
    assert re.fullmatch(
        re.escape(
            f"ModelLoadError: QNN could not compile fm_decoder.onnx for 383 frames: the filesystem of {disk} "
            "has no free inodes (no new file can be made there, whatever its free bytes, "
        )
        + r"\d+\.\d MB: `df -i` shows it\): remove files there or use a folder on another filesystem",
        said,
    ), said


@qnn
def test_a_prepare_whose_specialised_graph_finds_no_room_stops_there(qnn_model_dir, tmp_path):
    """The specialiser's own write failing was taken as a graph it cannot handle: the dynamic graph went
    to QNN as it was, which took none (or a few) of its nodes."""
    with small_disk(tmp_path / "disk", free_inodes=1) as contexts:
        with pytest.raises(ModelLoadError, match="had no room left \\(No space left on device; now 1 inodes"):
            compile_one(qnn_model_dir / "fm_decoder.onnx", contexts)


def test_a_prepare_that_cannot_copy_the_model_for_want_of_inodes_says_so(tiny_model_dir, tmp_path):
    """ "No space left on device" where `df -h` shows room: the inodes ran out, unsaid."""
    with small_disk(tmp_path / "disk", free_inodes=0) as out:
        with pytest.raises(ModelLoadError, match=f"into {out}: the filesystem of {out} has no free inodes"):
            _copy_model_files(tiny_model_dir, out)


def test_a_prepare_whose_model_copy_fills_the_disk_says_so_and_leaves_no_part(tiny_model_dir, tmp_path):
    """The copy is made in the kernel now (reflink, else copy_file_range): its ENOSPC is still the
    disk named full, and the part copied is removed."""
    with small_disk(tmp_path / "disk", free_bytes=65536) as out:
        with pytest.raises(ModelLoadError, match=f"into {out}: the filesystem of {out} is full"):
            _copy_model_files(tiny_model_dir, out)
        assert not [path for path in out.iterdir() if path.name.endswith(".part")]


@qnn
def test_a_prepare_on_a_full_disk_says_the_disk_is_full(qnn_model_dir, tmp_path):
    """It said onnxruntime's "Failed to write context cache file", which names neither disk nor cure."""
    room = (qnn_model_dir / "fm_decoder.onnx").stat().st_size + 32768  # the specialised graph fits
    with small_disk(tmp_path / "disk", free_bytes=room) as contexts:
        with pytest.raises(ModelLoadError, match=f"the filesystem of {contexts} is full \\(0.0 MB free"):
            compile_one(qnn_model_dir / "fm_decoder.onnx", contexts)


@qnn
@pytest.mark.parametrize("free", [2, 3])
def test_a_state_disk_out_of_inodes_still_gets_the_npu_uncached(qnn_model_dir, tmp_path, free, caplog):
    """A cold start whose cache could take no context file: `auto` went to the CPU ("took no nodes",
    or "Failed to open context cache file") where a full disk compiled again, uncached, on the NPU."""
    with small_disk(tmp_path / "disk", free_inodes=free) as cache:
        config = RuntimeConfig(allow_htp_simulator=True, cache_dir=cache)
        _, placed = providers.open_placed_session(
            qnn_model_dir / "fm_decoder.onnx", "qnn", config, {"N": 1, "T": 127}
        )
        assert [path.name for path in cache.iterdir() if not path.name.startswith("specialise")] == []
    assert (placed.device, placed.on_device) == ("qnn", placed.nodes)
    assert "not cached (the filesystem of" in caplog.text and "has no free inodes" in caplog.text


@pytest.mark.parametrize(
    ("raised", "said"),
    [
        (RuntimeError("[ONNXRuntimeError] : 1 : FAIL : Load model from m.onnx failed:system error number 24"),
         "this process may open no more files (its limit, `ulimit -n`, is "),
        (OSError(errno.EDQUOT, "Disk quota exceeded"), "the disk quota on the filesystem of "),
        (OSError(errno.ENFILE, "Too many open files in system"), "the system's table of open files is full"),
    ],
)  # fmt: skip
def test_the_open_file_limits_and_a_quota_are_named_as_such(tmp_path, raised, said):
    assert (ran_out.what_ran_out(raised, tmp_path) or "").startswith(said)


def test_other_failures_keep_their_own_words(tmp_path):
    """A compiler error, or a context onnxruntime could not write on a disk with room (permissions)."""
    assert ran_out.what_ran_out(RuntimeError("QNN graph finalize failed"), tmp_path) is None
    assert ran_out.what_ran_out(RuntimeError("Failed to write context cache file."), tmp_path) is None
    assert ran_out.what_ran_out(OSError(errno.EACCES, "Permission denied"), tmp_path) is None


def test_an_exception_chain_that_loops_is_read_once_not_for_ever():
    """`error_number` follows __cause__/__context__; a chain that loops back (an exception raised while
    handling one that it then became the context of) must end the walk (run apart: a loop would hang)."""
    code = (
        "from npu_worker.engine import ran_out\n"
        "a, b = RuntimeError('a'), RuntimeError('b')\n"
        "a.__context__, b.__context__ = b, a\n"
        "print(ran_out.error_number(a))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stdout) == (0, "None\n"), done.stderr
