"""Zipformer2 stacks as ZipVoice uses them: positional encoding, time embedding, down- and upsampling.

A stack with downsampling factor ds > 1 (DownsampledZipformer2Encoder) runs its layers at 1/ds of the
frame rate: SimpleDownsample pads the frame axis to a multiple of ds by repeating the last frame, reshapes
to (T/ds, ds, N, C) and sums the ds frames with softmax weights; SimpleUpsample repeats each frame ds times;
the result is cut back to T frames and mixed with the stack's input by a bypass ("out_combiner"). The
frame arithmetic runs in the graph on Shape/Gather values, exactly where onnxruntime's constant folding
acts once the shapes are fixed.

CompactRelPositionalEncoding: a table for relative positions −999..999 is a constant; longer inputs take
an `If` branch that computes the rows in the graph. Positions are compressed logarithmically, mapped
through atan, and expanded into cos/sin pairs; the last column is a constant 1.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from onnx import helper as oh
from onnx import numpy_helper

from npu_worker.testing._onnx_trace import BOOL, FLOAT, INT64, Tracer
from npu_worker.testing._zipformer import LayerDims, bypass, layer_parameter_count, swoosh_r, zipformer_layer

TABLE_ROWS = 1999
"""Rows of the precomputed positional table (relative positions −999..999)."""


def positional_table(positions: np.ndarray, pos_dim: int) -> np.ndarray:
    """CompactRelPositionalEncoding rows for the given relative positions: (len, pos_dim) float32."""
    compression = math.sqrt(pos_dim)
    x = positions.astype(np.float64)
    compressed = compression * np.sign(x) * (np.log(np.abs(x) + compression) - math.log(compression))
    angles = np.arctan(compressed / (pos_dim / (2 * math.pi)))[:, None] * (1 + np.arange(pos_dim // 2))
    table = np.empty((len(x), pos_dim))
    table[:, 0::2], table[:, 1::2] = np.cos(angles), np.sin(angles)
    table[:, -1] = 1.0
    return table.astype(np.float32)


def _long_input_branch(g: Tracer, seq: str, pos_dim: int) -> object:
    """The `If` else-branch: the table for 2T − 1 positions computed in the graph."""
    nodes: list = []

    def node(op: str, inputs: list[str], **attrs: Any) -> str:
        name = f"{g.scope_name()}/else/{op}_{len(nodes)}"
        nodes.append(oh.make_node(op, inputs, [name + "_out"], name=name, **attrs))
        return name + "_out"

    def const(value: Any, dtype: Any) -> str:
        array = np.asarray(value, dtype=dtype)
        return node("Constant", [], value=numpy_helper.from_array(array))

    compression = math.sqrt(pos_dim)
    start = node("Neg", [node("Sub", [seq, const(1, np.int64)])])
    x = node(
        "Unsqueeze",
        [node("Cast", [node("Range", [start, seq, const(1, np.int64)])], to=FLOAT), const([1], np.int64)],
    )
    log = node(
        "Sub",
        [
            node("Log", [node("Add", [node("Abs", [x]), const(compression, np.float32)])]),
            const(math.log(compression), np.float32),
        ],
    )
    compressed = node("Mul", [node("Mul", [node("Sign", [x]), const(compression, np.float32)]), log])
    angles = node("Atan", [node("Div", [compressed, const(pos_dim / (2 * math.pi), np.float32)])])
    angles = node("Mul", [angles, const(1 + np.arange(pos_dim // 2), np.float32)])
    pairs = [node("Unsqueeze", [node(op, [angles]), const([-1], np.int64)]) for op in ("Cos", "Sin")]
    table = node("Reshape", [node("Concat", pairs, axis=-1), const([-1, pos_dim], np.int64)])
    keep = np.ones(pos_dim, np.float32)
    keep[-1] = 0.0
    out = node("Add", [node("Mul", [table, const(keep, np.float32)]), const(1.0 - keep, np.float32)])
    output = oh.make_tensor_value_info(out, FLOAT, None)
    return oh.make_graph(nodes, "long_input", [], [output])


def encoder_pos(g: Tracer, x: str, pos_dim: int) -> str:
    """(1, 2T − 1, pos_dim) positional embedding for the T frames of x."""
    seq = g.size(x, 0)
    rows = g.op("Sub", [g.op("Mul", [seq, g.const(2)]), g.const(1)])
    short = g.op("Cast", [g.op("GreaterOrEqual", [g.const(TABLE_ROWS), rows])], to=BOOL)
    table = positional_table(np.arange(TABLE_ROWS) - TABLE_ROWS // 2, pos_dim)
    then_out = f"{g.scope_name()}/table"
    then_graph = oh.make_graph(
        [oh.make_node("Constant", [], [then_out], value=numpy_helper.from_array(table))],
        "short_input",
        [],
        [oh.make_tensor_value_info(then_out, FLOAT, None)],
    )
    pe = g.op("If", [short], then_branch=then_graph, else_branch=_long_input_branch(g, seq, pos_dim))
    centre = [
        g.op("Cast", [g.op("Cast", [g.op("Div", [g.size(pe, 0), g.const(2)])], to=INT64)], to=INT64)
        for _ in range(2)
    ]
    start = g.op("Add", [g.op("Sub", [centre[0], seq]), g.const(1)])
    end = g.op("Add", [centre[1], seq])
    window = g.slice(pe, 0, start, end)
    window = g.slice(window, 1, 0, np.iinfo(np.int64).max)
    return g.unsqueeze(window, 0)


def downsample(g: Tracer, x: str, factor: int) -> tuple[str, str]:
    """SimpleDownsample: (T, N, C) → (ceil(T/ds), N, C); also returns T."""
    seq, batch, channels = g.size(x, 0), g.size(x, 1), g.size(x, 2)
    reduced = g.op("Div", [g.op("Sub", [g.op("Add", [seq, g.const(factor)]), g.const(1)]), g.const(factor)])
    reduced = g.op("Cast", [g.op("Cast", [reduced], to=INT64)], to=INT64)
    pad = g.op("Sub", [g.op("Mul", [reduced, g.const(factor)]), seq])
    last = g.slice(x, 0, g.op("Sub", [seq, g.const(1)]), np.iinfo(np.int64).max)
    padded = g.op("Concat", [x, g.expand(last, [pad, batch, channels])], axis=0)
    grouped = g.reshape(padded, [reduced, factor, batch, channels])
    weights = np.exp(g.random((factor,), 1.0))
    w = g.param(g.global_name("onnx::Mul"), (weights / weights.sum()).reshape(factor, 1, 1))
    return g.op("ReduceSum", [g.op("Mul", [grouped, w]), g.axes(1)], keepdims=0), seq


def upsample(g: Tracer, x: str, factor: int) -> str:
    """SimpleUpsample: (T', N, C) → (T'·ds, N, C), each frame repeated."""
    seq, batch, channels = g.size(x, 0), g.size(x, 1), g.size(x, 2)
    repeated = g.expand(g.unsqueeze(x, 1), [seq, factor, batch, channels])
    return g.reshape(repeated, [g.op("Mul", [seq, g.const(factor)]), batch, channels])


def stack_layers(
    g: Tracer,
    x: str,
    layers: int,
    d: LayerDims,
    prefix: str,
    time_act: str | None,
    time_dim: int,
    mask: str | None = None,
    layer_scope: str = "{}",
) -> str:
    """Zipformer2Encoder: positional embedding, the stack's time embedding, then its layers."""
    with g.scope("encoder_pos"):
        pos_emb = encoder_pos(g, x, d.pos_dim)
    time_emb = None
    if time_act is not None:
        with g.scope("time_emb", "1"):
            time_emb = g.gemm(time_act, time_dim, d.dim, f"{prefix}.time_emb.1")
    masks: dict[str, str] = {}
    for j in range(layers):
        with g.scope(layer_scope.format(j)):
            x = zipformer_layer(g, x, pos_emb, time_emb, d, f"{prefix}.layers.{j}", mask, masks)
    return x


