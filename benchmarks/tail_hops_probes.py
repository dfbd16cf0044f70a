"""The probes `tail_hops.py` puts into the measured worker and its espeak children (issue 25, stop 59).

Nothing in the product measures: the worker runs under `tail_hops.py --wrapped DIR`, which wraps a few
methods of the checkout it imports before `npu-worker serve` starts (each wrapper notes
`time.monotonic()`, the clock the benchmark's own process reads too, then calls the original), and its
espeak children find `sitecustomize.py` (`CHILD_HOOK`) on their `PYTHONPATH`: their `os.writev` (the
frames to the worker) and their request pipe's `readinto` are timed, with the child's schedstat (its
CPU and run-queue wait so far) at each. On SIGUSR2 each process writes what
it noted into DIR (`worker.json`, `child-PID.json`); SIGUSR1 clears it (after the warm-up).

Per job (its id): `received` (the `/ws` message read), `created` (the job made, `Scheduler.submit`),
`enqueued` with admission's state then (engine thread waiting, lanes waiting, sections running),
`taken` (the thread and whether beside, a preview lane), `section` (`run_section` begins),
`before_sent` and `sent` (the request's write to the child begun and returned, with the lane's
schedstat at each, since stop 64; its pid), `first_chunk` (the lane's first `Delivery.take`),
`published` (the first chunk past the trimmer handed over), `section_end`, `loop_has` (the pump's first
`_on_audio`), `written` (the burst holding its first PCM frame taken to be written). Beside them: the
loop's callbacks that ran over 1 ms (start, length, what, the loop thread's CPU in it), every garbage collection (start, length,
generation, thread) in the worker and in the children.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import runpy
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

SLOW_CALLBACK_S = 0.001
NOW = object()  # `Notes.first`'s value when none is given: the time of the call

CHILD_HOOK = '''
import os


def _tail_hops_child():
    """In an espeak child only: its frame writes, its request reads and its collections, timed."""
    try:
        with open("/proc/self/cmdline", "rb") as cmdline:
            if b"espeak_child" not in cmdline.read():
                return
    except OSError:
        return
    import gc, json, signal, time

    out = os.environ["TAIL_HOPS_DIR"]
    writes, reads, collections, started = [], [], [], [0.0]
    monotonic, writev, fdopen = time.monotonic, os.writev, os.fdopen

    def schedstat():
        with open("/proc/thread-self/schedstat", "rb") as file:
            ran, waited, _ = file.read().split()
        return int(ran) / 1e9, int(waited) / 1e9

    def timed_writev(fd, parts):
        at = monotonic()
        ran, waited = schedstat()
        written = writev(fd, parts)
        writes.append((at, written, ran, waited))
        return written

    class TimedPipe:
        def __init__(self, pipe):
            self.pipe = pipe

        def readinto(self, buffer):
            before = schedstat()[1]  # (its run-queue wait from here to the return: its wake-up's)
            got = self.pipe.readinto(buffer)
            reads.append((monotonic(), got, *schedstat(), before))
            return got

        def __getattr__(self, name):
            return getattr(self.pipe, name)

    def timed_fdopen(fd, *args, **kwargs):
        pipe = fdopen(fd, *args, **kwargs)
        return TimedPipe(pipe) if fd == 0 else pipe

    def collected(phase, info):
        if phase == "start":
            started[0] = monotonic()
        else:
            collections.append((started[0], monotonic() - started[0], info["generation"]))

    def dump(*_):
        body = {"writes": writes, "reads": reads, "gc": collections}
        path = os.path.join(out, "child-%d.json" % os.getpid())
        with open(path + ".part", "w") as file:
            json.dump(body, file)
        os.replace(path + ".part", path)  # (whole when the benchmark sees it)

    def clear(*_):
        del writes[:], reads[:], collections[:]

    os.writev, os.fdopen = timed_writev, timed_fdopen
    gc.callbacks.append(collected)
    signal.signal(signal.SIGUSR2, dump)
    signal.signal(signal.SIGUSR1, clear)


if os.environ.get("TAIL_HOPS_DIR"):
    _tail_hops_child()
'''


def schedstat(path: str = "/proc/thread-self/schedstat") -> tuple[float, float]:
    """A thread's (this one's) CPU and run-queue wait so far, in seconds (schedstat: what the kernel
    counted while it was runnable but another task had the core)."""
    with open(path, "rb") as file:
        ran, waited, _ = file.read().split()
    return int(ran) / 1e9, int(waited) / 1e9


class Notes:
    """What the worker's probes noted: per job, the first time of each hop; the loop's slow callbacks;
    the collections."""

    def __init__(self) -> None:
        self.jobs: dict[str, dict[str, Any]] = {}
        self.slow: list[tuple[float, float, str, float]] = []  # start, length, what, its CPU
        self.gc: list[tuple[float, float, int, str]] = []
        self.callbacks = 0
        self.thread_ids: dict[str, int] = {}  # an engine thread's name → its native id (its /proc task)
        self.current = threading.local()  # the job whose section this engine thread runs, its schedstat
        self.first_frame_bursts: dict[int, str] = {}  # id(burst) → the job whose first PCM it holds

    def first(self, job_id: str, hop: str, value: Any = NOW) -> None:
        """`hop`'s first time (now) or value for the job; later ones are not kept."""
        hops = self.jobs.setdefault(job_id, {})
        if hop not in hops:
            hops[hop] = time.monotonic() if value is NOW else value

    def clear(self) -> None:
        self.jobs.clear()
        self.slow.clear()
        self.gc.clear()
        self.callbacks = 0

    def dump(self, path: Path) -> None:
        body = {"jobs": self.jobs, "slow": self.slow, "gc": self.gc, "callbacks": self.callbacks}
        body["thread_ids"] = self.thread_ids
        path.with_suffix(".part").write_text(json.dumps(body))
        path.with_suffix(".part").replace(path)  # (whole when the benchmark sees it)


