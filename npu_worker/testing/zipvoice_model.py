"""A synthetic ZipVoice model directory for tests and benchmarks (random weights, no torch at run time).

`build_model_dir(path, size)` writes what an official ZipVoice-Distill export plus the sherpa-onnx vocoder
holds: text_encoder.onnx, fm_decoder.onnx (and *_int8.onnx via onnxruntime's quantize_dynamic on MatMul,
like the real exporter), vocos_24khz.onnx, tokens.txt, model.json, and a Korean reference voice
(reference_ko.wav, 24 kHz ~3.8 s with edge silences, plus its transcript reference_ko.txt).

The graphs have the real structure, written from the public description of the architecture with the
PyTorch exporter's lowering and node names (opset 13): the decoder's five Zipformer2 stacks with
downsampling [1, 2, 4, 2, 1] and kernels [31, 15, 7, 15, 31], SimpleDownsample/SimpleUpsample, bypasses,
time and guidance-scale embeddings, relative positional encoding, attention weights shared by the
non-linear attention and both self-attentions, convolution modules, feed-forwards, BiasNorm, and the
Shape/Gather/If/Range arithmetic on T. So onnxruntime folds, fuses and fails on them as on the real files:
with N=1 and an even T fixed by free-dimension overrides at ORT_ENABLE_ALL, the first run fails at
`/fm_decoder/1/downsample/Reshape_1`; odd T and dynamic shapes run. Signatures and metadata are those of
the real files:
- text_encoder: tokens int64 [N,T], prompt_tokens int64 [N,T], prompt_features_len int64 [],
  speed float [] → text_condition float [N,T,·]; the frame count F = ceil(P/Tp·(Tp+Nt)/speed) is
  computed in the graph, speed quirk included;
- fm_decoder: t float [], x / text_condition / speech_condition float [N,T,100], guidance_scale float []
  → v float [N,T,100];
- vocos_24khz: mels float [N,100,F] → mag, x, y float [N,513,F].
Scalars may be fed as shape [] or [1] (sherpa-onnx feeds [1]). Each graph carries a small *guide* (scope
`/guide`) so that random weights still give speech-like output for the engine's tests (_zipvoice_nets).

Sizes: `tiny` for the test suite: small widths (dim 64, feed-forward 128, Vocos dim 64 × 2 layers) with
ZipVoice-Distill's real layer counts, decoder [2,2,4,4,4] and text encoder 4, the configuration of the
random-weight export `zipvoice_small_structure`; builds in ≈ 6 s, most of it onnxruntime's quantiser. Not
one layer per stack: such a graph hid a real failure of the NPU path (QNN left nodes of the deeper
stacks on the CPU, which only a graph of the real depth shows). `full` is ZipVoice-Distill's configuration
(decoder dim 512, feed-forward 1536, text encoder dim 192, Vocos dim 512 × 8 layers) with its parameter
counts, see `parameter_counts`. Build `full` on demand for benchmarks (~480 MB fp32), never commit it.

CLI: `npu-worker make-test-model DIR --size tiny|full [--precision fp32 int8]` (`make_test_model.py`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from npu_worker.audio import wav_bytes
from npu_worker.engine.zipvoice import quantiser_index
from npu_worker.files import temp_name
from npu_worker.testing import _vocos
from npu_worker.testing import _zipvoice_nets as nets
from npu_worker.testing import _zipvoice_voice as voice
from npu_worker.testing._onnx_trace import Tracer
from npu_worker.testing._zipformer import LayerDims
from npu_worker.testing._zipvoice_nets import DecoderShape
from npu_worker.testing.model_folder import (
    FILE_NAMES,
    REFERENCE_WAV,
    SYNTHETIC_STAMP,
    WHOLE_FILE_MODE,
    claimed_folder,
    write_whole,
)

REFERENCE_TEXT = "안녕하세요, 오늘은 발표를 시작하겠습니다."
QNN_SIMULATOR_OPTIONS = {"backend_type": "htp", "enable_htp_fp16_precision": "1", "soc_model": "57"}
"""QNN provider options for the x86 HTP simulator (fp16 precision; a SoC model so that fp16 is accepted)."""

PUNCTUATION = "_ !'(),-.:;?\"¡¿«»“”…—"
KOREAN_ESPEAK = "ɐɕəɛɡɪɫɯɾʃʌʑŋˈˌː"
"""Every non-ASCII symbol espeak-ng's `ko` voice emits for the 39-slide lecture (checked with the library)."""
IPA = (
    "ɑɒæɓʙβɔçɗɖðʤɘɚɜɝɞɟʄɠɢʛɦɧħɥʜɨʝɭɬɮʟɱɰɳɲɴøɵɸθœɶʘɹɺɻʀʁɽʂʈʧʉʊʋⱱɣɤʍχʎʏʐʒʔʡʕʢ"
    "ʰʲʷˠˤ˞ʼˑ\u0303\u0329\u032a\u0325\u0348\u031a"
)


