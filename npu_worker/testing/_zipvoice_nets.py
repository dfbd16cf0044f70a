"""The text encoder and flow-matching decoder of ZipVoice(-Distill), with the real export's structure.

Both are TTSZipformers: in_proj → Zipformer2 stacks → out_proj over (T, N, C). The decoder has five stacks
with downsampling [1, 2, 4, 2, 1] and a time embedding (plus, for Distill, a guidance-scale embedding)
added inside every layer; the text encoder has one stack at full rate and masks its padding token. The
text encoder's wrapper computes the output frame count in the graph, F = ceil(P / Tp · (Tp + Nt) / speed)
(speed also scales the prompt part: the quirk the engine corrects), repeats each token's vector
floor(F / (Tp + Nt)) times and fills the rest with the padding position's vector.

A *guide* (scope `/guide`, 20-odd nodes of op types the real graph also has) makes the random-weight model
behave like speech for the engine's tests: the text encoder adds each token's mel (from a formant
synthesiser) to its output, and the decoder adds a velocity that drives x towards the conditions
(v = (target − x) / (1 − 0.95 t), the prompt where speech_condition is set, the text condition with a
guidance-dependent contrast elsewhere). The network's own output is kept small (out_proj gain 0.05), so
execution providers and quantisation still change the result measurably.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from onnx import helper as oh

from npu_worker.testing._onnx_trace import FLOAT, INT64, Tracer
from npu_worker.testing._zipformer import LayerDims, layer_parameter_count, swoosh_r
from npu_worker.testing._zipformer_stack import decoder_stack, stack_layers, stack_parameter_count

GUIDANCE_EMBED_DIM = 192
"""TTSZipformer's guidance-scale embedding width (fixed in code, not a config value)."""
NETWORK_GAIN = 0.05


@dataclass(frozen=True)
class DecoderShape:
    dims: LayerDims
    layers: tuple[int, ...]
    downsampling: tuple[int, ...]
    kernels: tuple[int, ...]
    time_embed_dim: int = 192


def timestep_embedding(g: Tracer, value: str, dim: int) -> str:
    """Sinusoidal embedding (N,) → (N, dim): cos then sin of value · 10000^(−k/half)."""
    half = dim // 2
    freqs = np.exp(-math.log(10000.0) * np.arange(half) / half)[None, :]
    arg = g.op("Mul", [g.op("Cast", [g.unsqueeze(value, 1)], to=FLOAT), g.const(freqs)])
    return g.op("Concat", [g.op("Cos", [arg]), g.op("Sin", [arg])], axis=-1)


def _per_batch(g: Tracer, scalar: str, batch: str) -> str:
    """A 0-d input broadcast to (N,), the exporter's Expand + Tile."""
    sizes = [g.shape_of([batch]) for _ in range(2)]
    ones = g.op("ConstantOfShape", [g.op("Shape", [sizes[0]])], value=oh.make_tensor("one", INT64, [1], [1]))
    return g.op("Tile", [g.op("Expand", [scalar, ones]), sizes[1]])


def _decoder_guide(g: Tracer, shape_feat: np.ndarray, net: str, t: str, guidance: str) -> str:
    """Adds the analytic velocity (see the module docstring) to the network's (N, T, C) output."""
    with g.scope("guide"):
        prompt = g.op(
            "Where", [g.op("Equal", ["speech_condition", g.const(0.0)]), g.const(0.0), g.const(1.0)]
        )
        contrast = g.op(
            "Mul",
            [g.op("Sub", ["text_condition", g.const(shape_feat)]), g.op("Mul", [guidance, g.const(0.1)])],
        )
        text_target = g.op("Add", ["text_condition", contrast])
        target = g.op(
            "Add", ["speech_condition", g.op("Sub", [text_target, g.op("Mul", [prompt, text_target])])]
        )
        rate = g.op("Sub", [g.const(1.0), g.op("Mul", [t, g.const(0.95)])])
        velocity = g.op("Div", [g.op("Sub", [target, "x"]), rate])
        return g.output("Add", [net, velocity], "v")


