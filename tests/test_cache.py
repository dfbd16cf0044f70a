"""The synthesis cache: keyed by everything that changes the audio, bounded in bytes."""

from __future__ import annotations

import asyncio
import json
import linecache
import os
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.audio import wav_bytes
from npu_worker.engine.base import EngineInfo, SynthesisRequest, Voice
from npu_worker.jobs.cache import SynthesisCache, cache_key
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine

CPU = EngineInfo("zipvoice-onnx", "cpu", "fp32", 24000, "zipvoice-distill-1")


def wav_of(size: int) -> bytes:
    """A real wav of `size` bytes (44 of header, 16-bit samples)."""
    return wav_bytes(np.zeros((size - 44) // 2, dtype=np.float32), 24000)


def test_key_changes_with_device_precision_text_speed_voice_and_seed(tmp_path):
    base = SynthesisRequest("안녕하세요.", "ko", 1.0, Voice(), 0)
    keys = {
        cache_key(CPU, base),
        cache_key(EngineInfo("zipvoice-onnx", "qnn", "fp16", 24000, "zipvoice-distill-1"), base),
        cache_key(EngineInfo("zipvoice-onnx", "cpu", "int8", 24000, "zipvoice-distill-1"), base),
        cache_key(CPU, SynthesisRequest("안녕.", "ko", 1.0, Voice(), 0)),
        cache_key(CPU, SynthesisRequest("안녕하세요.", "ko", 1.5, Voice(), 0)),
        cache_key(CPU, SynthesisRequest("안녕하세요.", "ko", 1.0, Voice(str(tmp_path / "r.wav"), "x"), 0)),
        cache_key(CPU, SynthesisRequest("안녕하세요.", "ko", 1.0, Voice(), 1)),
    }
    assert len(keys) == 7


def test_a_part_of_the_key_cannot_run_into_the_next():
    """The parts were joined with \x1f, which a text (and, stripped away, a language) may hold."""
    assert cache_key(CPU, SynthesisRequest("안녕\x1f", "ko")) != cache_key(
        CPU, SynthesisRequest("안녕", "\x1fko")
    )


def test_least_recently_used_entries_are_evicted_past_the_bound(tmp_path):
    cache = SynthesisCache(tmp_path, max_bytes=2500)
    for index, key in enumerate(("a", "b", "c")):
        cache.put(key, wav_of(1000))
        os.utime(tmp_path / f"{key}.wav", (1000 + index, 1000 + index))
    assert cache.get("a", 24000) is None  # oldest went first
    assert cache.get("b", 24000) is not None and cache.get("c", 24000) is not None
    assert sum(p.stat().st_size for p in tmp_path.glob("*.wav")) <= 2500


def test_a_zero_bound_disables_the_cache(tmp_path):
    cache = SynthesisCache(tmp_path / "off", max_bytes=0)
    cache.put("a", bytes(10))
    assert cache.get("a", 24000) is None and not (tmp_path / "off").exists()


def test_an_entry_that_is_a_link_is_cut_short_or_is_not_a_wav_is_a_miss(tmp_path):
    """Only the worker's own whole file is served: a link (to anything), a file cut short, or bytes
    that are not a wav would otherwise become a section's `ok` audio, or fail that text for good."""
    cache = SynthesisCache(tmp_path / "cache", max_bytes=10**6)
    cache.put("whole", wav_of(1000))
    assert cache.get("whole", 24000) == wav_of(1000)
    elsewhere = tmp_path / "elsewhere.wav"
    elsewhere.write_bytes(wav_of(1000))
    (tmp_path / "cache" / "linked.wav").symlink_to(elsewhere)
    (tmp_path / "cache" / "short.wav").write_bytes(wav_of(1000)[:100])
    (tmp_path / "cache" / "junk.wav").write_bytes(b"not a wav at all")
    assert [cache.get(key, 24000) for key in ("linked", "short", "junk")] == [None, None, None]


async def test_the_workers_own_folders_and_logs_are_not_group_writable_whatever_the_umask(worker, settings):
    """A service's `UMask=0007` made cache/, jobs/ and the logs group-writable: with the systemd unit's
    0750 state dir, the callers' group could plant cache entries."""
    previous = os.umask(0o007)
    try:
        client = await worker(cache_max_bytes=10**6)
        answer = await client.post("/synth_batch", json={"sections": [{"text": "하나."}], "stream": False})
        assert answer.status == 200 and (await answer.json())["ok_count"] == 1
    finally:
        os.umask(previous)
    state = settings.resolved_state_dir()
    for _ in range(500):  # the cache is filled after the job's `done` (its temp file then renamed): let it be
        made = list(state.rglob("*"))
        if any(p.suffix == ".wav" for p in (state / "cache").rglob("*")) and not any(
            p.name.endswith(".part") for p in made
        ):
            break
        await asyncio.sleep(0.01)
    assert {p.relative_to(state).parts[0] for p in made} >= {"jobs", "outputs", "cache"}
    for path in [state, *made]:
        assert not path.stat().st_mode & 0o022, f"{path} is writable by others: {path.stat().st_mode:o}"


async def test_an_entry_whose_header_is_damaged_or_of_another_rate_is_a_miss_not_a_failed_section(
    worker, tmp_path, settings
):
    """An entry the RIFF size check passed (the size is right) but libsndfile cannot read, or whose
    header says another sample rate, failed its text for good or played it at the wrong speed."""
    engine = ToneEngine()
    client = await worker(engine, cache_max_bytes=10**6)
    body = {"text": "손상된 항목.", "output_path": str(tmp_path / "one.wav")}
    assert (await (await client.post("/synth", json=body)).json())["status"] == "ok"
    cache = Path(settings.state_dir) / "cache"
    await until(lambda: list(cache.glob("*.wav")), "the cache entry")  # put after the answer
    [entry] = cache.glob("*.wav")
    whole = entry.read_bytes()
    damaged = [
        whole[:12] + b"junk" + whole[16:],  # the fmt chunk's name
        whole[:20] + (3).to_bytes(2, "little") + whole[22:],  # float samples, 16 bits wide
        whole[:24] + (8000).to_bytes(4, "little") + whole[28:],  # another rate
    ]
    for number, data in enumerate(damaged):
        entry.write_bytes(data)
        body["output_path"] = str(tmp_path / f"again{number}.wav")
        answer = await (await client.post("/synth", json=body)).json()
        assert answer["status"] == "ok" and "cached" not in answer, answer
        assert (tmp_path / f"again{number}.wav").read_bytes() == whole
        await until(lambda: entry.read_bytes() == whole, "the entry made again and kept again")
    assert len(engine.calls) == 1 + len(damaged)


async def test_a_link_loop_or_a_folder_among_the_entries_leaves_sections_ok_once(worker, tmp_path, settings):
    """Listing the entries (first use) stat()ed through links and stopped at the first error: the
    section that filled the cache, `ok` already, was then reported failed too (`ok`, then `error`,
    for one idx), and so was every later one. A folder named like an entry is not one either."""
    client = await worker(ToneEngine(), cache_max_bytes=20_000)
    cache = Path(settings.state_dir) / "cache"
    (cache / "loop.wav").symlink_to(cache / "loop.wav")
    (cache / "folder.wav").mkdir()
    for number in range(3):
        body = {"sections": [{"idx": 0, "text": f"폴더 {number}."}], "output_dir": str(tmp_path)}
        lines = (await (await client.post("/synth_batch", json=body)).text()).splitlines()
        events = [json.loads(line)["event"] for line in lines]
        assert events == ["start", "progress", "progress", "done"], "\n".join(lines)
        assert json.loads(lines[-1])["ok_count"] == 1
    body = {"text": "폴더 2.", "output_path": str(tmp_path / "hit.wav")}
    assert (await (await client.post("/synth", json=body)).json())["cached"] is True
    assert (cache / "folder.wav").is_dir()


def test_a_restart_with_a_smaller_bound_fits_it_at_first_use(tmp_path):
    """The listing at first use kept every entry: a worker restarted with a smaller bound (to free the
    disk) stayed over it until some section was put, and one that only served hits, for good."""
    before = SynthesisCache(tmp_path, max_bytes=10**6)
    for index, key in enumerate(("a", "b", "c")):
        before.put(key, wav_of(1000))
        os.utime(tmp_path / f"{key}.wav", (1000 + index, 1000 + index))
    after = SynthesisCache(tmp_path, max_bytes=2500)
    assert after.get("c", 24000) == wav_of(1000)
    assert sorted(path.name for path in tmp_path.glob("*.wav")) == ["b.wav", "c.wav"]


def test_a_voice_replaced_by_one_of_the_same_size_and_time_is_another_key(tmp_path):
    """Size and mtime named the file: a voice deployed again from an image or archive whose times are
    fixed (SOURCE_DATE_EPOCH, `cp -p`, `touch -r`) with another recording of the same length kept the
    key, and the old recording's audio was served for the new one."""
    path = tmp_path / "anna.wav"
    path.write_bytes(wav_bytes(np.full(2400, 0.1, dtype=np.float32), 24000))
    os.utime(path, ns=(10**9, 10**9))
    request = SynthesisRequest("안녕하세요.", "ko", 1.0, Voice(str(path), "안녕"), 0)
    before, size = cache_key(CPU, request), path.stat().st_size
    replacement = tmp_path / "new.wav"
    replacement.write_bytes(wav_bytes(np.full(2400, -0.1, dtype=np.float32), 24000))
    os.utime(replacement, ns=(10**9, 10**9))
    replacement.replace(path)
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (size, 10**9)
    assert cache_key(CPU, request) != before


def test_a_voice_without_ref_text_is_another_key_once_its_sidecar_transcript_changes(tmp_path):
    """Without `ref_text` ZipVoice reads the transcript from `<name>.txt`, which the key left out: a
    corrected transcript was served the audio made with the wrong one."""
    path = tmp_path / "anna.wav"
    path.write_bytes(wav_bytes(np.full(2400, 0.1, dtype=np.float32), 24000))
    (tmp_path / "anna.txt").write_text("안녕하세요.\n")
    request = SynthesisRequest("반갑습니다.", "ko", 1.0, Voice(str(path)), 0)
    before = cache_key(CPU, request)
    (tmp_path / "anna.txt").write_text("안녕하십니까.\n")
    assert cache_key(CPU, request) != before


async def test_a_text_said_again_before_the_first_is_in_the_cache_is_made_once(worker, tmp_path):
    """The finisher puts a section in the cache while the engine makes the next one: a batch that
    repeats a text (a slide's closing line) made it again, and again while the first was on its way."""
    engine = ToneEngine()
    client = await worker(engine, cache_max_bytes=10**7)
    text = "다음 슬라이드로 넘어가겠습니다. " * 10
    body = {"sections": [{"text": text}, {"text": text}, {"text": "끝."}, {"text": text}], "stream": False}
    answer = await (await client.post("/synth_batch", json=body)).json()
    assert [section.get("cached") for section in answer["sections"]] == [None, True, None, True], answer
    assert engine.calls == [text, "끝."]
    wavs = [Path(path).read_bytes() for path in answer["wav_paths"]]
    assert wavs[0] == wavs[1] == wavs[3]


async def test_a_text_said_again_while_the_first_is_being_put_in_the_cache_is_not_made_again(worker):
    """The repeated-text test's flake, on cue: the engine thread looked in the cache (a miss: the
    first was still on its way), then the finisher put it there and forgot it as made, and only then
    did the engine thread look among the made ones (a miss too), so it made the text again. Here the
    put waits until the engine thread's look in the cache has missed, and that look returns only
    once the finisher has done everything handed to it (the put and the forgetting)."""
    engine = ToneEngine()
    client = await worker(engine, cache_max_bytes=10**7)
    scheduler = client.app[SCHEDULER_KEY]
    runner, cache = scheduler.runner, scheduler.cache
    get, put, gate = cache.get, cache.put, threading.Event()

    def held_put(key: str, wav: bytes) -> None:
        assert gate.wait(seconds(20)), "the test never let the put go on"
        put(key, wav)

    def get_then_let_the_put_end(key: str, rate: int) -> bytes | None:
        found = get(key, rate)
        if runner._unkept and not gate.is_set():  # a made section is on its way to the cache
            gate.set()
            finished = threading.Event()
            runner.finisher.submit(finished.set)  # after the put and what follows it
            assert finished.wait(seconds(20)), "the finisher never ended the first section"
        return found

    cache.put, cache.get = held_put, get_then_let_the_put_end
    text = "다음 슬라이드로 넘어가겠습니다. " * 10
    body = {"sections": [{"text": text}, {"text": text}, {"text": "끝."}, {"text": text}], "stream": False}
    try:
        async with asyncio.timeout(seconds(30)):
            answer = await (await client.post("/synth_batch", json=body)).json()
    finally:
        gate.set()
    assert gate.is_set() and [section.get("cached") for section in answer["sections"]] == [
        None,
        True,
        None,
        True,
    ]
    assert engine.calls == [text, "끝."]


def paused_at(
    function: Any, line_starts: tuple[str, ...], reached: threading.Event, go: threading.Event | None
):
    """A trace for the calling thread: when `function` is about to run a line that starts with one of
    `line_starts`, `reached` is set (and, with `go`, the thread waits for it): a thread held on a line."""
    code = function.__code__

    def local(frame: FrameType, event: str, arg: object) -> Any:
        if event == "line" and linecache.getline(code.co_filename, frame.f_lineno).strip().startswith(
            line_starts
        ):
            reached.set()
            if go is not None:
                assert go.wait(seconds(20)), "the test never let the thread go on"
        return local

    def calls(frame: FrameType, event: str, arg: object) -> Any:
        return local if frame.f_code is code else None

    return calls


async def test_a_text_made_by_two_engine_threads_at_once_stays_served_until_the_second_is_kept(
    worker, tmp_path
):
    """A lane and the engine thread made one text at once: the first to end, kept (`_keep`), looked
    at the entry of its text among the sections made and not yet in the cache, saw its own, and the
    second's add landed before its delete, which deleted the second's. The same text again, before
    the second was kept, was made a third time (here the first's file could not be written, so it was
    not put in the cache). Each thread is held on the line of the race until the other has acted."""
    from npu_worker.jobs.model import Job, Section, new_job_id
    from npu_worker.jobs.runner import Runner
    from npu_worker.protocol import SynthParams

    engine = ToneEngine()
    client = await worker(engine, cache_max_bytes=10**7)
    runner = client.app[SCHEDULER_KEY].runner
    text = "두 엔진 스레드가 같은 말을 한꺼번에."
    held, arrived, release = ToneEngine(), threading.Event(), threading.Event()

    class Gate:
        def wait(self, timeout: float | None = None) -> bool:
            arrived.set()
            return release.wait(seconds(20))

    held.gate = Gate()  # type: ignore[assignment]

    def section(path: str) -> tuple[Job, Section]:
        job = Job(new_job_id(), SynthParams(), [Section(0, text, path)], preview=True, persisted=False)
        return job, job.sections[0]

    def traced(trace: Any, work: Any, *args: Any) -> threading.Thread:
        def run() -> None:
            sys.settrace(trace)
            try:
                work(*args)
            finally:
                sys.settrace(None)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread

    def race() -> None:
        at_add, at_delete, go = threading.Event(), threading.Event(), threading.Event()
        # The lane's: its look missed (nothing made yet), and its engine holds it at its first chunk.
        adds = ("self._unkept[audio.key] =", "with self._unkept_lock", "then(self._finish")
        lane = traced(
            paused_at(Runner.run_section, adds, at_add, None),
            runner.run_section,
            *section(str(tmp_path / "lane.wav")),
            held,
        )
        assert arrived.wait(seconds(20))
        # The engine thread's, made meanwhile; its file cannot be written (outside the roots): not ok.
        first = runner.run_section(*section("/proc/no-root/first.wav"))
        assert first is not None and not first.ok
        keep = traced(paused_at(Runner._keep, ("del self._unkept",), at_delete, go), runner._keep, first)
        assert at_delete.wait(seconds(20))  # it has seen its own entry, and is about to delete it
        release.set()
        assert at_add.wait(seconds(20))  # the lane adds its entry (or is about to)
        go.set()
        keep.join(seconds(20))
        lane.join(seconds(20))
        assert not keep.is_alive() and not lane.is_alive()
        runner.run_section(*section(str(tmp_path / "again.wav")))  # the same text again

    await asyncio.to_thread(race)
    assert held.calls == [text]
    assert engine.calls == [text], "the text was made again while the lane's was on its way to the cache"


async def test_a_synth_answers_before_its_audio_is_put_in_the_cache(worker, tmp_path, settings):
    """The cache was filled (its entry written and fsynced) before the job's `done`, at which a
    `/synth` answers: every answer waited for the state disk (an fsync there took 0.4 ms at the
    median and 12 ms at the most). A put held here, as a slow disk holds it, no longer holds the
    answer; the entry is kept once it goes on. (The held put is the only stand-in: a slow disk on
    cue cannot be had here.)"""
    engine = ToneEngine()
    client = await worker(engine, cache_max_bytes=10**6)
    cache = client.app[SCHEDULER_KEY].cache
    put, gate = cache.put, threading.Event()

    def held_put(key: str, wav: bytes) -> None:
        assert gate.wait(seconds(20)), "the test never let the put go on"
        put(key, wav)

    cache.put = held_put
    body = {"text": "느린 디스크.", "output_path": str(tmp_path / "one.wav")}
    try:
        async with asyncio.timeout(seconds(10)):
            answer = await (await client.post("/synth", json=body)).json()
        assert answer["status"] == "ok" and (tmp_path / "one.wav").stat().st_size > 44
    finally:
        gate.set()
    entries = Path(settings.state_dir) / "cache"
    await until(lambda: list(entries.glob("*.wav")), "the cache entry")
    body["output_path"] = str(tmp_path / "two.wav")
    assert (await (await client.post("/synth", json=body)).json())["cached"] is True
    assert engine.calls == ["느린 디스크."]
