"""What the access and debug logs and /metrics keep of a caller's request: never a token, never a line
or a series a caller can grow."""

from __future__ import annotations

import contextlib
import logging
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.raw_http import HEALTH_REQUEST, exchange, raw_exchange
from tests.timing import seconds
from tests.worker_process import start_worker_process


async def test_the_access_log_never_shows_a_token(served, caplog):
    listener = await served(token="s3cret-value")
    caplog.set_level(logging.INFO, logger="aiohttp.access")
    queries = (
        "token=s3cret-value",
        "a=1&token=s3cret-value",
        "tok%65n=s3cret-value",
        "a=1;token=s3cret-value",
    )
    for query in queries:  # the last: yarl reads `;` as part of `a`'s value, and it was logged whole
        answer = await raw_exchange(
            listener.port,
            f"GET /jobs?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode(),
            seconds(5),
        )
        assert answer.startswith(b"HTTP/1.1 200") or ";" in query  # a `;` token is not read: 401
    lines = [r.getMessage() for r in caplog.records if r.name == "aiohttp.access"]
    assert len(lines) == 4
    assert all("s3cret" not in line and "token=***" in line for line in lines)


async def test_the_access_log_line_of_a_long_request_is_cut(served, caplog):
    """A request line of 8 KB (its query quoted again: 22 KB) was one log line that long: one caller
    could fill the disk many times faster than with ordinary requests. The path and query are cut."""
    listener = await served(token="s3cret-value")
    caplog.set_level(logging.INFO, logger="aiohttp.access")
    for target in ("/" + "a" * 7000, "/health?a=" + "{}|^`" * 1500 + "&token=s3cret-value"):
        request = f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        assert (await raw_exchange(listener.port, request.encode(), seconds(5))).startswith(b"HTTP/1.1 ")
    lines = [r.getMessage() for r in caplog.records if r.name == "aiohttp.access"]
    assert len(lines) == 2 and all(len(line) < 700 and "chars)" in line for line in lines)
    assert '"GET /aaaa' in lines[0] and '"GET /health?a=%7B%7D' in lines[1] and "s3cret" not in lines[1]


async def test_a_refused_unparsable_request_logs_no_token(served, caplog):
    """aiohttp's refusal quotes the refused line (a ?token= or an Authorization header) on its next
    lines: the debug log keeps its first line only, so a token never reaches the log file."""
    listener = await served(token="s3cret-value")
    caplog.set_level(logging.DEBUG)
    for refused in (
        b"GET /jobs?token=s3cret-value&lang=\xed\x95\x9c HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer s3cret-value\x01\r\n\r\n",
    ):
        answer = await raw_exchange(listener.port, refused, seconds(5))
        assert answer.split(b" ")[1] == b"400"
    refusals = [r.getMessage() for r in caplog.records if "unparsable" in r.getMessage()]
    assert len(refusals) == 2
    assert "s3cret" not in caplog.text and all("\n" not in line for line in refusals)


@pytest.mark.allow_blocking
def test_a_callers_method_names_cannot_grow_the_metrics(tmp_path: Path):
    """aiohttp's pure-Python parser (AIOHTTP_NO_EXTENSIONS, or a platform without its C extension)
    takes any token as a method: each `FOO1`, `FOO2`... was a new series of the requests counter, and
    an 8 KB method an 8 KB access log line. A method outside the standard ones is `OTHER`."""
    import os

    env = {**os.environ, "AIOHTTP_NO_EXTENSIONS": "1"}
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        process = start_worker_process(tmp_path / "state", 0, 0.0, env=env, stderr=out)
    port = process.port
    try:
        for number in range(30):
            method = f"FOO{number}" + "X" * (1000 if number == 0 else 0)
            request = urllib.request.Request(f"http://127.0.0.1:{port}/health", method=method)
            with contextlib.suppress(urllib.error.HTTPError):
                urllib.request.urlopen(request, timeout=seconds(10)).close()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=seconds(10)) as response:
            text = response.read().decode()
    finally:
        process.terminate()
        process.wait(timeout=seconds(10))
    counted = [line for line in text.splitlines() if line.startswith("npu_worker_http_requests_total{")]
    assert not any("FOO" in line for line in counted)
    assert any('method="OTHER",route="unmatched",status="405"} 30.0' in line for line in counted)
    access = [line for line in log.read_text().splitlines() if "aiohttp.access" in line]
    assert len(access) >= 30 and all(len(line) < 200 for line in access)


async def test_below_info_the_access_log_formats_nothing_and_kept_alive_connections_go_on(
    served, caplog, monkeypatch
):
    """At `--log-level warning` no line is written, but every request's fields were still read and
    its path redacted on the loop (1–3 µs a request, 13 µs with a query string): now only when INFO
    is logged. aiohttp still calls the logger (it is where a kept-alive connection waits for its next
    request), so a connection serves three requests in a row at either level."""
    from npu_worker import server

    redacted: list[str] = []
    redact = server.redacted_path

    def counted(request):
        redacted.append(request.path)
        return redact(request)

    monkeypatch.setattr(server, "redacted_path", counted)
    listener = await served()
    three = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 2 + HEALTH_REQUEST
    for level, lines in ((logging.WARNING, 0), (logging.INFO, 3)):
        redacted.clear()
        caplog.clear()
        caplog.set_level(level, logger="aiohttp.access")
        answer = await raw_exchange(listener.port, three, seconds(5))
        assert answer.count(b"HTTP/1.1 200") == 3
        logged = [r for r in caplog.records if r.name == "aiohttp.access"]
        assert len(logged) == lines and len(redacted) == lines


@pytest.mark.allow_blocking
def test_with_the_pure_python_parser_a_callers_controls_never_reach_the_log_raw(tmp_path: Path):
    """aiohttp's pure-Python parser lets bytes through that llhttp refuses: a path holding U+009B (a
    terminal's CSI, as ESC [ is), U+2028 or a direction override was written raw into the access log, and
    one holding bytes that are not UTF-8 was a 500 (its 404's words could not be encoded). Each is
    escaped in the log line and the answer; the requests the parser refuses (ESC, CR) stay refused."""
    import os

    env = {**os.environ, "AIOHTTP_NO_EXTENSIONS": "1"}
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        process = start_worker_process(tmp_path / "state", 0, 0.0, env=env, stderr=out)
    targets = (
        b"/a\xc2\x9b2Jb",
        b"/a\xe2\x80\xa8b",
        b"/a\xe2\x80\xaeb",
        b"/a\xff\xfe",
        b"/jobs?lang=\xff\x1b",
        b"/a\x1b[2Jb",
        b"/a\rb",
    )
    statuses = []
    try:
        for target in targets:
            request = b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            answer = exchange(process.port, request, seconds(10))
            statuses.append(answer.split(b" ")[1])
            assert answer.partition(b"\r\n\r\n")[2].startswith(b'{"status": "fail"') or b"200" in statuses[-1]
    finally:
        process.terminate()
        process.wait(timeout=seconds(10))
    assert b"500" not in statuses, statuses
    text = log.read_bytes().decode("utf-8", "surrogateescape")
    access = [line for line in text.splitlines() if "aiohttp.access" in line and "GET /health " not in line]
    assert len(access) == len(targets), text
    assert all(line.isprintable() for line in access), access
    assert "GET /a\\x9b2Jb " in text and "GET /a\\u2028b " in text and "GET /a\\xff\\xfe " in text
    assert "internal error" not in text
