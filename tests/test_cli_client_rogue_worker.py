"""`npu-worker batch` against a worker that breaks the protocol (tests/rogue_worker.py): its exit status
says failure whenever a section has no result, and odd values in events are one line on stderr and exit
2, never a traceback (whose exit status 1 would read as "some sections failed")."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.rogue_worker import RogueWorker, ndjson, reply
from tests.test_cli_client import run_cli, write_lecture

START = {"event": "start", "job_id": "j1", "total": 2, "seq": 1}
OK0 = {"event": "progress", "idx": 0, "status": "ok", "wav_path": "/w/s00.wav", "duration_sec": 1.0, "seq": 2}
DONE = {"event": "done", "total": 2, "ok_count": 2, "fail_count": 0, "cancelled": False, "seq": 3}


def body(payload: Any, status: int = 200) -> bytes:
    return reply(status, json.dumps(payload).encode())


def polled(sections: list[dict[str, Any]]) -> Any:
    def script(method: str, path: str) -> bytes:
        if path == "/synth_batch?async=1":
            return body({"job_id": "j1", "status": "queued", "total": 2})
        if path == "/jobs/j1/status":
            return body({"job_id": "j1", "status": "done", "done": 2, "total": 2})
        return body({"job_id": "j1", "status": "done", "total": 2, "sections": sections})

    return script


@pytest.mark.parametrize("poll", [False, True], ids=["stream", "poll"])
async def test_a_section_the_worker_never_reported_is_a_failure(tmp_path, capsys, poll: bool):
    """The worker says done (all ok) but never sent section 1's result: the run did not succeed."""
    script = polled([OK0]) if poll else (lambda method, path: ndjson(START, OK0, DONE))
    lecture = write_lecture(tmp_path / "lecture.json", ["one.", "two."])
    async with RogueWorker(script) as rogue:
        argv = ["batch", str(lecture), "--out-dir", str(tmp_path / "out"), "--base", rogue.base]
        code = await run_cli(argv + (["--poll"] if poll else []))
    assert code == 1
    assert "npu-worker batch: no result for 1 section: s01" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("script", "poll", "code", "last"),
    [
        (
            lambda method, path: ndjson(
                START, OK0 | {"duration_sec": "long"}, OK0 | {"idx": 1, "seq": 3}, DONE | {"seq": 4}
            ),
            False,
            0,
            "2/2 sections ok, 0 failed; 1.0 s of audio",
        ),
        (  # an integer past any float: OverflowError in the summary, a traceback and exit 1
            lambda method, path: ndjson(
                START, OK0, OK0 | {"idx": 1, "seq": 3, "duration_sec": 10**400}, DONE | {"seq": 4}
            ),
            False,
            0,
            "2/2 sections ok, 0 failed; 1.0 s of audio",
        ),
        (
            polled([OK0, {"event": "error", "idx": "one", "status": "fail", "error": "E"}]),
            True,
            1,
            "no result for 1 section: s01",
        ),
        (
            polled([OK0, {"event": "error", "idx": [1], "status": "fail", "error": "E"}]),
            True,
            1,
            "no result for 1 section: s01",
        ),
        (
            polled("not a list"),
            True,
            2,
            "npu-worker batch: the worker sent a result whose sections are no list",
        ),
        (
            lambda method, path: body({"status": "queued"}),
            True,
            2,
            "npu-worker batch: the worker accepted the batch without a job_id",
        ),
        (
            lambda method, path: body({"job_id": "j1", "status": ["done"], "done": 2, "total": 2}),
            True,
            2,
            "npu-worker batch: the worker answered no status of job j1: {'job_id': 'j1', 'status': ['done']",
        ),
        (
            lambda method, path: body(
                {
                    "job_id": "j1",
                    "status": "done",
                    "done": 10**30,
                    "total": 2,
                    "event": ["x"],
                    "sections": [OK0],
                }
            ),
            True,
            1,
            "no result for 1 section: s01",
        ),
        (
            polled([OK0, OK0 | {"idx": 1, "event": ["progress"]}]),
            True,
            2,
            "npu-worker batch: the worker sent a result section that is no event:",
        ),
    ],
    ids=[
        "duration-not-a-number",
        "duration-past-any-float",
        "error-idx-not-a-number",
        "error-idx-a-list",
        "sections-not-a-list",
        "no-job-id",
        "status-not-a-word",
        "status-event-a-list-done-past-counting",
        "result-event-not-a-word",
    ],
)
async def test_odd_values_from_the_worker_are_reported_in_words(
    tmp_path, capsys, script: Any, poll: bool, code: int, last: str
):
    lecture = write_lecture(tmp_path / "lecture.json", ["one.", "two."])
    async with RogueWorker(script) as rogue:
        argv = ["batch", str(lecture), "--out-dir", str(tmp_path / "out"), "--base", rogue.base]
        status = await run_cli(argv + (["--poll"] if poll else []))
    out = capsys.readouterr()
    assert status == code, out
    assert last in out.out + out.err


