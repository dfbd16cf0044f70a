"""The client commands stopped by a signal at a chosen moment, against a real `serve --port 0` (espeak):
`synth` ended at -15 or -1 with no word, `batch` at -15 while it read its lecture and at -1 at any
moment, a Ctrl-C just after a command returned was a traceback, and a stop then changed its exit
status. Now one line each and 128 + the signal's number; the wav whole or absent; a stop after the
command's end leaves its status as it was."""

from __future__ import annotations

import contextlib
import json
import time
import urllib.error
import urllib.request
import wave
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.serve_process import tokenless_worker
from tests.signal_scripts import (
    SIGNALLED_CALLING,
    SIGNALLED_CALLING_UNDER_NOHUP,
    SIGNALLED_RENAMING,
    SIGNALLED_RETURNING,
    console_script,
    run_client,
)
from tests.timing import seconds

TEXT = "가나다라마바사 아자차카타파하. " * 20  # a synthesis that lasts while the signal comes


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with tokenless_worker(tmp_path_factory.mktemp("state")) as worker_base:
        yield worker_base


client = run_client


def jobs_ended(base: str) -> int:
    """The jobs the worker has ended (`npu_worker_jobs_total`, every kind and outcome): counted once a
    job's last section is logged, its wav written under its name or not at all."""
    with urllib.request.urlopen(f"{base}/metrics", timeout=seconds(10)) as answer:
        text = answer.read().decode()
    return sum(
        int(float(line.rsplit(" ", 1)[1]))
        for line in text.splitlines()
        if line.startswith("npu_worker_jobs_total{")
    )


def idle(base: str) -> bool:
    """Loaded, no section waiting and no job with work left (`/health`: 503 while it loads)."""
    try:
        with urllib.request.urlopen(f"{base}/health", timeout=seconds(10)) as answer:
            health = json.loads(answer.read())
    except urllib.error.HTTPError as loading:
        assert loading.code == 503, loading
        return False
    return not health["queue"] and not health["jobs_running"]


def polled(condition: Callable[[], bool], what: str) -> None:
    """`condition` polled until it holds (a third party is told of neither), failing after 30 s."""
    deadline = time.monotonic() + seconds(30)
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@contextlib.contextmanager
def one_job_ends(base: str) -> Iterator[None]:
    """The block's job ended by the worker before it returns, also for a caller that has gone (the
    worker still writing then: its temp file, not the name). An earlier test's job ends first, so the
    one ended after the block is this block's."""
    polled(lambda: idle(base), "the worker to be idle")
    before = jobs_ended(base)
    yield
    polled(lambda: jobs_ended(base) > before, "the worker to end the job")


def whole_or_absent(wav: Path) -> None:
    """The worker writes a wav whole under its name or not at all, also for a caller that has gone."""
    if wav.exists():
        with wave.open(str(wav)) as read:
            assert read.getnframes() * read.getsampwidth() * read.getnchannels() > 0


@pytest.mark.allow_blocking
@pytest.mark.parametrize(
    ("signame", "word", "status"),
    [("SIGTERM", "terminated", 143), ("SIGHUP", "hung up", 129), ("SIGINT", "interrupted", 130)],
)
def test_synth_stopped_while_the_worker_synthesises_is_one_line(tmp_path, base, signame, word, status):
    wav = tmp_path / "a.wav"
    with one_job_ends(base):
        done = client(
            SIGNALLED_CALLING, "getresponse", signame, "synth", TEXT, "-o", str(wav), "--base", base
        )
    assert (done.returncode, done.stderr.splitlines()[-1:]) == (status, [f"npu-worker synth: {word}"])
    whole_or_absent(wav)


