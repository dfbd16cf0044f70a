"""The shared-job scripts against a real redis-server: seq is position, `ok` once, nothing after
`done`, the cluster-wide queue bound, section-by-section interleaving, reclaiming a silent node's work."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from npu_worker.jobs.admission import PASSED_OVER_LIMIT
from npu_worker.jobs.cluster.keys import job_key
from npu_worker.jobs.cluster.queueing import queue_shared_job
from npu_worker.jobs.cluster.store import RedisJobs
from npu_worker.jobs.model import Job, LogEntry, Section
from npu_worker.jobs.stats import Stats
from npu_worker.protocol import Done, Progress, QueueFull, SectionError, Start, SynthParams
from npu_worker.ws_server.session import UNREAD_SECONDS
from tests.cluster_support import stored_wav
from tests.test_ws_support import STALL_HEARTBEAT_SECONDS, connect, run_request, samples_after_a_stall
from tests.timing import seconds


def make_job(job_id: str, sections: int) -> Job:
    return Job(job_id, SynthParams(), [Section(i, f"text {i}", None) for i in range(sections)])


async def create(jobs: RedisJobs, job: Job, *, max_queue: int = 100, window: int = 2) -> int:
    start = Start(job.total, "tone", "cpu", job.id, 24000)
    return await jobs.create(job, "n1", start, max_queue=max_queue, window=window)


def ok(idx: int) -> Progress:
    return Progress(idx, "ok", wav_path=None, duration_sec=1.0, elapsed_sec=0.1)


async def test_previews_are_neither_listed_nor_counted_with_the_jobs_kept(jobs):
    """A node serving many /synth and /ws previews still lists its batches, and previews do not push
    batch jobs out of `--max-jobs-kept`: they end in a set of their own, removed soon after."""
    batch = make_job("batch", 1)
    assert await create(jobs, batch) == 1
    for number in range(3):
        preview = make_job(f"preview{number}", 1)
        preview.preview, preview.persisted = True, False
        assert await create(jobs, preview) == 1
        assert await jobs.made_ok(preview.id, "n1", 0, b"pcm", ok(0)) == 2
    assert await jobs.recent(1) == ["batch"]
    assert await jobs.finished("n1") == []
    assert [job_id for job_id, _ in await jobs.finished("n1", previews=True)] == [
        f"preview{n}" for n in range(3)
    ]
    preview = await jobs.load("preview0")
    assert preview is not None and preview.preview
    await jobs.remove(preview, "n1")
    assert await jobs.load("preview0") is None and await stored_wav(jobs, "preview0", 0) is None
    assert len(await jobs.finished("n1", previews=True)) == 2


async def test_a_section_is_ok_once_and_nothing_follows_done(jobs):
    job = make_job("j1", 2)
    assert await create(jobs, job) == 1
    assert await jobs.made("j1", "n1", 0, b"first", {"duration": 1, "elapsed": 0, "cached": False})
    assert await jobs.final("j1", 0, ok(0), ok=True, node="n1", advance=False) == 2
    assert await jobs.final("j1", 0, ok(0), ok=True, node="n1", advance=False) == 0  # a rerun's duplicate
    assert not await jobs.made("j1", "n1", 0, b"second", {"duration": 1, "elapsed": 0, "cached": False})
    assert await stored_wav(jobs, "j1", 0) == b"first"  # the first audio stays
    assert (
        await jobs.final("j1", 1, SectionError(1, "EngineError: x"), ok=False, node="n1", advance=False) == 3
    )
    assert await jobs.append("j1", Progress(1, "synth")) == 0  # the job ended at seq 4
    loaded = await jobs.load("j1")
    assert loaded is not None and [e.seq for e in loaded.log] == [1, 2, 3, 4]
    done = loaded.log[-1].event
    assert (done.ok_count, done.fail_count, done.cancelled) == (1, 1, False)  # type: ignore[attr-defined]
    assert not await jobs.cancel("j1", "n1")


NODES, APPENDS_EACH = 6, 10


async def test_seq_is_the_position_when_many_nodes_append_at_once(jobs, redis_server):
    """Six nodes append ten events each, all at once, each on its own connection, opened before (as a
    node's is, from its start): sixty appends interleaved in Redis. The test once made all sixty from
    one store at once, a connection opened for each in one burst: the burst's connects, not the seq,
    were then what it tried, and at load 12+ on the 2-core CI machine one waited past the store's 2 s
    connect timeout (a loaded burst's slowest connect here takes tens of milliseconds; such a wait is
    the test process stalled for seconds)."""
    await create(jobs, make_job("j2", 3))
    nodes = [RedisJobs(redis_server.url) for _ in range(NODES)]

    async def appended(node: RedisJobs, first: int) -> list[int]:
        return [await node.append("j2", Progress(i % 3, "synth")) for i in range(first, first + APPENDS_EACH)]

    try:
        await asyncio.gather(*(node.ping() for node in nodes))  # each node's connection, made before
        runs = await asyncio.gather(*(appended(node, n * APPENDS_EACH) for n, node in enumerate(nodes)))
    finally:
        await asyncio.gather(*(node.close() for node in nodes))
    seqs = [seq for run in runs for seq in run]
    assert sorted(seqs) == list(range(2, 62))
    assert all(run == sorted(run) for run in runs), runs  # each node's own appends in its order
    tail = await jobs.read_log("j2", 58, block_ms=10)  # re-attach with after=58
    assert [e.seq for e in tail] == [59, 60, 61]


async def test_the_queue_bound_is_shared_and_released_by_finals_and_cancel(jobs):
    assert await create(jobs, make_job("a", 6), max_queue=10) == 1
    assert await create(jobs, make_job("b", 5), max_queue=10) == -7  # 6 waiting, 5 more is over 10
    await jobs.final("a", 0, ok(0), ok=True, node="n1", advance=False)
    assert await jobs.cancel("a", "n1")
    assert await create(jobs, make_job("b", 10), max_queue=10) == 1


async def test_a_cluster_queue_holding_one_section_is_worded_in_the_singular(jobs):
    """With `--max-queue 1` the cluster's refusal said "1 sections are waiting in the cluster"."""
    assert await create(jobs, make_job("a", 1), max_queue=1) == 1
    job = make_job("b", 1)
    start = Start(1, "tone", "cpu", job.id, 24000)
    with pytest.raises(QueueFull) as refused:
        await queue_shared_job(jobs, job, "n1", start, max_queue=1, engines=1, stats=Stats())
    assert str(refused.value) == "QueueFull: 1 section is waiting in the cluster (bound 1)"


async def test_first_sections_go_first_then_jobs_take_turns(jobs):
    await create(jobs, make_job("x", 4), window=2)
    await create(jobs, make_job("y", 4), window=2)
    order = []
    for _ in range(4):
        (item,) = await jobs.claim("n1", own=False, block_ms=10)
        order.append((item.job_id, item.pos))
        await jobs.made(item.job_id, "n1", item.pos, b"w", {"duration": 1, "elapsed": 0, "cached": False})
        await jobs.ack(item)
    assert order == [("x", 0), ("y", 0), ("x", 1), ("y", 1)]


async def test_a_flood_of_first_sections_leaves_a_batch_its_turn(jobs):
    """A node that took PASSED_OVER_LIMIT first sections in a row takes a batch section next: before,
    `/synth` calls arriving without pause kept every batch's second section waiting."""
    await create(jobs, make_job("b", 4), window=2)  # b0 in q:first, b1 in q:batch
    for number in range(PASSED_OVER_LIMIT + 4):
        preview = make_job(f"p{number}", 1)
        preview.preview, preview.persisted = True, False
        await create(jobs, preview)
    order = []
    while found := await jobs.claim("n1", own=False, block_ms=10):
        order.append(found[0].job_id + str(found[0].pos))
        await jobs.ack(found[0])
    assert order.index("b1") == PASSED_OVER_LIMIT  # b0 and the first previews, then b1
    assert sorted(order) == sorted(["b0", "b1", *(f"p{n}0" for n in range(PASSED_OVER_LIMIT + 4))])


async def test_a_section_made_twice_queues_the_next_one_once_and_a_retried_create_is_one_job(jobs):
    job = make_job("w", 4)
    assert await create(jobs, job, window=1) == 1
    assert await create(jobs, job, window=1) == 1  # the same call again (a reply lost to a dropped link)
    (item,) = await jobs.claim("n1", own=False, block_ms=10)
    meta = {"duration": 1, "elapsed": 0, "cached": False}
    assert await jobs.made("w", "n1", 0, b"a", meta) and await jobs.made("w", "n1", 0, b"a", meta)
    await jobs.ack(item)
    queued = []
    while found := await jobs.claim("n2", own=False, block_ms=10):
        queued += [(i.job_id, i.pos) for i in found]
        await jobs.ack(found[0])
    assert queued == [("w", 1)]
    assert (await jobs.cluster_view(5.0))["queue_depth"] == 4


async def test_a_silent_nodes_claimed_section_is_taken_over(jobs):
    await create(jobs, make_job("z", 1), window=1)
    (held,) = await jobs.claim("n1", own=False, block_ms=10)
    assert await jobs.reclaim("n2", min_idle_ms=60_000) == []  # not silent long enough
    await jobs.touch(held, "n1")
    await asyncio.sleep(0.05)
    (taken,) = await jobs.reclaim("n2", min_idle_ms=20)
    assert (taken.job_id, taken.pos) == ("z", 0)
    assert await jobs.claim("n1", own=True, block_ms=0) == []  # n1 no longer holds it
    assert [i.entry_id for i in await jobs.claim("n2", own=True, block_ms=0)] == [taken.entry_id]


async def test_an_in_process_node_serves_jobs_ws_previews_and_speech(worker, redis_server, tmp_path):
    client = await worker(queue=redis_server.url, claim_timeout=1.0)
    async with asyncio.timeout(seconds(20)):
        while (await (await client.get("/health")).json()).get("cluster", {}).get("engines_alive") != 1:
            await asyncio.sleep(0.05)
    response = await client.post("/synth", json={"text": "hello", "output_path": str(tmp_path / "s.wav")})
    body = await response.json()
    assert body["status"] == "ok" and (tmp_path / "s.wav").read_bytes()[:4] == b"RIFF"
    accepted = await (await client.post("/synth_batch?async=1", json={"sections": [{"text": "one"}]})).json()
    lines = [
        json.loads(line) async for line in (await client.get(f"/jobs/{accepted['job_id']}/events")).content
    ]
    assert lines[-1]["event"] == "done" and lines[-1]["ok_count"] == 1
    listed = await (await client.get("/jobs")).json()
    assert [job["job_id"] for job in listed["jobs"]] == [accepted["job_id"]]  # /synth is not listed
    missing = await client.get(f"/jobs/{accepted['job_id']}/sections/7/audio")
    assert missing.status == 404 and (await missing.json())["error"].startswith("AudioNotFound")
    ws = await connect(client)
    streamed = await run_request(ws, {"type": "synth", "text": "hello"})
    await ws.close()
    assert streamed.events("first_audio") and streamed.done["ok_count"] == 1
    ok = streamed.events("progress")[-1]
    assert len(streamed.section_audio(0)) == round(ok["duration_sec"] * 24000)
    speech = await client.post(
        "/v1/audio/speech",
        json={"model": "tts-1", "input": "hello", "voice": "default", "response_format": "pcm"},
    )
    assert speech.status == 200 and len(await speech.read()) > 1000


async def test_retention_removes_ended_previews_from_redis_soon(worker, redis_server, monkeypatch, tmp_path):
    from npu_worker.app_keys import SCHEDULER_KEY
    from npu_worker.jobs.cluster import retention as cluster_retention

    client = await worker(queue=redis_server.url, claim_timeout=1.0, max_jobs_kept=1)
    async with asyncio.timeout(seconds(20)):
        while (await (await client.get("/health")).json()).get("cluster", {}).get("engines_alive") != 1:
            await asyncio.sleep(0.05)
    accepted = await (await client.post("/synth_batch?async=1", json={"sections": [{"text": "kept"}]})).json()
    async for _ in (await client.get(f"/jobs/{accepted['job_id']}/events")).content:
        pass
    for number in range(2):  # previews: they must not push the one batch out of --max-jobs-kept 1
        body = {"text": f"preview {number}", "output_path": str(tmp_path / f"p{number}.wav")}
        assert (await (await client.post("/synth", json=body)).json())["status"] == "ok"
    scheduler = client.app[SCHEDULER_KEY]
    store = scheduler.jobs
    assert len(await store.finished(scheduler.node, previews=True)) == 2
    monkeypatch.setattr(cluster_retention, "PREVIEW_KEEP_SECONDS", 0.0)
    await scheduler.retention_sweeper.sweep()
    assert await store.finished(scheduler.node, previews=True) == []
    assert (await client.get(f"/jobs/{accepted['job_id']}/status")).status == 200
    assert [job["job_id"] for job in (await (await client.get("/jobs")).json())["jobs"]] == [
        accepted["job_id"]
    ]
    assert (tmp_path / "p0.wav").is_file()  # a caller's file is never retention's


async def test_a_local_worker_serves_a_finished_sections_wav(worker):
    client = await worker()
    accepted = await (await client.post("/synth_batch?async=1", json={"sections": [{"text": "one"}]})).json()
    job_id = accepted["job_id"]
    async for _ in (await client.get(f"/jobs/{job_id}/events")).content:
        pass
    result = await (await client.get(f"/jobs/{job_id}/result")).json()
    audio = await client.get(f"/jobs/{job_id}/sections/0/audio")
    assert audio.status == 200 and audio.content_type == "audio/wav"
    assert await audio.read() == await asyncio.to_thread(Path(result["wav_paths"][0]).read_bytes)
    for bad, status in (("x", 400), ("3", 404)):
        assert (await client.get(f"/jobs/{job_id}/sections/{bad}/audio")).status == status


async def test_the_accepting_node_applies_retention_to_redis_and_its_default_files(worker, redis_server):
    client = await worker(queue=redis_server.url, max_jobs_kept=1)
    async with asyncio.timeout(seconds(20)):
        while (await (await client.get("/health")).json()).get("cluster", {}).get("engines_alive") != 1:
            await asyncio.sleep(0.05)
    finished = []
    for text in ("first", "second"):
        accepted = await (
            await client.post("/synth_batch?async=1", json={"sections": [{"text": text}]})
        ).json()
        lines = [
            json.loads(line)
            async for line in (await client.get(f"/jobs/{accepted['job_id']}/events")).content
        ]
        finished.append((accepted["job_id"], lines[-2]["wav_path"]))
    first_id, first_wav = finished[0]
    async with asyncio.timeout(seconds(10)):  # the record goes first, then the file
        while (await client.get(f"/jobs/{first_id}/status")).status != 404:
            await asyncio.sleep(0.05)
        while await asyncio.to_thread(Path(first_wav).exists):
            await asyncio.sleep(0.05)
    assert await asyncio.to_thread(Path(finished[1][1]).exists)
    assert (await client.get(f"/jobs/{finished[1][0]}/sections/0/audio")).status == 200


async def test_a_ws_reader_that_never_reads_is_dropped_on_a_redis_queue_too(worker, redis_server):
    client = await worker(
        queue=redis_server.url, claim_timeout=1.0, heartbeat_interval=STALL_HEARTBEAT_SECONDS
    )
    async with asyncio.timeout(seconds(20)):
        while (await (await client.get("/health")).json()).get("cluster", {}).get("engines_alive") != 1:
            await asyncio.sleep(0.05)
    ws = await client.ws_connect("/ws", autoclose=False)
    sections = 50  # × 40 s of audio (96 MB as PCM): far more than socket buffers and the bound hold
    await ws.send_json({"type": "synth_batch", "sections": [{"text": "가" * 2000}] * sections})
    start = await ws.receive_json(timeout=seconds(10))
    reader = RedisJobs(redis_server.url)
    log: list[LogEntry] = []
    async with asyncio.timeout(seconds(60)):  # the job ends while the socket is not read
        while not log or not isinstance(log[-1].event, Done):
            log += await reader.read_log(start["job_id"], log[-1].seq if log else 1, 2000)
    await reader.close()
    received = await samples_after_a_stall(ws)
    assert received < (UNREAD_SECONDS + 400) * 24000 < sections * 40 * 24000, "buffered without bound"
    await ws.close()


async def test_a_section_without_a_file_is_ok_once_from_the_engine_node(jobs):
    await create(jobs, make_job("nf", 2), window=1)
    assert await jobs.made_ok("nf", "n1", 0, b"wav0", ok(0)) == 2
    assert await jobs.made_ok("nf", "n2", 0, b"again", ok(0)) == 0  # a second run of it (taken over)
    assert not await jobs.made("nf", "n1", 0, b"late", {"duration": 1, "elapsed": 0, "cached": False})
    assert await stored_wav(jobs, "nf", 0) == b"wav0"
    assert [i.pos for i in await jobs.claim("n1", own=False, block_ms=10)] == [0]
    assert [i.pos for i in await jobs.claim("n2", own=False, block_ms=10)] == [1]  # queued once, by the first
    assert await jobs.made_ok("nf", "n1", 1, b"wav1", ok(1)) == 3
    loaded = await jobs.load("nf")
    assert loaded is not None and [type(e.event).__name__ for e in loaded.log] == [
        "Start",
        "Progress",
        "Progress",
        "Done",
    ]
    assert (await jobs.cluster_view(5.0))["queue_depth"] == 0


async def test_an_ended_preview_expires_by_itself_and_a_vanished_job_leaves_the_lists(
    worker, redis_server, tmp_path
):
    """An accepting node that never comes back (scaled down, its state dir lost) removes nothing: an ended
    preview's keys expire by themselves. A finished job whose record vanished (expired, evicted) leaves
    the node's lists at its next retention pass instead of being counted toward --max-jobs-kept forever."""
    import redis.asyncio as aioredis

    from npu_worker.app_keys import SCHEDULER_KEY
    from npu_worker.jobs.cluster.lua_functions import PREVIEW_EXPIRY

    client = await worker(queue=redis_server.url, claim_timeout=1.0, max_jobs_kept=1)
    async with asyncio.timeout(seconds(20)):
        while (await (await client.get("/health")).json()).get("cluster", {}).get("engines_alive") != 1:
            await asyncio.sleep(0.05)
    scheduler = client.app[SCHEDULER_KEY]
    body = {"text": "preview", "output_path": str(tmp_path / "p.wav")}
    assert (await (await client.post("/synth", json=body)).json())["status"] == "ok"
    probe = aioredis.from_url(redis_server.url)
    (job_key,) = [key.decode() async for key in probe.scan_iter("npu:job:*")]
    job_id = job_key.removeprefix("npu:job:")
    for key in (job_key, f"npu:log:{job_id}", f"npu:final:{job_id}"):
        assert 0 < await probe.ttl(key) <= PREVIEW_EXPIRY, key
    assert not await probe.exists(f"npu:wav:{job_id}:0")  # a preview's audio is not stored at all
    assert await probe.zscore("npu:previews", job_id) is None
    await probe.zadd(f"npu:finished:{scheduler.node}", {"vanished": 1.0})  # its record is gone
    await probe.zadd("npu:jobs", {"vanished": 1.0})
    accepted = await (await client.post("/synth_batch?async=1", json={"sections": [{"text": "kept"}]})).json()
    async for _ in (await client.get(f"/jobs/{accepted['job_id']}/events")).content:
        pass
    await scheduler.retention_sweeper.sweep()
    assert [job_id for job_id, _ in await scheduler.jobs.finished(scheduler.node)] == [accepted["job_id"]]
    assert await probe.zrange("npu:jobs", 0, -1) == [accepted["job_id"].encode()]
    await probe.aclose()


async def test_a_synth_whose_job_redis_lost_is_told_so_not_that_it_was_cancelled(
    worker, redis_server, tmp_path
):
    """Redis restarted without persistence (here FLUSHALL) while a /synth, a `stream: false` batch and an
    OpenAI whole-file speech wait: each caller is told its job is gone (send it again), not "Cancelled",
    a running job's body nor an internal error."""
    from tests.tone_engine import ToneEngine

    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.05)
    client = await worker(engine, queue=redis_server.url, claim_timeout=1.0)
    async with asyncio.timeout(seconds(20)):
        while (await (await client.get("/health")).json()).get("cluster", {}).get("engines_alive") != 1:
            await asyncio.sleep(0.05)
    long_text = "가" * 200  # 4 s of audio, made in 4 s
    synth = asyncio.ensure_future(
        client.post("/synth", json={"text": long_text, "output_path": str(tmp_path / "s.wav")})
    )
    batch = asyncio.ensure_future(
        client.post("/synth_batch", json={"sections": [{"text": long_text}] * 2, "stream": False})
    )
    speech = asyncio.ensure_future(  # a whole file: nothing is sent before the audio is complete
        client.post("/v1/audio/speech", json={"input": long_text, "response_format": "flac"})
    )
    # All three jobs are in Redis before it forgets them (a fixed second let a loaded machine flush an
    # empty Redis: the jobs came after it and ended `ok`); the first 4 s section is then still running.
    async with asyncio.timeout(seconds(10)):
        while not redis_server.command("KEYS", job_key("*")).startswith(b"*3\r\n"):
            await asyncio.sleep(0.02)
    assert redis_server.command("FLUSHALL").startswith(b"+OK")
    for answer in (await synth, await batch):
        body = await answer.json()
        assert answer.status == 404 and body["error"].startswith("JobNotFound"), body
    answer = await speech  # was a 500 EngineError "cancelled before its audio was complete"
    body = await answer.json()
    assert answer.status == 404 and body["error"]["code"] == "JobNotFound", body
    await client.close()  # while Redis is up: the engine's lost section ends at once, not after the grace


