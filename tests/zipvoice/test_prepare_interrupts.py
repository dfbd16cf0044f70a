"""`npu-worker prepare` and Ctrl-C outside its compiling: while the command line is still read (the
commands' modules importing), and once the prepared folder is complete. One true line and exit 130.
A SIGTERM or SIGHUP the same way, with 143 or 129."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from npu_worker.engine.zipvoice import prepared
from npu_worker.errors import ModelLoadError
from tests.zipvoice.test_providers import qnn

# A real SIGINT, sent by the process to itself the moment it starts importing `module`; the rest is
# what the `npu-worker` console script runs.
INTERRUPTED_IMPORTING = """
import os, signal, sys
module, sent = sys.argv.pop(1), []
def hook(event, args):
    if event == "import" and args[0] == module and not sent:
        sent.append(True)
        os.kill(os.getpid(), signal.SIGINT)
sys.addaudithook(hook)
from npu_worker.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(
    "module",
    [
        "npu_worker.cli_prepare",  # the command's module (it was imported with cli.py, before main)
        "npu_worker.engine.zipvoice.runtime",  # the parser's bucket defaults
    ],
)
def test_ctrl_c_while_prepare_reads_its_command_line_is_one_line(tmp_path, module):
    """It was a KeyboardInterrupt traceback through the import machinery."""
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_IMPORTING, module, "prepare", "--model-dir", str(tmp_path)]
        + ["--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (
        130,
        "npu-worker prepare: interrupted before it began: nothing was done\n",
    )
    assert not (tmp_path / "out").exists()


# The same, the moment the prepare does `event` on a path ending with `tail`.
INTERRUPTED_AT = """
import os, signal, sys
event_name, tail, sent = sys.argv.pop(1), sys.argv.pop(1), []
def hook(event, args):
    if event == event_name and str(args[1 if event == "os.rename" else 0]).endswith(tail) and not sent:
        sent.append(True)
        os.kill(os.getpid(), signal.SIGINT)
sys.addaudithook(hook)
from npu_worker.cli import main
sys.exit(main(sys.argv[1:]))
"""


@qnn
@pytest.mark.parametrize(
    ("event", "tail"),
    [
        # (the hook's own os.kill raises it: the call it announces is not made)
        ("os.remove", f"/out/{prepared.EARLIER}"),  # the earlier manifest, removed once this one is in
        ("shutil.rmtree", f"/out/{prepared.STAGING}"),  # its staging (the earlier contexts) removed after
    ],
)
def test_ctrl_c_once_the_folder_is_prepared_says_it_is_complete(qnn_model_dir, tmp_path, event, tail):
    """It said "run it again to prepare OUT" of a complete folder (its manifest is moved in last):
    minutes of compiling on the device, hours on the simulator, for nothing."""
    out = tmp_path / "out"
    command = ["prepare", "--buckets", "383", "--optimization", "fast", "--model-dir", str(qnn_model_dir)]
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_AT, event, tail, *command, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = [line for line in done.stderr.splitlines() if line.startswith("npu-worker prepare:")]
    assert said == [
        f"npu-worker prepare: interrupted once {out} was prepared: it is complete (serve it with --model-dir {out})"
    ], done.stderr
    assert done.returncode == 130 and "Traceback" not in done.stderr
    assert prepared.find(out) is not None  # complete: `serve` takes it


