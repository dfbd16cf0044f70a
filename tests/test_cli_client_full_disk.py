"""`npu-worker batch` and `synth` as processes whose stdout or stderr is a full disk (/dev/full, which
fails every write with ENOSPC, as a log or a result file on a full disk does): the batch runs to its
end, and a result that cannot be written is said on stderr with exit 2, never a traceback whose exit
status 1 reads as "some sections failed"."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.test_cli_client import ROOT, base_of, write_lecture
from tests.timing import seconds

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


async def cli(argv: list[str], full: str) -> tuple[int | None, bytes, bytes]:
    """`npu-worker argv` as a process with `full` ("stdout" or "stderr") writing to /dev/full: its exit
    code, stdout and stderr (the one that is full: empty)."""
    with open("/dev/full", "wb") as device:
        streams: dict[str, Any] = {"stdout": asyncio.subprocess.PIPE, "stderr": asyncio.subprocess.PIPE}
        streams[full] = device
        process = await asyncio.create_subprocess_exec(
            *[sys.executable, "-m", "npu_worker.cli_client", *argv],
            **streams,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    try:
        async with asyncio.timeout(seconds(30)):
            out, err = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return process.returncode, out or b"", err or b""


def batch(tmp_path: Path, base: str, *more: str) -> list[str]:
    lecture = write_lecture(tmp_path / "lecture.json", ["첫 번째.", "두 번째.", "세 번째."])
    return ["batch", str(lecture), "--out-dir", str(tmp_path / "out"), "--base", base, *more]


async def test_a_batch_whose_progress_cannot_be_written_runs_to_its_end(worker, tmp_path):
    """`batch 2>>run.log` on a full disk: the first progress line raised out of the client, so the run
    ended at once (exit 1: "some sections failed") and left its job running unattended."""
    server = await worker()
    code, out, _ = await cli(batch(tmp_path, base_of(server)), full="stderr")
    assert code == 0 and out.startswith(b"3/3 sections ok, 0 failed"), out
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["s00.wav", "s01.wav", "s02.wav"]
    jobs = (await (await server.get("/jobs")).json())["jobs"]
    assert [job["status"] for job in jobs] == ["done"]


@pytest.mark.parametrize("json_out", [False, True], ids=["summary", "json"])
async def test_a_batch_result_that_cannot_be_written_is_said_with_exit_2(worker, tmp_path, json_out):
    """`batch --json > result.json` on a full disk: a traceback and exit 1, as if some sections had failed,
    though all were made and the caller has no result to read."""
    server = await worker()
    code, _, err = await cli(batch(tmp_path, base_of(server), *(["--json"] if json_out else [])), "stdout")
    said = err.decode().splitlines()
    assert code == 2 and "Traceback" not in err.decode(), err
    assert said[-1] == (
        "npu-worker batch: the result could not be written to stdout ([Errno 28] No space left on device);"
        f" 3/3 sections ok, their wavs in {tmp_path / 'out'}"
    )


async def test_a_synth_line_that_cannot_be_written_is_said_with_exit_2(worker, tmp_path):
    server = await worker()
    wav = tmp_path / "one.wav"
    code, _, err = await cli(["synth", "안녕하세요.", "-o", str(wav), "--base", base_of(server)], "stdout")
    assert code == 2 and wav.stat().st_size > 44 and "Traceback" not in err.decode(), err
    assert err.decode().splitlines()[-1] == (
        "npu-worker synth: the result could not be written to stdout ([Errno 28] No space left on device);"
        f" the wav is {wav}"
    )
