"""How far a `batch` given up on had come, as its last line says it (`cli_stops.finished_so_far`) and its
progress lines count it, against a worker that lies (tests/rogue_worker.py, a real socket):
- every `idx` the worker sent was counted, a section the job does not have and one said twice too: "3 of
  2 sections had finished …: 2 ok (s00, s07), 1 failed";
- `batch --poll` said only the count where the streaming line splits it into ok and failed, though the
  last polled status says both (`ok`, `fail`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.rogue_worker import RogueWorker, ndjson, reply
from tests.test_cli_client import run_cli, write_lecture

START = {"event": "start", "job_id": "j1", "total": 2, "seq": 1}
OK0 = {"event": "progress", "idx": 0, "status": "ok", "wav_path": "/w/s00.wav", "duration_sec": 1.0, "seq": 2}
LOADING = reply(503, b'{"error": "Loading: x"}', headers="Retry-After: 0\r\n")
GIVEN_UP = "(GET /jobs/j1/status says how far; DELETE /jobs/j1 stops it); "


def body(payload: Any, status: int = 200) -> bytes:
    return reply(status, json.dumps(payload).encode())


async def given_up(tmp_path: Any, script: Any, texts: list[str], poll: bool) -> None:
    """A batch given up on: the worker loading past `--wait-limit` once its first
    answers were sent (the stream re-attached to, or the status polled again)."""
    lecture = write_lecture(tmp_path / "lecture.json", texts)
    async with RogueWorker(script) as rogue:
        argv = ["batch", str(lecture), "--out-dir", str(tmp_path / "out"), "--base", rogue.base]
        code = await run_cli(argv + ["--wait-limit", "0.1"] + (["--poll"] if poll else []))
    assert code == 2


async def test_only_the_jobs_own_sections_are_counted_once_each(tmp_path, capsys):
    stream = ndjson(
        START,
        OK0,
        OK0 | {"idx": 7, "wav_path": "/w/s07.wav", "seq": 3},  # no section of this job
        {"event": "error", "idx": 9, "status": "fail", "error": "SynthesisError: x", "seq": 4},
        OK0 | {"seq": 5},  # s00 again
        {"event": "progress", "idx": -3, "status": "ok", "seq": 6},
        {"event": "error", "idx": True, "status": "fail", "error": "SynthesisError: y", "seq": 7},  # as s01
    )
    script = lambda method, path: stream if method == "POST" else LOADING  # noqa: E731
    await given_up(tmp_path, script, ["one.", "two."], poll=False)
    err = capsys.readouterr().err
    last = err.splitlines()[-1]
    assert last.endswith(GIVEN_UP + "1 of 2 sections had finished when it was given up: 1 ok (s00)"), err
    progress = [line for line in err.splitlines() if line.startswith("s00 ok")]
    assert len(progress) == 2 and all(" 1/2 " in line for line in progress), err
    assert "s07" not in err and "s09" not in err and "s01" not in err, err


def polling(*statuses: dict[str, Any]) -> Any:
    """A worker that queues the job, answers its status with `statuses` one after another, then loads."""
    answers = iter(statuses)

    def script(method: str, path: str) -> bytes:
        if path == "/synth_batch?async=1":
            return body({"job_id": "j1", "status": "queued", "total": 3})
        if path == "/jobs/j1/status" and (status := next(answers, None)) is not None:
            return body({"job_id": "j1", "status": "running", "total": 3, "current_idx": 2} | status)
        return LOADING

    return script


@pytest.mark.parametrize(
    ("status", "said"),
    [
        (
            {"done": 2, "ok": 1, "fail": 1},
            "2 of 3 sections had finished when it was given up: 1 ok, 1 failed",
        ),
        ({"done": 2, "ok": 2, "fail": 0}, "2 of 3 sections had finished when it was given up: 2 ok"),
        # a worker's counts past the lecture's sections: bounded by them, and a split that does not add up
        # to the count not said
        ({"done": 7, "ok": 5, "fail": 2}, "3 of 3 sections had finished when it was given up"),
        ({"done": 2, "ok": True, "fail": "1"}, "2 of 3 sections had finished when it was given up"),
        # a split short of the count (a worker's done is ok plus fail): it said '2 of 3 …: 0 ok'
        ({"done": 2, "ok": 0, "fail": 0}, "2 of 3 sections had finished when it was given up"),
        ({"done": 2, "ok": 1, "fail": 0}, "2 of 3 sections had finished when it was given up"),
    ],
    ids=["split", "all-ok", "past-the-sections", "no-counts", "none-of-the-count", "short-of-the-count"],
)
async def test_a_polled_batch_given_up_says_its_ok_and_failed_split(tmp_path, capsys, status, said):
    await given_up(tmp_path, polling(status), ["one.", "two.", "three."], poll=True)
    err = capsys.readouterr().err
    assert err.splitlines()[-1].endswith(GIVEN_UP + said), err
    assert "7 done" not in err and "7/3" not in err, err
