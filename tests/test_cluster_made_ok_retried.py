"""MADE_OK retried after Redis applied it (its reply lost: the engine thread's journal calls it again with the
same upload), against a real redis-server. It answered `{0, ''}`, as for a section another run had ended:
the node that logged the `ok` (and the `done` it ended the job with) counted neither in `/metrics`, and a
`both` node that wrote the section's file ran no sweep for it. Now the retried call answers as the first did:
the same seq, the same `done`; a second run of the section (another upload) still answers `{0, ''}`."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from pathlib import Path
from typing import Any

from npu_worker.jobs.cluster import scripts
from npu_worker.jobs.cluster.journal import RedisJournal
from npu_worker.jobs.cluster.keys import job_key
from npu_worker.jobs.cluster.store import RedisJobs
from npu_worker.jobs.cluster.wav_upload import staged
from npu_worker.jobs.loop_handoff import LoopHandoff
from npu_worker.jobs.model import Job, Section
from npu_worker.jobs.observer import SchedulerObserver
from npu_worker.jobs.store import JobStore
from npu_worker.protocol import Done, Event, Progress, Start, SynthParams
from tests.cluster_support import stored_wav
from tests.redis_proxy import redis_through
from tests.test_cluster_wav_upload import command_end
from tests.timing import seconds


async def _created(jobs: RedisJobs, job_id: str, sections: int, *, preview: bool = False) -> Job:
    job = Job(job_id, SynthParams(), [Section(i, f"text {i}", None) for i in range(sections)])
    job.preview = preview
    job.persisted = not preview
    assert await jobs.create(job, "n1", Start(sections, "tone", "cpu", job_id, 24000), max_queue=10, window=1)
    return job


def ok(idx: int) -> Progress:
    return Progress(idx, "ok", wav_path=None, duration_sec=1.0, elapsed_sec=0.1)


async def test_a_retried_made_ok_answers_its_seq_and_the_done_it_logged(jobs: RedisJobs) -> None:
    await _created(jobs, "r", 1)
    up = await staged(jobs.redis, "r", 0, b"RIFF wav0")
    first = await jobs.made_ok_ending("r", "n1", 0, up, ok(0))
    again = await jobs.made_ok_ending("r", "n1", 0, up, ok(0))  # its reply lost: the journal's retry
    assert first[0] > 0 and isinstance(first[1], Done)
    assert again == first
    assert await stored_wav(jobs, "r", 0) == b"RIFF wav0"
    loaded = await jobs.load("r")
    assert loaded is not None
    assert [type(e.event).__name__ for e in loaded.log] == ["Start", "Progress", "Done"]  # logged once
    assert int(await jobs.redis.hget(job_key("r"), "ok")) == 1


async def test_a_retried_made_ok_that_did_not_end_its_job_answers_no_done(jobs: RedisJobs) -> None:
    await _created(jobs, "m", 2)
    up = await staged(jobs.redis, "m", 0, b"RIFF wav0")
    first = await jobs.made_ok_ending("m", "n1", 0, up, ok(0))
    assert first[0] > 0 and first[1] is None
    assert await jobs.made_ok_ending("m", "n1", 0, up, ok(0)) == first
    other = await staged(jobs.redis, "m", 0, b"RIFF again")  # a second run of it (taken over)
    assert await jobs.made_ok_ending("m", "n2", 0, other, ok(0)) == (0, None)
    assert await stored_wav(jobs, "m", 0) == b"RIFF wav0"


async def test_a_retried_made_ok_of_a_preview_answers_as_it_did(jobs: RedisJobs) -> None:
    await _created(jobs, "p", 1, preview=True)
    up = await staged(jobs.redis, "p", 0, b"")  # a preview's: no copy stored
    first = await jobs.made_ok_ending("p", "n1", 0, up, ok(0))
    assert first[0] > 0 and isinstance(first[1], Done)
    assert await jobs.made_ok_ending("p", "n1", 0, up, ok(0)) == first


class Counted(SchedulerObserver):
    """What a node's `/metrics` counts: the events it logged."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def event(self, job: Job, event: Event) -> None:
        self.events.append(event)


async def _proxy(client_in: Any, client_out: Any, redis_port: int, pumps: set[asyncio.Task[None]]) -> None:
    """The first MADE_OK reaches Redis, and its reply (and every reply after it on that connection) never
    comes back: a link that died after the write."""
    redis_in, redis_out = await asyncio.open_connection("127.0.0.1", redis_port)
    lost = asyncio.Event()

    async def requests() -> None:
        waiting = bytearray()
        with contextlib.suppress(OSError):
            while data := await client_in.read(65536):
                waiting += data
                while (end := command_end(waiting)) is not None:
                    command = bytes(waiting[:end])
                    del waiting[:end]
                    if MADE_OK_SHA in command and b"made_ok" not in LOST:
                        LOST.add(b"made_ok")
                        lost.set()
                    redis_out.write(command)
                await redis_out.drain()
        redis_out.close()

    async def replies() -> None:
        with contextlib.suppress(OSError):
            while data := await redis_in.read(65536):
                if lost.is_set():
                    await asyncio.Event().wait()  # held: the reply is lost
                client_out.write(data)
                await client_out.drain()
        client_out.close()

    for pump in (requests(), replies()):
        pumps.add(asyncio.create_task(pump))


LOST: set[bytes] = set()  # the one reply lost, across the proxy's connections
MADE_OK_SHA = hashlib.sha1(scripts.MADE_OK.encode()).hexdigest().encode()  # EVALSHA's first argument


async def test_an_ok_whose_reply_was_lost_is_counted_by_the_node_that_logged_it(redis_server: Any) -> None:
    LOST.clear()
    async with redis_through(_proxy, redis_server.port) as url:
        jobs = RedisJobs(url)
        try:
            job = await _created(jobs, "lost", 1)
            # loaded first: the reply lost is the applied call's, not a NOSCRIPT
            await jobs.redis.script_load(scripts.MADE_OK)
            counted = Counted()
            journal = RedisJournal(
                jobs, JobStore(Path("unused")), LoopHandoff(asyncio.get_running_loop()), "n1", counted
            )
            async with asyncio.timeout(seconds(60)):
                made = await asyncio.to_thread(journal.section_ok, job, "n1", job.sections[0], b"RIFF", ok(0))
            loaded = await jobs.load("lost")
        finally:
            await jobs.close()
    assert LOST, "the proxy lost no reply: the test tested nothing"
    assert made, "the section's ok, logged by this node, read as another run's"
    assert [type(event).__name__ for event in counted.events] == ["Progress", "Done"]
    assert loaded is not None
    assert [type(e.event).__name__ for e in loaded.log] == ["Start", "Progress", "Done"]
