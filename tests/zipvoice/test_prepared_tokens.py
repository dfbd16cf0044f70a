"""A prepared folder's token table is part of what its compiled contexts were made for: its SHA-256 is in
the manifest, and `serve` on the NPU refuses another table as it refuses another text encoder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from npu_worker import cli
from npu_worker.engine.zipvoice import prepared
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine
from npu_worker.protocol import ModelLoadError
from tests.zipvoice.conftest import engine_config
from tests.zipvoice.test_providers import qnn

pytestmark = qnn


@pytest.fixture(scope="module")
def prepared_dir(qnn_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tokens") / "prepared"
    command = ["prepare", "--buckets", "63", "--optimization", "fast", "--model-dir", str(qnn_model_dir)]
    assert cli.main([*command, "--out", str(out)]) == 0
    return out


def swapped_ids(table: Path) -> None:
    """The same symbols, two of them with each other's id: a valid table that reads text otherwise."""
    lines = table.read_text(encoding="utf-8").splitlines()
    (first, one), (second, other) = (line.rsplit("\t", 1) for line in lines[5:7])
    lines[5:7] = [f"{first}\t{other}", f"{second}\t{one}"]
    table.unlink()
    table.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_manifest_records_the_token_tables_hash(prepared_dir: Path):
    manifest = json.loads((prepared_dir / prepared.MANIFEST).read_text())
    assert manifest["source"]["tokens.txt"] == prepared.file_hash(prepared_dir / "tokens.txt")


def test_a_prepared_folder_whose_token_table_changed_is_refused_on_the_npu(prepared_dir: Path, tmp_path):
    """tokens.txt was not hashed: a changed table (other ids for the same symbols) was served with the
    contexts compiled for the old one, every sentence spoken from other token ids, without a word."""
    changed = tmp_path / "changed"
    shutil.copytree(prepared_dir, changed)
    swapped_ids(changed / "tokens.txt")
    config = engine_config(changed, tmp_path / "state", device="qnn", allow_htp_simulator=True, ref_wav=None)
    with pytest.raises(ModelLoadError) as refused:
        ZipVoiceEngine(config).load()
    assert str(refused.value) == (
        f"ModelLoadError: {changed / 'tokens.txt'} is not the token table {changed} was prepared from (the "
        "compiled decoder was trained on its ids); put it back, or run `npu-worker prepare` again for "
        f"{changed}"
    )


def test_a_token_table_cut_short_is_said_by_its_size(prepared_dir: Path, tmp_path):
    cut = tmp_path / "cut"
    shutil.copytree(prepared_dir, cut)
    whole = (cut / "tokens.txt").read_bytes()
    (cut / "tokens.txt").unlink()
    (cut / "tokens.txt").write_bytes(whole[: len(whole) // 2].rsplit(b"\n", 1)[0] + b"\n")
    config = engine_config(cut, tmp_path / "state", device="qnn", allow_htp_simulator=True, ref_wav=None)
    with pytest.raises(ModelLoadError, match="bytes where the prepare copied") as refused:
        ZipVoiceEngine(config).load()
    assert "is not the token table" in str(refused.value)
