"""`npu-worker batch`'s progress bar: its ETA, its count from polled status and its waiting lines.

Unit tests of `ProgressBar` alone (no worker), kept apart from the commands' runs against a live worker.
"""

from __future__ import annotations

import io

from npu_worker.cli_client import ProgressBar


def test_progress_bar_eta_is_weighted_by_text_length():
    stream = io.StringIO()
    bar = ProgressBar({0: "x" * 10, 1: "x" * 30}, stream, live=False)
    bar.started -= 5.0  # pretend the first section took 5 s
    bar(0, {"event": "progress", "idx": 0, "status": "ok"})
    # each section weighs its chars plus the mean (20): 50 left at 30 per 5 s (by chars alone, 15 s)
    assert abs(bar.eta() - 5.0 * 50 / 30) < 0.5
    assert "1/2" in stream.getvalue()


def test_progress_bar_eta_after_a_short_first_section_stays_near_the_count():
    """A title slide first: by characters alone 3 chars in 3 s made 1 200 more read as 20 minutes."""
    stream = io.StringIO()
    bar = ProgressBar({0: "Hi.", 1: "x" * 600, 2: "x" * 600}, stream, live=False)
    bar.started -= 3.0
    bar(0, {"event": "progress", "idx": 0, "status": "ok"})
    by_count = 3 * 2  # 2 sections left at 3 s each
    last = stream.getvalue().splitlines()[-1]
    assert last.startswith("s00 ok") and "ETA 0:" in last, last  # was `ETA 20:00`
    shown = int(last.rsplit("ETA 0:", 1)[1].rstrip(")"))
    assert by_count <= shown <= 3 * by_count, last


def test_progress_bar_counts_polled_status_before_sections_arrive():
    stream = io.StringIO()
    bar = ProgressBar({i: "x" * 10 for i in range(4)}, stream, live=False)
    bar(-1, {"event": "status", "status": "running", "done": 1, "total": 4, "current_idx": 1})
    assert "1/4 s01" in bar.line() and bar.eta() is not None
    bar(-1, {"event": "status", "status": "running", "done": 3, "total": 4, "current_idx": 3})
    assert "3/4" in stream.getvalue().splitlines()[-1]


def test_progress_bar_says_a_long_wait_without_a_line_per_second():
    """A `Loading` answer asks for 1 s: off a terminal a line when the error name changes, else one per
    10 s of waiting (its words change with each kept job read); on a terminal, the line redrawn."""
    stream = io.StringIO()
    bar = ProgressBar({0: "x"}, stream, live=False)
    said = {"event": "waiting", "status": 503, "retry_after": 1.0, "wait_limit": 900.0}
    for waited in range(25):
        bar(-1, said | {"error": f"Loading: reading the kept jobs ({waited} of 99)", "waited": waited})
    bar(-1, said | {"error": "QueueFull: 5000 waiting", "waited": 25, "status": 429})
    lines = stream.getvalue().splitlines()
    assert lines == [
        "waiting for the worker: Loading: reading the kept jobs (0 of 99) (again in 1 s; waited 0:00 of at most 15:00)",
        "waiting for the worker: Loading: reading the kept jobs (10 of 99) (again in 1 s; waited 0:10 of at most 15:00)",
        "waiting for the worker: Loading: reading the kept jobs (20 of 99) (again in 1 s; waited 0:20 of at most 15:00)",
        "waiting for the worker: QueueFull: 5000 waiting (again in 1 s; waited 0:25 of at most 15:00)",
    ]
    live = io.StringIO()
    bar = ProgressBar({0: "x"}, live, live=True)
    bar(-1, said | {"error": "Loading: x", "waited": 0})
    bar(-1, said | {"error": "Loading: x", "waited": 1})
    bar(0, {"event": "progress", "idx": 0, "status": "synth"})
    assert live.getvalue().count("\rwaiting for the worker: Loading: x") == 2 and "\n" not in live.getvalue()
    bar.end_line()
    assert live.getvalue().endswith("\n")


def test_progress_bar_says_a_new_wait_after_the_worker_answered():
    """The worker answered in between (a poll, a re-attach that brought nothing new), so `waited` began
    again from 0: off a terminal its lines stopped until the new count passed the last line's, and a
    worker that answered every few seconds between its `Loading`s was waited on in silence."""
    stream = io.StringIO()
    bar = ProgressBar({0: "x"}, stream, live=False)
    said = {"event": "waiting", "status": 503, "error": "Loading: x", "retry_after": 1.0, "wait_limit": 900.0}
    for waited in [0, 5, 9, 10, 0, 3, 0, 8]:
        bar(-1, said | {"waited": waited})
    told = [line.split("waited ")[1].split(" ")[0] for line in stream.getvalue().splitlines()]
    assert told == ["0:00", "0:10", "0:00", "0:00"]
