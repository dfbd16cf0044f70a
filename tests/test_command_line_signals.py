"""A SIGTERM or SIGHUP while `npu-worker` still reads its command line (the commands' modules load in
`main`, about a second for `prepare`) ended the process at once with no word (-15, -1), where a Ctrl-C
then is `interrupted before it began` and, once the command runs, `serve` and `prepare` say `terminated`
or `hung up`: the same line now, `terminated before it began: nothing was done`, exit 143 or 129."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.signal_scripts import (
    ROOT,
    SIGNALLED_CALLING,
    SIGNALLED_CALLING_THEN_RETURNING,
    SIGNALLED_IMPORTING,
    run_script,
)


@pytest.mark.parametrize(
    ("signame", "word", "status"), [("SIGTERM", "terminated", 143), ("SIGHUP", "hung up", 129)]
)
def test_a_signal_while_prepare_reads_its_command_line_is_one_line(tmp_path, signame, word, status):
    done = run_script(
        SIGNALLED_IMPORTING, "npu_worker.cli_prepare", signame, "prepare",
        "--model-dir", str(tmp_path), "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (
        status,
        f"npu-worker prepare: {word} before it began: nothing was done\n",
    )
    assert not (tmp_path / "out").exists()


def test_a_sigterm_while_synth_reads_its_command_line_is_one_line(tmp_path):
    done = run_script(
        SIGNALLED_IMPORTING, "npu_worker.cli_client", "SIGTERM", "synth", "가.",
        "-o", str(tmp_path / "a.wav"), "--base", "http://127.0.0.1:9",
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (
        143,
        "npu-worker synth: terminated before it began: nothing was done\n",
    )


@pytest.mark.parametrize(
    ("signame", "word", "status"), [("SIGTERM", "terminated", 143), ("SIGHUP", "hung up", 129)]
)
def test_a_signal_as_prepare_begins_is_its_line(tmp_path, signame, word, status):
    """Between the command line's handlers and prepare's own it met the default action: the process
    ended at once with no word (-15, -1). The kernel holds it until prepare's handlers take it."""
    out = tmp_path / "out"
    done = run_script(
        SIGNALLED_CALLING, "run_prepare", signame, "prepare", "--model-dir", str(tmp_path), "--out", str(out)
    )
    assert (done.returncode, done.stderr) == (
        status,
        f"npu-worker prepare: {word}; run it again to prepare {out}\n",
    )
    assert not out.exists()


def test_a_sigterm_as_serve_begins_is_its_line(tmp_path):
    done = run_script(
        SIGNALLED_CALLING, "serve", "SIGTERM", "serve", "--port", "0", "--state-dir", str(tmp_path / "state")
    )
    assert (done.returncode, done.stderr) == (
        143,
        "npu-worker serve: terminated before it began: nothing was done\n",
    )


@pytest.mark.parametrize(
    ("script", "where"),
    [
        (SIGNALLED_IMPORTING, "npu_worker.cli_prepare"),  # the command line's line
        (SIGNALLED_CALLING, "run_prepare"),  # prepare's own line
    ],
)
def test_a_sighup_whose_line_cannot_be_written_still_exits_129(tmp_path, script, where):
    """A closed terminal: the line cannot be written (here its reader is gone: EPIPE; a terminal's is
    EIO). The OSError made the exit status 1, as for an error of the command's own."""
    child = subprocess.Popen(
        [sys.executable, "-c", script, where, "SIGHUP", "prepare"]
        + ["--model-dir", str(tmp_path), "--out", str(tmp_path / "out")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert child.stderr is not None
    child.stderr.close()  # long before the child has imported anything of npu_worker
    assert child.wait(timeout=60) == 129


@pytest.mark.parametrize(
    ("function", "command", "line"),
    [
        (
            "run_prepare",
            ["prepare", "--out", "{out}"],
            "npu-worker prepare: hung up; run it again to prepare {out}",
        ),
        (
            "serve",
            ["serve", "--port", "0", "--state-dir", "{state}"],
            "npu-worker serve: hung up before it began: nothing was done",
        ),
    ],
)
def test_a_stop_after_the_commands_own_keeps_its_status(tmp_path, function, command, line):
    """The first stop is the one said and the exit status: a SIGTERM after a SIGHUP the command had
    said as `hung up` (129) made the exit status 143, a line saying one thing and the status another."""
    out, state = str(tmp_path / "out"), str(tmp_path / "state")
    words = [word.format(out=out, state=state) for word in command]
    if function == "run_prepare":
        words += ["--model-dir", str(tmp_path)]
    done = run_script(SIGNALLED_CALLING_THEN_RETURNING, function, "SIGHUP", "SIGTERM", *words)
    assert (done.returncode, done.stderr) == (129, line.format(out=out) + "\n")
