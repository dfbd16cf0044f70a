"""A caller's transcript sidecar (`ref.txt` beside their `ref_wav`, read only as the section runs) that
the worker may not read the way it reads a caller's file is refused by name, `RefWavNotAllowed`, as a
hard-linked one already was and as the same wav is at admission: a FIFO, a folder or a link there was
`EngineError: reference ... has no transcript: put it in ref.txt beside the wav`, a 500 on
/v1/audio/speech, of a transcript that was there. A missing one stays `BadRequest` (no transcript)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from npu_worker.engine.base import Voice
from npu_worker.engine.zipvoice.prompt import transcript_for
from npu_worker.paths import PathPolicy
from npu_worker.protocol import BadRequest, RefWavNotAllowed


@pytest.fixture
def voice(tmp_path: Path) -> Voice:
    root = tmp_path / "root"
    root.mkdir()
    (root / "ref.wav").write_bytes(b"RIFF" + bytes(40))
    policy = PathPolicy((str(root),), str(tmp_path / "state"))
    policy.check_ref_wav(str(root / "ref.wav"))
    return Voice(str(root / "ref.wav"), read=policy.read_reference)


def test_a_fifo_transcript_is_refused_by_name_at_once(voice):
    os.mkfifo(Path(voice.ref_wav).with_suffix(".txt"))  # never waited on: no writer comes
    with pytest.raises(RefWavNotAllowed, match=r"ref\.txt: not a regular file") as refused:
        transcript_for(voice)
    assert refused.value.http_status == 400


def test_a_folder_in_the_transcripts_place_is_refused_by_name(voice):
    Path(voice.ref_wav).with_suffix(".txt").mkdir()
    with pytest.raises(RefWavNotAllowed, match=r"ref\.txt: Is a directory"):
        transcript_for(voice)


def test_a_transcript_linked_to_another_file_is_refused_by_name(voice, tmp_path):
    (tmp_path / "elsewhere.txt").write_text("a transcript outside every root")
    Path(voice.ref_wav).with_suffix(".txt").symlink_to(tmp_path / "elsewhere.txt")
    with pytest.raises(RefWavNotAllowed, match=r"ref\.txt: ref\.txt is a symbolic link"):
        transcript_for(voice)


def test_a_missing_transcript_is_still_the_callers_omission(voice):
    with pytest.raises(BadRequest, match="has no transcript: put it in ref.txt") as refused:
        transcript_for(voice)
    assert refused.value.param == "ref_text"
