"""The token in `Authorization` read as HTTP means it, on a real socket: `str.strip` took Unicode
spaces (U+2028, U+00A0) after the token for whitespace, so `Bearer <token>\u2028` was let in, and of two
`Authorization` headers the first was taken without a word (as `?token=` twice is not: a 400)."""

from __future__ import annotations

import pytest

from tests.raw_http import raw_exchange, refusal_of, status_lines
from tests.timing import seconds

TOKEN = b"s3cret"


async def answer_to(served, headers: bytes, target: bytes = b"/jobs") -> bytes:
    listener = await served(token=TOKEN.decode())
    request = b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + headers + b"\r\n"
    return await raw_exchange(listener.port, request, seconds(5))


@pytest.mark.parametrize("after", ["\u2028", "\u00a0", "\u3000", "\x85"])
async def test_a_unicode_space_after_the_token_is_part_of_it(served, after):
    answer = await answer_to(served, b"Authorization: Bearer " + TOKEN + after.encode() + b"\r\n")
    assert status_lines(answer) == [b"401"], answer


async def test_spaces_and_tabs_around_the_token_are_none_of_it(served):
    answer = await answer_to(served, b"Authorization: Bearer \t" + TOKEN + b" \t\r\n")
    assert status_lines(answer) == [b"200"], answer


@pytest.mark.parametrize("second", [b"Bearer other", TOKEN])
async def test_authorization_given_twice_is_refused(served, second):
    headers = b"Authorization: Bearer " + TOKEN + b"\r\nAuthorization: " + second + b"\r\n"
    answer = await answer_to(served, headers)
    assert refusal_of(answer) == (
        400,
        "BadRequest",
        "the Authorization header is given 2 times; give it once",
    )


async def test_authorization_twice_on_an_open_path_is_not_read(served):
    answer = await answer_to(served, b"Authorization: a\r\nAuthorization: b\r\n", target=b"/health")
    assert status_lines(answer) == [b"200"], answer


@pytest.mark.parametrize(
    "credentials",
    [
        b"Authorization: Bearer a\r\nAuthorization: Bearer b\r\n",
        b"Authorization: Bearer " + TOKEN + b"\r\n",
    ],
)
@pytest.mark.parametrize("target", [b"/jobs", b"/jobs?token=a&token=b"])
async def test_a_refused_origin_is_told_403_whatever_its_credentials_look_like(served, credentials, target):
    """Two `Authorization` headers (or `?token=` twice) from a page whose origin is refused were a 400
    about the header: the origin is decided first, and it is told that alone."""
    answer = await answer_to(served, b"Origin: http://evil.example\r\n" + credentials, target=target)
    assert refusal_of(answer) == (403, "OriginNotAllowed", "origin 'http://evil.example' is not allowed")


@pytest.mark.parametrize(
    ("target", "headers", "status"),
    [
        (b"/jobs?token=wrong", b"Authorization: Bearer " + TOKEN + b"\r\n", b"401"),
        (b"/jobs?token=" + TOKEN, b"Authorization: Bearer wrong\r\n", b"401"),
        (b"/v1/models?token=wrong", b"Authorization: Bearer " + TOKEN + b"\r\n", b"401"),
        (b"/jobs?token=" + TOKEN, b"Authorization: Bearer " + TOKEN + b"\r\n", b"200"),
        (b"/jobs?token=" + TOKEN, b"Authorization: Basic YTpi\r\n", b"200"),  # no token of ours
        (b"/jobs?token=", b"Authorization: Bearer " + TOKEN + b"\r\n", b"200"),  # an empty one is none
    ],
)
async def test_a_wrong_token_anywhere_is_refused_beside_a_right_one(served, target, headers, status):
    """`?token=wrong` beside a right `Authorization` was a 200 (the header's token was the only one
    read): every token a request presents must be the worker's."""
    answer = await answer_to(served, headers, target=target)
    assert status_lines(answer) == [status], answer
    if status == b"401":
        assert refusal_of(answer)[1] == "Unauthorized"


@pytest.mark.parametrize(
    ("token", "target"),
    [(None, b"/jobs?token=a&token=b"), (TOKEN.decode(), b"/health?token=a&token=b")],
)
async def test_token_twice_where_no_token_is_asked_for_is_not_read(served, token, target):
    """`?token=` twice was a 400 where no token is read (no `--token`, or /health with one), where two
    `Authorization` headers passed: the same credential given the same way is now answered alike."""
    listener = await served(token=token)
    request = b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    answer = await raw_exchange(listener.port, request, seconds(5))
    assert status_lines(answer) == [b"200"], answer