def probe_admission(notes: Notes) -> None:
    from npu_worker.jobs.admission import Admission

    enqueue, take = Admission.enqueue, Admission._take

    def timed_enqueue(self: Any, job: Any, *rest: Any, **named: Any) -> None:
        """(`rest`, `named`: what else `enqueue` takes, passed on: `told_at_once` since stop 59)"""
        output = job.sections[0].output_path if job.sections else None
        state = [self._engine_waiting, self._lanes_waiting, len(self._running), len(self._beside)]
        notes.first(job.id, "enqueued")
        notes.first(job.id, "state_at_enqueue", state)
        notes.first(job.id, "output_path", output and str(output))
        notes.first(job.id, "created", job.created_mono)
        enqueue(self, job, *rest, **named)

    def timed_take(self: Any, job: Any, section: Any, beside: bool = False) -> Any:
        notes.first(job.id, "taken")
        ended = getattr(notes.current, "ended", None)  # this thread's schedstat at its last section's end
        if ended is not None:
            ran, waited = schedstat()
            notes.first(job.id, "since_last_section", [ran - ended[0], waited - ended[1]])
        notes.first(job.id, "thread", threading.current_thread().name)
        notes.first(job.id, "beside", beside)
        return take(self, job, section, beside)

    Admission.enqueue, Admission._take = timed_enqueue, timed_take  # type: ignore[method-assign]


