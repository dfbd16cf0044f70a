"""Admission's per-section steps run no generator (benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 53):
`next`/`any` of a generator cost a call per step and one per section's `finished`, on the lanes for
every section they take and end. Counted with cProfile around a real `Admission`; the order is the same."""

from __future__ import annotations

import cProfile
import pstats
import threading

from npu_worker.deadline_thread import Watchdog
from npu_worker.jobs.admission import Admission
from npu_worker.jobs.model import Job, Section, new_job_id
from npu_worker.protocol import Progress, SynthParams


def preview(texts: int = 1) -> Job:
    sections = [Section(i, f"text {i}", None) for i in range(texts)]
    return Job(new_job_id(), SynthParams(), sections, preview=True, stream_audio=True)


def test_previews_taken_and_ended_run_no_generator_and_keep_their_order() -> None:
    admission = Admission(max_queue=16)
    jobs = [preview(2), preview(), preview()]
    profile = cProfile.Profile()
    profile.enable()
    for job in jobs:
        admission.reserve(job, len(job.sections))
        admission.enqueue(job)
    served = []
    while admission.has_work():
        picked = admission.next_section()
        assert picked is not None
        job, section = picked
        served.append((jobs.index(job), section.idx))
        admission.section_made(job)
        section.final = Progress(section.idx, "ok")
        admission.section_done(job)
    profile.disable()
    assert served == [(0, 0), (1, 0), (2, 0), (0, 1)]
    assert admission.jobs_running() == 0 and admission.queue_size() == 0
    run = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    steps = [key for key in run if key[0].endswith("admission.py") and key[2] == "<genexpr>"]
    assert steps == []
    finished = [
        callers for key, (*_, callers) in run.items() if key[0].endswith("model.py") and key[2] == "finished"
    ]
    assert not [caller for callers in finished for caller in callers if caller[0].endswith("admission.py")]


def condition_entries(run: dict, caller_file: str) -> list[str]:
    """`Condition.__enter__`/`__exit__` (threading.py) called from `caller_file`'s functions."""
    return [
        f"{caller[2]} → {key[2]}"
        for key, (*_, callers) in run.items()
        if key[0].endswith("threading.py") and key[2] in ("__enter__", "__exit__")
        for caller in callers
        if caller[0].endswith(caller_file)
    ]


def test_admission_takes_its_lock_as_itself_not_through_a_condition() -> None:
    """Two Python calls fewer each time a lane takes the lock (benchmarks/SERVER_OVERHEAD.md, stop 55)."""
    admission = Admission(max_queue=4)
    job = preview()
    profile = cProfile.Profile()
    profile.enable()
    admission.reserve(job, 1)
    admission.enqueue(job)
    picked = admission.next_section()
    assert picked is not None
    admission.section_made(job)
    picked[1].final = Progress(0, "ok")
    ended = admission.section_done(job)
    profile.disable()
    assert ended and admission.jobs_running() == 0 and admission.queue_size() == 0
    assert condition_entries(pstats.Stats(profile).stats, "admission.py") == []  # type: ignore[attr-defined]


def test_a_deadlines_arm_and_cancel_take_the_lock_as_itself_and_it_still_runs_on_time() -> None:
    watchdog = Watchdog("test-deadlines")
    ran = threading.Event()
    profile = cProfile.Profile()
    profile.enable()
    watchdog.arm(60.0, ran.set).cancel()  # (each espeak request arms and cancels one)
    profile.disable()
    assert condition_entries(pstats.Stats(profile).stats, "deadline_thread.py") == []  # type: ignore[attr-defined]
    watchdog.arm(0.01, ran.set)  # the thread, asleep until the cancelled one's time, is woken for it
    assert ran.wait(10.0)