def test_ctrl_c_before_the_folder_is_complete_still_says_run_it_again(qnn_model_dir, tmp_path):
    """An earlier prepare's manifest in --out is no sign that this one finished."""
    out = tmp_path / "out"
    command = ["prepare", "--buckets", "383", "--optimization", "fast", "--model-dir", str(qnn_model_dir)]
    first = subprocess.run(
        [sys.executable, "-m", "npu_worker.cli", *command, "--out", str(out)],
        capture_output=True,
        timeout=120,
    )
    assert first.returncode == 0, first.stderr
    done = subprocess.run(  # interrupted as its manifest is written into its staging, before the move-in
        [sys.executable, "-c", INTERRUPTED_AT, "os.rename", f"{prepared.STAGING}/{prepared.MANIFEST}"]
        + [*command, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = [line for line in done.stderr.splitlines() if line.startswith("npu-worker prepare:")]
    assert said == [f"npu-worker prepare: interrupted; run it again to prepare {out}"], done.stderr
    assert done.returncode == 130


# `signal` sent the moment the prepare opens its first model file's temp copy in its staging.
STOPPED_COPYING = """
import os, signal, sys
signal.signal(signal.SIGHUP, signal.SIG_DFL)  # as from a terminal, also when the suite runs under nohup
signum, sent = int(sys.argv.pop(1)), []
def hook(event, args):
    if event == "open" and ".prepare-staging/" in str(args[0]) and str(args[0]).endswith(".part") and not sent:
        sent.append(True)
        os.kill(os.getpid(), signum)
sys.addaudithook(hook)
from npu_worker.cli import main
sys.exit(main(sys.argv[1:]))
"""


@qnn
@pytest.mark.parametrize(
    ("signum", "status", "word"), [(signal.SIGTERM, 143, "terminated"), (signal.SIGHUP, 129, "hung up")]
)
def test_sigterm_while_copying_unwinds_as_ctrl_c_does(qnn_model_dir, tmp_path, signum, status, word):
    """`timeout`, a service manager or a closed terminal ended the prepare at once (-15, -1), with no
    word, and left its staging: a copy of every model file in --out until the next prepare."""
    out = tmp_path / "out"
    command = ["prepare", "--buckets", "383", "--optimization", "fast", "--model-dir", str(qnn_model_dir)]
    done = subprocess.run(
        [sys.executable, "-c", STOPPED_COPYING, str(int(signum)), *command, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = [line for line in done.stderr.splitlines() if line.startswith("npu-worker prepare:")]
    assert said == [f"npu-worker prepare: {word}; run it again to prepare {out}"], done.stderr
    assert done.returncode == status and "Traceback" not in done.stderr
    assert not (out / prepared.STAGING).exists()
    with pytest.raises(ModelLoadError, match="did not finish"):  # what is left, `serve` refuses
        prepared.find(out)


# `first` the moment the prepare opens its first temp copy in its staging, `second` the moment it
# starts removing that staging (unwinding from the first).
STOPPED_TWICE = """
import os, signal, sys
signal.signal(signal.SIGHUP, signal.SIG_DFL)  # as from a terminal, also when the suite runs under nohup
first, second, sent = int(sys.argv.pop(1)), int(sys.argv.pop(1)), []
def hook(event, args):
    if event == "open" and ".prepare-staging/" in str(args[0]) and str(args[0]).endswith(".part") and not sent:
        sent.append(first)
        os.kill(os.getpid(), first)
    elif event == "shutil.rmtree" and str(args[0]).endswith(".prepare-staging") and len(sent) == 1:
        sent.append(second)
        os.kill(os.getpid(), second)
sys.addaudithook(hook)
from npu_worker.cli import main
sys.exit(main(sys.argv[1:]))
"""


@qnn
@pytest.mark.parametrize(
    ("first", "second", "status", "word"),
    [
        (signal.SIGTERM, signal.SIGINT, 130, "interrupted"),
        (signal.SIGINT, signal.SIGTERM, 143, "terminated"),
        (signal.SIGINT, signal.SIGINT, 130, "interrupted"),
    ],
)
def test_a_second_signal_while_the_staging_is_removed_waits_for_it(
    qnn_model_dir, tmp_path, first, second, status, word
):
    """A second Ctrl-C (or a SIGTERM after a Ctrl-C) cut the staging's removal short: a copy of every
    model file was left in --out until the next prepare. It is acted on once the staging is gone."""
    out = tmp_path / "out"
    command = ["prepare", "--buckets", "383", "--optimization", "fast", "--model-dir", str(qnn_model_dir)]
    done = subprocess.run(
        [sys.executable, "-c", STOPPED_TWICE, str(int(first)), str(int(second)), *command, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = [line for line in done.stderr.splitlines() if line.startswith("npu-worker prepare:")]
    assert said == [f"npu-worker prepare: {word}; run it again to prepare {out}"], done.stderr
    assert done.returncode == status and "Traceback" not in done.stderr
    assert not (out / prepared.STAGING).exists()
