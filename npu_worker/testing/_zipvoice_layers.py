"""Graph-building blocks for the synthetic ZipVoice model: a small builder over `onnx.helper` and
Zipformer-like layers with the real model's dimensions (see _zipvoice_graphs for the three models).

Opset 13 like the real export: Unsqueeze/Squeeze/Split/ReduceSum take axes/splits as inputs.
Two patterns are avoided because the QNN HTP simulator failed to finalize them in fp32 mode: Pad with
mode="edge", and an RMS norm with a learned scale (onnxruntime fuses it into SimplifiedLayerNormalization).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from onnx import helper as oh

OPSET = 13
FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64


class GraphBuilder:
    """Collects nodes and initializers; `op` returns the name of the node's (first) output."""

    def __init__(self, seed: int) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.rng = np.random.default_rng(seed)
        self._count = 0

    def _name(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def const(self, value: Any, hint: str = "c") -> str:
        array = np.asarray(value)
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        name = self._name(hint)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def weight(self, shape: tuple[int, ...], hint: str = "w", scale: float | None = None) -> str:
        fan_in = shape[0] if len(shape) == 2 else int(np.prod(shape[1:]))
        std = scale if scale is not None else 1.0 / math.sqrt(max(fan_in, 1))
        return self.const(self.rng.standard_normal(shape).astype(np.float32) * std, hint)

    def op(self, op_type: str, inputs: list[str], outputs: int = 1, **attrs: Any) -> str:
        names = [self._name(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(oh.make_node(op_type, inputs, names, **attrs))
        return names[0]

    def ops(self, op_type: str, inputs: list[str], outputs: int, **attrs: Any) -> list[str]:
        names = [self._name(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(oh.make_node(op_type, inputs, names, **attrs))
        return names

    # --- small layers -------------------------------------------------------------------------------
    def linear(self, x: str, d_in: int, d_out: int, bias: bool = True) -> str:
        y = self.op("MatMul", [x, self.weight((d_in, d_out))])
        return self.op("Add", [y, self.const(np.zeros(d_out, np.float32), "b")]) if bias else y

    def swish(self, x: str) -> str:
        return self.op("Mul", [x, self.op("Sigmoid", [x])])

    def swoosh(self, x: str, shift: float, offset: float) -> str:
        """Zipformer's SwooshL (shift 4, offset 0.035) / SwooshR (shift 1, offset 0.313261687) in the
        element-wise form the real ONNX export uses: logaddexp(0, x − shift) − 0.08·x − offset."""
        shifted = self.op("Sub", [x, self.const(np.float32(shift))])
        largest = self.op("Max", [shifted, self.const(np.float32(0.0))])
        softplus_tail = self.op(
            "Log",
            [
                self.op(
                    "Add",
                    [
                        self.op("Exp", [self.op("Neg", [self.op("Abs", [shifted])])]),
                        self.const(np.float32(1.0)),
                    ],
                )
            ],
        )
        linear = self.op(
            "Add", [self.op("Mul", [x, self.const(np.float32(0.08))]), self.const(np.float32(offset))]
        )
        return self.op("Sub", [self.op("Add", [largest, softplus_tail]), linear])

    def rms_norm(self, x: str, dim: int) -> str:
        """Zipformer's BiasNorm: x / rms(x − bias)."""
        centred = self.op("Sub", [x, self.const(np.zeros(dim, np.float32), "norm_bias")])
        mean_square = self.op("ReduceMean", [self.op("Mul", [centred, centred])], axes=[-1], keepdims=1)
        root = self.op("Sqrt", [self.op("Add", [mean_square, self.const(np.float32(1e-5))])])
        # No learned scale and x / root: with a scale (or as x * root^-1) onnxruntime fuses this into
        # SimplifiedLayerNormalization, which the QNN HTP simulator fails to finalize (MEM_ALLOC error).
        return self.op("Div", [x, root])

    def bypass(self, original: str, x: str, dim: int) -> str:
        """Zipformer's bypass module: original + (x − original)·c, c learned per channel."""
        scale = self.const(np.full(dim, 0.5, np.float32), "bypass")
        return self.op("Add", [original, self.op("Mul", [self.op("Sub", [x, original]), scale])])

    def residual(self, x: str, update: str, scale: float = 0.2) -> str:
        return self.op("Add", [x, self.op("Mul", [update, self.const(np.float32(scale))])])

    def feed_forward(self, x: str, dim: int, hidden: int) -> str:
        return self.linear(self.swoosh(self.linear(x, dim, hidden), 4.0, 0.035), hidden, dim)

    def heads(self, x: str, num_heads: int, head_dim: int, perm: list[int]) -> str:
        """(1, F, H·d) → (1, H, F, d) with perm [0,2,1,3], or (1, H, d, F) with perm [0,2,3,1]."""
        shaped = self.op("Reshape", [x, self.const(np.array([0, -1, num_heads, head_dim]))])
        return self.op("Transpose", [shaped], perm=perm)

    def merge_heads(self, x: str, width: int) -> str:
        merged = self.op("Transpose", [x], perm=[0, 2, 1, 3])
        return self.op("Reshape", [merged, self.const(np.array([0, -1, width]))])

    def frame_count(self, x: str) -> str:
        """Shape (1,) int64: the frame count of a (1, F, D) tensor."""
        return self.op("Slice", [self.op("Shape", [x]), self.const(np.array([1])), self.const(np.array([2]))])

    def scalar_frames(self, x: str, to: int) -> str:
        return self.op("Cast", [self.op("Squeeze", [self.frame_count(x), self.const(np.array([0]))])], to=to)

    def position_embedding(self, x: str, pos_dim: int) -> str:
        """(2F−1, pos_dim) sinusoids of the relative positions −(F−1)..F−1, compressed for long distances
        like Zipformer's CompactRelPositionalEncoding; computed once per stack."""
        frames = self.scalar_frames(x, FLOAT)
        start = self.op("Sub", [self.const(np.float32(1.0)), frames])
        positions = self.op("Range", [start, frames, self.const(np.float32(1.0))])
        compressed = self.op(
            "Div",
            [
                positions,
                self.op(
                    "Add",
                    [
                        self.const(np.float32(1.0)),
                        self.op("Div", [self.op("Abs", [positions]), self.const(np.float32(64.0))]),
                    ],
                ),
            ],
        )
        freqs = (1.0 / 10000 ** (np.arange(pos_dim // 2) / (pos_dim // 2))).astype(np.float32)[None, :]
        angles = self.op(
            "Mul", [self.op("Unsqueeze", [compressed, self.const(np.array([1]))]), self.const(freqs, "freqs")]
        )
        return self.op("Concat", [self.op("Sin", [angles]), self.op("Cos", [angles])], axis=1)

    def relative_scores(self, pos_query: str, pos_emb: str, dims: LayerDims) -> str:
        """(1, H, F, F) positional attention scores, as the real export computes them per layer: query
        part × projected position embedding over all 2F−1 offsets, then a GatherElements "rel shift"
        with index (F−1−i)+j built in the layer."""
        h, width = dims.heads, dims.pos_head_dim
        projected = self.op("MatMul", [pos_emb, self.weight((dims.pos_dim, h * width), "linear_pos")])
        projected = self.op("Reshape", [projected, self.const(np.array([-1, h, width]))])
        projected = self.op("Transpose", [projected], perm=[1, 2, 0])
        scores = self.op("MatMul", [self.heads(pos_query, h, width, [0, 2, 1, 3]), projected])
        frames = self.scalar_frames(pos_query, INT64)
        last = self.op("Sub", [frames, self.const(np.array(1))])
        rows = self.op("Range", [last, self.const(np.array(-1)), self.const(np.array(-1))])
        cols = self.op("Range", [self.const(np.array(0)), frames, self.const(np.array(1))])
        index = self.op(
            "Add",
            [
                self.op("Unsqueeze", [rows, self.const(np.array([1]))]),
                self.op("Unsqueeze", [cols, self.const(np.array([0]))]),
            ],
        )
        count = self.frame_count(pos_query)
        shape = self.op("Concat", [self.const(np.array([1, h])), count, count], axis=0)
        return self.op("GatherElements", [scores, self.op("Expand", [index, shape])], axis=3)

    def depthwise_conv(self, x: str, dim: int, kernel: int) -> str:
        """Depthwise 1-D convolution over frames of a (1, F, D) tensor, 'same' padding."""
        channels_first = self.op("Transpose", [x], perm=[0, 2, 1])
        w = self.weight((dim, 1, kernel), "dw", scale=1.0 / math.sqrt(kernel))
        conv = self.op(
            "Conv",
            [channels_first, w, self.const(np.zeros(dim, np.float32), "b")],
            group=dim,
            kernel_shape=[kernel],
            pads=[kernel // 2, kernel // 2],
        )
        return self.op("Transpose", [conv], perm=[0, 2, 1])


@dataclass(frozen=True)
class LayerDims:
    """Dimensions of one Zipformer-like layer (the real model's names)."""

    dim: int
    feedforward: int
    heads: int
    kernel: int
    query_head_dim: int = 32
    value_head_dim: int = 12
    pos_head_dim: int = 4
    pos_dim: int = 48


def zipformer_layer(g: GraphBuilder, x: str, dims: LayerDims, pos_emb: str) -> str:
    """One Zipformer2 encoder layer's work: 3 feed-forwards, attention weights shared by a non-linear
    attention and two self-attentions, 2 convolution modules, a norm. ~7.35 M parameters at dim 512."""
    d, h = dims.dim, dims.heads
    original = x
    x = g.residual(x, g.feed_forward(x, d, dims.feedforward * 3 // 4))
    # attention weights, computed once per layer (query, key and the positional query part)
    proj = g.linear(x, d, (2 * dims.query_head_dim + dims.pos_head_dim) * h)
    width = dims.query_head_dim * h
    query, key, pos_query = g.ops(
        "Split", [proj, g.const(np.array([width, width, dims.pos_head_dim * h]))], 3, axis=2
    )
    scores = g.op(
        "MatMul",
        [
            g.heads(query, h, dims.query_head_dim, [0, 2, 1, 3]),
            g.heads(key, h, dims.query_head_dim, [0, 2, 3, 1]),
        ],
    )
    scores = g.op(
        "Add",
        [
            g.op("Mul", [scores, g.const(np.float32(1 / math.sqrt(dims.query_head_dim)))]),
            g.relative_scores(pos_query, pos_emb, dims),
        ],
    )
    weights = g.op("Softmax", [scores], axis=-1)
    # non-linear attention
    hidden = d * 3 // 4
    s, v, y = g.ops(
        "Split", [g.linear(x, d, 3 * hidden), g.const(np.array([hidden, hidden, hidden]))], 3, axis=2
    )
    v = g.op("Mul", [v, g.op("Tanh", [s])])
    attended = g.merge_heads(g.op("MatMul", [weights, g.heads(v, h, hidden // h, [0, 2, 1, 3])]), hidden)
    x = g.residual(x, g.linear(g.op("Mul", [attended, y]), hidden, d))
    for index in range(2):
        values = g.heads(g.linear(x, d, dims.value_head_dim * h), h, dims.value_head_dim, [0, 2, 1, 3])
        attended = g.merge_heads(g.op("MatMul", [weights, values]), dims.value_head_dim * h)
        x = g.residual(x, g.linear(attended, dims.value_head_dim * h, d))
        a, b = g.ops("Split", [g.linear(x, d, 2 * d), g.const(np.array([d, d]))], 2, axis=2)
        conv = g.swoosh(
            g.depthwise_conv(g.op("Mul", [a, g.op("Sigmoid", [b])]), d, dims.kernel), 1.0, 0.313261687
        )
        x = g.residual(x, g.linear(conv, d, d))
        x = g.residual(x, g.feed_forward(x, d, dims.feedforward if index == 0 else dims.feedforward * 5 // 4))
        if index == 0:
            x = g.bypass(original, x, d)  # bypass_mid
    return g.bypass(original, g.rms_norm(x, d), d)


def downsample(g: GraphBuilder, x: str, factor: int, dim: int) -> str:
    """(1, F, D) → (1, ceil(F/f), D): pad to a multiple of f, then a softmax-weighted sum of each group."""
    frames = g.frame_count(x)
    factor_c = g.const(np.array([factor]))
    pad = g.op("Mod", [g.op("Sub", [factor_c, g.op("Mod", [frames, factor_c])]), factor_c])
    pads = g.op("Concat", [g.const(np.array([0, 0, 0, 0])), pad, g.const(np.array([0]))], axis=0)
    padded = g.op("Pad", [x, pads])  # mode "edge" fails on the QNN HTP simulator
    grouped = g.op("Reshape", [padded, g.const(np.array([0, -1, factor, dim]))])
    weights = np.exp(g.rng.standard_normal((factor, 1)) * 0.1)
    weights = (weights / weights.sum()).astype(np.float32)
    weighted = g.op("Mul", [grouped, g.const(weights, "down")])
    return g.op("ReduceSum", [weighted, g.const(np.array([2]))], keepdims=0)


def upsample(g: GraphBuilder, x: str, factor: int, dim: int, frames: str) -> str:
    """(1, F/f, D) → (1, F, D): repeat each frame f times, cut to `frames`."""
    grouped = g.op("Unsqueeze", [x, g.const(np.array([2]))])
    repeated = g.op("Expand", [grouped, g.const(np.array([1, 1, factor, 1]))])
    flat = g.op("Reshape", [repeated, g.const(np.array([0, -1, dim]))])
    return g.op("Slice", [flat, g.const(np.array([0])), frames, g.const(np.array([1]))])
