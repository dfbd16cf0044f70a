"""Readers of one finished job share one copy of it read whole (`jobs/shared_copies.py`): each GET that
needed its sections or log (its result, a section's wav, its events) read and parsed it again, 5.6 MB
and ≈ 30 ms for a 1 000-section batch, and each slow reader of its events kept its own copy of the log
(+125 MiB for 50 on a Redis node, 2026-12-07). Never an old copy: a job file replaced on disk, or a log
in Redis grown since, is read again; a running job is read for each caller; a copy nobody reads is let go."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import socket
import weakref

import aiohttp
import pytest

from npu_worker.app_keys import NDJSON_STREAMS_KEY, SCHEDULER_KEY
from npu_worker.jobs.model import Job, KeptJob
from npu_worker.jobs.shared_copies import SharedCopies
from tests.test_section_audio_held_job import answer_begun, engines_alive
from tests.timing import until


async def finished_batch(port: int, sections: int = 3) -> str:
    body = {"sections": [{"idx": i, "text": "가" * 5} for i in range(sections)], "stream": False}
    async with aiohttp.ClientSession() as session:
        async with session.post(f"http://127.0.0.1:{port}/synth_batch", json=body) as answer:
            assert answer.status == 200, await answer.text()
            return str((await answer.json())["job_id"])


async def listening(served, queue: str, request, **overrides):
    if queue == "redis":
        listener = await served(
            queue=request.getfixturevalue("redis_server").url, claim_timeout=1.0, **overrides
        )
        await engines_alive(listener.port)
        return listener
    return await served(**overrides)


def logs_of(job_id: str) -> set[int]:
    """The logs of `job_id` held in memory, by identity."""
    gc.collect()
    return {id(o.log) for o in gc.get_objects() if isinstance(o, Job) and o.id == job_id and o.log}


async def whole_job(scheduler, job_id: str) -> Job:
    """The job as the routes read it (`_whole_job`): looked up, then its sections and log."""
    found = await asyncio.to_thread(scheduler.find_job, job_id)
    assert found is not None
    return await asyncio.to_thread(scheduler.stored_job, found)


@pytest.mark.parametrize("queue", ["local", "redis"])
async def test_readers_of_a_finished_job_at_once_or_one_after_another_share_one_copy(served, queue, request):
    listener = await listening(served, queue, request)
    scheduler = listener.runner.app[SCHEDULER_KEY]
    job_id = await finished_batch(listener.port)
    if queue == "local":
        await until(lambda: isinstance(scheduler.registry.get(job_id), KeptJob), "the job kept as its status")
    first, second = await asyncio.gather(whole_job(scheduler, job_id), whole_job(scheduler, job_id))
    assert first.finished and [s.final is not None for s in first.sections] == [True] * 3
    assert second is first  # read once, not a copy each
    assert await whole_job(scheduler, job_id) is first  # and the next read while it is held


async def finished_long_replay(listener, tmp_path) -> str:
    """A finished batch whose replay does not fit in the sockets' buffers (and a server that sends little)."""
    folder = tmp_path.joinpath(*["d" * 250] * 15)
    folder.mkdir(parents=True)
    body = {
        "sections": [{"idx": i, "text": "가", "output_path": str(folder / f"{i}.wav")} for i in range(125)]
    }
    async with aiohttp.ClientSession() as session:
        url = f"http://127.0.0.1:{listener.port}/synth_batch"
        async with session.post(url, json={**body, "stream": False}) as answer:
            assert answer.status == 200, await answer.text()
            job_id = str((await answer.json())["job_id"])
    listener.server.sockets[0].setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8192)
    return job_id


async def slow_replay_reader(port: int, job_id: str) -> socket.socket:
    """A connection that asks for the job's events and never reads them, once its answer has begun."""
    loop = asyncio.get_running_loop()
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    client.setblocking(False)
    try:
        await loop.sock_connect(client, ("127.0.0.1", port))
        await loop.sock_sendall(
            client, f"GET /jobs/{job_id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
        )
        await until(lambda: answer_begun(client), "the replay to begin")
    except BaseException:
        client.close()
        raise
    return client


