"""onnxruntime's QDQ quantiser with its input renames and initializer lookups served from indexes instead of
scans of the graph.

`quantize_static` puts a Quantize/Dequantize pair after each activation and weight and renames the
tensor in the inputs of every node that reads it: `ONNXModel.replace_input_of_all_nodes`, which walks
every node of the graph (and every input of each) per tensor. On the decoder that is ≈ 3 000 renames
× ≈ 2 800-5 800 nodes: 17 million node visits, 70 % of `quantize_static`'s time on the small
real-structure export at 383 frames (cProfile: 82 of 117 s). The quantiser only appends nodes while it
renames (the nodes it drops go at the end, `remove_nodes`), so an index of each tensor's readers, kept
up to date by the two rename methods and extended by the nodes appended since, finds the same nodes.
Most of the rest was finding initializers by name, again by walking all of them per lookup
(`quant_utils.find_by_name`, `ONNXModel.get_initializer`: 20 645 + 3 334 walks of the 1 331
initializers and those it adds); they come from a name → first position index of the graph's initializer field, checked
against the entry it points at, extended by what was appended, and rebuilt when an initializer is removed.

`indexed_renames` swaps those methods on onnxruntime's `ONNXModel` class, and `find_by_name` where the
quantiser's modules imported it (the QDQ MatMul's own, `operators/matmul.py`, looks up each MatMul's
inputs and output among the initializers; `operators/conv.py`'s for the same reason, though only
onnxruntime's QOperator Conv, which we never run, calls it), for its `with` block only (the quantiser builds its model object inside
`quantize_static`: nothing else can reach it), and only
for an onnxruntime whose quantiser this was checked against (TESTED: the quantised model byte for byte
the same as without the index, tests/zipvoice/test_quantiser_index.py); any other version, or a
configuration that renames inputs another way (DedicatedQDQPair), runs onnxruntime's own code.
The index sees a node's inputs change only through the two rename methods and an initializer's name
only as it is appended: onnxruntime's QOperator quantisers assign node inputs directly (`operators/pad.py`,
`gather.py`, `direct_q8.py`, `argmax.py`), but the QDQ flow we call (`get_qnn_qdq_config`, QDQRegistry)
runs none of them, and its initializers are named before they are added (`_dup_initializer`, the
quantised weights); tests/zipvoice/test_quantiser_index.py checks every rename and lookup of that flow
against onnxruntime's own scan, and fails if it ever does otherwise.
The swap is process-wide, so blocks in other threads take turns (`_SWAPPING`): two at once each put
back what they found, and the one leaving last would leave the other's swap in onnxruntime for good.

`indexed_lookups` gives make-test-model's `quantize_dynamic` (the QOperator flow: MatMulInteger) the same
initializer index, and also serves `ONNXModel.find_node_by_name` (a copy of every node plus the new ones,
walked per lookup) and the QOperator MatMul's `find_by_name` over the quantiser's `new_nodes` (a list it
only appends to) from `_ByName`: on one tiny int8 build these walks were 9 of 11 profiled seconds. The
renames keep onnxruntime's scans there (its QOperator quantisers assign node inputs directly).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

TESTED = ("1.32.",)  # onnxruntime versions whose ONNXModel renames were read and checked
_SWAPPING = threading.RLock()  # one block's swap at a time (the same thread's nested blocks undo in turn)


def applies(extra_options: dict[str, Any] | None) -> bool:
    """Whether the index may stand in for onnxruntime's scans with this onnxruntime and these options."""
    import onnxruntime

    if not onnxruntime.__version__.startswith(TESTED):
        return False
    return not (extra_options or {}).get("DedicatedQDQPair", False)  # it renames one reader at a time


