"""What making and admitting a job costs the event loop, which admits every `/ws` preview (issue 25,
benchmarks/SERVER_OVERHEAD.md, stop 60): its id and its cancel flag enter no Python function of the
standard library, and the flag still wakes a thread that waits for it; a job naming no voice skips the
voice guard, one naming a voice still holds it while it is admitted."""

from __future__ import annotations

import asyncio
import re
import sys
import threading
from typing import Any

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.model import CancelFlag, Job, Section, new_job_id
from npu_worker.protocol import BatchRequest, SectionRequest, SynthParams
from tests.timing import until
from tests.tone_engine import ToneEngine


def entered(make: Any) -> list[str]:
    """The Python functions `make()` entered, as `file:name`."""
    names: list[str] = []

    def record(frame: Any, what: str, arg: Any) -> None:
        if what == "call":
            names.append(f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_code.co_name}")

    sys.setprofile(record)
    try:
        make()
    finally:
        sys.setprofile(None)
    return names


def test_a_job_is_made_without_uuid_or_threading_frames() -> None:
    params, sections = SynthParams(), [Section(0, "안녕하세요.", None)]
    names = entered(lambda: Job(new_job_id(), params, sections, preview=True, persisted=False))
    assert not [name for name in names if name.startswith(("uuid.py:", "threading.py:"))], names
    assert entered(CancelFlag) == []  # made in C: no `__init__` of its own or an Event's


def test_job_ids_are_sixteen_random_hex_digits() -> None:
    ids = {new_job_id() for _ in range(2000)}
    assert len(ids) == 2000 and all(re.fullmatch("[0-9a-f]{16}", job_id) for job_id in ids)
    assert {job_id[12] for job_id in ids} != {"4"}  # (uuid4's version digit is no longer fixed)


def test_a_cancel_wakes_a_thread_that_waits_for_it() -> None:
    flag = CancelFlag()
    assert not flag.is_set() and not flag.requested and flag.wait(0.01) is False
    woken: list[bool] = []
    waiters = [threading.Thread(target=lambda: woken.append(flag.wait(30))) for _ in range(3)]
    for waiter in waiters:
        waiter.start()
    cancelling = threading.Thread(target=flag.set)
    cancelling.start()
    for thread in [cancelling, *waiters]:
        thread.join(60)
    assert woken == [True, True, True] and flag.requested and flag.is_set()
    assert flag.wait(0) is True  # set: at once
    flag.clear()
    assert not flag.requested and flag.wait(0) is False


def test_a_flag_set_before_any_wait_answers_the_first_wait_at_once() -> None:
    flag = CancelFlag()
    flag.set()
    assert flag.wait(0) is True and flag.wait() is True


async def test_a_preview_naming_no_voice_is_admitted_without_the_voice_guard(worker) -> None:
    """`Scheduler._admit` held every job's `ref_wav` against a delete through a context manager, six
    Python calls a job on the loop for a preview that names no voice (stop 60)."""
    client = await worker(ToneEngine())
    scheduler = client.app[SCHEDULER_KEY]
    request = BatchRequest((SectionRequest(0, "가나다"),))
    await scheduler.submit(request, preview=True)  # (warm: a first admission's imports and caches)
    names: list[str] = []

    def record(frame: Any, what: str, arg: Any) -> None:
        if what == "call":
            names.append(f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_code.co_name}")

    sys.setprofile(record)
    try:
        job = await scheduler.submit(request, preview=True)
    finally:
        sys.setprofile(None)
    assert "scheduler.py:_admit_checked" in names, names  # admitted here, on the loop
    assert not [name for name in names if name.startswith("contextlib.py:") or "admitting" in name], names
    await until(lambda: job.finished, "the preview to end")


async def test_a_job_naming_a_voice_holds_it_while_it_is_admitted(worker) -> None:
    client = await worker(ToneEngine())
    scheduler = client.app[SCHEDULER_KEY]
    held: list[dict[str, int]] = []
    scheduler._admit_checked = lambda job, request: held.append(dict(scheduler.voices._admitting))
    voice = "/voices/teacher.wav"
    request = BatchRequest((SectionRequest(0, "가"),), SynthParams(ref_wav=voice, ref_text="가"))
    job = Job(new_job_id(), SynthParams(), [], preview=True, persisted=False)
    await asyncio.to_thread(scheduler._admit, job, request)
    assert held == [{voice: 1}] and not scheduler.voices._admitting
