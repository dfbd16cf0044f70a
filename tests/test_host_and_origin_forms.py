"""The `Host` and `Origin` a request names, read as a browser writes them, on a real socket: a `Host`
with userinfo (`evil.example@localhost`) was read as the name after its `@` and let in on a loopback
worker, and a browser's punycode `Origin` (`http://xn--bcher-kva.example`) was refused for the
`--allowed-origins` entry `http://bücher.example` that names the same page."""

from __future__ import annotations

import pytest

from npu_worker.access import normalize_origin
from npu_worker.config_values import origins
from tests.raw_http import raw_exchange, refusal_of, status_lines
from tests.timing import seconds

IDN_ORIGIN = "http://bücher.example:8080"
PUNYCODE_HOST = b"xn--bcher-kva.example:8080"


async def answer_to(listener, host: bytes, extra: bytes = b"", target: bytes = b"/jobs") -> bytes:
    request = (
        b"GET " + target + b" HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n" + extra + b"\r\n"
    )
    return await raw_exchange(listener.port, request, seconds(5))


@pytest.mark.parametrize(
    "host", [b"evil.example@localhost", b"evil.example@127.0.0.1:7768", b"a:b@localhost"]
)
async def test_a_host_with_userinfo_is_a_bad_request(served, host):
    answer = await answer_to(await served(), host)
    status, name, message = refusal_of(answer)
    assert (status, name) == (400, "BadRequest"), answer
    assert message.startswith(f"the Host header {host.decode()!r} carries userinfo"), message


async def test_a_host_with_userinfo_is_refused_beside_a_token_too(served):
    """With `--token` the Host's name is not checked, but a Host no client sends is still refused, and
    before the token (the access rules' order: origin and Host, then the credentials)."""
    answer = await answer_to(await served(token="s3cret"), b"x@127.0.0.1")
    assert refusal_of(answer)[:2] == (400, "BadRequest"), answer


async def test_a_plain_loopback_host_is_still_answered(served):
    answer = await answer_to(await served(), b"localhost:7768")
    assert status_lines(answer) == [b"200"], answer


async def test_a_browser_punycode_origin_matches_its_unicode_entry(served):
    listener = await served(allowed_origins=(IDN_ORIGIN,))
    answer = await answer_to(listener, PUNYCODE_HOST, b"Origin: http://" + PUNYCODE_HOST + b"\r\n")
    assert status_lines(answer) == [b"200"], answer


async def test_another_punycode_origin_is_still_refused(served):
    listener = await served(allowed_origins=(IDN_ORIGIN,))
    answer = await answer_to(listener, PUNYCODE_HOST, b"Origin: http://xn--bcher-jua.example:8080\r\n")
    assert refusal_of(answer)[:2] == (403, "OriginNotAllowed"), answer


@pytest.mark.parametrize(
    ("written", "sent"),
    [
        ("http://bücher.example:8080", "http://xn--bcher-kva.example:8080"),
        ("https://BÜCHER.example", "https://xn--bcher-kva.example:443"),
        ("http://straße.de", "http://xn--strae-oqa.de"),  # UTS #46 as browsers map it: ß stays ß
        ("http://한국.kr", "http://xn--3e0b707e.kr"),
    ],
)
def test_an_international_origin_is_one_origin_in_either_form(written, sent):
    assert normalize_origin(written) == normalize_origin(sent) is not None
    assert origins(written) == (written,)


def test_a_name_idna_refuses_is_refused_as_a_setting():
    with pytest.raises(ValueError, match="origins are http"):
        origins("http://a\u200db.example")  # a joiner no valid name holds
