"""A bench run's wav folder is removed even where the worker writes in it after the run's end: a /synth
the run gave up on (a stop midway, a timeout) was still written by the worker, which makes an output
path's folders, so the folder came back with a wav in it (a CI run at load 15 found it left)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from npu_worker.bench import wav_folder
from npu_worker.bench.wav_folder import removed_once_settled, temp_wav_dir
from tests.timing import seconds


async def test_a_wav_written_after_the_first_removal_is_removed_once_the_worker_is_idle(
    tmp_path: Path,
) -> None:
    out_dir = await asyncio.to_thread(temp_wav_dir, str(tmp_path))
    (Path(out_dir) / "0.wav").write_bytes(b"RIFF")
    late: list[str] = []

    def write_late() -> None:
        assert not os.path.exists(out_dir)  # removed once already
        os.makedirs(out_dir)
        (Path(out_dir) / "7.wav").write_bytes(b"RIFF")
        late.append(out_dir)

    async def worker_finishes_late() -> None:  # the worker's write of a request the run gave up on
        await asyncio.to_thread(write_late)

    assert await removed_once_settled(out_dir, worker_finishes_late) is None  # (nothing to tell)
    assert late == [out_dir]
    assert not os.path.exists(out_dir)
    assert list(tmp_path.iterdir()) == []


async def test_a_worker_that_never_says_it_is_idle_holds_the_removal_no_longer_than_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wait for the worker was awaited whole: one that accepted `/health` and answered nothing held the
    run's end for an ask's 10 s (`load.ASK_SECONDS`) past the `WAV_SETTLE_SECONDS` the docs bound it by.
    Now the folder is removed again at that bound, whatever the wait is doing."""
    monkeypatch.setattr(wav_folder, "WAV_SETTLE_SECONDS", 0.05)  # (5 s in the bench)
    out_dir = await asyncio.to_thread(temp_wav_dir, str(tmp_path))
    never_idle = asyncio.Event()

    async def busy() -> None:
        await never_idle.wait()

    async with asyncio.timeout(seconds(20)):
        told = await removed_once_settled(out_dir, busy)
    assert list(tmp_path.iterdir()) == []
    assert told == (  # it was silent: a wav written later left the folder with nothing said
        "worker still busy after 0.05 s: a /synth the run gave up on may still write its wav in"
        f" {out_dir} (remove it then)"
    )


async def test_a_worker_unreachable_at_the_end_is_told_with_the_folder_it_may_write_in(
    tmp_path: Path,
) -> None:
    """`wait_idle`'s own why-not (unreachable, busy past its bound) was dropped: nothing said the
    folder might come back."""
    out_dir = await asyncio.to_thread(temp_wav_dir, str(tmp_path))

    async def unreachable() -> str:
        return "worker unreachable (connection refused)"

    told = await removed_once_settled(out_dir, unreachable)
    assert told is not None and told.startswith("worker unreachable (connection refused): a /synth")
    assert out_dir in told and list(tmp_path.iterdir()) == []