def _readers(model: Any) -> dict[str, list[Any]]:
    """`model`'s index of tensor name → the nodes that may read it, brought up to date with the nodes
    appended since it was last used; rebuilt whole if any were removed or the list was rebuilt
    (`topological_sort`, `clean_initializers`: the same length, other node objects, which the index's
    renames would miss). The last node indexed is held to tell: a removal leaves the list shorter or,
    with nodes appended since, another node last."""
    nodes = model.model.graph.node
    index: dict[str, list[Any]] | None = getattr(model, "_npu_readers", None)
    seen = getattr(model, "_npu_indexed", 0)
    if index is None or len(nodes) < seen or (seen and nodes[seen - 1] is not model._npu_last):
        index, seen = {}, 0
    for position in range(seen, len(nodes)):
        node = nodes[position]
        for name in set(node.input):
            index.setdefault(name, []).append(node)
    model._npu_readers, model._npu_indexed = index, len(nodes)
    model._npu_last = nodes[len(nodes) - 1] if len(nodes) else None
    return index


def _rename(index: dict[str, list[Any]], candidates: list[Any], old: str, new: str) -> None:
    """`old` → `new` in the inputs of `candidates`; those that read it are then readers of `new`."""
    moved = []
    for node in candidates:
        renamed = False
        for position, name in enumerate(node.input):
            if name == old:
                node.input[position] = new
                renamed = True
        if renamed:
            moved.append(node)
    if moved:
        index.setdefault(new, []).extend(moved)


def _replace_input_of_all_nodes(self: Any, old_input_name: str, new_input_name: str) -> None:
    assert isinstance(old_input_name, str) and isinstance(new_input_name, str)  # noqa: S101 - as onnxruntime's
    index = _readers(self)
    _rename(index, index.pop(old_input_name, []), old_input_name, new_input_name)


def _replace_input_of_nodes(self: Any, old_input_name: str, new_input_name: str, node_names_set: Any) -> None:
    assert isinstance(old_input_name, str) and isinstance(new_input_name, str)  # noqa: S101 - as onnxruntime's
    index = _readers(self)
    readers = index.get(old_input_name, [])
    chosen = [node for node in readers if node.name in node_names_set]
    index[old_input_name] = [node for node in readers if node.name not in node_names_set]
    _rename(index, chosen, old_input_name, new_input_name)


class _ByName:
    """First position of each name in one list or repeated field of named protos (the graph's initializers;
    for `indexed_lookups` its nodes and the quantiser's `new_nodes` too), extended by what was appended
    since, rebuilt whole when it shrank or its last entry changed."""

    def __init__(self, items: Any) -> None:
        self.items = items  # held: the field's id keys this index for the block
        self.clear()

    def clear(self) -> None:
        self.first: dict[str, int] = {}
        self.seen, self.last = 0, ""

    def find(self, name: str) -> Any:
        items = self.items
        if len(items) < self.seen or (self.seen and items[self.seen - 1].name != self.last):
            self.clear()
        for added in range(self.seen, len(items)):
            self.first.setdefault(items[added].name, added)
        self.seen = len(items)
        self.last = items[self.seen - 1].name if self.seen else ""
        position = self.first.get(name)
        if position is None:
            return None
        if items[position].name != name:  # changed in place: look again from scratch
            self.clear()
            return self.find(name)
        return items[position]


def _index_in(indexes: dict[int, _ByName], items: Any) -> _ByName:
    """`items`' index in `indexes` (keyed by the list's id, made again for another list at that id)."""
    index = indexes.get(id(items))
    if index is None or index.items is not items:
        index = indexes[id(items)] = _ByName(items)
    return index


def _initializer_lookups(
    original: Any, original_remove: Any, node_lists: bool = False
) -> tuple[Any, Any, Any]:
    """`find_by_name`, `ONNXModel.get_initializer` and `ONNXModel.remove_initializer` (`original_remove`,
    then the indexes start again) with the graph's initializers found from `_ByName` (the same first
    match), and with `node_lists` Python lists of nodes too (the QOperator quantiser's `new_nodes`, only
    ever appended to, which its MatMul walks per MatMul); any other list goes to `original`."""
    import onnx

    indexes: dict[int, _ByName] = {}

    def indexed(items: Any) -> bool:
        if not items or isinstance(items, tuple):
            return False
        if isinstance(items, list):
            return node_lists and isinstance(items[0], onnx.NodeProto)
        return isinstance(items[0], onnx.TensorProto)

    def index_of(items: Any) -> _ByName | None:
        return _index_in(indexes, items) if indexed(items) else None

    def find_by_name(item_name: str, item_list: Any) -> Any:
        index = index_of(item_list)
        return original(item_name, item_list) if index is None else index.find(item_name)

    def get_initializer(self: Any, name: str) -> Any:
        return find_by_name(name, self.model.graph.initializer)

    def remove_initializer(self: Any, tensor: Any) -> None:
        original_remove(self, tensor)
        for index in indexes.values():
            index.clear()

    return find_by_name, get_initializer, remove_initializer


