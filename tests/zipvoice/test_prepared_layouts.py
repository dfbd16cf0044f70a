"""A user's own folder layouts through `npu-worker prepare` and `serve`: a vocoder kept in a folder of its
own, and the prepared folder moved to another path under another name (as when copied onto the device)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from npu_worker import cli
from npu_worker.engine.zipvoice import model_files, prepared
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine
from npu_worker.protocol import ModelLoadError
from tests.zipvoice.conftest import engine_config
from tests.zipvoice.test_providers import qnn

PREPARE = [sys.executable, "-m", "npu_worker.cli", "prepare", "--buckets", "63", "--optimization", "fast"]
pytestmark = qnn


def prepare_here(model_dir: Path, out: Path) -> int:
    """PREPARE's command in this process: where the folders it leaves are what is checked, not the
    command's start (a fresh interpreter importing onnxruntime and registering QNN: ≈ 1.7 s of CPU each)."""
    return cli.main([*PREPARE[3:], "--model-dir", str(model_dir), "--out", str(out)])


@pytest.fixture(scope="module")
def user_model(qnn_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A Distill model as upstream exports it (only its folder's name says Distill: no metadata key,
    no comment), and its vocoder in a folder of its own."""
    root = tmp_path_factory.mktemp("user")
    model = root / "models" / "zipvoice_distill"
    shutil.copytree(qnn_model_dir, model)
    decoder = onnx.load(str(model / "fm_decoder.onnx"))
    for prop in decoder.metadata_props:
        if prop.key == "comment":
            prop.value = "flow-matching decoder"
    onnx.save(decoder, str(model / "fm_decoder.onnx"))
    vocoder = root / "vocoders" / "my-vocos.onnx"
    vocoder.parent.mkdir()
    (model / "vocos_24khz.onnx").rename(vocoder)
    return model, vocoder


@pytest.fixture(scope="module")
def moved(user_model: tuple[Path, Path]) -> Path:
    """`prepare --vocoder`, its output then moved and renamed (the folder copied onto the device)."""
    model, vocoder = user_model
    out = model.parent.parent / "prepared"
    done = subprocess.run(
        [*PREPARE, "--model-dir", str(model), "--out", str(out), "--vocoder", str(vocoder)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    # which files it took, the vocoder by its full path (the log line serve writes too)
    assert (
        f"model files (fp32) in {model}: text_encoder.onnx, fm_decoder.onnx, tokens.txt; vocoder {vocoder}"
        in (done.stderr.splitlines())
    )
    target = model.parent.parent / "device" / "npu-model"
    target.parent.mkdir()
    out.rename(target)
    return target


def test_a_vocoder_kept_elsewhere_is_prepared_with_vocoder_and_copied_in(user_model, moved: Path, tmp_path):
    """prepare said "pass --vocoder", then refused `--vocoder` as an unknown argument: a model whose
    vocoder lives in a folder of its own could not be prepared at all. It is copied in under the name
    `serve` looks for first, so the prepared folder serves alone."""
    model, vocoder = user_model
    refused = subprocess.run(
        [*PREPARE, "--model-dir", str(model), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 2 and "pass --vocoder" in refused.stderr, refused.stderr
    assert model_files.locate(str(moved), "fp32").vocoder == moved / "vocos_24khz.onnx"
    assert (moved / "vocos_24khz.onnx").read_bytes() == vocoder.read_bytes()
    assert prepared.find(moved).manifest["source"]["vocos_24khz.onnx"] == prepared.file_hash(vocoder)


def test_a_moved_and_renamed_prepared_folder_loads_its_contexts_with_the_models_own_defaults(
    user_model, moved: Path, tmp_path
):
    """The folder's name was all that said Distill: prepared into (or moved to) a folder named otherwise,
    serve ran the Distill model with ZipVoice's 16 steps and guidance 1.0 (twice the NPU time, and not
    the guidance it was distilled for). The compiled contexts load from the moved folder, none compiled."""
    model, _ = user_model
    engine = ZipVoiceEngine(
        engine_config(
            moved,
            tmp_path / "state",
            device="qnn",
            allow_htp_simulator=True,
            num_steps=None,
            ref_wav=str(model / "reference_ko.wav"),
        )
    )
    engine.load()
    try:
        assert (engine.num_steps, engine.guidance_scale) == (8, 3.0)
        session = engine.models.decoder.decoders[63].session
        ops = {
            node.op_type for sub in session.get_provider_graph_assignment_info() for node in sub.get_nodes()
        }
        assert ops == {"EPContext"}  # the compiled context, found beside the moved manifest
        assert not (tmp_path / "state" / "qnn-cache").exists()  # nothing compiled again
    finally:
        engine.close()


def test_a_folder_prepared_from_a_prepared_folder_keeps_the_models_own_name(moved: Path, tmp_path):
    """Preparing again from a prepared folder (other buckets, another chip) keeps the name of the folder
    the model came in, not the prepared one's."""
    again = tmp_path / "again"
    assert prepare_here(moved, again) == 0
    assert prepared.find(again).manifest["model_dir"] == "zipvoice_distill"


