"""A `/synth`'s admission off the loop costs no `Future` (real worker, real socket; issue 25, stop 61:
benchmarks/SERVER_OVERHEAD.md counts it with `call_counts.py --synths`)."""

from __future__ import annotations

import threading

import pytest

from npu_worker.jobs.admitters import Admitters
from tests.loop_calls import loop_calls_in_three_synths


async def test_a_synths_admission_off_the_loop_makes_no_future_on_the_loop(worker, tmp_path):
    """Nothing reads a quiet admission's result (a refusal is kept on its job): a `ThreadPoolExecutor`
    made a `Future` a call, with its `Condition` (its `submit`, the future's and the condition's
    `__init__`, a lock: ≈ 10 Python calls on the loop), and set it on the admitting thread."""
    client = await worker()
    calls = await loop_calls_in_three_synths(
        client, tmp_path, lambda code: "concurrent/futures" in code.co_filename
    )
    assert calls == []


def test_admitters_run_each_call_on_at_most_so_many_threads_and_end_at_shutdown():
    """Each call runs once, on threads named as the executor named them, at most `most` of them; a
    call that fails is logged and the thread goes on; after `shutdown` a call is refused and the
    threads end once the calls queued before it are done."""
    admitters = Admitters(2, "test-admit")
    ran: list[tuple[int, str]] = []
    gate, done = threading.Event(), threading.Semaphore(0)

    def call(number: int) -> None:
        gate.wait(10)
        ran.append((number, threading.current_thread().name))
        done.release()
        if number == 3:
            raise ValueError("one admission's bug")

    for number in range(6):
        admitters.submit(call, number)
    gate.set()
    for _ in range(6):
        assert done.acquire(timeout=10)
    assert sorted(number for number, _ in ran) == list(range(6))
    assert {name for _, name in ran} <= {"test-admit_0", "test-admit_1"}
    threads = [t for t in threading.enumerate() if t.name.startswith("test-admit_")]
    admitters.shutdown()
    for thread in threads:
        thread.join(10)
        assert not thread.is_alive()
    with pytest.raises(RuntimeError):
        admitters.submit(call, 7)
