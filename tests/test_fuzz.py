"""A short hypothesis fuzz of the HTTP API against a worker in its own process (tools/fuzz_http.py is
the long run): no 5xx, no hang, every answer in a documented shape."""

from __future__ import annotations

import pytest

from tests.fuzz_support import fuzz
from tests.timing import seconds
from tests.worker_process import start_worker_process


@pytest.mark.allow_blocking
def test_fuzzed_requests_get_documented_answers(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    process = start_worker_process(tmp_path / "state", 0, delay=0.0, output_root=root)
    port = process.port
    try:
        tally = fuzz(f"http://127.0.0.1:{port}", str(root), examples=200, timeout=seconds(10))
    finally:
        process.terminate()
        process.wait(timeout=seconds(10))
    assert tally.sent >= 200
    assert tally.clean, "\n".join(tally.examples)
    assert len(tally.statuses) >= 3  # the generator reaches successes and several refusals
