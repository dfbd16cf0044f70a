"""A batch section's end does not look at every section of its batch (issue 25, stop 60): `section_done`
asked `not job.pending`, which listed every section not ended, each through `Section.finished`: a
400-section batch made 163 203 calls under the admission lock to end its sections, quadratic in them.
Counted with cProfile around a real `Admission`, sections ended in order as the finisher ends them."""

from __future__ import annotations

import cProfile
import pstats

from npu_worker.jobs.admission import Admission
from npu_worker.jobs.model import Job, Section, new_job_id
from npu_worker.protocol import Progress, SynthParams

SECTIONS = 400


def batch(sections: int) -> Job:
    return Job(new_job_id(), SynthParams(), [Section(i, f"text {i}", None) for i in range(sections)])


def test_each_sections_end_makes_the_same_few_calls_however_long_the_batch() -> None:
    admission = Admission(max_queue=SECTIONS)
    job = batch(SECTIONS)
    admission.reserve(job, SECTIONS)
    admission.enqueue(job)
    profile, ends = cProfile.Profile(), []
    for idx in range(SECTIONS):
        picked = admission.next_section()
        assert picked is not None and picked[1].idx == idx
        admission.section_made(job)
        job.sections[idx].final = Progress(idx, "ok")
        profile.enable()
        ends.append(admission.section_done(job))
        profile.disable()
    assert ends == [False] * (SECTIONS - 1) + [True]  # the job ends with its last section, not before
    assert admission.jobs_running() == 0 and admission.queue_size() == 0
    calls = sum(nc for _cc, nc, *_ in pstats.Stats(profile).stats.values())  # type: ignore[attr-defined]
    assert calls / SECTIONS < 20, calls  # was ≈ 408 a section here (one `finished` a section not ended)


def test_a_job_has_ended_only_once_its_every_section_has() -> None:
    job = batch(3)
    for idx in (2, 0):  # ended out of order (lanes, a resumed job): the one left in the middle counts
        job.sections[idx].final = Progress(idx, "ok")
        assert not job.all_ended and job.pending
    job.sections[1].final = Progress(1, "ok")
    assert job.all_ended and not job.pending
    assert batch(0).all_ended  # (no section: nothing left, as `not pending` said)
