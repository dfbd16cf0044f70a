"""Load-time specialisation of an ONNX graph to one static input shape, for QNN.

QNN compiles static graphs only. Fixing the free dimensions in onnxruntime is not enough for the real
ZipVoice decoder: the shape arithmetic of its Zipformer stacks (Shape/Gather/If/Range/Tile feeding
Reshape, Expand and the relative-position GatherElements) stays in the graph, and QNN takes none of it
or fails to finalise. onnxslim (a maintained graph optimiser) propagates the static shapes and folds
that arithmetic into constants, so QNN receives plain tensor ops. The specialised file is a temporary:
once QNN has compiled it, the compiled context is what gets cached.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
# Only shape propagation, constant folding and dead-node removal are needed (onnxruntime fuses what it
# runs itself); skipping the rest halves the time.
SKIPPED = ("graph_fusion", "subexpression_elimination", "weight_tying")


def static_input_shapes(model: Any, dims: dict[str, int]) -> list[str]:
    """onnxslim `input_shapes` entries ("name:d0,d1,...") for inputs that `dims` makes fully static."""
    shapes = []
    for graph_input in model.graph.input:
        sizes = []
        for dim in graph_input.type.tensor_type.shape.dim:
            if dim.HasField("dim_value"):
                sizes.append(dim.dim_value)
            elif dim.dim_param in dims:
                sizes.append(dims[dim.dim_param])
            else:
                break
        else:
            if sizes:  # rank-0 inputs are static already
                shapes.append(f"{graph_input.name}:{','.join(map(str, sizes))}")
    return shapes


def specialise(model_path: Path, dims: dict[str, int], target: Path) -> Path:
    """Write `model_path` specialised to `dims` (free dimension name → size) to `target`."""
    import onnx
    import onnxslim

    model = onnx.load(str(model_path))
    shapes = static_input_shapes(model, dims)
    slim = onnxslim.slim(model, input_shapes=shapes, skip_optimizations=list(SKIPPED))
    onnx.save(slim, str(target))
    log.info(
        "specialised %s to %s: %d → %d nodes",
        model_path.name,
        dims,
        len(model.graph.node),
        len(slim.graph.node),
    )
    return target


@contextlib.contextmanager
def static_graph(model_path: Path, dims: dict[str, int], work_dir: Path | None) -> Iterator[Path]:
    """The graph to compile for `dims`: a specialised temporary file, or the original when nothing is
    fixed, onnxslim is not installed or fails (QNN then takes fewer nodes; the placement check decides)."""
    if not dims:
        yield model_path
        return
    try:
        import onnxslim  # noqa: F401
    except ImportError:
        log.warning("onnxslim is not installed: %s goes to QNN unspecialised", model_path.name)
        yield model_path
        return
    if work_dir is not None:
        work_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work_dir, prefix="specialise-") as scratch:
        try:
            graph = specialise(model_path, dims, Path(scratch) / model_path.name)
        except Exception as exc:  # a graph onnxslim cannot handle still gets QNN's own attempt
            log.warning(
                "could not specialise %s to %s (%s): compiling it as it is", model_path.name, dims, exc
            )
            graph = model_path
        yield graph
