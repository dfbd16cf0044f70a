"""`npu-worker synth` and `batch` say a caller's mistake, or a worker out of reach, in the project's
words: one line naming what failed, never Python's reprs."""

from __future__ import annotations

import socket

import pytest

from npu_worker.cli_client import main
from tests.test_cli_client import write_lecture


def closed_port() -> int:
    """A port nothing listens on: bound, then closed (a connection to it is refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("command", ["synth", "batch"])
def test_a_worker_not_listening_is_said_without_urllibs_wrapper(command, tmp_path, capsys):
    """It was `POST http://...: <urlopen error [Errno 111] Connection refused>`."""
    base = f"http://127.0.0.1:{closed_port()}"
    if command == "synth":
        argv = ["synth", "--base", base, "-o", str(tmp_path / "x.wav"), "hi"]
    else:
        argv = [
            "batch",
            "--base",
            base,
            "--out-dir",
            str(tmp_path),
            str(write_lecture(tmp_path / "l.json", ["a."])),
        ]
    assert main(argv) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert said[-1].endswith(": cannot reach the worker: Connection refused"), said
    assert not any("urlopen" in line for line in said), said
