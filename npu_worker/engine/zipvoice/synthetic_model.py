"""A synthetic ZipVoice model directory for tests and benchmarks (no real weights, no torch).

`build_model_dir(path, size)` writes what an official ZipVoice export plus the sherpa-onnx vocoder holds:
text_encoder.onnx, fm_decoder.onnx (and *_int8.onnx via onnxruntime's quantize_dynamic on MatMul, like
the real exporter), vocos_24khz.onnx, tokens.txt, model.json, and a Korean reference voice
(reference_ko.wav, 24 kHz ~3.8 s with edge silences, plus its transcript reference_ko.txt).
Names, signatures, symbolic dims and metadata are those of the real files (docs/zipvoice.md):
- text_encoder: tokens int64 [N,T], prompt_tokens int64 [N,T] (the real export names both dims "T"),
  prompt_features_len int64 [], speed float [] → text_condition float [N,T,100]. Frame count
  F = ceil(P/Tp·(Tp+Nt)/speed) is computed in the graph, speed quirk included.
- fm_decoder: t float [], x / text_condition / speech_condition float [N,T,100], guidance_scale float []
  → v float [N,T,100]. Free dims "N" and "T": `SessionOptions.add_free_dimension_override_by_name("N", 1)`
  and `("T", frames)` fix the shapes for QNN.
- vocos_24khz: mels float [N,100,L] → mag, x, y float [N,513,L].
Scalars may be fed as shape [] or [1] (sherpa-onnx feeds [1]).

Sizes: `tiny` builds in ~1 s and runs in milliseconds; `full` has the real parameter counts (decoder
~118.5 M in 5 stacks [2,2,4,4,4] × downsampling [1,2,4,2,1], dim 512, ff 1536, 4 heads, kernels
[31,15,7,15,31]; text encoder ~4.2 M; vocoder ~13.5 M) and the same per-frame work, so speed figures are
comparable with the real model. Build `full` on demand (it is ~480 MB fp32), never commit it.

QNN HTP simulator (onnxruntime-qnn 2.7.0, x86-64), checked with the `tiny` decoder at T=64:
- the fixed-shape file (`fixed_shapes={"N": 1, "T": 64}`) and the dynamic file with free-dimension
  overrides N=1, T=64 both place every node on QNN (572 nodes, none on CPU) and run in ~1 s;
- provider options must be QNN_SIMULATOR_OPTIONS (fp16 precision, `soc_model` 57):
  in the default fp32 mode the simulator fails to finalize graphs of this size (EP_FAIL
  QNN_COMMON_ERROR_MEM_ALLOC), and fp16 without `soc_model` is refused at session creation;
- fp16 precision: max |v_qnn − v_cpu| ≈ 6e-3 for |v| ≤ 6.5, so compare with atol ~2e-2;
- the graphs avoid two patterns that failed in fp32 mode: Pad mode="edge", and RMS norm with a learned
  scale (onnxruntime fuses it into SimplifiedLayerNormalization).
The text encoder has a data-dependent output shape and stays on CPU; the vocoder uses Range/Mod/Cos/Sin on
int64 frame indices and is best left on CPU too.

CLI: `python -m npu_worker.engine.zipvoice.synthetic_model DIR --size tiny|full [--precision fp32 int8]`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from npu_worker.audio import wav_bytes
from npu_worker.engine.zipvoice import _synthetic_graphs as graphs
from npu_worker.engine.zipvoice import _synthetic_voice as voice
from npu_worker.engine.zipvoice._synthetic_graphs import DecoderShape
from npu_worker.engine.zipvoice._synthetic_layers import GraphBuilder, LayerDims

REFERENCE_TEXT = "안녕하세요, 오늘은 발표를 시작하겠습니다."
REFERENCE_WAV = "reference_ko.wav"
QNN_SIMULATOR_OPTIONS = {"backend_type": "htp", "enable_htp_fp16_precision": "1", "soc_model": "57"}
"""QNN provider options under which the x86 HTP simulator compiles the synthetic decoder (see above)."""
SYNTHETIC_STAMP = "synthetic.json"
"""Written last by `build_model_dir`: size, variant and builder fingerprint (no real model has it)."""

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
        text_dims=LayerDims(32, 64, 2, 5, query_head_dim=8, value_head_dim=4, pos_head_dim=4, pos_dim=8),
        text_layers=1,
        text_embed_dim=32,
        decoder=DecoderShape(
            LayerDims(64, 128, 4, 7, query_head_dim=8, value_head_dim=4, pos_head_dim=4, pos_dim=8),
            layers=(1, 1, 1),
            downsampling=(1, 2, 1),
            kernels=(7, 5, 7),
            time_embed_dim=32,
        ),
        vocoder_dim=32,
        vocoder_intermediate=64,
        vocoder_layers=1,
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

FILE_NAMES = {
    "official": {"encoder": "text_encoder", "decoder": "fm_decoder", "int8": "_int8"},
    "sherpa": {"encoder": "encoder", "decoder": "decoder", "int8": ".int8"},
}


def builder_fingerprint() -> str:
    """Hash of the builder's sources: a cached model built by another version is rebuilt."""
    digest = hashlib.sha256()
    for module in (graphs, voice, sys.modules[__name__]):
        digest.update(Path(str(module.__file__)).read_bytes())
    digest.update(Path(graphs.__file__).with_name("_synthetic_layers.py").read_bytes())
    return digest.hexdigest()[:16]


