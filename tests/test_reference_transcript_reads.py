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
from tests.test_openai_bad_input import assert_openai_error
from tests.tone_engine import ToneEngine


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


class TranscriptReadingEngine(ToneEngine):
    """A tone engine that reads each request's transcript first, as ZipVoice does (`transcript_for`,
    through the voice's reader: the worker's `PathPolicy.read_reference`)."""

    def stream(self, request):  # noqa: ANN001, ANN201 - ToneEngine's
        transcript_for(request.voice)
        yield from super().stream(request)


async def test_the_openai_route_names_ref_audio_for_a_transcript_it_may_not_read(worker, tmp_path):
    """Found as the section runs: a 400 naming the field that gave the reference (`param` was null)."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "ref.wav").write_bytes(b"RIFF" + bytes(40))
    os.mkfifo(root / "ref.txt")
    client = await worker(TranscriptReadingEngine(), output_roots=(str(root),))
    body = {"model": "tts-1", "input": "hello", "ref_audio": str(root / "ref.wav")}
    response = await client.post("/v1/audio/speech", json=body)
    assert response.status == 400
    answer = await response.json()
    assert_openai_error(answer, "RefWavNotAllowed", "ref_audio")
    assert f"{root / 'ref.txt'}: not a regular file" in answer["error"]["message"], answer
