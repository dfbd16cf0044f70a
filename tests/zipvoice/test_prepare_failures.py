"""`npu-worker prepare` cut short (killed, a full disk, a decoder HTP cannot run), and `serve` afterwards:
a clear refusal in one line, never a directory that looks prepared, nothing left behind."""

from __future__ import annotations

import errno
import fcntl
import io
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from npu_worker import cli
from npu_worker.engine.zipvoice import prepare, prepared
from npu_worker.engine.zipvoice.engine import create
from npu_worker.protocol import ModelLoadError
from tests.zipvoice.conftest import engine_config
from tests.zipvoice.test_providers import qnn, x86_only

TINY = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "zipvoice_tiny_structure"
PREPARE = [sys.executable, "-m", "npu_worker.cli", "prepare", "--buckets", "383", "--optimization", "fast"]


def kill_once_writing(command: list[str], out: Path, how: int = signal.SIGKILL) -> str:
    """Start `command` and send it `how` as soon as it has begun writing `out` (the `qnn/` folder of
    its staging is made); what it wrote to stderr."""
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        # SIGINT ignored, as a script's `cmd &` starts it (and as CI may): Python kept it ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        while process.poll() is None and not (out / prepared.STAGING / prepared.CONTEXT_DIR).is_dir():
            time.sleep(0.01)
        assert process.poll() is None, "the prepare ended before it could be killed"
    finally:
        process.send_signal(how)
        _, stderr = process.communicate(timeout=120)
    return stderr


@qnn
@pytest.mark.skipif(not TINY.is_dir(), reason="the tiny real-structure export is not beside the repo")
def test_a_folder_a_killed_prepare_left_is_refused_not_served_as_a_plain_model(tmp_path):
    """Without the manifest (written last) `serve --device qnn` took the folder for a plain model
    directory and compiled every default bucket on the spot (more than 5 minutes for the tiny export on
    the simulator); a re-prepare from another model cut short served a mix of both models' files."""
    out = tmp_path / "out"
    kill_once_writing([*PREPARE, "--model-dir", str(TINY), "--out", str(out)], out)
    assert not (out / prepared.MANIFEST).exists()
    with pytest.raises(ModelLoadError, match="the `npu-worker prepare` into it did not finish"):
        create(engine_config(out, tmp_path / "state", device="cpu", ref_wav=None)).load()


@qnn
@pytest.mark.skipif(not TINY.is_dir(), reason="the tiny real-structure export is not beside the repo")
def test_a_prepare_interrupted_with_ctrl_c_says_so_in_one_line(tmp_path):
    """Ctrl-C was a KeyboardInterrupt traceback through the compiler's frames."""
    out = tmp_path / "out"
    stderr = kill_once_writing([*PREPARE, "--model-dir", str(TINY), "--out", str(out)], out, signal.SIGINT)
    assert "Traceback" not in stderr, stderr
    # the command's own last line (the native libraries may still log while the process tears down)
    said = [line for line in stderr.splitlines() if line.startswith("npu-worker prepare:")]
    assert said[-1:] == [f"npu-worker prepare: interrupted; run it again to prepare {out}"], stderr
    with pytest.raises(ModelLoadError, match="did not finish"):
        prepared.find(out)


def test_a_first_prepare_killed_while_staging_is_unfinished_and_its_folder_can_be_prepared_again(tmp_path):
    """Killed before it moved anything in, a first prepare leaves only its lock and its staging."""
    out = tmp_path / "out"
    (out / prepared.STAGING / prepared.CONTEXT_DIR).mkdir(parents=True)
    (out / prepare.LOCK).touch()
    with pytest.raises(ModelLoadError, match="the `npu-worker prepare` into it did not finish"):
        prepared.find(out)
    prepare.check_out_dir(out)  # not "holds other files"


def test_a_prepare_killed_before_it_copied_the_model_is_refused_as_unfinished(tmp_path):
    """Killed after its lock and `qnn/` but before the model's files were copied, the folder was
    reported as a model without tokens.txt, not as the unfinished prepare it is."""
    out = tmp_path / "out"
    (out / prepared.CONTEXT_DIR).mkdir(parents=True)
    (out / prepare.LOCK).touch()
    with pytest.raises(ModelLoadError, match="the `npu-worker prepare` into it did not finish"):
        create(engine_config(out, tmp_path / "state", device="cpu", ref_wav=None)).load()


