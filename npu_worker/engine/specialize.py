"""Load-time specialisation of an ONNX graph to one static input shape, for QNN.

QNN compiles static graphs only. Fixing the free dimensions in onnxruntime is not enough for the real
ZipVoice decoder: the shape arithmetic of its Zipformer stacks (Shape/Gather/If/Range/Tile feeding
Reshape, Expand and the relative-position GatherElements) stays in the graph, and QNN takes none of it
or fails to finalise.

Three steps make it plain tensor ops. The attention layers' relative-position shift becomes slices
(`relshift.py`: otherwise its index is a constant of up to 138 MB per layer). Then every tensor whose value follows from the (now static) input
shapes alone is computed once, by onnxruntime on zero inputs, and becomes a constant
(`fold_static_values`). onnxslim alone does not get there on the real layer counts: its shape inference
stops at each layer's shape arithmetic until the layer before is folded, so it folds about one layer per
iteration and gives up after ten, leaving 237 Shape and 237 Gather nodes in stacks 3 and 4, which QNN
splits off to the CPU. Then onnxslim (a maintained graph optimiser) folds what is left, removes dead
nodes and writes the shapes. Last, for the int8 files, a zero bias lets QNN's fusion take every
dynamically quantised MatMul (`dynamic_bias.py`). The specialised file is a temporary: once QNN has
compiled it, the compiled context is what gets cached.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from npu_worker.engine import dynamic_bias, ran_out, relshift
from npu_worker.folder_lock import locked_private_folder

log = logging.getLogger(__name__)
# Part of the QNN context cache's key (providers.py): bump it when the graph this module writes changes.
# 2: the zero biases of dynamic_bias.py.
VERSION = 2
# Only shape propagation, constant folding and dead-node removal are needed (onnxruntime fuses what it
# runs itself); skipping the rest halves the time.
SKIPPED = ("graph_fusion", "subexpression_elimination", "weight_tying")
SCRATCH_PREFIX = "specialise-"  # a folder per specialised graph (0700), held (flock) while in use
SHAPE_OPS = ("Shape", "Size")  # their value is the input's shape, static here whatever the data
RANDOM_OPS = (
    "RandomNormal",
    "RandomNormalLike",
    "RandomUniform",
    "RandomUniformLike",
    "Multinomial",
    "Bernoulli",
)


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


def _outer_names(node: Any) -> set[str]:
    """Names a node's subgraphs (If/Loop bodies) read from the enclosing graph."""
    import onnx

    names: set[str] = set()
    for attribute in node.attribute:
        graphs = [attribute.g] if attribute.type == onnx.AttributeProto.GRAPH else list(attribute.graphs)
        for graph in graphs:
            local = {t.name for t in graph.initializer} | {t.name for t in graph.input}
            local.update(name for inner in graph.node for name in inner.output)
            for inner in graph.node:
                names.update(n for n in (*inner.input, *_outer_names(inner)) if n and n not in local)
    return names


def fix_input_dims(model: Any, dims: dict[str, int]) -> bool:
    """Set the named free dimensions of the graph inputs; True if every input is then static."""
    static = True
    for graph_input in model.graph.input:
        for dim in graph_input.type.tensor_type.shape.dim:
            if dim.dim_param in dims:
                dim.dim_value = dims[dim.dim_param]
            elif not dim.HasField("dim_value"):
                static = False
    return static


def fold_static_values(model: Any) -> int:
    """Replace every tensor whose value follows from the static input shapes by a constant.

    Such a tensor is a Shape/Size output, or the output of a deterministic node whose inputs (and the
    outer names its subgraphs read) all are such tensors or initializers. Those consumed by the rest of
    the graph are computed in one onnxruntime run on zero inputs (their value does not depend on the
    data) and stored as initializers; the nodes computing them are removed. Returns how many nodes
    were removed. The model's inputs must be static (`fix_input_dims`).
    """
    graph = model.graph
    initializers = {t.name for t in graph.initializer}
    static = initializers | {""}
    folded: set[int] = set()  # node positions
    for position, node in enumerate(graph.node):  # ONNX graphs are in topological order
        reads = (*node.input, *_outer_names(node))
        if node.op_type not in RANDOM_OPS and (node.op_type in SHAPE_OPS or all(n in static for n in reads)):
            static.update(node.output)
            folded.add(position)
    if not folded:
        return 0
    kept = [node for position, node in enumerate(graph.node) if position not in folded]
    needed: set[str] = set()
    for node in kept:
        needed.update((*node.input, *_outer_names(node)))
    outputs = {output.name for output in graph.output}
    frontier = sorted(n for n in needed | outputs if n in static and n and n not in initializers)
    values = _evaluate(model, frontier)
    del graph.node[:]
    graph.node.extend(kept)
    _store_constants(graph, dict(zip(frontier, values, strict=True)), keep_names=outputs)
    return len(folded)


