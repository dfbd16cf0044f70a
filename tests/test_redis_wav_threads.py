"""A section's wav on a Redis node is read a piece at a time from a thread of the default executor
(`jobs/cluster/redis_wav.py`: a GETRANGE through `RedisJournal.call`). A thread is taken for one
piece's round trip, not for its send: 50 readers that read nothing hold none, and downloads at once,
each taking pieces as fast as it can, leave the executor free (50 downloads of a 2.9 MB wav at once took
0.6-0.9 s whole on a 2-core VM at load 15, a call on the executor meanwhile 30 ms at the median, 0.2 ms
with the 50 idle readers, 2026-12-07). The pool grows to about one connection a download, each new one
looking the hostname URL's name up, on the node's own lookup threads (`pools.LookedUpConnection`): in
this executor, behind the threads waiting for those connections, lookups waited out the 2 s connect
timeout under load, and a download was cut after its headers
(`test_connections_to_a_named_redis_are_made_while_every_default_executor_thread_waits_for_one`)."""

from __future__ import annotations

import asyncio
import socket

import aiohttp

from tests.test_section_audio_held_job import answer_begun, engines_alive
from tests.timing import seconds, until


async def test_readers_of_a_redis_wav_leave_the_default_executor_free(served, redis_server):
    from tests.tone_engine import ToneEngine

    url = redis_server.url.replace("127.0.0.1", "localhost")  # a name: each new connection looks it up
    listener = await served(
        ToneEngine(seconds_per_char=0.3, chunk_seconds=10.0), queue=url, claim_timeout=1.0
    )
    await engines_alive(listener.port)
    base = f"http://127.0.0.1:{listener.port}"
    async with aiohttp.ClientSession() as session:  # 60 s of audio: 2.9 MB, 11 pieces
        body = {"sections": [{"idx": 0, "text": "가" * 200}], "stream": False}
        async with session.post(f"{base}/synth_batch", json=body) as answer:
            assert answer.status == 200, await answer.text()
            job_id = (await answer.json())["job_id"]
    loop = asyncio.get_running_loop()
    idle: list[socket.socket] = []
    try:
        for _ in range(50):
            reader = socket.socket()
            reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # and it never reads
            reader.setblocking(False)
            idle.append(reader)
            await loop.sock_connect(reader, ("127.0.0.1", listener.port))
            request = f"GET /jobs/{job_id}/sections/0/audio HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            await loop.sock_sendall(reader, request.encode())
        await until(lambda: all(answer_begun(reader) for reader in idle), "every answer to begin")
        async with asyncio.timeout(seconds(10)):  # the executor is free while they wait
            looked_up = await loop.run_in_executor(None, socket.getaddrinfo, "localhost", redis_server.port)
        assert looked_up

        async def download(session: aiohttp.ClientSession) -> tuple[int, int]:
            async with session.get(f"{base}/jobs/{job_id}/sections/0/audio") as answer:
                return answer.status, len(await answer.read())

        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            async with asyncio.timeout(seconds(60)):
                downloads = await asyncio.gather(*[download(session) for _ in range(50)])
        assert set(downloads) == {(200, 2_880_044)}
    finally:
        for reader in idle:
            reader.close()
