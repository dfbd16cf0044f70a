"""PCM frames at the WebSocket header's length bounds, through a real server and real espeak-ng audio:
after `first_audio` a chunk's frames go into the burst in one call (`Burst.binaries`), before it one
by one, and both must frame 1, 62 and 63 samples (2, 124, 126 bytes: the 7-bit length's bound),
32 767 and 32 768 (65 534, 65 536 bytes: the 16-bit one) and 48 000 (64-bit) as the schedule says,
with `audio_end` counting what went out."""

from __future__ import annotations

from npu_worker.ws_server.schedule import schedule_sizes
from tests.test_ws_support import batch, connect, run_request

TEXT = "오늘은 인공지능 음성 합성에 대해 이야기하겠습니다. " * 2  # about 7 s a section
BOUNDS_MS = (0.0417, 2.5833, 2.625, 1365.2917, 1365.3333, 2000.0)
SCHEDULE_MS = BOUNDS_MS + BOUNDS_MS + (5.2083, 40.0)  # twice: the second time after `first_audio`


def expected_sizes(section_samples: list[int], sizes: tuple[int, ...]) -> list[list[int]]:
    """The frames the growing schedule cuts each section into: full ones while they fit, then the
    section's rest as one shorter frame; the schedule goes on across sections."""
    made, sections = 0, []
    for remaining in section_samples:
        frames = []
        while remaining >= (target := sizes[min(made, len(sizes) - 1)]):
            frames.append(target)
            remaining -= target
            made += 1
        if remaining:
            frames.append(remaining)
            made += 1
        sections.append(frames)
    return sections


async def test_frames_at_each_header_bound_before_and_after_first_audio_follow_the_schedule(worker):
    sizes = schedule_sizes(SCHEDULE_MS, 24000)
    assert sizes[:6] == (1, 62, 63, 32_767, 32_768, 48_000)
    client = await worker(engine=None, backend="espeak", chunk_schedule_ms=SCHEDULE_MS)
    ws = await connect(client)
    transcript = await run_request(ws, batch(TEXT, TEXT, TEXT))
    ends = transcript.events("audio_end")
    assert [end["idx"] for end in ends] == [0, 1, 2]
    want = expected_sizes([end["samples"] for end in ends], sizes)
    for idx, end in enumerate(ends):
        frames = transcript.section_frames(idx)
        assert [len(frame) for frame in frames] == [2 * size for size in want[idx]], idx
        assert end["chunks"] == len(frames) and end["samples"] == sum(len(f) for f in frames) // 2
    lengths = {len(frame) for frame in transcript.frames()}
    assert {2, 124, 126, 65_534, 65_536, 96_000} <= lengths
    [first] = transcript.events("first_audio")
    after = transcript.items[transcript.items.index(first) + 1 :]
    assert {2, 124, 126, 65_534, 65_536, 96_000} <= {len(i) for i in after if isinstance(i, bytes)}
    assert transcript.done["ok_count"] == 3
    await ws.close()
