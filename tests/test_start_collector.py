"""`npu-worker serve` starts without cyclic collections (its ≈ 640 modules and the app made with the
collector held off: ≈ 130 collections, ≈ 50 ms of the main thread's CPU a start before), then serves with
the collector on and the start's objects frozen; a start refused, or any other command, leaves the
collector as it was and freezes nothing."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

from npu_worker import start_collector
from tests.log_drain import LoggedProcess
from tests.timing import seconds

REPO = Path(__file__).resolve().parents[1]

# A real `serve` (its own interpreter) told of every collection from the command line's start on; at
# "engine ready" (the app built and listening) it writes what it saw as one line on its stderr.
SERVE_WATCHED = """
import gc, json, logging, sys
from npu_worker import cli
collections = []
gc.collect()  # the count from 0: the few allocations before `main` holds it set off none, whatever came before
gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(
    [info["generation"], gc.get_freeze_count()]))

class AtReady(logging.Handler):
    def emit(self, record):
        if record.getMessage().startswith("engine ready"):
            seen = {"collections": collections[:], "enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}
            sys.stderr.write("collector: " + json.dumps(seen) + "\\n")

logging.getLogger("npu_worker").addHandler(AtReady())
sys.exit(cli.main(sys.argv[1:]))
"""


def test_serve_starts_without_collections_and_serves_with_the_collector_on(tmp_path):
    command = [sys.executable, "-c", SERVE_WATCHED, "serve", "--port", "0", "--no-espeak-process"]
    command += ["--state-dir", str(tmp_path / "state"), "--log-level", "info"]
    process = LoggedProcess(command, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        line = process.log_until("collector: ", seconds(60)).splitlines()[-1]
    finally:
        process.terminate_and_log(seconds(30))
        process.kill()
    seen = json.loads(line.split("collector: ", 1)[1])
    before_built = [generation for generation, frozen in seen["collections"] if frozen == 0]
    assert before_built == []  # none while the modules imported and the app was built
    assert seen["enabled"]  # serving with the collector on
    assert seen["frozen"] > 10_000  # the start's modules and app, out of every later pass


def test_a_refused_start_leaves_the_collector_on_and_freezes_nothing(tmp_path):
    code = (
        "import gc, sys; from npu_worker import cli\n"
        "status = cli.main(['serve', '--port', '0', '--no-espeak-process', '--state-dir', sys.argv[1],\n"
        "                   '--chunk-schedule-ms', '0.01'])\n"  # refused once the app's modules loaded
        "print(gc.isenabled(), gc.get_freeze_count(), status)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "state")],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=seconds(60),
        check=False,
    )
    assert done.stdout.split() == ["True", "0", "2"], done.stderr


# A real `serve` sent a real SIGTERM at the instant its start's objects are frozen (a profile hook set at its
# "starting on" line, the one before `let_go`, sends it as `gc.freeze` returns): the stop is raised there, before
# the collector is on again; `main` then returns 143 and must leave the collector on for its caller.
SIGTERM_AT_FREEZE = """
import gc, logging, os, signal, sys
from npu_worker import cli

def at_freeze(frame, event, arg):
    if event == "c_return" and arg is gc.freeze:
        sys.setprofile(None)
        os.kill(os.getpid(), signal.SIGTERM)

class AtStartingOn(logging.Handler):
    def emit(self, record):
        if "starting on" in record.getMessage():
            sys.setprofile(at_freeze)

logging.getLogger("npu_worker").addHandler(AtStartingOn())
status = cli.main(["serve", "--port", "0", "--no-espeak-process", "--state-dir", sys.argv[1]])
print(gc.isenabled(), gc.get_freeze_count() > 0, status)
"""


def test_a_sigterm_as_the_start_is_frozen_leaves_the_collector_on(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", SIGTERM_AT_FREEZE, str(tmp_path / "state")],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=seconds(60),
        check=False,
    )
    # frozen (the stop came after the freeze), the collector on again, the start's one line and 143
    assert done.stdout.split() == ["True", "True", "143"], done.stderr
    assert "terminated before it began" in done.stderr


def test_a_collector_already_off_is_left_off():
    frozen = gc.get_freeze_count()  # (the suite's collection froze its own)
    gc.disable()
    try:
        start_collector.hold()
        start_collector.let_go(keep_start_objects=True)
        assert not gc.isenabled() and gc.get_freeze_count() == frozen
    finally:
        gc.enable()
