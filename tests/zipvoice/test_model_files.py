"""Model directory loading: both naming layouts, both precisions, and load errors that name the file."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

from npu_worker.engine.base import SynthesisRequest, Voice
from npu_worker.engine.zipvoice.engine import create
from npu_worker.engine.zipvoice.model_files import is_distill, locate
from npu_worker.protocol import InvalidAudio, ModelLoadError
from tests.test_planted_links_race import as_nobody
from tests.zipvoice.conftest import engine_config


@pytest.fixture(scope="module")
def sherpa_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's tiny model in sherpa-onnx's int8 names, its fp32 files left out: what
    `build_model_dir(..., ("int8",), layout="sherpa")` writes (the same graphs under other names; the
    builder's sherpa names are test_test_model.py's), without quantising both graphs again (≈ 5 s of CPU)."""
    target = tmp_path_factory.mktemp("sherpa") / "zipvoice"
    shutil.copytree(tiny_model_dir, target)
    for official, sherpa in (("text_encoder", "encoder"), ("fm_decoder", "decoder")):
        (target / f"{official}_int8.onnx").rename(target / f"{sherpa}.int8.onnx")
        (target / f"{official}.onnx").unlink()
    return target


@pytest.fixture
def broken_dir(tiny_model_dir: Path, tmp_path: Path) -> Path:
    target = tmp_path / "model"
    shutil.copytree(tiny_model_dir, target)
    return target


def test_official_layout_finds_fp32_and_int8_files(tiny_model_dir):
    fp32 = locate(str(tiny_model_dir), "fp32")
    int8 = locate(str(tiny_model_dir), "int8")
    assert (fp32.encoder.name, fp32.decoder.name) == ("text_encoder.onnx", "fm_decoder.onnx")
    assert (int8.encoder.name, int8.decoder.name) == ("text_encoder_int8.onnx", "fm_decoder_int8.onnx")
    assert fp32.vocoder.name == "vocos_24khz.onnx" and fp32.tokens.name == "tokens.txt"
    assert fp32.config["feature"]["type"] == "vocos"


def test_a_model_dir_named_relatively_is_known_by_its_folder_name(tiny_model_dir, monkeypatch):
    """`--model-dir .` run inside the folder: its name gave the model id `/fm_decoder.onnx` (in /health
    and as the first id of /v1/models) and a Distill model, known by the folder name, ran with the
    full model's 16 steps and guidance 1.0."""
    monkeypatch.chdir(tiny_model_dir)
    for spelling in (".", "./", f"../{tiny_model_dir.name}"):
        files = locate(spelling, "fp32")
        assert files.model_id() == f"{tiny_model_dir.name}/fm_decoder.onnx", spelling
        assert is_distill(files, {}), spelling  # "tiny-distill": its name says so, nothing else does
    assert "distill" not in str(locate(".", "fp32").config).lower()


def test_a_model_dir_reached_through_a_link_is_distill_by_the_folder_it_names(tiny_model_dir, tmp_path):
    """`--model-dir ~/models/current`, a link to the version in use (`current -> tiny-distill`): only
    the link's name was read, and a Distill model ran with the full model's 16 steps and guidance 1.0."""
    current = tmp_path / "current"
    current.symlink_to(tiny_model_dir, target_is_directory=True)
    files = locate(str(current), "fp32")
    assert files.model_id() == "current/fm_decoder.onnx"  # (the id keeps the name the operator gave)
    assert is_distill(files, {})


def test_a_fifo_named_manifest_json_in_a_plain_model_folder_is_not_waited_on(broken_dir):
    """Distill is looked for in the manifest of the folder a prepared model came from, read in every
    model folder: a FIFO of that name (no writer) held the load for ever."""
    os.mkfifo(broken_dir / "manifest.json")
    files = locate(str(broken_dir), "fp32")
    looked = threading.Thread(target=is_distill, args=(files, {}), daemon=True)
    looked.start()
    looked.join(timeout=20)
    if looked.is_alive():  # give the blocked read its end of file, so no thread stays behind
        os.close(os.open(broken_dir / "manifest.json", os.O_WRONLY | os.O_NONBLOCK))
    assert not looked.is_alive()


def test_sherpa_layout_int8_loads_and_speaks(sherpa_dir, tmp_path):
    files = locate(str(sherpa_dir), "int8")
    assert (files.encoder.name, files.decoder.name) == ("encoder.int8.onnx", "decoder.int8.onnx")
    engine = create(engine_config(sherpa_dir, tmp_path, precision="int8"))
    engine.load()
    try:
        assert engine.info.precision == "int8"
        assert sum(chunk.size for chunk in engine.stream(SynthesisRequest("안녕하세요."))) > 0
    finally:
        engine.close()


