"""A batch the Python client gives up on once its job was queued (here `stall_limit`: an engine hung on
one section) raised its `TransportError` with nothing of the job: a pipeline that called
`synth_batch_streaming(sections)` without an `on_progress` of its own could not tell which slides were
made, where their wavs were, nor which job to cancel or re-attach to. The error now carries them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from npu_worker.client import Stalled, aio, synth_batch_polling, synth_batch_streaming
from tests.test_cli_batch_given_up_sections import STALL, HangsOnOne, base_of

TEXTS = ["하나.", "둘.", "bad 셋.", "넷.", "hang 다섯.", "여섯."]


async def given_up(call: Any, *args: Any, **kwargs: Any) -> Stalled:
    if asyncio.iscoroutinefunction(call):
        coroutine = call(*args, **kwargs)
    else:
        coroutine = asyncio.to_thread(call, *args, **kwargs)
    with pytest.raises(Stalled) as raised:
        await coroutine
    return raised.value


@pytest.mark.parametrize(
    "call",
    [synth_batch_streaming, aio.synth_batch_streaming, synth_batch_polling, aio.synth_batch_polling],
    ids=["sync-stream", "async-stream", "sync-poll", "async-poll"],
)
async def test_a_batch_given_up_raises_with_what_had_come(worker, tmp_path, call):
    engine = HangsOnOne()
    server = await worker(engine, heartbeat_interval=0.1)
    sections = [
        {"idx": i, "text": t, "output_path": str(tmp_path / f"s{i}.wav")} for i, t in enumerate(TEXTS)
    ]
    pace = {"poll_interval": 0.05} if "poll" in call.__name__ else {}
    try:
        error = await given_up(call, sections, base=base_of(server), stall_limit=float(STALL), **pace)
    finally:
        engine.release.set()
    partial = error.partial_result
    assert partial is not None and isinstance(partial["job_id"], str) and partial["done"] is None, partial
    if "poll" in call.__name__:  # a poll sees a count: the sections come with the result at the end
        assert partial["sections"] == [] and partial["total"] == 6, partial
        # the last polled status's counts: they were 0 and 0, as if nothing had been made
        assert (partial["ok_count"], partial["fail_count"]) == (3, 1), partial
        return
    assert partial["wav_paths"] == [str(tmp_path / f"s{i}.wav") for i in (0, 1, 3)], partial
    assert [e["idx"] for e in partial["errors"]] == [2], partial


async def test_a_batch_refused_before_its_job_was_queued_carries_nothing(worker, tmp_path):
    server = await worker()
    with pytest.raises(Exception) as raised:  # 400 DuplicateIndex: no job was made
        await asyncio.to_thread(
            synth_batch_streaming, [{"idx": 0, "text": "x"}, {"idx": 0, "text": "y"}], base=base_of(server)
        )
    assert getattr(raised.value, "partial_result", "missing") is None
