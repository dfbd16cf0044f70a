"""A bench run's wav folder is removed even where the worker writes in it after the run's end: a /synth
the run gave up on (a stop midway, a timeout) was still written by the worker, which makes an output
path's folders, so the folder came back with a wav in it (a CI run at load 15 found it left)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from npu_worker.bench.wav_folder import removed_once_settled, temp_wav_dir


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

    await removed_once_settled(out_dir, worker_finishes_late)
    assert late == [out_dir]
    assert not os.path.exists(out_dir)
    assert list(tmp_path.iterdir()) == []