def test_a_finished_prepared_folder_with_a_file_at_fault_names_that_file(tiny_model_dir, tmp_path):
    """Every finished prepare leaves its lock file beside the manifest, and any problem finding a model
    file there (a --vocoder that does not exist, a file the service user may not read) was reported as
    'has no manifest.json: the `npu-worker prepare` into it did not finish; run it again'."""
    out = tmp_path / "out"
    shutil.copytree(tiny_model_dir, out)
    (out / prepare.LOCK).touch()
    (out / prepared.MANIFEST).write_text("{}")  # written last: this prepare finished
    missing = tmp_path / "vocos_24khz.onnx"
    config = engine_config(out, tmp_path / "state", device="cpu", ref_wav=None, vocoder=str(missing))
    with pytest.raises(ModelLoadError, match=f"vocoder file {missing} does not exist"):
        create(config).load()


def test_a_folder_a_prepare_is_writing_now_is_refused_as_such(tmp_path):
    (tmp_path / "tokens.txt").write_text("a 1\n")
    with open(tmp_path / prepare.LOCK, "a") as held:  # the prepare, still copying the model's files
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(
            ModelLoadError, match="no manifest.json: the `npu-worker prepare` into it is writing"
        ):
            prepared.find(tmp_path)
    with pytest.raises(ModelLoadError, match="did not finish"):
        prepared.find(tmp_path)
    os.unlink(tmp_path / prepare.LOCK)
    (tmp_path / prepared.CONTEXT_DIR).mkdir()  # a model's own folder of that name: not a prepare's
    assert prepared.find(tmp_path) is None  # a plain model directory