async def test_a_late_second_run_does_not_rewrite_a_file_after_the_first_runs_ok(
    worker, redis_server, tmp_path
):
    """A `both` node's section taken over by a peer (the node was stalled past the claim timeout) and made
    `ok` there first: when the node's own run ends it writes no file, as the caller may already have
    taken the one its `ok` named (the second `ok` was dropped, but the file was rewritten after it)."""
    from npu_worker.app_keys import SCHEDULER_KEY
    from tests.tone_engine import ToneEngine

    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.05)
    client = await worker(engine, queue=redis_server.url, claim_timeout=30.0)
    async with asyncio.timeout(seconds(20)):
        while (await (await client.get("/health")).json()).get("cluster", {}).get("engines_alive") != 1:
            await asyncio.sleep(0.05)
    node = client.app[SCHEDULER_KEY].engine_node
    out = tmp_path / "s0.wav"
    sections = [{"text": "x" * 100, "output_path": str(out)}, {"text": "next"}]  # 2 s of audio, made in 2 s
    body = {"sections": sections}
    job_id = (await (await client.post("/synth_batch?async=1", json=body)).json())["job_id"]
    async with asyncio.timeout(seconds(5)):
        while node.running is None:
            await asyncio.sleep(0.02)
    peer = RedisJobs(redis_server.url)  # the peer that took the section over: its `ok` (and file) first
    assert await peer.final(job_id, 0, ok(0), ok=True, node="peer", advance=False) > 0
    await peer.close()
    async with asyncio.timeout(seconds(10)):
        while node.running is not None:
            await asyncio.sleep(0.02)
    assert not await asyncio.to_thread(out.exists)