def _decoder_net(
    g: Tracer, xt: str, time_values: str, guidance_values: str | None, shape: DecoderShape
) -> str:
    """TTSZipformer: (N, T, 300) → (N, T, 100)."""
    d, e = shape.dims, shape.time_embed_dim
    with g.scope("fm_decoder"):
        x = g.op("Transpose", [xt], perm=[1, 0, 2])
        with g.scope("in_proj"):
            x = g.linear(x, 3 * 100, d.dim, "fm_decoder.in_proj")
        embed = timestep_embedding(g, time_values, e)
        if guidance_values is not None:
            guidance_embed = timestep_embedding(g, guidance_values, GUIDANCE_EMBED_DIM)
            with g.scope("guidance_scale_embed"):
                guidance_embed = g.linear(guidance_embed, GUIDANCE_EMBED_DIM, e, "", bias=False)
            embed = g.op("Add", [embed, guidance_embed])
        with g.scope("time_embed", "0"):
            embed = g.gemm(embed, e, 2 * e, "fm_decoder.time_embed.0")
        with g.scope("time_embed", "1"):
            embed = swoosh_r(g, embed)
        with g.scope("time_embed", "2"):
            embed = g.gemm(embed, 2 * e, e, "fm_decoder.time_embed.2")
        shared: dict = {}
        stacks = zip(shape.layers, shape.downsampling, shape.kernels, strict=True)
        for index, (layers, factor, kernel) in enumerate(stacks):
            dims = LayerDims(**{**d.__dict__, "kernel": kernel})
            x = decoder_stack(g, x, index, layers, factor, dims, embed, e, shared)
        with g.scope("out_proj"):
            x = g.linear(x, d.dim, 100, "fm_decoder.out_proj", gain=NETWORK_GAIN)
        return g.op("Transpose", [x], perm=[1, 0, 2])


def fm_decoder(g: Tracer, shape: DecoderShape, mean_feature: np.ndarray, distill: bool) -> tuple[list, list]:
    """t, x, text_condition, speech_condition, guidance_scale → v, as OnnxFlowMatchingModel exports it.

    Non-distill ZipVoice runs the network on a batch of two (unconditional + conditional) and mixes
    them with the guidance scale, so a step costs two passes."""
    if distill:
        xt = g.op("Concat", ["x", "text_condition", "speech_condition"], axis=2)
        batch = g.size(xt, 0)
        t, guidance = _per_batch(g, "t", batch), _per_batch(g, "guidance_scale", batch)
        net = _decoder_net(g, xt, t, guidance, shape)
        guide_scale = "guidance_scale"
    else:
        late = g.op("Greater", ["t", g.const(0.5)])
        zeros = g.op("Mul", ["text_condition", g.const(0.0)])
        speech = g.op("Where", [late, g.op("Mul", ["speech_condition", g.const(0.0)]), "speech_condition"])
        x2 = g.op("Concat", ["x", "x"], axis=0)
        text2 = g.op("Concat", [zeros, "text_condition"], axis=0)
        speech2 = g.op("Concat", [speech, "speech_condition"], axis=0)
        xt = g.op("Concat", [x2, text2, speech2], axis=2)
        net = _decoder_net(g, xt, _per_batch(g, "t", g.size(xt, 0)), None, shape)
        uncond, cond = g.chunk(net, 2, axis=0)
        guide_scale = g.op("Where", [late, "guidance_scale", g.op("Mul", ["guidance_scale", g.const(2.0)])])
        gain = g.op("Add", [g.const(1.0), guide_scale])
        net = g.op("Sub", [g.op("Mul", [gain, cond]), g.op("Mul", [guide_scale, uncond])])
    _decoder_guide(g, mean_feature, net, "t", guide_scale)
    frames: list[str | int | None] = ["N", "T", 100]
    inputs = [
        oh.make_tensor_value_info("t", FLOAT, []),
        oh.make_tensor_value_info("x", FLOAT, frames),
        oh.make_tensor_value_info("text_condition", FLOAT, frames),
        oh.make_tensor_value_info("speech_condition", FLOAT, frames),
        oh.make_tensor_value_info("guidance_scale", FLOAT, []),
    ]
    return inputs, [oh.make_tensor_value_info("v", FLOAT, frames)]


def _padded_tokens(g: Tracer) -> tuple[str, str, str]:
    """prompt_tokens + tokens + one padding token; the token count; the (1, T + 1) padding mask."""
    joined = g.op("Concat", ["prompt_tokens", "tokens"], axis=1)
    pads = g.op(
        "Concat",
        [
            g.const([0, 1]),
            g.op("ConstantOfShape", [g.const([2])], value=oh.make_tensor("z", INT64, [1], [0])),
        ],
        axis=0,
    )
    pads = g.op(
        "Transpose",
        [g.slice(g.op("Reshape", [pads, g.const([-1, 2])]), 0, -1, -(2**63) + 1, -1)],
        perm=[1, 0],
    )
    pads = g.op("Cast", [g.op("Reshape", [pads, g.const([-1])])], to=INT64)
    padded = g.op("Pad", [joined, pads, g.const(0)], mode="constant")
    count = g.op("Sub", [g.size(padded, 1), g.const(1)])
    positions = g.op(
        "Range", [g.const(0), g.op("Cast", [g.op("Add", [count, g.const(1)])], to=INT64), g.const(1)]
    )
    mask = g.op("Unsqueeze", [g.op("Equal", [positions, count]), g.const([0])])
    return padded, count, mask