HOSTILE = "\x1b]0;owned\x07\x1b[2J\u202e"  # retitle the window, clear the screen, reverse the text


def reattached_hostile_id(method: str, path: str) -> bytes:
    """A job id with escapes, then a stream lost and re-attached: `re-attached to job …` wrote it raw."""
    if method == "POST":
        return ndjson(START | {"job_id": f"j{HOSTILE}"}, OK0)
    return ndjson(OK0 | {"idx": 1, "seq": 3}, DONE | {"seq": 4})


@pytest.mark.parametrize("where", ["section error", "refusal", "synth answer", "re-attached job id"])
async def test_words_from_the_worker_reach_the_terminal_without_control_characters(tmp_path, capsys, where):
    """A worker's error text and paths were printed as sent: escape sequences in them drove the
    user's terminal (cursor, title, screen) and a bidi override could hide what was said."""
    failed = {"event": "error", "idx": 1, "status": "fail", "error": f"EngineError: {HOSTILE}", "seq": 3}
    scripts = {
        "section error": lambda method, path: ndjson(START, OK0, failed, DONE | {"seq": 4}),
        "refusal": lambda method, path: body({"error": f"BadRequest: {HOSTILE}"}, 400),
        "synth answer": lambda method, path: body({"status": "ok", "wav_path": f"/w/{HOSTILE}.wav"}),
        "re-attached job id": reattached_hostile_id,
    }
    lecture = write_lecture(tmp_path / "lecture.json", ["one.", "two."])
    async with RogueWorker(scripts[where]) as rogue:
        if where == "synth answer":
            await run_cli(["synth", "hi", "-o", str(tmp_path / "x.wav"), "--base", rogue.base])
        else:
            await run_cli(["batch", str(lecture), "--out-dir", str(tmp_path / "out"), "--base", rogue.base])
    out = capsys.readouterr()
    shown = out.out + out.err
    assert "\\x1b]0;owned\\x07" in shown  # said, as escapes
    assert not any(char in shown for char in "\x1b\x07\u202e")


@pytest.mark.parametrize("poll", [False, True], ids=["stream", "poll"])
async def test_the_json_result_reaches_the_terminal_without_control_characters(tmp_path, capsys, poll):
    """`--json` printed the worker's words with `ensure_ascii=False`: json escapes only what is below
    U+0020, so a bidi override or a C1 control (U+009B, CSI to a terminal) went out raw. They are now
    JSON escapes (the same text once parsed); Korean stays readable."""
    hostile = HOSTILE + "\x9b2J 한국어"
    failed = {"event": "error", "idx": 1, "status": "fail", "error": f"EngineError: {hostile}", "seq": 3}
    script = (
        polled([OK0, {key: value for key, value in failed.items() if key != "seq"}])
        if poll
        else lambda method, path: ndjson(START, OK0, failed, DONE | {"seq": 4})
    )
    lecture = write_lecture(tmp_path / "lecture.json", ["one.", "two."])
    async with RogueWorker(script) as rogue:
        argv = ["batch", str(lecture), "--out-dir", str(tmp_path / "out"), "--base", rogue.base, "--json"]
        code = await run_cli(argv + (["--poll"] if poll else []))
    out = capsys.readouterr().out
    assert code == 1 and not any(char in out for char in "\x1b\x07\u202e\x9b"), repr(out)
    assert json.loads(out)["errors"][0]["error"] == f"EngineError: {hostile}" and "한국어" in out


@pytest.mark.parametrize("poll", [False, True], ids=["stream", "poll"])
async def test_a_number_json_has_no_form_for_is_a_protocol_error_not_invalid_json_out(tmp_path, capsys, poll):
    """A worker's `NaN` (Python's json reads it, no JSON parser does) was taken, and `--json` wrote it
    back out: exit 0 and a result `jq` and every other reader refuse. It breaks the protocol: exit 2."""
    ok0 = json.dumps(OK0).replace('"duration_sec": 1.0', '"duration_sec": NaN').encode() + b"\n"
    sections = b'{"job_id": "j1", "status": "done", "total": 1, "sections": [' + ok0.strip() + b"]}"
    if poll:
        script = lambda method, path: (  # noqa: E731
            reply(200, sections) if path.endswith("/result") else polled([])(method, path)
        )
    else:
        script = lambda method, path: ndjson(START, ok0, DONE | {"seq": 3})  # noqa: E731
    lecture = write_lecture(tmp_path / "lecture.json", ["one."])
    async with RogueWorker(script) as rogue:
        argv = ["batch", str(lecture), "--out-dir", str(tmp_path / "out"), "--base", rogue.base, "--json"]
        code = await run_cli(argv + (["--poll"] if poll else []))
    captured = capsys.readouterr()
    assert code == 2 and "NaN" not in captured.out, captured
    # a stream's line says why; a polled body that is no JSON, as any other, says its status and type
    said = (
        "HTTP 200 with a body that is no JSON object (Content-Type: application/json)"
        if poll
        else "NaN is no JSON number"
    )
    assert said in captured.err, captured.err


