"""The synthetic ZipVoice model: real names, signatures and metadata; the frame-count formula with the
speed quirk; deterministic, seed-dependent sampling; audible vocoder output; int8 and sherpa layouts."""

from __future__ import annotations

import functools
import math
import os
import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from npu_worker.testing import _zipvoice_voice as voice
from npu_worker.testing import make_test_model
from npu_worker.testing import zipvoice_model as sm

STEPS_8 = [0.0, 1 / 15, 1 / 7, 3 / 13, 1 / 3, 5 / 11, 3 / 5, 7 / 9, 1.0]


@pytest.fixture(scope="module")
def model_dir(tiny_model_dir: Path) -> Path:
    return tiny_model_dir


@functools.cache
def session(path: Path, optimise: bool = True) -> ort.InferenceSession:
    """One session per file for the module: sessions keep no state between runs, and optimising the
    real-depth decoder costs more than the runs of a test (`optimise=False` where only the signature
    is read: it does not depend on optimisation)."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    if not optimise:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def signature(values) -> list[tuple[str, str, list]]:
    return [(v.name, v.type, list(v.shape)) for v in values]


def metadata(path: Path) -> dict[str, str]:
    return dict(session(path).get_modelmeta().custom_metadata_map)


def encode(model_dir: Path, prompt_frames: int, prompt_tokens: int, tokens: int, speed: float) -> np.ndarray:
    feeds = {
        "tokens": (np.arange(tokens, dtype=np.int64) % 40 + 20)[None],
        "prompt_tokens": (np.arange(prompt_tokens, dtype=np.int64) % 30 + 25)[None],
        "prompt_features_len": np.array(prompt_frames, np.int64),
        "speed": np.array(speed, np.float32),
    }
    return session(model_dir / "text_encoder.onnx").run(None, feeds)[0]


def sample(model_dir: Path, text_condition: np.ndarray, prompt: np.ndarray, seed: int, guidance: float = 3.0):
    """Euler over the 8-step grid, as the engine does."""
    decoder = session(model_dir / "fm_decoder.onnx")
    frames = text_condition.shape[1]
    x = np.random.default_rng(seed).standard_normal((1, frames, 100)).astype(np.float32)
    speech = np.zeros_like(x)
    speech[:, : len(prompt)] = prompt
    for t0, t1 in zip(STEPS_8[:-1], STEPS_8[1:], strict=True):
        feeds = {
            "t": np.array(t0, np.float32),
            "x": x,
            "text_condition": text_condition,
            "speech_condition": speech,
            "guidance_scale": np.array(guidance, np.float32),
        }
        x = x + decoder.run(None, feeds)[0] * np.float32(t1 - t0)
    return x


def test_directory_holds_the_official_export_names(model_dir: Path) -> None:
    names = {p.name for p in model_dir.iterdir()}
    assert {
        "text_encoder.onnx",
        "text_encoder_int8.onnx",
        "fm_decoder.onnx",
        "fm_decoder_int8.onnx",
        "vocos_24khz.onnx",
        "tokens.txt",
        "model.json",
        "reference_ko.wav",
        "reference_ko.txt",
    } <= names


def test_text_encoder_signature_and_metadata(model_dir: Path) -> None:
    s = session(model_dir / "text_encoder.onnx")
    assert signature(s.get_inputs()) == [
        ("tokens", "tensor(int64)", ["N", "T"]),
        ("prompt_tokens", "tensor(int64)", ["N", "T"]),
        ("prompt_features_len", "tensor(int64)", []),
        ("speed", "tensor(float)", []),
    ]
    # the real export leaves the feature axis symbolic (named after its Concat)
    assert signature(s.get_outputs()) == [
        ("text_condition", "tensor(float)", ["N", "T", "Concattext_condition_dim_2"])
    ]
    meta = metadata(model_dir / "text_encoder.onnx")
    assert (meta["use_espeak"], meta["use_pinyin"], meta["version"]) == ("1", "0", "1")


def test_decoder_signature_symbolic_dims_and_metadata(model_dir: Path) -> None:
    s = session(model_dir / "fm_decoder.onnx")
    frames = ["N", "T", 100]
    assert signature(s.get_inputs()) == [
        ("t", "tensor(float)", []),
        ("x", "tensor(float)", frames),
        ("text_condition", "tensor(float)", frames),
        ("speech_condition", "tensor(float)", frames),
        ("guidance_scale", "tensor(float)", []),
    ]
    assert signature(s.get_outputs()) == [("v", "tensor(float)", frames)]
    meta = metadata(model_dir / "fm_decoder.onnx")
    expected = {"feat_dim": "100", "sample_rate": "24000", "n_fft": "1024", "hop_length": "256"}
    expected |= {"window_length": "1024", "num_mels": "100"}
    assert {k: meta[k] for k in expected} == expected


def test_vocoder_signature_and_metadata(model_dir: Path) -> None:
    s = session(model_dir / "vocos_24khz.onnx")
    assert signature(s.get_inputs()) == [("mels", "tensor(float)", ["N", 100, "F"])]
    bins = {"mag": "Clipmag_dim_1", "x": "Cosx_dim_1", "y": "Cosx_dim_1"}  # 513, symbolic as exported
    assert signature(s.get_outputs()) == [(n, "tensor(float)", ["N", b, "F"]) for n, b in bins.items()]
    meta = metadata(model_dir / "vocos_24khz.onnx")
    assert meta["model_type"] == "vocos"
    assert (meta["n_fft"], meta["hop_length"], meta["win_length"]) == ("1024", "256", "1024")
    assert (meta["center"], meta["normalized"], meta["window_type"]) == ("1", "0", "hann")


@pytest.mark.parametrize(
    ("prompt_frames", "prompt_tokens", "tokens", "speed", "frames"),
    [
        (281, 30, 100, 1.0, 1218),  # ceil(281/30·130)
        (281, 30, 100, 1.5, 812),  # naive ONNX speed: 531 generated frames
        (281, 30, 10, 2.0, 188),  # naive: 188 − 281 = −93 generated frames
        (10, 2, 4, 1.0, 30),  # the exporter's trace example
    ],
)
def test_frame_count_is_the_exports_formula(
    prompt_frames, prompt_tokens, tokens, speed, frames, model_dir
) -> None:
    assert encode(model_dir, prompt_frames, prompt_tokens, tokens, speed).shape == (1, frames, 100)


@pytest.mark.parametrize(("tokens", "speed", "generated"), [(100, 1.5, 625), (10, 2.0, 47)])
def test_speed_fix_reproduces_the_pytorch_lengths(
    tokens: int, speed: float, generated: int, model_dir
) -> None:
    prompt_frames, prompt_tokens = 281, 30
    extra = prompt_frames * tokens / prompt_tokens
    fixed = (prompt_frames + extra) / (prompt_frames + extra / speed)
    frames = encode(model_dir, prompt_frames, prompt_tokens, tokens, fixed).shape[1]
    assert frames - prompt_frames == generated


def test_text_condition_repeats_each_token_then_fills_with_the_pad_position(model_dir: Path) -> None:
    condition = encode(model_dir, 47, 5, 7, 1.0)[0]  # F = ceil(47/5·12) = 113, 9 frames per token
    assert condition.shape[0] == 113
    per_token = condition[:108].reshape(12, 9, 100)
    assert np.array_equal(per_token, np.repeat(per_token[:, :1], 9, axis=1))
    assert np.array_equal(condition[108:], np.repeat(condition[108:109], 5, axis=0))
    assert not np.allclose(condition[107], condition[108])


def test_scalars_may_be_fed_with_shape_one(model_dir: Path) -> None:
    feeds = {
        "tokens": np.array([[20, 21, 22]], np.int64),
        "prompt_tokens": np.array([[23, 24]], np.int64),
        "prompt_features_len": np.array([40], np.int64),
        "speed": np.array([1.0], np.float32),
    }
    shaped = session(model_dir / "text_encoder.onnx").run(None, feeds)[0]
    assert np.array_equal(shaped, encode_with(model_dir, feeds))


def encode_with(model_dir: Path, feeds: dict) -> np.ndarray:
    scalars = {k: (v.reshape(()) if k in ("prompt_features_len", "speed") else v) for k, v in feeds.items()}
    return session(model_dir / "text_encoder.onnx").run(None, scalars)[0]


def test_sampling_is_deterministic_and_converges_to_the_text(model_dir: Path) -> None:
    condition = encode(model_dir, 60, 6, 12, 1.0)
    prompt = voice.log_mel(voice.reference_speech())[:60]
    first, again = sample(model_dir, condition, prompt, seed=1), sample(model_dir, condition, prompt, seed=1)
    assert np.array_equal(first, again)
    generated = first[0, 60:]
    assert np.abs(generated - condition[0, 60:]).mean() < 0.15
    assert np.abs(first[0, :60] - prompt).mean() < 0.15


def test_seed_and_guidance_change_the_samples_within_bounds(model_dir: Path) -> None:
    condition = encode(model_dir, 60, 6, 12, 1.0)
    prompt = voice.log_mel(voice.reference_speech())[:60]
    base = sample(model_dir, condition, prompt, seed=1)
    other_seed = np.abs(sample(model_dir, condition, prompt, seed=2) - base)
    other_guidance = np.abs(sample(model_dir, condition, prompt, seed=1, guidance=1.0) - base)
    assert 1e-3 < other_seed.mean() < 0.2
    assert 1e-3 < other_guidance.mean() < 0.2


def test_vocoder_makes_audible_sound_at_the_level_of_its_features(model_dir: Path) -> None:
    speech = voice.reference_speech()
    mel = voice.log_mel(speech) / voice.FEAT_SCALE
    mag, x, y = session(model_dir / "vocos_24khz.onnx").run(None, {"mels": mel.T[None].copy()})
    spectrum = (mag * (x + 1j * y))[0]
    frames = np.fft.irfft(spectrum, n=1024, axis=0).T
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(1024) / 1024)
    audio = np.zeros(1024 + 256 * (len(frames) - 1))
    envelope = np.zeros_like(audio)
    for index, frame in enumerate(frames):
        audio[index * 256 : index * 256 + 1024] += frame * window
        envelope[index * 256 : index * 256 + 1024] += window**2
    audio = (audio / np.maximum(envelope, 1e-8))[512:-512]
    assert len(audio) == (mel.shape[0] - 1) * 256
    ratio = np.sqrt(np.mean(audio**2)) / np.sqrt(np.mean(speech**2))
    assert 0.5 < ratio < 2.0
    assert np.abs(audio).max() < 1.0
    lead = int(0.2 * voice.SAMPLE_RATE)
    assert np.sqrt(np.mean(audio[:lead] ** 2)) < 0.1 * np.sqrt(np.mean(audio**2))


def test_int8_files_track_the_fp32_ones(model_dir: Path) -> None:
    feeds = {
        "t": np.array(0.3, np.float32),
        "x": np.random.default_rng(0).standard_normal((1, 40, 100)).astype(np.float32),
        "text_condition": encode(model_dir, 20, 4, 4, 1.0)[:, :40],
        "speech_condition": np.zeros((1, 40, 100), np.float32),
        "guidance_scale": np.array(3.0, np.float32),
    }
    fp32 = session(model_dir / "fm_decoder.onnx").run(None, feeds)[0]
    int8 = session(model_dir / "fm_decoder_int8.onnx").run(None, feeds)[0]
    assert np.abs(int8 - fp32).max() < 0.05
    assert any(
        node.op_type == "DynamicQuantizeLinear"
        for node in onnx.load(model_dir / "fm_decoder_int8.onnx").graph.node
    )


def test_tokens_have_pad_space_and_korean_espeak_symbols(model_dir: Path) -> None:
    lines = (model_dir / "tokens.txt").read_text(encoding="utf-8").splitlines()
    table = dict(line.rsplit("\t", 1) for line in lines)
    assert table["_"] == "0"
    assert " " in table
    assert set("ɐɕəɛɡɪɫɯɾʃʌʑŋˈˌː.,?!") <= set(table)
    assert sorted(int(i) for i in table.values()) == list(range(len(lines)))


def test_reference_voice_is_24khz_speech_with_edge_silence_and_a_korean_transcript(model_dir: Path) -> None:
    with wave.open(str(model_dir / "reference_ko.wav")) as wav:
        assert (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) == (24000, 1, 2)
        samples = np.frombuffer(wav.readframes(wav.getnframes()), np.int16) / 32768.0
    assert 3.6 < len(samples) / 24000 < 4.0
    edges = np.concatenate([samples[: 24000 // 10], samples[-24000 // 10 :]])
    assert 20 * math.log10(np.sqrt(np.mean(edges**2))) < -50
    assert 20 * math.log10(np.sqrt(np.mean(samples**2))) > -35
    assert (model_dir / "reference_ko.txt").read_text(encoding="utf-8").strip() == sm.REFERENCE_TEXT


def test_the_reference_voice_written_alone_is_the_built_models(model_dir: Path, tmp_path: Path) -> None:
    """An export given the test voice (tests/zipvoice/qdq_background.py) speaks with the same voice as
    the built tiny model, without building one for it."""
    sm.write_reference_voice(tmp_path)
    for name in ("reference_ko.wav", "reference_ko.txt"):
        assert (tmp_path / name).read_bytes() == (model_dir / name).read_bytes(), name


def test_fixed_shapes_and_sherpa_layout_and_every_file_is_0644_under_umask_077(tmp_path: Path) -> None:
    """Also the int8 files' mode: they are onnxruntime's quantiser's writes, which followed the umask
    (0600 under 077) beside the others' 0644 (`write_whole`'s). Checked on this build, the one int8
    build of the two files: test_make_test_model_signals.py's rerun builds fp32 (its leftovers do not
    depend on the precision), where a second int8 build was ≈ 5 s of CPU, most of it the quantiser's."""
    umask = os.umask(0o077)
    try:
        out = sm.build_model_dir(tmp_path, "tiny", ("int8",), {"N": 1, "T": 64}, layout="sherpa")
    finally:
        os.umask(umask)
    assert {"encoder.int8.onnx", "decoder.int8.onnx", "vocos_24khz.onnx"} <= {p.name for p in out.iterdir()}
    assert not (out / "decoder.onnx").exists()
    shape = session(out / "decoder.int8.onnx", optimise=False).get_inputs()[1].shape
    assert shape == [1, 64, 100]
    modes = {path.name: oct(path.stat().st_mode & 0o777) for path in out.iterdir() if path.is_file()}
    assert set(modes.values()) == {"0o644"}, modes