@pytest.mark.parametrize("queue", ["local", "redis"])
async def test_slow_readers_of_a_finished_jobs_events_hold_one_log(served, queue, request):
    """Two replays nobody reads hold the one log read whole, not a copy each."""
    listener = await listening(served, queue, request)
    job_id = await finished_long_replay(listener, request.getfixturevalue("tmp_path"))
    held_anyway = logs_of(job_id)  # (the engine side's last job may still be referenced)
    clients = []
    try:
        for _ in range(2):
            clients.append(await slow_replay_reader(listener.port, job_id))
        assert len(listener.runner.app[NDJSON_STREAMS_KEY]) == 2, "a replay ended: it fitted in the buffers"
        read_again = logs_of(job_id) - held_anyway
        assert len(read_again) == 1, f"{len(read_again)} copies of the log held"
    finally:
        for client in clients:
            client.close()


def copies_read_whole(copies: SharedCopies) -> list[weakref.ref[Job]]:
    """Weak references to every copy `copies` hands out from now on (a job read whole)."""
    handed: list[weakref.ref[Job]] = []
    get = copies.get

    def recording_get(key, read, shareable):
        job = get(key, read, shareable)
        if job is not None:
            handed.append(weakref.ref(job))
        return job

    copies.get = recording_get  # type: ignore[method-assign]
    return handed


def let_go(copies: list[weakref.ref[Job]]) -> bool:
    gc.collect()
    return all(copy() is None for copy in copies)


@pytest.mark.parametrize("queue", ["local", "redis"])
async def test_slow_readers_further_apart_than_the_linger_still_hold_one_log(served, queue, request):
    """A reader that comes once the copy read whole was let go (its linger past, no reader holding it:
    they hold its log-only view) joins the first reader's view, not a log read again of its own."""
    listener = await listening(served, queue, request)
    scheduler = listener.runner.app[SCHEDULER_KEY]
    job_id = await finished_long_replay(listener, request.getfixturevalue("tmp_path"))
    if queue == "local":
        await until(lambda: isinstance(scheduler.registry.get(job_id), KeptJob), "the job kept as its status")
    scheduler.copies = copies = SharedCopies(linger=0.2)
    whole_copies = copies_read_whole(copies)
    held_anyway = logs_of(job_id)
    clients = []
    try:
        clients.append(await slow_replay_reader(listener.port, job_id))
        await until(lambda: let_go(whole_copies), "the copy read whole to be let go")
        clients.append(await slow_replay_reader(listener.port, job_id))
        if queue == "local":  # (a Redis node reads the job whole to look it up, `find_job`)
            assert len(whole_copies) == 1, "the job read whole again for the second reader"
        await until(lambda: let_go(whole_copies), "that copy to be let go too")
        assert len(listener.runner.app[NDJSON_STREAMS_KEY]) == 2, "a replay ended: it fitted in the buffers"
        read_again = logs_of(job_id) - held_anyway
        assert len(read_again) == 1, f"{len(read_again)} copies of the log held"
    finally:
        for client in clients:
            client.close()


async def test_a_job_file_replaced_on_disk_is_read_again_not_served_as_it_was(served):
    listener = await served()
    base = f"http://127.0.0.1:{listener.port}"
    job_id = await finished_batch(listener.port)
    scheduler = listener.runner.app[SCHEDULER_KEY]
    await until(lambda: isinstance(scheduler.registry.get(job_id), KeptJob), "the job kept as its status")
    held = await whole_job(scheduler, job_id)  # a reader holds the copy meanwhile
    log_file = scheduler.store.job_dir(job_id) / "events.ndjson"
    replaced = log_file.read_bytes().replace(b"s00.wav", b"r00.wav")
    log_file.with_name("new").write_bytes(replaced)
    os.replace(log_file.with_name("new"), log_file)  # as a restore from a backup would
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{base}/jobs/{job_id}/result") as answer:
            result = await answer.json()
    assert result["wav_paths"][0].endswith("/r00.wav"), result["wav_paths"]
    assert held.sections[0].final is not None and held.sections[0].final.wav_path.endswith("/s00.wav")


