"""The worker's own log is never a caller's target: `serve > /tmp/worker.log` under the default root
(the temp dir) let a batch's `output_path` name the log, which the wav replaced (walk33: the worker
then logged on into the unlinked file, its operator's log gone)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

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
