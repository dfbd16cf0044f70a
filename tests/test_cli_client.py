"""`npu-worker synth` and `npu-worker batch` against a live worker, run in-process through main(argv)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
import wave
from pathlib import Path
from typing import Any

import pytest

from npu_worker.cli_client import main
from npu_worker.http_compat.metrics import METRICS_KEY
from tests.timing import seconds
from tests.tone_engine import HeldLoad, ToneEngine

ROOT = Path(__file__).resolve().parents[1]


def base_of(test_client: Any) -> str:
    return f"http://127.0.0.1:{test_client.port}"


def write_lecture(path: Path, texts: list[str]) -> Path:
    body = {"title": "t", "lang": "ko", "sections": [{"idx": i, "text": t} for i, t in enumerate(texts)]}
    path.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    return path


async def run_cli(argv: list[str]) -> int:
    return await asyncio.to_thread(main, argv)


async def test_batch_writes_one_wav_per_section_and_exits_zero(worker, tmp_path, capsys):
    server = await worker()
    lecture = write_lecture(
        tmp_path / "lecture.json", ["첫 번째 슬라이드.", "두 번째.", "세 번째 슬라이드입니다."]
    )
    out_dir = tmp_path / "out"
    code = await run_cli(["batch", str(lecture), "--out-dir", str(out_dir), "--base", base_of(server)])
    captured = capsys.readouterr()
    assert code == 0
    for idx in range(3):
        with wave.open(str(out_dir / f"s{idx:02d}.wav")) as wav:
            assert wav.getnframes() > 0
    assert "3/3 sections ok, 0 failed" in captured.out
    # Not a terminal: one progress line per finished section, each with the count and an ETA.
    progress = [line for line in captured.err.splitlines() if line.startswith("s0")]
    assert [line.split()[0] for line in progress] == ["s00", "s01", "s02"]
    assert "3/3" in progress[-1] and "ETA" in progress[-1]


async def test_batch_exits_nonzero_and_names_the_failed_sections(worker, tmp_path, capsys):
    server = await worker(ToneEngine(fail_on="BOOM"))
    lecture = write_lecture(tmp_path / "lecture.json", ["fine", "BOOM", "fine too", ""])
    code = await run_cli(
        ["batch", str(lecture), "--out-dir", str(tmp_path / "out"), "--base", base_of(server)]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "2/4 sections ok, 2 failed" in out
    assert "s01 failed: EngineError" in out and "s03 failed: EmptyText" in out
    assert (tmp_path / "out" / "s02.wav").exists() and not (tmp_path / "out" / "s01.wav").exists()


async def test_batch_in_polling_mode_prints_the_result_as_json(worker, tmp_path, capsys):
    server = await worker()
    lecture = write_lecture(tmp_path / "lecture.json", ["a b c", "d e f"])
    argv = [
        "batch",
        str(lecture),
        "--out-dir",
        str(tmp_path / "o"),
        "--base",
        base_of(server),
        "--poll",
        "--json",
    ]
    code = await run_cli(argv)
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    assert result["wav_paths"] == [str(tmp_path / "o" / "s00.wav"), str(tmp_path / "o" / "s01.wav")]


async def test_batch_against_no_worker_exits_two(tmp_path, capsys):
    lecture = write_lecture(tmp_path / "lecture.json", ["a"])
    code = await run_cli(["batch", str(lecture), "--out-dir", str(tmp_path), "--base", "http://127.0.0.1:9"])
    assert code == 2
    assert "npu-worker batch:" in capsys.readouterr().err


async def test_a_cancelled_batch_is_not_an_exit_zero(worker, tmp_path, capsys):
    """`DELETE /jobs/{id}` from elsewhere: the sections done are kept, but the run did not succeed."""
    engine = ToneEngine()
    engine.gate = threading.Event()
    server = await worker(engine)
    lecture = write_lecture(tmp_path / "lecture.json", ["one.", "two.", "three."])
    argv = ["batch", str(lecture), "--out-dir", str(tmp_path / "out"), "--base", base_of(server)]
    running = asyncio.ensure_future(run_cli(argv))
    async with asyncio.timeout(seconds(10)):
        while not (jobs := (await (await server.get("/jobs")).json())["jobs"]):
            await asyncio.sleep(0.02)
    assert (await server.delete(f"/jobs/{jobs[0]['job_id']}")).status == 200
    engine.gate.set()
    assert await running == 1
    assert f"job {jobs[0]['job_id']} was cancelled before its end" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("poll", "sent", "status", "word"),
    [
        (False, signal.SIGINT, 130, "interrupted"),
        (True, signal.SIGINT, 130, "interrupted"),
        (False, signal.SIGTERM, 143, "terminated"),
    ],
    ids=["ctrl-c", "ctrl-c-poll", "sigterm"],
)
async def test_ctrl_c_or_sigterm_cancels_the_batch(
    worker, tmp_path, poll: bool, sent: signal.Signals, status: int, word: str
):
    """Ctrl-C was a traceback (and a status of -2), and the job went on without anyone waiting for it:
    a run started again made the same files alongside it. SIGTERM (`timeout`, a service manager) ended
    the client silently, the job left running the same way. Now the job is cancelled first."""
    server = await worker(ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.05))
    lecture = write_lecture(tmp_path / "lecture.json", ["one.", "two " * 50, "three " * 50])
    argv = ["batch", str(lecture), "--out-dir", str(tmp_path / "out"), "--base", base_of(server)]
    process = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "npu_worker.cli_client", *argv, *(["--poll"] if poll else [])],
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        # as a script's `npu-worker batch … &` starts it (and as CI may): SIGINT ignored, which Python
        # kept, so a Ctrl-C or `kill -INT` did nothing and the batch ran on
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        async with asyncio.timeout(seconds(20)):
            assert process.stderr is not None
            while not (line := await process.stderr.readline()).startswith(
                b"s00 ok" if not poll else b"1 done"
            ):
                assert line, "the client ended before its first section"
            process.send_signal(sent)
            out, err = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    [job] = (await (await server.get("/jobs")).json())["jobs"]
    assert process.returncode == status and b"Traceback" not in err, (process.returncode, err)
    assert err.decode().splitlines() == [
        f"npu-worker batch: {word}; job {job['job_id']} cancelled, 1 of 3 sections done (their wavs are kept)"
    ]
    async with asyncio.timeout(seconds(10)):
        while (await (await server.get(f"/jobs/{job['job_id']}/status")).json())["status"] != "cancelled":
            await asyncio.sleep(0.02)
    assert (tmp_path / "out" / "s00.wav").exists() and not (tmp_path / "out" / "s02.wav").exists()


@pytest.mark.parametrize(
    "section, problem",
    [
        ({"idx": "3", "text": "a"}, "section 0: 'idx' must be a non-negative integer, got '3'"),
        ({"idx": 1.0, "text": "a"}, "section 0: 'idx' must be a non-negative integer, got 1.0"),
        ({"idx": True, "text": "a"}, "section 0: 'idx' must be a non-negative integer, got True"),
        ({"idx": 0, "text": 5}, "section 0: 'text' must be a string"),
    ],
)
async def test_a_lecture_with_wrong_types_is_one_line_and_exit_two(tmp_path, capsys, section, problem):
    lecture = tmp_path / "bad.json"
    lecture.write_text(json.dumps({"sections": [section]}), encoding="utf-8")
    code = await run_cli(["batch", str(lecture), "--out-dir", str(tmp_path), "--base", "http://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert code == 2 and err == f"npu-worker batch: cannot read {lecture}: {problem}\n"


async def test_a_null_idx_is_its_position_as_the_worker_reads_it(worker, tmp_path, capsys):
    server = await worker()
    lecture = tmp_path / "nulls.json"
    lecture.write_text(
        json.dumps({"sections": [{"idx": None, "text": "a."}, {"text": "b."}]}), encoding="utf-8"
    )
    code = await run_cli(["batch", str(lecture), "--out-dir", str(tmp_path / "o"), "--base", base_of(server)])
    assert code == 0 and (tmp_path / "o" / "s00.wav").exists() and (tmp_path / "o" / "s01.wav").exists()


async def test_a_lecture_saved_with_a_byte_order_mark_is_read(worker, tmp_path, capsys):
    """Notepad saves UTF-8 with a BOM: `Unexpected UTF-8 BOM` was exit 2 before anything was sent."""
    server = await worker()
    lecture = write_lecture(tmp_path / "bom.json", ["첫 번째.", "두 번째."])
    lecture.write_bytes(b"\xef\xbb\xbf" + lecture.read_bytes())
    code = await run_cli(["batch", str(lecture), "--out-dir", str(tmp_path / "o"), "--base", base_of(server)])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "o" / "s00.wav").exists() and (tmp_path / "o" / "s01.wav").exists()


async def test_synth_writes_the_wav_and_prints_its_duration(worker, tmp_path, capsys):
    server = await worker()
    out = tmp_path / "hello.wav"
    code = await run_cli(["synth", "안녕하세요", "-o", str(out), "--base", base_of(server)])
    assert code == 0 and out.exists()
    assert str(out) in capsys.readouterr().out


TOKEN = "a-token-of-some-length-0123456789"


@pytest.mark.parametrize("command", ["synth", "batch"])
async def test_a_token_given_as_a_flag_is_warned_about_once(worker, tmp_path, capsys, monkeypatch, command):
    """`--token` put the token in `ps` for every local user for as long as the command ran (a lecture
    batch: many minutes), silently; NPU_WORKER_TOKEN, which the client reads too, does not."""
    server = await worker(token=TOKEN)
    if command == "synth":
        argv = ["synth", "안녕하세요", "-o", str(tmp_path / "a.wav")]
    else:
        argv = [
            "batch",
            str(write_lecture(tmp_path / "l.json", ["하나.", "둘."])),
            "--out-dir",
            str(tmp_path),
        ]
    argv += ["--base", base_of(server)]
    monkeypatch.delenv("NPU_WORKER_TOKEN", raising=False)
    assert await run_cli([*argv, "--token", TOKEN]) == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert warned == [
        f"npu-worker {command}: warning: --token was given on the command line, which every local user can "
        "read for as long as the command runs (ps, /proc/<pid>/cmdline); give it as NPU_WORKER_TOKEN in the "
        "environment (or --token-file PATH) instead"
    ]
    monkeypatch.setenv("NPU_WORKER_TOKEN", TOKEN)
    assert await run_cli(argv) == 0
    assert "warning" not in capsys.readouterr().err


async def test_synth_outside_the_allowed_roots_is_refused_with_exit_two(worker, capsys):
    server = await worker()
    code = await run_cli(["synth", "x", "-o", "/proc/not-allowed.wav", "--base", base_of(server)])
    assert code == 2
    assert "OutputPathNotAllowed" in capsys.readouterr().err


def test_synth_help_names_its_own_language_default(capsys):
    """`synth` reads no lecture: its --lang help said "the lecture's, else ko" as batch's does."""
    import argparse

    from npu_worker.cli_client import add_client_commands

    parser = argparse.ArgumentParser()
    add_client_commands(parser.add_subparsers())
    for command, default in (("synth", "(default: ko)"), ("batch", "(default: the lecture's, else ko)")):
        with pytest.raises(SystemExit):
            parser.parse_args([command, "--help"])
        assert default in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(
    ("flags", "problem"),
    [
        (["--base", "notaurl"], "the worker URL must be http(s)://HOST[:PORT], not 'notaurl'"),
        (["--base", "http://[::1"], "the worker URL must be http(s)://HOST[:PORT], not 'http://[::1'"),
        (["--base", "http://u:s3cret@127.0.0.1:9"], "the worker URL must not hold a user or password"),
        (["--token", "bad\ntoken"], "the token must be printable ASCII, with no line break"),
        (["--speed", "nan"], "--speed must be a finite number, not nan"),
        (["--speed", "inf"], "--speed must be a finite number, not inf"),
        # these named the client's `wait_limit` and `stall_limit`, not the flags the caller typed
        (["--wait-limit", "-1"], "--wait-limit must be a finite number of seconds ≥ 0, not -1.0"),
        (["--wait-limit", "nan"], "--wait-limit must be a finite number of seconds ≥ 0, not nan"),
        (["--wait-limit", "1e10"], "--wait-limit must be at most a year (31536000 s), not 10000000000.0"),
    ],
)
@pytest.mark.parametrize("command", ["synth", "batch"])
async def test_an_argument_no_request_can_carry_is_one_line_and_exit_two(
    tmp_path, capsys, command, flags, problem
):
    """Tracebacks before (urllib's unknown url type, http.client's invalid header value); `--speed nan`
    went out as `NaN`, which is not JSON. The port is closed: the refusal comes before any connection."""
    if command == "synth":
        argv = ["synth", "a", "-o", str(tmp_path / "a.wav")]
    else:
        argv = ["batch", str(write_lecture(tmp_path / "l.json", ["a"])), "--out-dir", str(tmp_path)]
    base = [] if "--base" in flags else ["--base", "http://127.0.0.1:9"]
    code = await run_cli([*argv, *base, *flags])
    err = capsys.readouterr().err
    err = "".join(line for line in err.splitlines(True) if "warning: --token was given" not in line)
    assert code == 2 and err.startswith(f"npu-worker {command}: {problem}") and err.count("\n") == 1, err


