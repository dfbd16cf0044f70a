"""docs/architecture.md names functions as `module.name`: each is one the module defines.

When written, it caught `files.locked_directory` (moved to `folder_lock.py`; the map still sent a reader
to files.py for the state dir's lock) and `files.write_output` (it is `PathPolicy.write_output`)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "npu_worker"
# `module.name` or `folder/module.name`, the module spelt as its file under npu_worker/ is
FILE_SUFFIXES = {"py", "js"}  # `errors.py`, `wire.js`: a file, not a name in a module
LIBRARIES = {"query.get"}  # aiohttp's `request.query.get`, beside `http_compat/query.py`
NAMED = re.compile(r"`((?:[a-z_]+/)*[a-z_]+)\.([A-Za-z_][A-Za-z0-9_]*)`")


def defined_names(source: Path) -> set[str]:
    """What a module defines at its top level (functions, classes and their methods, assigned names;
    imports excluded: a function moved elsewhere and imported back is no longer the module's own)."""
    return defined_names_in(ast.parse(source.read_text(encoding="utf-8")).body)


def defined_names_in(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            if isinstance(node, ast.ClassDef):
                names.update(defined_names_in(node.body))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(target.id for target in targets if isinstance(target, ast.Name))
    return names


def test_every_module_function_the_architecture_map_names_is_defined_there():
    """A row of a folder (`bench/`), or of a file in one (`jobs/runner.py`), names its modules as that
    folder's (`cli.check_writable`); a module in neither is any of the package's of that name (a row of
    `jobs/loop_handoff.py` named `runner.hand_over_audio`, a row of `ws_server/` `journal.after_this_drain`:
    neither was checked, both had moved, to `audio_handover.py` and `loop_handoff.py`)."""
    missing = []
    for row in (ROOT / "docs/architecture.md").read_text(encoding="utf-8").splitlines():
        first_cell = row.split("|")[1] if row.startswith("|") else ""
        folders = re.findall(r"`([a-z_/]+)/(?:[a-z_]+\.py)?`", first_cell)
        for module, name in NAMED.findall(row):
            sources = [PACKAGE / f"{where}{module}.py" for where in ["", *(f"{f}/" for f in folders)]]
            found = [source for source in sources if source.is_file()] or (
                sorted(PACKAGE.rglob(f"{module}.py")) if "/" not in module else []
            )
            if (
                name not in FILE_SUFFIXES
                and f"{module}.{name}" not in LIBRARIES
                and found
                and all(name not in defined_names(s) for s in found)
            ):
                missing.append(f"{module}.{name}")
    assert not missing, f"docs/architecture.md names what its module does not define: {sorted(set(missing))}"


def test_every_module_function_the_architecture_diagrams_name_is_defined_there():
    """The map's drawings name them too, without backticks (`─► files.write_output`): the row check above
    reads table rows only, and the first drawing sent a reader to files.py for what `PathPolicy` in paths.py
    does."""
    text = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    drawings = re.findall(r"^```\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    missing = [
        f"{module}.{name}"
        for drawing in drawings
        for module, name in re.findall(r"(?<![\w./])([a-z_]+)\.([A-Za-z_]\w*)", drawing)
        if name not in FILE_SUFFIXES
        and (PACKAGE / f"{module}.py").is_file()
        and name not in defined_names(PACKAGE / f"{module}.py")
    ]
    assert drawings and not missing, f"docs/architecture.md's drawings name what the module lacks: {missing}"