def decoder_stack(
    g: Tracer,
    x: str,
    index: int,
    layers: int,
    factor: int,
    d: LayerDims,
    time_embed: str,
    time_dim: int,
    shared: dict,
) -> str:
    """One of the decoder's stacks; `shared` carries the SwooshR of the time embedding, computed once."""
    prefix = f"fm_decoder.encoders.{index}"
    with g.scope(str(index)):
        if "time_act" not in shared:
            with g.scope("time_emb", "0"):
                shared["time_act"] = swoosh_r(g, time_embed)
        if factor == 1:
            return stack_layers(g, x, layers, d, prefix, shared["time_act"], time_dim)
        with g.scope("downsample"):
            y, seq = downsample(g, x, factor)
        with g.scope("encoder"):
            y = stack_layers(g, y, layers, d, f"{prefix}.encoder", shared["time_act"], time_dim)
        with g.scope("upsample"):
            y = upsample(g, y, factor)
        y = g.slice(y, 0, 0, seq)
        with g.scope("out_combiner"):
            return bypass(g, x, y, d.dim, f"{prefix}.out_combiner")


def stack_parameter_count(d: LayerDims, layers: int, factor: int, time_dim: int) -> int:
    """Weights of one decoder stack (layers, time embedding, downsample weights, out_combiner)."""
    count = layers * layer_parameter_count(d) + time_dim * d.dim + d.dim
    return count + (factor + d.dim if factor > 1 else 0)
