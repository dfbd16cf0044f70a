"""The sovits proxy engine against upstreams that misbehave, on real sockets: every call ends (a total
deadline; a cancel or a shutdown: `test_sovits_cancels.py`), nothing is read without a bound, and every
failure is an EngineError or ModelLoadError saying "sovits_worker ..." with the reason, never the
upstream's address."""

from __future__ import annotations

import time

import pytest

from npu_worker.engine.sovits import SovitsEngine
from npu_worker.protocol import EngineError, ModelLoadError
from tests.sovits_rogue import (
    RogueUpstream,
    Script,
    endless,
    raw,
    redirect,
    trickle_body,
    trickle_headers,
)
from tests.sovits_support import TEXT, loaded_against, section_error
from tests.sovits_support import upstream as upstream  # a fixture
from tests.test_sovits_engine import AT_ONCE, in_thread


@pytest.mark.parametrize("script", [trickle_headers, trickle_body], ids=["headers", "body"])
def test_a_trickling_upstream_is_ended_at_the_total_deadline(script: Script):
    with RogueUpstream(script) as rogue:
        started = time.monotonic()
        error = section_error(loaded_against(rogue, synth_timeout=0.5))
        assert isinstance(error, EngineError), repr(error)
        assert error.message == "sovits_worker did not answer within 0.5 s"
        assert time.monotonic() - started < AT_ONCE  # the trickle goes on for ever: not its end
        assert rogue.hung_up.wait(AT_ONCE), "the upstream connection stayed open"


def test_a_redirect_is_not_followed():
    with RogueUpstream(redirect) as rogue:
        error = section_error(loaded_against(rogue))
        assert isinstance(error, EngineError)
        assert error.message == "sovits_worker answered 302, a redirect (not followed)"
        assert rogue.asked == 1


def test_a_huge_reply_is_refused_after_a_bounded_read():
    with RogueUpstream(endless(200)) as rogue:
        error = section_error(loaded_against(rogue))
        assert isinstance(error, EngineError)
        assert error.message == f"sovits_worker sent a reply over {1 << 20} bytes"


DEEP = b"[" * 100_000  # under the reply bound; json.loads raises RecursionError, not ValueError


@pytest.mark.parametrize("status", [200, 500])
def test_a_reply_nested_too_deeply_is_an_engine_error(status: int):
    head = f"HTTP/1.1 {status} X\r\nContent-Length: {len(DEEP)}\r\n\r\n".encode()
    with RogueUpstream(raw(head + DEEP)) as rogue:
        error = section_error(loaded_against(rogue))
        assert isinstance(error, EngineError), repr(error)
        assert error.message.startswith("sovits_worker ")


def test_a_health_nested_too_deeply_is_model_load_error():
    head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(DEEP)}\r\n\r\n".encode()
    with RogueUpstream(raw(head + DEEP), on_health=True) as rogue:
        outcome = in_thread(SovitsEngine(rogue.base).load)
        error = outcome.error(AT_ONCE)
        assert isinstance(error, ModelLoadError), repr(error)
        assert "did not answer a JSON object" in error.message


def test_a_huge_error_body_is_cut_short():
    with RogueUpstream(endless(500)) as rogue:
        error = section_error(loaded_against(rogue))
        assert isinstance(error, EngineError)
        assert error.message.startswith("sovits_worker answered 500: 0000") and len(error.message) <= 2000


@pytest.mark.parametrize(
    "reply",
    [
        b"garbage\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: a\r\n" % n for n in range(101)) + b"\r\n",
        b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n",
    ],
    ids=["bad-status-line", "incomplete-read", "too-many-headers", "line-too-long", "cut-in-headers"],
)
def test_broken_http_is_an_engine_error_and_never_asked_again(reply: bytes):
    with RogueUpstream(raw(reply)) as rogue:
        error = section_error(loaded_against(rogue))
        assert isinstance(error, EngineError), repr(error)
        assert error.message.startswith(
            ("sovits_worker sent a broken reply: ", "sovits_worker sent an empty")
        )
        assert "127.0.0.1" not in error.message
        assert rogue.asked == 1  # a reply had begun: the section is not asked again


def test_broken_http_at_load_is_model_load_error():
    with RogueUpstream(raw(b"garbage\r\n\r\n"), on_health=True) as rogue:
        with pytest.raises(
            ModelLoadError, match="^ModelLoadError: sovits_worker /health sent a broken reply: BadStatusLine"
        ):
            SovitsEngine(rogue.base).load()


def test_a_health_that_is_not_json_is_model_load_error():
    with RogueUpstream(raw(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), on_health=True) as rogue:
        with pytest.raises(ModelLoadError, match="did not answer a JSON object"):
            SovitsEngine(rogue.base).load()


def test_a_reset_before_any_reply_is_asked_again_until_it_gives_up():
    with RogueUpstream(raw(b"")) as rogue:  # reads the request, closes without a word
        started = time.monotonic()
        error = section_error(loaded_against(rogue, retry_seconds=0.5))
        assert isinstance(error, EngineError)
        assert "without a reply" in error.message
        assert rogue.asked >= 3 and time.monotonic() - started < AT_ONCE


@pytest.mark.parametrize(
    ("keyword", "message"),
    [
        ("ELSEWHERE", "sovits_worker named another wav (wav_path) than the path it was given"),
        ("FIFO", "sovits_worker reported ok but its wav is unusable: not a regular file"),
        ("ONEHZ", "sovits_worker reported ok but its wav is unusable: its sample rate 1 Hz is outside"),
        ("NAN", "sovits_worker reported ok but its wav is unusable: 1 of "),
        ("EMPTY", "sovits_worker wrote no audio"),
    ],
)
def test_what_the_upstream_wrote_is_checked_before_use(upstream, keyword: str, message: str):
    engine = SovitsEngine(upstream.base)
    engine.load()
    error = section_error(engine, text=f"{keyword} {TEXT}")
    assert isinstance(error, EngineError), repr(error)
    assert error.message.startswith(message)


def test_a_wav_longer_than_the_bound_is_refused(upstream):
    engine = SovitsEngine(upstream.base, max_wav_seconds=0.1)
    engine.load()
    error = section_error(engine, text=TEXT)
    assert isinstance(error, EngineError)
    assert error.message.endswith("its wav is unusable: it is longer than 0.1 s")
