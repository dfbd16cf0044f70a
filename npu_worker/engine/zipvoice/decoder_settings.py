"""The decoder's settings, read at load from its ONNX metadata: its features' size and spectrum, and
the sampling steps and guidance of its kind (Distill or full ZipVoice) where none is configured."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from npu_worker.engine.zipvoice import model_files, sampler
from npu_worker.engine.zipvoice.features import SpectrumConfig
from npu_worker.engine.zipvoice.options import ZipVoiceConfig


@dataclass(frozen=True)
class DecoderSettings:
    spectrum: SpectrumConfig
    feat_dim: int
    num_steps: int
    guidance_scale: float


def decoder_settings(
    metadata: dict[str, str], files: model_files.ModelFiles, config: ZipVoiceConfig
) -> DecoderSettings:
    """The decoder's numbers, each a ModelLoadError naming its field where the export's is no number
    (`model_files.metadata_int`); the configured steps and guidance win over its kind's."""
    number = partial(model_files.metadata_int, metadata, model="decoder")
    sample_rate = number("sample_rate", 24000)
    feat_dim = number("feat_dim", 100)
    spectrum = SpectrumConfig(
        sample_rate=sample_rate,
        n_fft=number("n_fft", 1024),
        hop_length=number("hop_length", 256),
        win_length=number("window_length", 1024),
        num_mels=number("num_mels", feat_dim),
    )
    defaults = sampler.DISTILL_DEFAULTS if model_files.is_distill(files, metadata) else sampler.FULL_DEFAULTS
    return DecoderSettings(
        spectrum,
        feat_dim,
        config.num_steps or defaults.num_steps,
        config.guidance_scale if config.guidance_scale is not None else defaults.guidance_scale,
    )