@dataclass(frozen=True)
class ModelSize:
    text_dims: LayerDims
    text_layers: int
    text_embed_dim: int
    decoder: DecoderShape
    vocoder_dim: int
    vocoder_intermediate: int
    vocoder_layers: int


SIZES: dict[str, ModelSize] = {
    "tiny": ModelSize(
        text_dims=LayerDims(64, 128, 4, 9),
        text_layers=4,
        text_embed_dim=64,
        decoder=DecoderShape(
            LayerDims(64, 128, 4, 31),
            layers=(2, 2, 4, 4, 4),
            downsampling=(1, 2, 4, 2, 1),
            kernels=(31, 15, 7, 15, 31),
            time_embed_dim=64,
        ),
        vocoder_dim=64,
        vocoder_intermediate=128,
        vocoder_layers=2,
    ),
    "full": ModelSize(
        text_dims=LayerDims(192, 512, 4, 9),
        text_layers=4,
        text_embed_dim=192,
        decoder=DecoderShape(
            LayerDims(512, 1536, 4, 31),
            layers=(2, 2, 4, 4, 4),
            downsampling=(1, 2, 4, 2, 1),
            kernels=(31, 15, 7, 15, 31),
            time_embed_dim=192,
        ),
        vocoder_dim=512,
        vocoder_intermediate=1536,
        vocoder_layers=8,
    ),
}
"""`tiny`: small widths (dims 64) with the real layer counts, as the small structure export; `full`:
ZipVoice-Distill."""


def builder_fingerprint() -> str:
    """Hash of the builder's sources: a cached model built by another version is rebuilt."""
    digest = hashlib.sha256()
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def token_list() -> list[str]:
    """`_` (pad, id 0), space (id 1), punctuation, ASCII letters, IPA incl. espeak-ng's Korean output."""
    symbols = PUNCTUATION + "abcdefghijklmnopqrstuvwxyz" + KOREAN_ESPEAK + IPA
    seen: dict[str, None] = {}
    for symbol in symbols:
        seen.setdefault(symbol, None)
    return list(seen)


def write_tokens(path: Path, tokens: list[str]) -> None:
    write_whole(path, "".join(f"{token}\t{index}\n" for index, token in enumerate(tokens)).encode())


def model_config(size: ModelSize) -> dict:
    """model.json in the layout of the released models' training config."""
    d = size.decoder
    return {
        "model": {
            "fm_decoder_downsampling_factor": list(d.downsampling),
            "fm_decoder_num_layers": list(d.layers),
            "fm_decoder_cnn_module_kernel": list(d.kernels),
            "fm_decoder_feedforward_dim": d.dims.feedforward,
            "fm_decoder_num_heads": d.dims.heads,
            "fm_decoder_dim": d.dims.dim,
            "text_encoder_num_layers": size.text_layers,
            "text_encoder_feedforward_dim": size.text_dims.feedforward,
            "text_encoder_cnn_module_kernel": size.text_dims.kernel,
            "text_encoder_num_heads": size.text_dims.heads,
            "text_encoder_dim": size.text_dims.dim,
            "query_head_dim": d.dims.query_head_dim,
            "value_head_dim": d.dims.value_head_dim,
            "pos_head_dim": d.dims.pos_head_dim,
            "pos_dim": d.dims.pos_dim,
            "time_embed_dim": d.time_embed_dim,
            "text_embed_dim": size.text_embed_dim,
            "feat_dim": voice.NUM_MELS,
        },
        "feature": {"sampling_rate": voice.SAMPLE_RATE, "type": "vocos"},
    }


