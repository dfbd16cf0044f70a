"""The Vocos 24 kHz vocoder in sherpa-onnx's layout: mels (N, 100, F) → mag, x, y (N, 513, F).

Structure of the released vocos-mel-24khz export: Conv1d embedding, LayerNorm, ConvNeXt blocks (depthwise
conv, LayerNorm, Linear, GELU, Linear, layer scale, residual), a final LayerNorm, and the ISTFT head's
Linear to n_fft + 2 channels, split into log-magnitude and phase; mag = clip(exp(·), max=100), x = cos,
y = sin. The runtime does the inverse STFT.

A guide (scope `/guide`, op types the real graph also has) makes the random-weight vocoder audible: the
mel envelope mapped onto linear bins with a harmonic comb (every 6th bin, 140.6 Hz), and for bin k in
frame f the phase π/2·k·f (+ a fixed offset per bin), which is how far a steady sinusoid at the bin's
centre advances per 256-sample hop, so the ISTFT yields a continuous buzzy voice shaped by the mels.
The phase pattern repeats every 4 frames; it is looked up through a frame-index table of MAX_FRAMES.
"""

from __future__ import annotations

import math

import numpy as np
from onnx import helper as oh

from npu_worker.testing._onnx_trace import FLOAT, Tracer

MAX_FRAMES = 32768
"""Longest vocoder input the guide supports (≈ 350 s at 24 kHz, hop 256)."""
HEAD_GAIN = 0.05


def layer_norm(g: Tracer, x: str, dim: int, prefix: str) -> str:
    mean = g.op("ReduceMean", [x], axes=[-1])
    centred = g.op("Sub", [x, mean])
    variance = g.op("ReduceMean", [g.op("Pow", [centred, g.const(2.0)])], axes=[-1])
    normed = g.op("Div", [centred, g.op("Sqrt", [g.op("Add", [variance, g.const(1e-6)])])])
    weight = g.param(f"{prefix}.weight", np.ones(dim, np.float32) + g.random((dim,), 0.02))
    return g.op("Add", [g.op("Mul", [normed, weight]), g.param(f"{prefix}.bias", g.random((dim,), 0.02))])


