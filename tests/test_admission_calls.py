"""Admission's per-section steps run no generator (benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 53):
`next`/`any` of a generator cost a call per step and one per section's `finished`, on the lanes for
every section they take and end. Counted with cProfile around a real `Admission`; the order is the same."""

from __future__ import annotations

import cProfile
import pstats

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
