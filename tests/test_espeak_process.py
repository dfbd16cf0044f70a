"""espeak-ng in a child process (`--espeak-process`): the same chunks as in this process, a cancel that
stops the child mid-sentence, errors that keep their type, a child that dies replaced for the next
request, none left behind, and nothing imported from the working directory."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import msgspec
import numpy as np
import pytest

from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak import EspeakEngine
from npu_worker.engine.espeak_child import (
    AUDIO,
    END,
    FAILED,
    REQUEST,
    REQUEST_ID,
    STOP,
    BrokenStream,
    Request,
    _Child,
    read_frame,
    write_frame,
)
from npu_worker.engine.espeak_process import ChildEspeak
from npu_worker.engine.espeak_process_engine import EspeakProcessEngine
from npu_worker.protocol import EngineError, ModelLoadError, UnknownLanguage
from tests import espeak_children
from tests.timing import seconds

SENTENCE = "오늘은 인공지능 음성 합성에 대해 이야기하겠습니다."
LONG_TEXT = SENTENCE * 30

engine = espeak_children.engine  # the fixture: this module's own loaded espeak child


def made(engine: EspeakEngine, text: str, lang: str = "ko") -> list[np.ndarray]:
    chunks: list[np.ndarray] = []
    engine.stream_into(SynthesisRequest(text, lang), lambda chunk: chunks.append(chunk.copy()) is None)
    return chunks


def test_the_child_hands_over_the_same_chunks_as_this_process(engine):
    here = EspeakEngine()
    here.load()
    assert engine.info == here.info  # same backend, model, rate: the cache keys stay the same
    for text, lang in ((SENTENCE, "ko"), ("Hello there, this is a test.", "en")):
        there, local = made(engine, text, lang), made(here, text, lang)
        # the same gathering (prompt buffers one by one, then ~0.6 s pieces); espeak itself moves
        # a sentence's length by up to a few hundred samples from one call to the next, in either process
        assert [c.size for c in there[:4]] == [c.size for c in local[:4]]
        assert abs(sum(c.size for c in there) - sum(c.size for c in local)) < 0.02 * sum(
            c.size for c in local
        )
        assert abs(len(there) - len(local)) <= 1
        assert all(c.dtype == np.float32 and c.flags.writeable for c in there)
        assert np.abs(np.concatenate(there)).max() > 0.05


def test_a_sink_that_refuses_stops_the_child_and_the_next_request_is_whole(engine):
    taken: list[int] = []
    engine.stream_into(
        SynthesisRequest(LONG_TEXT), lambda chunk: taken.append(chunk.size) is None and len(taken) < 2
    )
    assert len(taken) == 2
    whole = sum(chunk.size for chunk in made(engine, SENTENCE))
    assert 1.5 * 24000 < whole < 8 * 24000  # nothing of the stopped sentence came with it
    closed = engine.stream(SynthesisRequest(LONG_TEXT))
    next(closed)
    closed.close()  # an iterator closed early stops the child too
    assert abs(sum(chunk.size for chunk in made(engine, SENTENCE)) - whole) < 0.02 * whole


def test_a_stop_reaches_the_child_before_the_text_ends(engine):
    """The child checks for a stop between the chunks it sends: after a stop, what is still read is a
    sliver of a long text (the child was stopped, not merely read to the end)."""
    child = engine.child
    request = b'{"id": 9, "text": "%s", "lang": "ko", "speed_factor": 1.0}' % LONG_TEXT.encode()
    write_frame(child._requests, REQUEST, request)
    kind, first = child._answers.read()
    assert kind == AUDIO
    write_frame(child._requests, STOP, REQUEST_ID.pack(9))
    drained = len(first) // 4
    while (frame := child._answers.read())[0] == AUDIO:
        drained += len(frame[1]) // 4
    assert frame[0] == END
    whole = sum(chunk.size for chunk in made(engine, LONG_TEXT))
    assert drained < 0.2 * whole


def test_errors_keep_their_type_and_the_language_is_checked_before_the_child(engine):
    with pytest.raises(UnknownLanguage, match="no voice for lang 'xx-nope'"):
        made(engine, "hello", "xx-nope")
    engine.check_language("en")
    assert "ko" in engine.languages()
    assert engine.voice_for("korean") == engine.voice_for("ko")
    with pytest.raises(UnknownLanguage) as raised:  # the child's own check, past the server's
        list(engine.child.chunks(SynthesisRequest("hello", "xx-nope")))
    assert str(raised.value).startswith("UnknownLanguage: espeak-ng has no voice for lang 'xx-nope'")
    write_frame(
        engine.child._requests, REQUEST, b'{"text": 1}'
    )  # not a request: its failure, not the child's
    kind, payload = engine.child._answers.read()
    assert kind == FAILED and b"ValidationError" in payload
    assert made(engine, SENTENCE)  # the child is unharmed


def test_a_child_that_dies_fails_its_section_and_another_makes_the_next(engine):
    first = engine.child.pid
    chunks = engine.stream(SynthesisRequest(LONG_TEXT))
    next(chunks)
    os.kill(first, signal.SIGKILL)
    with pytest.raises(EngineError, match="espeak-ng's process failed .*exit status -9"):
        for _ in chunks:
            pass
    assert made(engine, SENTENCE)
    second = engine.child.pid
    assert second != first
    os.kill(second, signal.SIGKILL)  # now while idle: the next request finds it gone
    engine.library._process.wait(seconds(5))
    assert made(engine, SENTENCE)
    assert engine.child.pid not in (first, second)


def test_a_request_asks_the_kernel_nothing_about_its_child(engine, monkeypatch):
    """Each request looked at `alive` first: a `wait4` a `/synth` or preview, and a hand-off of the GIL
    to the event loop around it. A child's end is known from its pipe instead (the test above: one
    killed mid-request, one killed while idle, each replaced)."""
    child = engine.child
    asked: list[int] = []
    real = child._process.poll
    monkeypatch.setattr(child._process, "poll", lambda: asked.append(1) or real())
    for _ in range(3):
        assert made(engine, SENTENCE)
    stopped = engine.stream(SynthesisRequest(LONG_TEXT))
    next(stopped)
    stopped.close()  # a request stopped early: its rest drained, on the same child
    assert made(engine, SENTENCE)
    assert asked == [] and engine.child is child


def test_close_ends_the_child_and_a_lane_is_a_child_of_its_own():
    engine = EspeakProcessEngine()
    engine.load()
    lane = engine.lane()
    lane.load()
    pids = {engine.child.pid, lane.child.pid}
    assert len(pids) == 2
    assert made(lane, SENTENCE) and made(engine, SENTENCE)
    engine.close()
    lane.close()
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped: nothing left behind


def test_the_child_imports_nothing_from_the_working_directory(tmp_path, monkeypatch):
    """A world-writable working directory may hold a planted module: the child runs with `-P`."""
    marker = tmp_path / "imported"
    for name in ("numpy.py", "msgspec.py"):
        (tmp_path / name).write_text(f"open({str(marker)!r}, 'w').write('planted')\nraise SystemExit(3)\n")
    (tmp_path / "npu_worker").mkdir()
    (tmp_path / "npu_worker" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('planted')\n")
    monkeypatch.chdir(tmp_path)
    child = ChildEspeak()
    try:
        assert child.find_voice("ko") is not None
        assert sum(c.size for c in child.chunks(SynthesisRequest(SENTENCE))) > 24000
    finally:
        child.close()
    assert not marker.exists()


def test_a_child_that_cannot_start_is_a_load_error(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    with pytest.raises(ModelLoadError, match="cannot start espeak-ng's process"):
        EspeakProcessEngine().load()


def test_frames_survive_a_pipe_that_takes_them_in_pieces():
    reading, writing = os.pipe()
    payload = np.arange(100_000, dtype=np.float32)  # 400 kB: more than a pipe holds at once
    with os.fdopen(reading, "rb", buffering=0) as stream:
        writer = threading.Thread(
            target=lambda: (write_frame(writing, AUDIO, payload.tobytes()), write_frame(writing, END))
        )
        writer.start()
        kind, data = read_frame(stream)
        assert kind == AUDIO and np.array_equal(np.frombuffer(data, dtype=np.float32), payload)
        assert read_frame(stream)[0] == END
        writer.join(seconds(5))
        os.close(writing)
        with pytest.raises(BrokenStream):
            read_frame(stream)


def test_the_child_writes_a_contiguous_float32_chunk_as_it_is_and_converts_any_other():
    """The engine's chunks are contiguous float32: written with no `np.ascontiguousarray` call each
    (≈ 9 a preview in the child; benchmarks/SERVER_OVERHEAD.md, stop 59); any other array is converted."""
    requests_read, requests_write = os.pipe()
    out_read, out_write = os.pipe()
    child = _Child(os.fdopen(requests_read, "rb", buffering=0), out_write)
    called: list[str] = []

    def record(_frame: object, event: str, arg: object) -> None:
        if event == "c_call":
            called.append(getattr(arg, "__name__", ""))

    plain = np.linspace(-1.0, 1.0, 480, dtype=np.float32)
    others = (
        np.linspace(-1.0, 1.0, 960, dtype=np.float32)[::2],
        np.linspace(-1.0, 1.0, 480),
    )  # strided, float64
    try:
        with os.fdopen(out_read, "rb", buffering=0) as out:
            sys.setprofile(record)
            try:
                assert child._send(plain)
            finally:
                sys.setprofile(None)
            kind, data = read_frame(out)
            assert kind == AUDIO and bytes(data) == plain.tobytes()
            assert "ascontiguousarray" not in called
            for other in others:
                child.sent_first = False  # (each written at once, as a request's first)
                assert child._send(other)
                kind, data = read_frame(out)
                assert (
                    kind == AUDIO and bytes(data) == np.ascontiguousarray(other, dtype=np.float32).tobytes()
                )
    finally:
        os.close(requests_write)
        os.close(out_write)
        child.requests.close()


def test_a_frame_claiming_to_be_huge_is_refused():
    reading, writing = os.pipe()
    os.write(writing, b"A" + (2**31).to_bytes(4, "little"))
    os.close(writing)
    with os.fdopen(reading, "rb", buffering=0) as stream, pytest.raises(BrokenStream, match="a frame of"):
        read_frame(stream)


def test_the_child_ends_when_the_server_goes():
    """Its stdin closing (the server exiting, however it exits) ends the child: no orphan."""
    child = ChildEspeak()
    process = child._process
    assert process.stdin is not None
    process.stdin.close()
    assert process.wait(seconds(5)) == 0
    child.close()


def test_the_workers_stop_signals_do_not_kill_the_child_under_a_section(engine):
    """Ctrl-C reaches the whole process group and systemd's SIGTERM the whole unit, while the worker's
    drain lets the running section finish: the child finishes it, and ends only when its stdin closes."""
    child = engine.child
    chunks = child.chunks(SynthesisRequest(SENTENCE * 3))
    got = next(chunks).size
    os.kill(child.pid, signal.SIGINT)
    os.kill(child.pid, signal.SIGTERM)
    got += sum(chunk.size for chunk in chunks)
    assert got > 3 * 1.5 * 24000 and child.alive


def read_calls(pid: int | str = "self") -> int:
    """A process's read system calls so far (/proc: every thread, every file)."""
    return io_calls(pid)["syscr"]


