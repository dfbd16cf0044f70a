"""`npu-worker serve` starts the espeak child before its own modules load (`espeak_early`), so the
child's start overlaps the worker's imports; a ready `/health` waited for one, then the other. The
engine's first load takes that child (it still waits for its `READY`), later engines (the preview
lanes, a restart) start their own, and one nobody took ends with the command."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from npu_worker import cli
from npu_worker.engine import espeak_early
from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak_process_engine import EspeakProcessEngine
from npu_worker.protocol import ModelLoadError
from tests.test_espeak_child_restart import children, running

ROOT = Path(__file__).resolve().parents[1]
SENTENCE = "오늘은 인공지능 음성 합성에 대해 이야기하겠습니다."


@pytest.fixture(autouse=True)
def no_child_left():
    yield
    espeak_early.discard()


def made(engine: EspeakProcessEngine) -> int:
    return sum(chunk.size for chunk in engine.stream(SynthesisRequest(SENTENCE)))


def test_the_first_engine_to_load_serves_with_the_child_started_early():
    espeak_early.start_early()
    early = espeak_early._early
    assert early is not None and running(early.pid)
    engine = EspeakProcessEngine()
    engine.load()
    lane = engine.lane()
    lane.load()
    try:
        assert engine.child.pid == early.pid  # taken, not a second child
        assert lane.child.pid not in (early.pid, None)  # a lane starts its own
        assert espeak_early.take() is None  # taken once
        assert made(engine) > 24000 and made(lane) > 24000
    finally:
        engine.close()
        lane.close()
    assert not running(early.pid)


def test_an_early_child_that_does_not_start_fails_the_load_clearly(monkeypatch):
    monkeypatch.setattr(espeak_early, "CHILD_MODULE", "npu_worker.engine.no_such_child")
    espeak_early.start_early()
    with pytest.raises(ModelLoadError, match="espeak-ng's process did not start"):
        EspeakProcessEngine().load()


def test_an_early_child_that_ended_before_its_load_is_replaced():
    """Killed before the engine took it (the OOM killer, an operator): its `READY` never came and the
    load failed (`ModelLoadError`), where a child started at the load would have served."""
    espeak_early.start_early()
    early = espeak_early._early
    assert early is not None
    os.kill(early.pid, signal.SIGKILL)
    while running(early.pid):
        time.sleep(0.01)
    engine = EspeakProcessEngine()
    engine.load()
    try:
        assert engine.child.pid != early.pid and made(engine) > 24000
    finally:
        engine.close()


def test_a_child_no_engine_took_ends_with_the_command(tmp_path):
    before = children()
    espeak_early.start_early()
    (started,) = children() - before
    espeak_early.discard()
    assert not running(started) and espeak_early.take() is None


def test_a_start_refused_after_the_early_child_leaves_none_running(tmp_path):
    """A setting refused once the state dir is ours (exit 2, before the app is built)."""
    before = children()
    code = cli.main(
        ["serve", "--port", "0", "--state-dir", str(tmp_path / "state"), "--chunk-schedule-ms", "0.01"]
    )
    assert code == 2
    assert not [pid for pid in children() - before if running(pid)]


@pytest.mark.parametrize(("role", "started"), [("api", False), ("both", True)])
def test_an_api_node_starts_no_child(tmp_path, redis_server, role, started):
    """`--role api` loads no engine: a child started for it would idle until the worker's end. (A
    fresh interpreter: the queue's check runs a loop of its own, which this test process's blocking-call
    watch refuses.)"""
    argv = ["serve", "--port", "0", "--state-dir", str(tmp_path / "state"), "--chunk-schedule-ms", "0.01"]
    argv += ["--queue", redis_server.url, "--role", role]
    code = (
        "from npu_worker.engine import espeak_early\n"
        "calls = []\n"
        "espeak_early.start_early = lambda: calls.append(True)\n"
        "from npu_worker import cli\n"
        f"print(cli.main({argv!r}), bool(calls))\n"  # refused (2) after the child's place
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.split()[-2:] == ["2", str(started)]


def test_a_child_is_out_of_reach_of_the_terminals_ctrl_c():
    """A Ctrl-C goes to the terminal's foreground process group, the worker's: a child there still
    importing (before it ignores SIGINT) printed a KeyboardInterrupt traceback into the worker's log."""
    child = espeak_early.spawn()
    try:
        assert os.getpgid(child.pid) == child.pid != os.getpgid(0)
    finally:
        for pipe in (child.stdin, child.stdout):
            if pipe is not None:
                pipe.close()
        child.wait()