@pytest.mark.allow_blocking
def test_synth_under_nohup_hears_no_sighup(tmp_path, base):
    wav = tmp_path / "a.wav"
    with one_job_ends(base):
        done = client(
            SIGNALLED_CALLING_UNDER_NOHUP,
            "getresponse",
            "SIGHUP",
            "synth",
            "가.",
            "-o",
            str(wav),
            "--base",
            base,
        )
    assert done.returncode == 0, done.stderr
    whole_or_absent(wav)
    assert wav.exists()


def lecture(tmp_path: Path) -> Path:
    path = tmp_path / "lecture.json"
    path.write_text(json.dumps({"lang": "ko", "sections": [{"text": TEXT}, {"text": "가."}]}))
    return path


@pytest.mark.allow_blocking
@pytest.mark.parametrize(
    ("signame", "word", "status"), [("SIGTERM", "terminated", 143), ("SIGHUP", "hung up", 129)]
)
def test_batch_stopped_while_it_reads_its_lecture_is_one_line(tmp_path, signame, word, status):
    """Before its own handler: it ended at -15 (-1) with no word. No worker is needed: nothing is sent."""
    done = client(
        SIGNALLED_CALLING, "load_lecture", signame, "batch", str(lecture(tmp_path)),
        "--out-dir", str(tmp_path / "out"), "--base", "http://127.0.0.1:9",
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (status, f"npu-worker batch: {word}\n")
    assert not (tmp_path / "out").exists()


@pytest.mark.allow_blocking
def test_batch_hung_up_while_it_sends_says_what_became_of_its_job(tmp_path, base):
    """A SIGHUP (a closed terminal) ended it at once, -1, with no word of its job."""
    with one_job_ends(base):
        done = client(
            SIGNALLED_CALLING, "getresponse", "SIGHUP", "batch", str(lecture(tmp_path)),
            "--out-dir", str(tmp_path / "out"), "--base", base,
        )  # fmt: skip
    assert done.returncode == 129, done.stderr
    last = done.stderr.splitlines()[-1]
    assert last.startswith("npu-worker batch: hung up; "), done.stderr
    assert "job" in last
    for wav in (tmp_path / "out").glob("*.wav"):
        whole_or_absent(wav)


@pytest.mark.allow_blocking
@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_stop_as_synth_returns_keeps_its_status(tmp_path, base, signame):
    """Its work done: a Ctrl-C then was a traceback through `main`, a SIGTERM or SIGHUP -15 or -1."""
    wav = tmp_path / "a.wav"
    done = client(SIGNALLED_RETURNING, "run_synth", signame, "synth", "가.", "-o", str(wav), "--base", base)
    assert (done.returncode, "Traceback" in done.stderr) == (0, False), done.stderr
    assert wav.exists()


STOPS = [("SIGTERM", "terminated"), ("SIGHUP", "hung up"), ("SIGINT", "interrupted")]


@pytest.mark.allow_blocking
@pytest.mark.parametrize(("signame", "word"), STOPS)
def test_a_stop_as_synth_prints_its_finished_result_keeps_the_works_status(tmp_path, base, signame, word):
    """The wav made: it said `terminated` (`hung up`, `interrupted`) and 143 (129, 130), as if the work
    had not been done, where a supervisor's stop then leaves the work's status and says what was made."""
    wav = tmp_path / "a.wav"
    with one_job_ends(base):
        done = client(
            SIGNALLED_CALLING, "print_result", signame, "synth", "가.", "-o", str(wav), "--base", base
        )
    said = f"npu-worker synth: {word} as it printed its result; the work was done: the wav is {wav}"
    assert (done.returncode, done.stderr.splitlines()[-1:]) == (0, [said]), done.stderr
    whole_or_absent(wav)
    assert wav.exists()


@pytest.mark.allow_blocking
@pytest.mark.parametrize(
    ("script", "function"), [(SIGNALLED_CALLING, "summary"), (SIGNALLED_RETURNING, "print_result")]
)
def test_a_stop_just_before_or_after_batch_prints_its_finished_result_keeps_the_works_status(
    tmp_path, base, script, function
):
    """The job finished, its result not yet made into text, or printed: it said `terminated` and 143
    from the command line, as if nothing had been made; only a stop as it printed kept the status."""
    lecture = tmp_path / "short.json"
    lecture.write_text(json.dumps({"lang": "ko", "sections": [{"text": "가."}, {"text": "나."}]}))
    out = tmp_path / "out"
    done = client(script, function, "SIGTERM", "batch", str(lecture), "--out-dir", str(out), "--base", base)
    said = f"npu-worker batch: terminated as it printed its result; the work was done: 2/2 sections ok, their wavs in {out}"
    assert (done.returncode, done.stderr.splitlines()[-1:]) == (0, [said]), done.stderr
    assert sorted(path.name for path in out.glob("*.wav")) == ["s00.wav", "s01.wav"]


# SIGINT sent by the process to itself as `print_result` is called, then again as the line after it
# (`say`) is: wrappers, not a profile hook, which the first KeyboardInterrupt unsets.
SIGNALLED_PRINTING_TWICE = console_script(
    "",
    end="""import npu_worker.cli_client as client, npu_worker.cli_stops as stops
printing = []
def interrupted(function, first):
    def call(*args):
        if first or printing:
            printing.append(function.__name__)
            os.kill(os.getpid(), signal.SIGINT)
        return function(*args)
    return call
stops.print_result, client.say = interrupted(stops.print_result, True), interrupted(client.say, False)
sys.exit(main(sys.argv[1:]))""",
)


@pytest.mark.allow_blocking
def test_a_second_ctrl_c_as_synth_says_it_stopped_printing_is_its_own(tmp_path, base):
    """The second stop is acted on, as prepare's during its tidying up: the way out of a line that
    stderr does not take (a stalled reader), which holding it would leave to `kill -9` alone."""
    wav = tmp_path / "a.wav"
    done = client(SIGNALLED_PRINTING_TWICE, "synth", "가.", "-o", str(wav), "--base", base)
    assert (done.returncode, done.stderr.splitlines()[-1:]) == (130, ["npu-worker synth: interrupted"])
    assert wav.exists()


@pytest.mark.allow_blocking
@pytest.mark.parametrize(("signame", "word"), STOPS[:2])
def test_a_stop_as_batch_prints_its_finished_result_keeps_the_works_status(tmp_path, base, signame, word):
    lecture = tmp_path / "short.json"
    lecture.write_text(json.dumps({"lang": "ko", "sections": [{"text": "가."}, {"text": "나."}]}))
    out = tmp_path / "out"
    done = client(
        SIGNALLED_CALLING,
        "print_result",
        signame,
        "batch",
        str(lecture),
        "--out-dir",
        str(out),
        "--base",
        base,
    )
    said = f"npu-worker batch: {word} as it printed its result; the work was done: 2/2 sections ok, their wavs in {out}"
    assert (done.returncode, done.stderr.splitlines()[-1:]) == (0, [said]), done.stderr
    assert sorted(path.name for path in out.glob("*.wav")) == ["s00.wav", "s01.wav"]


@pytest.mark.allow_blocking
@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_stop_as_serve_returns_its_refusal_keeps_its_status(tmp_path, signame):
    """Its own line said and its status chosen: a SIGTERM or SIGHUP then made it 143 or 129 with no
    line of its own, a Ctrl-C a traceback."""
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    done = client(
        SIGNALLED_RETURNING, "serve", signame, "serve", "--port", "0", "--state-dir", str(not_a_folder)
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"npu-worker serve: cannot use the state directory {not_a_folder}")
    assert "Traceback" not in done.stderr


@pytest.mark.allow_blocking
def test_bench_terminated_as_it_writes_its_report_is_one_line_and_no_file(tmp_path, base):
    """It ended at -15 with no word, its report's part file left beside the name."""
    done = client(
        SIGNALLED_RENAMING, "SIGTERM", "bench", "--base", base, "--rps", "3", "--duration", "1",
        "--requests", "1", "--out", str(tmp_path / "report"),
    )  # fmt: skip
    assert (done.returncode, done.stderr.splitlines()[-1:]) == (143, ["npu-worker bench: terminated"])
    assert sorted(path.name for path in tmp_path.iterdir()) == []


@pytest.mark.allow_blocking
@pytest.mark.parametrize(("signame", "word"), STOPS)
def test_a_stop_as_synth_ends_its_progress_line_keeps_the_works_status(tmp_path, base, signame, word):
    """The answer in, the wav whole on disk: a stop as it ended the progress line (before its status
    was read) was `terminated` and 143, where `batch` then leaves the work's status with one line."""
    wav = tmp_path / "a.wav"
    done = client(SIGNALLED_CALLING, "end_line", signame, "synth", "가.", "-o", str(wav), "--base", base)
    said = f"npu-worker synth: {word} as it printed its result; the work was done: the wav is {wav}"
    assert (done.returncode, done.stderr.splitlines()[-1:]) == (0, [said]), done.stderr
    assert wav.exists()


@pytest.mark.allow_blocking
def test_a_stop_as_batch_prints_its_json_is_exit_2(tmp_path, base):
    """With --json, a stop before the document was whole on stdout was exit 0: a consumer parsing
    stdout read a cut (here empty) document as the result. The wavs stay; the line says where."""
    out = tmp_path / "out"
    done = client(
        SIGNALLED_CALLING, "print_result", "SIGTERM", "batch", str(lecture(tmp_path)),
        "--out-dir", str(out), "--base", base, "--json",
    )  # fmt: skip
    said = (
        f"npu-worker batch: terminated as it printed its result; the work was done: 2/2 sections ok,"
        f" their wavs in {out}; the JSON on stdout may be cut off"
    )
    assert (done.returncode, done.stderr.splitlines()[-1:]) == (2, [said]), done.stderr
    assert sorted(path.name for path in out.glob("*.wav")) == ["s00.wav", "s01.wav"]


@pytest.mark.allow_blocking
@pytest.mark.parametrize(("signame", "word"), STOPS)
def test_a_stop_as_synth_reads_the_workers_answer_keeps_the_works_status(tmp_path, base, signame, word):
    """The answer read whole, the wav on disk: a stop as the client decoded it (inside `client.synth`,
    before the command had the body) was `terminated` and 143 as if nothing had been made."""
    wav = tmp_path / "a.wav"
    done = client(SIGNALLED_CALLING, "answer_of", signame, "synth", "가.", "-o", str(wav), "--base", base)
    said = f"npu-worker synth: {word} as it printed its result; the work was done: the wav is {wav}"
    assert (done.returncode, done.stderr.splitlines()[-1:]) == (0, [said]), done.stderr
    assert wav.exists()


@pytest.mark.allow_blocking
@pytest.mark.parametrize("poll", [[], ["--poll"]], ids=["stream", "poll"])
@pytest.mark.parametrize(("signame", "word"), STOPS)
def test_a_stop_once_batchs_done_came_keeps_the_works_status(tmp_path, base, poll, signame, word):
    """The job's `done` in, its wavs on disk: a stop as the client made its result (inside the client,
    before the command had it) was `terminated` and 143 (a DELETE sent for a job already ended), as if
    nothing had been made; from `done` on it is said as for a stop as the result is printed."""
    out = tmp_path / "out"
    done = client(
        SIGNALLED_CALLING, "result", signame, "batch", str(lecture(tmp_path)), "--out-dir", str(out),
        "--base", base, *poll,
    )  # fmt: skip
    said = f"npu-worker batch: {word} as it printed its result; the work was done: 2/2 sections ok, their wavs in {out}"
    assert (done.returncode, done.stderr.splitlines()[-1:]) == (0, [said]), done.stderr
    assert sorted(path.name for path in out.glob("*.wav")) == ["s00.wav", "s01.wav"]