async def test_a_lecture_nested_too_deeply_is_one_line_and_exit_two(tmp_path, capsys):
    """json.loads raised RecursionError, which nothing caught."""
    lecture = tmp_path / "deep.json"
    lecture.write_text('{"sections": ' + "[" * 100_000, encoding="utf-8")
    code = await run_cli(["batch", str(lecture), "--out-dir", str(tmp_path), "--base", "http://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert (
        code == 2
        and err == f"npu-worker batch: cannot read {lecture}: the JSON is nested too deeply to read\n"
    )


async def release_after_a_refusal(server: Any, engine: HeldLoad, method: str, route: str) -> None:
    """Ends `engine`'s load once the worker has answered `method route` with a 503 (`Loading`)."""
    registry = server.app[METRICS_KEY].registry
    labels = {"method": method, "route": route, "status": "503"}
    try:
        async with asyncio.timeout(seconds(20)):
            while not registry.get_sample_value("npu_worker_http_requests_total", labels):
                await asyncio.sleep(0.01)
    finally:
        engine.loaded.set()


async def test_synth_waits_for_a_loading_worker_and_says_so(worker, tmp_path, capsys):
    """`npu-worker synth` right after the worker started was exit 2, `HTTP 503: Loading`."""
    engine = HeldLoad()
    server = await worker(engine, wait_loaded=False)
    out = tmp_path / "hello.wav"
    release = asyncio.create_task(release_after_a_refusal(server, engine, "POST", "/synth"))
    code = await run_cli(["synth", "안녕하세요", "-o", str(out), "--base", base_of(server)])
    await release
    captured = capsys.readouterr()
    assert code == 0 and out.exists(), captured.err
    assert captured.err.startswith("waiting for the worker: Loading: the engine is still loading")
    assert "of at most 15:00)" in captured.err.splitlines()[0]


async def test_synth_wait_limit_bounds_the_wait(worker, tmp_path, capsys):
    engine = HeldLoad()
    server = await worker(engine, wait_loaded=False)
    argv = ["synth", "x", "-o", str(tmp_path / "x.wav"), "--base", base_of(server), "--wait-limit", "0"]
    try:
        code = await run_cli(argv)
    finally:
        engine.loaded.set()
    assert code == 2 and "npu-worker synth: HTTP 503: Loading:" in capsys.readouterr().err


async def test_batch_stall_limit_gives_up_on_a_job_that_makes_no_progress(worker, tmp_path, capsys):
    """`--stall-limit`: an engine hung in a call kept `batch` waiting for ever (heartbeats kept the
    stream alive); now exit 2, saying why and that the job was left running."""
    engine = ToneEngine()
    engine.gate = threading.Event()
    server = await worker(engine, heartbeat_interval=0.1)
    lecture = write_lecture(tmp_path / "lecture.json", ["하나.", "둘."])
    out = tmp_path / "out"
    argv = ["batch", str(lecture), "--out-dir", str(out), "--base", base_of(server), "--stall-limit", "0.5"]
    try:
        code = await run_cli(argv)
    finally:
        engine.gate.set()
    err = capsys.readouterr().err.splitlines()
    assert code == 2, err
    assert err[-2].startswith("npu-worker batch: job ") and err[-2].endswith(
        ": no progress for 0.5 s (stall_limit) after event 2, while the worker kept it running"
    )
    assert err[-1].startswith("npu-worker batch: job ") and " was not cancelled: it may still run" in err[-1]


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
async def test_a_stall_limit_no_clock_can_keep_names_its_flag(tmp_path, capsys, value):
    """`--stall-limit 0` was refused as the collector's `stall_limit`, a name the caller never typed."""
    lecture = write_lecture(tmp_path / "l.json", ["a"])
    argv = ["batch", str(lecture), "--out-dir", str(tmp_path), "--base", "http://127.0.0.1:9"]
    code = await run_cli([*argv, "--stall-limit", value])
    err = capsys.readouterr().err
    said = f"npu-worker batch: --stall-limit must be a finite number of seconds > 0, not {float(value)!r}\n"
    assert code == 2 and err == said, err


@pytest.mark.parametrize("content", [b"Hello, class.\n", b"\xff\xfe binary"])
async def test_a_lecture_that_is_no_json_says_a_lecture_json_is_expected(tmp_path, capsys, content):
    """A plain text file said only the JSON parser's words (`Expecting value: line 1 column 1`)."""
    lecture = tmp_path / "talk.txt"
    lecture.write_bytes(content)
    code = await run_cli(["batch", str(lecture), "--out-dir", str(tmp_path), "--base", "http://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"npu-worker batch: cannot read {lecture}: not JSON ("), err
    assert err.endswith(
        'a lecture JSON, {"lang": "ko", "sections": [{"idx": 0, "text": "..."}]} or a list is expected\n'
    )


async def test_a_lecture_past_the_size_bound_is_one_line_and_exit_two(tmp_path, capsys):
    """`batch /dev/zero` read until the kernel killed it for its memory; a file one byte past the bound
    (sparse: no disk) is refused having read no more than the bound and one byte."""
    from npu_worker.lecture_file import MAX_LECTURE_BYTES

    lecture = tmp_path / "disk.img"
    with lecture.open("wb") as sparse:
        sparse.truncate(MAX_LECTURE_BYTES + 1)
    code = await run_cli(["batch", str(lecture), "--out-dir", str(tmp_path), "--base", "http://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"npu-worker batch: cannot read {lecture}: more than 64 MiB: "), err
    assert err.endswith("or a list is expected\n") and err.count("\n") == 1, err


@pytest.mark.parametrize("name", ["missing.json", "."])
async def test_a_lecture_that_cannot_be_opened_is_named_once(tmp_path, capsys, name):
    """`cannot read X: [Errno 2] No such file or directory: 'X'` named the file twice, in Python's words."""
    lecture = tmp_path / name
    code = await run_cli(["batch", str(lecture), "--out-dir", str(tmp_path), "--base", "http://127.0.0.1:9"])
    err = capsys.readouterr().err
    why = "No such file or directory" if name != "." else "Is a directory"
    assert code == 2 and err == f"npu-worker batch: cannot read {lecture}: {why}\n", err


@pytest.mark.parametrize("command", ["synth", "batch"])
async def test_a_home_of_no_user_is_one_line_and_exit_two(tmp_path, capsys, command):
    """`-o ~nosuchuser/x.wav` (or `--out-dir`) was pathlib's RuntimeError, a traceback."""
    where = "~npu-worker-no-such-user/out"
    if command == "synth":
        argv, flag = ["synth", "hello", "-o", f"{where}/x.wav"], "--output"
    else:
        argv, flag = (
            ["batch", str(write_lecture(tmp_path / "l.json", ["a"])), "--out-dir", where],
            "--out-dir",
        )
    code = await run_cli([*argv, "--base", "http://127.0.0.1:9"])
    err = capsys.readouterr().err
    said = f"npu-worker {command}: {flag} {argv[-1]}: no home directory for ~npu-worker-no-such-user on this machine\n"
    assert code == 2 and err == said, err