async def test_a_section_whose_output_path_is_no_longer_allowed_fails_and_the_writer_goes_on(
    worker, redis_server, tmp_path
):
    """A job accepted while a root was allowed, its file written after the node restarted without that
    root (or a spec planted in Redis naming /etc): `write_output` refused it with OutputPathNotAllowed,
    which is no OSError, and the node's writer task died: no file written, no `ok`, for every job after."""
    from npu_worker.app_keys import SCHEDULER_KEY

    client = await worker(queue=redis_server.url, claim_timeout=1.0)
    async with asyncio.timeout(seconds(20)):
        while (await (await client.get("/health")).json()).get("cluster", {}).get("engines_alive") != 1:
            await asyncio.sleep(0.05)
    node = client.app[SCHEDULER_KEY].node
    jobs = RedisJobs(redis_server.url)
    job = Job("elsewhere", SynthParams(), [Section(0, "x", "/etc/npu-worker-test.wav")])
    await jobs.create(job, node, Start(1, "tone", "cpu", job.id, 24000), max_queue=100, window=0)
    await jobs.redis.hset("npu:job:elsewhere", "next", 1)  # made elsewhere: not queued here
    assert await jobs.made(job.id, node, 0, b"RIFF", {"duration": 1, "elapsed": 0, "cached": False})
    async with asyncio.timeout(seconds(10)):
        while (loaded := await jobs.load(job.id)) is None or not loaded.finished:
            await asyncio.sleep(0.05)
    assert loaded.log[-1].event.fail_count == 1  # type: ignore[attr-defined]
    assert "OutputPathNotAllowed" in loaded.log[1].event.error  # type: ignore[attr-defined]
    await jobs.close()
    response = await client.post("/synth", json={"text": "after", "output_path": str(tmp_path / "a.wav")})
    assert (await response.json())["status"] == "ok"
