"""A request's `Expect` lines as aiohttp's server is to see them, read as the request is made
(`connection_guard.GuardedHandler.request_made`): aiohttp's own Expect handler (every route without
one of ours, a 404 too) runs before any middleware, and answered an expectation it did not know with a
text/plain 417 quoting the value raw, and a 500 with a traceback where it held a byte that is not UTF-8.
Such a line is taken out of the request for `error_middleware` to answer. Pure."""

from __future__ import annotations

from aiohttp.http import RawRequestMessage


def read_expect(message: RawRequestMessage) -> tuple[RawRequestMessage, str | None]:
    """`message` as aiohttp is to see it, and the Expect line it sent asking for more than
    100-continue, if any (taken out of it). Every line is read: `Expect: 100-continue` then
    `Expect: fancy` was read as the first alone (100 Continue); a list of `100-continue` alone
    (`100-continue,`) becomes the one line aiohttp knows."""
    lines = message.headers.getall("Expect", ())
    expect = next((line for line in lines if asks_other_than_continue(line)), None)
    if expect is not None:
        return expecting(message, None), expect
    if lines and (len(lines) > 1 or lines[0].lower() != "100-continue"):
        return expecting(message, "100-continue"), None
    return message, None


def asks_other_than_continue(line: str) -> bool:
    """Whether an Expect line asks for anything but 100-continue: it is a list (RFC 9110 §10.1.1) whose
    empty elements are none (§5.6.1), so `100-continue,` asks for nothing else (it was a 417); a line of
    no element at all is unknown, as it was."""
    elements = [element.strip(" \t").lower() for element in line.split(",") if element.strip(" \t")]
    return not elements or any(element != "100-continue" for element in elements)


def expecting(message: RawRequestMessage, expect: str | None) -> RawRequestMessage:
    """`message` with its Expect lines taken out, and `expect` as its one line where given."""
    headers = message.headers.copy()
    del headers["Expect"]  # (each line of it)
    raw = tuple((k, v) for k, v in message.raw_headers if k.lower() != b"expect")
    if expect is not None:
        headers["Expect"] = expect
        raw += ((b"Expect", expect.encode()),)
    return message._replace(headers=type(message.headers)(headers), raw_headers=raw)  # (read-only, as made)
