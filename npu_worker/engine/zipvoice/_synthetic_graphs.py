"""ONNX graphs of the synthetic ZipVoice model, written with `onnx.helper` (no torch).

Each graph has the real export's names, signatures and symbolic dims, and two parts:
- an *analytic* part that makes the output meaningful: the decoder's velocity drives x towards the
  conditions (so the sampler converges to the text encoder's mel and leaves a seed-dependent residue),
  the vocoder turns a log-mel into a harmonic spectrum with phase that stays coherent across frames;
- a *network* part with the real architecture's dimensions (Zipformer-like layers: feed-forwards, multi-head
  attention over all frames, convolution modules, downsampled stacks; ConvNeXt for the vocoder). It
  carries the parameter count and per-frame cost, and adds a small bounded term (0.05·tanh) to the output,
  so numeric differences between execution providers show up in the output.
Ops used: MatMul, Add, Sub, Mul, Div, Sigmoid, Tanh, Softmax, Transpose, Reshape, Concat, Split, Slice,
Gather, GatherElements, Conv (depthwise), ReduceMean, ReduceSum, Sqrt, Min, Max, Abs, Neg, Exp, Log, Cos,
Sin, Range, Expand, Squeeze, Unsqueeze, Shape, Cast, Ceil, Pad, Mod, Where, Greater, LessOrEqual; opset 13
like the real export.

Cost check (this 2-core VM, 2 threads, best of 4, load average ~1): one `full` decoder call takes 0.34 s
(int8) / 0.55 s (fp32) at 470 frames and 0.80 s / 1.43 s at 1220 frames; the figure given for the real architecture (not measured here) is ≈ 0.34 s and
0.8–1.0 s (int8) for the real architecture with random weights, and fp32 ≈ 1.6× int8. The VM's speed itself
drifts (the same call measured 0.19 s at another moment), so compare only interleaved runs.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper as oh

from npu_worker.engine.zipvoice._synthetic_layers import (
    FLOAT,
    INT64,
    OPSET,
    GraphBuilder,
    LayerDims,
    downsample,
    upsample,
    zipformer_layer,
)


def make_model(
    g: GraphBuilder, inputs: list, outputs: list, name: str, metadata: dict[str, str]
) -> onnx.ModelProto:
    graph = oh.make_graph(g.nodes, name, inputs, outputs, initializer=g.initializers)
    model = oh.make_model(
        graph, opset_imports=[oh.make_opsetid("", OPSET)], producer_name="npu-worker-synthetic"
    )
    model.ir_version = 8
    for key, value in metadata.items():
        model.metadata_props.add(key=key, value=value)
    return model


def text_encoder(
    g: GraphBuilder, token_table: np.ndarray, pad_id: int, embed_dim: int, layers: int, dims: LayerDims
) -> tuple[list, list]:
    """tokens, prompt_tokens, prompt_features_len, speed → text_condition (1, F, 100), as the real export:
    F = ceil(P / Tp · (Tp + Nt) / speed) (speed scales the prompt part too: the quirk the engine fixes),
    each token's output repeated floor(F / (Tp+Nt)) times, the rest filled with the pad position's output."""
    vocab, feat = token_table.shape
    joined = g.op("Concat", ["prompt_tokens", "tokens"], axis=1)
    with_pad = g.op("Concat", [joined, g.const(np.array([[pad_id]], np.int64))], axis=1)
    x = g.linear(
        g.op("Gather", [g.weight((vocab, embed_dim), "embed", scale=1.0), with_pad]), embed_dim, dims.dim
    )
    pos_emb = g.position_embedding(x, dims.pos_dim)
    for _ in range(layers):
        x = zipformer_layer(g, x, dims, pos_emb)
    network = g.op("Tanh", [g.linear(x, dims.dim, feat)])
    out = g.op(
        "Add",
        [
            g.op("Gather", [g.const(token_table, "token_mel"), with_pad]),
            g.op("Mul", [network, g.const(np.float32(0.05))]),
        ],
    )
    tokens_len = g.frame_count(joined)
    prompt_len = g.frame_count("prompt_tokens")
    features = g.op("Cast", [g.op("Reshape", ["prompt_features_len", g.const(np.array([1]))])], to=FLOAT)
    per_token = g.op("Div", [features, g.op("Cast", [prompt_len], to=FLOAT)])
    scaled = g.op("Mul", [per_token, g.op("Cast", [tokens_len], to=FLOAT)])
    speed = g.op("Reshape", ["speed", g.const(np.array([1]))])
    frames = g.op("Cast", [g.op("Ceil", [g.op("Div", [scaled, speed])])], to=INT64)
    token_dur = g.op("Div", [frames, tokens_len])
    body = g.op("Slice", [out, g.const(np.array([0])), tokens_len, g.const(np.array([1]))])
    dur_shape = g.op("Concat", [g.const(np.array([1, 1])), token_dur, g.const(np.array([1]))], axis=0)
    body = g.op("Expand", [g.op("Unsqueeze", [body, g.const(np.array([2]))]), dur_shape])
    body = g.op("Reshape", [body, g.const(np.array([0, -1, feat]))])
    tail_len = g.op("Sub", [frames, g.op("Mul", [tokens_len, token_dur])])
    last = g.op(
        "Slice", [out, tokens_len, g.op("Add", [tokens_len, g.const(np.array([1]))]), g.const(np.array([1]))]
    )
    tail_shape = g.op("Concat", [g.const(np.array([1])), tail_len, g.const(np.array([1]))], axis=0)
    g.nodes.append(
        oh.make_node("Concat", [body, g.op("Expand", [last, tail_shape])], ["text_condition"], axis=1)
    )
    inputs = [
        oh.make_tensor_value_info("tokens", INT64, ["N", "T"]),
        oh.make_tensor_value_info("prompt_tokens", INT64, ["N", "T"]),
        oh.make_tensor_value_info("prompt_features_len", INT64, []),
        oh.make_tensor_value_info("speed", FLOAT, []),
    ]
    return inputs, [oh.make_tensor_value_info("text_condition", FLOAT, ["N", "T", feat])]


def time_embedding(g: GraphBuilder, value: str, embed_dim: int, scale: float) -> str:
    """Sinusoidal embedding of a (1,) scalar, then an MLP: (1, embed_dim)."""
    half = embed_dim // 2
    freqs = np.exp(-math.log(10000.0) * np.arange(half) / half).astype(np.float32) * scale
    arg = g.op("Mul", [g.op("Unsqueeze", [value, g.const(np.array([1]))]), g.const(freqs[None, :], "freqs")])
    sinusoid = g.op("Concat", [g.op("Sin", [arg]), g.op("Cos", [arg])], axis=1)
    return g.linear(g.swish(g.linear(sinusoid, embed_dim, 2 * embed_dim)), 2 * embed_dim, embed_dim)


@dataclass(frozen=True)
class DecoderShape:
    dims: LayerDims
    layers: tuple[int, ...]
    downsampling: tuple[int, ...]
    kernels: tuple[int, ...]
    time_embed_dim: int = 192


def fm_decoder(
    g: GraphBuilder, shape: DecoderShape, mean_feature: np.ndarray, distill: bool, frame_dims: list
) -> tuple[list, list]:
    """t, x, text_condition, speech_condition, guidance_scale → v.

    v = (target − x) / (1 − 0.95 t) + 0.05·tanh(network): Euler steps converge on `target` (the prompt
    features where speech_condition is set, the text condition elsewhere, contrast raised by guidance)
    and keep ~3 % of the start noise, so seeds change the samples. Non-distill runs the network on a batch
    of two (unconditional + conditional) like the real export, so a step costs two passes.
    """
    feat = mean_feature.shape[0]
    t = g.op("Reshape", ["t", g.const(np.array([1]))])
    guidance = g.op("Reshape", ["guidance_scale", g.const(np.array([1]))])
    if not distill:
        doubled = g.op("Mul", [guidance, g.const(np.float32(2.0))])
        guidance = g.op("Where", [g.op("Greater", [t, g.const(np.float32(0.5))]), guidance, doubled])
    prompt_mask = g.op(
        "Min",
        [
            g.op("Mul", [g.op("Abs", ["speech_condition"]), g.const(np.float32(1e4))]),
            g.const(np.float32(1.0)),
        ],
    )
    contrast = g.op(
        "Mul",
        [
            g.op("Sub", ["text_condition", g.const(mean_feature, "mean_mel")]),
            g.op("Mul", [guidance, g.const(np.float32(0.1))]),
        ],
    )
    text_target = g.op("Add", ["text_condition", contrast])
    free = g.op("Sub", [g.const(np.float32(1.0)), prompt_mask])
    target = g.op("Add", ["speech_condition", g.op("Mul", [free, text_target])])
    denominator = g.op("Sub", [g.const(np.float32(1.0)), g.op("Mul", [t, g.const(np.float32(0.95))])])
    analytic = g.op("Div", [g.op("Sub", [target, "x"]), denominator])

    d = shape.dims.dim
    features = g.op("Concat", ["x", "text_condition", "speech_condition"], axis=2)
    embed = time_embedding(g, g.op("Mul", [t, g.const(np.float32(1000.0))]), shape.time_embed_dim, 1.0)
    if distill:
        embed = g.op("Add", [embed, time_embedding(g, guidance, shape.time_embed_dim, 1.0)])
    else:
        unconditional = g.op(
            "Concat",
            [
                "x",
                g.op("Mul", ["text_condition", g.const(np.float32(0.0))]),
                g.op(
                    "Mul",
                    [
                        "speech_condition",
                        g.op("Cast", [g.op("LessOrEqual", [t, g.const(np.float32(0.5))])], to=FLOAT),
                    ],
                ),
            ],
            axis=2,
        )
        features = g.op("Concat", [unconditional, features], axis=0)
    h = g.linear(features, 3 * feat, d)
    for layers, factor, kernel in zip(shape.layers, shape.downsampling, shape.kernels, strict=True):
        frames = g.frame_count(h)
        stack = downsample(g, h, factor, d) if factor > 1 else h
        stack_embed = g.linear(g.swish(embed), shape.time_embed_dim, d)
        stack = g.op("Add", [stack, g.op("Unsqueeze", [stack_embed, g.const(np.array([1]))])])
        layer_dims = dataclasses.replace(shape.dims, kernel=kernel)
        pos_emb = g.position_embedding(stack, layer_dims.pos_dim)
        for _ in range(layers):
            stack = zipformer_layer(g, stack, layer_dims, pos_emb)
        stack = upsample(g, stack, factor, d, frames) if factor > 1 else stack
        h = g.op("Add", [h, g.op("Mul", [g.op("Sub", [stack, h]), g.const(np.float32(0.5))])])
    network = g.op("Tanh", [g.linear(h, d, feat)])
    if not distill:
        uncond, cond = g.ops("Split", [network, g.const(np.array([1, 1]))], 2, axis=0)
        gain = g.op("Add", [guidance, g.const(np.float32(1.0))])
        network = g.op("Sub", [g.op("Mul", [cond, gain]), g.op("Mul", [uncond, guidance])])
        network = g.op("Tanh", [network])
    g.nodes.append(oh.make_node("Add", [analytic, g.op("Mul", [network, g.const(np.float32(0.05))])], ["v"]))
    inputs = [
        oh.make_tensor_value_info("t", FLOAT, []),
        oh.make_tensor_value_info("x", FLOAT, frame_dims + [feat]),
        oh.make_tensor_value_info("text_condition", FLOAT, frame_dims + [feat]),
        oh.make_tensor_value_info("speech_condition", FLOAT, frame_dims + [feat]),
        oh.make_tensor_value_info("guidance_scale", FLOAT, []),
    ]
    return inputs, [oh.make_tensor_value_info("v", FLOAT, frame_dims + [feat])]


def vocos(
    g: GraphBuilder,
    mel_to_linear: np.ndarray,
    log_offset: np.ndarray,
    dim: int,
    intermediate: int,
    layers: int,
) -> tuple[list, list]:
    """mels (1, 100, L) natural-log mel → mag, x, y (1, 513, L); spectrum = mag·(x + i·y).

    The analytic part maps the mel envelope onto linear bins, keeps only harmonics of 140.6 Hz (every 6th
    bin) and gives bin k the phase π/2·k·frame (+ a fixed offset per bin, against peaky pulses), which is the phase a steady sinusoid at the bin's centre
    advances per 256-sample hop: the ISTFT then yields a continuous buzzy voice shaped by the mel envelope.
    A ConvNeXt backbone (Vocos: dim 512, intermediate 1536, 8 layers, kernel 7) adds a small term.
    """
    mels_in, bins = mel_to_linear.shape
    frames_first = g.op("Transpose", ["mels"], perm=[0, 2, 1])
    bin_index = np.arange(bins)
    comb = (-12.0 * np.sin(np.pi * bin_index / 6.0) ** 2).astype(np.float32)
    envelope = g.op(
        "Add",
        [
            g.op("MatMul", [frames_first, g.const(mel_to_linear, "mel_to_linear")]),
            g.const(log_offset + comb, "log_offset"),
        ],
    )
    embed = g.op(
        "Conv",
        ["mels", g.weight((dim, mels_in, 7), "embed"), g.const(np.zeros(dim, np.float32), "b")],
        kernel_shape=[7],
        pads=[3, 3],
    )
    h = g.rms_norm(g.op("Transpose", [embed], perm=[0, 2, 1]), dim)
    for _ in range(layers):
        update = g.rms_norm(g.depthwise_conv(h, dim, 7), dim)
        h = g.residual(h, g.feed_forward(update, dim, intermediate))
    head = g.op("Tanh", [g.linear(g.rms_norm(h, dim), dim, 2 * bins)])
    mag_net, phase_net = g.ops("Split", [head, g.const(np.array([bins, bins]))], 2, axis=2)
    log_mag = g.op("Add", [envelope, g.op("Mul", [mag_net, g.const(np.float32(0.05))])])
    mag = g.op("Exp", [g.op("Min", [log_mag, g.const(np.float32(math.log(100.0)))])])
    frames = g.op("Squeeze", [g.frame_count(frames_first), g.const(np.array([0]))])
    frame_index = g.op(
        "Unsqueeze",
        [g.op("Range", [g.const(np.array(0)), frames, g.const(np.array(1))]), g.const(np.array([1]))],
    )
    quarter_turns = g.op(
        "Mod", [g.op("Mul", [frame_index, g.const(bin_index.astype(np.int64), "bins")]), g.const(np.array(4))]
    )
    phase = g.op("Mul", [g.op("Cast", [quarter_turns], to=FLOAT), g.const(np.float32(math.pi / 2))])
    offsets = np.asarray(np.random.default_rng(3).uniform(0, 2 * np.pi, size=bins), dtype=np.float32)
    phase = g.op("Add", [phase, g.const(offsets, "phase_offset")])
    phase = g.op(
        "Add",
        [
            g.op("Unsqueeze", [phase, g.const(np.array([0]))]),
            g.op("Mul", [phase_net, g.const(np.float32(0.05))]),
        ],
    )
    for name, value in (("mag", mag), ("x", g.op("Cos", [phase])), ("y", g.op("Sin", [phase]))):
        g.nodes.append(oh.make_node("Transpose", [value], [name], perm=[0, 2, 1]))
    inputs = [oh.make_tensor_value_info("mels", FLOAT, ["N", mels_in, "L"])]
    return inputs, [oh.make_tensor_value_info(name, FLOAT, ["N", bins, "L"]) for name in ("mag", "x", "y")]