def test_a_model_prepared_through_a_link_keeps_the_distill_name_of_the_folder_it_names(user_model, tmp_path):
    """`serve --model-dir current` (current -> zipvoice_distill) knew the Distill model by the folder the
    link names; prepared from `current`, the manifest kept "current", and the prepared folder ran it
    with 16 steps and guidance 1.0."""
    model, vocoder = user_model
    current = tmp_path / "current"
    current.symlink_to(model, target_is_directory=True)
    out = tmp_path / "model"
    command = ["prepare", "--buckets", "63", "--optimization", "fast", "--vocoder", str(vocoder)]
    assert cli.main([*command, "--model-dir", str(current), "--out", str(out)]) == 0
    assert prepared.find(out).manifest["model_dir"] == "zipvoice_distill"
    assert model_files.is_distill(model_files.locate(str(out), "fp32"), {})


def sherpa_release(qnn_model_dir: Path, folder: Path) -> Path:
    """The model under a sherpa-onnx release's file names."""
    folder.mkdir()
    for name in ("tokens.txt", "vocos_24khz.onnx", "reference_ko.wav", "reference_ko.txt"):
        shutil.copy2(qnn_model_dir / name, folder / name)
    shutil.copy2(qnn_model_dir / "text_encoder.onnx", folder / "encoder.onnx")
    shutil.copy2(qnn_model_dir / "fm_decoder.onnx", folder / "decoder.onnx")
    return folder


