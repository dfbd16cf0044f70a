"""A caller's reference with other names (hard links) is refused: where the kernel's
fs.protected_hardlinks is off (many containers), any local user may link a file they cannot read, and
that lies outside every root, into a folder they can write in under one; the worker then read it for
them as a reference voice (and its transcript), as if it lay beneath the root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from npu_worker.engine.base import Voice
from npu_worker.engine.zipvoice.prompt import load_reference, transcript_for
from npu_worker.paths import PathPolicy
from npu_worker.protocol import RefWavNotAllowed
from tests.test_http_bad_input import assert_error_body


@pytest.fixture
def linked(tmp_path: Path) -> tuple[Path, Path]:
    """(the root, a name in it for a file outside every root)."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir(mode=0o700)
    secret = outside / "secret.wav"
    secret.write_bytes(b"RIFF" + bytes(40))
    os.link(secret, root / "ref.wav")
    return root, root / "ref.wav"


async def test_a_hard_linked_reference_is_refused_at_admission(worker, linked):
    root, ref = linked
    client = await worker(output_roots=(str(root),))
    body = {"text": "하나", "output_path": str(root / "a.wav"), "ref_wav": str(ref)}
    response = await client.post("/synth", json=body)
    assert response.status == 400
    answer = await response.json()
    assert_error_body(answer, "RefWavNotAllowed")
    assert f"{ref} has 2 names (hard links)" in answer["error"], answer
    assert not (root / "a.wav").exists()


def test_a_reference_hard_linked_after_admission_is_not_read(linked, tmp_path):
    root, ref = linked
    policy = PathPolicy((str(root),), str(tmp_path / "state"))
    with pytest.raises(RefWavNotAllowed, match="2 names"):
        policy.check_ref_wav(str(ref))
    with pytest.raises(RefWavNotAllowed, match="2 names"):
        policy.read_reference(str(ref), 1 << 20)
    os.unlink(tmp_path / "outside" / "secret.wav")  # one name again: the caller's own file
    assert policy.read_reference(str(ref), 1 << 20)[:4] == b"RIFF"


def test_a_hard_linked_transcript_is_refused_by_name_when_the_engine_reads_it(tmp_path):
    """The sidecar `ref.txt` is read only when the section runs: refused there as OSError, the engine
    said `EngineError: reference ... has no transcript: put it in ref.txt beside the wav`, of a
    transcript that was there; the same for a wav linked after its check."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir(mode=0o700)
    (root / "ref.wav").write_bytes(b"RIFF" + bytes(40))
    (outside / "secret.txt").write_text("the secret")
    os.link(outside / "secret.txt", root / "ref.txt")
    policy = PathPolicy((str(root),), str(tmp_path / "state"))
    voice = Voice(str(root / "ref.wav"), read=policy.read_reference)
    with pytest.raises(RefWavNotAllowed, match=r"ref\.txt: it has 2 names \(hard links\)"):
        transcript_for(voice)
    os.link(root / "ref.wav", outside / "other.wav")
    with pytest.raises(RefWavNotAllowed, match=r"ref\.wav: it has 2 names \(hard links\)"):
        load_reference(str(root / "ref.wav"), 24000, policy.read_reference)
