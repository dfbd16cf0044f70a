"""`npu-worker prepare`'s calibration flags: refused in one line where they would do nothing, and their
counts checked before the model is read."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.zipvoice.test_providers import qnn, x86_only

PREPARE = [sys.executable, "-m", "npu_worker.cli", "prepare", "--buckets", "383", "--optimization", "fast"]


def model_copy(tiny_model_dir: Path, target: Path, precision: str) -> Path:
    """The session's tiny model with only `precision`'s encoder and decoder: what
    `build_model_dir(target, "tiny", (precision,))` writes (the same seed; the int8 files are quantised
    from the same fp32 graphs, then those are removed), without building and quantising again (≈ 2 s of
    CPU each, 20-30 s of a loaded worker's wall)."""
    dropped = ("fm_decoder_int8.onnx", "text_encoder_int8.onnx")
    if precision == "int8":
        dropped = ("fm_decoder.onnx", "text_encoder.onnx")
    shutil.copytree(tiny_model_dir, target, ignore=shutil.ignore_patterns(*dropped))
    return target


def prepare(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """A prepare of a model directory that does not exist: a flag refused first is all it can say."""
    command = [*PREPARE, "--model-dir", str(tmp_path / "model"), "--out", str(tmp_path / "out"), *flags]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_calibration_flags_given_to_a_prepare_that_does_not_calibrate_are_refused(tmp_path, precision):
    """`--ref-wav me.wav --num-steps 4` with fp32 were ignored without a word: the operator believed the
    compiled decoder was made with their voice and steps."""
    done = prepare(tmp_path, "--precision", precision, "--ref-wav", "me.wav", "--num-steps", "4")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines() == [
        "npu-worker prepare: --ref-wav, --num-steps: calibration flags, used only by --precision a16w8 "
        f"or a8w8 (--precision {precision} compiles the decoder as it is); leave them out"
    ]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("flags", [["--calibration-calls", "0"], ["--check-calls", "-1"]])
def test_calibration_counts_out_of_range_are_refused_before_the_model_is_read(tmp_path, flags):
    """They were checked after the model's files were listed (and the plan checked with a negative count)."""
    done = prepare(tmp_path, "--precision", "a16w8", *flags)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines() == [
        "npu-worker prepare: --calibration-calls must be >= 1 and --check-calls >= 0"
    ]


@pytest.mark.parametrize("precision", ["a16w8", "a8w8"])
def test_a_quantised_prepare_of_an_int8_only_folder_says_it_needs_the_fp32_files(
    tiny_model_dir, tmp_path, precision
):
    """sherpa-onnx's int8-only release: `--precision a16w8` said "text encoder (fp32) not found ...
    (try --precision int8)", no word that a16w8 is calibrated from the fp32 files."""
    model_copy(tiny_model_dir, tmp_path / "model", "int8")
    done = prepare(tmp_path, "--precision", precision)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    said = done.stderr.strip().splitlines()[-1]
    assert said.startswith(
        f"npu-worker prepare: ModelLoadError: text encoder (fp32) not found in {tmp_path / 'model'}: "
    ), said
    assert said.endswith(
        f" (--precision {precision} quantises the fp32 files: prepare from a folder that holds them, or"
        " compile the int8 files as they are with --precision int8)"
    ), said
    assert not (tmp_path / "out").exists()


@qnn
def test_an_out_folder_under_a_tilde_no_shell_expanded_is_made_in_the_home(
    qnn_model_dir, tmp_path, monkeypatch, capsys
):
    """`--out=~/m-qnn` (a shell expands no `~` after `=`, nor does a unit file) made a folder named `~`
    in the current folder, and the `serve` line printed named `'~/m-qnn'`, which serve expands: the
    command it said to run found no model there. `--model-dir=~/...` was expanded all along."""
    from npu_worker import cli

    home, here = tmp_path / "home", tmp_path / "here"
    home.mkdir()
    here.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(here)
    command = ["prepare", "--buckets", "63", "--optimization", "fast", "--model-dir", str(qnn_model_dir)]
    assert cli.main([*command, "--out=~/m-qnn"]) == 0
    said = capsys.readouterr().out.strip().splitlines()[-1]
    assert (home / "m-qnn" / "manifest.json").is_file() and not (here / "~").exists()
    assert said.startswith(f"prepared {home / 'm-qnn'}: "), said
    assert f" --model-dir {home / 'm-qnn'} --device qnn " in said, said


@qnn
@pytest.mark.parametrize("name", ["./~", "./~old"])
def test_a_folder_named_with_a_tilde_here_is_the_one_the_serve_line_names(
    qnn_model_dir, tmp_path, monkeypatch, capsys, name
):
    """`--out ./~old` (how a folder named `~old` here is named: `~old` alone is a home) lost its `./`
    as the flag was read: refused, "no home directory for . on this machine"; and `./~` was the home
    itself, prepared into (an empty one) and named so by the printed `serve` line."""
    from npu_worker import cli
    from npu_worker.engine.zipvoice.model_files import home_expanded

    home, here = tmp_path / "home", tmp_path / "here"
    home.mkdir()
    here.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(here)
    command = ["prepare", "--buckets", "63", "--optimization", "fast", "--model-dir", str(qnn_model_dir)]
    assert cli.main([*command, "--out", name]) == 0
    words = shlex.split(capsys.readouterr().out.split("serve it with: ", 1)[1])
    args = cli.build_parser(words[1:]).parse_args(words[1:])
    assert (here / name / "manifest.json").is_file() and list(home.iterdir()) == []
    assert home_expanded(args.model_dir).resolve() == (here / name).resolve(), words  # as serve reads it


@pytest.mark.parametrize("flag", ["--ref-wav", "--calibration-texts"])
def test_a_blank_calibration_file_is_the_default(flag):
    """`--calibration-texts "$TEXTS"` with TEXTS unset was read as the folder `.` ("cannot read
    calibration texts .: [Errno 21] Is a directory: '.'"), a blank --ref-wav as the wav `.`, names the
    operator never gave: blank is the default, as serve's --ref-wav."""
    from npu_worker import cli

    words = ["prepare", "--model-dir", "m", "--out", "o", "--precision", "a16w8", flag, ""]
    args = cli.build_parser(words).parse_args(words)
    assert getattr(args, flag[2:].replace("-", "_")) is None


def test_calibration_texts_under_a_tilde_are_read_from_the_home(
    tiny_model_dir, tmp_path, monkeypatch, capsys
):
    """`--calibration-texts=~/texts.json` was looked for in a folder named `~` under the current one:
    "cannot read calibration texts ~/texts.json: No such file or directory"."""
    from npu_worker import cli

    home, here = tmp_path / "home", tmp_path / "here"
    home.mkdir()
    here.mkdir()
    (home / "texts.json").write_text("[]", encoding="utf-8")
    model_copy(tiny_model_dir, tmp_path / "model", "fp32")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(here)
    command = ["prepare", "--buckets", "63", "--precision", "a16w8", "--model-dir", str(tmp_path / "model")]
    assert cli.main([*command, "--out", str(tmp_path / "out"), "--calibration-texts=~/texts.json"]) == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said == f"npu-worker prepare: {home / 'texts.json'}: no texts", said


@pytest.mark.parametrize("flag", ["--out", "--model-dir"])
def test_a_blank_folder_flag_is_refused_in_its_words(tiny_model_dir, tmp_path, monkeypatch, capsys, flag):
    """`--out "$OUT"` with OUT unset prepared into the current folder ("prepared .": an empty one, or an
    earlier prepare's, passed the output checks); a blank --model-dir was "--model-dir is required for
    --backend zipvoice-onnx", a flag prepare does not have."""
    from npu_worker import cli

    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    folders = {"--model-dir": str(tiny_model_dir), "--out": str(tmp_path / "out")} | {flag: ""}
    with pytest.raises(SystemExit) as stopped:
        cli.main(["prepare", "--buckets", "63", *(word for pair in folders.items() for word in pair)])
    assert stopped.value.code == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said == f"npu-worker prepare: error: argument {flag}: '' is blank: give a folder", said
    assert list(here.iterdir()) == [] and not (tmp_path / "out").exists()


@x86_only
@pytest.mark.parametrize("value", ["none", "", "0", "  "])  # "  ": it said "--qnn-soc   : the x86 ..."
def test_no_target_on_the_x86_simulator_is_refused_before_anything_is_made(tmp_path, value):
    """`--qnn-soc none` (or blank, read as none) on x86: the decoder was specialised (minutes at full
    size), then "QNN could not compile fm_decoder.onnx for 63 frames: ... QNN_COMMON_ERROR_MEM_ALLOC:
    Memory allocation related error", measured on the tiny export at 63 and 383 frames: the simulator
    finalises no decoder without a target, and the words sent the operator to look for memory."""
    done = prepare(tmp_path, "--qnn-soc", value)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    said = done.stderr.strip().splitlines()
    assert len(said) == 1 and said[0].startswith(
        f"npu-worker prepare: --qnn-soc {value.strip() or repr(value)}: the x86 HTP simulator compiles for a named "
        "target only (without one QNN fails to finalise the decoder, QNN_COMMON_ERROR_MEM_ALLOC); leave it "
        "auto (8gen3 here) or name the device's SoC: 888, "
    ), said
    assert not (tmp_path / "out").exists()
