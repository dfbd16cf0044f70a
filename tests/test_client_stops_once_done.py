"""The client commands stopped once the worker had done the work, before the command had its result,
against a real `serve --port 0` (espeak): `batch --poll` stopped between the poll that said its job had
ended and the fetch of its result sent a DELETE for the ended job and said `terminated`, 143 and "job …
had already ended", with no word of the wavs made; `synth` stopped in the instant after the client had
read the worker's answer, before its `on_answer` held the stops, said `terminated` and 143 for a wav
made. Now each says what was made, with the work's status."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.rogue_worker import RogueWorker, reply
from tests.serve_process import tokenless_worker
from tests.signal_scripts import SIGNALLED_CALLING, console_script, run_client
from tests.timing import seconds
from tests.tone_engine import ToneEngine

# SIGNAL sent by the process to itself the moment the client asks for PATH's last part (`result`):
# each poll of the status has been answered, the last saying the job had ended.
SIGNALLED_ASKING_FOR = console_script("""
last, signame = sys.argv.pop(1), sys.argv.pop(1)
def hook(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "json" and str(frame.f_locals.get("path")).endswith(last):
        sys.setprofile(None)
        os.kill(os.getpid(), getattr(signal, signame))
sys.setprofile(hook)
""")
# SIGNAL sent by the process to itself the moment the client makes the event of a polled status that says
# the job has ended, before the command has seen it: the stop's DELETE finds the job ended.
SIGNALLED_SEEING_ENDED = console_script("""
signame = sys.argv.pop(1)
def hook(frame, event, arg):
    said = frame.f_locals.get("status_body") if event == "call" else None
    if frame.f_code.co_name == "status_event" and isinstance(said, dict) and said.get("status") == "done":
        sys.setprofile(None)
        os.kill(os.getpid(), getattr(signal, signame))
sys.setprofile(hook)
""")
# SIGNAL sent the moment the client's `json` calls FUNCTION (its first such call): `__exit__`, the
# answer's body read whole (the read's deadline ends first); `read`, as it begins to read the body.
SIGNALLED_IN_JSON = console_script("""
function, signame = sys.argv.pop(1), sys.argv.pop(1)
def hook(frame, event, arg):
    if event == "call" and frame.f_code.co_name == function and frame.f_back.f_code.co_name == "json":
        sys.setprofile(None)
        os.kill(os.getpid(), getattr(signal, signame))
sys.setprofile(hook)
""")
# SIGNAL sent the moment urllib handles an answer whose head is in (`http_response`, before the client's
# own checks and the body's read): the synthesis is over then.
SIGNALLED_HANDLING_THE_HEAD = console_script("""
signame = sys.argv.pop(1)
def hook(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "http_response":
        sys.setprofile(None)
        os.kill(os.getpid(), getattr(signal, signame))
sys.setprofile(hook)
""")
STOPS = [("SIGTERM", "terminated"), ("SIGHUP", "hung up"), ("SIGINT", "interrupted")]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with tokenless_worker(tmp_path_factory.mktemp("state")) as worker_base:
        yield worker_base


client = run_client


async def synth_stopped_reading(base: str) -> subprocess.CompletedProcess[str]:
    """`synth` of /w/a.wav against `base`, sent SIGTERM as it begins to read the answer's body."""
    return await asyncio.to_thread(
        client, SIGNALLED_IN_JSON, "read", "SIGTERM", "synth", "가.", "-o", "/w/a.wav", "--base", base
    )


def lecture(tmp_path: Path, *texts: str) -> Path:
    path = tmp_path / "lecture.json"
    path.write_text(json.dumps({"lang": "ko", "sections": [{"text": text} for text in texts]}))
    return path


@pytest.mark.allow_blocking
@pytest.mark.parametrize(("signame", "word"), STOPS)
def test_batch_poll_stopped_before_it_fetched_its_ended_jobs_result_cancels_nothing(
    tmp_path, base, signame, word
):
    out = tmp_path / "out"
    done = client(
        SIGNALLED_ASKING_FOR, "/result", signame, "batch", str(lecture(tmp_path, "가나다.", "라.")),
        "--out-dir", str(out), "--base", base, "--poll",
    )  # fmt: skip
    said = done.stderr.splitlines()[-1:]
    assert done.returncode == 0, done.stderr
    assert len(said) == 1 and said[0].startswith(
        f"npu-worker batch: {word} as it fetched its result; job "
    ), said
    job = said[0].split("; job ", 1)[1].split(" ", 1)[0]
    assert said == [
        f"npu-worker batch: {word} as it fetched its result; job {job} had ended (done); the work was done:"
        f" 2/2 sections ok, their wavs in {out} (GET /jobs/{job}/result has its result)"
    ]
    assert "cancel" not in done.stderr and sorted(path.name for path in out.glob("*.wav")) == [
        "s00.wav",
        "s01.wav",
    ]


@pytest.mark.allow_blocking
def test_batch_poll_json_stopped_before_it_fetched_its_ended_jobs_result_is_exit_2(tmp_path, base):
    """`batch --json` is exit 2 until its document is whole on stdout: stopped before the result was
    fetched it printed none, and its exit 0 told a consumer of stdout the empty document was the result."""
    out = tmp_path / "out"
    done = client(
        SIGNALLED_ASKING_FOR, "/result", "SIGTERM", "batch", str(lecture(tmp_path, "가나다.", "라.")),
        "--out-dir", str(out), "--base", base, "--poll", "--json",
    )  # fmt: skip
    said = done.stderr.splitlines()[-1:]
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    job = said[0].split("; job ", 1)[-1].split(" ", 1)[0]
    assert said == [
        f"npu-worker batch: terminated as it fetched its result; job {job} had ended (done); the work was done:"
        f" 2/2 sections ok, their wavs in {out} (GET /jobs/{job}/result has its result); no JSON was printed"
        " on stdout"
    ]
    assert "cancel" not in done.stderr


@pytest.mark.allow_blocking
@pytest.mark.parametrize(("signame", "word"), STOPS)
def test_synth_stopped_just_after_it_read_the_answer_keeps_the_works_status(tmp_path, base, signame, word):
    wav = tmp_path / "a.wav"
    done = client(SIGNALLED_IN_JSON, "__exit__", signame, "synth", "가.", "-o", str(wav), "--base", base)
    said = f"npu-worker synth: {word} as it printed its result; the work was done: the wav is {wav}"
    assert (done.returncode, done.stderr.splitlines()[-1:]) == (0, [said]), done.stderr
    assert wav.exists()


@pytest.mark.allow_blocking
@pytest.mark.parametrize(("signame", "word"), STOPS)
def test_synth_stopped_once_the_answers_head_is_in_keeps_the_works_status(tmp_path, base, signame, word):
    """A stop after the answer's head was parsed, before the client called `on_reading` (urllib's handling
    of the head, the client's checks): `terminated` and 143 (129, 130) for a wav made."""
    wav = tmp_path / "a.wav"
    done = client(SIGNALLED_HANDLING_THE_HEAD, signame, "synth", "가.", "-o", str(wav), "--base", base)
    said = f"npu-worker synth: {word} as it printed its result; the work was done: the wav is {wav}"
    assert (done.returncode, done.stderr.splitlines()[-1:]) == (0, [said]), done.stderr
    assert wav.exists()


@pytest.mark.allow_blocking
async def test_synth_stopped_as_a_stalled_answer_is_read_ends_at_once():
    """Held from the answer's head, a stop must still end a body that never comes (the client's own
    bound is minutes): the read is cut, and the command says so with the stop's status."""
    never = asyncio.Event()

    async def head_then_stall(method: str, path: str):  # noqa: ANN202
        yield reply(200, b'{"status": "ok", "wav_path": "/w/a.wav"', length=100)
        await never.wait()

    async with RogueWorker(head_then_stall) as rogue:
        done = await synth_stopped_reading(rogue.base)
    assert done.returncode == 143, done.stderr
    assert done.stderr.splitlines()[-1:] == [
        f"npu-worker synth: terminated; POST {rogue.base}/synth: its read was cut short as the command"
        " stopped; the answer was cut off, so /w/a.wav may or may not have been written (the worker stops"
        " a synthesis once its caller has gone); run synth again to be sure"
    ], done.stderr


@pytest.mark.allow_blocking
def test_batch_poll_stopped_as_it_saw_its_job_end_says_what_the_ended_job_made(tmp_path, base):
    """Stopped before the command knew the job had ended, it asks for a cancel, which the worker refuses
    for an ended job; the line said "job … had already ended", no word of the sections done."""
    out = tmp_path / "out"
    done = client(
        SIGNALLED_SEEING_ENDED, "SIGTERM", "batch", str(lecture(tmp_path, "가나다.", "라.")),
        "--out-dir", str(out), "--base", base, "--poll",
    )  # fmt: skip
    said = done.stderr.splitlines()[-1:]
    assert done.returncode == 143 and len(said) == 1, done.stderr
    job = said[0].split("; job ", 1)[-1].split(" ", 1)[0]
    assert said == [
        f"npu-worker batch: terminated; job {job} had already ended, 2 of 2 sections done (their wavs are kept)"
    ]
    assert sorted(path.name for path in out.glob("*.wav")) == ["s00.wav", "s01.wav"]


@pytest.mark.allow_blocking
async def test_synth_stopped_as_an_answer_without_a_length_is_read_says_the_stop():
    """A body the close ends (no Content-Length, no chunks: an HTTP/1.0 proxy's), cut by the stop,
    ends as if the peer had closed: its part was decoded and refused as a worker's garbage, exit 2,
    the stop unsaid. Cut by a stop, it is cut, as one with a Content-Length is."""
    never = asyncio.Event()

    async def head_then_stall(method: str, path: str):  # noqa: ANN202
        head = b"HTTP/1.1 200 X\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
        yield head + b'{"status": "ok", "wav_path": "/w/a.wav"'
        await never.wait()

    async with RogueWorker(head_then_stall) as rogue:
        done = await synth_stopped_reading(rogue.base)
    assert done.returncode == 143, done.stderr
    assert done.stderr.splitlines()[-1:] == [
        f"npu-worker synth: terminated; POST {rogue.base}/synth: its read was cut short as the command"
        " stopped; the answer was cut off, so /w/a.wav may or may not have been written (the worker stops"
        " a synthesis once its caller has gone); run synth again to be sure"
    ], done.stderr


@pytest.mark.allow_blocking
async def test_synth_stopped_as_a_whole_answer_without_a_length_is_read_keeps_the_works_status():
    """The same body whole (the close after it): the stop's shutdown ended nothing, the answer is in."""

    async def whole_then_close(method: str, path: str):  # noqa: ANN202
        head = b"HTTP/1.1 200 X\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
        yield head + b'{"status": "fail", "error": "EngineError: no voice"}'

    async with RogueWorker(whole_then_close) as rogue:
        done = await synth_stopped_reading(rogue.base)
    said = "npu-worker synth: terminated as it printed its result; the work was done: no wav was made"
    assert (done.returncode, done.stderr.splitlines()[-1:]) == (
        1,
        [f"{said} (EngineError: no voice)"],
    ), done.stderr


async def cancelled_meanwhile(
    worker: Any, tmp_path: Path, *words: str
) -> tuple[subprocess.CompletedProcess[str], str]:
    """`batch` of three sections run by `words` (a signalling script and its arguments before the
    command's), its job cancelled by another caller once queued, its first section held until then: the
    run and the job's id."""
    engine = ToneEngine()
    engine.gate = threading.Event()  # the first section runs until the test has cancelled the job
    server = await worker(engine)
    lecture_path = str(lecture(tmp_path, "가나다.", "라.", "마."))
    base = f"http://127.0.0.1:{server.port}"
    running = asyncio.create_task(
        asyncio.to_thread(client, *words, lecture_path, "--out-dir", str(tmp_path / "out"), "--base", base)
    )
    try:
        async with asyncio.timeout(seconds(60)):
            while not (jobs := (await (await server.get("/jobs")).json())["jobs"]):
                await asyncio.sleep(0.05)  # (no event to await: the client's submission, another process)
            assert (await server.delete(f"/jobs/{jobs[0]['job_id']}")).status == 200
    finally:
        engine.gate.set()
    return await running, jobs[0]["job_id"]


@pytest.mark.allow_blocking
async def test_batch_poll_stopped_before_it_fetched_a_cancelled_jobs_result_does_not_call_it_done(
    worker, tmp_path
):
    """A job cancelled (by another caller) before its end, its result not yet fetched when the stop came:
    its exit 1 was right, but the line said "the work was done" of it."""
    words = (SIGNALLED_ASKING_FOR, "/result", "SIGTERM", "batch", "--poll")
    done, job = await cancelled_meanwhile(worker, tmp_path, *words)
    said = done.stderr.splitlines()[-1:]
    assert done.returncode == 1 and len(said) == 1, done.stderr
    assert said[0].startswith(
        f"npu-worker batch: terminated as it fetched its result; job {job} had ended (cancelled); it was"
        " cancelled before its end: "
    ), said
    assert "the work was done" not in done.stderr and "cancelling" not in done.stderr


@pytest.mark.allow_blocking
@pytest.mark.parametrize("mode", [(), ("--poll",)], ids=["stream", "poll"])
async def test_batch_stopped_as_it_prints_a_cancelled_jobs_result_does_not_call_it_done(
    worker, tmp_path, mode
):
    """The same words as it printed a cancelled job's result (`done` said `cancelled`): "the work was
    done: 0/3 sections ok"."""
    words = (SIGNALLED_CALLING, "report_batch", "SIGTERM", "batch", *mode)
    done, job = await cancelled_meanwhile(worker, tmp_path, *words)
    said = done.stderr.splitlines()[-1:]
    assert done.returncode == 1 and len(said) == 1, done.stderr
    assert said[0].startswith(
        "npu-worker batch: terminated as it printed its result; its job was cancelled before its end: "
    ), said
    assert "the work was done" not in done.stderr and "cancelling" not in done.stderr
