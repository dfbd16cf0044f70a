"""The start of a request whose headers still arrive, kept by `connection_guard.GuardedHandler`: a
refusal sent before the app sees the request takes its shape from the path (OpenAI's under /v1/) and its
HTTP version from the request line, and whether that line ended tells a target too long (414) from a
header line too long (431). Pure: bytes in, answers out.
"""

from __future__ import annotations

from aiohttp.http import HttpVersion, HttpVersion10, HttpVersion11
from aiohttp.http_exceptions import LineTooLong

# The start of a request's headers kept while they arrive: its path picks the shape of a refusal sent
# before the app sees it (OpenAI's under /v1/), and whether its first line ended tells a target too long
# (414) from a header line too long (431).
REQUEST_HEAD_BYTES = 1024


class RequestHead:
    """The first bytes of the request whose headers arrive (up to REQUEST_HEAD_BYTES), how long its
    request line is so far, and the first bytes of a refused request that followed others in a piece."""

    def __init__(self) -> None:
        self.head = b""
        self.line = 0  # bytes of the request line seen so far (a longer one is cut from the head)
        self.line_ended = False
        self.refused = b""  # a refused request's that followed others in a piece (`refused_at`)

    def restart(self) -> None:
        """The next request's headers are awaited (a refused one's bytes stay: the connection closes)."""
        self.head, self.line, self.line_ended = b"", 0, False

    def keep(self, data: bytes) -> None:
        """The first bytes of the request whose headers arrive, and how long its first line is, over
        every piece until that line ends (the first piece alone was kept: a line sent in two writes, or
        one over REQUEST_HEAD_BYTES, was a request line too long when a header line was, and a path cut
        short in the first piece picked the wrong shape)."""
        if self.line_ended:
            return
        if len(self.head) < REQUEST_HEAD_BYTES:
            self.head += data[: REQUEST_HEAD_BYTES - len(self.head)]
        end = data.find(b"\n")
        self.line += len(data) if end < 0 else end
        self.line_ended = end >= 0

    def refused_at(self, data: bytes, start: int) -> None:
        """The parser refused the request starting at data[start:], after others in the same piece: its
        first bytes pick its refusal's shape and HTTP version."""
        self.refused = data[start : start + REQUEST_HEAD_BYTES]

    def _first_line(self) -> bytes:
        return (self.refused or self.head).split(b"\n", 1)[0]

    def path(self) -> str:
        """The path of the request whose headers are arriving (or were refused); "/" if not yet known."""
        parts = self._first_line().split(b" ")
        if len(parts) < 2:
            return "/"
        target = parts[1].decode("latin-1")
        if "://" in target:  # absolute form (RFC 9112 §3.2.2): what follows the authority
            target = "/" + target.split("://", 1)[1].partition("/")[2]
        return target.partition("?")[0]

    def version(self) -> HttpVersion:
        """The HTTP version to answer a refused request in: 1.0 where its request line says so, else
        1.1 (RFC 9112 §2.3: the highest the server speaks)."""
        return HttpVersion10 if self._first_line().rstrip(b"\r").endswith(b" HTTP/1.0") else HttpVersion11

    def line_too_long(self, exc: LineTooLong) -> tuple[int, str]:
        """A request line over aiohttp's bound is a target too long (414), a header line one of the
        headers too large (431), as RFC 9110 and RFC 6585 name them."""
        limit = exc.args[1] if len(exc.args) > 1 else "its limit"
        if not self.line_ended or (isinstance(limit, int) and self.line > limit):
            return 414, f"the request line passes {limit} bytes; that is the limit"
        return 431, f"a request header line passes {limit} bytes; that is the limit"
