"""A `batch` given up on with its job left running (no progress past `--stall-limit`, a worker gone past
its re-attaches) ended with why and `job … was not cancelled: it may still run …`, never how far it had
come: which sections' wavs were already there was left to the progress lines above it, scrolled away on
a long lecture and read by no script. Its last line now says it, as a cancel's does."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from npu_worker.cli_client import main
from npu_worker.engine.base import SynthesisRequest
from tests.timing import seconds
from tests.tone_engine import ToneEngine

STALL = f"{seconds(2):g}"  # --stall-limit: see the test


class HangsOnOne(ToneEngine):
    """Speaks every text but the one holding `hang`, whose first chunk waits for `release`."""

    def __init__(self) -> None:
        super().__init__(fail_on="bad")
        self.release = threading.Event()

    def stream(self, request: SynthesisRequest) -> Iterator[np.ndarray]:
        if "hang" in request.text:
            self.release.wait()
        yield from super().stream(request)


def base_of(test_client: Any) -> str:
    return f"http://127.0.0.1:{test_client.port}"


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        ([], "; 4 of 6 sections had finished when it was given up: 3 ok (s00, s01, s03), 1 failed"),
        # counts, no section yet: the last status's split (it gave the count alone)
        (["--poll"], "; 4 of 6 sections had finished when it was given up: 3 ok, 1 failed"),
    ],
    ids=["stream", "poll"],
)
async def test_a_batch_given_up_names_the_sections_it_had_finished(worker, tmp_path, capsys, flags, said):
    engine = HangsOnOne()
    server = await worker(engine, heartbeat_interval=0.1)
    texts = ["하나.", "둘.", "bad 셋.", "넷.", "hang 다섯.", "여섯."]
    lecture = tmp_path / "lecture.json"
    sections = [{"idx": i, "text": t} for i, t in enumerate(texts)]
    lecture.write_text(json.dumps({"lang": "ko", "sections": sections}, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "out"
    # a stall limit the four sections before the held one each finish within on a loaded machine (0.5 s:
    # one that took longer gave the batch up early, naming fewer sections)
    argv = ["batch", str(lecture), "--out-dir", str(out), "--base", base_of(server), "--stall-limit", STALL]
    argv += flags
    try:
        code = await asyncio.to_thread(main, argv)
        made = sorted(path.name for path in Path(out).iterdir())  # before the held section goes on
    finally:
        engine.release.set()
    last = capsys.readouterr().err.splitlines()[-1]
    assert code == 2, last
    assert (
        last.startswith("npu-worker batch: job ") and f"may still run and write its wavs into {out}" in last
    )
    assert last.endswith(said), last
    assert made == ["s00.wav", "s01.wav", "s03.wav"], made
