"""The import direction of docs/architecture.md is checked, not hoped for."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "npu_worker"


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                found.add(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                found.add(node.module)
    return found


def modules_of(subpath: str) -> list[Path]:
    target = PACKAGE / subpath
    return sorted(target.rglob("*.py")) if target.is_dir() else [target]


def offenders(subpath: str, forbidden: tuple[str, ...]) -> list[str]:
    bad = []
    for path in modules_of(subpath):
        for name in imported_modules(path):
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                bad.append(f"{path.relative_to(PACKAGE.parent)} imports {name}")
    return bad


def test_core_layers_never_import_aiohttp():
    for part in (
        "errors.py",
        "refusals.py",
        "wire.py",
        "protocol.py",
        "audio.py",
        "audio_decode.py",
        "voices.py",
        "voice_names.py",
        "voice_upload.py",
        "engine",
        "jobs",
    ):
        assert offenders(part, ("aiohttp",)) == []


def test_engine_knows_nothing_of_jobs_or_views():
    assert (
        offenders(
            "engine",
            (
                "npu_worker.jobs",
                "npu_worker.http_compat",
                "npu_worker.ws_server",
                "npu_worker.openai_compat",
                "npu_worker.app",
            ),
        )
        == []
    )


def test_engine_is_built_from_explicit_inputs_not_the_server_settings():
    assert offenders("engine", ("npu_worker.config", "npu_worker.engine_options")) == []


def test_server_code_never_imports_the_test_tooling():
    for part in (
        "engine",
        "engine_options.py",
        "jobs",
        "http_compat",
        "ws_server",
        "app.py",
        "client",
        "bench",
    ):
        assert offenders(part, ("npu_worker.testing",)) == []


def test_jobs_never_import_the_views():
    views = ("npu_worker.http_compat", "npu_worker.ws_server", "npu_worker.openai_compat", "npu_worker.app")
    assert offenders("jobs", views) == []
    for part in ("voices.py", "voice_names.py", "voice_upload.py"):
        assert offenders(part, views) == []


def test_client_and_bench_talk_over_the_wire_only():
    forbidden = (
        "npu_worker.engine",
        "npu_worker.jobs",
        "npu_worker.http_compat",
        "npu_worker.ws_server",
        "npu_worker.openai_compat",
        "npu_worker.app",
    )
    for part in ("client", "cli_client.py", "cli_client_flags.py", "cli_batch.py", "cli_stops.py", "bench"):
        assert (PACKAGE / part).exists(), part
        assert offenders(part, forbidden) == []


def test_the_job_core_is_split_by_responsibility_and_renders_no_http_bodies():
    for name in ("model", "journal", "admission", "runner", "retention", "registry", "scheduler"):
        assert (PACKAGE / "jobs" / f"{name}.py").is_file(), name
    model = (PACKAGE / "jobs" / "model.py").read_text(encoding="utf-8")
    assert "status_body" not in model and "result_body" not in model
    assert offenders("jobs/model.py", ("numpy",)) == []


def callers_of(call: str, defined_in: str) -> list[str]:
    return sorted(
        path.relative_to(PACKAGE.parent).as_posix()
        for path in PACKAGE.rglob("*.py")
        if call in path.read_text(encoding="utf-8") and path.name != defined_in
    )


def test_only_the_engine_thread_writes_output_files():
    """Every wav goes through PathPolicy.write_output, called from the engine thread (the runner; with a
    Redis queue, the cluster runner of a `both` node for the jobs it accepted), or from an accepting
    node's writer, which hands it to a thread: `self._write,`, the write counted against
    --jobs-max-bytes there), and on through files.write_under_roots (no link followed): one seam for path safety."""
    writer = "npu_worker/jobs/cluster/writer.py"
    engine_threads = ["npu_worker/jobs/cluster/engine_node.py", "npu_worker/jobs/runner.py"]
    assert callers_of("write_output(", "paths.py") == sorted([*engine_threads, writer])
    assert callers_of("to_thread(self._write,", "paths.py") == [writer]
    assert (PACKAGE / "jobs/cluster/writer.py").read_text(encoding="utf-8").count(
        "write_output("
    ) == 2  # in `_write`
    assert callers_of("write_under_roots(", "files.py") == ["npu_worker/paths.py"]
