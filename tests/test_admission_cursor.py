"""The engine thread's pick looks at each section of a batch a bounded number of times, not from the
batch's first section at every pick (contract62: `_next_of` scanned a job's sections from the first at
each pick, the wake-up check and each lane's look: quadratic in a 1 000-section batch, under the one
admission lock every submission and lane also takes). A count of the sections looked at, not a time."""

from __future__ import annotations

import threading
from typing import Any

from npu_worker.jobs.admission import Admission
from npu_worker.jobs.model import Job, Section
from npu_worker.protocol import Progress, SynthParams

SECTIONS = 1000


class CountedSection(Section):
    """A real `Section` that counts how often anything asks whether it was taken."""

    looks = 0
    _count_lock = threading.Lock()

    def __getattribute__(self, name: str) -> Any:
        if name == "taken":
            with CountedSection._count_lock:
                CountedSection.looks += 1
        return super().__getattribute__(name)


def test_a_thousand_section_batch_is_picked_in_linear_looks():
    admission = Admission(max_queue=SECTIONS)
    job = Job("batch", SynthParams(), [CountedSection(i, f"{i}", None) for i in range(SECTIONS)])
    admission.reserve(job, SECTIONS)
    admission.enqueue(job)
    CountedSection.looks = 0
    order = []
    for _ in range(SECTIONS):
        picked = admission.next_section()
        assert picked is not None
        taken_job, section = picked
        assert taken_job is job
        order.append(section.idx)
        admission.section_made(job)
        section.final = Progress(section.idx, "ok")
        admission.section_done(job)
    assert order == list(range(SECTIONS))
    assert not admission.has_work()
    # each pick and each section's end looks at a section or two: ≈ 2 000 looks; from the first it was 500 500
    assert CountedSection.looks <= 4 * SECTIONS, CountedSection.looks