async def test_a_running_job_on_a_redis_queue_is_read_for_each_caller(served, redis_server):
    from tests.tone_engine import ToneEngine

    listener = await served(ToneEngine(seconds_per_char=0.2), queue=redis_server.url, claim_timeout=1.0)
    await engines_alive(listener.port)
    scheduler = listener.runner.app[SCHEDULER_KEY]
    body = {"sections": [{"idx": i, "text": "가" * 5} for i in range(3)]}
    async with aiohttp.ClientSession() as session:
        async with session.post(f"http://127.0.0.1:{listener.port}/synth_batch?async=1", json=body) as answer:
            job_id = (await answer.json())["job_id"]
        running = await asyncio.to_thread(scheduler.find_job, job_id)
        assert running is not None and not running.finished
        assert await asyncio.to_thread(scheduler.find_job, job_id) is not running  # its log grows
        async with session.get(f"http://127.0.0.1:{listener.port}/jobs/{job_id}/events") as answer:
            lines = [json.loads(line) async for line in answer.content if line.strip()]
    assert lines[-1]["event"] == "done"
    ended = await asyncio.to_thread(scheduler.find_job, job_id)
    assert ended is not None and ended.finished and ended.ok_count == 3  # not the copy read while it ran
    assert await asyncio.to_thread(scheduler.find_job, job_id) is ended


async def test_a_copy_nobody_reads_is_let_go_after_its_linger(served):
    listener = await served()
    job_id = await finished_batch(listener.port)
    scheduler = listener.runner.app[SCHEDULER_KEY]
    await until(lambda: isinstance(scheduler.registry.get(job_id), KeptJob), "the job kept as its status")
    scheduler.copies = copies = SharedCopies(linger=0.2)
    held = await whole_job(scheduler, job_id)
    assert len(copies) == 1
    del held
    await until(lambda: gc.collect() >= 0 and len(copies) == 0, "the copy to be let go")


def test_copies_nobody_holds_linger_at_most_keep_and_a_failed_read_is_not_kept():
    from npu_worker.protocol import SynthParams

    def finished(job_id: str) -> Job:
        return Job(id=job_id, params=SynthParams(), sections=[], status="done")

    copies = SharedCopies(keep=1, linger=60.0)
    copies.get(("a", 1), lambda: finished("a"), lambda job: job.finished)
    copies.get(("b", 1), lambda: finished("b"), lambda job: job.finished)
    gc.collect()
    assert len(copies) == 1  # "b", the last read; "a" let go though its linger has not passed
    assert copies.get(("b", 1), lambda: finished("b"), lambda job: True).id == "b"
    running = copies.get(
        ("c", 1), lambda: Job(id="c", params=SynthParams(), sections=[]), lambda job: job.finished
    )
    assert running is not None and copies.get(("c", 1), lambda: None, lambda job: True) is None  # read again

    def broken() -> Job:
        raise OSError("unreadable")

    with pytest.raises(OSError):
        copies.get(("d", 1), broken, lambda job: True)
    assert copies.get(("d", 1), lambda: finished("d"), lambda job: True).id == "d"


def test_a_jobs_log_only_view_and_its_copy_count_as_one_of_keep():
    """A replay of one job (its copy and its log-only view touched) does not push out the other job kept:
    counted as two, a batch whose wavs were fetched one by one was read whole again after it."""
    from npu_worker.protocol import SynthParams

    def finished(job_id: str) -> Job:
        return Job(id=job_id, params=SynthParams(), sections=[], status="done")

    copies = SharedCopies(keep=2, linger=60.0)
    copies.get(("a", 1), lambda: finished("a"), lambda job: job.finished)
    replayed = copies.get(("b", 1), lambda: finished("b"), lambda job: job.finished)
    assert replayed is not None
    view = copies.log_only(replayed)
    assert copies.log_only(replayed) is view and copies.held_log_only(("b", 1)) is view
    del replayed, view
    gc.collect()
    kept = copies.get(("a", 1), lambda: None, lambda job: True)  # None: read again
    assert kept is not None and kept.id == "a"
    assert copies.held_log_only(("b", 1)) is not None  # and the replayed job's view lingers too
    del kept
    copies.get(("c", 1), lambda: finished("c"), lambda job: job.finished)
    gc.collect()
    assert copies.get(("a", 1), lambda: None, lambda job: True) is None  # a third job: "a" goes
    assert copies.held_log_only(("b", 1)) is not None
