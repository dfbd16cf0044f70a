"""`python -m npu_worker.bench.report RUN.json` rewrites that run's markdown and plot, beside it."""

from __future__ import annotations

import json

from npu_worker.bench.report import markdown, rerender, summarize_runs, write_report


def report_of(note: str) -> dict:
    return {
        "command": f"npu-worker bench --note {note}",
        "started_at": "s",
        "finished_at": "f",
        "machine": {"platform": "p", "cpu_count": 2, "note": note},
        "health": {"backend": "tone", "device": "cpu"},
        "summary": summarize_runs([]),
        "records": [],
    }


def test_a_run_whose_prefix_has_a_dot_is_rerendered_under_its_own_name(tmp_path):
    """`run.v2.json` was rerendered into run.md and run.png: another run's files, overwritten."""
    write_report(report_of("first"), tmp_path / "run")
    write_report(report_of("second"), tmp_path / "run.v2")
    first = (tmp_path / "run.md").read_text(encoding="utf-8")
    (tmp_path / "run.v2.md").unlink()
    paths = rerender(tmp_path / "run.v2.json")
    assert paths[0] == tmp_path / "run.v2.md"
    assert all(path.name.startswith("run.v2.") for path in paths)
    assert (tmp_path / "run.md").read_text(encoding="utf-8") == first
    second = json.loads((tmp_path / "run.v2.json").read_text(encoding="utf-8"))
    assert (tmp_path / "run.v2.md").read_text(encoding="utf-8") == markdown(second)