def test_command_line_builds_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert make_test_model.main([str(tmp_path / "m"), "--size", "tiny", "--precision", "fp32"]) == 0
    assert (tmp_path / "m" / "fm_decoder.onnx").exists()
    assert "fm_decoder.onnx" in capsys.readouterr().out


def test_a_folder_after_the_precisions_is_a_usage_error_that_says_where_it_goes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--precision fp32 int8 DIR` read DIR as a third precision: "invalid choice: 'DIR' (choose from
    'fp32', 'int8')", which named neither the folder nor the fix."""
    folder = tmp_path / "m"
    with pytest.raises(SystemExit) as exited:
        make_test_model.main(["--size", "tiny", "--precision", "fp32", "int8", str(folder)])
    assert exited.value.code == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said.endswith(
        f"argument --precision: '{folder}' is not a precision (fp32, int8): --precision takes one or more, "
        "so give the folder before it (make-test-model DIR --precision fp32 int8) or end the list with --"
    ), said
    assert not folder.exists()


@pytest.mark.parametrize("argv", [["DIR", "--size", "tiny"], ["--help"]])
def test_command_line_without_onnx_says_what_to_install(tmp_path: Path, argv: list[str]) -> None:
    """README's `npu-worker make-test-model DIR --size tiny` after a plain `pip install .` (no `onnx`) was
    refused as `unrecognized arguments: DIR --size tiny` (exit 2), the missing package never named: its
    options come with the module that needs onnx. It now says what to install, with or without arguments."""
    argv = [str(tmp_path / "m") if word == "DIR" else word for word in argv]
    script = (
        "import sys; sys.modules['onnx'] = None  # as after `pip install .`, which has no onnx\n"
        "from npu_worker.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script, "make-test-model", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
        timeout=60,
    )
    assert done.returncode == 1, done
    assert "needs the `onnx` package: pip install '.[bench]' in the npu-worker checkout" in done.stderr
    assert "unrecognized arguments" not in done.stderr
    assert not (tmp_path / "m").exists()


def test_command_line_refuses_a_folder_holding_other_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`make-test-model ~/models/zipvoice_distill` (the real model's folder, mistaken for a new one) wrote
    random weights over the downloaded fm_decoder.onnx. A folder of other files is refused, untouched;
    an earlier make-test-model folder (its stamp) is written again."""
    real = tmp_path / "zipvoice_distill"
    real.mkdir()
    (real / "fm_decoder.onnx").write_bytes(b"the downloaded decoder")
    assert make_test_model.main([str(real), "--size", "tiny", "--precision", "fp32"]) == 2
    assert "holds other files" in capsys.readouterr().err
    assert [p.name for p in real.iterdir()] == ["fm_decoder.onnx"]
    assert (real / "fm_decoder.onnx").read_bytes() == b"the downloaded decoder"
    again = tmp_path / "made"  # what an earlier make-test-model left (its stamp), cut short
    again.mkdir()
    (again / sm.SYNTHETIC_STAMP).write_text("{}\n")
    (again / "tokens.txt").write_text("_ 0\n")
    assert make_test_model.main([str(again), "--size", "tiny", "--precision", "fp32"]) == 0
    assert (again / "fm_decoder.onnx").is_file()
