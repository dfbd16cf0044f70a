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


async def test_a_default_output_is_written_when_the_state_dir_lies_in_the_operators_folder(worker, tmp_path):
    """`--model-dir . --state-dir ./state` (or a state dir inside a --voices-dir): a section without
    output_path goes to the worker's own `<state>/outputs/`, never an operator's file; it was refused as
    "one of the worker's model files", so every such section failed."""
    folder = tmp_path / "operator"
    folder.mkdir()
    for overrides in ({"model_dir": str(folder)}, {"voices_dir": (str(folder),)}):
        client = await worker(
            state_dir=str(folder / f"state-{len(overrides)}-{next(iter(overrides))}"), **overrides
        )
        body = {"sections": [{"idx": 0, "text": "강의."}]}
        async with client.post("/synth_batch", json=body) as response:
            answer = await response.text()
            assert response.status == 200 and '"ok_count": 1' in answer, answer
        await client.close()


@pytest.mark.parametrize("setting", ["model_dir", "voices_dir"])
async def test_a_root_that_is_the_operators_folder_still_keeps_its_files(worker, tmp_path, setting):
    """`--model-dir /data --output-roots /data`: the root is the operator's folder itself, so its files
    (and a new file beside them, which the next start would load or list as a voice) stay the
    operator's; only its subfolders are the callers'. Every model file and voice there was replaced."""
    folder = tmp_path / "operator"
    (folder / "out").mkdir(parents=True)
    own = folder / ("fm_decoder.onnx" if setting == "model_dir" else "teacher.wav")
    own.write_bytes(b"the operator's file")
    named = str(folder) if setting == "model_dir" else (str(folder),)
    client = await worker(**{setting: named}, output_roots=(str(folder),))
    for target in (own, folder / "new.wav"):
        body = {"sections": [{"idx": 0, "text": "덮어쓰기.", "output_path": str(target)}]}
        async with client.post("/synth_batch", json=body) as response:
            answer = await response.text()
            assert response.status == 400 and "OutputPathNotAllowed" in answer, answer
    assert own.read_bytes() == b"the operator's file" and not (folder / "new.wav").exists()
    body = {"sections": [{"idx": 0, "text": "강의.", "output_path": str(folder / "out" / "a.wav")}]}
    async with client.post("/synth_batch", json=body) as response:
        answer = await response.text()
        assert response.status == 200 and '"ok_count": 1' in answer, answer


async def test_the_vocoder_found_beside_the_model_dir_is_refused(worker, tmp_path):
    """No --vocoder: the engine loads vocos_24khz.onnx (or vocos.onnx) from the model dir's parent when
    no one else can write there (the sherpa-onnx layout). An output root holding that parent let a batch
    replace it, and the next start could not load."""
    parent = tmp_path / "models"
    (parent / "zipvoice").mkdir(parents=True)
    parent.chmod(0o755)
    client = await worker(model_dir=str(parent / "zipvoice"))
    for name in ("vocos_24khz.onnx", "vocos.onnx"):
        (parent / name).write_bytes(b"the operator's vocoder")
        body = {"sections": [{"idx": 0, "text": "덮어쓰기.", "output_path": str(parent / name)}]}
        async with client.post("/synth_batch", json=body) as response:
            answer = await response.text()
            assert response.status == 400 and "model files" in answer, answer
        assert (parent / name).read_bytes() == b"the operator's vocoder"


async def test_the_file_a_voices_dir_link_points_at_is_refused(worker, tmp_path):
    """A --voices-dir voice that is a link (`teacher.wav -> ../recordings/take3.wav`) is spoken from the
    file it points at (voices.py resolves it): under a root that file, and the transcript beside it,
    were a caller's to replace, and every caller's `voice: teacher` then spoke the caller's audio."""
    voices, recordings = tmp_path / "voices", tmp_path / "recordings"
    voices.mkdir()
    recordings.mkdir()
    take = recordings / "take3.wav"
    take.write_bytes(b"RIFF the operator's voice")
    take.with_suffix(".txt").write_text("선생님", encoding="utf-8")
    (voices / "teacher.wav").symlink_to(take)
    client = await worker(voices_dir=(str(voices),))
    for target in (take, take.with_suffix(".txt")):
        before = target.read_bytes()
        body = {"sections": [{"idx": 0, "text": "덮어쓰기.", "output_path": str(target)}]}
        async with client.post("/synth_batch", json=body) as response:
            answer = await response.text()
            assert response.status == 400 and "voices" in answer, answer
        assert target.read_bytes() == before
    body = {"sections": [{"idx": 0, "text": "강의.", "output_path": str(recordings / "take4.wav")}]}
    async with client.post("/synth_batch", json=body) as response:  # a file no link names is the caller's
        answer = await response.text()
        assert response.status == 200 and '"ok_count": 1' in answer, answer
