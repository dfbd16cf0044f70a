"""`prepare --precision a16w8` of a decoder still holding a Swoosh guard the rewrite does not recognise
(here `Equal(+inf, L)`, its operands the other way round): swoosh.rewritten_model's None was taken for
"no guard", and the quantiser scaled the guard's `+inf` by infinity (a NaN once dequantised: the guard
silently gone). It is refused in words, by `prepare` before its calibration (it came per bucket, after
the calibration's minutes). The real quantiser on tests/zipvoice/simple_decoder.py's graph, on the CPU:
no simulator needed."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from npu_worker import cli
from npu_worker.engine.zipvoice import qdq, swoosh
from tests.zipvoice.simple_decoder import write_simple_decoder
from tests.zipvoice.test_qdq_guard_free import FRAMES, _feeds


def _unrecognised_guard(path: Path) -> Path:
    """The simple decoder whose output is softplus(v) behind `Where(Equal(+inf, L), v, L)`."""
    model = onnx.load(str(write_simple_decoder(path)))
    graph = model.graph
    graph.node[-1].output[0] = "s"
    graph.initializer.extend(
        [
            numpy_helper.from_array(np.array(1.0, np.float32), "one"),
            numpy_helper.from_array(np.array(np.inf, np.float32), "inf"),
        ]
    )
    graph.node.extend(
        [
            helper.make_node("Exp", ["s"], ["e"]),
            helper.make_node("Add", ["e", "one"], ["e1"]),
            helper.make_node("Log", ["e1"], ["L"]),
            helper.make_node("Equal", ["inf", "L"], ["big"]),
            helper.make_node("Where", ["big", "s", "L"], ["v"]),
        ]
    )
    onnx.save(model, str(path))
    return path


def test_a_guard_the_rewrite_does_not_recognise_is_refused_not_quantised(tmp_path: Path) -> None:
    decoder = _unrecognised_guard(tmp_path / "fm_decoder.onnx")
    assert swoosh.rewritten_model(decoder) is None  # the case at hand: nothing rewritten
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(ValueError, match=r"^fm_decoder\.onnx: 1 constant\(s\) that are not finite \(inf: "):
        with qdq.qdq_graph(decoder, {"N": 1, "T": FRAMES}, "a16w8", _feeds(2), work, {}):
            pass
    assert list(work.iterdir()) == []  # its scratch removed


def test_prepare_refuses_such_a_decoder_before_calibrating(
    qnn_model_dir: Path, tmp_path: Path, capsys
) -> None:
    model = tmp_path / "model"
    shutil.copytree(qnn_model_dir, model)
    _unrecognised_guard(model / "fm_decoder.onnx")
    args = ["prepare", "--model-dir", str(model), "--out", str(tmp_path / "out"), "--precision", "a16w8"]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert "npu-worker prepare: fm_decoder.onnx: 1 constant(s) that are not finite (inf: " in err
    assert "calibration: synthesising" not in err  # refused before a text was synthesised
    assert not (tmp_path / "out").exists()


def _infinities_no_bucket_keeps(path: Path) -> Path:
    """The simple decoder with two infinities that specialising removes: a `-inf` in a mask computed from
    the frame count alone (folded to 0.0 at any T > 0, as an export's shape arithmetic is) and a `+inf`
    read by a node nothing uses (dropped by onnxslim)."""
    model = onnx.load(str(write_simple_decoder(path)))
    graph = model.graph
    graph.node[-1].output[0] = "s"
    graph.initializer.extend(
        [
            numpy_helper.from_array(np.array(-np.inf, np.float32), "minus_inf"),
            numpy_helper.from_array(np.array(np.inf, np.float32), "plus_inf"),
            numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
            numpy_helper.from_array(np.array(1, np.int64), "frames_axis"),
            numpy_helper.from_array(np.array(0, np.int64), "no_frames"),
        ]
    )
    graph.node.extend(
        [
            helper.make_node("Shape", ["x"], ["shape"]),
            helper.make_node("Gather", ["shape", "frames_axis"], ["frames"]),
            helper.make_node("Equal", ["frames", "no_frames"], ["empty"]),
            helper.make_node("Where", ["empty", "minus_inf", "zero"], ["mask"]),
            helper.make_node("Add", ["s", "mask"], ["v"]),
            helper.make_node("Add", ["s", "plus_inf"], ["unused"]),
        ]
    )
    onnx.save(model, str(path))
    return path


def test_an_infinity_specialising_removes_is_not_refused_up_front(tmp_path: Path) -> None:
    """The up-front check judged the unspecialised graph: it refused a decoder whose every bucket quantises
    (the calibration never ran, `prepare` of the user's files failed for nothing)."""
    decoder = _infinities_no_bucket_keeps(tmp_path / "fm_decoder.onnx")
    qdq.refuse_unscalable_decoder(decoder)  # no ValueError
    work = tmp_path / "work"
    work.mkdir()
    with qdq.qdq_graph(decoder, {"N": 1, "T": FRAMES}, "a16w8", _feeds(2), work, {}) as graph:
        assert any(node.op_type == "QuantizeLinear" for node in onnx.load(str(graph)).graph.node)


def test_the_up_front_check_still_refuses_a_guard_on_the_frames_path(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^fm_decoder\.onnx: 1 constant\(s\) that are not finite \(inf: "):
        qdq.refuse_unscalable_decoder(_unrecognised_guard(tmp_path / "fm_decoder.onnx"))