def test_vocoder_is_found_beside_the_model_dir_or_given_explicitly(broken_dir, tmp_path):
    shutil.move(broken_dir / "vocos_24khz.onnx", tmp_path / "vocos_24khz.onnx")
    assert locate(str(broken_dir), "fp32").vocoder == tmp_path / "vocos_24khz.onnx"
    elsewhere = tmp_path / "voc" / "my_vocos.onnx"
    elsewhere.parent.mkdir()
    shutil.move(tmp_path / "vocos_24khz.onnx", elsewhere)
    assert locate(str(broken_dir), "fp32", str(elsewhere)).vocoder == elsewhere
    with pytest.raises(ModelLoadError, match="vocos_24khz.onnx"):
        locate(str(broken_dir), "fp32")


def test_the_files_chosen_are_named_in_the_log_with_a_vocoder_from_elsewhere_in_full(
    broken_dir, tmp_path, caplog
):
    """A folder may hold both layouts and both precisions, and the vocoder may come from beside it:
    the start-up log named none of them (/health's placement: file stems only)."""
    shutil.move(broken_dir / "vocos_24khz.onnx", tmp_path / "vocos_24khz.onnx")
    with caplog.at_level("INFO", logger="npu_worker.engine.zipvoice.model_files"):
        locate(str(broken_dir), "int8")
    assert caplog.messages == [
        f"model files (int8) in {broken_dir}: text_encoder_int8.onnx, fm_decoder_int8.onnx, tokens.txt; "
        f"vocoder {tmp_path / 'vocos_24khz.onnx'}"
    ]


@pytest.mark.parametrize(
    ("missing", "precision", "message"),
    [
        ("fm_decoder.onnx", "fp32", "flow-matching decoder \\(fp32\\) not found .* fm_decoder.onnx"),
        ("text_encoder_int8.onnx", "int8", "text encoder \\(int8\\) not found .* text_encoder_int8.onnx"),
        ("tokens.txt", "fp32", "tokens.txt does not exist"),
    ],
)
def test_a_missing_file_is_a_model_load_error_naming_it(broken_dir, missing, precision, message):
    (broken_dir / missing).unlink()
    with pytest.raises(ModelLoadError, match=message):
        locate(str(broken_dir), precision)


def test_a_missing_model_dir_is_a_model_load_error(tmp_path):
    with pytest.raises(ModelLoadError, match="does not exist"):
        locate(str(tmp_path / "nope"), "fp32")
    with pytest.raises(ModelLoadError, match="--model-dir is required"):
        locate(None, "fp32")


def test_a_tilde_with_no_home_is_a_model_load_error_naming_the_path(broken_dir, tmp_path):
    """`~nobody_here/...` (no such user) as --model-dir or --vocoder raised RuntimeError "Could not
    determine home directory." out of pathlib (the worker said that alone, naming no path), and from
    the engine's load the check for an unfinished prepare raised it again over the ModelLoadError."""
    nowhere = "~npu_worker_no_such_user/model"
    with pytest.raises(ModelLoadError, match=f"model directory .*{nowhere} does not exist"):
        locate(nowhere, "fp32")
    with pytest.raises(ModelLoadError, match="vocoder file ~npu_worker_no_such_user/v.onnx does not exist"):
        locate(str(broken_dir), "fp32", "~npu_worker_no_such_user/v.onnx")
    engine = create(engine_config(Path(nowhere), tmp_path))
    with pytest.raises(ModelLoadError, match=nowhere):
        engine.load()


def test_a_corrupt_decoder_is_a_model_load_error_naming_it(broken_dir, tmp_path):
    (broken_dir / "fm_decoder.onnx").write_bytes(b"not an onnx file")
    engine = create(engine_config(broken_dir, tmp_path))
    with pytest.raises(ModelLoadError, match="fm_decoder.onnx"):
        engine.load()


