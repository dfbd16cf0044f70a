"""`npu-worker prepare --model-dir` given the wrong thing: the folder above the model, a file, or the
output of a prepare that did not finish. One line that says which and what to give instead."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from npu_worker import cli
from npu_worker.engine.zipvoice import prepared
from npu_worker.engine.zipvoice.model_files import locate
from npu_worker.protocol import ModelLoadError
from tests.zipvoice.test_providers import qnn


def prepare_line(capsys: pytest.CaptureFixture[str], model_dir: Path, out: Path) -> tuple[int, str]:
    command = ["prepare", "--buckets", "63", "--optimization", "fast", "--model-dir", str(model_dir)]
    code = cli.main([*command, "--out", str(out)])
    return code, capsys.readouterr().err.strip().splitlines()[-1]


def test_the_folder_above_the_model_names_the_model_folders_in_it(tiny_model_dir, tmp_path):
    """It was "token table .../tokens.txt does not exist", as if the model had lost a file."""
    models = tmp_path / "models"
    models.mkdir()
    shutil.copytree(tiny_model_dir, models / "zipvoice_distill")
    (models / "notes").mkdir()
    with pytest.raises(ModelLoadError) as refused:
        locate(str(models), "fp32")
    assert str(refused.value) == (
        f"ModelLoadError: {models} holds no ZipVoice model (no tokens.txt, no decoder); the folders in it "
        "that hold one: zipvoice_distill (give one as --model-dir)"
    )
    with pytest.raises(
        ModelLoadError, match=f"{models / 'notes'} holds no ZipVoice model .*; give the folder"
    ):
        locate(str(models / "notes"), "fp32")


def test_a_model_file_given_as_the_model_dir_is_said_to_be_no_folder(tiny_model_dir):
    """It was "model directory .../tokens.txt does not exist": it does."""
    with pytest.raises(ModelLoadError) as refused:
        locate(str(tiny_model_dir / "tokens.txt"), "fp32")
    assert str(refused.value) == (
        f"ModelLoadError: model directory {tiny_model_dir / 'tokens.txt'} is not a directory: give the "
        "folder holding the model"
    )


@qnn
def test_the_output_of_a_prepare_that_did_not_finish_is_refused_as_a_source(qnn_model_dir, tmp_path, capsys):
    """`serve` refuses such a folder as unfinished, but `prepare` took it as a plain model and prepared
    it: a re-prepare from another model cut short leaves some files of each there."""
    half = tmp_path / "half"
    assert prepare_line(capsys, qnn_model_dir, half)[0] == 0
    (half / prepared.MANIFEST).unlink()  # (as a prepare killed while moving its files in leaves it)
    code, line = prepare_line(capsys, half, tmp_path / "again")
    assert code == 2
    assert line == (
        f"npu-worker prepare: ModelLoadError: --model-dir {half} is the output of an `npu-worker prepare` "
        "that did not finish (killed, or it failed): its files may be some of two models'; prepare from "
        "the model directory that one prepared from"
    )
    assert not (tmp_path / "again").exists()


def test_a_model_folder_of_links_naming_nothing_is_said_so(tiny_model_dir, tmp_path):
    """A Hugging Face cache's snapshot (`tokens.txt -> ../../blobs/<hash>`) copied by `cp -r` without its
    blobs: `ls` lists every file, and the worker said the folder held "no tokens.txt, no decoder"."""
    copied = tmp_path / "copied"
    copied.mkdir()
    for path in sorted(tiny_model_dir.iterdir()):
        (copied / path.name).symlink_to(Path("..") / ".." / "blobs" / f"blob-{path.name}")
    with pytest.raises(ModelLoadError) as refused:
        locate(str(copied), "fp32")
    said = str(refused.value)
    assert said.startswith("ModelLoadError: tokens.txt, fm_decoder.onnx") and "no tokens.txt" not in said
    assert (
        f"are links to files that are not there ({copied / 'tokens.txt'} -> ../../blobs/blob-tokens.txt)"
        in said
    )
    assert said.endswith("(`cp -rL`), or serve the folder it was copied from")


@pytest.mark.parametrize(
    ("kept", "wrong"),
    [(lambda whole: whole[: whole.index(b"\t", 40)], "is not 'token<TAB>id'"), (lambda _: b"", "no pad")],
    ids=["cut mid-line", "empty"],
)
def test_a_token_table_serve_refuses_is_refused_by_prepare_before_it_compiles(
    tiny_model_dir, tmp_path, capsys, kept, wrong
):
    """A tokens.txt cut short (a copy onto the device, a download stopped) was copied in and every bucket
    compiled for it (minutes on the device, hours on the simulator): then `serve` refused the prepared
    folder, "tokens.txt line 21 is not 'token<TAB>id'"."""
    model = tmp_path / "model"
    shutil.copytree(tiny_model_dir, model)
    (model / "tokens.txt").write_bytes(kept((tiny_model_dir / "tokens.txt").read_bytes()))
    code, line = prepare_line(capsys, model, tmp_path / "out")
    assert code == 2
    assert line.startswith(f"npu-worker prepare: ModelLoadError: {model / 'tokens.txt'} "), line
    assert wrong in line
    assert not (tmp_path / "out").exists()


@qnn
def test_a_model_re_exported_while_it_is_prepared_leaves_a_folder_serve_loads(
    qnn_model_dir, tmp_path, monkeypatch, capsys
):
    """The manifest's hashes were taken from the source folder once every bucket was compiled, and each
    bucket compiled from the source's decoder: a re-export in place between buckets (an exporter run
    while a prepare of hours on the simulator ran) made the later buckets from the new decoder, the
    folder kept the old one, the manifest named the new one's hash, and `serve` refused the folder
    `prepare` had said was prepared ("is not the decoder ... was prepared from")."""
    import onnx

    from npu_worker import cli_prepare
    from npu_worker.engine.zipvoice.engine import ZipVoiceEngine
    from tests.zipvoice.conftest import engine_config

    model, out = tmp_path / "model", tmp_path / "out"
    shutil.copytree(qnn_model_dir, model)

    def re_export_after_the_first_bucket(line: str) -> None:
        if line.startswith("bucket 63 (1/2)"):
            other = onnx.load(str(model / "fm_decoder.onnx"))
            other.metadata_props.add(key="exported_by", value="a later export")
            onnx.save(other, str(model / "fm_decoder.onnx"))  # in place, as an exporter writes

    monkeypatch.setattr(cli_prepare, "progress", re_export_after_the_first_bucket)
    command = ["prepare", "--buckets", "63", "127", "--optimization", "fast", "--model-dir", str(model)]
    assert cli.main([*command, "--out", str(out)]) == 0, capsys.readouterr().err
    manifest = prepared.read_manifest(out, prepared.MANIFEST)
    assert '"exported_by"' not in (out / "fm_decoder.onnx").read_bytes().decode("latin-1")
    assert prepared.file_hash(out / "fm_decoder.onnx") in manifest
    engine = ZipVoiceEngine(engine_config(out, tmp_path / "state", device="qnn", allow_htp_simulator=True))
    engine.load()
    try:
        assert engine.info.placement["fm_decoder@127"]["device"] == "qnn"
    finally:
        engine.close()