def token_list() -> list[str]:
    """`_` (pad, id 0), space (id 1), punctuation, ASCII letters, IPA incl. espeak-ng's Korean output."""
    symbols = PUNCTUATION + "abcdefghijklmnopqrstuvwxyz" + KOREAN_ESPEAK + IPA
    seen: dict[str, None] = {}
    for symbol in symbols:
        seen.setdefault(symbol, None)
    return list(seen)


def write_tokens(path: Path, tokens: list[str]) -> None:
    path.write_text("".join(f"{token}\t{index}\n" for index, token in enumerate(tokens)), encoding="utf-8")


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
    g = GraphBuilder(seed)
    table = voice.token_feature_table(tokens)
    inputs, outputs = graphs.text_encoder(
        g, table, tokens.index("_"), size.text_embed_dim, size.text_layers, size.text_dims
    )
    metadata = {
        "version": "1",
        "model_author": "k2-fsa",
        "comment": "ZipVoice text encoder (synthetic, npu-worker)",
        "use_espeak": "1",
        "use_pinyin": "1" if use_pinyin else "0",
    }
    return graphs.make_model(g, inputs, outputs, "text_encoder", metadata)


def build_fm_decoder(
    size: ModelSize, tokens: list[str], distill: bool, seed: int, fixed_shapes: Mapping[str, int] | None
) -> onnx.ModelProto:
    g = GraphBuilder(seed + 1)
    mean_feature = voice.token_feature_table(tokens).mean(axis=0)
    inputs, outputs = graphs.fm_decoder(g, size.decoder, mean_feature, distill, ["N", "T"])
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
    }
    model = graphs.make_model(g, inputs, outputs, "fm_decoder", metadata)
    if fixed_shapes:
        _fix_dims(model, fixed_shapes)
    return model


def build_vocoder(size: ModelSize, seed: int) -> onnx.ModelProto:
    g = GraphBuilder(seed + 2)
    mel_to_linear, log_offset = voice.mel_to_linear()
    inputs, outputs = graphs.vocos(
        g, mel_to_linear, log_offset, size.vocoder_dim, size.vocoder_intermediate, size.vocoder_layers
    )
    metadata = {
        "model_type": "vocos",
        "comment": "Vocos 24 kHz vocoder (synthetic, npu-worker)",
        "sample_rate": str(voice.SAMPLE_RATE),
        "n_fft": str(voice.N_FFT),
        "hop_length": str(voice.HOP),
        "win_length": str(voice.N_FFT),
        "center": "1",
        "normalized": "0",
        "window_type": "hann",
        "pad_mode": "reflect",
    }
    return graphs.make_model(g, inputs, outputs, "vocos", metadata)


def parameter_count(model: onnx.ModelProto | str | Path) -> int:
    """Number of float weights in a model (int64 shape constants are not parameters)."""
    if not isinstance(model, onnx.ModelProto):
        model = onnx.load(str(model))
    return sum(
        int(np.prod(init.dims))
        for init in model.graph.initializer
        if init.data_type == onnx.TensorProto.FLOAT
    )


def _quantize(source: Path, target: Path) -> None:
    """int8 weights for MatMul, exactly the call of ZipVoice's onnx_export.py."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # quantize_dynamic warns about pre-processing on every call
    try:
        quantize_dynamic(source, target, op_types_to_quantize=["MatMul"], weight_type=QuantType.QInt8)
    finally:
        root.setLevel(level)


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
    `fixed_shapes`: symbolic dim values for the decoder, e.g. {"N": 1, "T": 128} (QNN tests).
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
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    tokens = token_list()
    write_tokens(out / "tokens.txt", tokens)
    (out / "model.json").write_text(json.dumps(model_config(spec), indent=2) + "\n", encoding="utf-8")
    models = {
        names["encoder"]: build_text_encoder(spec, tokens, use_pinyin, seed),
        names["decoder"]: build_fm_decoder(spec, tokens, distill, seed, fixed_shapes),
    }
    for stem, model in models.items():
        fp32 = out / f"{stem}.onnx"
        onnx.save(model, str(fp32))
        if "int8" in precisions:
            _quantize(fp32, out / f"{stem}{names['int8']}.onnx")
        if "fp32" not in precisions:
            fp32.unlink()
    onnx.save(build_vocoder(spec, seed), str(out / "vocos_24khz.onnx"))
    (out / REFERENCE_WAV).write_bytes(wav_bytes(voice.reference_speech(), voice.SAMPLE_RATE))
    (out / REFERENCE_WAV).with_suffix(".txt").write_text(REFERENCE_TEXT + "\n", encoding="utf-8")
    stamp = {
        "size": size,
        "distill": distill,
        "precisions": list(precisions),
        "builder": builder_fingerprint(),
    }
    (out / SYNTHETIC_STAMP).write_text(json.dumps(stamp) + "\n", encoding="utf-8")
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's options (shared by `python -m ...synthetic_model` and `npu-worker make-test-model`)."""
    parser.add_argument("dir", help="output model directory")
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny", help="tiny: tests; full: real cost")
    parser.add_argument("--precision", nargs="+", choices=("fp32", "int8"), default=["fp32", "int8"])
    parser.add_argument("--layout", choices=sorted(FILE_NAMES), default="official", help="file names")
    parser.add_argument(
        "--no-distill", action="store_true", help="ZipVoice (two passes per step) instead of Distill"
    )


def run(args: argparse.Namespace) -> int:
    out = build_model_dir(
        args.dir, args.size, args.precision, distill=not args.no_distill, layout=args.layout
    )
    for file in sorted(out.iterdir()):
        print(f"{file.stat().st_size:>12,d}  {file}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