def test_a_reference_that_is_not_audio_is_refused_in_libsndfiles_words(tiny_model_dir, tmp_path):
    """As the default voice: a load error; as a request's voice: InvalidAudio (the caller's file), not an
    EngineError, and neither names the worker's in-memory buffer."""
    noise = tmp_path / "noise.wav"
    noise.write_bytes(b"this is not audio at all" * 8)
    reason = f"cannot read reference wav {noise}: Format not recognised."
    with pytest.raises(ModelLoadError) as at_load:
        create(engine_config(tiny_model_dir, tmp_path / "a", ref_wav=str(noise))).load()
    assert at_load.value.message == f"default reference voice: {reason}"
    engine = create(engine_config(tiny_model_dir, tmp_path / "b", ref_wav=None))  # no warm-up sentence
    engine.load()
    with pytest.raises(InvalidAudio) as at_request:
        list(engine.stream(SynthesisRequest("안녕하세요.", "ko", voice=Voice(str(noise), "안녕"))))
    assert at_request.value.message == reason


def test_an_unreadable_default_reference_is_a_model_load_error(tiny_model_dir, tmp_path):
    engine = create(engine_config(tiny_model_dir, tmp_path, ref_wav=str(tmp_path / "missing.wav")))
    with pytest.raises(ModelLoadError, match="cannot read reference wav .*missing.wav"):
        engine.load()


def test_a_decoder_rewritten_with_its_size_and_mtime_kept_is_another_model_to_the_cache(broken_dir):
    """The synthesis cache knew the files by size and mtime: a re-export of one architecture has the same
    size, and a copy that keeps times (`cp -p`, an image built with SOURCE_DATE_EPOCH) the same mtime, so
    the new model's worker answered `cached` with the old model's audio."""
    before = locate(str(broken_dir), "fp32").fingerprint()
    decoder = broken_dir / "fm_decoder.onnx"
    stamp = decoder.stat()
    data = bytearray(decoder.read_bytes())
    data[-1] ^= 1  # other weights, the same size
    decoder.write_bytes(bytes(data))
    os.utime(decoder, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert (decoder.stat().st_size, decoder.stat().st_mtime_ns) == (stamp.st_size, stamp.st_mtime_ns)
    assert locate(str(broken_dir), "fp32").fingerprint() != before


def test_a_model_folder_prepared_from_or_chmodded_is_the_same_model_to_the_cache(broken_dir, tmp_path):
    """The files were known by inode and ctime: `prepare` hard-links them into --out (the link count is in
    the inode: its ctime moves), a deploy's `chmod`/`chown -R` moves it too, and a copy or a FUSE/network
    mount gives other inodes, so the same weights missed every cached answer after each of these."""
    before = locate(str(broken_dir), "fp32").fingerprint()
    prepared = tmp_path / "prepared"
    prepared.mkdir()
    for name in ("fm_decoder.onnx", "text_encoder.onnx", "vocos_24khz.onnx", "tokens.txt"):
        os.link(broken_dir / name, prepared / name)  # what prepare does with a file it may link
    os.chmod(broken_dir / "fm_decoder.onnx", 0o640)
    assert locate(str(broken_dir), "fp32").fingerprint() == before


def _locate_said(model_dir: Path) -> str:
    """`locate`'s error in its own words, or "no error"."""
    try:
        locate(str(model_dir), "fp32")
    except ModelLoadError as exc:
        return exc.message
    return "no error"


def _locate_as_another_user(model_dir: Path) -> str:
    """`locate`'s error where the worker's user may not read the decoder: as root, in a child that
    became `nobody` (root reads any file); as anyone else, with the file made unreadable to its owner."""
    if os.geteuid() != 0:
        (model_dir / "fm_decoder.onnx").chmod(0)
        return _locate_said(model_dir)
    return as_nobody(lambda: _locate_said(model_dir))


def test_a_model_file_the_workers_user_cannot_read_is_named_with_the_fix(tiny_model_dir):
    """`prepare` keeps a copy's permission bits at most its source's: a 0600 model file of the download
    user, prepared as root, comes out 0600 root's, and `serve` as the service user said only
    `cannot load …/fm_decoder.onnx: [Errno 13] Permission denied` (with no fix) once the sessions opened."""
    folder = Path(tempfile.mkdtemp(prefix="npu-unreadable-"))
    try:
        model = folder / "model"
        shutil.copytree(tiny_model_dir, model)
        for path in (folder, model):
            path.chmod(0o755)
        for path in model.iterdir():
            path.chmod(0o644)
        (model / "fm_decoder.onnx").chmod(0o600)
        said = _locate_as_another_user(model)
    finally:
        shutil.rmtree(folder)
    assert f"cannot read {model / 'fm_decoder.onnx'}" in said, said
    assert "chmod" in said and "prepare" in said, said
