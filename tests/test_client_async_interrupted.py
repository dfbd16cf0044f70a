"""An asyncio pipeline (`asyncio.run` over the async client) stopped by Ctrl-C as its batch runs: the job
runs on and writes its wavs, and the traceback named no job (`asyncio.run` cancels the task, then raises
a new `KeyboardInterrupt`), where the sync client's names it. Now the same note, on the `CancelledError`
that `KeyboardInterrupt` carries, printed in its traceback. A real worker, its engine held so that the
job is still running, and a real SIGINT."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tests.signal_scripts import run_client
from tests.tone_engine import ToneEngine

PIPELINE = """
import asyncio, os, signal, sys
from npu_worker import client
base, out = sys.argv[1:]
def progress(idx, event):
    if event["event"] == "start":
        os.kill(os.getpid(), signal.SIGINT)
sections = [{"idx": i, "text": "가나다.", "output_path": f"{out}/s{i:02d}.wav"} for i in range(2)]
asyncio.run(client.async_synth_batch_streaming(sections, progress, base=base))
"""


@pytest.mark.allow_blocking
async def test_a_ctrl_c_in_an_asyncio_pipeline_names_the_job_it_leaves_running(worker, tmp_path):
    engine = ToneEngine()
    engine.gate = threading.Event()  # the job runs until the test ends
    server = await worker(engine)
    try:
        base = f"http://127.0.0.1:{server.port}"
        run = await asyncio.to_thread(run_client, PIPELINE, base, str(tmp_path))
        jobs = (await (await server.get("/jobs")).json())["jobs"]
    finally:
        engine.gate.set()
    assert run.returncode != 0 and run.stderr.splitlines()[-1] == "KeyboardInterrupt", run.stderr
    job = jobs[0]["job_id"]
    note = (
        f"npu_worker.client: job {job!r} was left running (it writes its wavs on): cancel_job({job!r}),"
        f" DELETE /jobs/{job}, stops it"
    )
    assert note in run.stderr.splitlines(), run.stderr