def _fix_dims(model: onnx.ModelProto, fixed: Mapping[str, int]) -> None:
    """Replace symbolic dims by values, as free-dimension overrides would, for fixed-shape (QNN) files."""
    for value in list(model.graph.input) + list(model.graph.output):
        for dim in value.type.tensor_type.shape.dim:
            if dim.dim_param in fixed:
                dim.dim_value = int(fixed[dim.dim_param])


def build_text_encoder(size: ModelSize, tokens: list[str], use_pinyin: bool, seed: int) -> onnx.ModelProto:
    g = Tracer(seed)
    table = voice.token_feature_table(tokens)
    inputs, outputs = nets.text_encoder(g, table, size.text_embed_dim, size.text_layers, size.text_dims)
    metadata = {
        "version": "1",
        "model_author": "k2-fsa",
        "comment": "ZipVoice text encoder (synthetic, npu-worker)",
        "use_espeak": "1",
        "use_pinyin": "1" if use_pinyin else "0",
        "random_weights": "1",
    }
    return g.make_model("main_graph", inputs, outputs, metadata)


def build_fm_decoder(
    size: ModelSize, tokens: list[str], distill: bool, seed: int, fixed_shapes: Mapping[str, int] | None
) -> onnx.ModelProto:
    g = Tracer(seed + 1)
    mean_feature = voice.token_feature_table(tokens).mean(axis=0)
    inputs, outputs = nets.fm_decoder(g, size.decoder, mean_feature, distill)
    metadata = {
        "version": "1",
        "model_author": "k2-fsa",
        "comment": f"ZipVoice{'-Distill' if distill else ''} flow-matching decoder (synthetic, npu-worker)",
        "feat_dim": str(voice.NUM_MELS),
        "sample_rate": str(voice.SAMPLE_RATE),
        "n_fft": str(voice.N_FFT),
        "hop_length": str(voice.HOP),
        "window_length": str(voice.N_FFT),
        "num_mels": str(voice.NUM_MELS),
        "random_weights": "1",
    }
    model = g.make_model("main_graph", inputs, outputs, metadata)
    if fixed_shapes:
        _fix_dims(model, fixed_shapes)
    return model


def build_vocoder(size: ModelSize, seed: int) -> onnx.ModelProto:
    g = Tracer(seed + 2)
    mel_to_linear, log_offset = voice.mel_to_linear()
    inputs, outputs = _vocos.vocos(
        g, mel_to_linear, log_offset, size.vocoder_dim, size.vocoder_intermediate, size.vocoder_layers
    )
    metadata = {
        "model_type": "vocos",
        "model_filename": "vocos_24khz.onnx",
        "comment": "Vocos 24 kHz vocoder (synthetic, npu-worker)",
        "sample_rate": str(voice.SAMPLE_RATE),
        "version": "1",
        "n_fft": str(voice.N_FFT),
        "hop_length": str(voice.HOP),
        "win_length": str(voice.N_FFT),
        "center": "1",
        "normalized": "0",
        "window_type": "hann",
        "pad_mode": "reflect",
        "random_weights": "1",
    }
    return g.make_model("main_graph", inputs, outputs, metadata)


def parameter_count(model: onnx.ModelProto | str | Path) -> int:
    """Number of float weights in a model, without the guide's tables (not parameters of the network)."""
    if not isinstance(model, onnx.ModelProto):
        model = onnx.load(str(model))
    return sum(
        int(np.prod(init.dims))
        for init in model.graph.initializer
        if init.data_type == onnx.TensorProto.FLOAT
    )


def parameter_counts(size: str | ModelSize, vocab: int | None = None, distill: bool = True) -> dict[str, int]:
    """Weights per part from the architecture alone (nothing is built): decoder, text encoder without its
    token embedding, the embedding (`vocab` × text_embed_dim; default: this model's token list), vocoder."""
    spec = SIZES[size] if isinstance(size, str) else size
    vocab = len(token_list()) if vocab is None else vocab
    return {
        "fm_decoder": nets.decoder_parameter_count(spec.decoder, distill),
        "text_encoder": nets.text_encoder_parameter_count(
            spec.text_dims, spec.text_layers, spec.text_embed_dim
        ),
        "embed": vocab * spec.text_embed_dim,
        "vocoder": _vocos.vocos_parameter_count(
            spec.vocoder_dim, spec.vocoder_intermediate, spec.vocoder_layers
        ),
    }


