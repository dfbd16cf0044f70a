"""`prepare --precision a16w8` of a decoder with no Swoosh guards to rewrite (an export without them, or
one already rewritten): qdq.qdq_graph quantised only what swoosh.rewritten_model rewrote, and its None,
"nothing to rewrite", was refused as "the graph could not be read for quantisation". The real quantiser
on tests/zipvoice/simple_decoder.py's graph (no guards), on the CPU: no simulator needed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx

from npu_worker.engine.zipvoice import qdq, swoosh

FRAMES = 40


def _feeds(count: int) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(7)
    return [
        {
            "t": np.array(rng.uniform(), np.float32),
            "guidance_scale": np.array(1.0, np.float32),
            **{
                name: rng.standard_normal((1, FRAMES, 100)).astype(np.float32)
                for name in ("x", "text_condition", "speech_condition")
            },
        }
        for _ in range(count)
    ]


def test_a_decoder_with_no_guards_is_quantised_as_it_is(qnn_model_dir: Path, tmp_path: Path) -> None:
    decoder = qnn_model_dir / "fm_decoder.onnx"
    assert swoosh.rewritten_model(decoder) is None  # nothing to rewrite: the case at hand
    notes: dict = {}
    with qdq.qdq_graph(decoder, {"N": 1, "T": FRAMES}, "a16w8", _feeds(2), tmp_path, notes) as graph:
        model = onnx.load(str(graph))
    assert any(node.op_type == "QuantizeLinear" for node in model.graph.node)
    source = {entry.key: entry.value for entry in onnx.load(str(decoder)).metadata_props}
    assert {entry.key: entry.value for entry in model.metadata_props} == source  # its metadata kept
    assert notes["kept_in_float"] >= 0 and "specialised" in notes
    assert list(tmp_path.iterdir()) == []  # its scratch removed
