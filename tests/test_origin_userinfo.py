"""An `Origin` in a form no browser sends, on a real socket: userinfo, a query or a fragment.
`http://evil.example@localhost` was read as the loopback origin `http://localhost` and let in by
default, as a `Host` with userinfo was (now a 400), and an `--allowed-origins` entry with userinfo
was taken for its host after the `@`."""

from __future__ import annotations

import pytest

from npu_worker.access import normalize_origin
from npu_worker.config_values import origins
from tests.raw_http import raw_exchange, refusal_of, status_lines
from tests.timing import seconds

FORMS = ["http://evil.example@localhost", "http://@127.0.0.1:7768", "http://localhost?x", "http://localhost#"]


async def answer_to(listener, origin: bytes) -> bytes:
    request = b"GET /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: " + origin + b"\r\nConnection: close\r\n\r\n"
    return await raw_exchange(listener.port, request, seconds(5))


@pytest.mark.parametrize("origin", FORMS)
async def test_an_origin_no_browser_sends_is_refused_on_a_loopback_worker(served, origin):
    answer = await answer_to(await served(), origin.encode())
    assert refusal_of(answer)[:2] == (403, "OriginNotAllowed"), answer


async def test_the_loopback_origin_itself_is_still_let_in(served):
    answer = await answer_to(await served(), b"http://localhost:7768")
    assert status_lines(answer) == [b"200"], answer


@pytest.mark.parametrize("origin", FORMS)
def test_an_origin_no_browser_sends_is_refused_as_a_setting(origin):
    assert normalize_origin(origin) is None
    with pytest.raises(ValueError, match="origins are http"):
        origins(origin)
