"""The job model's look-ups read its index inline while it is current (benchmarks/SERVER_OVERHEAD.md,
stop 55): each event an engine lane logs looks its section up, and a job's end counts its finals; each
was a call of `_indexed` more. A new `sections` list still builds the index again."""

from __future__ import annotations

from npu_worker.jobs.model import Job, Section, apply_event, new_job_id
from npu_worker.protocol import Progress, SectionError, SynthParams
from tests.test_lane_chunk_work import python_calls_of


def job_of(sections: int) -> Job:
    return Job(new_job_id(), SynthParams(), [Section(i, f"text {i}", None) for i in range(sections)])


def test_a_current_index_is_read_without_a_call_and_a_new_sections_list_is_indexed_again() -> None:
    job = job_of(3)
    assert job.section(1) is job.sections[1]  # (the first look builds the index)
    assert python_calls_of(lambda: job.section(2)) == ["section"]
    assert python_calls_of(lambda: apply_event(job, Progress(0, "ok"))) == [
        "apply_event",
        "section",
        "settle",
    ]
    assert python_calls_of(lambda: (job.ok_count, job.fail_count)) == ["ok_count", "fail_count"]
    apply_event(job, SectionError(1, "EngineError: no"))
    assert (job.ok_count, job.fail_count) == (1, 1)
    apply_event(job, Progress(1, "ok"))  # a final replaced: the counts follow
    assert (job.ok_count, job.fail_count) == (2, 0)
    job.sections = [Section(0, "new", None), Section(5, "other", None)]
    assert job.section(5) is job.sections[1] and job.section(1) is None
    assert (job.ok_count, job.fail_count) == (0, 0)
    job.sections = [Section(0, "again", None)]
    apply_event(job, Progress(0, "ok"))
    assert job.sections[0].final == Progress(0, "ok") and (job.ok_count, job.fail_count) == (1, 0)
