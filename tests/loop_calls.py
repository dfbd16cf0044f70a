"""Helper for the tests that count what a `/synth` costs the event loop (no tests here)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


async def loop_calls_in_three_synths(
    client: Any, tmp_path: Path, counted: Callable[[Any], bool]
) -> list[str]:
    """A warm `/synth`, then the names of the functions the loop's thread called (those `counted` takes,
    by their code object) while three more ran, each answered ok with its wav written."""
    body = {"text": "한 번에.", "output_path": str(tmp_path / "warm.wav")}
    assert (await (await client.post("/synth", json=body)).json())["status"] == "ok"
    calls: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and counted(frame.f_code):
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)  # (this thread: the loop's)
    try:
        for call in range(3):
            body = {"text": f"한 번에 {call}.", "output_path": str(tmp_path / f"{call}.wav")}
            answer = await (await client.post("/synth", json=body)).json()
            assert answer["status"] == "ok" and (tmp_path / f"{call}.wav").stat().st_size > 44
    finally:
        sys.setprofile(None)
    return calls