def _frames(g: Tracer, count: str) -> tuple[str, str]:
    """floor(F / (Tp + Nt)) and F = ceil(P / Tp · (Tp + Nt) / speed), both 0-d int64."""
    per_token = g.op(
        "Div",
        [
            g.op("Cast", ["prompt_features_len"], to=FLOAT),
            g.op("Cast", [g.size("prompt_tokens", 1)], to=FLOAT),
        ],
    )
    scaled = g.op("Div", [g.op("Mul", [per_token, g.op("Cast", [count], to=FLOAT)]), "speed"])
    frames = g.op("Cast", [g.op("Ceil", [scaled])], to=INT64)
    quotient = g.op("Div", [frames, count])
    negative = g.op("Xor", [g.op("Less", [frames, g.const(0)]), g.op("Less", [count, g.const(0)])])
    inexact = g.op("Not", [g.op("Equal", [g.op("Mod", [frames, count], fmod=0), g.const(0)])])
    floor = g.op("Where", [g.op("And", [negative, inexact]), g.op("Sub", [quotient, g.const(1)]), quotient])
    per_token_frames = g.op("Cast", [floor], to=INT64)
    scalar = np.zeros(0, np.int64)  # Reshape to shape []: scalars may be fed as [1]
    return g.op("Reshape", [per_token_frames, g.const(scalar)]), g.op("Reshape", [frames, g.const(scalar)])


def text_encoder(
    g: Tracer, token_table: np.ndarray, embed_dim: int, layers: int, dims: LayerDims
) -> tuple[list, list]:
    """tokens, prompt_tokens, prompt_features_len, speed → text_condition (N, F, 100)."""
    vocab, feat = token_table.shape
    padded, count, mask = _padded_tokens(g)
    with g.scope("embed"):
        embedded = g.op("Gather", [g.param("embed.weight", g.random((vocab, embed_dim), 1.0)), padded])
    with g.scope("text_encoder"):
        x = g.op("Transpose", [embedded], perm=[1, 0, 2])
        with g.scope("in_proj"):
            x = g.linear(x, embed_dim, dims.dim, "text_encoder.in_proj")
        with g.scope("0"):
            x = stack_layers(g, x, layers, dims, "text_encoder.encoders.0", None, 0, mask, "layers.{}")
        with g.scope("out_proj"):
            x = g.linear(x, dims.dim, feat, "text_encoder.out_proj", gain=NETWORK_GAIN)
        x = g.op("Transpose", [x], perm=[1, 0, 2])
    with g.scope("guide"):
        x = g.op("Add", [x, g.op("Gather", [g.const(token_table), padded], axis=0)])
    per_token, frames = _frames(g, count)
    body = g.unsqueeze(g.slice(x, 1, 0, -1), 2)
    body = g.expand(body, [-1, -1, per_token, -1])
    body = g.reshape(body, [g.size(x, 0), -1, g.size(x, 2)])
    tail = g.slice(x, 1, -1, np.iinfo(np.int64).max)
    tail = g.expand(tail, [-1, g.op("Sub", [frames, g.size(body, 1)]), -1])
    g.output("Concat", [body, tail], "text_condition", axis=1)
    inputs = [
        oh.make_tensor_value_info("tokens", INT64, ["N", "T"]),
        oh.make_tensor_value_info("prompt_tokens", INT64, ["N", "T"]),
        oh.make_tensor_value_info("prompt_features_len", INT64, []),
        oh.make_tensor_value_info("speed", FLOAT, []),
    ]
    return inputs, [
        oh.make_tensor_value_info("text_condition", FLOAT, ["N", "T", "Concattext_condition_dim_2"])
    ]


def decoder_parameter_count(shape: DecoderShape, distill: bool = True) -> int:
    """Weights of the flow-matching decoder, from the architecture (in_proj, embeddings, stacks, out_proj)."""
    d, e = shape.dims, shape.time_embed_dim
    count = 300 * d.dim + d.dim + (GUIDANCE_EMBED_DIM * e if distill else 0)
    count += e * 2 * e + 2 * e + 2 * e * e + e + d.dim * 100 + 100
    for layers, factor, kernel in zip(shape.layers, shape.downsampling, shape.kernels, strict=True):
        count += stack_parameter_count(LayerDims(**{**d.__dict__, "kernel": kernel}), layers, factor, e)
    return count


def text_encoder_parameter_count(dims: LayerDims, layers: int, embed_dim: int) -> int:
    """Weights of the text encoder without its token embedding."""
    return embed_dim * dims.dim + dims.dim + layers * layer_parameter_count(dims) + dims.dim * 100 + 100
