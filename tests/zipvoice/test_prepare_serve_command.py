"""The `serve` command `prepare` prints ("serve it with: ...") loads the folder it prepared: on x86 it
left out --allow-htp-simulator, so serve refused the device (the simulator is never chosen unasked)
and the printed command failed as given; a folder name with a space was split into two words."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from npu_worker import cli, cli_prepare_serve
from npu_worker.config_sources import load_settings
from npu_worker.engine import qnn_targets
from npu_worker.engine.zipvoice import prepared
from npu_worker.engine_options import build_engine
from npu_worker.protocol import ModelLoadError
from tests.zipvoice.test_providers import qnn, x86_only


@qnn
@pytest.mark.parametrize("name", ["out", "prepared out"])  # a space: the printed command was split there
def test_the_printed_serve_command_loads_the_prepared_folder(
    qnn_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
):
    out = tmp_path / name
    command = ["prepare", "--buckets", "63", "--optimization", "fast", "--model-dir", str(qnn_model_dir)]
    assert cli.main([*command, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"prepared {out}: 1 bucket in "), printed  # it said "1 buckets"
    words = shlex.split(printed.split("serve it with: ", 1)[1])
    assert words[:2] == ["npu-worker", "serve"], printed
    args = cli.build_parser(words[1:]).parse_args([*words[1:], "--state-dir", str(tmp_path / "state")])
    engine = build_engine(load_settings(args, environ={}))
    try:
        engine.load()  # refused on x86 without --allow-htp-simulator
        assert engine.info.placement["fm_decoder@63"]["device"] == "qnn", engine.info.placement
        assert engine.info.precision == "fp16"  # /health's: what HTP computes the fp32 files in (README)
    finally:
        engine.close()


# What a shell makes of each (a quote, an expansion, a second line, a separator) and what argparse
# makes of a word that begins with a dash: `--model-dir -prepared` was "expected one argument".
HOSTILE_OUTS = ["-prepared", "--", "it's", 'say "a"', "$HOME `id`", "two\nlines", "a;rm -rf b", "tab\there"]


@pytest.mark.parametrize("out", HOSTILE_OUTS)
def test_the_printed_serve_command_names_any_folder_as_given(out: str):
    """`prepare --out=-prepared` (a relative name that begins with a dash) printed a command serve
    refused (`--model-dir: expected one argument`); now `./-prepared`, and every name reaches serve as
    the folder it was given as."""
    words = shlex.split(cli_prepare_serve.serve_command(out, "fp32"))
    args = cli.build_parser(words[1:]).parse_args(words[1:])
    assert (args.command, Path(args.model_dir), args.precision) == ("serve", Path(out), "fp32"), words


@pytest.mark.parametrize("out", HOSTILE_OUTS[:3])
# a transcript that begins with a dash (a dialogue line): `--ref-text - 네, ...` was argparse's
# "expected one argument" in the serve the line said to run (prepare itself took `--ref-text=- 네`)
@pytest.mark.parametrize("text", [None, "안녕하세요. it's me", "- 네, 안녕하세요.", "-네"])
def test_the_printed_serve_command_of_a_calibrated_folder_names_its_voice(out: str, text: str | None):
    """A folder prepared with `--precision a16w8` was calibrated with a voice, which the printed serve
    line left out: that serve refused every request that named no voice (`UnknownVoice`)."""
    voice = f"/voices/{out}.wav"
    words = shlex.split(cli_prepare_serve.serve_command("prepared", "fp32", (voice, text)))
    args = cli.build_parser(words[1:]).parse_args(words[1:])
    assert (args.model_dir, args.ref_wav, args.ref_text) == ("prepared", voice, text), words


@qnn
def test_the_printed_serve_command_of_a_named_target_names_it(
    qnn_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    """`prepare --qnn-soc 8gen2` printed a serve line without the flag: that serve (auto: 8gen3 on the
    x86 simulator, the chip itself on a device) refused the folder as compiled for another target,
    "serve with --qnn-soc 8gen2"."""
    out = tmp_path / "out"
    command = ["prepare", "--buckets", "63", "--optimization", "fast", "--qnn-soc", "8gen2"]
    assert cli.main([*command, "--model-dir", str(qnn_model_dir), "--out", str(out)]) == 0
    words = shlex.split(capsys.readouterr().out.split("serve it with: ", 1)[1])
    args = cli.build_parser(words[1:]).parse_args([*words[1:], "--state-dir", str(tmp_path / "state")])
    engine = build_engine(load_settings(args, environ={}))
    try:
        engine.load()  # ModelLoadError: ... serve with --qnn-soc 8gen2
        assert engine.info.placement["fm_decoder@63"]["device"] == "qnn", engine.info.placement
    finally:
        engine.close()
    assert words[words.index("--qnn-soc") + 1] == "8gen2", words


@qnn
@x86_only
def test_a_weight_shared_folder_made_on_x86_is_said_to_be_served_on_the_device(
    qnn_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    """`--weight-sharing on` with several buckets on x86 printed "serve it with ... --allow-htp-simulator",
    which serve refuses there (the simulator cannot load a weight-shared binary of several buckets), and
    without the target: on the device, auto reads the chip, and serve refused the folder compiled for
    8gen3 ("serve with --qnn-soc 8gen3")."""
    out = tmp_path / "out"
    command = ["prepare", "--buckets", "63", "127", "--optimization", "fast", "--weight-sharing", "on"]
    assert cli.main([*command, "--model-dir", str(qnn_model_dir), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    said, line = printed.split(" with: ", 1)
    assert said.endswith(
        f"the x86 HTP simulator cannot load a weight-shared binary of several buckets: copy {out} onto the "
        "device, and give --model-dir there as the device's paths (below: this host's); serve it on the device"
    ), printed
    words = shlex.split(line)
    assert "--allow-htp-simulator" not in words, words
    with pytest.raises(ModelLoadError, match="weight"):  # what serve says here
        build_engine(
            load_settings(
                cli.build_parser(words[1:]).parse_args(
                    [*words[1:], "--allow-htp-simulator", "--state-dir", str(tmp_path / "state")]
                ),
                environ={},
            )
        ).load()
    soc = words[words.index("--qnn-soc") + 1]
    manifest = json.loads(prepared.read_manifest(out, prepared.MANIFEST))
    assert qnn_targets.provider_options(soc, machine="aarch64") == manifest["target"]["provider_options"]