def _quantize(source: Path, target: Path) -> None:
    """int8 weights for MatMul, exactly the call of ZipVoice's onnx_export.py."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # quantize_dynamic warns about pre-processing on every call
    aside = target.with_name(temp_name(target.name))  # renamed whole, as `write_whole`
    try:
        with quantiser_index.indexed_lookups():  # the same bytes, without onnxruntime's name scans
            quantize_dynamic(source, aside, op_types_to_quantize=["MatMul"], weight_type=QuantType.QInt8)
        os.chmod(aside, WHOLE_FILE_MODE)  # as `write_whole`'s (it followed the umask: 0600 beside 0644)
        os.replace(aside, target)
    finally:
        root.setLevel(level)
        aside.unlink(missing_ok=True)


def build_model_dir(
    path: str | Path,
    size: str = "tiny",
    precisions: Sequence[str] = ("fp32", "int8"),
    fixed_shapes: Mapping[str, int] | None = None,
    *,
    distill: bool = True,
    layout: str = "official",
    use_pinyin: bool = False,
    seed: int = 0,
) -> Path:
    """Write a synthetic ZipVoice model directory at `path` and return it.

    `precisions`: "fp32" keeps the float files, "int8" adds quantized ones (the fp32 file is still written
    first because quantization starts from it, then removed if fp32 was not asked for).
    `fixed_shapes`: symbolic dim values written into the decoder's signature, e.g. {"N": 1, "T": 127}; like
    free-dimension overrides, an even T with N=1 fails at the first downsampling Reshape under
    onnxruntime's full optimisation (the real export does the same).
    `distill`: ZipVoice-Distill decoder (one pass per step, guidance embedded) or ZipVoice (two passes).
    `layout`: "official" (text_encoder.onnx, fm_decoder.onnx, *_int8.onnx) or "sherpa" (encoder.onnx,
    decoder.onnx, *.int8.onnx).
    """
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(SIZES)}")
    unknown = set(precisions) - {"fp32", "int8"}
    if unknown or not precisions:
        raise ValueError(f"precisions must be a non-empty subset of fp32, int8 (got {list(precisions)})")
    spec = SIZES[size]
    names = FILE_NAMES[layout]
    out = claimed_folder(Path(path))
    tokens = token_list()
    write_tokens(out / "tokens.txt", tokens)
    write_whole(out / "model.json", (json.dumps(model_config(spec), indent=2) + "\n").encode())
    models = {
        "encoder": build_text_encoder(spec, tokens, use_pinyin, seed),
        "decoder": build_fm_decoder(spec, tokens, distill, seed, fixed_shapes),
    }
    _write_models(out, models, names, precisions)
    write_whole(out / "vocos_24khz.onnx", build_vocoder(spec, seed).SerializeToString())
    write_reference_voice(out)
    stamp = {
        "size": size,
        "distill": distill,
        "precisions": list(precisions),
        "builder": builder_fingerprint(),
    }
    write_whole(out / SYNTHETIC_STAMP, (json.dumps(stamp) + "\n").encode())
    return out


def _write_models(
    out: Path, models: Mapping[str, onnx.ModelProto], names: Mapping[str, str], precisions: Sequence[str]
) -> None:
    """The encoder and decoder under the layout's `names`: fp32, int8 quantized from it, or both."""
    for role, model in models.items():
        stem = names[role]
        fp32 = out / f"{stem}.onnx"
        write_whole(fp32, model.SerializeToString())
        if "int8" in precisions:
            _quantize(fp32, out / f"{stem}{names['int8']}.onnx")
        if "fp32" not in precisions:
            fp32.unlink()


def write_reference_voice(out: Path) -> None:
    """The reference voice every built directory holds (reference_ko.wav and its transcript), alone: for
    a model directory made otherwise (an export) that needs the same voice without building a model."""
    write_whole(out / REFERENCE_WAV, wav_bytes(voice.reference_speech(), voice.SAMPLE_RATE))
    write_whole((out / REFERENCE_WAV).with_suffix(".txt"), (REFERENCE_TEXT + "\n").encode())
