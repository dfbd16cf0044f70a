"""What a worker keeps per request must not grow with the number of requests (it runs for weeks)."""

from __future__ import annotations

import asyncio
import contextlib
import os

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.request_checks import LANGS_KEPT
from npu_worker.late_closes import LATE_CLOSES


async def test_each_spelling_of_a_language_is_not_remembered_forever(worker, tmp_path):
    """`lang` is any string up to 32 characters and espeak-ng takes "ko-<anything>" as Korean: the
    scheduler's set of checked languages grew by one entry per spelling a caller sent."""
    client = await worker(None)  # the real espeak-ng engine, as `serve` runs it
    scheduler = client.app[SCHEDULER_KEY]
    for i in range(LANGS_KEPT * 3):
        body = {"text": "가.", "lang": f"ko-x{i}", "output_path": str(tmp_path / "out.wav")}
        async with client.post("/synth", json=body) as response:
            assert response.status == 200 and (await response.json())["status"] == "ok"
    assert len(scheduler.checks.langs) <= LANGS_KEPT


def _children() -> dict[int, tuple[str, str]]:
    """This process's children: pid → (its /proc state letter, "Z" for a zombie nobody reaped; its command
    line, empty for a zombie). The suite's own background jobs are children too (tests/conftest.py)."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == os.getpid():
                with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                    found[int(pid)] = (
                        fields[0],
                        cmdline.read().replace(b"\0", b" ").decode(errors="replace"),
                    )
    return found


def _espeak_children(children: dict[int, tuple[str, str]]) -> set[int]:
    return {pid for pid, (_, command) in children.items() if "npu_worker.engine.espeak_child" in command}


async def test_espeak_children_killed_by_text_are_replaced_and_reaped(worker, tmp_path):
    """Text such as "s'" * 100 makes espeak-ng abort (a fortified buffer overflow) in its child: each such request
    fails alone, and the worker ends up with as many children and descriptors as before, none a zombie.
    One lane: a second lane loads its engine on its own thread after the worker says loaded, so under load
    its child could start after the count below was taken (4 children against 3 in one CI run)."""
    client = await worker(None, preview_lanes=1)
    out = str(tmp_path / "out.wav")

    async def synth(text: str) -> str:
        async with client.post("/synth", json={"text": text, "lang": "en", "output_path": out}) as response:
            return str((await response.json())["status"])

    assert await synth("Hello.") == "ok"
    before, fds = _children(), len(os.listdir("/proc/self/fd"))
    ours = _espeak_children(before)
    assert ours, before
    for _ in range(4):  # a child or a descriptor kept per crash shows after the first
        assert await synth("s'" * 100) == "fail"
        assert await synth("Hello.") == "ok"
    after = _children()
    # the children espeak had, and every child started since (its replacements): none left a zombie
    watched = {pid: state for pid, (state, _) in after.items() if pid in ours or pid not in before}
    assert "Z" not in watched.values(), watched
    assert len(_espeak_children(after)) == len(ours)
    await asyncio.to_thread(LATE_CLOSES.settle)  # (the replaced out.wav's descriptor, closed off the writer)
    assert len(os.listdir("/proc/self/fd")) <= fds
