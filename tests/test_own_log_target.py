"""The worker's own log is never a caller's target: `serve > /tmp/worker.log` under the default root
(the temp dir) let a batch's `output_path` name the log, which the wav replaced (walk33: the worker
then logged on into the unlinked file, its operator's log gone)."""

from __future__ import annotations

import contextlib
import json
import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from npu_worker.paths import PathPolicy
from npu_worker.protocol import OutputPathNotAllowed
from tests.serve_process import ServeProcess
from tests.signal_scripts import tokenless_env
from tests.test_http_bad_input import assert_error_body
from tests.timing import seconds


def post(base: str, route: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(f"{base}{route}", data=json.dumps(body).encode(), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=seconds(30)) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def test_an_output_path_naming_the_workers_log_is_refused_and_the_log_kept(tmp_path: Path):
    log = tmp_path / "worker.log"
    link = tmp_path / "log-link.wav"  # the worker's own link to it: followed, and still the log
    link.symlink_to(log)
    with log.open("w") as stdout:
        stdout.write("the operator's log\n")
        stdout.flush()
        args = ["--state-dir", str(tmp_path / "state"), "--output-roots", str(tmp_path)]
        worker = ServeProcess(args, tokenless_env(), stdout=stdout)
    try:
        base = worker.wait_ready()
        for route, body in (
            ("/synth", {"text": "하나", "output_path": str(log)}),
            ("/synth", {"text": "하나", "output_path": str(link)}),
            (
                "/synth_batch",
                {"sections": [{"idx": 0, "text": "하나", "output_path": str(log)}], "stream": False},
            ),
        ):
            status, answer = post(base, route, body)
            assert status == 400, (route, answer)
            assert_error_body(answer, "OutputPathNotAllowed")
            assert "the worker's own log" in answer["error"]
        status, answer = post(base, "/synth", {"text": "하나", "output_path": str(tmp_path / "s00.wav")})
        assert (status, answer["status"]) == (200, "ok"), answer
    finally:
        worker.terminate_and_log(seconds(30))
    assert log.read_text().startswith("the operator's log\n")


@contextlib.contextmanager
def standard_error_to(log: Path):
    """This process's standard error sent to `log`, as `serve 2> worker.log` sends the worker's (in
    the test's body: pytest's capture takes the descriptor back between a fixture and the test)."""
    saved = os.dup(2)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)
    os.dup2(fd, 2)
    os.close(fd)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def test_the_write_refuses_the_log_and_replaces_a_link_to_it(tmp_path: Path):
    """At the write, by the entry at the path as the write replaces it (`test_path_checks_cost`: a
    stat less): the log itself, or another name of it, is refused; a link there is what the wav
    replaces, and the log it named is kept."""
    log = tmp_path / "out" / "worker.log"
    log.parent.mkdir()
    log.write_text("the operator's log\n")
    policy = PathPolicy((str(log.parent),), str(tmp_path / "state"))
    other_name = log.parent / "hard.wav"
    os.link(log, other_name)
    link = log.parent / "link.wav"
    link.symlink_to(log)
    with standard_error_to(log):
        for name in (log, other_name):
            with pytest.raises(OutputPathNotAllowed, match="the worker's own log"):
                policy.write_output(str(name), b"RIFF")
        policy.write_output(str(link), b"RIFF")
    assert link.read_bytes() == b"RIFF" and not link.is_symlink()
    assert log.read_text() == "the operator's log\n"
