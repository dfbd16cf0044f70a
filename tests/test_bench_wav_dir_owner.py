"""`bench --wav-dir DIR` in a folder someone else could write: the worker writes the /synth wavs there
and the bench reads them back to measure their onsets, so another user could swap them. A planted 0777
`/tmp/wavs`, or one another user owns, was written in; now refused in one line, before any request."""

from __future__ import annotations

import asyncio
import os

import pytest

from npu_worker.bench.cli import main as bench_main

NOBODY = 65534
NOWHERE = "http://127.0.0.1:9"  # no worker: an accepted folder ends in `cannot reach`


@pytest.mark.parametrize(
    ("mode", "owner", "refusal"),
    [
        (0o777, None, "others can write in it (mode 777, not sticky)"),
        (0o770, None, None),  # (root's group, or the user's private one: counted as the owner)
        (0o700, NOBODY, f"belongs to another user (uid {NOBODY})"),
        (0o1777, NOBODY, f"belongs to another user (uid {NOBODY})"),
        (0o1777, None, None),  # others may add files, never replace the bench's own folder in it
        (0o700, None, None),
    ],
)
async def test_a_wav_dir_others_can_write_or_own_is_refused(tmp_path, capsys, mode, owner, refusal):
    wavs = tmp_path / "wavs"
    wavs.mkdir()
    wavs.chmod(mode)
    if owner is not None:
        if os.geteuid() != 0:
            pytest.skip("giving a folder to another user needs root")
        os.chown(wavs, owner, -1)
    argv = ["bench", "--base", NOWHERE, "--out", str(tmp_path / "r"), "--wav-dir", str(wavs)]
    assert await asyncio.to_thread(bench_main, argv) == 2
    err = capsys.readouterr().err
    if refusal is None:
        assert err.startswith(f"npu-worker bench: cannot reach {NOWHERE}"), err
    else:
        assert err.startswith(f"npu-worker bench: --wav-dir {wavs}: ") and err.count("\n") == 1, err
        assert refusal in err and "give a folder of your own" in err
        assert list(wavs.iterdir()) == []


async def test_a_wav_dir_made_in_a_folder_others_can_write_is_refused(tmp_path, capsys):
    """Made where missing, but in a 0777 folder: another user could rename it away and put theirs."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    wavs = shared / "wavs"
    argv = ["bench", "--base", NOWHERE, "--out", str(tmp_path / "r"), "--wav-dir", str(wavs)]
    assert await asyncio.to_thread(bench_main, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"npu-worker bench: --wav-dir {wavs}: others can write in {shared} (mode 777"), err
    assert not wavs.exists()
