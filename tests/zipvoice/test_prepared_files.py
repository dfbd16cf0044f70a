"""What `prepare`, `make-test-model` and `serve` trust in a model folder: nothing another local user
could put there (a planted link, a vocoder beside the model in /tmp, a manifest naming paths elsewhere)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from npu_worker.engine.zipvoice import model_files, prepare, prepared
from npu_worker.protocol import ModelLoadError

SMALL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "zipvoice_small_structure"


def open_to_all(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o1777)  # sticky, as /tmp: others may still add files
    return folder


def test_prepare_refuses_an_out_folder_others_can_write_in_or_holding_other_files(tmp_path):
    with pytest.raises(ModelLoadError, match="others can write in"):
        prepare.check_out_dir(open_to_all(tmp_path / "open"))
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    with pytest.raises(ModelLoadError, match="holds other files"):
        prepare.check_out_dir(home)
    earlier = tmp_path / "earlier"
    (earlier / prepared.CONTEXT_DIR).mkdir(parents=True)  # a half-prepared folder: prepared again
    for fine in (tmp_path / "new", earlier):
        prepare.check_out_dir(fine)


def test_the_prepare_command_touches_nothing_in_a_refused_out_folder(tmp_path):
    out = open_to_all(tmp_path / "out")
    (out / "manifest.json").write_text("{}")
    done = subprocess.run(
        [sys.executable, "-m", "npu_worker.cli", "prepare", "--model-dir", str(SMALL), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "others can write in" in done.stderr, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json"]


def test_a_prepare_refused_for_its_buckets_keeps_the_earlier_prepared_folder(tmp_path):
    """An even bucket is refused, but only after the earlier prepare's manifest and compiled contexts
    (minutes to hours of compiling) had been deleted: a typo cost the whole folder."""
    out = tmp_path / "out"
    (out / prepared.CONTEXT_DIR).mkdir(parents=True)
    (out / prepared.CONTEXT_DIR / "fm_decoder@383_ctx.onnx").write_bytes(b"compiled")
    (out / "manifest.json").write_text("{}")
    done = subprocess.run(
        [sys.executable, "-m", "npu_worker.cli", "prepare", "--model-dir", str(SMALL), "--out", str(out)]
        + ["--buckets", "383", "768"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "odd positive frame counts" in done.stderr, done.stderr
    assert (out / "manifest.json").read_text() == "{}"
    assert (out / prepared.CONTEXT_DIR / "fm_decoder@383_ctx.onnx").read_bytes() == b"compiled"


def test_model_files_copied_into_the_out_folder_replace_a_link_instead_of_writing_through_it(tmp_path):
    source, out, victim = tmp_path / "model", tmp_path / "out", tmp_path / "victim"
    source.mkdir()
    out.mkdir()
    (source / "tokens.txt").write_text("a 1\n")
    vocoder = tmp_path / "vocos_24khz.onnx"  # beside the model dir: copied in too
    vocoder.write_bytes(b"vocoder")
    victim.write_text("precious")
    (out / "tokens.txt").symlink_to(victim)
    sizes = prepare._copy_model_files(source, out, extra=[vocoder])
    assert victim.read_text() == "precious"
    assert not (out / "tokens.txt").is_symlink() and (out / "tokens.txt").read_text() == "a 1\n"
    assert (out / "vocos_24khz.onnx").read_bytes() == b"vocoder" and set(sizes) == {
        "tokens.txt",
        "vocos_24khz.onnx",
    }


def test_a_vocoder_beside_the_model_is_used_only_in_a_folder_no_one_else_can_write_in(tmp_path):
    private = tmp_path / "private"
    (private / "model").mkdir(parents=True)
    (private / "vocos_24khz.onnx").write_bytes(b"v")
    assert model_files._vocoder(private / "model", None) == private / "vocos_24khz.onnx"
    shared = open_to_all(tmp_path / "shared")
    (shared / "model").mkdir()
    (shared / "vocos_24khz.onnx").write_bytes(b"planted")
    with pytest.raises(ModelLoadError, match=f"not in {shared}: others can write in"):
        model_files._vocoder(shared / "model", None)


@pytest.mark.parametrize(
    "manifest",
    [
        {"buckets": [127], "contexts": {"127": {"file": "../../etc/passwd"}}},
        {"buckets": [127], "contexts": {"127": {"file": "/etc/passwd"}}},
        {"buckets": [127], "contexts": {"127": {"file": "qnn/../../x.onnx"}}},
        {"buckets": [127], "contexts": {"127": {"file": "qnn/.."}}},
        {"buckets": [127], "contexts": {}},
        {"buckets": "127", "contexts": {"1": {"file": "qnn/x"}}},
        {"buckets": [127], "contexts": {"127": "qnn/x"}},
        [1, 2],
    ],
)
def test_a_manifest_naming_a_file_outside_its_folder_or_of_the_wrong_shape_is_refused(tmp_path, manifest):
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelLoadError, match="is not a valid manifest"):
        prepared.find(tmp_path)


def test_make_test_model_refuses_a_folder_others_can_write_in(tmp_path):
    shared = open_to_all(tmp_path / "shared")
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (shared / "model.json").symlink_to(victim)
    done = subprocess.run(
        [sys.executable, "-m", "npu_worker.cli", "make-test-model", str(shared), "--size", "tiny"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "others can write in" in done.stderr, done.stderr
    assert victim.read_text() == "precious"