def io_calls(pid: int | str) -> dict[str, int]:
    with open(f"/proc/{pid}/io", encoding="ascii") as io_counts:
        return {name: int(value) for name, value in (line.split(": ") for line in io_counts)}


def test_a_frame_comes_off_the_childs_pipe_in_one_read_when_it_is_there_whole():
    """The engine thread read each frame's 5-byte header, then its audio: two reads a chunk or more,
    each a release and a retaking of the GIL beside the event loop (a `/synth` of a sentence: 20 reads
    from the child, 9 now; benchmarks/SERVER_OVERHEAD.md, 2026-12-05 late night)."""
    child = ChildEspeak()
    try:
        before = read_calls()
        frames = len(list(child.chunks(SynthesisRequest(SENTENCE * 3)))) + 1  # and its END
        reads = read_calls() - before - 2  # (this function's own two reads of /proc/self/io)
    finally:
        child.close()
    assert frames > 5 and reads < 1.5 * frames, (reads, frames)


def test_a_requests_later_frames_share_the_childs_writes_and_the_servers_reads():
    """The child wrote each chunk as it came (≈ 10 writes a preview), each a wake-up of the engine
    thread, a read and a GIL hand-off beside the event loop; the audio after the first frame now goes a
    few frames a write, the last with the END (benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 49)."""
    child = ChildEspeak()
    try:
        before, reads_before = io_calls(child.pid)["syscw"], read_calls()
        frames = 0
        for _ in range(5):
            frames += len(list(child.chunks(SynthesisRequest(SENTENCE)))) + 1  # and its END
        writes = io_calls(child.pid)["syscw"] - before
        reads = read_calls() - reads_before - 2 * 2  # (the four reads of /proc in this test)
    finally:
        child.close()
    assert frames >= 5 * 5
    assert writes <= 0.75 * frames, (writes, frames)  # (a loaded machine may split a hold in two)
    assert reads <= 0.75 * frames, (reads, frames)


