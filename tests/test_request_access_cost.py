"""The access check every request passes on the event loop costs no parse of a `Host` it has seen (real
worker, real socket; issue 25, stop 62: benchmarks/SERVER_OVERHEAD.md counts it with
`call_counts.py --synths`)."""

from __future__ import annotations

from npu_worker import access
from npu_worker.access import host_allowed
from npu_worker.http_compat import errors
from tests.loop_calls import loop_calls_in_three_synths


async def test_a_synth_parses_no_host_it_has_seen_on_the_loop(worker, tmp_path):
    """A loopback worker without a token checks each request's `Host` (DNS rebinding): its split and
    `ipaddress` parse ran on the loop for every request (≈ 7 `ipaddress` calls alone), though a worker's
    callers send one or two names."""
    client = await worker()
    calls = await loop_calls_in_three_synths(
        client, tmp_path, lambda code: code.co_filename.endswith("ipaddress.py")
    )
    assert calls == []


async def test_a_host_refused_once_is_refused_again(worker):
    """The kept answer is the answer: a rebinding page's `Host` is refused on every request, not only
    the first, and the worker's own names still pass."""
    client = await worker()
    for _ in range(3):
        refused = await client.get("/jobs", headers={"Host": "evil.example:7768"})
        assert refused.status == 403
        assert (await refused.json())["error"].startswith("OriginNotAllowed: host 'evil.example:7768'")
        assert (await client.get("/jobs", headers={"Host": "localhost"})).status == 200


def test_the_kept_answers_follow_the_allowed_origins_and_stay_bounded():
    """One `Host`'s answer under one origin list is not another list's; a caller naming a new `Host`
    every request keeps at most `HOSTS_REMEMBERED` of them."""
    for _ in range(2):
        assert host_allowed("tts.example", ("https://tts.example",), token_configured=False, loopback=True)
        assert not host_allowed(
            "tts.example", ("https://other.example",), token_configured=False, loopback=True
        )
        assert not host_allowed("tts.example", (), token_configured=False, loopback=True)
        assert host_allowed("[::1]:7768", (), token_configured=False, loopback=True)
        assert not host_allowed("a:b:c", (), token_configured=False, loopback=True)
    for number in range(access.HOSTS_REMEMBERED * 3):
        assert not host_allowed(f"h{number}.example", (), token_configured=False, loopback=True)
    assert access._names_this_worker.cache_info().currsize <= access.HOSTS_REMEMBERED


async def test_a_synths_header_bytes_are_summed_without_a_python_step_a_header(worker, tmp_path):
    """The header bound (431 past 64 KiB) summed the request's lines with a generator: a Python step a
    header on the loop, every request."""
    client = await worker()
    calls = await loop_calls_in_three_synths(
        client, tmp_path, lambda code: code.co_filename.endswith("http_compat/errors.py")
    )
    assert "<genexpr>" not in calls and "check_request_access" in calls


def test_header_lines_bytes_are_the_lines_as_sent():
    """`name: value` and CRLF a line, as the generator summed them."""
    raw = ((b"Host", b"127.0.0.1:7768"), (b"Content-Type", b"application/json"), (b"X-Empty", b""))
    assert errors.header_lines_bytes(raw) == sum(len(n) + len(v) + 4 for n, v in raw) == 65
    assert errors.header_lines_bytes(()) == 0
