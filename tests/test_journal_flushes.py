"""A drain's direct-write flushes (`after_this_drain`) all run, even past one that raised: a flush
skipped left its `/ws` listener marked as due a direct write, and its pump was never woken again."""

from __future__ import annotations

import pytest

from npu_worker.jobs.loop_handoff import run_every


class Stop(BaseException):
    pass


def test_every_flush_runs_even_past_one_that_raised_and_the_errors_are_raised():
    ran: list[str] = []

    def raising(name: str):
        def flush() -> None:
            ran.append(name)
            raise Stop(name)

        return flush

    flushes = [
        lambda: ran.append("a"),
        raising("b"),
        lambda: ran.append("c"),
        raising("d"),
        lambda: ran.append("e"),
    ]
    with pytest.raises(Stop) as raised:
        run_every(flushes)
    assert ran == ["a", "b", "c", "d", "e"]
    assert (str(raised.value), str(raised.value.__context__)) == ("d", "b")  # the last, the first within
