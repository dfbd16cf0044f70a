"""Who the admission wakes: the engine thread and the preview lanes wait on conditions of their own, and
an arrival or a section's end wakes only the thread that can take what it freed (real threads, the
real `Admission`; one test through a worker with espeak-ng's preview lane)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from npu_worker.jobs.model import Job, Section, new_job_id
from npu_worker.protocol import SynthParams


async def test_a_lone_synth_wakes_an_idle_preview_lane_once(worker, tmp_path):
    """Each section's start and end woke every engine thread waiting for work (`notify_all`), each
    taking the GIL to look and waiting again: the idle preview lane looked twice or more a `/synth`
    that ran on the engine thread, then once (its arrival). Now a `/synth` that the free engine thread
    takes wakes it never."""
    from npu_worker.app_keys import SCHEDULER_KEY
    from tests.timing import until

    client = await worker(engine=None)  # espeak-ng: the engine thread and a preview lane
    scheduler = client.app[SCHEDULER_KEY]
    await until(lambda: scheduler.runner.lanes._open == 1, "the preview lane's instance loaded")
    admission = scheduler.admission
    looks: list[str] = []
    real = admission._lane_work

    def counted() -> object:
        looks.append(threading.current_thread().name)
        return real()

    admission._lane_work = counted
    calls = 6
    for number in range(calls):
        body = {"text": "하나.", "output_path": str(tmp_path / f"lone{number}.wav")}
        assert (await (await client.post("/synth", json=body)).json())["status"] == "ok"
    assert looks.count("npu-worker-engine-2") == 0, looks


def test_an_arrival_behind_a_deep_queue_looks_at_one_job_to_decide_whom_to_wake(monkeypatch):
    """Whether to wake the engine threads was decided by ranking every queued job (`_pick`) at each
    arrival and each section's end, under the lock: 0.4 ms a call with 1 000 jobs queued, 4 s of CPU
    to enqueue 3 000. One job with a section to take decides it."""
    from npu_worker.jobs import admission as module

    admission = module.Admission(10_000)
    jobs = [Job(new_job_id(), SynthParams(), [Section(0, "가", None)]) for _ in range(501)]
    for job in jobs[:500]:
        admission.reserve(job, 1)
        admission.enqueue(job)
    looked: list[Job] = []
    real = module._among

    def counted(job: Job, others: list[Job]) -> bool:
        looked.append(job)
        return real(job, others)

    monkeypatch.setattr(module, "_among", counted)
    admission.reserve(jobs[500], 1)
    admission.enqueue(jobs[500])
    assert len(looked) <= 1  # none with no engine thread waiting
    assert admission.next_section() is not None  # (and the queued work is still there to take)


def test_an_idle_preview_lane_sleeps_through_a_queued_batch_and_wakes_for_a_preview():
    """While the engine thread made a batch's sections, every arrival and every section's end woke
    the idle preview lanes (one condition for all engine threads), though a lane never takes a batch's
    section: each took the GIL to look and waited again. Now a lane wakes once, for the preview."""
    from npu_worker.jobs.admission import Admission

    admission = Admission(1_000)
    looks: list[str] = []
    looked = threading.Event()
    real = admission._lane_work

    def counted() -> object:
        looks.append(threading.current_thread().name)
        looked.set()
        return real()

    admission._lane_work = counted  # type: ignore[method-assign]

    def settled() -> None:
        """Until the lane, once started, waits again (it left its condition's waiters if this woke
        it): each wake is looked at before the next step, not lost in a lane queued for the lock."""
        conditions = [c for c in vars(admission).values() if isinstance(c, threading.Condition)]
        deadline = time.monotonic() + 10
        while sum(len(c._waiters) for c in conditions) != 1 and lane.is_alive():  # type: ignore[attr-defined]
            assert time.monotonic() < deadline, "the lane never waited again"
            time.sleep(0.001)

    def queued(sections: int, preview: bool = False) -> Job:
        job = Job(
            new_job_id(), SynthParams(), [Section(i, "가", None) for i in range(sections)], preview=preview
        )
        admission.reserve(job, sections)
        admission.enqueue(job)
        settled()
        return job

    lane_took: list[object] = []
    lane = threading.Thread(target=lambda: lane_took.append(admission.next_preview()), name="lane")
    queued(12)
    running = admission.next_section()  # the engine thread is busy with the batch
    lane.start()
    assert looked.wait(10)
    settled()  # it looked once and waits
    for _ in range(10):  # more batches arrive
        queued(3)
    for _ in range(11):  # and the engine thread ends a section and takes the next one, eleven times
        assert running is not None
        admission.section_made(running[0])
        admission.section_done(running[0])
        settled()
        running = admission.next_section()
        settled()
    synth = queued(1, preview=True)  # a `/synth`: the lane's (the engine thread is busy)
    lane.join(10)
    assert not lane.is_alive() and lane_took and lane_took[0][0] is synth  # type: ignore[index]
    assert looks.count("lane") == 2, looks  # its first look, and the one the `/synth` woke


def test_a_previews_next_section_freed_on_a_lane_wakes_the_waiting_engine_thread():
    """The engine thread and the lanes wait on conditions of their own: when a lane ends a streaming
    preview's section while the engine thread waits for work, the preview's next section is the
    engine thread's (a lane leaves a streaming preview to a waiting engine thread), so that end must
    wake it, or the preview waits for ever. Real threads; each section held until the test lets it go."""
    from npu_worker.jobs.admission import Admission
    from npu_worker.protocol import Progress

    admission = Admission(100)
    hold = {"batch": threading.Event(), "first": threading.Event()}
    took: list[tuple[str, str, int]] = []
    ended = threading.Event()

    def serve(take: Callable[[], tuple[Job, Section] | None]) -> None:
        while (picked := take()) is not None:
            job, section = picked
            took.append((threading.current_thread().name, job.id, section.idx))
            gate = hold["batch"] if not job.preview else hold["first"] if section.idx == 0 else None
            if gate is not None:
                assert gate.wait(10)
            section.final = Progress(section.idx, "ok")
            admission.section_made(job)
            if admission.section_done(job) and job.preview:
                ended.set()

    def queued(sections: int, preview: bool) -> Job:
        job = Job(
            new_job_id(),
            SynthParams(),
            [Section(i, "가", None) for i in range(sections)],
            preview=preview,
            stream_audio=preview,
        )
        admission.reserve(job, sections)
        admission.enqueue(job)
        return job

    def until(done: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 10
        while not done():
            assert time.monotonic() < deadline, took
            time.sleep(0.001)

    engine = threading.Thread(target=serve, args=(admission.next_section,), name="engine", daemon=True)
    lane = threading.Thread(target=serve, args=(admission.next_preview,), name="lane", daemon=True)
    engine.start()
    lane.start()
    try:
        queued(1, preview=False)
        until(lambda: len(took) == 1)  # the engine thread is busy with a batch's section
        preview = queued(2, preview=True)
        until(lambda: len(took) == 2)  # the lane took the preview's first section
        hold["batch"].set()
        until(lambda: admission._engine_waiting)  # the batch ended; nothing for the engine thread
        hold["first"].set()
        assert ended.wait(10), took  # the preview's second section ran
    finally:
        admission.stop()
        for gate in hold.values():
            gate.set()
    engine.join(10)
    lane.join(10)
    assert took[1:] == [("lane", preview.id, 0), ("engine", preview.id, 1)]
