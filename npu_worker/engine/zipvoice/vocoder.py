"""Vocos vocoder (sherpa-onnx layout) + ISTFT in numpy, decoding a segment whole or in pieces.

The ONNX vocoder maps natural-log mel (1, 100, F) to `mag`, `x`, `y` (1, 513, F); the spectrum is
mag·(x + i·y) and the waveform its ISTFT. A long segment is decoded in pieces with a few frames of
context on each side, so the first samples of a segment can go out before the whole of it is decoded.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from npu_worker.engine.zipvoice.features import SpectrumConfig, istft
from npu_worker.engine.zipvoice.graph_inputs import declared_inputs
from npu_worker.engine.zipvoice.model_files import metadata_int
from npu_worker.protocol import ModelLoadError

# Vocos: an embedding conv (kernel 7) and 8 ConvNeXt blocks (depthwise kernel 7) → ±27 frames reach.
CONTEXT_FRAMES = 32


OUTPUTS = ("mag", "x", "y")


def check_signature(session: Any, path: Path) -> None:
    """ModelLoadError unless `session` is a vocoder's: one input, `mag`, `x` and `y` out. Another ONNX
    file (`--vocoder fm_decoder.onnx`, which `prepare` copied in as vocos_24khz.onnx) loaded, and then
    every synthesis failed ("vocoder failed ...: Required inputs (['x', 'text_condition', ...]) are
    missing")."""
    inputs = [item.name for item in session.get_inputs()]
    outputs = [item.name for item in session.get_outputs()]
    if len(inputs) != 1 or not set(OUTPUTS) <= set(outputs):
        raise ModelLoadError(
            f"{path} is no Vocos vocoder: it takes {', '.join(inputs)} and gives {', '.join(outputs)}, a "
            f"vocoder takes one log-mel input and gives {', '.join(OUTPUTS)} (vocos_24khz.onnx of the "
            "sherpa-onnx release); check --vocoder"
        )


def check_mels(session: Any, path: Path, decoder: Any) -> None:
    """ModelLoadError unless the vocoder takes as many mel bins as the decoder makes (its `x`'s last
    dimension): another model's vocoder (80 bins, say) loaded, and every synthesis then failed in
    onnxruntime's words ("Got invalid dimensions for input: mels")."""
    made = decoder.get_inputs()[1].shape
    _check_bins(session, path, made[2] if len(made) == 3 else None)


def decoder_mel_bins(decoder: Path) -> int | None:
    """The mel bins the decoder at `decoder` makes (its `x` input's last dimension), read from the
    graph's declared inputs; None where it declares none. `prepare` opened an onnxruntime session on
    the whole decoder to read this one number (1.4-1.7 s and 51 MB on a decoder of 11.6 MB)."""
    try:
        inputs = declared_inputs(decoder)
    except Exception:  # (the decoder's own load says what is wrong with it, naming it)
        return None
    shape = inputs[1][1] if len(inputs) > 1 else []
    return shape[2] if len(shape) == 3 and isinstance(shape[2], int) else None


def _check_bins(session: Any, path: Path, gives: Any) -> None:
    shape = session.get_inputs()[0].shape
    takes = shape[1] if len(shape) == 3 else None
    if isinstance(takes, int) and isinstance(gives, int) and takes != gives:
        raise ModelLoadError(
            f"{path} takes {takes} mel bins, the decoder makes {gives}: it is another model's vocoder; "
            "use the one this model was exported for (vocos_24khz.onnx of the sherpa-onnx release), check --vocoder"
        )


def check_file(path: Path, decoder: Path | None = None) -> None:
    """`check_signature` of the vocoder file, opened on the CPU unoptimised, and its mel bins against
    those `decoder` makes (`decoder_mel_bins`, from its graph) when given (`prepare`: before it copies the file in and compiles for minutes, not at the
    first `serve`)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # not ONNX at all (tokens.txt)
        raise ModelLoadError(f"cannot load {path} as the vocoder: {exc}") from exc
    check_signature(session, path)
    if decoder is not None:
        _check_bins(session, path, decoder_mel_bins(decoder))


def spectrum_config(metadata: dict[str, str], sample_rate: int) -> SpectrumConfig:
    """ISTFT geometry from the vocoder's metadata (defaults: the 24 kHz Vocos)."""
    n_fft = metadata_int(metadata, "n_fft", 1024, "vocoder")
    return SpectrumConfig(
        sample_rate=sample_rate,
        n_fft=n_fft,
        hop_length=metadata_int(metadata, "hop_length", 256, "vocoder"),
        win_length=metadata_int(metadata, "win_length", n_fft, "vocoder"),
    )


class Vocoder:
    """Runs the vocoder session; `session` is an onnxruntime InferenceSession (or anything with run)."""

    def __init__(self, session: Any, config: SpectrumConfig) -> None:
        self.session = session
        self.config = config
        self.input_name = session.get_inputs()[0].name
        self.output_names = [o.name for o in session.get_outputs()]

    def spectrum(self, mel: np.ndarray) -> np.ndarray:
        """Complex spectrum (n_fft//2+1, F) of log-mel (F, num_mels)."""
        feed = {self.input_name: np.ascontiguousarray(mel.T[None], dtype=np.float32)}
        outputs = dict(zip(self.output_names, self.session.run(None, feed), strict=True))
        magnitude, real, imag = outputs["mag"][0], outputs["x"][0], outputs["y"][0]
        return magnitude.astype(np.float64) * (real + 1j * imag.astype(np.float64))

    def decode(self, mel: np.ndarray) -> np.ndarray:
        """Waveform of (F, num_mels) log-mel: (F − 1)·hop samples, clamped to [−1, 1]."""
        if mel.shape[0] < 2:
            return np.zeros(0, dtype=np.float32)
        return np.clip(istft(self.spectrum(mel), self.config), -1.0, 1.0)

    def decode_pieces(self, mel: np.ndarray, piece_frames: int) -> Iterator[np.ndarray]:
        """The samples of `decode(mel)` in consecutive pieces of about `piece_frames` frames.

        Piece k covers output samples [a·hop, b·hop); it runs the vocoder on frames a−C … b+C and the
        ISTFT on frames a−1 … b+2 (all frames that overlap those samples), so the joined pieces equal
        the whole decode up to the vocoder's receptive field (C = CONTEXT_FRAMES).
        """
        frames, hop = mel.shape[0], self.config.hop_length
        if frames < 2:
            return
        if piece_frames <= 0 or frames <= piece_frames + CONTEXT_FRAMES:
            yield self.decode(mel)
            return
        overlap = self.config.n_fft // hop  # frames each side that touch a sample range
        last = frames - 1  # output has (F − 1)·hop samples
        for start in range(0, last, piece_frames):
            end = min(start + piece_frames, last)
            # Window starts on a multiple of n_fft/hop frames: a vocoder whose phase follows the frame
            # index (a steady sinusoid turns by a fixed angle per hop) then sees the same phase origin.
            lo = max(0, (start - CONTEXT_FRAMES) // overlap * overlap)
            hi = min(frames, end + CONTEXT_FRAMES)
            spectrum = self.spectrum(mel[lo:hi])
            first, stop = max(0, start - overlap), min(frames, end + overlap)
            signal = istft(spectrum[:, first - lo : stop - lo], self.config)
            offset = (start - first) * hop
            yield np.clip(signal[offset : offset + (end - start) * hop], -1.0, 1.0)