def _evaluate(model: Any, names: list[str]) -> list[Any]:
    """The values of `names` in one CPU run of `model` on zero inputs."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import helper

    if not names:
        return []
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    del probe.graph.output[:]
    probe.graph.output.extend(helper.make_empty_tensor_value_info(name) for name in names)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    session = ort.InferenceSession(probe.SerializeToString(), options, providers=["CPUExecutionProvider"])
    initializers = {t.name for t in model.graph.initializer}
    feeds = {}
    for graph_input in model.graph.input:
        if graph_input.name not in initializers:
            tensor = graph_input.type.tensor_type
            shape = [dim.dim_value for dim in tensor.shape.dim]
            feeds[graph_input.name] = np.zeros(shape, helper.tensor_dtype_to_np_dtype(tensor.elem_type))
    return list(session.run(names, feeds))


def _store_constants(graph: Any, values: dict[str, Any], keep_names: set[str]) -> None:
    """Add `values` as initializers, one per distinct value: every attention layer of a stack computes
    the same relative-position index ([4T, T] int64, 138 MB at T=2079 in each of 16 layers); consumers
    of a repeated value read the first copy (names read by subgraphs or graph outputs keep theirs)."""
    import hashlib

    import numpy as np
    from onnx import numpy_helper

    subgraph_reads = {name for node in graph.node for name in _outer_names(node)}
    first: dict[tuple[str, tuple[int, ...], str], str] = {}
    renamed: dict[str, str] = {}
    for name, value in values.items():
        array = np.ascontiguousarray(value)
        key = (array.dtype.str, array.shape, hashlib.sha256(array.tobytes()).hexdigest())
        if key in first and name not in keep_names and name not in subgraph_reads:
            renamed[name] = first[key]
            continue
        first.setdefault(key, name)
        graph.initializer.append(numpy_helper.from_array(array, name))
    for node in graph.node:
        for index, name in enumerate(node.input):
            if name in renamed:
                node.input[index] = renamed[name]


def specialise(model_path: Path, dims: dict[str, int], target: Path) -> Path:
    """Write `model_path` specialised to `dims` (free dimension name → size) to `target`."""
    import onnx
    import onnxslim

    model = onnx.load(str(model_path))
    shapes = static_input_shapes(model, dims)
    before = len(model.graph.node)
    relshift.rewrite_relative_shift(model.graph)
    if fix_input_dims(model, dims):
        fold_static_values(model)
    slim = onnxslim.slim(model, input_shapes=shapes, skip_optimizations=list(SKIPPED))
    dynamic_bias.add_zero_biases(slim.graph)  # after onnxslim, which could fold the zeros away
    onnx.save(slim, str(target))
    log.info(
        "specialised %s to %s: %d → %d nodes",
        model_path.name,
        dims,
        before,
        len(slim.graph.node),
    )
    return target


@contextlib.contextmanager
def static_graph(model_path: Path, dims: dict[str, int], work_dir: Path | None) -> Iterator[Path]:
    """The graph to compile for `dims`: a specialised temporary file, or the original when nothing is
    fixed, onnxslim is not installed or fails (QNN then takes fewer nodes; the placement check decides).
    OSError when `work_dir` has no room for it (ran_out.RAN_OUT: a full disk, no inodes, no fds)."""
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
    with (
        tempfile.TemporaryDirectory(
            dir=work_dir, prefix=SCRATCH_PREFIX, ignore_cleanup_errors=True
        ) as scratch,
        locked_private_folder(scratch, wait=False),  # in use: `remove_dead_scratch` leaves it
    ):
        try:
            graph = specialise(model_path, dims, Path(scratch) / model_path.name)
        except Exception as exc:  # a graph onnxslim cannot handle still gets QNN's own attempt
            if isinstance(exc, OSError) and exc.errno in ran_out.RAN_OUT:
                raise  # no room to write it: compiled unspecialised, QNN took none of it, and said that
            log.warning(
                "could not specialise %s to %s (%s): compiling it as it is", model_path.name, dims, exc
            )
            graph = model_path
        yield graph


def remove_dead_scratch(work_dir: Path) -> int:
    """Remove the scratch folders in `work_dir` no live process holds: a worker killed while it
    specialised (a restart during a first start's minutes of compiling) left its specialised graph, as
    large as the model, in the QNN cache for good. How many went."""
    removed = 0
    for folder in work_dir.glob(f"{SCRATCH_PREFIX}*"):
        if folder.is_symlink() or not folder.is_dir():
            continue
        try:
            with locked_private_folder(folder, wait=False):
                shutil.rmtree(folder)
            removed += 1
        except OSError:  # BlockingIOError: being specialised now; gone meanwhile; not ours to remove
            continue
    if removed:
        log.info("removed %d specialised graphs left by a process killed while compiling", removed)
    return removed