def test_a_prepare_of_another_layout_killed_while_moving_in_is_rerun_without_the_earlier_files(
    qnn_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The earlier manifest (the list of files to remove) was deleted first: killed after moving in
    `decoder.onnx`, the rerun found no list, kept the earlier `fm_decoder.onnx` and `text_encoder.onnx`,
    and serve took them first and refused the folder ("remove fm_decoder.onnx")."""
    sherpa, out = sherpa_release(qnn_model_dir, tmp_path / "sherpa-release"), tmp_path / "prepared"
    command = ["prepare", "--buckets", "63", "--optimization", "fast", "--out", str(out)]
    assert cli.main([*command, "--model-dir", str(qnn_model_dir)]) == 0
    replace = os.replace

    def killed(source: object, target: object) -> None:
        if Path(str(target)) == out / "encoder.onnx":  # (decoder.onnx is in)
            raise KeyboardInterrupt
        replace(source, target)

    monkeypatch.setattr(os, "replace", killed)
    assert cli.main([*command, "--model-dir", str(sherpa)]) == 130
    monkeypatch.undo()
    assert (out / "decoder.onnx").exists() and not (out / prepared.MANIFEST).exists()
    assert cli.main([*command, "--model-dir", str(sherpa)]) == 0
    assert not (out / "fm_decoder.onnx").exists() and not (out / "text_encoder.onnx").exists()
    assert model_files.locate(str(out), "fp32").decoder.name == "decoder.onnx"
    assert sorted(path.name for path in out.iterdir() if path.name.startswith(".")) == [prepared.LOCK]


def test_preparing_another_layout_into_a_prepared_folder_leaves_none_of_the_earlier_files(
    qnn_model_dir: Path, tmp_path: Path
):
    """Prepared from an official export and then, into the same folder, from a sherpa-onnx release: the
    earlier `text_encoder.onnx` and `fm_decoder.onnx` stayed beside the new `encoder.onnx` and
    `decoder.onnx`, serve took the official names first and refused them ("was prepared from
    decoder.onnx ... serve with --precision fp32", which it already did), and preparing again kept them."""
    sherpa = sherpa_release(qnn_model_dir, tmp_path / "sherpa-release")
    out = tmp_path / "prepared"
    for source in (qnn_model_dir, sherpa):
        assert prepare_here(source, out) == 0, source
    engine = ZipVoiceEngine(
        engine_config(out, tmp_path / "state", device="qnn", allow_htp_simulator=True, precision="fp32")
    )
    engine.load()
    try:
        assert engine.info.placement["decoder@63"]["device"] == "qnn"
    finally:
        engine.close()
    assert not (out / "fm_decoder.onnx").exists() and not (out / "text_encoder_int8.onnx").exists()
    assert sorted(path.name for path in (out / "qnn").iterdir()) == [
        "decoder@63_ctx.onnx",
        "decoder@63_ctx_qnn.bin",
    ]
    # a file of the other layout put in by hand is named, with the fix (not "serve with --precision fp32")
    shutil.copy2(qnn_model_dir / "fm_decoder.onnx", out / "fm_decoder.onnx")
    shadowed = engine_config(
        out, tmp_path / "state2", device="qnn", allow_htp_simulator=True, precision="fp32"
    )
    with pytest.raises(
        ModelLoadError, match="finds fm_decoder.onnx beside it first .* remove fm_decoder.onnx"
    ):
        ZipVoiceEngine(shadowed).load()


@pytest.mark.parametrize("given", ["fm_decoder.onnx", "tokens.txt", "a folder"])
def test_a_vocoder_that_is_no_vocoder_is_refused_by_prepare_before_it_compiles(
    qnn_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], given: str
):
    """`prepare --vocoder` copied any file in as vocos_24khz.onnx (the model's own decoder, a text
    file), compiled, and said "serve it with"; serve then failed every synthesis, or refused the folder.
    A folder, FIFO or device given was said not to exist."""
    vocoder = tmp_path / "a folder" if given == "a folder" else qnn_model_dir / given
    if given == "a folder":
        vocoder.mkdir()
    out = tmp_path / "out"
    command = ["prepare", "--buckets", "63", "--model-dir", str(qnn_model_dir), "--out", str(out)]
    assert cli.main([*command, "--vocoder", str(vocoder)]) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and said[0].startswith("npu-worker prepare: ModelLoadError: "), said
    assert {
        "fm_decoder.onnx": f"{vocoder} is no Vocos vocoder: it takes t, x, text_condition",
        "tokens.txt": f"cannot load {vocoder} as the vocoder: ",
        "a folder": f"vocoder file {vocoder} is not a regular file (--vocoder)",
    }[given] in said[0]
    assert not out.exists()


def test_a_prepared_folder_whose_text_encoder_was_swapped_is_refused_on_the_npu(moved: Path, tmp_path):
    """The manifest records the text encoder's SHA-256, but only the decoder's was checked: another
    export's encoder (here the model's own int8 one, under the fp32 name) loaded beside the compiled
    decoder without a word, and every sentence was spoken from the wrong text features."""
    swapped = tmp_path / "swapped"
    shutil.copytree(moved, swapped)
    (swapped / "text_encoder.onnx").unlink()
    shutil.copy(swapped / "text_encoder_int8.onnx", swapped / "text_encoder.onnx")
    config = engine_config(swapped, tmp_path / "state", device="qnn", allow_htp_simulator=True, ref_wav=None)
    with pytest.raises(ModelLoadError) as refused:
        ZipVoiceEngine(config).load()
    assert str(refused.value) == (
        f"ModelLoadError: {swapped / 'text_encoder.onnx'} is not the text encoder {swapped} was prepared from "
        f"(the compiled decoder was trained with that one); it is {(swapped / 'text_encoder.onnx').stat().st_size} "
        f"bytes where the prepare copied {(moved / 'text_encoder.onnx').stat().st_size} (a copy cut short, or "
        f"another file); put it back, or run `npu-worker prepare` again for {swapped}"
    )


@pytest.mark.parametrize(
    ("broken", "what"),
    [
        ("fm_decoder.onnx", "the decoder"),  # truncated: an INVALID_PROTOBUF traceback
        ("text_encoder.onnx", "the text encoder"),  # prepared, then refused by `serve`
    ],
)
def test_a_model_file_onnxruntime_cannot_read_is_refused_by_prepare_in_one_line(
    qnn_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], broken: str, what: str
):
    model, out = tmp_path / "model", tmp_path / "out"
    shutil.copytree(qnn_model_dir, model)
    whole = (model / broken).read_bytes()
    (model / broken).unlink()
    (model / broken).write_bytes(whole[: len(whole) // 2])  # a copy cut short
    command = ["prepare", "--buckets", "63", "--model-dir", str(model), "--out", str(out)]
    assert cli.main(command) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert said[-1].startswith(
        f"npu-worker prepare: ModelLoadError: cannot load {model / broken} as {what}: "
    )
    assert "Traceback" not in "\n".join(said) and not (out / prepared.MANIFEST).exists()


@pytest.mark.parametrize("where", ["in the folder", "--vocoder"])
def test_a_prepared_folder_served_with_another_vocoder_is_refused_on_the_npu(moved: Path, tmp_path, where):
    """The manifest records the vocoder's SHA-256 but load did not check it: another vocoder (in the
    folder, or named by `serve --vocoder`) turned the compiled decoder's features into sound without a
    word. Here the model's own vocoder with one more metadata entry: a valid Vocos, other bytes."""
    swapped = tmp_path / "swapped"
    shutil.copytree(moved, swapped)
    other = onnx.load(str(moved / "vocos_24khz.onnx"))
    other.metadata_props.add(key="exported_by", value="someone else")
    if where == "in the folder":
        (swapped / "vocos_24khz.onnx").unlink()
        vocoder = swapped / "vocos_24khz.onnx"
    else:
        vocoder = tmp_path / "vocoders" / "other-vocos.onnx"
        vocoder.parent.mkdir()
    onnx.save(other, str(vocoder))
    config = engine_config(
        swapped,
        tmp_path / "state",
        device="qnn",
        allow_htp_simulator=True,
        ref_wav=None,
        vocoder=None if where == "in the folder" else str(vocoder),
    )
    with pytest.raises(ModelLoadError) as refused:
        ZipVoiceEngine(config).load()
    sizes = (  # (said for a file of the folder only: the prepare copied that one)
        f"; it is {vocoder.stat().st_size} bytes where the prepare copied "
        f"{(moved / 'vocos_24khz.onnx').stat().st_size} (a copy cut short, or another file)"
        if where == "in the folder"
        else ""
    )
    assert str(refused.value) == (
        f"ModelLoadError: {vocoder} is not the vocoder {swapped} was prepared from (the compiled decoder's "
        f"features are that one's input){sizes}; put it back, or run `npu-worker prepare` again for {swapped}"
    )


def test_a_model_downloaded_into_a_hugging_face_cache_is_prepared_into_a_folder_that_serves_alone(
    qnn_model_dir: Path, tmp_path
):
    """The snapshot's files are links into the cache's blobs (`../../blobs/<hash>`): `prepare` hard-linked
    the links themselves and said it had prepared the folder, which held no model (`serve`: "holds no
    ZipVoice model (no tokens.txt, no decoder)"). Served here with the cache gone, as on the device."""
    hub = tmp_path / "hub"
    snapshot = hub / "snapshots" / "abc123"
    for folder in (hub / "blobs", snapshot):
        folder.mkdir(parents=True)
    for path in sorted(qnn_model_dir.iterdir()):
        if path.is_file():
            shutil.copy(path, hub / "blobs" / f"blob-{path.name}")
            (snapshot / path.name).symlink_to(Path("..") / ".." / "blobs" / f"blob-{path.name}")
    out = tmp_path / "prepared"
    assert prepare_here(snapshot, out) == 0
    shutil.rmtree(hub)
    config = engine_config(out, tmp_path / "state", device="qnn", allow_htp_simulator=True, ref_wav=None)
    engine = ZipVoiceEngine(config)
    engine.load()
    assert engine.info.device == "qnn"
