"""Vocoder + ISTFT on the tiny model's real vocos_24khz.onnx: lengths and piecewise decoding."""

from pathlib import Path

import numpy as np
import pytest

from npu_worker.engine.providers import RuntimeConfig, open_session
from npu_worker.engine.zipvoice.engine import create
from npu_worker.engine.zipvoice.features import SpectrumConfig, log_mel
from npu_worker.engine.zipvoice.vocoder import Vocoder
from npu_worker.protocol import ModelLoadError
from tests.zipvoice.conftest import engine_config


@pytest.fixture(scope="module")
def vocoder(tiny_model_dir: Path) -> Vocoder:
    return Vocoder(
        open_session(tiny_model_dir / "vocos_24khz.onnx", "cpu", RuntimeConfig(threads=1)), SpectrumConfig()
    )


def mel_of_noise(frames: int) -> np.ndarray:
    samples = np.random.default_rng(1).standard_normal(256 * frames).astype(np.float32) * 0.1
    return log_mel(samples)[:frames]


@pytest.mark.parametrize("frames", [2, 17, 300])
def test_vocoder_output_has_frames_minus_one_hops(vocoder, frames):
    audio = vocoder.decode(mel_of_noise(frames))
    assert audio.shape == ((frames - 1) * 256,)
    assert audio.dtype == np.float32 and np.abs(audio).max() <= 1.0


@pytest.mark.parametrize("piece_frames", [50, 64, 100])
def test_decoding_in_pieces_equals_decoding_whole(vocoder, piece_frames):
    mel = mel_of_noise(400)
    whole = vocoder.decode(mel)
    pieces = list(vocoder.decode_pieces(mel, piece_frames))
    assert len(pieces) > 1
    joined = np.concatenate(pieces)
    assert joined.size == whole.size
    assert np.abs(joined - whole).max() < 1e-4


def test_one_frame_gives_no_audio(vocoder):
    assert vocoder.decode(mel_of_noise(1)).size == 0
    assert list(vocoder.decode_pieces(mel_of_noise(1), 10)) == []


def test_a_vocoder_that_is_another_model_is_refused_at_load_naming_the_file(tiny_model_dir, tmp_path):
    """`--vocoder fm_decoder.onnx` (any ONNX file) loaded, /health said ready, and every synthesis then
    failed: "vocoder failed on ...: Required inputs (['x', 'text_condition', ...]) are missing"."""
    decoder = tiny_model_dir / "fm_decoder.onnx"
    config = engine_config(tiny_model_dir, tmp_path, vocoder=str(decoder))
    with pytest.raises(ModelLoadError, match=f"{decoder} is no Vocos vocoder: it takes t, x, text_condition"):
        create(config).load()


def vocoder_of_mels(path: Path, mels: int) -> Path:
    """A graph with a vocoder's signature (`mels` [N, mels, F] in; mag, x, y out) for another mel count."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["mels"], [name]) for name in ("mag", "x", "y")],
        "vocos",
        [helper.make_tensor_value_info("mels", TensorProto.FLOAT, ["N", mels, "F"])],
        [
            helper.make_tensor_value_info(name, TensorProto.FLOAT, ["N", mels, "F"])
            for name in ("mag", "x", "y")
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_a_vocoder_of_another_mel_count_is_refused_at_load_naming_both_counts(tiny_model_dir, tmp_path):
    """Another model's vocoder (80 mel bins against the decoder's 100) loaded, and every synthesis then
    failed in onnxruntime's words: "Got invalid dimensions for input: mels ... Expected: 80"."""
    other = vocoder_of_mels(tmp_path / "vocos_80.onnx", 80)
    config = engine_config(tiny_model_dir, tmp_path / "state", vocoder=str(other))
    with pytest.raises(ModelLoadError) as refused:
        create(config).load()
    assert str(refused.value) == (
        f"ModelLoadError: {other} takes 80 mel bins, the decoder makes 100: it is another model's vocoder; "
        "use the one this model was exported for (vocos_24khz.onnx of the sherpa-onnx release), check --vocoder"
    )


def test_prepare_refuses_a_vocoder_of_another_mel_count_before_it_compiles(tiny_model_dir, tmp_path, capsys):
    """Prepared (minutes of compiling), then refused by `serve`."""
    from npu_worker import cli

    other = vocoder_of_mels(tmp_path / "vocos_80.onnx", 80)
    command = ["prepare", "--buckets", "63", "--model-dir", str(tiny_model_dir), "--vocoder", str(other)]
    assert cli.main([*command, "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"npu-worker prepare: ModelLoadError: {other} takes 80 mel bins, the decoder makes 100: it is another "
        "model's vocoder; use the one this model was exported for (vocos_24khz.onnx of the sherpa-onnx "
        "release), check --vocoder"
    )
    assert not (tmp_path / "out").exists()


def test_the_decoders_declared_inputs_are_read_from_its_graph_without_a_session(
    tiny_model_dir, tmp_path, monkeypatch
):
    """prepare's mel check and the bucket dimensions (prepare, a QNN serve) each opened an onnxruntime
    session on the whole decoder to read its inputs (1.4-1.7 s and 51 MB for the mel check on the
    small-structure decoder); the sessions opened are watched, not replaced."""
    import onnxruntime

    from npu_worker.engine.zipvoice import runtime, vocoder

    opened: list[str] = []
    real = onnxruntime.InferenceSession

    def watched(path, *args, **kwargs):
        opened.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", watched)
    decoder = tiny_model_dir / "fm_decoder.onnx"
    other = vocoder_of_mels(tmp_path / "vocos_80.onnx", 80)
    with pytest.raises(ModelLoadError, match="takes 80 mel bins, the decoder makes 100"):
        vocoder.check_file(other, decoder)
    vocoder.check_file(tiny_model_dir / "vocos_24khz.onnx", decoder)
    assert runtime.bucket_dims(decoder, (63,)) == {63: {"T": 63, "N": 1}}
    assert opened == [str(other), str(tiny_model_dir / "vocos_24khz.onnx")]