def test_a_child_whose_worker_stopped_reading_before_its_ready_exits_quietly():
    """A preview lane's child still starting when the worker stopped (it loads on a thread of its own)
    found its READY's pipe closed and printed a BrokenPipeError traceback into the worker's log (one CI
    run of test_serve_start's shutdown test): the child now ends quietly, its reader gone."""
    child = subprocess.Popen(
        [sys.executable, "-P", "-m", "npu_worker.engine.espeak_child"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert child.stdout is not None and child.stdin is not None
    child.stdout.close()  # before its READY: the worker gone
    try:
        _, stderr = child.communicate(timeout=seconds(30))  # (stdin closes once it has ended)
    finally:
        child.kill()
    assert b"Traceback" not in stderr and child.returncode == 0, stderr.decode(errors="replace")


def test_closing_the_phonemizer_ends_a_call_stuck_on_a_child_that_stopped_answering():
    """ZipVoice's phonemizer holds its lock while a call waits for the child's answer: a child stopped
    (SIGSTOP, a hung host) kept the lock, and the shutdown's close waited for it for ever."""
    from npu_worker.engine.espeak_phonemizer import ChildPhonemizer

    phonemizer = ChildPhonemizer()
    assert phonemizer("하나", "ko")  # the child started
    child = phonemizer._child
    assert child is not None
    os.kill(child.pid, signal.SIGSTOP)
    outcome: list[BaseException | str] = []

    def call() -> None:
        try:
            outcome.append(phonemizer("둘", "ko"))
        except BaseException as error:  # noqa: BLE001 - what the stuck call ended with
            outcome.append(error)

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    caller.join(0.3)
    assert caller.is_alive()  # waiting on the stopped child, holding the lock
    closer = threading.Thread(target=phonemizer.close, daemon=True)
    closer.start()
    closer.join(seconds(15))
    try:
        assert not closer.is_alive(), "close waited for ever on a call stuck on a stopped child"
        caller.join(seconds(5))
        assert len(outcome) == 1 and isinstance(outcome[0], EngineError)
    finally:
        if child.alive:  # the check failed: the stopped child must not outlive the test
            child.kill()


def test_a_request_tells_the_child_whether_someone_listens_as_it_is_made():
    """`early_audio` (a preview's) goes to the child with the request: without a listener the child
    holds the first frame with the rest (tests/test_espeak_child_writes.py), a wake-up of the engine
    thread fewer a `/synth` or batch section; the same chunks either way."""
    child = ChildEspeak()
    sent: list[bool] = []
    send = child._send

    def told(kind: bytes, payload: bytes = b"", live: int | None = None) -> None:
        if kind == REQUEST:
            sent.append(msgspec.json.decode(payload, type=Request).early_audio)
        send(kind, payload, live)

    child._send = told  # type: ignore[method-assign]
    try:
        listened = [c.tobytes() for c in child.chunks(SynthesisRequest(SENTENCE))]
        unheard = [c.tobytes() for c in child.chunks(SynthesisRequest(SENTENCE, early_audio=False))]
    finally:
        child.close()
    assert sent == [True, False]
    assert unheard == listened and len(listened) >= 2
