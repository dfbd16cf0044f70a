"""`korean_reading`'s docstring is the map of the Korean reading's parts ("Each part has its module"): every
`korean_*` module it reads from is named there. A part split out of another (the ranges of numbers from the
bounds, a particle's form, a subscript's count) went unnamed, and the map sent a reader to the module it left."""

from __future__ import annotations

import ast
import inspect

from npu_worker.engine import korean_reading


def korean_modules_read(source: str) -> set[str]:
    """The `korean_*` modules the source imports from its own package."""
    found: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {node.module} if node.module else {alias.name for alias in node.names}
    return {name for name in found if name.startswith("korean_")}


def test_the_reading_map_names_every_korean_module_it_reads():
    source = inspect.getsource(korean_reading)
    modules = korean_modules_read(source)
    assert len(modules) > 15  # the imports were found
    doc = korean_reading.__doc__ or ""
    assert sorted(name for name in modules if f"`{name}`" not in doc) == []