def conv1d(g: Tracer, x: str, c_in: int, c_out: int, kernel: int, groups: int, prefix: str) -> str:
    w = g.param(
        f"{prefix}.weight", g.random((c_out, c_in // groups, kernel), 1 / math.sqrt(c_in // groups * kernel))
    )
    b = g.param(f"{prefix}.bias", g.random((c_out,), 0.02))
    pad = kernel // 2
    return g.op(
        "Conv", [x, w, b], dilations=[1], group=groups, kernel_shape=[kernel], pads=[pad, pad], strides=[1]
    )


def convnext_block(g: Tracer, x: str, dim: int, intermediate: int, prefix: str) -> str:
    with g.scope("dwconv"):
        y = conv1d(g, x, dim, dim, 7, dim, f"{prefix}.dwconv")
    y = g.op("Transpose", [y], perm=[0, 2, 1])
    with g.scope("norm"):
        y = layer_norm(g, y, dim, f"{prefix}.norm")
    with g.scope("pwconv1"):
        y = g.linear(y, dim, intermediate, f"{prefix}.pwconv1")
    with g.scope("act"):
        erf = g.op("Erf", [g.op("Div", [y, g.const(math.sqrt(2.0))])])
        y = g.op("Mul", [g.op("Mul", [y, g.op("Add", [erf, g.const(1.0)])]), g.const(0.5)])
    with g.scope("pwconv2"):
        y = g.linear(y, intermediate, dim, f"{prefix}.pwconv2")
    y = g.op("Mul", [g.param(f"{prefix}.gamma", np.full(dim, 0.1, np.float32) + g.random((dim,), 0.01)), y])
    return g.op("Add", [x, g.op("Transpose", [y], perm=[0, 2, 1])])


def _guide_phase(g: Tracer, bins: int, rows) -> str:  # noqa: ANN001 - rows: see vocos()
    """(bins, F) phase of the analytic part: π/2·((k·f) mod 4) + offset_k, via a frame-index table."""
    frames = g.op("Slice", [g.op("Shape", ["mels"]), g.const([2]), g.const([3])])
    index = g.op("Slice", [g.const(np.arange(MAX_FRAMES) % 4), g.const([0]), frames, g.const([0])])
    offsets = np.random.default_rng(3).uniform(0, 2 * np.pi, size=bins)
    table = (np.pi / 2) * ((np.arange(bins)[:, None] * np.arange(4)[None, :]) % 4) + offsets[:, None]
    return g.op("Gather", [rows(table), index], axis=1)


def vocos(
    g: Tracer, mel_to_linear: np.ndarray, log_offset: np.ndarray, dim: int, intermediate: int, layers: int
) -> tuple[list, list]:
    """mels (N, 100, F), natural-log mel → mag, x, y (N, 513, F); spectrum = mag·(x + i·y)."""
    mels_in, bins = mel_to_linear.shape
    with g.scope("backbone"):
        with g.scope("embed"):
            h = conv1d(g, "mels", mels_in, dim, 7, 1, "backbone.embed")
        h = g.op("Transpose", [h], perm=[0, 2, 1])
        with g.scope("norm"):
            h = layer_norm(g, h, dim, "backbone.norm")
        h = g.op("Transpose", [h], perm=[0, 2, 1])
        for k in range(layers):
            with g.scope(f"convnext.{k}"):
                h = convnext_block(g, h, dim, intermediate, f"backbone.convnext.{k}")
        h = g.op("Transpose", [h], perm=[0, 2, 1])
        with g.scope("final_layer_norm"):
            h = layer_norm(g, h, dim, "backbone.final_layer_norm")
    with g.scope("out"):
        h = g.linear(h, dim, 2 * bins, "out", gain=HEAD_GAIN)
    log_mag, phase = g.chunk(g.op("Transpose", [h], perm=[0, 2, 1]), 2, axis=1)
    with g.scope("guide"):
        # The guide's tables are cut to the head's bin count at run time, so that shape inference does
        # not turn the exported symbolic bin axis of the outputs into a constant.
        head_bins = g.op("Slice", [g.op("Shape", [log_mag]), g.const([1]), g.const([2])])

        def rows(table: np.ndarray) -> str:
            return g.op("Slice", [g.const(table.astype(np.float32)), g.const([0]), head_bins, g.const([0])])

        comb = -12.0 * np.sin(np.pi * np.arange(bins) / 6.0) ** 2
        envelope = g.op("MatMul", [rows(mel_to_linear.T), "mels"])
        log_mag = g.op("Add", [log_mag, g.op("Add", [envelope, rows((log_offset + comb)[:, None])])])
        phase = g.op("Add", [phase, _guide_phase(g, bins, rows)])
    g.output("Clip", [g.op("Exp", [log_mag]), "", g.const(100.0)], "mag")
    g.output("Cos", [phase], "x")
    g.output("Sin", [phase], "y")
    inputs = [oh.make_tensor_value_info("mels", FLOAT, ["N", mels_in, "F"])]
    dims = {"mag": "Clipmag_dim_1", "x": "Cosx_dim_1", "y": "Cosx_dim_1"}
    return inputs, [oh.make_tensor_value_info(n, FLOAT, ["N", d, "F"]) for n, d in dims.items()]


def vocos_parameter_count(dim: int, intermediate: int, layers: int, mels: int = 100, bins: int = 513) -> int:
    block = dim * 7 + dim + 2 * dim + 2 * dim * intermediate + intermediate + dim + dim
    return mels * dim * 7 + dim + 2 * dim + layers * block + 2 * dim + dim * 2 * bins + 2 * bins