async def test_synth_with_figures_that_are_no_numbers_still_says_ok(tmp_path, capsys):
    """`"duration_sec": null` in an ok answer was a TypeError traceback (exit 1, read as a failure)."""
    answer = body({"status": "ok", "wav_path": "/w/x.wav", "duration_sec": None, "rtf": "fast"})
    async with RogueWorker(lambda method, path: answer) as rogue:
        code = await run_cli(["synth", "hi", "-o", str(tmp_path / "x.wav"), "--base", rogue.base])
    assert code == 0 and capsys.readouterr().out.startswith("/w/x.wav: 0.00 s of audio")


async def test_batch_says_each_wait_a_loading_or_full_worker_asks_for(tmp_path, capsys):
    """A worker that answers "not now" (its queue full at the submission, loading at the re-attach after
    a restart) was waited on in silence, the batch then given up after ≈ 40 s; now each wait is a line."""
    answers = [
        reply(429, b'{"error": "QueueFull: 5000 sections are waiting"}', headers="Retry-After: 0\r\n"),
        ndjson(START),
        reply(503, b'{"error": "Loading: the engine is still loading"}', headers="Retry-After: 0\r\n"),
        ndjson(OK0, OK0 | {"idx": 1, "seq": 3}, DONE | {"seq": 4}),
    ]
    lecture = write_lecture(tmp_path / "lecture.json", ["one.", "two."])
    healthy = body({"status": "ok"})  # /health, asked after the re-attach's "not now"
    async with RogueWorker(lambda method, path: healthy if path == "/health" else answers.pop(0)) as rogue:
        code = await run_cli(
            ["batch", str(lecture), "--out-dir", str(tmp_path / "out"), "--base", rogue.base]
        )
    err = capsys.readouterr().err
    assert code == 0 and answers == []
    waits = [line for line in err.splitlines() if line.startswith("waiting for the worker: ")]
    assert waits == [
        "waiting for the worker: QueueFull: 5000 sections are waiting (again in 0.5 s; waited 0:00 of at most 15:00)",
        "waiting for the worker: Loading: the engine is still loading (again in 0.5 s; waited 0:00 of at most 15:00)",
    ]


@pytest.mark.parametrize(
    ("limit", "said"),
    [
        (
            "0.1",
            "stream lost after event 1; the worker still answered 'Loading: x' after 0.1",
        ),  # 0.1 s or more
        ("nan", "--wait-limit must be a finite number of seconds ≥ 0, not nan"),
        ("-5", "--wait-limit must be a finite number of seconds ≥ 0, not -5"),
    ],
)
async def test_batch_wait_limit_bounds_the_wait_for_a_worker_that_stays_loading(
    tmp_path, capsys, limit, said
):
    """`--wait-limit` is the library's `wait_limit`: a worker still compiling past it is given up, exit 2."""
    loading = reply(503, b'{"error": "Loading: x"}', headers="Retry-After: 0\r\n")
    lecture = write_lecture(tmp_path / "lecture.json", ["one.", "two."])
    script = lambda method, path: ndjson(START) if method == "POST" else loading  # noqa: E731
    async with RogueWorker(script) as rogue:
        argv = [
            "batch",
            str(lecture),
            "--out-dir",
            str(tmp_path / "o"),
            "--base",
            rogue.base,
            "--wait-limit",
            limit,
        ]
        code = await run_cli(argv)
    assert code == 2 and said in capsys.readouterr().err


GONE = reply(404, b'{"status": "fail", "error": "JobNotFound: no job j1"}')
LOADING = reply(503, b'{"error": "Loading: x"}', headers="Retry-After: 0\r\n")


