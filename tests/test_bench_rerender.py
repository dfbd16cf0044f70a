"""`python -m npu_worker.bench.report RUN.json` rewrites that run's markdown and plot, beside it."""

from __future__ import annotations

import json
import subprocess
import sys

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


def test_a_rerender_in_a_folder_others_could_replace_is_refused_as_benchs_run_is(tmp_path):
    """`bench --out` refuses a folder another user owns or could re-point before its run; a rerender
    wrote its markdown there all the same (a 0777 folder above: another user's link in its place)."""
    shared = tmp_path / "shared"
    runs = shared / "runs"
    runs.mkdir(parents=True)
    write_report(report_of("first"), runs / "run")
    (runs / "run.md").unlink()
    shared.chmod(0o777)
    try:
        command = [sys.executable, "-m", "npu_worker.bench.report", str(runs / "run.json")]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    finally:
        shared.chmod(0o755)
    assert done.returncode == 2, done
    assert done.stderr.startswith(
        f"cannot rerender {runs / 'run.json'}: {runs}: others can write in {shared}"
    )
    assert done.stderr.count("\n") == 1 and "give a folder of your own" in done.stderr, done.stderr
    assert not (runs / "run.md").exists()
    assert rerender(runs / "run.json")[0] == runs / "run.md"  # its own folder again: rewritten


def test_a_json_that_is_no_run_is_refused_in_one_line(tmp_path):
    """A JSON file of another shape (`[]`, `{}`, a run with fields missing) was a traceback (a
    KeyError or AttributeError out of `markdown`); it is one line, exit status 2, and no file made."""
    names = []
    for name, text in [("list", "[]"), ("empty", "{}"), ("partial", '{"command": "bench"}')]:
        (tmp_path / f"{name}.json").write_text(text)
        names.append(str(tmp_path / f"{name}.json"))
    command = [sys.executable, "-m", "npu_worker.bench.report", *names]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done
    lines = done.stderr.splitlines()
    assert [line.split(": ")[0] for line in lines] == [f"cannot rerender {name}" for name in names], lines
    assert all("not a bench run's report" in line for line in lines), lines
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.json", "list.json", "partial.json"]


def test_a_run_recorded_before_health_after_is_rerendered_without_a_lost_worker_line(tmp_path):
    """A run JSON from before `health_after` was recorded has no status after the run to compare: its
    rerendered markdown says nothing of a worker lost under the load (its `ok` before, and no `ok`
    after, read as one restarted); one whose `/health` said `loading` after the run says it."""
    old = {**report_of("old"), "health": {"status": "ok", "backend": "tone", "device": "cpu"}}
    write_report(old, tmp_path / "old")
    rerender(tmp_path / "old.json")
    assert "lived through the run" not in (tmp_path / "old.md").read_text(encoding="utf-8")
    restarted = {**old, "health_after": {"status": "loading"}}
    assert "**Not the figures of a worker that lived through the run**" in markdown(restarted)
