"""A caller's `output_path` never replaces the operator's voices (`--ref-wav`, its transcript beside
it, a file in a `--voices-dir`) or model files (`--model-dir`, `--vocoder`) when an output root holds
them (`--ref-wav /tmp/voice.wav` with the default root, the temp dir). Every caller speaks with those
files; one batch overwrote them."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_worker.paths import PathPolicy
from npu_worker.protocol import OutputPathNotAllowed


def operator_voices(root: Path) -> tuple[Path, Path, Path]:
    """The default voice and its transcript, and a named voice in a voices dir, under `root`."""
    voices = root / "voices"
    voices.mkdir()
    reference, named = root / "voice.wav", voices / "teacher.wav"
    for wav in (reference, named):
        wav.write_bytes(b"RIFF the operator's voice")
    reference.with_suffix(".txt").write_text("기준 음성", encoding="utf-8")
    named.with_suffix(".txt").write_text("선생님", encoding="utf-8")
    return reference, reference.with_suffix(".txt"), named


async def test_a_batch_naming_the_operators_voice_files_is_refused_and_they_stay(worker, tmp_path):
    reference, transcript, named = operator_voices(tmp_path)
    client = await worker(ref_wav=str(reference), voices_dir=(str(named.parent),))
    for target in (reference, transcript, named, named.with_suffix(".txt")):
        before = target.read_bytes()
        body = {"sections": [{"idx": 0, "text": "덮어쓰기.", "output_path": str(target)}]}
        async with client.post("/synth_batch", json=body) as response:
            answer = await response.text()
            assert response.status == 400, answer
        assert "OutputPathNotAllowed" in answer and "voice" in answer
        assert target.read_bytes() == before
    for beside in (tmp_path / "lecture.wav", tmp_path / "voice.mp3.wav", tmp_path / "voice.ogg"):
        # any other file of the root is still a caller's to write, one named like the voice too
        body = {"sections": [{"idx": 0, "text": "강의.", "output_path": str(beside)}]}
        async with client.post("/synth_batch", json=body) as response:
            answer = await response.text()  # the NDJSON stream, to its `done`
            assert response.status == 200 and '"ok_count": 1' in answer, answer
        assert beside.read_bytes()[:4] == b"RIFF"


def test_a_resumed_sections_write_onto_a_voice_is_refused_at_write_time(tmp_path):
    """A job admitted before the operator named the folder a voices dir (then restarted) resumes:
    its write is checked again, not only its admission."""
    reference, transcript, named = operator_voices(tmp_path)
    state = tmp_path / "state"
    policy = PathPolicy((str(tmp_path),), str(state), (str(named.parent),), (str(reference),))
    for target in (reference, transcript, named):
        with pytest.raises(OutputPathNotAllowed, match="voice"):
            policy.write_output(str(target), b"RIFF a caller's audio")
        assert b"operator" in target.read_bytes() or target.suffix == ".txt"


async def test_a_batch_naming_the_operators_model_files_is_refused_and_they_stay(worker, tmp_path):
    models, vocoder = tmp_path / "zipvoice", tmp_path / "vocos_24khz.onnx"
    models.mkdir()
    (models / "fm_decoder.onnx").write_bytes(b"the operator's model")
    vocoder.write_bytes(b"the operator's vocoder")
    client = await worker(model_dir=str(models), vocoder=str(vocoder))
    for target in (models / "fm_decoder.onnx", models / "new.onnx", vocoder):
        body = {"sections": [{"idx": 0, "text": "덮어쓰기.", "output_path": str(target)}]}
        async with client.post("/synth_batch", json=body) as response:
            answer = await response.text()
            assert response.status == 400 and "model files" in answer, answer
    assert (models / "fm_decoder.onnx").read_bytes() == b"the operator's model"
    assert vocoder.read_bytes() == b"the operator's vocoder" and not (models / "new.onnx").exists()


@pytest.mark.parametrize("setting", ["model_dir", "voices_dir"])
async def test_an_output_root_inside_the_operators_folder_is_still_written(worker, tmp_path, setting):
    """The operator named a folder inside the model or voices folder a root: only their own files are
    refused, not every output_path there."""
    folder = tmp_path / "operator"
    (folder / "out").mkdir(parents=True)
    named = str(folder) if setting == "model_dir" else (str(folder),)
    client = await worker(**{setting: named}, output_roots=(str(folder / "out"),))
    body = {"sections": [{"idx": 0, "text": "강의.", "output_path": str(folder / "out" / "a.wav")}]}
    async with client.post("/synth_batch", json=body) as response:
        answer = await response.text()
        assert response.status == 200 and '"ok_count": 1' in answer, answer
    assert (folder / "out" / "a.wav").read_bytes()[:4] == b"RIFF"
