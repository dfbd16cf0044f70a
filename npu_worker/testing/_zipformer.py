"""One Zipformer2 layer as ZipVoice uses it, written as ONNX with the exporter's lowering (see _onnx_trace).

Tensors are (T, N, C), frames first, as in the PyTorch model. A layer is, in order: time embedding added,
feed-forward 1, non-linear attention (reusing head 0 of the attention weights), self-attention 1, time
embedding, convolution module 1, feed-forward 2, a mid-layer bypass, self-attention 2, time embedding,
convolution module 2, feed-forward 3, BiasNorm, and a bypass back to the layer input. The attention
weights (relative positional multi-head attention) are computed once per layer and shared by the
non-linear attention and both self-attentions. The text encoder's layers have no time embedding and mask
the padded key positions instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from npu_worker.testing._onnx_trace import BOOL, FLOAT, INT64, Tracer, int64_one


@dataclass(frozen=True)
class LayerDims:
    """Widths of one Zipformer2 stack (the real model's hyper-parameter names)."""

    dim: int
    feedforward: int
    heads: int
    kernel: int
    query_head_dim: int = 32
    value_head_dim: int = 12
    pos_head_dim: int = 4
    pos_dim: int = 48


def layer_parameter_count(d: LayerDims) -> int:
    """Weights of one layer, from the architecture (checked against built graphs by the tests)."""
    c, h = d.dim, d.heads
    attn_in = (2 * d.query_head_dim + d.pos_head_dim) * h
    ffs = (d.feedforward * 3 // 4, d.feedforward, d.feedforward * 5 // 4)
    hidden = 3 * c // 4
    count = c * attn_in + attn_in + d.pos_dim * d.pos_head_dim * h
    count += sum(2 * c * f + f + c for f in ffs)
    count += c * 3 * hidden + 3 * hidden + hidden * c + c
    count += 2 * (c * h * d.value_head_dim + h * d.value_head_dim + h * d.value_head_dim * c + c)
    count += 2 * (c * 2 * c + 2 * c + c * d.kernel + c + c * c + c)
    return count + c + 1 + 2 * c  # norm bias + log_scale, two bypass scales


def swoosh_linear(g: Tracer, x: str, kind: str, d_in: int, d_out: int, prefix: str) -> str:
    """ActivationDropoutAndLinear: SwooshL ("l") or SwooshR ("r") in the exported softplus form, then Linear."""
    shift, offset = (4.0, 0.035) if kind == "l" else (1.0, 0.313261687518223)
    with g.scope("out_proj"):
        x = g.op("Cast", [x], to=FLOAT)
        shifted = g.op("Sub", [x, g.const(shift)])
        softplus = g.op(
            "Cast", [g.op("Log", [g.op("Add", [g.op("Exp", [shifted]), g.const(1.0)])])], to=FLOAT
        )
        softplus = g.op("Where", [g.op("Equal", [softplus, g.const(np.inf)]), shifted, softplus])
        y = g.op("Sub", [g.op("Sub", [softplus, g.op("Mul", [x, g.const(0.08)])]), g.const(offset)])
        w = g.matmul_weight(d_in, d_out)
        return g.op(
            "Add", [g.param(f"{prefix}.out_proj.bias", g.random((d_out,), 0.02)), g.op("MatMul", [y, w])]
        )


def swoosh_r(g: Tracer, x: str) -> str:
    """The SwooshR module on its own (time embeddings): logaddexp(0, x − 1) − 0.08·x − 0.313."""
    shifted = g.op("Sub", [x, g.const(1.0)])
    largest = g.op("Max", [g.const(0.0), shifted])
    tail = g.op(
        "Log",
        [
            g.op(
                "Add",
                [
                    g.const(1.0),
                    g.op("Exp", [g.op("Neg", [g.op("Abs", [g.op("Sub", [g.const(0.0), shifted])])])]),
                ],
            )
        ],
    )
    y = g.op("Sub", [g.op("Add", [largest, tail]), g.op("Mul", [x, g.const(0.08)])])
    return g.op("Sub", [y, g.const(0.313261687518223)])


def feed_forward(g: Tracer, x: str, d: LayerDims, hidden: int, prefix: str) -> str:
    with g.scope("in_proj"):
        h = g.linear(x, d.dim, hidden, f"{prefix}.in_proj")
    return swoosh_linear(g, h, "l", hidden, d.dim, prefix)


def attention_weights(
    g: Tracer,
    x: str,
    pos_emb: str,
    d: LayerDims,
    prefix: str,
    key_mask: str | None,
    masks: dict[str, str] | None = None,
) -> tuple[str, str | None]:
    """RelPositionMultiheadAttentionWeights: (H, N, T, T) softmax of content + relative-position scores.

    With a (N, T) `key_mask` (True = padding) the masked keys get −1000; the mask is also returned
    as (N, 1, T) for the convolution modules. `masks` is shared by the layers of a stack: the exporter's
    common-subexpression elimination leaves one Unsqueeze of the mask, in the first layer, for all of them."""
    qd, pd, h = d.query_head_dim, d.pos_head_dim, d.heads
    with g.scope("in_proj"):
        proj = g.linear(x, d.dim, (2 * qd + pd) * h, f"{prefix}.in_proj")
    seq, batch = g.size(proj, 0), g.size(proj, 1)
    q = g.slice(proj, 2, 0, qd * h)
    k = g.slice(proj, 2, qd * h, 2 * qd * h)
    p = g.slice(proj, 2, 2 * qd * h, np.iinfo(np.int64).max)
    q = g.op("Transpose", [g.reshape(q, [seq, batch, h, qd])], perm=[2, 1, 0, 3])
    p = g.op("Transpose", [g.reshape(p, [seq, batch, h, pd])], perm=[2, 1, 0, 3])
    k = g.op("Transpose", [g.reshape(k, [seq, batch, h, qd])], perm=[2, 1, 3, 0])
    scores = g.op("MatMul", [q, k])
    shifted = _relative_position_scores(g, p, pos_emb, seq, d)
    scores = g.op("Add", [scores, shifted])
    scores, mask = _masked_keys(g, scores, key_mask, masks)
    return g.op("Softmax", [scores], axis=-1), mask


def _relative_position_scores(g: Tracer, p: str, pos_emb: str, seq: str, d: LayerDims) -> str:
    """The (H, N, T, T) relative-position scores: the query's position part against every relative
    position (2T − 1 of them), shifted so each row lines up with the keys, as the exporter's graph does."""
    pd, h = d.pos_head_dim, d.heads
    with g.scope("linear_pos"):
        pos = g.op("MatMul", [pos_emb, g.matmul_weight(d.pos_dim, h * pd)])
    width = g.op("Sub", [g.op("Mul", [seq, g.const(2)]), g.const(1)])
    pos = g.op("Transpose", [g.reshape(pos, [-1, width, h, pd])], perm=[2, 0, 3, 1])
    pos_scores = g.op("MatMul", [p, pos])  # (H, N, T, 2T − 1)
    dims = [g.size(pos_scores, axis) for axis in range(4)]
    rows = g.op(
        "Range", [g.op("Cast", [g.op("Sub", [dims[2], g.const(1)])], to=INT64), g.const(-1), g.const(-1)]
    )
    cols = g.op("Range", [g.const(0), g.op("Cast", [seq], to=INT64), g.const(1)])
    heads_batch = g.op("Mul", [dims[1], dims[0]])
    count = g.shape_of([heads_batch])
    ones = g.op("ConstantOfShape", [g.op("Shape", [count])], value=int64_one())
    rows = g.op("Tile", [g.op("Expand", [rows, ones]), g.shape_of([heads_batch])])
    index = g.op("Add", [g.op("Unsqueeze", [rows, g.const([-1])]), cols])
    flat = g.op(
        "Reshape",
        [pos_scores, g.op("Concat", [g.const([-1]), g.op("Unsqueeze", [dims[3], g.axes(0)])], axis=0)],
    )
    shifted = g.reshape(g.op("GatherElements", [flat, index], axis=1), [dims[0], dims[1], dims[2], seq])
    return shifted


def _masked_keys(
    g: Tracer, scores: str, key_mask: str | None, masks: dict[str, str] | None
) -> tuple[str, str | None]:
    """`scores` with the padded keys at −1000, and the (N, 1, T) mask (one Unsqueeze per stack)."""
    mask = None
    if key_mask is not None:
        masks = {} if masks is None else masks
        if key_mask not in masks:
            masks[key_mask] = g.op("Unsqueeze", [key_mask, g.const([1])])
        mask = masks[key_mask]
        scores = g.op("Where", [g.op("Cast", [mask], to=BOOL), g.const(-1000.0), scores])
    return scores, mask


def nonlin_attention(g: Tracer, x: str, weights: str, d: LayerDims, prefix: str) -> str:
    """NonlinAttention: tanh-gated values mixed by attention head 0, gated again, projected back."""
    hidden = 3 * d.dim // 4
    with g.scope("in_proj"):
        proj = g.linear(x, d.dim, 3 * hidden, f"{prefix}.in_proj")
    seq, batch = g.size(proj, 0), g.size(proj, 1)
    gate, values, out_gate = g.chunk(proj, 3)
    with g.scope("tanh"):
        gate = g.op("Tanh", [gate])
    gate = g.reshape(g.op("Unsqueeze", [gate, g.const([-1])]), [seq, batch, hidden])
    values = g.op("Mul", [values, gate])
    heads = g.size(weights, 0)
    values = g.reshape(values, [g.size(values, 0), g.size(values, 1), heads, -1])
    mixed = g.op("MatMul", [weights, g.op("Transpose", [values], perm=[2, 1, 0, 3])])
    mixed = g.reshape(g.op("Transpose", [mixed], perm=[2, 1, 0, 3]), [seq, batch, -1])
    gated = g.op("Mul", [mixed, out_gate])
    with g.scope("out_proj"):
        return g.linear(gated, hidden, d.dim, f"{prefix}.out_proj")


def self_attention(g: Tracer, x: str, weights: str, d: LayerDims, prefix: str, shared: dict) -> str:
    """SelfAttention: values per head, mixed by the shared attention weights (whose head count the
    exported graph reads once per layer: `shared`)."""
    width = d.heads * d.value_head_dim
    seq, batch = g.size(x, 0), g.size(x, 1)
    if "heads" not in shared:
        shared["heads"] = g.size(weights, 0)
    heads = shared["heads"]
    with g.scope("in_proj"):
        values = g.linear(x, d.dim, width, f"{prefix}.in_proj")
    values = g.op("Transpose", [g.reshape(values, [seq, batch, heads, -1])], perm=[2, 1, 0, 3])
    head_dim = g.size(values, 3)
    mixed = g.op("Transpose", [g.op("MatMul", [weights, values])], perm=[2, 1, 0, 3])
    mixed = g.reshape(mixed, [seq, batch, g.op("Mul", [heads, head_dim])])
    with g.scope("out_proj"):
        return g.linear(mixed, width, d.dim, f"{prefix}.out_proj")


def conv_module(g: Tracer, x: str, d: LayerDims, prefix: str, pad_mask: str | None) -> str:
    """ConvolutionModule: GLU-style gate, depthwise conv over frames, SwooshR + Linear."""
    with g.scope("in_proj"):
        proj = g.linear(x, d.dim, 2 * d.dim, f"{prefix}.in_proj")
    values, gate = g.chunk(proj, 2)
    with g.scope("sigmoid"):
        gate = g.op("Sigmoid", [gate])
    y = g.op("Transpose", [g.op("Mul", [values, gate])], perm=[1, 2, 0])  # (N, C, T)
    if pad_mask is not None:
        masked = g.op("Cast", [g.op("Expand", [pad_mask, g.op("Shape", [y])])], to=BOOL)
        y = g.op("Where", [masked, g.const(0.0), y])
    with g.scope("depthwise_conv"):
        w = g.param(
            f"{prefix}.depthwise_conv.weight", g.random((d.dim, 1, d.kernel), 1 / math.sqrt(d.kernel))
        )
        b = g.param(f"{prefix}.depthwise_conv.bias", g.random((d.dim,), 0.02))
        pad = d.kernel // 2
        y = g.op(
            "Conv",
            [y, w, b],
            dilations=[1],
            group=d.dim,
            kernel_shape=[d.kernel],
            pads=[pad, pad],
            strides=[1],
        )
    y = g.op("Transpose", [y], perm=[2, 0, 1])
    return swoosh_linear(g, y, "r", d.dim, d.dim, prefix)


def bias_norm(g: Tracer, x: str, dim: int, prefix: str) -> str:
    """BiasNorm: x · exp(log_scale) / rms(x − bias)."""
    bias = g.param(f"{prefix}.bias", g.random((dim,), 0.02))
    log_scale = g.param(f"{prefix}.log_scale", np.zeros((), np.float32))
    mean_square = g.op(
        "ReduceMean", [g.op("Pow", [g.op("Sub", [x, bias]), g.const(2.0)])], axes=[2], keepdims=1
    )
    scale = g.op("Mul", [g.op("Pow", [mean_square, g.const(-0.5)]), g.op("Exp", [log_scale])])
    return g.op("Mul", [x, scale])


def bypass(g: Tracer, original: str, x: str, dim: int, prefix: str, scale: float = 0.5) -> str:
    """BypassModule: original + (x − original)·c, c learned per channel."""
    c = g.param(f"{prefix}.bypass_scale", np.full(dim, scale, np.float32) + g.random((dim,), 0.01))
    return g.op("Add", [original, g.op("Mul", [g.op("Sub", [x, original]), c])])


def zipformer_layer(
    g: Tracer,
    src: str,
    pos_emb: str,
    time_emb: str | None,
    d: LayerDims,
    prefix: str,
    mask: str | None = None,
    masks: dict[str, str] | None = None,
) -> str:
    """Zipformer2EncoderLayer (see the module docstring for the order of its parts; `masks`: see
    `attention_weights`)."""
    ffs = (d.feedforward * 3 // 4, d.feedforward, d.feedforward * 5 // 4)
    with g.scope("self_attn_weights"):
        weights, mask = attention_weights(g, src, pos_emb, d, f"{prefix}.self_attn_weights", mask, masks)
    shared: dict = {}

    def residual(module: str, update) -> str:  # noqa: ANN001 - a callable building the module's graph
        with g.scope(module):
            out = update()
        return g.op("Add", [x, out])

    x = g.op("Add", [src, time_emb]) if time_emb else src
    x = residual("feed_forward1", lambda: feed_forward(g, x, d, ffs[0], f"{prefix}.feed_forward1"))
    head0 = g.slice(weights, 0, 0, 1)
    x = residual("nonlin_attention", lambda: nonlin_attention(g, x, head0, d, f"{prefix}.nonlin_attention"))
    x = residual("self_attn1", lambda: self_attention(g, x, weights, d, f"{prefix}.self_attn1", shared))
    x = g.op("Add", [x, time_emb]) if time_emb else x
    x = residual("conv_module1", lambda: conv_module(g, x, d, f"{prefix}.conv_module1", mask))
    x = residual("feed_forward2", lambda: feed_forward(g, x, d, ffs[1], f"{prefix}.feed_forward2"))
    with g.scope("bypass_mid"):
        x = bypass(g, src, x, d.dim, f"{prefix}.bypass_mid")
    x = residual("self_attn2", lambda: self_attention(g, x, weights, d, f"{prefix}.self_attn2", shared))
    x = g.op("Add", [x, time_emb]) if time_emb else x
    x = residual("conv_module2", lambda: conv_module(g, x, d, f"{prefix}.conv_module2", mask))
    x = residual("feed_forward3", lambda: feed_forward(g, x, d, ffs[2], f"{prefix}.feed_forward3"))
    with g.scope("norm"):
        x = bias_norm(g, x, d.dim, f"{prefix}.norm")
    with g.scope("bypass"):
        return bypass(g, src, x, d.dim, f"{prefix}.bypass")
