"""The worker's allocator setting: a request-sized audio buffer reuses memory instead of new pages."""

from __future__ import annotations

import subprocess
import sys

import pytest

# Encode a 4.2 s sentence's wav (the joined chunks, their int16 copy, the bytes) 200 times; print the
# minor page faults per encode. Run in a fresh interpreter: the setting is process-wide.
PROBE = """
import resource
import numpy as np
from npu_worker import heap
from npu_worker.audio import wav_bytes
tuned = heap.keep_freed_memory()
chunks = [np.full(14400, 0.1, dtype=np.float32) for _ in range(7)]
wav_bytes(np.concatenate(chunks), 24000)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(200):
    wav_bytes(np.concatenate(chunks), 24000)
print(tuned, (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 200)
"""


def faults_per_encode() -> tuple[str, float]:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    tuned, faults = out.stdout.split()
    return tuned, float(faults)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_with_the_setting_an_encode_faults_in_almost_no_pages() -> None:
    tuned, faults = faults_per_encode()
    assert tuned == "True"
    # A 4.2 s wav is ~100 pages and its float copies ~200 more: reused memory faults in none of them.
    assert faults < 10, faults
