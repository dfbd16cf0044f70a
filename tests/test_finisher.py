"""File-only jobs: the engine thread makes the next section while the finisher writes the last one.

The write is held with a gate on the worker's real write path (`PathPolicy.write_output`), so what
runs meanwhile shows; the log must read exactly as it did when one thread did both.
"""

from __future__ import annotations

import threading
from typing import Any

from npu_worker.paths import PathPolicy
from tests.test_http_api import read_ndjson
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


class HeldWrites:
    """Hold every output write until `release()`; records which files were asked for, in order."""

    def __init__(self, monkeypatch: Any) -> None:
        self.asked: list[str] = []
        self.release_all = threading.Event()
        real = PathPolicy.write_output

        def held(policy: PathPolicy, path: str, data: bytes) -> None:
            self.asked.append(path)
            assert self.release_all.wait(seconds(20)), "the test never released the writes"
            real(policy, path, data)

        monkeypatch.setattr(PathPolicy, "write_output", held)

    def release(self) -> None:
        self.release_all.set()


async def submit_batch(client: Any, body: dict[str, Any]) -> str:
    """An async `/synth_batch`: its job id."""
    return (await (await client.post("/synth_batch?async=1", json=body)).json())["job_id"]


def sections(count: int, out: Any) -> list[dict[str, Any]]:
    return [{"idx": i, "text": f"문장 {i}.", "output_path": str(out / f"s{i}.wav")} for i in range(count)]


def kinds(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(e["event"], e.get("idx"), e.get("status")) for e in events]


async def test_the_next_section_is_made_while_the_last_one_is_written(worker, monkeypatch, tmp_path):
    writes = HeldWrites(monkeypatch)
    engine = ToneEngine()
    client = await worker(engine)
    job_id = await submit_batch(client, {"sections": sections(3, tmp_path)})
    # section 0's file is held; the engine thread has gone on to section 1 (and 2: the queue is deep).
    # The finisher may reach the write after the engine has made all three: wait for both.
    await until(lambda: len(engine.calls) == 3 and writes.asked, "all three made while the first file waits")
    assert writes.asked == [str(tmp_path / "s0.wav")]  # the others wait behind it, in order
    status = await (await client.get(f"/jobs/{job_id}/status")).json()
    assert status["ok"] == 0  # nothing is `ok` before its file is written
    writes.release()
    events = await read_ndjson(await client.get(f"/jobs/{job_id}/events"))
    assert kinds(events) == [
        ("start", None, None),
        *[(e, i, s) for i in range(3) for e, s in (("progress", "synth"), ("progress", "ok"))],
        ("done", None, None),
    ]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert all((tmp_path / f"s{i}.wav").stat().st_size > 44 for i in range(3))
    assert events[-1]["ok_count"] == 3


async def test_a_cancel_while_a_file_is_written_ends_the_job_once_after_it(worker, monkeypatch, tmp_path):
    writes = HeldWrites(monkeypatch)
    engine = ToneEngine()
    client = await worker(engine)
    job_id = await submit_batch(client, {"sections": sections(20, tmp_path)})
    await until(lambda: writes.asked, "section 0's write started")
    cancel = await client.delete(f"/jobs/{job_id}")
    assert cancel.status == 200
    writes.release()
    events = await read_ndjson(await client.get(f"/jobs/{job_id}/events"))
    assert [e["event"] for e in events].count("done") == 1 and events[-1]["event"] == "done"
    assert events[-1]["cancelled"] is True
    made = [e["idx"] for e in events if e.get("status") == "ok"]
    assert made[0] == 0 and made == list(range(len(made))) and len(made) < 20
    assert events[-1]["ok_count"] == len(made)
    for idx in made:  # every section that says `ok` has its file
        assert (tmp_path / f"s{idx}.wav").stat().st_size > 44
    health = await (await client.get("/health")).json()
    assert health["queue"] == 0 and health["jobs_running"] == 0


async def test_a_failed_write_is_that_sections_error_and_the_batch_goes_on(worker, monkeypatch, tmp_path):
    writes = HeldWrites(monkeypatch)
    client = await worker()
    folder = tmp_path / "folder"
    folder.mkdir()
    body = {"sections": sections(3, tmp_path)}
    body["sections"][1]["output_path"] = str(folder / "s1.wav")
    job_id = await submit_batch(client, body)
    await until(lambda: writes.asked, "section 0's write started")
    folder.rename(tmp_path / "elsewhere")  # a link planted where section 1's folder was: refused
    folder.symlink_to(tmp_path / "elsewhere")
    writes.release()
    events = await read_ndjson(await client.get(f"/jobs/{job_id}/events"))
    errors = [e for e in events if e["event"] == "error"]
    assert [e["idx"] for e in errors] == [1] and errors[0]["error"].startswith("OutputPathNotAllowed")
    assert [e["idx"] for e in events if e.get("status") == "ok"] == [0, 2]
    assert events[-1]["event"] == "done" and events[-1]["ok_count"] == 2
    assert not (tmp_path / "elsewhere" / "s1.wav").exists()


async def test_a_lone_synth_is_written_on_the_engine_thread_and_a_batch_beside_it(
    worker, monkeypatch, tmp_path
):
    threads: list[tuple[str, str]] = []
    real = PathPolicy.write_output

    def recorded(policy: PathPolicy, path: str, data: bytes) -> None:
        threads.append((path.rsplit("/", 1)[1], threading.current_thread().name))
        real(policy, path, data)

    monkeypatch.setattr(PathPolicy, "write_output", recorded)
    client = await worker()
    body = {"text": "혼자.", "output_path": str(tmp_path / "alone.wav")}
    assert (await (await client.post("/synth", json=body)).json())["status"] == "ok"
    assert threads == [("alone.wav", "npu-worker-engine")]  # nothing else to do: no hop
    await read_ndjson(await client.post("/synth_batch", json={"sections": sections(3, tmp_path)}))
    # while a next section waits the file goes to the finisher; the last one, with nothing left
    # to make, is written where it was made once the finisher has caught up
    assert threads[1:3] == [("s0.wav", "npu-worker-finisher"), ("s1.wav", "npu-worker-finisher")]
    assert threads[3][0] == "s2.wav"
