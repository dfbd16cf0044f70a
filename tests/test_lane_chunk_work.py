"""What an engine lane does for each chunk of a `/ws` preview, kept to the chunk's own work
(benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 53): the loaded engine's rate is not asked for again
a chunk."""

from __future__ import annotations

from npu_worker.jobs import runner as runner_module
from tests.test_ws_support import batch, connect, run_request
from tests.tone_engine import ToneEngine


async def test_a_previews_chunks_do_not_ask_the_rate_again(worker, monkeypatch) -> None:
    asked: list[int] = []
    real = runner_module.Runner._rate

    def counted(self: runner_module.Runner) -> int:
        asked.append(1)
        return real(self)

    monkeypatch.setattr(runner_module.Runner, "_rate", counted)
    client = await worker(ToneEngine(chunk_seconds=0.02))  # a chunk every 20 ms of audio
    ws = await connect(client)
    try:
        heard = await run_request(ws, batch("A preview of a few chunks."))
    finally:
        await ws.close()
    assert heard.done["ok_count"] == 1
    assert len(heard.section_pcm(0)) > 10 * 0.02 * 24000 * 2  # more than ten chunks went out
    assert len(asked) <= 2  # its section's delivery and cache look, not 2 a chunk
