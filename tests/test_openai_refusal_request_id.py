"""Every answer on the OpenAI routes carries `x-request-id`, refusals made before any handler runs too:
an unknown path under /v1/, a wrong method, a bad token, a refused origin, a body refused before it is
sent, the connection guard's refusal of headers aiohttp's parser would not take, an SDK path without
/v1. Only the handlers' own answers had one (contract62): an SDK's `request_id` on these errors was None,
the one answer a caller most needs to quote. Real server (the connection guard in front), raw sockets."""

from __future__ import annotations

import re

import pytest

from tests.raw_http import raw_exchange, refusal_of
from tests.timing import seconds

OWN_ID = re.compile(rb"\r\nx-request-id: (req_[0-9a-f]{16})\r\n", re.IGNORECASE)
TOKEN = "s3cret-token"
HOST = "Host: 127.0.0.1\r\nConnection: close\r\n"
AUTH = f"Authorization: Bearer {TOKEN}\r\n"

REFUSED = {
    "unknown path": (f"GET /v1/no-such-route HTTP/1.1\r\n{HOST}{AUTH}\r\n", 404),
    "wrong method": (f"GET /v1/audio/speech HTTP/1.1\r\n{HOST}{AUTH}\r\n", 405),
    "bad token": (
        f"POST /v1/audio/speech HTTP/1.1\r\n{HOST}Authorization: Bearer wrong\r\n"
        "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
        401,
    ),
    "refused origin": (f"GET /v1/models HTTP/1.1\r\n{HOST}{AUTH}Origin: http://evil.example\r\n\r\n", 403),
    "body too large": (
        f"POST /v1/audio/speech HTTP/1.1\r\n{HOST}{AUTH}Content-Type: application/json\r\n"
        "Content-Length: 999999999\r\nExpect: 100-continue\r\n\r\n",
        413,
    ),
    "header line over the parser's bound": (
        f"GET /v1/models HTTP/1.1\r\n{HOST}{AUTH}X-Pad: {'a' * 9000}\r\n\r\n",
        431,
    ),
    "an SDK path without /v1": (f"GET /audio/no-such-route HTTP/1.1\r\n{HOST}{AUTH}\r\n", 404),
}


@pytest.mark.parametrize("case", list(REFUSED))
async def test_a_refusal_before_any_handler_carries_a_request_id(served, case):
    listener = await served(token=TOKEN)
    request, status = REFUSED[case]
    answer = await raw_exchange(listener.port, request.encode(), seconds(10))
    got, _, _ = refusal_of(answer)
    assert got == status, answer[:400]
    assert b'{"error": {"message"' in answer, answer[:400]  # OpenAI's shape, as before
    head = answer.partition(b"\r\n\r\n")[0] + b"\r\n"
    assert OWN_ID.search(head), head


async def test_each_refusal_has_an_id_of_its_own(served):
    listener = await served(token=TOKEN)
    request = REFUSED["unknown path"][0].encode()
    ids = set()
    for _ in range(3):
        found = OWN_ID.search(
            (await raw_exchange(listener.port, request, seconds(10))).partition(b"\r\n\r\n")[0]
        )
        assert found
        ids.add(found.group(1))
    assert len(ids) == 3