def probe_engine_side(notes: Notes) -> None:
    from npu_worker.engine.espeak_process import ChildEspeak
    from npu_worker.jobs.delivery import Delivery
    from npu_worker.jobs.runner import Runner

    run_section, sent, take = Runner.run_section, ChildEspeak._sent, Delivery.take
    publish = Runner.publish_audio

    def timed_run_section(self: Any, job: Any, section: Any, engine: Any = None) -> Any:
        notes.first(job.id, "section")
        notes.current.job = job.id
        notes.thread_ids.setdefault(threading.current_thread().name, threading.get_native_id())
        try:
            return run_section(self, job, section, engine)
        finally:
            notes.first(job.id, "section_end")
            notes.current.ended = schedstat()

    def timed_sent(self: Any, request: Any, again: Any) -> Any:
        job_id = getattr(notes.current, "job", None)
        if job_id is not None:  # (the write's own wait: a core if the run-queue wait grows, else the GIL)
            notes.first(job_id, "before_sent")
            notes.first(job_id, "schedstat_before_sent", schedstat())
        child = sent(self, request, again)
        if job_id is not None:
            notes.first(job_id, "sent")
            notes.first(job_id, "schedstat_at_sent", schedstat())
            notes.first(job_id, "child", child.pid)
        return child

    def timed_take(self: Any, chunk: Any) -> bool:
        if "first_chunk" not in notes.jobs.setdefault(self.job.id, {}):
            notes.first(self.job.id, "first_chunk")
            notes.first(self.job.id, "schedstat_at_first_chunk", schedstat())
        notes.jobs.setdefault(self.job.id, {})["last_chunk"] = time.monotonic()
        return take(self, chunk)

    loop_schedstat = f"/proc/self/task/{os.getpid()}/schedstat"  # the loop runs on the main thread

    def timed_publish(self: Any, job: Any, chunk: Any) -> None:
        if chunk.samples.size and "published" not in notes.jobs.setdefault(job.id, {}):
            notes.first(job.id, "published")
            notes.first(job.id, "loop_schedstat_at_published", schedstat(loop_schedstat))
        publish(self, job, chunk)

    Runner.run_section, Runner.publish_audio = timed_run_section, timed_publish  # type: ignore[method-assign]
    ChildEspeak._sent = timed_sent  # type: ignore[method-assign]
    Delivery.take = timed_take  # type: ignore[method-assign]


def probe_loop_side(notes: Notes) -> None:
    from npu_worker.ws_server.burst import Burst
    from npu_worker.ws_server.request_stream import RequestStream

    on_audio, send_frames, burst_take = RequestStream._on_audio, RequestStream._send_frames, Burst.take

    def timed_on_audio(self: Any, chunk: Any) -> None:
        notes.first(self.job.id, "received", self._received_at)
        if "loop_has" not in notes.jobs.setdefault(self.job.id, {}):
            notes.first(self.job.id, "loop_has")
            notes.first(self.job.id, "loop_schedstat_at_loop_has", schedstat())
        on_audio(self, chunk)

    def marked_send_frames(self: Any, frames: Any) -> None:
        if not self._stream_samples:
            notes.first_frame_bursts[id(self._burst)] = self.job.id
        send_frames(self, frames)

    def timed_burst_take(self: Any) -> bytes:
        job_id = notes.first_frame_bursts.pop(id(self), None)
        if job_id is not None:
            notes.first(job_id, "written")
        return burst_take(self)

    RequestStream._on_audio = timed_on_audio  # type: ignore[method-assign]
    RequestStream._send_frames = marked_send_frames  # type: ignore[method-assign]
    Burst.take = timed_burst_take  # type: ignore[method-assign]


def probe_loop_and_gc(notes: Notes) -> None:
    """The loop's callbacks over `SLOW_CALLBACK_S` (what ran, how long) and every collection."""
    run = asyncio.events.Handle._run
    monotonic, thread_time = time.monotonic, time.thread_time

    def timed_run(self: Any) -> None:
        started, cpu = monotonic(), thread_time()
        run(self)
        took = monotonic() - started
        notes.callbacks += 1
        if took > SLOW_CALLBACK_S:
            notes.slow.append((started, took, repr(self._callback)[:160], thread_time() - cpu))

    asyncio.events.Handle._run = timed_run  # type: ignore[method-assign]
    began = [0.0]

    def collected(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            began[0] = monotonic()
        else:
            took = monotonic() - began[0]
            notes.gc.append((began[0], took, info["generation"], threading.current_thread().name))

    gc.callbacks.append(collected)


def wrapped(out: str, argv: list[str]) -> None:
    """Run `npu_worker.cli argv` with the probes in; SIGUSR1 clears the notes, SIGUSR2 writes them."""
    notes = Notes()
    for probe in (probe_admission, probe_engine_side, probe_loop_side, probe_loop_and_gc):
        probe(notes)
    signal.signal(signal.SIGUSR1, lambda *_: notes.clear())
    signal.signal(signal.SIGUSR2, lambda *_: notes.dump(Path(out) / "worker.json"))
    sys.argv = ["npu_worker.cli", *argv]
    runpy.run_module("npu_worker.cli", run_name="__main__", alter_sys=True)
