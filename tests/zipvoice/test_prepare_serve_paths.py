"""The `serve` line `prepare` prints names the prepared folder by its absolute path (a relative --out's
line named a folder only from where prepare ran), and the device's line says which of its paths are
this host's."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from npu_worker import cli
from npu_worker.cli_prepare_serve import serve_said
from npu_worker.engine.zipvoice import prepared
from tests.zipvoice.test_prepare_interrupts import INTERRUPTED_AT
from tests.zipvoice.test_providers import qnn, x86_only


@qnn
def test_a_relative_out_is_printed_as_its_absolute_path(
    qnn_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.chdir(tmp_path)
    command = ["prepare", "--buckets", "63", "--optimization", "fast", "--model-dir", str(qnn_model_dir)]
    assert cli.main([*command, "--out", "prepared"]) == 0
    words = shlex.split(capsys.readouterr().out.split("serve it with: ", 1)[1])
    assert words[words.index("--model-dir") + 1] == str(tmp_path / "prepared")


@qnn
def test_a_relative_out_interrupted_once_prepared_is_said_by_its_absolute_path(
    qnn_model_dir: Path, tmp_path: Path
):
    """Ctrl-C as the prepare removed its staging: "serve it with --model-dir out", from where it ran."""
    command = ["prepare", "--buckets", "63", "--optimization", "fast", "--model-dir", str(qnn_model_dir)]
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            INTERRUPTED_AT,
            "shutil.rmtree",
            f"out/{prepared.STAGING}",
            *command,
            "--out",
            "out",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    said = [line for line in done.stderr.splitlines() if line.startswith("npu-worker prepare:")]
    assert said == [
        "npu-worker prepare: interrupted once out was prepared: it is complete (serve it with --model-dir "
        f"{tmp_path / 'out'})"
    ], done.stderr


@x86_only
@pytest.mark.parametrize(
    ("voice", "said"),
    [
        (None, "copy /host/out onto the device, and give --model-dir there"),
        (
            ("/host/out/reference_ko.wav", None),
            "copy /host/out onto the device, and give --model-dir and --ref-wav",
        ),
        (
            ("/host/v/me.wav", "네"),
            "copy /host/out and /host/v/me.wav onto the device, and give --model-dir and --ref-wav",
        ),
    ],
)
def test_the_device_line_says_its_paths_are_this_hosts(voice, said: str):
    """The device's line named the x86 host's folder and voice as if the device had them."""
    line = serve_said("/host/out", "fp32", voice, "8gen3", shared=True)
    note, command = line.split("; serve it on the device with: ")
    assert said in note and note.endswith("as the device's paths (below: this host's)"), note
    assert "--model-dir /host/out " in command
