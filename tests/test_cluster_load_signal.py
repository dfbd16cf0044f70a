"""A `--queue redis://` node's waits for its own engine's load wake on the load's end and on the drain,
as a local worker's do (`Scheduler.load_signal`): the cluster's engine node loaded outside the runner's
thread and its drain is its own, so neither woke them; a speech request during the load was looked at
again only each second, and here (the re-look held off) it waited out its 30 s."""

from __future__ import annotations

import asyncio

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.errors import SHUTTING_DOWN_REASON
from npu_worker.openai_compat import core
from tests import test_openai_load_wait
from tests.openai_support import TEXT, expected_samples
from tests.test_openai_load_wait import in_the_wait
from tests.timing import seconds
from tests.tone_engine import HeldLoad

parked = test_openai_load_wait.parked  # (the fixture: set once a request is in the load's wait)


async def loading_node(worker, redis_server, tmp_path):  # noqa: ANN001, ANN201 - fixtures' types
    held = HeldLoad()
    node = await worker(
        held, role="both", state_dir=str(tmp_path / "both"), queue=redis_server.url, wait_loaded=False
    )
    return node, held


async def test_a_request_waiting_on_a_cluster_nodes_load_wakes_when_it_ends(
    worker, redis_server, tmp_path, parked, monkeypatch
):
    monkeypatch.setattr(core, "LOAD_RECHECK_SECONDS", 60.0)  # (no look but the signal's)
    node, held = await loading_node(worker, redis_server, tmp_path)
    call = asyncio.ensure_future(
        node.post("/v1/audio/speech", json={"input": TEXT, "response_format": "pcm"})
    )
    try:
        await in_the_wait(parked, call)
    finally:
        held.loaded.set()
    async with asyncio.timeout(seconds(15)):  # (it waited out its 30 s)
        answer = await call
        assert answer.status == 200, await answer.text()
        assert len(await answer.read()) == 2 * expected_samples(TEXT)


async def test_a_request_waiting_on_a_cluster_nodes_load_is_ended_by_its_drain(
    worker, redis_server, tmp_path, parked, monkeypatch
):
    monkeypatch.setattr(core, "LOAD_RECHECK_SECONDS", 60.0)
    node, held = await loading_node(worker, redis_server, tmp_path)
    call = asyncio.ensure_future(node.post("/v1/audio/speech", json={"input": TEXT}))
    try:
        await in_the_wait(parked, call)
        drain = asyncio.ensure_future(node.app[SCHEDULER_KEY].drain(grace=0.2))
        async with asyncio.timeout(seconds(15)):  # (it waited out its 30 s)
            answer = await call
        assert answer.status == 429, await answer.text()
        assert (await answer.json())["error"]["message"].startswith(SHUTTING_DOWN_REASON[:20])
    finally:
        held.loaded.set()
    await drain
