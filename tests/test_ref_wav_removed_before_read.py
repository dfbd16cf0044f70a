"""A caller's reference wav removed after the section's check and before the engine reads it is the
caller's `RefWavNotAllowed` (400), as the same file removed before admission is: the read's
FileNotFoundError was `EngineError: cannot read reference wav ...` (a 500 on /v1/audio/speech)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from npu_worker.engine.base import Voice
from npu_worker.engine.zipvoice.prompt import load_reference
from npu_worker.paths import PathPolicy
from npu_worker.protocol import EngineError, RefWavNotAllowed
from tests.openai_support import tone_wav
from tests.test_openai_bad_input import assert_openai_error
from tests.tone_engine import ToneEngine


def test_a_callers_wav_removed_after_its_check_is_their_400(tmp_path: Path):
    root = tmp_path / "root"
    root.mkdir()
    wav = root / "ref.wav"
    tone_wav(wav)
    policy = PathPolicy((str(root),), str(tmp_path / "state"))
    policy.check_ref_wav(str(wav))
    wav.unlink()
    with pytest.raises(RefWavNotAllowed, match="does not exist or is not a file") as refused:
        load_reference(str(wav), 24000, policy.read_reference)
    assert refused.value.http_status == 400


def test_the_operators_own_voice_gone_stays_the_workers_error(tmp_path: Path):
    with pytest.raises(EngineError, match="cannot read reference wav"):
        load_reference(str(tmp_path / "gone.wav"), 24000)


class ReferenceReadingEngine(ToneEngine):
    """A tone engine that reads each request's reference wav first, as ZipVoice does (`load_reference`,
    through the voice's reader), after the caller removed it (the section's check was before)."""

    def stream(self, request):  # noqa: ANN001, ANN201 - ToneEngine's
        voice: Voice = request.voice
        os.unlink(voice.ref_wav)
        load_reference(voice.ref_wav, 24000, voice.read)
        yield from super().stream(request)


async def test_the_openai_route_answers_400_naming_ref_audio(worker, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    tone_wav(root / "ref.wav")
    (root / "ref.txt").write_text("hello")
    client = await worker(ReferenceReadingEngine(), output_roots=(str(root),))
    body = {"model": "tts-1", "input": "hello", "ref_audio": str(root / "ref.wav")}
    response = await client.post("/v1/audio/speech", json=body)
    answer = await response.json()
    assert response.status == 400, answer
    assert_openai_error(answer, "RefWavNotAllowed", "ref_audio")
    assert f"{root / 'ref.wav'} does not exist or is not a file" in answer["error"]["message"], answer


@pytest.mark.parametrize("kind", ["voices_dir", "ref_wav", "voice_store"])
def test_an_operators_or_stored_voice_gone_stays_the_workers_error(tmp_path: Path, kind: str):
    """A stored voice (--voices-dir, --ref-wav named by a caller, the worker's own store) is read
    through the same reader as a caller's file: its absence was said as the caller's 400 naming the
    operator's path (`RefWavNotAllowed: /srv/voices/narrator.wav does not exist`), where the caller
    named a voice that exists; it is the worker's 500, as for the default voice."""
    state = tmp_path / "state"
    folder = {"voices_dir": tmp_path / "voices", "ref_wav": tmp_path / "own", "voice_store": state / "voices"}
    folder[kind].mkdir(parents=True)
    wav = folder[kind] / "narrator.wav"
    tone_wav(wav)
    policy = PathPolicy(
        (str(tmp_path / "root"),),
        str(state),
        voice_dirs=(str(folder["voices_dir"]),) if kind == "voices_dir" else (),
        voice_files=(str(wav),) if kind == "ref_wav" else (),
    )
    wav.unlink()
    with pytest.raises(EngineError, match="cannot read reference wav") as failed:
        load_reference(str(wav), 24000, policy.read_reference)
    assert failed.value.http_status == 500
