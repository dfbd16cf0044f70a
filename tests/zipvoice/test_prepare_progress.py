"""`npu-worker prepare`'s "about N s left": from the buckets compiled so far, for the larger ones left; and
the seconds it says it took."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest

from npu_worker.engine.zipvoice import prepare
from npu_worker.engine.zipvoice.bucket_runs import seconds_left
from npu_worker.engine.zipvoice.prepared import MANIFEST
from tests.zipvoice.test_prepare_failures import prepare_in_process
from tests.zipvoice.test_providers import qnn

# The small real-structure export's five default buckets, `prepare --optimization fast --precision fp32`
# on the 2-core VM (2026-12-06): frames, seconds specialising + compiling, seconds specialising.
MEASURED = [(383, 10.9, 5.3), (767, 14.5, 5.9), (1151, 17.0, 4.9), (1535, 18.0, 5.3), (2079, 28.9, 5.4)]


@pytest.mark.parametrize("compiled", [1, 2, 3, 4])
def test_the_time_left_follows_the_larger_buckets_still_to_compile(compiled):
    """The mean bucket's time said "about 44 s left" after the first bucket where 78 s were: compiling
    grows with the frames (5.6 s at 383, 23.5 s at 2079), specialising does not."""
    done, left = MEASURED[:compiled], MEASURED[compiled:]
    took = sum(seconds for _, seconds, _ in left)
    estimate = seconds_left(done, [size for size, _, _ in left])
    assert took / 1.5 <= estimate <= took * 1.5, (estimate, took)


def test_no_bucket_left_is_no_time_left():
    assert seconds_left(MEASURED[:2], []) == 0


@qnn
def test_the_seconds_a_prepare_says_take_in_hashing_its_copies(qnn_model_dir, tmp_path, monkeypatch):
    """The manifest's `seconds` (`prepared …: N buckets in S s`) runs from the first bucket to the
    manifest, the staged copies' SHA-256 included (a full-size decoder's 477 MB, and its reads from the
    disk): the split of `prepare` into parts had it stop before them. Their cost here: 100 s on the clock
    `prepare` reads."""
    hashed, ahead = prepare._staged_hashes, [0.0]

    def slow_to_hash(*args: object) -> dict[str, str]:
        ahead[0] += 100.0
        return hashed(*args)

    clock = SimpleNamespace(
        monotonic=lambda: time.monotonic() + ahead[0], strftime=time.strftime, gmtime=time.gmtime
    )
    monkeypatch.setattr(prepare, "time", clock)
    monkeypatch.setattr(prepare, "_staged_hashes", slow_to_hash)
    assert prepare_in_process(qnn_model_dir, tmp_path / "out") == 0
    assert ahead == [100.0]
    assert json.loads((tmp_path / "out" / MANIFEST).read_text())["seconds"] >= 100.0