@qnn
def test_a_decoder_qnn_runs_none_of_is_refused_by_prepare_not_written_as_prepared(
    cpu_only_model_dir, tmp_path
):
    """QNN takes no node of it, so onnxruntime writes no context: prepare said "prepared ... serve it with"
    (exit 0) over a manifest naming that context, and `serve` said it was missing, to prepare again."""
    out = tmp_path / "out"
    done = subprocess.run(
        [*PREPARE, "--model-dir", str(cpu_only_model_dir), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "npu-worker prepare: ModelLoadError: QNN runs none of the 2 nodes of fm_decoder.onnx at 383 frames "
        "(HTP has no kernel for its operators, or QNN does not know the --qnn-soc target): nothing was "
        "compiled"
    )
    assert not (out / prepared.MANIFEST).exists()


def no_file_larger_than(size: int):  # noqa: ANN201 - a preexec_fn
    """A write past `size` bytes fails with EFBIG, as one on a full disk fails with ENOSPC."""

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit


@qnn
@pytest.mark.skipif(not TINY.is_dir(), reason="the tiny real-structure export is not beside the repo")
def test_a_prepare_that_cannot_write_says_so_in_one_line_and_leaves_no_partial_copy(tmp_path):
    """A full disk was a traceback, and the decoder's partial copy stayed in --out, keeping the disk
    full; the temp copies of a prepare killed while copying stayed there for good (a rerun left them)."""
    source, out = tmp_path / "model", tmp_path / "out"
    source.mkdir()
    for path in TINY.iterdir():
        (source / path.name).write_bytes(path.read_bytes())
        (source / path.name).chmod(0o664)  # writable by the group: copied, never hard-linked
    (out / prepared.CONTEXT_DIR).mkdir(parents=True)
    killed = out / ".tokens.txt.0123456789ab.part"  # what a prepare killed while copying left
    killed.write_bytes(b"half a copy")
    done = subprocess.run(
        [*PREPARE, "--model-dir", str(source), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=no_file_larger_than(1 << 20),
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"npu-worker prepare: ModelLoadError: cannot copy {source / 'fm_decoder.onnx'} into {out}: "
        f"File too large for this process (`ulimit -f`: {1 << 20} bytes) or the filesystem of {out}: raise "
        "the limit or give an --out on another filesystem"
    )
    assert not list(out.glob(".*.part")), sorted(out.iterdir())


@qnn
@x86_only
@pytest.mark.skipif(not TINY.is_dir(), reason="the tiny real-structure export is not beside the repo")
def test_a_weight_shared_quantised_prepare_the_simulator_cannot_check_is_refused_before_calibrating(tmp_path):
    """The held-out check loaded each bucket's context as soon as it was compiled, but a weight-shared
    binary is written with the last bucket: after the minutes of calibration the first check failed with
    an onnxruntime traceback and the process aborted. On x86 the simulator cannot load a shared binary of
    several buckets at all (SIGSEGV), so there it is refused first: before the calibration texts are read."""
    out = tmp_path / "out"
    done = subprocess.run(
        [*PREPARE[:-4], "--buckets", "383", "767", "--model-dir", str(TINY), "--out", str(out)]
        + ["--precision", "a16w8", "--weight-sharing", "on", "--calibration-texts", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "npu-worker prepare: ModelLoadError: --weight-sharing on: the x86 HTP simulator cannot load a "
        "weight-shared binary of several buckets (it crashes the process), so the held-out calls cannot "
        "check it here; pass --check-calls 0, --weight-sharing off or one bucket"
    ]
    assert not out.exists()


def prepare_in_process(model_dir: Path, out: Path) -> int:
    """`npu-worker prepare` of one small bucket in this process (a fault can be put in its way)."""
    command = ["prepare", "--buckets", "63", "--optimization", "fast", "--model-dir", str(model_dir)]
    return cli.main([*command, "--out", str(out)])


def files_of(out: Path) -> dict[Path, bytes]:
    return {path.relative_to(out): path.read_bytes() for path in out.rglob("*") if path.is_file()}


@qnn
def test_a_prepare_that_fails_part_way_leaves_the_earlier_prepared_folder_whole_and_servable(
    qnn_model_dir, cpu_only_model_dir, tmp_path, capsys
):
    """A re-prepare into a prepared folder removed its manifest and contexts and replaced its model
    files before compiling anything, so one that then failed (a bucket QNN could not compile, Ctrl-C, a
    model QNN runs none of) left neither the old folder nor a new one: `serve` refused it as unfinished,
    and the minutes (hours on the simulator) of the earlier compile were lost. Now nothing in the folder
    changes until every bucket is compiled and checked. Both prepares run in this process (the folder is
    what is checked; the command's own refusal, in a fresh process, is
    test_a_decoder_qnn_runs_none_of_is_refused_by_prepare_not_written_as_prepared's)."""
    out = tmp_path / "out"
    assert prepare_in_process(qnn_model_dir, out) == 0
    before = files_of(out)
    capsys.readouterr()
    assert prepare_in_process(cpu_only_model_dir, out) == 2
    said = capsys.readouterr().err
    assert "QNN runs none of the 2 nodes" in said, said
    assert files_of(out) == before  # (the staging it wrote in is gone too)
    engine = create(engine_config(out, tmp_path / "state", device="qnn", allow_htp_simulator=True))
    engine.load()
    try:
        assert engine.info.placement["fm_decoder@63"]["device"] == "qnn"
    finally:
        engine.close()


@qnn
def test_a_prepare_that_cannot_write_its_manifest_leaves_the_earlier_prepared_folder_whole(
    qnn_model_dir, tmp_path, monkeypatch
):
    """The manifest was written after the earlier prepare's manifest was removed and the new files moved
    in: a disk the compiled contexts had filled failed that last small write, and the folder was neither
    the earlier prepare's nor the new one (`serve`: "did not finish"). It is written in the staging now,
    before anything in the folder changes; moving in is renames only."""
    out = tmp_path / "out"
    assert prepare_in_process(qnn_model_dir, out) == 0
    before = files_of(out)

    def disk_full(path: object, *args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(prepare, "write_atomic", disk_full)
    assert prepare_in_process(qnn_model_dir, out) == 2
    assert files_of(out) == before  # (the staging is gone too)
    assert prepared.find(out) is not None


@qnn
def test_a_prepare_killed_while_moving_its_contexts_in_can_be_run_again(qnn_model_dir, tmp_path, monkeypatch):
    """Ctrl-C (or a kill) between moving the earlier `qnn/` aside and the new one in, after the model
    files, left a folder with neither manifest nor `qnn/`: refused by `serve` as unfinished (right), and
    by the rerun as "holds other files; give an empty or new folder" (so it could never be prepared
    again in place)."""
    out = tmp_path / "out"
    assert prepare_in_process(qnn_model_dir, out) == 0
    rename = os.rename

    def interrupted(source: object, target: object) -> None:
        if Path(str(target)) == out / prepared.CONTEXT_DIR:
            raise KeyboardInterrupt
        rename(source, target)

    monkeypatch.setattr(os, "rename", interrupted)
    assert prepare_in_process(qnn_model_dir, out) == 130
    monkeypatch.undo()
    assert not (out / prepared.CONTEXT_DIR).exists() and not (out / prepared.MANIFEST).exists()
    with pytest.raises(ModelLoadError, match="did not finish"):
        prepared.find(out)
    assert prepare_in_process(qnn_model_dir, out) == 0
    assert prepared.find(out) is not None


@qnn
@pytest.mark.parametrize("left", ["a link", "a file"])
def test_a_staging_name_taken_by_a_link_or_a_file_is_cleared_never_followed(qnn_model_dir, tmp_path, left):
    """A `.prepare-staging` that was no folder refused every prepare into the folder as
    "[Errno 17] File exists", for good; a link there is removed, never followed."""
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep").write_bytes(b"not the prepare's")
    out.mkdir()
    (out / prepare.LOCK).touch()
    if left == "a link":
        (out / prepared.STAGING).symlink_to(elsewhere, target_is_directory=True)
    else:
        (out / prepared.STAGING).write_bytes(b"")
    assert prepare_in_process(qnn_model_dir, out) == 0
    assert prepared.find(out) is not None and not os.path.lexists(out / prepared.STAGING)
    assert [path.name for path in elsewhere.iterdir()] == ["keep"]


class CtrlCWhileWriting(io.StringIO):
    """A terminal that a Ctrl-C cuts the first write of `words` to (the rest it keeps)."""

    def __init__(self, words: str) -> None:
        super().__init__()
        self.words = words

    def write(self, text: str) -> int:
        if self.words and self.words in text:
            self.words = ""
            raise KeyboardInterrupt
        return super().write(text)


def prepare_cut_by_ctrl_c(model_dir: Path, out: Path) -> int:
    """`prepare_in_process`, with a Ctrl-C that escapes it a failed test (not pytest's own stop)."""
    try:
        return prepare_in_process(model_dir, out)
    except KeyboardInterrupt:
        pytest.fail("the Ctrl-C escaped `npu-worker prepare`: a traceback, not its one line")


def test_ctrl_c_while_the_finished_prepare_prints_its_result_is_the_one_line(
    tiny_model_dir, tmp_path, monkeypatch
):
    """The result's lines sat after the try: a Ctrl-C landing once `prepare()` had returned was a
    KeyboardInterrupt traceback. The real command up to the compile, which is stubbed (no QNN needed)."""
    out, stderr = tmp_path / "out", io.StringIO()
    manifest = {"buckets": [63], "seconds": 1.0, "sizes": {"compiled": {"63": 1000}}}
    monkeypatch.setattr(prepare, "prepare", lambda *args, **kwargs: manifest)
    monkeypatch.setattr(sys, "stdout", CtrlCWhileWriting(f"prepared {out}"))
    monkeypatch.setattr(sys, "stderr", stderr)
    assert prepare_cut_by_ctrl_c(tiny_model_dir, out) == 130
    assert stderr.getvalue() == f"npu-worker prepare: interrupted; run it again to prepare {out}\n"


def test_ctrl_c_while_a_refusal_is_said_is_the_one_line(tiny_model_dir, tmp_path, monkeypatch):
    """A Ctrl-C inside the refusal's handler escaped the sibling `except KeyboardInterrupt`: a traceback."""
    out = tmp_path / "out"

    def disk_full(*args: object, **kwargs: object) -> dict[str, object]:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(prepare, "prepare", disk_full)
    monkeypatch.setattr(sys, "stderr", stderr := CtrlCWhileWriting(os.strerror(errno.ENOSPC)))
    assert prepare_cut_by_ctrl_c(tiny_model_dir, out) == 130
    assert stderr.getvalue() == f"npu-worker prepare: interrupted; run it again to prepare {out}\n"