def _node_lookup() -> Any:
    """`ONNXModel.find_node_by_name`: the first node so named in the graph, else among `new_nodes_list`
    (onnxruntime copies both into one list and walks it per call), each from its own `_ByName`."""
    indexes: dict[int, _ByName] = {}

    def find_node_by_name(self: Any, node_name: str, new_nodes_list: Any, graph: Any) -> Any:
        node = _index_in(indexes, graph.node).find(node_name)
        return node if node is not None else _index_in(indexes, new_nodes_list).find(node_name)

    return find_node_by_name


@contextlib.contextmanager
def _swapped(replacements: list[tuple[Any, str, Any]]) -> Iterator[None]:
    """Each `(owner, name, replacement)` set on its owner for the block, the originals put back after."""
    with _SWAPPING:
        originals = [(owner, name, owner.__dict__[name]) for owner, name, _ in replacements]
        for owner, name, replacement in replacements:
            setattr(owner, name, replacement)
        try:
            yield
        finally:
            for owner, name, original in originals:
                setattr(owner, name, original)


@contextlib.contextmanager
def indexed_renames(extra_options: dict[str, Any] | None) -> Iterator[bool]:
    """onnxruntime's `ONNXModel` input renames served from an index inside the block (yields whether
    they are: `applies`)."""
    if not applies(extra_options):  # before any import of the quantiser's internals, which others may move
        yield False
        return
    from onnxruntime.quantization import base_quantizer, onnx_model, qdq_quantizer, quant_utils
    from onnxruntime.quantization.onnx_model import ONNXModel
    from onnxruntime.quantization.operators import conv, matmul

    find_by_name, get_initializer, remove_initializer = _initializer_lookups(
        quant_utils.find_by_name, ONNXModel.__dict__["remove_initializer"]
    )
    swapped = [
        (ONNXModel, "replace_input_of_all_nodes", _replace_input_of_all_nodes),
        (ONNXModel, "replace_input_of_nodes", _replace_input_of_nodes),
        (ONNXModel, "get_initializer", get_initializer),
        (ONNXModel, "remove_initializer", remove_initializer),
        *(
            (module, "find_by_name", find_by_name)
            for module in (base_quantizer, onnx_model, qdq_quantizer, conv, matmul)
        ),
    ]
    with _swapped(swapped):
        yield True


@contextlib.contextmanager
def indexed_lookups() -> Iterator[bool]:
    """onnxruntime's initializer and node lookups by name served from indexes inside the block, for
    `quantize_dynamic` (yields whether they are: only on a TESTED onnxruntime). Its QOperator flow
    assigns node inputs directly, so the renames keep onnxruntime's own scans."""
    if not applies(None):
        yield False
        return
    from onnxruntime.quantization import base_quantizer, onnx_model, onnx_quantizer, quant_utils
    from onnxruntime.quantization.onnx_model import ONNXModel
    from onnxruntime.quantization.operators import conv, matmul

    find_by_name, get_initializer, remove_initializer = _initializer_lookups(
        quant_utils.find_by_name, ONNXModel.__dict__["remove_initializer"], node_lists=True
    )
    swapped = [
        (ONNXModel, "get_initializer", get_initializer),
        (ONNXModel, "remove_initializer", remove_initializer),
        (ONNXModel, "find_node_by_name", _node_lookup()),
        *(
            (module, "find_by_name", find_by_name)
            for module in (base_quantizer, onnx_model, onnx_quantizer, conv, matmul)
        ),
    ]
    with _swapped(swapped):
        yield True
