"""A section's audio (`GET /jobs/{id}/sections/{idx}/audio`) ignored `Range`: a media player seeking in
a long section, or a download resumed, got the whole wav again, 200. One byte range is now that range
(206, `Content-Range`), as the player's files are served; one past the end is 416; several ranges, a
unit other than bytes, or an `If-Range` (the answer carries no validator) are the whole wav, 200."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from npu_worker.http_compat.byte_range import one_range
from tests.timing import seconds


async def finished_section(client) -> tuple[str, bytes]:
    accepted = await (
        await client.post("/synth_batch?async=1", json={"sections": [{"text": "하나 둘 셋."}]})
    ).json()
    job_id = accepted["job_id"]
    async for _ in (await client.get(f"/jobs/{job_id}/events")).content:
        pass
    result = await (await client.get(f"/jobs/{job_id}/result")).json()
    return f"/jobs/{job_id}/sections/0/audio", await asyncio.to_thread(
        Path(result["wav_paths"][0]).read_bytes
    )


@pytest.mark.parametrize(
    ("asked", "first", "last"),
    [("bytes=0-43", 0, 43), ("bytes=100-", 100, None), ("bytes=-10", -10, None), ("bytes=50-99,", 50, 99)],
)
async def test_one_range_is_that_range(worker, asked, first, last):
    client = await worker()
    path, wav = await finished_section(client)
    answer = await client.get(path, headers={"Range": asked})
    body = await answer.read()
    expected = wav[first:] if last is None else wav[first : last + 1]
    assert answer.status == 206 and body == expected
    start = first % len(wav)
    assert answer.headers["Content-Range"] == f"bytes {start}-{start + len(expected) - 1}/{len(wav)}"
    assert answer.headers["Accept-Ranges"] == "bytes"
    head = await client.head(path, headers={"Range": asked})
    assert head.status == 206 and int(head.headers["Content-Length"]) == len(expected)


@pytest.mark.parametrize("asked", ["bytes=999999999-", "bytes=-0", "bytes=9-3", "bytes=x"])
async def test_a_range_of_no_bytes_is_416(worker, asked):
    client = await worker()
    path, wav = await finished_section(client)
    answer = await client.get(path, headers={"Range": asked})
    assert answer.status == 416 and answer.headers["Content-Range"] == f"bytes */{len(wav)}"
    # no bytes, and nothing calls them a wav (it said `Content-Type: audio/wav` over an empty body)
    assert await answer.read() == b"" and answer.headers["Content-Length"] == "0"
    assert "Content-Type" not in answer.headers and answer.headers["Accept-Ranges"] == "bytes"


async def test_a_section_with_no_audio_is_a_404_without_accept_ranges(worker):
    """`Accept-Ranges` is on the answers that have the wav's bytes to range over (200, 206, 416), as
    docs/protocol.md says; a 404 has none (there is no wav)."""
    client = await worker()
    path, _ = await finished_section(client)
    answer = await client.get(path.replace("/sections/0/", "/sections/7/"), headers={"Range": "bytes=0-1"})
    assert answer.status == 404 and "Accept-Ranges" not in answer.headers
    assert (await answer.json())["error"].startswith("AudioNotFound: ")


@pytest.mark.parametrize(
    ("asked", "one"),
    [
        ("bytes=0-1", "bytes=0-1"),
        ("bytes=0-1, ", "bytes=0-1"),
        ("bytes=,0-1", "bytes=0-1"),
        ("bytes= 0-1", "bytes= 0-1"),  # (as it is: aiohttp's pattern refuses it, 416)
        ("bytes=0-1,3-4", None),  # several: the whole answer
        ("items=0-1", None),  # another unit: the whole answer
        ("nonsense", "nonsense"),  # (416)
    ],
)
def test_a_range_is_read_once_into_what_is_served(asked, one):
    """`one_range` says at once whether the whole answer is sent (None) and which range otherwise: the
    section's wav and the player's files read a `Range` once, where each read the unit and the list
    twice (once to decide, once to serve)."""
    assert one_range(asked) == one


@pytest.mark.parametrize(
    "headers",
    [{"Range": "bytes=0-1,5-9"}, {"Range": "items=0-1"}, {"Range": "bytes=0-1", "If-Range": '"abc"'}],
)
async def test_other_ranges_are_the_whole_wav(worker, headers):
    client = await worker()
    path, wav = await finished_section(client)
    answer = await client.get(path, headers=headers)
    assert answer.status == 200 and await answer.read() == wav


async def test_one_range_of_the_copy_in_redis(worker, redis_server):
    """With `--queue redis` the wav comes from Redis (bytes, not a file): its ranges are served alike."""
    client = await worker(queue=redis_server.url)
    async with asyncio.timeout(seconds(20)):
        while (await (await client.get("/health")).json()).get("cluster", {}).get("engines_alive") != 1:
            await asyncio.sleep(0.05)
    path, wav = await finished_section(client)
    answer = await client.get(path, headers={"Range": "bytes=10-19"})
    assert answer.status == 206 and await answer.read() == wav[10:20]
    assert answer.headers["Content-Range"] == f"bytes 10-19/{len(wav)}"


HOSTILE = {  # Range → the status both the section's wav and the player's files answer
    "bytes=0-" + "9" * 5000: 416,  # past Python's 4 300 digits: a 500 here, where aiohttp said 416
    "bytes=" + "9" * 5000 + "-": 416,
    "bytes=-" + "9" * 5000: 416,
    "bytes=0-" + "9" * 4000: 206,  # a big number within the limit: up to the end
    "bytes= 0-1": 416,  # spaces inside the one range: aiohttp's pattern refuses them (206 here)
    "bytes = 0-1": 416,
    "bytes=\t0-1": 416,
    "bytes=, 0-1": 206,  # around an empty list element they are the list's (§5.6.1)
    "bytes=" + "," * 8000 + "0-1": 206,
}


async def test_hostile_ranges_are_answered_as_the_players_files(worker):
    """The section's wav and the player's page (aiohttp's `FileResponse`) read a `Range` alike."""
    client = await worker()
    path, _ = await finished_section(client)
    answered = {}
    for asked in HOSTILE:
        statuses = []
        for route in (path, "/"):
            answer = await client.get(route, headers={"Range": asked})
            await answer.read()
            statuses.append(answer.status)
        answered[asked[:24]] = statuses
    assert answered == {asked[:24]: [status, status] for asked, status in HOSTILE.items()}


@pytest.mark.parametrize("second", ["bytes=5-9", "bytes=0-1"])
async def test_range_given_twice_is_the_whole_wav_as_for_the_players_files(worker, second):
    """`Range` is no list (RFC 9110 §5.3): two fields are read as several ranges, the whole answer, on
    both routes; the first was served (a proxy that reads the last serves the other bytes)."""
    client = await worker()
    path, wav = await finished_section(client)
    answer = await client.get(path, headers=[("Range", "bytes=0-1"), ("Range", second)])
    assert answer.status == 200 and await answer.read() == wav
    page = await client.get("/", headers=[("Range", "bytes=0-1"), ("Range", second)])
    assert page.status == 200 and "Content-Range" not in page.headers