@pytest.mark.parametrize(
    ("again", "said"),
    [
        (
            LOADING,
            "npu-worker batch: job j1 was not cancelled: it may still run and write its wavs into {out}",
        ),
        (GONE, "npu-worker batch: the worker no longer knows job j1 (restarted without its state dir"),
    ],
    ids=["loading-past-the-limit", "job-gone"],
)
async def test_a_batch_given_up_says_what_became_of_its_job(tmp_path, capsys, again: bytes, said: str):
    """Given up after its job was queued, `batch` said only why (`HTTP 404: JobNotFound: no job j1` for a
    worker restarted with another state dir): the job left running unsaid (a run started again made the
    same files alongside it), the sections a lost job will never finish unsaid. A job lost as a cluster
    loses one (its Redis restarted without persistence, docs/protocol.md) is named too: the line named
    only the state dir, which a cluster's caller had not touched."""
    lecture = write_lecture(tmp_path / "lecture.json", ["one.", "two."])
    script = lambda method, path: ndjson(START, OK0) if method == "POST" else again  # noqa: E731
    async with RogueWorker(script) as rogue:
        out = tmp_path / "out"
        argv = ["batch", str(lecture), "--out-dir", str(out), "--base", rogue.base, "--wait-limit", "0.1"]
        code = await run_cli(argv)
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and err[-1].startswith(said.format(out=out.resolve())), err
    assert err[-1].endswith(
        "(GET /jobs/j1/status says how far; DELETE /jobs/j1 stops it); 1 of 2 sections had finished when it"
        " was given up: 1 ok (s00)"
        if again is LOADING
        else "or the job expired): 1 of 2 sections had finished; send the others again"
    )
    assert again is LOADING or "its queue's Redis restarted without its data" in err[-1]


async def test_a_stream_cut_before_its_start_says_the_batch_may_be_queued(tmp_path, capsys):
    """The worker answered the batch (a worker answers once the job is queued) and the connection broke
    before the `start` line named the job: `batch` said only that the stream broke, so a caller ran it
    again and the worker made every file twice. It says where the job is listed now."""
    lecture = write_lecture(tmp_path / "lecture.json", ["one.", "two."])
    async with RogueWorker(lambda method, path: ndjson()) as rogue:
        argv = ["batch", str(lecture), "--out-dir", str(tmp_path / "out"), "--base", rogue.base]
        code = await run_cli(argv)
    err = capsys.readouterr().err
    assert code == 2 and "the batch stream broke before its start event" in err, err
    assert "it may have queued the batch: GET /jobs lists it (sent again, it would run twice)" in err, err
    assert [method for method, _ in rogue.requests] == ["POST"]


FORGED = "s01 ok  (forged by the worker)"


@pytest.mark.parametrize(
    "where", ["section error", "refusal", "synth answer", "synth failure", "stream lost", "loading"]
)
async def test_a_line_break_in_the_workers_words_forges_no_line(tmp_path, capsys, where):
    """A worker's words inside a line of the command's own (an error, a path) went out with their line
    breaks: the worker's second line read as the command's, a section `ok` or a summary it never made."""
    broken = f"x\n{FORGED}"
    failed = {"event": "error", "idx": 1, "status": "fail", "error": f"EngineError: {broken}", "seq": 3}
    lost = {"event": "error", "error": f"InternalError: {broken}"}  # the stream's own failure: re-attached
    waits = [reply(503, json.dumps({"error": f"Loading: {broken}"}).encode(), headers="Retry-After: 0\r\n")]
    scripts = {
        "section error": lambda method, path: ndjson(START, OK0, failed, DONE | {"seq": 4}),
        "refusal": lambda method, path: body({"error": f"BadRequest: {broken}"}, 400),
        "synth answer": lambda method, path: body({"status": "ok", "wav_path": f"/w/{broken}.wav"}),
        "synth failure": lambda method, path: body({"status": "fail", "error": f"EngineError: {broken}"}),
        "stream lost": lambda method, path: (
            ndjson(START, OK0, lost) if method == "POST" else ndjson(failed, DONE | {"seq": 4})
        ),
        "loading": lambda method, path: (
            waits.pop() if waits else ndjson(START, OK0, failed, DONE | {"seq": 4})
        ),
    }
    lecture = write_lecture(tmp_path / "lecture.json", ["one.", "two."])
    async with RogueWorker(scripts[where]) as rogue:
        if where.startswith("synth"):
            await run_cli(["synth", "hi", "-o", str(tmp_path / "x.wav"), "--base", rogue.base])
        else:
            await run_cli(["batch", str(lecture), "--out-dir", str(tmp_path / "out"), "--base", rogue.base])
    out = capsys.readouterr()
    shown = out.out + out.err
    assert f"x\\n{FORGED}" in shown, shown  # said, as an escape
    assert FORGED not in shown.replace(f"\\n{FORGED}", ""), shown
