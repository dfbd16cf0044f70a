"""A native `/synth` runs nothing of the OpenAI surface on the event loop (real worker, real socket; issue
25, stop 63: benchmarks/SERVER_OVERHEAD.md counts it with `call_counts.py --synths`). The OpenAI routes'
`x-request-id` on the stream socket's 101 and a CORS preflight's 204 was an `on_response_prepare` hook, so
every answer of every route called it (≈ 5 calls on the loop a `/synth`, 3 of them Python); those two answers now
name their id where they are made (`tests/test_openai_request_id_upgrade.py` keeps them named)."""

from __future__ import annotations

from tests.loop_calls import loop_calls_in_three_synths


async def test_a_synth_calls_nothing_of_the_openai_surface_on_the_loop(worker, tmp_path):
    client = await worker()
    calls = await loop_calls_in_three_synths(
        client, tmp_path, lambda code: "/npu_worker/openai_compat/" in code.co_filename
    )
    assert calls == []
